"""Reductions over axes: sum/mean/prod/all/any, max/min (the reduced extent must be non-empty),
argmax/argmin."""

from __future__ import annotations

from symshape.encoding.types import Attrs
from symshape.ir.expr import Call, Expr
from symshape.ir.op import register_op
from symshape.ops.spec import (
    Axes,
    axis_normalizer,
    checked,
    get_op,
)
from symshape.relations.common import (
    attr_axes,
    attr_bool,
)

__all__ = ["sum", "mean", "prod", "max", "min", "all", "any", "argmax", "argmin"]


def _chk_reduce(attrs: Attrs, op: str) -> None:
    attr_axes(attrs, "axis", op)
    attr_bool(attrs, "keepdims", False, op)
    attr_bool(attrs, "exclude", False, op)


_REDUCE_ATTRS = {"axis": "ints", "keepdims": "bool", "exclude": "bool"}


for _n in ("sum", "mean", "prod", "all", "any"):
    register_op(
        _n,
        "reduce",
        1,
        check_attrs=checked(_chk_reduce, _n),
        normalize=axis_normalizer("axis"),
        attr_types=_REDUCE_ATTRS,
    )


for _n in ("max", "min"):
    register_op(
        _n,
        "reduce_nonempty",
        1,
        check_attrs=checked(_chk_reduce, _n),
        normalize=axis_normalizer("axis"),
        attr_types=_REDUCE_ATTRS,
    )


for _n in ("argmax", "argmin"):
    register_op(
        _n,
        "arg_reduce",
        1,
        check_attrs=checked(_chk_reduce, _n),
        normalize=axis_normalizer("axis"),
        attr_types=_REDUCE_ATTRS,
    )


def _reduce(name: str, x: Expr, axis: Axes, keepdims: bool, exclude: bool) -> Call:
    return get_op(name)(x, axis=axis, keepdims=keepdims, exclude=exclude)


def sum(x: Expr, axis: Axes = None, keepdims: bool = False, exclude: bool = False) -> Call:
    """Sum over ``axis`` (None: all axes)."""
    return _reduce("sum", x, axis, keepdims, exclude)


def mean(x: Expr, axis: Axes = None, keepdims: bool = False, exclude: bool = False) -> Call:
    """Mean over ``axis`` (None: all axes)."""
    return _reduce("mean", x, axis, keepdims, exclude)


def prod(x: Expr, axis: Axes = None, keepdims: bool = False, exclude: bool = False) -> Call:
    """Product over ``axis`` (None: all axes)."""
    return _reduce("prod", x, axis, keepdims, exclude)


def max(x: Expr, axis: Axes = None, keepdims: bool = False, exclude: bool = False) -> Call:
    """Maximum over ``axis`` (None: all axes); the reduced extent must be non-empty."""
    return _reduce("max", x, axis, keepdims, exclude)


def min(x: Expr, axis: Axes = None, keepdims: bool = False, exclude: bool = False) -> Call:
    """Minimum over ``axis`` (None: all axes); the reduced extent must be non-empty."""
    return _reduce("min", x, axis, keepdims, exclude)


def all(x: Expr, axis: Axes = None, keepdims: bool = False, exclude: bool = False) -> Call:
    """Logical and over ``axis``."""
    return _reduce("all", x, axis, keepdims, exclude)


def any(x: Expr, axis: Axes = None, keepdims: bool = False, exclude: bool = False) -> Call:
    """Logical or over ``axis``."""
    return _reduce("any", x, axis, keepdims, exclude)


def argmax(x: Expr, axis: Axes = None, keepdims: bool = False, exclude: bool = False) -> Call:
    """Index of the maximum over ``axis`` (int32)."""
    return _reduce("argmax", x, axis, keepdims, exclude)


def argmin(x: Expr, axis: Axes = None, keepdims: bool = False, exclude: bool = False) -> Call:
    """Index of the minimum over ``axis`` (int32)."""
    return _reduce("argmin", x, axis, keepdims, exclude)
