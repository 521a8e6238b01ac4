"""Rewrite rules that make a guard read like a person wrote it — candidates only.

Each rule here is sound on its own, but nothing here is trusted: :mod:`symshape.solver.simplify`
proves every candidate equivalent to the original with Z3 (under the symbols' declared ranges)
before a report shows it. The rules:

* **common factors**: a comparison whose two sides share a positive factor drops it
  (``64*s*max(k0, n) == 64*n*s`` is ``max(k0, n) == n``; ``2*h <= 2*w`` is ``h <= w``);
* **max/min against an argument**: ``max(a, b) == b`` is ``a <= b``, ``min(a, b) == a`` is
  ``a <= b``;
* **divisibility**: ``A % B == 0`` drops the factors ``A`` and ``B`` share, then the part of a
  constant divisor coprime to ``A``'s content (``512*n*s % (480*n) == 0`` is ``16*s % 15 == 0``,
  which is ``s % 15 == 0``);
* **one symbol**: a condition over a single symbol is evaluated at the first values of its range
  and, when they follow a simple pattern (``s >= k``, ``s <= k``, ``s == k``, ``s != k``,
  ``s % m == r``, always true), that pattern is the candidate:
  ``h//2 >= 2`` is ``h >= 4``; ``(w - 1)//2 + 1 == w or (w - 1)//2 == 0 or w == 1`` is ``w <= 2``.

>>> from symshape.encoding.dims import dims, dmax
>>> from symshape.encoding.conds import eq
>>> k0, n, s = dims("k0 n s")
>>> str(rewrite(eq(64 * s * dmax(k0, n), 64 * n * s)))
'k0 <= n'
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from symshape.encoding.conds import (
    TRUE,
    BoolOp,
    Cmp,
    CmpOp,
    Cond,
    Not,
    all_of,
    any_of,
    assert_never,
    cond_dims,
    cond_value,
    eq,
    ge,
    le,
    lt,
    ne,
    negate,
)
from symshape.encoding.dim_expr import _atom_dim
from symshape.encoding.dims import ONE, ZERO, Atom, Dim, FloorDiv, Max, Min, Mod, Sym, bounds, const, mod
from symshape.errors import SymshapeError

__all__ = ["rewrite", "scan_one_symbol", "single_symbol", "is_plain", "SCAN_WIDTH"]

SCAN_WIDTH = 48
"""How many values of a symbol :func:`scan_one_symbol` evaluates."""


_EQUALITIES = (CmpOp.EQ, CmpOp.NE)


def _positive(a: Atom) -> bool:
    return bounds(_atom_dim(a))[0] >= 1


def _common_factor(ds: Sequence[Dim]) -> tuple[int, dict[Atom, int]]:
    """The content (gcd of every coefficient) and the positive atoms every term of every ``ds``
    has (each with its least exponent)."""
    g = 0
    common: dict[Atom, int] | None = None
    for d in ds:
        for m, c in d.terms:
            g = math.gcd(g, c)
            here = {a: e for a, e in m if _positive(a)}
            if common is None:
                common = here
            else:
                common = {a: min(e, here[a]) for a, e in common.items() if a in here}
    return abs(g), common or {}


def _divide(d: Dim, g: int, common: dict[Atom, int]) -> Dim:
    out = ZERO
    for m, c in d.terms:
        t = const(c // g)
        for a, e in m:
            k = e - common.get(a, 0)
            if k:
                t = t * (_atom_dim(a) ** k)
        out = out + t
    return out


def _sides(diff: Dim) -> tuple[Dim, Dim]:
    """``diff`` as ``lhs - rhs`` with positive coefficients on both sides."""
    lhs, rhs = ZERO, ZERO
    for m, c in diff.terms:
        t = const(abs(c))
        for a, e in m:
            t = t * (_atom_dim(a) ** e)
        if c > 0:
            lhs = lhs + t
        else:
            rhs = rhs + t
    return lhs, rhs


def _cancel(c: Cmp) -> Cond | None:
    """Drop a positive factor both sides share."""
    diff = c.lhs - c.rhs
    if diff.is_constant:
        return None
    g, common = _common_factor([diff])
    if g <= 1 and not common:
        return None
    lhs, rhs = _sides(_divide(diff, g, common))
    return _make(c.op, lhs, rhs)


def _make(op: CmpOp, lhs: Dim, rhs: Dim) -> Cond:
    match op:
        case CmpOp.EQ:
            return eq(lhs, rhs)
        case CmpOp.NE:
            return ne(lhs, rhs)
        case CmpOp.LE:
            return le(lhs, rhs)
        case CmpOp.LT:
            return lt(lhs, rhs)
        case _:
            assert_never(op)


def _max_min(c: Cmp) -> Cond | None:
    """``max(a, b) == b`` is ``a <= b``; ``min(a, b) == a`` is ``a <= b`` (and ``!=`` negated)."""
    if c.op not in _EQUALITIES:
        return None
    for side, other in ((c.lhs, c.rhs), (c.rhs, c.lhs)):
        at = side.atom
        if isinstance(at, (Max, Min)) and other in at.args:
            rest = [a for a in at.args if a != other]
            if isinstance(at, Max):
                out = all_of(*(le(a, other) for a in rest))
            else:
                out = all_of(*(ge(a, other) for a in rest))
            return out if c.op is CmpOp.EQ else negate(out)
    return None


def _divisibility(c: Cmp) -> Cond | None:
    """``A % B == 0`` without the factors ``A`` and ``B`` share."""
    if c.op not in _EQUALITIES or c.rhs != 0:
        return None
    at = c.lhs.atom
    if not isinstance(at, Mod):
        return None
    a, b = at.a, at.b
    g, common = _common_factor([a, b])
    if g > 1 or common:
        a, b = _divide(a, g, common), _divide(b, g, common)
    cb = b.constant_value
    if cb is not None:
        ga, _ = _common_factor([a])
        if ga > 1:
            k = math.gcd(ga, cb)
            a, b = _divide(a, ga, {}), const(cb // k)
    if b == ONE:
        out: Cond = TRUE
    else:
        out = eq(mod(a, b), 0)
    if out == c:
        return None
    return out if c.op is CmpOp.EQ else negate(out)


def _rewrite_cmp(c: Cmp) -> Cond:
    for _ in range(8):  # each rule makes the condition smaller; a few rounds reach a fixpoint
        nxt: Cond | None = None
        for rule in (_divisibility, _max_min, _cancel):
            r = rule(c)
            if r is not None and r != c:
                nxt = r
                break
        if nxt is None:
            return c
        if not isinstance(nxt, Cmp):
            return rewrite(nxt) if isinstance(nxt, (BoolOp, Not)) else nxt
        c = nxt
    return c


def rewrite(c: Cond) -> Cond:
    """``c`` with the rewrite rules applied everywhere (recursively through ``and``/``or``)."""
    match c:
        case Cmp():
            return _rewrite_cmp(c)
        case BoolOp("and", xs):
            return all_of(*(rewrite(x) for x in xs))
        case BoolOp(_, xs):
            return any_of(*(rewrite(x) for x in xs))
        case Not(x):
            return negate(rewrite(x))
    return c


def single_symbol(c: Cond) -> Sym | None:
    """The one given symbol ``c`` depends on, when every atom of ``c`` is built from it alone."""
    found: Sym | None = None
    for d in cond_dims(c):
        for a in d.atoms():
            if isinstance(a, Sym):
                if found is not None and found._key != a._key:
                    return None
                found = a
            elif not isinstance(a, (Max, Min, Mod, FloorDiv)):
                return None  # an anonymous ``?``, a solver unknown, a join
    return found


def is_plain(c: Cond) -> bool:
    """Already as plain as the one-symbol patterns: ``s op k`` or ``s % m op k``."""
    if not isinstance(c, Cmp) or c.lhs.is_constant == c.rhs.is_constant:
        return False
    at = c.rhs.atom if c.lhs.is_constant else c.lhs.atom
    if isinstance(at, Sym):
        return True
    return isinstance(at, Mod) and at.b.is_constant and isinstance(at.a.atom, Sym)


def scan_one_symbol(c: Cond, s: Sym) -> Cond | None:
    """The simple condition that agrees with ``c`` at the first :data:`SCAN_WIDTH` values of
    ``s`` (a candidate, to be proved), or None when no simple pattern fits."""
    lo = s.min
    hi = lo + SCAN_WIDTH - 1 if s.max is None else min(s.max, lo + SCAN_WIDTH - 1)
    if hi < lo:
        return None
    vals: list[bool] = []
    for v in range(lo, hi + 1):
        try:
            truth = cond_value(c, {s: v})
        except SymshapeError:  # (a value it has no meaning at: `x % d` at d = 0)
            return None
        if truth is None:
            return None
        vals.append(truth)
    sd = _atom_dim(s)
    n = len(vals)
    if all(vals):
        return TRUE
    if not any(vals):
        return None  # never true: an error, not a guard to simplify
    first_true = vals.index(True)
    last_true = n - 1 - vals[::-1].index(True)
    if all(vals[first_true:]) and first_true > 0:
        return ge(sd, lo + first_true)
    if all(vals[: last_true + 1]) and last_true < n - 1:
        return le(sd, lo + last_true)
    if vals.count(True) == 1:
        return eq(sd, lo + first_true)
    if vals.count(False) == 1:
        return ne(sd, lo + vals.index(False))
    for m in range(2, n // 2 + 1):
        rem = (lo + first_true) % m
        if all(vals[i] == ((lo + i) % m == rem) for i in range(n)):
            return eq(mod(sd, m), rem)
    return None
