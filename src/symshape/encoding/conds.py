"""Conditions over dimensions: comparisons joined by ``and``/``or``/``not``.

Conditions are what relations state and guards report (``n == 1 or n == 5``). Smart constructors
decide on the spot whatever the canonical forms and the symbols' declared ranges decide (interval
bounds, gcd arguments), so that only the rest reaches Z3. :func:`decide` is that fast path: it
answers True, False or None ("needs reasoning").

>>> from symshape.encoding.dims import dim
>>> n = dim("n")
>>> str(any_of(eq(n, 1), eq(n, 5)))
'n == 1 or n == 5'
>>> eq(2 * n, 5)
FALSE
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from numbers import Integral
from typing import NoReturn, TypeVar, Union

from symshape.encoding.arguments import check_mapping
from symshape.encoding.dim_expr import _atom_dim, _atom_map, _divide_coefficients, _exact_floor, _subst
from symshape.encoding.dims import (
    AnyDim,
    Atom,
    Dim,
    DimLike,
    FloorDiv,
    Max,
    Min,
    Mod,
    as_dim,
    bounds,
    const,
    divide_exactly,
    mod,
)
from symshape.errors import BAD_DIM, INVALID_ARGUMENT, SymshapeError

__all__ = [
    "Cond",
    "Cmp",
    "CmpOp",
    "BoolOp",
    "Not",
    "BoolConst",
    "TRUE",
    "FALSE",
    "eq",
    "ne",
    "le",
    "lt",
    "ge",
    "gt",
    "any_of",
    "all_of",
    "negate",
    "decide",
    "cond_holds",
    "cond_value",
    "cond_dims",
    "expand_joins",
    "map_cond",
    "assert_never",
]


@dataclass(frozen=True)
class BoolConst:
    value: bool

    def __str__(self) -> str:
        return "True" if self.value else "False"

    def __repr__(self) -> str:
        return "TRUE" if self.value else "FALSE"


TRUE = BoolConst(True)
FALSE = BoolConst(False)


def assert_never(x: NoReturn) -> NoReturn:
    """The branch no value reaches: a ``match`` over an enum ends with ``case _: assert_never(x)``,
    so mypy reports a member left out (``typing.assert_never`` from Python 3.11 on)."""
    raise AssertionError(f"unhandled value {x!r}")


class CmpOp(str, Enum):
    """The operator of a :class:`Cmp`. A ``str`` subclass that equals, hashes, prints and reprs as
    its symbol (``CmpOp.EQ == "=="``), so conditions print and compare as they always did."""

    EQ = "=="
    NE = "!="
    LE = "<="
    LT = "<"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    def __repr__(self) -> str:
        return repr(self.value)


# ``0 <= h - 7`` reads better as ``h - 7 >= 0``: the constant goes to the right
_FLIPPED = {CmpOp.LE: ">=", CmpOp.LT: ">"}


def _remember_hash(c: object, fields: tuple[object, ...]) -> int:
    """The hash a frozen dataclass computes from its ``fields``, kept on the condition: its
    ``__hash__`` computes it once (conditions key the session's memo tables and are hashed over
    and over)."""
    h = hash(fields)
    object.__setattr__(c, "_h", h)
    return h


def _state_without_hash(c: object) -> dict[str, object]:
    """The pickled state: the fields without the remembered hash (string hashes differ between
    processes)."""
    state = dict(c.__dict__)
    state.pop("_h", None)
    return state


@dataclass(frozen=True)
class Cmp:
    """``lhs op rhs`` (``op`` a :class:`CmpOp`; its symbol ``"=="`` is accepted too)."""

    op: CmpOp
    lhs: Dim
    rhs: Dim

    def __post_init__(self) -> None:
        if self.op.__class__ is not CmpOp:
            object.__setattr__(self, "op", CmpOp(self.op))

    def __hash__(self) -> int:
        h: int | None = getattr(self, "_h", None)  # (not ``__dict__``: it would materialize it)
        return _remember_hash(self, (self.op, self.lhs, self.rhs)) if h is None else h

    __getstate__ = _state_without_hash

    def __str__(self) -> str:
        flipped = _FLIPPED.get(self.op)
        if flipped is not None and self.lhs.is_constant and not self.rhs.is_constant:
            return f"{self.rhs} {flipped} {self.lhs}"
        return f"{self.lhs} {self.op} {self.rhs}"


@dataclass(frozen=True)
class BoolOp:
    """``and``/``or`` of at least two conditions."""

    op: str
    args: tuple[Cond, ...]

    def __hash__(self) -> int:
        h: int | None = getattr(self, "_h", None)  # (not ``__dict__``: it would materialize it)
        return _remember_hash(self, (self.op, self.args)) if h is None else h

    __getstate__ = _state_without_hash

    def __str__(self) -> str:
        parts = []
        for a in self.args:
            s = str(a)
            if isinstance(a, BoolOp) or isinstance(a, Not):
                s = f"({s})"
            parts.append(s)
        return f" {self.op} ".join(parts)


@dataclass(frozen=True)
class Not:
    arg: Cond

    def __str__(self) -> str:
        return f"not ({self.arg})"


Cond = Union[Cmp, BoolOp, Not, BoolConst]
_T = TypeVar("_T")


def _gcd_nonconst(d: Dim) -> int:
    g = 0
    for m, c in d.terms:
        if m:
            g = math.gcd(g, c)
    return g


def _decide_cmp(op: CmpOp, diff: Dim) -> bool | None:
    """Decide ``diff op 0`` from bounds (and, for ``==``, divisibility)."""
    lo, hi = bounds(diff)
    match op:
        case CmpOp.EQ:
            if lo == hi == 0:
                return True
            if lo > 0 or hi < 0:
                return False
            g = _gcd_nonconst(diff)
            if g > 1 and diff.constant_term % g != 0 and diff.degree <= 1 and _linear_in_plain_atoms(diff):
                return False
            return None
        case CmpOp.NE:
            r = _decide_cmp(CmpOp.EQ, diff)
            return None if r is None else not r
        case CmpOp.LE:
            return True if hi <= 0 else False if lo > 0 else None
        case CmpOp.LT:
            return True if hi < 0 else False if lo >= 0 else None
        case _:
            assert_never(op)


def _exact_floors(d: Dim) -> bool:
    """Whether a monomial of ``d`` has an atom ``y // k`` with ``y % k`` 0 in canonical form."""
    return any(_exact_floor(at) for m, _ in d.terms for at, _ in m if isinstance(at, FloorDiv))


