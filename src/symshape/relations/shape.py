"""Shape-manipulation relations: ``flatten`` (more in this family: reshape, concatenate, ...).

``flatten(x, axis=1)``: rows are the product of the dimensions before ``axis``, columns the product
from ``axis`` on (the seed's ``Flatten(Tensor(sh, bt), O) :- O = Tensor(sh[0], prod(sh[1:]))`` for
``axis=1``); ``axis`` may be negative and lies in ``[-rank, rank]``.
"""

from __future__ import annotations

from collections.abc import Sequence

from symshape.encoding.dims import ONE, Dim
from symshape.encoding.types import Attrs, Tensor, TensorType, Type
from symshape.errors import AXIS_OUT_OF_RANGE, BAD_ATTRIBUTE
from symshape.relations.base import Context, relation

__all__ = ["flatten_rel", "product", "int_attr"]


def product(dims: Sequence[Dim]) -> Dim:
    out = ONE
    for d in dims:
        out = out * d
    return out


def int_attr(ctx: Context, attrs: Attrs, name: str, default: int) -> int:
    v = attrs.get(name, default)
    if not isinstance(v, int) or isinstance(v, bool):
        ctx.fail(BAD_ATTRIBUTE, f"{ctx.name}: attribute {name} must be an int, got {v!r}")
    return v


@relation("flatten")
def flatten_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out = Tensor((prod(sh[:axis]), prod(sh[axis:])))``."""
    x, out = args[0], args[1]
    if not isinstance(x, TensorType):
        return False
    axis = int_attr(ctx, attrs, "axis", 1)
    if x.ndim is None:
        if not ctx.final:
            return False
        ctx.assign(out, Tensor((ctx.fresh_dim(), ctx.fresh_dim()), x.dtype))
        return True
    r = x.ndim
    if not -r <= axis <= r:
        ctx.fail(AXIS_OUT_OF_RANGE, f"flatten: axis {axis} is out of range for rank {r}")
    if axis < 0:
        axis += r
    sh = x.dims
    ctx.assign(out, Tensor((product(sh[:axis]), product(sh[axis:])), x.dtype))
    return True
