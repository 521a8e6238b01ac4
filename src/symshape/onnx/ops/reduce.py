"""Reductions: ``ReduceSum``, ``ReduceMean``, ``ReduceMax``, ``ReduceMin``, ``ReduceProd``,
``ReduceL1``, ``ReduceL2``, ``ReduceLogSum``, ``ReduceLogSumExp``, ``ReduceSumSquare``, and
``ArgMax``/``ArgMin``.

The axes are an attribute up to ``ReduceSum``-11 and the other reductions' opset 17, an input from
``ReduceSum``-13 and opset 18 (a constant). ``keepdims`` defaults to 1. No axes reduce every axis,
unless ``noop_with_empty_axes`` (input form) makes the node the identity. Empty reductions are
defined in ONNX (``ReduceMax`` of nothing is ``-inf``), so no reduced extent has to be non-empty:
every reduction types as symshape's ``sum``. ``ArgMax``/``ArgMin`` reduce one ``axis`` (default 0)
to ``int64``. An axis named twice (``(1, -2)`` of rank 3) is reduced once, as onnxruntime and
onnx's inference do (onnx's reference evaluator refuses it).

``ReduceProd``/``ReduceSum``/``ReduceMax``/``ReduceMin`` of a 1-d int tensor that carries a value
(a shape, sizes computed from it) is the entrywise product/sum/max/min of its entries: the
reduction is built from ``take`` and the binary operators, which carry values, so a ``Reshape``
target made with it (TorchScript's flatten: ``Shape -> Slice -> ReduceProd -> Concat``) is known.

Axes computed at run time (an input without a value): an empty one (static shape ``(0,)``) is no
axes; otherwise each output size is computed on shape values (``d_i``, or 1 where ``i`` is reduced
with ``keepdims``; one axis dropped without it), sizes the run decides when the axes' values are
not known. Several run-time axes without ``keepdims`` leave the rank to the run: unsupported.
"""

from __future__ import annotations

import numpy as np

import symshape as ss
from symshape.encoding.types import TensorType
from symshape.onnx.context import SHAPE_VALUES, NodeContext
from symshape.onnx.ops.common import checked
from symshape.onnx.registry import Outputs, register

__all__ = ["REDUCTIONS"]

REDUCTIONS = (
    "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
    "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare",
)  # fmt: skip

#: the reductions whose result on a valued 1-d int tensor is a binary operator over its entries
_VALUE_REDUCTIONS = {
    "ReduceProd": "multiply", "ReduceSum": "add", "ReduceMax": "maximum", "ReduceMin": "minimum",
}  # fmt: skip


def _value_reduction(ctx: NodeContext, axes: tuple[int, ...] | None, keepdims: bool) -> ss.Expr | None:
    """The reduction of a non-empty 1-d int tensor with a value (over its one axis) as the binary
    operator over its entries (``take``), whose value is the entries' product/sum/max/min; None
    when the node is not one."""
    op = _VALUE_REDUCTIONS.get(ctx.op_type)
    if op is None or ctx.dtype_of(0) not in ("int32", "int64"):
        return None
    t = ctx.type_of(0)
    if not isinstance(t, TensorType) or t.value is None:
        return None
    shape = ctx.static_shape(0)
    if shape is None or len(shape) != 1 or shape[0] < 1 or (axes and set(axes) - {0, -1}):
        return None
    x, fn = ctx.input(0), getattr(ss.ops, op)
    y = ss.ops.take(x, ctx.constant(0, "int64"))  # (not common.chain: its copy has no value)
    for i in range(1, shape[0]):
        y = fn(y, ss.ops.take(x, ctx.constant(i, "int64")))
    return ss.ops.expand_dims(y, 0) if keepdims else y


