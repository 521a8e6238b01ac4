"""Normalization: ``BatchNormalization``, ``InstanceNormalization``, ``LayerNormalization``,
``GroupNormalization``, ``RMSNormalization``, and ``Softmax``/``LogSoftmax``/``Hardmax``.

* ``BatchNormalization``: the output has ``X``'s type; ``scale``, ``B``, ``mean`` and ``var`` are
  ``(C,)`` with ``C = X.shape[1]`` (symshape's ``batch_norm``); the optional outputs (running or
  saved mean and variance) are ``(C,)``. With ``spatial=0`` (opsets 7-8: per-activation
  statistics) the four are broadcast to ``X`` (``X.shape[1:]``), and ``Y`` alone is supported;
  before opset 7, or with more outputs, it is not.
* ``InstanceNormalization``: ``X``'s type, ``scale`` and ``B`` are ``(C,)``.
* ``LayerNormalization`` (opset 17; before, onnxruntime's contrib operator of the same semantics):
  ``Y`` has ``X``'s type (``Scale`` and ``B`` broadcast to it one
  way); ``Mean`` and ``InvStdDev`` keep the axes before ``axis`` and have size 1 from ``axis`` on,
  of type ``stash_type`` (float32).
* ``SimplifiedLayerNormalization`` (onnxruntime's RMS norm, default domain): ``Y`` as
  ``LayerNormalization``'s, ``inv_std_var`` as its ``InvStdDev``.
* ``GroupNormalization``: ``X``'s type, ``num_groups`` dividing ``C``; from opset 21 ``scale`` and
  ``bias`` are ``(C,)``.
* ``Softmax`` and friends keep ``X``'s type; before opset 13 the input is coerced to 2-d at
  ``axis`` (default 1), which changes the values, not the shape: the axis must be in range.
"""

from __future__ import annotations

import symshape as ss
from symshape import Expr
from symshape.errors import BAD_ATTRIBUTE
from symshape.onnx.context import LEGACY, NodeContext
from symshape.onnx.ops.common import checked, item_of, like, like_product, prepared
from symshape.onnx.registry import Outputs, register
from symshape.relations.common import FLOAT_DTYPES

__all__: list[str] = []


@register("BatchNormalization", since=1)
def _batch_norm(ctx: NodeContext) -> Outputs:
    if ctx.opset < 9 and ctx.attr("spatial", 1) == 0:  # (the attribute is gone from opset 9)
        if ctx.opset < 7 or ctx.num_outputs > 1:
            ctx.unsupported(LEGACY, "BatchNormalization with spatial=0 (per-activation statistics)")
        # opsets 7-8: per-activation statistics, each of shape X.shape[1:], broadcast to X
        x = ctx.input(0)
        y: Expr = x
        for i in range(1, 5):
            y = ss.ops.add(y, ctx.input(i))
        return [like(y, x)]
    xs = ctx.inputs()
    p = prepared(("batch_norm",), ss.ops.batch_norm, 5, axis=1)  # (made once: see common.prepared)
    if len(xs) == 5 == ctx.num_inputs and p is not None:
        bn: Expr = p.build(*xs)
    else:
        bn = ss.ops.batch_norm(ctx.input(0), ctx.input(1), ctx.input(2), ctx.input(3), ctx.input(4), axis=1)
    # (TupleGetItem: what bn[0] is for the tuple batch_norm returns, without the indexing front-end)
    outs: list[Expr | None] = [item_of(bn, 0)]
    for i in range(1, ctx.num_outputs):
        outs.append(item_of(bn, 1) if ctx.has_output(i) else None)
    return outs


@register("InstanceNormalization", since=1)
def _instance_norm(ctx: NodeContext) -> Outputs:
    y = ss.ops.bias_add(ctx.input(0), ctx.input(1), axis=1)
    return ss.ops.bias_add(y, ctx.input(2), axis=1)


def _stat_axes(axis: int) -> tuple[tuple[int, ...], bool]:
    """The reduction of a layer norm's statistics: ``(axes, exclude)`` over the axes from
    ``axis`` on, without knowing the rank."""
    if axis >= 0:
        return tuple(range(axis)), True
    return tuple(range(axis, 0)), False


