"""Interval arithmetic on value ranges: the rules :mod:`symshape.ir.ranges` applies to a product,
a division rounded toward zero, and bounds given as numbers (a ``full`` fill, a ``clip``'s ends).

>>> from symshape.encoding.dims import as_dim
>>> scale((as_dim(-1), as_dim(3)), (as_dim(-2), as_dim(-2)))
(Dim(-6), Dim(2))
"""

from __future__ import annotations

import math
from typing import Any

from symshape.encoding.dims import Dim, bounds
from symshape.encoding.types import TensorType
from symshape.encoding.values import Range
from symshape.relations.values import trunc_divide_dim

__all__ = ["extent", "sign_of", "scale", "trunc_divide", "nonneg_product", "pinned", "int_bound"]


def extent(t: Any, axis: int, rank: int) -> int | None:
    """The constant extent of a tensor of rank ``rank`` along ``axis``, if it has one."""
    if not isinstance(t, TensorType) or not isinstance(t.shape, tuple) or len(t.shape) != rank:
        return None
    d = t.shape[axis]
    return d.constant_value if isinstance(d, Dim) else None


def sign_of(d: Dim | None) -> int | None:
    """1 where ``d >= 0`` for every value of its symbols, -1 where ``d <= 0``, else None."""
    if d is None:
        return None
    lo, hi = bounds(d)
    return 1 if lo >= 0 else -1 if hi <= 0 else None


def scale(a: Range, b: Range) -> Range | None:
    """``a`` times a point ``b = [c, c]`` (a constant, or an exact value such as a size) of known
    sign: ``[lo*c, hi*c]``, swapped where ``c <= 0``; None where ``b`` is no such point."""
    c = b[0]
    if c is None or b[1] is None or c != b[1]:
        return None
    sign = sign_of(c)
    if sign is None:
        return None
    lo = None if a[0] is None else a[0] * c
    hi = None if a[1] is None else a[1] * c
    return (lo, hi) if sign > 0 else (hi, lo)


def trunc_divide(a: Range, b: Range) -> Range | None:
    """``a`` divided, rounded toward zero, by a point ``b = [c, c]`` of known sign, non-zero:
    ``[trunc(lo/c), trunc(hi/c)]``, swapped where ``c < 0`` (monotone in the dividend; a float
    between integer bounds too)."""
    c = b[0]
    if c is None or c != b[1] or sign_of(c) is None:
        return None
    lo = None if a[0] is None else trunc_divide_dim(a[0], c)
    hi = None if a[1] is None else trunc_divide_dim(a[1], c)
    return (lo, hi) if bounds(c)[0] >= 1 else (hi, lo) if bounds(c)[1] <= -1 else None


def nonneg_product(a: Range, b: Range) -> Range | None:
    """Two non-negative ranges: ``[lo_a*lo_b, hi_a*hi_b]`` (the upper side where both are known)."""
    if sign_of(a[0]) != 1 or sign_of(b[0]) != 1:
        return None
    assert a[0] is not None and b[0] is not None
    return (a[0] * b[0], None if a[1] is None or b[1] is None else a[1] * b[1])


def pinned(r: Range) -> int | None:
    """The constant a range pins (``[k, k]``), if any."""
    lo, hi = r
    if lo is None or hi is None or lo != hi:
        return None
    return lo.constant_value


def int_bound(v: object, ceil: bool) -> int | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        if not math.isfinite(v):
            return None
        return math.ceil(v) if ceil else math.floor(v)
    return None