def _reduce(ctx: NodeContext, axes: tuple[int, ...] | None, input_form: bool) -> Outputs:
    x = ctx.input(0)
    keepdims = bool(ctx.attr_int("keepdims", 1))
    if not axes and input_form and ctx.attr_int("noop_with_empty_axes", 0):
        return ss.ops.copy(x)
    valued = _value_reduction(ctx, axes, keepdims)
    if valued is not None:
        return valued
    if not axes:
        return ss.ops.sum(x, axis=None, keepdims=keepdims)
    r = ctx.rank(0)
    if r is not None:  # a repeated axis is reduced once (onnxruntime, onnx's inference; the
        # reference evaluator refuses it); an axis out of range is left to sum's check
        once: dict[int, int] = {}
        for a in axes:
            once.setdefault(a % r if -r <= a < r else a, a)
        axes = tuple(once.values())
    else:
        axes = tuple(dict.fromkeys(axes))
    return ss.ops.sum(x, axis=tuple(axes), keepdims=keepdims)


@register(REDUCTIONS, since=1)
def _reduce_attr(ctx: NodeContext) -> Outputs:
    return _reduce(ctx, ctx.attr_ints("axes"), False)


def _reduce_input(ctx: NodeContext) -> Outputs:
    if ctx.has_input(1) and ctx.const(1) is None and ctx.value_of(1) is None:
        return _reduce_runtime(ctx)
    return _reduce(ctx, ctx.opt_ints(1, "the axes"), True)


def _reduce_runtime(ctx: NodeContext) -> Outputs:
    """A reduction over axes computed at run time (see the module docstring)."""
    n = ctx.static_shape(1)
    if n is None or len(n) != 1:
        ctx.unsupported(SHAPE_VALUES, "reduction axes computed at run time, of unknown length")
    if n[0] == 0:
        return _reduce(ctx, (), True)
    x, keepdims = ctx.input(0), bool(ctx.attr_int("keepdims", 1))
    r = ctx.need_rank(0, "a reduction over axes computed at run time")
    if not keepdims and n[0] != 1:
        ctx.unsupported(SHAPE_VALUES, "several reduction axes computed at run time without keepdims")
    i64 = "int64"

    def k(v: int) -> ss.Expr:
        return ctx.constant(v, i64)

    sizes = ss.ops.shape_of(x)
    axes = ss.ops.cast(ctx.input(1), i64)
    inside = ss.ops.take(sizes, axes, mode="fast")  # (each axis within the rank)
    ds = [ss.ops.take(sizes, k(i)) for i in range(r)]
    at = [ss.ops.mod(ss.ops.take(axes, k(j), mode="fast"), k(r)) if r else k(0) for j in range(n[0])]
    out: list[ss.Expr] = []
    if keepdims:  # d_i - (d_i - 1) * [some axis is i]
        for i, d in enumerate(ds):
            hits = [ss.ops.subtract(k(1), ss.ops.minimum(k(1), ss.ops.abs(ss.ops.subtract(a, k(i)))))
                    for a in at]
            hit = hits[0]
            for h in hits[1:]:
                hit = ss.ops.maximum(hit, h)
            out.append(ss.ops.subtract(d, ss.ops.multiply(ss.ops.subtract(d, k(1)), hit)))
    else:  # d_i + (d_{i+1} - d_i) * [i >= axis]
        for i in range(r - 1):
            after = ss.ops.minimum(k(1), ss.ops.maximum(k(0), ss.ops.subtract(k(i + 1), at[0])))
            out.append(ss.ops.add(ds[i], ss.ops.multiply(ss.ops.subtract(ds[i + 1], ds[i]), after)))
    if not out:
        target: ss.Expr = ctx.constant(np.zeros(0, np.int64))
    else:
        target = ss.ops.concatenate([ss.ops.expand_dims(e, 0) for e in out], axis=0)
    y = ss.ops.cast_like(ss.ops.zeros(target, "float32"), x)
    return checked(y, [inside])


register("ReduceSum", since=13, value_inputs=(1,))(_reduce_input)
register([r for r in REDUCTIONS if r != "ReduceSum"], since=18, value_inputs=(1,))(_reduce_input)


@register(["ArgMax", "ArgMin"], since=1)
def _arg(ctx: NodeContext) -> Outputs:
    fn = ss.ops.argmax if ctx.op_type == "ArgMax" else ss.ops.argmin
    y = fn(ctx.input(0), axis=ctx.attr_int("axis", 0), keepdims=bool(ctx.attr_int("keepdims", 1)))
    return ss.ops.cast(y, "int64")
