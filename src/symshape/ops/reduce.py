"""Reductions over axes: sum/mean/prod/all/any, max/min (the reduced extent must be non-empty),
argmax/argmin."""

from __future__ import annotations

from symshape.encoding.types import Attrs
from symshape.ir.expr import Call, Expr
from symshape.ir.op import OPS
from symshape.ops.spec import Axes, OpSpec, axis_normalizer, register_ops, specialize
from symshape.relations.common import attr_axes, attr_bool

__all__ = ["sum", "mean", "prod", "max", "min", "all", "any", "argmax", "argmin"]


def _chk_reduce(attrs: Attrs, op: str) -> None:
    attr_axes(attrs, "axis", op)
    attr_bool(attrs, "keepdims", False, op)
    attr_bool(attrs, "exclude", False, op)


_REDUCE_ATTRS = {"axis": "ints", "keepdims": "bool", "exclude": "bool"}


# the relation of each reduction: ``reduce``, ``reduce_nonempty`` (max/min have no identity, so
# the reduced extent must not be empty), ``arg_reduce`` (an int32 index)
_RELATIONS = {
    "sum": "reduce",
    "mean": "reduce",
    "prod": "reduce",
    "all": "reduce",
    "any": "reduce",
    "max": "reduce_nonempty",
    "min": "reduce_nonempty",
    "argmax": "arg_reduce",
    "argmin": "arg_reduce",
}


SPECS: tuple[OpSpec, ...] = tuple(
    OpSpec(n, rel, 1, _REDUCE_ATTRS, _chk_reduce, axis_normalizer("axis")) for n, rel in _RELATIONS.items()
)


register_ops(SPECS)


def _reduce(op: str, x: Expr, axis: Axes = None, keepdims: bool = False, exclude: bool = False) -> Call:
    """The wrapper of the reduction ``op``."""
    return OPS[op].wrapper_call(x, axis=axis, keepdims=keepdims, exclude=exclude)


sum = specialize(_reduce, "sum", "sum", "Sum over ``axis`` (None: all axes).")
mean = specialize(_reduce, "mean", "mean", "Mean over ``axis`` (None: all axes).")
prod = specialize(_reduce, "prod", "prod", "Product over ``axis`` (None: all axes).")
max = specialize(
    _reduce, "max", "max", "Maximum over ``axis`` (None: all axes); the reduced extent must be non-empty."
)
min = specialize(
    _reduce, "min", "min", "Minimum over ``axis`` (None: all axes); the reduced extent must be non-empty."
)
all = specialize(_reduce, "all", "all", "Logical and over ``axis``.")
any = specialize(_reduce, "any", "any", "Logical or over ``axis``.")
argmax = specialize(_reduce, "argmax", "argmax", "Index of the maximum over ``axis`` (int32).")
argmin = specialize(_reduce, "argmin", "argmin", "Index of the minimum over ``axis`` (int32).")
