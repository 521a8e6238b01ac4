"""Interval bounds of dimensions from the symbols' declared ranges: a cheap decision procedure
used by the smart constructors (:mod:`symshape.encoding.dim_expr`) and the solver's fast path."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from symshape.encoding.dim_atoms import AnyDim, Atom, DimVar, FloorDiv, Max, Mod, Mono, Sym

if TYPE_CHECKING:
    from symshape.encoding.dim_expr import Dim

__all__ = ["Interval", "bounds", "mono_bounds"]

Interval = tuple[float, float]
_INF = math.inf


def _imul(x: Interval, y: Interval) -> Interval:
    def m(p: float, q: float) -> float:
        return 0.0 if p == 0 or q == 0 else p * q

    cands = (m(x[0], y[0]), m(x[0], y[1]), m(x[1], y[0]), m(x[1], y[1]))
    return (min(cands), max(cands))


def _ipow(x: Interval, e: int) -> Interval:
    out: Interval = (1, 1)
    for _ in range(e):
        out = _imul(out, x)
    if e % 2 == 0 and x[0] < 0 < x[1]:
        out = (0, out[1])
    return out


def _atom_bounds(a: Atom) -> Interval:
    if isinstance(a, Sym):
        return (a.min, _INF if a.max is None else a.max)
    if isinstance(a, AnyDim):
        if a.alts:
            bs = [bounds(x) for x in a.alts]
            return (min(b[0] for b in bs), max(b[1] for b in bs))
        return (1, _INF)
    if isinstance(a, DimVar):
        return (0, _INF)
    if isinstance(a, FloorDiv):
        la, ha = bounds(a.a)
        lb, hb = bounds(a.b)
        if lb <= 0:
            return (-_INF, _INF)
        cands = [p / q for p in (la, ha) for q in (lb, hb) if not (math.isinf(p) and math.isinf(q))]
        lo = min(cands) if cands else -_INF
        hi = max(cands) if cands else _INF
        return (math.floor(lo) if not math.isinf(lo) else lo, math.floor(hi) if not math.isinf(hi) else hi)
    if isinstance(a, Mod):
        la, ha = bounds(a.a)
        lb, hb = bounds(a.b)
        if lb <= 0:
            return (-_INF, _INF)
        top = hb - 1
        if la >= 0:
            top = min(top, ha)
        return (0, top)
    if isinstance(a, Max):
        bs = [bounds(x) for x in a.args]
        return (max(b[0] for b in bs), max(b[1] for b in bs))
    bs = [bounds(x) for x in a.args]
    return (min(b[0] for b in bs), min(b[1] for b in bs))


def mono_bounds(m: Mono) -> Interval:
    """Interval bounds of the monomial ``m`` (coefficient 1)."""
    iv: Interval = (1, 1)
    for a, e in m:
        iv = _imul(iv, _ipow(_atom_bounds(a), e))
    return iv


def bounds(d: Dim) -> Interval:
    """Interval bounds ``(lo, hi)`` of ``d`` from the symbols' declared ranges (may be infinite)."""
    lo: float = 0
    hi: float = 0
    for m, c in d.terms:
        iv = _imul(mono_bounds(m), (c, c))
        lo += iv[0]
        hi += iv[1]
    return (lo, hi)
