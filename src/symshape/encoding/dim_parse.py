"""Reading a dimension from text: :func:`parse_dim`, the inverse of ``str`` on :class:`Dim`.

An iterative operator-precedence parser: no recursion and bounded work (text length, exponent,
degree, number of terms and coefficient size are limited; beyond them is a ``parse-error``, never a
hang, a ``RecursionError`` or a ``MemoryError``).

>>> str(parse_dim("(h - 1)//2 + 1"))
'(h - 1)//2 + 1'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from numbers import Integral
from typing import Union

from symshape.encoding.arguments import check_parse_input
from symshape.encoding.dim_atoms import Mono
from symshape.encoding.dim_expr import _atom_dim, _terms_from
from symshape.encoding.dims import (
    MAX_DEGREE,
    MAX_EXPONENT,
    MAX_TERMS,
    ONE,
    AnyDim,
    Dim,
    DimVar,
    const,
    dim,
    dmax,
    dmin,
    floordiv,
    mod,
)
from symshape.errors import INVALID_ARGUMENT, PARSE_ERROR, SymshapeError

__all__ = ["MAX_COEFFICIENT", "MAX_TEXT", "parse_dim"]


MAX_TEXT = 100_000
"""The longest text :func:`parse_dim` reads."""
MAX_COEFFICIENT = 2**256
"""The largest magnitude of a parsed coefficient."""
_MAX_DIGITS = 80

_TOKEN = re.compile(
    r"\s*(?:(?P<int>\d+)|(?P<dvar>\?d\d+)|(?P<any>\?)|(?P<name>[A-Za-z_][A-Za-z_0-9]*)"
    r"|(?P<op>\*\*|//|[-+*%(),]))"
)
# binary operators: precedence, right-associative
_BINARY: dict[str, tuple[int, bool]] = {
    "+": (1, False),
    "-": (1, False),
    "*": (2, False),
    "//": (2, False),
    "%": (2, False),
    "**": (4, True),
}
_UNARY_PREC = 3  # ``-a*b`` is ``(-a)*b``, ``-a**b`` is ``-(a**b)``


class _Sum:
    """A sum being accumulated (``a + b + c ...`` in linear time)."""

    __slots__ = ("acc",)

    def __init__(self, first: Dim) -> None:
        self.acc: dict[Mono, int] = dict(first.terms)

    def add(self, d: Dim, sign: int) -> None:
        acc = self.acc
        for m, c in d.terms:
            acc[m] = acc.get(m, 0) + sign * c


_Value = Union[Dim, _Sum]


def _value(v: _Value) -> Dim:
    return _terms_from(v.acc) if isinstance(v, _Sum) else v


class _Paren:
    """An open parenthesis on the operator stack; ``call`` names the function it belongs to."""

    __slots__ = ("call", "args")

    def __init__(self, call: str | None) -> None:
        self.call = call
        self.args = 0


def parse_dim(text: str, env: Mapping[str, Dim] | None = None) -> Dim:
    """Read a dimension written in Python syntax (what ``str`` prints).

    Names are looked up in ``env``; a name not there becomes ``dim(name)`` (``>= 1``).
    ``?`` is an anonymous given dimension and ``?d3`` a solver unknown. The parser is iterative
    and bounded (:data:`MAX_TEXT` characters, exponents up to :data:`MAX_EXPONENT`, degree up to
    :data:`MAX_DEGREE`, :data:`MAX_TERMS` terms, coefficients below :data:`MAX_COEFFICIENT`):
    anything else is a ``parse-error``, never a hang or a ``RecursionError``.

    >>> n = dim("n")
    >>> parse_dim("n*3*4", {"n": n}) == 12 * n
    True
    >>> parse_dim("2**100000000")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    symshape.errors.SymshapeError: ... exponent 100000000 is larger than 64  [parse-error]
    """
    check_parse_input(text, env, "parse_dim", "dimension", MAX_TEXT)
    return _Parser(text, env or {}).parse()


class _Parser:
    def __init__(self, text: str, env: Mapping[str, Dim]) -> None:
        self.text = text
        self.env = env
        self.vals: list[_Value] = []
        self.ops: list[str | _Paren] = []

    def bad(self, why: str) -> SymshapeError:
        shown = self.text if len(self.text) <= 80 else self.text[:77] + "..."
        return SymshapeError(PARSE_ERROR, f"cannot parse dimension {shown!r}: {why}")

    def parse(self) -> Dim:
        text, vals, ops = self.text, self.vals, self.ops
        pos = 0
        expect_operand = True
        after_comma = False
        end = len(text.rstrip())
        while pos < end:
            mt = _TOKEN.match(text, pos)
            if mt is None or mt.end() == pos:
                raise self.bad(f"unexpected {text[pos:].strip()[:1]!r}")
            pos = mt.end()
            kind = mt.lastgroup
            tok = mt.group(kind or 0)
            if kind in ("int", "dvar", "any", "name"):
                if not expect_operand:
                    raise self.bad(f"unexpected {tok!r}")
                if kind == "name" and tok in ("max", "min"):
                    nxt = _TOKEN.match(text, pos)
                    if nxt is not None and nxt.group("op") == "(":
                        pos = nxt.end()
                        ops.append(_Paren(tok))
                        after_comma = False
                        continue
                vals.append(self.leaf(kind or "", tok))
                expect_operand = False
                after_comma = False
                continue
            # an operator or a parenthesis
            if tok == "(":
                if not expect_operand:
                    raise self.bad("only max and min can be called")
                ops.append(_Paren(None))
                continue
            if tok == ")":
                top = self.close_group()
                if expect_operand and not (after_comma and top.call is not None):
                    if top.call is not None and top.args == 0:
                        raise self.bad(f"{top.call}() needs at least one argument")
                    raise self.bad("unexpected ')'")
                if not expect_operand:
                    top.args += 1
                if top.call is None:
                    if top.args != 1:
                        raise self.bad("a tuple is not a dimension")
                else:
                    self.call(top)
                expect_operand = False
                after_comma = False
                continue
            if tok == ",":
                if expect_operand:
                    raise self.bad("unexpected ','")
                top = self.close_group()
                if top.call is None:
                    raise self.bad("a tuple is not a dimension")
                top.args += 1
                ops.append(top)
                expect_operand = True
                after_comma = True
                continue
            after_comma = False
            if expect_operand:
                if tok in ("+", "-"):
                    ops.append("u" + tok)
                    continue
                raise self.bad(f"unexpected {tok!r}")
            prec, right = _BINARY[tok]
            while ops:
                top_op = ops[-1]
                if isinstance(top_op, _Paren):
                    break
                tp = _UNARY_PREC if top_op[0] == "u" else _BINARY[top_op][0]
                if tp > prec or (tp == prec and not right):
                    ops.pop()
                    self.apply(top_op)
                else:
                    break
            ops.append(tok)
            expect_operand = True
        if expect_operand:
            raise self.bad("unexpected end" if text.strip() else "empty text")
        while ops:
            top_op = ops.pop()
            if isinstance(top_op, _Paren):
                raise self.bad("unclosed '('")
            self.apply(top_op)
        assert len(vals) == 1
        return _value(vals[0])

    def leaf(self, kind: str, tok: str) -> Dim:
        if kind == "int":
            if len(tok) > _MAX_DIGITS:
                raise self.bad(f"an integer of {len(tok)} digits")
            return const(int(tok))
        if kind == "dvar":
            return _atom_dim(DimVar(int(tok[2:])))
        if kind == "any":
            return _atom_dim(AnyDim(0))
        hit = self.env.get(tok)
        if hit is None:
            return dim(tok)
        if isinstance(hit, Dim):
            return hit
        if isinstance(hit, Integral) and not isinstance(hit, bool):
            return const(int(hit))
        raise SymshapeError(
            INVALID_ARGUMENT, f"parse_dim's env maps {tok!r} to {hit!r}, not a dimension"
        )

    def close_group(self) -> _Paren:
        ops = self.ops
        while ops:
            top = ops.pop()
            if isinstance(top, _Paren):
                return top
            self.apply(top)
        raise self.bad("unbalanced ')'")

    def call(self, p: _Paren) -> None:
        args = [_value(v) for v in self.vals[len(self.vals) - p.args :]]
        del self.vals[len(self.vals) - p.args :]
        try:
            self.vals.append(dmax(*args) if p.call == "max" else dmin(*args))
        except SymshapeError as e:
            raise self.bad(e.message) from None

    def apply(self, op: str) -> None:
        vals = self.vals
        if op[0] == "u":
            v = vals.pop()
            vals.append(-_value(v) if op == "u-" else v)
            return
        b = vals.pop()
        a = vals.pop()
        try:
            if op in ("+", "-"):
                acc = a if isinstance(a, _Sum) else _Sum(a)
                acc.add(_value(b), 1 if op == "+" else -1)
                vals.append(acc)
                return
            x, y = _value(a), _value(b)
            if op == "*":
                r = self.product(x, y)
            elif op == "//":
                r = floordiv(x, y)
            elif op == "%":
                r = mod(x, y)
            else:
                e = y.constant_value
                if e is None or e < 0:
                    raise self.bad("exponent must be a constant >= 0")
                if e > MAX_EXPONENT:
                    raise self.bad(f"exponent {e} is larger than {MAX_EXPONENT}")
                r = ONE
                for _ in range(e):
                    r = self.product(r, x)
        except SymshapeError as err:
            if err.code == PARSE_ERROR.code:
                raise
            raise self.bad(err.message) from None
        for _, c in r.terms:
            if abs(c) > MAX_COEFFICIENT:
                raise self.bad("a coefficient larger than 2**256")
        vals.append(r)

    def product(self, x: Dim, y: Dim) -> Dim:
        if x.degree + y.degree > MAX_DEGREE:
            raise self.bad(f"degree larger than {MAX_DEGREE}")
        if len(x.terms) * len(y.terms) > MAX_TERMS:
            raise self.bad(f"more than {MAX_TERMS} terms")
        return x * y