def _fused_axes(ctx: NodeContext, axis: int) -> tuple[int, ...] | None:
    """The axes of symshape's ``layer_norm`` when it types ``LayerNormalization`` as its
    ``like(add(multiply(X, Scale), B), X)`` does, or None (the three calls). Read without inferring
    the program so far (declared types only: ``X``'s is not asked for): ``Scale`` and ``B`` of one
    float dtype and one shape of constants, each greater than 1, of rank ``-axis`` (a negative
    ``axis``). Then the broadcasts keep ``X``'s shape exactly when ``X.shape[axis:]`` is that shape,
    which is what ``layer_norm`` over ``axis..-1`` checks, and ``X`` must have that dtype in both."""
    if axis >= 0 or not ctx.has_input(2):
        return None
    shape = ctx.static_shape(1, infer=False)
    if shape is None or len(shape) != -axis or min(shape) < 2 or ctx.static_shape(2, infer=False) != shape:
        return None
    dtype = ctx.dtype_of(1)  # (of a declared type: no inference)
    if dtype not in FLOAT_DTYPES or ctx.dtype_of(2) != dtype:
        return None
    return tuple(range(axis, 0))


# since 1: before opset 17 LayerNormalization is an onnxruntime contrib operator of the default
# domain, with the semantics opset 17 adopted
@register("LayerNormalization", since=1)
def _layer_norm(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    axis = ctx.attr_int("axis", -1)
    axes = _fused_axes(ctx, axis)
    y: Expr
    # one call where it is what the three give (prepared once per axes: see common.prepared)
    p = None if axes is None else prepared(("layer_norm", axes), ss.ops.layer_norm, 3, axis=axes)
    with ctx.checking("Scale and B broadcast to X's shape, one way"):
        if p is not None:
            y = p.build(x, ctx.input(1), ctx.input(2))
        elif axes is not None:
            y = ss.ops.layer_norm(x, ctx.input(1), ctx.input(2), axis=axes)
        else:
            y = ss.ops.multiply(x, ctx.input(1))
            if ctx.has_input(2):
                y = ss.ops.add(y, ctx.input(2))
            y = like(y, x)
    if axes is None:  # X.shape[axis:] is not empty (onnxruntime; the fused Scale has no 0 size)
        stat_axes, exclude = _stat_axes(axis)
        y = checked(y, [ss.ops.max(x, axis=stat_axes, exclude=exclude)])
    outs: list[Expr | None] = [y]
    if ctx.has_output(1) or ctx.has_output(2):
        axes, exclude = _stat_axes(axis)
        stash = ctx.attr_dtype("stash_type", 1)
        stat = ss.ops.cast(ss.ops.mean(x, axis=axes, keepdims=True, exclude=exclude), stash)
        outs += [stat if ctx.has_output(1) else None, stat if ctx.has_output(2) else None]
    return outs


@register("SimplifiedLayerNormalization", since=1)
def _simplified_layer_norm(ctx: NodeContext) -> Outputs:
    # onnxruntime's RMS norm (a contrib operator of the default domain): Y and inv_std_var
    x = ctx.input(0)
    y = like_product(ctx)
    if not ctx.has_output(1):
        return y
    axes, exclude = _stat_axes(ctx.attr_int("axis", -1))
    stash = ctx.attr_dtype("stash_type", 1)
    return [y, ss.ops.cast(ss.ops.mean(x, axis=axes, keepdims=True, exclude=exclude), stash)]


register("RMSNormalization", since=23)(like_product)


@register("GroupNormalization", since=18)
def _group_norm(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    g = ctx.attr_int("num_groups")
    if g < 1:
        ctx.fail(BAD_ATTRIBUTE, f"num_groups must be >= 1, got {g}")
    # the channels in num_groups groups (the function's reshape to (N, G, C/G, ...)): G divides C
    groups = ss.ops.reshape(x, (0, -4, g, -1, -2))
    if ctx.opset >= 21:
        x = ss.ops.bias_add(ss.ops.bias_add(x, ctx.input(1), axis=1), ctx.input(2), axis=1)
    return ss.ops.cast_like(x, groups)


@register(["Softmax", "LogSoftmax", "Hardmax"], since=1)
def _softmax_v1(ctx: NodeContext) -> Outputs:
    # coerced to 2-d at axis: the shape is the input's, the axis must be in range
    return ss.ops.softmax(ctx.input(0), axis=ctx.attr_int("axis", 1))


@register(["Softmax", "LogSoftmax", "Hardmax"], since=13)
def _softmax_v13(ctx: NodeContext) -> Outputs:
    fn = ss.ops.log_softmax if ctx.op_type == "LogSoftmax" else ss.ops.softmax
    return fn(ctx.input(0), axis=ctx.attr_int("axis", -1))
