"""Reductions: ``ReduceSum``, ``ReduceMean``, ``ReduceMax``, ``ReduceMin``, ``ReduceProd``,
``ReduceL1``, ``ReduceL2``, ``ReduceLogSum``, ``ReduceLogSumExp``, ``ReduceSumSquare``, and
``ArgMax``/``ArgMin``.

The axes are an attribute up to ``ReduceSum``-11 and the other reductions' opset 17, an input from
``ReduceSum``-13 and opset 18 (a constant). ``keepdims`` defaults to 1. No axes reduce every axis,
unless ``noop_with_empty_axes`` (input form) makes the node the identity. Empty reductions are
defined in ONNX (``ReduceMax`` of nothing is ``-inf``), so no reduced extent has to be non-empty:
every reduction types as symshape's ``sum``. ``ArgMax``/``ArgMin`` reduce one ``axis`` (default 0)
to ``int64``.
"""

from __future__ import annotations

import symshape as ss
from symshape.errors import BAD_ATTRIBUTE
from symshape.onnx.context import NodeContext
from symshape.onnx.registry import Outputs, register

__all__ = ["REDUCTIONS"]

REDUCTIONS = (
    "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
    "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare",
)  # fmt: skip


def _reduce(ctx: NodeContext, axes: tuple[int, ...] | None, input_form: bool) -> Outputs:
    x = ctx.input(0)
    keepdims = bool(ctx.attr_int("keepdims", 1))
    if not axes:
        if input_form and ctx.attr_int("noop_with_empty_axes", 0):
            return ss.ops.copy(x)
        return ss.ops.sum(x, axis=None, keepdims=keepdims)
    r = ctx.rank(0)
    seen: dict[int, int] = {}  # (onnxruntime reduces a repeated axis once; the reference refuses it)
    for a in axes:
        k = a % r if r is not None and -r <= a < r else a
        if (b := seen.get(k)) is not None:
            how = "" if a == b else f" ({b} and {a} of rank {r})"
            ctx.fail(BAD_ATTRIBUTE, f"axes {tuple(axes)} name the input's axis {k} twice{how}")
        seen[k] = a
    return ss.ops.sum(x, axis=tuple(axes), keepdims=keepdims)


@register(REDUCTIONS, since=1)
def _reduce_attr(ctx: NodeContext) -> Outputs:
    return _reduce(ctx, ctx.attr_ints("axes"), False)


def _reduce_input(ctx: NodeContext) -> Outputs:
    return _reduce(ctx, ctx.opt_ints(1, "the axes"), True)


register("ReduceSum", since=13, value_inputs=(1,))(_reduce_input)
register([r for r in REDUCTIONS if r != "ReduceSum"], since=18, value_inputs=(1,))(_reduce_input)


@register(["ArgMax", "ArgMin"], since=1)
def _arg(ctx: NodeContext) -> Outputs:
    fn = ss.ops.argmax if ctx.op_type == "ArgMax" else ss.ops.argmin
    y = fn(ctx.input(0), axis=ctx.attr_int("axis", 0), keepdims=bool(ctx.attr_int("keepdims", 1)))
    return ss.ops.cast(y, "int64")