def _linear_in_plain_atoms(d: Dim) -> bool:
    # every atom takes integer values, so a gcd argument holds for any atoms; kept as a hook
    return True


def _cmp(op: CmpOp, a: DimLike, b: DimLike) -> Cond:
    return _cmp_dims(op, as_dim(a), as_dim(b))


@functools.lru_cache(maxsize=1 << 9)
def _cmp_dims(op: CmpOp, x: Dim, y: Dim) -> Cond:
    # memoized (keyed by dimensions only, so ``True`` or ``1.0`` never stands for ``1``): relations
    # build the same comparison to prove it, then again inside the guard they state (a broadcast
    # proves ``x == y``, ``x == 1``, ``y == 1``, then requires their disjunction)
    yc = y.constant_value
    diff = x - y if yc is None else x - yc  # (a constant: its negation is interned)
    r = _decide_cmp(op, diff)
    equality = op is CmpOp.EQ or op is CmpOp.NE
    if r is None and equality and yc is None and _exact_floors(diff) and divide_exactly(x, y) == 1:
        # equal once each exact ``y // k`` (``y % k`` is 0) counts as ``y/k``: a window padded to a
        # multiple of 4 and split, ``(h + 3*h % 4)*(w + 3*w % 4) == 16*((h + 3*h % 4)//4)*(...)``
        r = op is CmpOp.EQ
    if r is not None:
        return TRUE if r else FALSE
    if equality and (y == 0 or x == 0):
        # a % c == 0 with gcd(content, c) = g > 1 is (a/g) % (c/g) == 0
        side = x if y == 0 else y
        at = side.atom
        if isinstance(at, Mod) and at.b.constant_value is not None:
            c = at.b.constant_value
            g = math.gcd(_gcd_nonconst(at.a), abs(at.a.constant_term), c)
            if g > 1:
                reduced = mod(_divide_coefficients(at.a, g), c // g)
                return _cmp(op, reduced, 0)
        if y != 0:
            x, y = y, x
    if op is CmpOp.EQ and x.is_constant and not y.is_constant:
        x, y = y, x
    if y.is_constant and not x.is_constant:
        # move the constant to the right: ``n + 1 == 5`` is ``n == 4``
        c = x.constant_term
        if c:
            x, y = x - c, y - c
        if equality:
            g = _gcd_nonconst(x)
            yc = y.constant_value or 0
            if g > 1 and yc % g == 0 and all(cf % g == 0 for _, cf in x.terms):
                x, y = _divide_coefficients(x, g), const(yc // g)
    return Cmp(op, x, y)


def _comparison(name: str, op: CmpOp, swap: bool) -> Callable[[DimLike, DimLike], Cond]:
    """The public constructor ``name(a, b)``: ``a op b``, or ``b op a`` when ``swap`` (``ge`` and
    ``gt`` are ``<=`` and ``<`` read backwards)."""

    def compare(a: DimLike, b: DimLike) -> Cond:
        return _cmp(op, b, a) if swap else _cmp(op, a, b)

    compare.__name__ = compare.__qualname__ = name
    compare.__doc__ = f"The condition ``a {_FLIPPED[op] if swap else op} b``, simplified."
    return compare


eq = _comparison("eq", CmpOp.EQ, False)
ne = _comparison("ne", CmpOp.NE, False)
le = _comparison("le", CmpOp.LE, False)
lt = _comparison("lt", CmpOp.LT, False)
ge = _comparison("ge", CmpOp.LE, True)
gt = _comparison("gt", CmpOp.LT, True)


def _junction(op: str, args: Iterable[Cond]) -> Cond:
    unit, zero = (TRUE, FALSE) if op == "and" else (FALSE, TRUE)
    out: list[Cond] = []
    seen: set[Cond] = set()
    for a in args:
        if a == zero:
            return zero
        if a == unit:
            continue
        parts = a.args if isinstance(a, BoolOp) and a.op == op else (a,)
        for p in parts:
            if p not in seen:
                seen.add(p)
                out.append(p)
    if not out:
        return unit
    if len(out) == 1:
        return out[0]
    return BoolOp(op, tuple(out))


def any_of(*args: Cond) -> Cond:
    """Disjunction, simplified (constants folded, nested ``or`` flattened, duplicates dropped)."""
    return _junction("or", args)


def all_of(*args: Cond) -> Cond:
    """Conjunction, simplified."""
    return _junction("and", args)


def negate(c: Cond) -> Cond:
    match c:
        case BoolConst(v):
            return FALSE if v else TRUE
        case Cmp(CmpOp.EQ, a, b):
            return ne(a, b)
        case Cmp(CmpOp.NE, a, b):
            return eq(a, b)
        case Cmp(CmpOp.LE, a, b):
            return lt(b, a)
        case Cmp(CmpOp.LT, a, b):
            return le(b, a)
        case Not(x):
            return x
        case BoolOp("and", xs):
            return any_of(*(negate(x) for x in xs))
        case BoolOp("or", xs):
            return all_of(*(negate(x) for x in xs))
        case _:
            return Not(c)


def decide(c: Cond) -> bool | None:
    """True/False when the condition is constant after simplification, else None."""
    if isinstance(c, BoolConst):
        return c.value
    return None


def cond_value(c: Cond, env: Mapping[Dim | Atom | str, DimLike]) -> bool | None:
    """The truth value of ``c`` under a (possibly partial) assignment: True or False when the
    assignment decides it (``n == 1 or m == 5`` at ``{n: 1}`` is True; ``n >= 1`` holds for every
    value of ``n >= 1``), None when it does not. Iterative (Kleene logic over ``and``/``or``)."""
    if not isinstance(c, (BoolConst, Cmp, BoolOp, Not)):
        raise SymshapeError(INVALID_ARGUMENT, f"expected a condition, got {type(c).__name__} {c!r}")
    for v in check_mapping(env, "an assignment is a mapping of symbols to ints").values():
        if not isinstance(v, (Dim, Integral)) or isinstance(v, bool):
            raise SymshapeError(BAD_DIM, f"an assignment gives symbols ints, got {v!r}")
    amap = _atom_map(env)

    def leaf(x: Cmp | BoolConst) -> bool | None:
        if isinstance(x, BoolConst):
            return x.value
        return decide(_cmp(x.op, _subst_dim(x.lhs, amap), _subst_dim(x.rhs, amap)))

    def node(x: BoolOp | Not, got: list[bool | None]) -> bool | None:
        if isinstance(x, BoolOp):
            return _kleene(x.op, got)
        return None if got[0] is None else not got[0]

    return _fold(c, leaf, node)


def _fold(c: Cond, leaf: Callable[[Cmp | BoolConst], _T], node: Callable[[BoolOp | Not, list[_T]], _T]) -> _T:
    """Fold ``c`` bottom-up without recursion: ``leaf`` gives a comparison's or a constant's
    result, ``node`` an ``and``/``or``/``not``'s from its operands' results (in order)."""
    out: list[_T] = []
    stack: list[tuple[Cond, bool]] = [(c, False)]
    while stack:
        x, post = stack.pop()
        if isinstance(x, (Cmp, BoolConst)):
            out.append(leaf(x))
            continue
        kids = x.args if isinstance(x, BoolOp) else (x.arg,)
        if post:
            got = out[len(out) - len(kids) :]
            del out[len(out) - len(kids) :]
            out.append(node(x, got))
        else:
            stack.append((x, True))
            stack.extend((y, False) for y in reversed(kids))
    return out[0]


def _kleene(op: str, got: list[bool | None]) -> bool | None:
    if op == "and":
        if any(g is False for g in got):
            return False
        return True if all(g is True for g in got) else None
    if any(g is True for g in got):
        return True
    return False if all(g is False for g in got) else None


def _subst_dim(d: Dim, amap: Mapping[object, Dim]) -> Dim:
    return _subst(d, amap) if amap else d


def cond_holds(c: Cond, env: Mapping[Dim | Atom | str, DimLike]) -> bool:
    """Evaluate at values for the symbols. The assignment must decide the condition: otherwise a
    ``invalid-argument`` error names the symbols it lacks.

    >>> from symshape.encoding.dims import dim
    >>> n, m = dim("n"), dim("m")
    >>> cond_holds(any_of(eq(n, 1), eq(m, 5)), {n: 1})
    True
    """
    r = cond_value(c, env)
    if r is None:
        given = {str(k) for k in env}
        missing = sorted({str(s) for d in cond_dims(c) for s in d.symbols} - given)
        unknowns = sorted({f"?d{v.id}" for d in cond_dims(c) for v in d.unknowns})
        what = ", ".join(missing + unknowns) or "its symbols"
        raise SymshapeError(
            INVALID_ARGUMENT, f"the assignment does not decide `{c}`: give a value for {what}"
        )
    return r


def cond_dims(c: Cond) -> Iterator[Dim]:
    """Every dimension of ``c``, left to right (iterative)."""
    stack: list[Cond] = [c]
    while stack:
        x = stack.pop()
        cls = type(x)  # (the condition classes have no subclasses)
        if cls is Cmp:
            yield x.lhs  # type: ignore[union-attr]
            yield x.rhs  # type: ignore[union-attr]
        elif cls is BoolOp:
            stack.extend(reversed(x.args))  # type: ignore[union-attr]
        elif cls is Not:
            stack.append(x.arg)  # type: ignore[union-attr]


MAX_JOIN_EXPANSION = 64
"""How many alternatives :func:`expand_joins` spells out for one condition."""


def _join_atoms(c: Cond) -> list[AnyDim]:
    out: dict[int, AnyDim] = {}
    _cond_joins(c, out)
    return [out[k] for k in sorted(out)] if out else []


def _cond_joins(c: Cond, out: dict[int, AnyDim]) -> None:
    """The joins in ``c`` (into ``out`` by id), by a direct walk (iterative; every required or
    proved condition is looked over, and few have joins)."""
    stack: list[Cond] = [c]
    while stack:
        x = stack.pop()
        cls = type(x)
        if cls is Cmp:
            _add_joins(x.lhs, out)  # type: ignore[union-attr]
            _add_joins(x.rhs, out)  # type: ignore[union-attr]
        elif cls is BoolOp:
            stack.extend(x.args)  # type: ignore[union-attr]
        elif cls is Not:
            stack.append(x.arg)  # type: ignore[union-attr]


def _add_joins(d: Dim, out: dict[int, AnyDim]) -> None:
    """The joins in ``d`` (each id's first in the order of :meth:`Dim.atoms`), by a direct walk."""
    for m, _ in d.terms:
        for a, _ in m:
            cls = type(a)
            if cls is AnyDim:
                if a.alts:  # type: ignore[union-attr]
                    out.setdefault(a.id, a)  # type: ignore[union-attr,arg-type]
            elif cls is FloorDiv or cls is Mod:
                _add_joins(a.a, out)  # type: ignore[union-attr]
                _add_joins(a.b, out)  # type: ignore[union-attr]
            elif cls is Max or cls is Min:
                for x in a.args:  # type: ignore[union-attr]
                    _add_joins(x, out)


def expand_joins(c: Cond) -> Cond:
    """A condition over the joins of branches (see :func:`~symshape.encoding.dims.fresh_join`)
    required for every branch: ``c[j := a]`` for each alternative ``a`` of each join ``j``, all
    of them. What remains mentions only the alternatives (the branches' own dimensions).

    Joins are expanded one at a time while the conjunction has at most
    :data:`MAX_JOIN_EXPANSION` members; beyond that the joins stay (given dimensions bounded by
    their alternatives: sound, merely less readable).

    >>> from symshape.encoding.dims import dim, fresh_join
    >>> w = dim("w")
    >>> j = fresh_join([w, const(4)])
    >>> str(expand_joins(any_of(eq(j, w), eq(j, 1), eq(w, 1))))
    'w == 4 or w == 1'
    """
    todo = _join_atoms(c)
    if not todo:
        return c
    parts: list[Cond] = [c]
    seen: set[int] = set()
    while todo:
        j = todo.pop(0)
        if j.id in seen:
            continue
        seen.add(j.id)
        if len(parts) * len(j.alts) > MAX_JOIN_EXPANSION:
            break
        jd = _atom_dim(j)
        nxt: list[Cond] = []
        for p in parts:
            for alt in j.alts:
                nxt.append(map_cond(p, lambda d, alt=alt, jd=jd: d.subs({jd: alt})))  # type: ignore[misc]
        parts = nxt
        todo.extend(a for a in _join_atoms(all_of(*parts)) if a.id not in seen)
        todo.sort(key=lambda a: a.id)
    return all_of(*parts)


def map_cond(c: Cond, f: Callable[[Dim], Dim]) -> Cond:
    """Apply ``f`` to every dimension of ``c`` and re-simplify (iterative)."""

    def leaf(x: Cmp | BoolConst) -> Cond:
        if isinstance(x, BoolConst):
            return x
        na, nb = f(x.lhs), f(x.rhs)
        return x if na is x.lhs and nb is x.rhs else _cmp(x.op, na, nb)

    def node(x: BoolOp | Not, got: list[Cond]) -> Cond:
        return _junction(x.op, got) if isinstance(x, BoolOp) else negate(got[0])

    return _fold(c, leaf, node)
