"""Normalization-style relations: ``softmax`` (also log_softmax), ``bias_add``, ``layer_norm``,
``batch_norm``.

* ``softmax(x, axis=-1)``: the output is the input's type; ``axis`` must be in range.
* ``bias_add(x, b, axis=1)``: ``out = x``; ``b`` is assigned ``Tensor((x.shape[axis],), x.dtype)``
  (an unannotated bias is inferred; an annotated one must match).
* ``layer_norm(x, gamma, beta, axis=-1)``: ``out = x``; ``gamma``, ``beta`` are ``(x.shape[axis],)``.
* ``batch_norm(x, gamma, beta, mean, var, axis=1)``: the four parameters are
  ``(x.shape[axis],)``; the output is the tuple ``(x, (c,), (c,))``.
"""

from __future__ import annotations

from collections.abc import Sequence

from symshape.encoding.types import Attrs, Tensor, TensorType, TupleType, Type
from symshape.relations.base import Context, relation
from symshape.relations.common import attr_int, norm_axis

__all__ = ["softmax_rel", "bias_add_rel", "layer_norm_rel", "batch_norm_rel"]


@relation("softmax")
def softmax_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out = x`` with ``axis`` in range."""
    x, out = args[0], args[1]
    axis = attr_int(attrs, "axis", -1, ctx.name)
    if not isinstance(x, TensorType):
        return False
    if x.ndim is not None:
        norm_axis(ctx, axis, x.ndim, ctx.name)
    ctx.assign(out, x)
    return True


def _channel_params(ctx: Context, x: TensorType, params: Sequence[Type], axis: int) -> TensorType | None:
    """Assign every parameter ``(x.shape[axis],)``; None when the rank is unknown (defer)."""
    if x.ndim is None:
        return None
    ax = norm_axis(ctx, axis, x.ndim, ctx.name)
    c = x.dims[ax]
    vec = Tensor((c,), x.dtype)
    for p in params:
        dtype = p.dtype if isinstance(p, TensorType) else x.dtype
        ctx.assign(p, Tensor((c,), dtype))
    return vec


@relation("bias_add")
def bias_add_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out = x``; ``b: (x.shape[axis],)``."""
    x, b, out = args[0], args[1], args[2]
    axis = attr_int(attrs, "axis", 1, ctx.name)
    if not isinstance(x, TensorType):
        return False
    if _channel_params(ctx, x, [b], axis) is None and not ctx.final:
        return False
    ctx.assign(out, x)
    return True


@relation("layer_norm")
def layer_norm_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out = x``; ``gamma, beta: (x.shape[axis],)``."""
    x, out = args[0], args[3]
    axis = attr_int(attrs, "axis", -1, ctx.name)
    if not isinstance(x, TensorType):
        return False
    if _channel_params(ctx, x, args[1:3], axis) is None and not ctx.final:
        return False
    ctx.assign(out, x)
    return True


@relation("batch_norm")
def batch_norm_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out = (x, (c,), (c,))``; ``gamma, beta, mean, var: (c,)`` with ``c = x.shape[axis]``."""
    x, out = args[0], args[5]
    axis = attr_int(attrs, "axis", 1, ctx.name)
    if not isinstance(x, TensorType):
        return False
    vec = _channel_params(ctx, x, args[1:5], axis)
    if vec is None:
        if not ctx.final:
            return False
        vec = Tensor((ctx.fresh_dim(),), x.dtype)
    ctx.assign(out, TupleType((x, vec, vec)))
    return True
