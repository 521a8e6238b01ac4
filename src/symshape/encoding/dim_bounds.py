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
    # a product with a zero factor is 0.0 (also against an infinite bound)
    x0, x1 = x
    y0, y1 = y
    z0, z1 = x0 == 0, x1 == 0
    w0, w1 = y0 == 0, y1 == 0
    cands = (
        0.0 if z0 or w0 else x0 * y0,
        0.0 if z0 or w1 else x0 * y1,
        0.0 if z1 or w0 else x1 * y0,
        0.0 if z1 or w1 else x1 * y1,
    )
    return (min(cands), max(cands))


def _scale(x: Interval, c: int) -> Interval:
    """``_imul(x, (c, c))``, the same values (a zero product is ``0.0``) in fewer steps."""
    p = 0.0 if x[0] == 0 or c == 0 else x[0] * c
    q = 0.0 if x[1] == 0 or c == 0 else x[1] * c
    return (p, q) if p < q else (q, p) if q < p else (p, p)


def _ipow(x: Interval, e: int) -> Interval:
    if e == 1:  # ``_imul((1, 1), x)``
        return _scale(x, 1)
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
        return (a.least, _INF)
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
    if len(m) == 1 and m[0][1] == 1:  # one atom, to the first power: the loop's result, directly
        return _scale(_atom_bounds(m[0][0]), 1)
    iv: Interval | None = None
    for a, e in m:
        b = _ipow(_atom_bounds(a), e)
        iv = _scale(b, 1) if iv is None else _imul(iv, b)  # the first factor: ``_imul((1, 1), b)``
    return (1, 1) if iv is None else iv


def bounds(d: Dim) -> Interval:
    """Interval bounds ``(lo, hi)`` of ``d`` from the symbols' declared ranges (may be infinite).

    Remembered on ``d`` (a dimension, its atoms and the symbols' ranges never change)."""
    iv = d._bounds
    if iv is not None:
        return iv
    lo: float = 0
    hi: float = 0
    for m, c in d.terms:
        t = _scale(mono_bounds(m), c)
        lo += t[0]
        hi += t[1]
    iv = d._bounds = (lo, hi)
    return iv
