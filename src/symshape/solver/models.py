"""Cheap answers before Z3: a few candidate models, and case splits on a fact's equations.

Both procedures are exact where they answer, and answer only part of the time (then the session
asks Z3):

* :func:`search` evaluates the facts, the divisor axioms and a condition ``c`` at a few integer
  assignments of their leaf atoms within the atoms' declared ranges. An assignment where every
  fact and axiom holds is a model: with ``c`` true it shows ``c`` satisfiable together with the
  facts, with ``c`` false it shows that the facts do not imply ``c``. A guard such as
  ``n == m or n == 1 or m == 1`` is shown to be one by ``m = n = 1`` and ``n = 2, m = 3``.
  When no assignment with one size apart breaks ``c``, a size of ``c`` and one other size move
  together (a fact ``s5 == s2`` ties the other to it): a bounded, ordered list, at most twice
  the number of ``c``'s leaves times the number of leaves. Up to :data:`MAX_LEAVES` leaves
  (the Attention bodies of a KV cache have 20).
* :func:`implied` proves ``facts => c`` by cases on one fact that is an equation, or a
  disjunction of equations, that each solve for a leaf: ``c`` with the leaf replaced is decided
  true by canonical forms in every case. Under ``n == m or n == 1 or m == 1`` the condition
  ``64*s*max(m, n) % n == 0`` holds (``m``, ``1`` and ``n`` for ``max(m, n)``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from symshape.encoding.conds import BoolConst, BoolOp, Cmp, Cond, Not, cond_dims, decide, map_cond
from symshape.encoding.dims import AnyDim, Atom, Dim, DimVar, FloorDiv, Max, Min, Mod, Sym
from symshape.errors import SymshapeError
from symshape.solver.relevance import Leaf

__all__ = ["search", "implied", "MAX_LEAVES", "MAX_CASE_FACTS"]

MAX_LEAVES = 24  # larger problems go to Z3 directly
MAX_CASE_FACTS = 8  # :func:`implied` splits on at most this many facts (the newest)
_SPREAD = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)


def _range(y: Leaf) -> tuple[int, int | None]:
    if isinstance(y, Sym):
        return y.min, y.max
    if isinstance(y, AnyDim):
        return y.least, None
    return 0, None


def _spread(i: int) -> int:
    """The ``i``-th of a sequence of distinct values > 1 (primes first)."""
    return _SPREAD[i] if i < len(_SPREAD) else _SPREAD[-1] + 2 * (i - len(_SPREAD) + 1)


def _clamp(v: int, lo: int, hi: int | None) -> int:
    v = max(v, lo)
    return v if hi is None else min(v, hi)


def _candidates(leaves: Sequence[Leaf], focus: Sequence[Leaf] = ()) -> Iterator[dict[Leaf, int]]:
    """All at their least values; all distinct; each at its least value with the others distinct;
    all at their least value plus one; that, and all at their least values, with one at its
    distinct value (a broadcast guard ``a == b or a == 1 or b == 1`` fails when every size is 2
    but one; ``max(m, n) == n`` fails when all are 1 but ``m``); then, for each leaf of ``focus``
    (the condition's) and each other leaf, those two one above the rest (:func:`_pairs`)."""
    yield from _singles(leaves)
    yield from _pairs(leaves, focus)


def _singles(leaves: Sequence[Leaf]) -> Iterator[dict[Leaf, int]]:
    ranges = [_range(y) for y in leaves]
    low = {y: lo for y, (lo, _) in zip(leaves, ranges)}
    spread = {y: _clamp(_spread(i) + lo - 1, lo, hi) for i, (y, (lo, hi)) in enumerate(zip(leaves, ranges))}
    yield low
    yield spread
    for y in leaves:
        if spread[y] != low[y]:
            yield {**spread, y: low[y]}
    two = {y: _clamp(lo + 1, lo, hi) for y, (lo, hi) in zip(leaves, ranges)}
    yield two
    for base in (two, low):
        for y in leaves:
            if spread[y] != base[y]:
                yield {**base, y: spread[y]}


def _pairs(leaves: Sequence[Leaf], focus: Sequence[Leaf]) -> Iterator[dict[Leaf, int]]:
    """All at their least values plus one, then all at their least values, with a leaf ``y`` of
    ``focus`` and one other leaf ``z`` both one above: a counter-model that must change a size of
    the condition and, with it, a size a fact equates to it (``s5 == s1 or s5 == 1 or s1 == 1``
    fails at ``s5 = 3``, all others 2, only if ``s2 = 3`` too under the fact ``s5 == s2``). At
    most ``len(focus) * len(leaves)`` per base, in the order given (deterministic)."""
    ranges = {y: _range(y) for y in leaves}
    for step in (1, 0):
        base = {y: _clamp(lo + step, lo, hi) for y, (lo, hi) in ranges.items()}
        for y in focus:
            if y not in ranges:
                continue
            lo, hi = ranges[y]
            v = _clamp(base[y] + 1, lo, hi)
            if v == base[y]:
                continue
            for z in leaves:
                if z == y:
                    continue
                zlo, zhi = ranges[z]
                w = _clamp(v, zlo, zhi)
                if w != base[z]:
                    yield {**base, y: v, z: w}


class _Undefined(Exception):
    """A divisor that is not positive at the assignment: not a model."""


def _atom_value(a: Atom, env: dict[Leaf, int]) -> int:
    if isinstance(a, (Sym, AnyDim, DimVar)):
        return env[a]
    if isinstance(a, (FloorDiv, Mod)):
        x, y = _dim_value(a.a, env), _dim_value(a.b, env)
        if y <= 0:
            raise _Undefined
        return x // y if isinstance(a, FloorDiv) else x % y
    if isinstance(a, (Max, Min)):
        vals = [_dim_value(x, env) for x in a.args]
        return max(vals) if isinstance(a, Max) else min(vals)
    raise TypeError(a)  # pragma: no cover - exhaustive


def _dim_value(d: Dim, env: dict[Leaf, int]) -> int:
    total = 0
    for m, c in d.terms:
        t = c
        for a, e in m:
            t *= _atom_value(a, env) ** e
        total += t
    return total


def _value(c: Cond, env: dict[Leaf, int]) -> bool | None:
    """``c`` at integer values for its leaves (None: a divisor is not positive there)."""
    try:
        return _holds(c, env)
    except (_Undefined, KeyError):
        return None


def _holds(c: Cond, env: dict[Leaf, int]) -> bool:
    if isinstance(c, Cmp):
        x, y = _dim_value(c.lhs, env), _dim_value(c.rhs, env)
        op = c.op
        return x == y if op == "==" else x != y if op == "!=" else x <= y if op == "<=" else x < y
    if isinstance(c, BoolOp):
        if c.op == "and":
            return all(_holds(x, env) for x in c.args)
        return any(_holds(x, env) for x in c.args)
    if isinstance(c, Not):
        return not _holds(c.arg, env)
    assert isinstance(c, BoolConst)
    return c.value


def search(
    c: Cond,
    facts: Sequence[Cond],
    divisors: Sequence[Dim],
    leaves: Sequence[Leaf],
    want: tuple[bool, bool],
    max_leaves: int = MAX_LEAVES,
) -> tuple[bool, bool]:
    """Whether a candidate model of ``facts`` and ``divisors > 0`` makes ``c`` true, and whether
    one makes it false (``leaves``: every leaf atom of them all; ``want``: which of the two to
    look for; the search stops when those are found)."""
    if len(leaves) > max_leaves or any(isinstance(y, AnyDim) and y.alts for y in leaves):
        return False, False
    found_t, found_f = not want[0], not want[1]
    focus = [y for y in leaves if y in _cond_leaves(c)]
    for env in _candidates(leaves, focus):
        try:
            if not all(_dim_value(d, env) > 0 for d in divisors):
                continue
        except (_Undefined, KeyError):
            continue
        v = _value(c, env)
        if v is None or (v and found_t) or (not v and found_f):
            continue
        if not all(_value(f, env) is True for f in facts):
            continue
        if v:
            found_t = True
        else:
            found_f = True
        if found_t and found_f:
            break
    return found_t and want[0], found_f and want[1]


def _cond_leaves(c: Cond) -> frozenset[Leaf]:
    """The leaf atoms of ``c``, also those inside ``//``, ``%``, ``max`` and ``min`` atoms."""
    return frozenset(a for d in cond_dims(c) for a in d.atoms() if isinstance(a, (Sym, AnyDim, DimVar)))


def _solved(eqn: Cond) -> tuple[Leaf, Dim] | None:
    """``(y, e)`` when ``eqn`` is ``y == e`` for a leaf ``y`` that ``e`` does not mention."""
    if not isinstance(eqn, Cmp) or eqn.op != "==":
        return None
    for a, b in ((eqn.lhs, eqn.rhs), (eqn.rhs, eqn.lhs)):
        y = a.atom
        if isinstance(y, (Sym, DimVar)) or (isinstance(y, AnyDim) and not y.alts):
            if all(x != y for x in b.atoms()):
                return y, b
    return None


def implied(c: Cond, facts: Sequence[Cond]) -> bool:
    """Whether one of ``facts`` (the last :data:`MAX_CASE_FACTS`) implies ``c`` by cases on its
    equations (see the module docstring)."""
    for f in reversed(facts[-MAX_CASE_FACTS:]):
        if f == c:
            return True
        cases = f.args if isinstance(f, BoolOp) and f.op == "or" else (f,)
        subs = [_solved(x) for x in cases]
        if not subs or any(s is None for s in subs):
            continue
        ok = True
        for s in subs:
            assert s is not None
            y, e = s
            try:
                r = decide(map_cond(c, lambda d, y=y, e=e: d.subs({y: e})))  # type: ignore[misc]
            except (SymshapeError, ArithmeticError):
                r = None
            if r is not True:
                ok = False
                break
        if ok:
            return True
    return False
