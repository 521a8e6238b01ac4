"""Control flow: ``If``.

An ``If`` whose condition is a constant is its taken branch, converted in place. Otherwise both
branches become symshape blocks and the node a symshape ``If``, whose type is the join of the
branches' types (equal dimensions stay, differing ones become fresh symbols).

``Scan`` (opset 9+) converts its body once, on the initial states and the first slice of each scan
input (the scan axis taken away): the final states have the initial states' types (the body's
state outputs must have their shapes), and each scan output is the body's output with the scan
length (the scan inputs' common size along their axes, a shape value) inserted at its output axis
(a negative one counted from the output's end). The directions do not change the types.
Opset 8's ``Scan`` (a batch axis first, the sequence axis second) is converted the same way.
``Loop`` is not converted yet.
"""

from __future__ import annotations

import symshape as ss
from symshape import Expr
from symshape.errors import BAD_ATTRIBUTE
from symshape.onnx.context import NodeContext
from symshape.onnx.ops.common import like, stacked, value_slice
from symshape.onnx.registry import Outputs, register

__all__: list[str] = []


@register("If", since=1)
def _if(ctx: NodeContext) -> Outputs:
    then_g, else_g = ctx.graph_attr("then_branch"), ctx.graph_attr("else_branch")
    c = ctx.const(0)
    if c is not None and c.size == 1:
        return ctx.inline(then_g if bool(c.reshape(-1)[0]) else else_g)
    cond = ss.ops.reshape(ctx.input(0), ())
    r = ss.If(cond, ctx.block(then_g), ctx.block(else_g))
    n = len(then_g.output)
    return [r] if n == 1 else [r[i] for i in range(n)]


@register("Scan", since=9)
def _scan(ctx: NodeContext) -> Outputs:
    body = ctx.graph_attr("body")
    m = ctx.attr_int("num_scan_inputs")
    xs = [ctx.input(i) for i in range(ctx.num_inputs)]
    n = len(xs) - m
    if m < 1 or n < 0:
        ctx.fail(BAD_ATTRIBUTE, f"num_scan_inputs={m} for {len(xs)} inputs")
    in_axes = ctx.attr_ints("scan_input_axes") or (0,) * m
    k = len(body.output) - n
    out_axes = ctx.attr_ints("scan_output_axes") or (0,) * k
    if len(in_axes) != m or len(out_axes) != k or k < 0:
        ctx.fail(BAD_ATTRIBUTE, "scan_input_axes/scan_output_axes do not match the scan inputs/outputs")
    states, scanned = xs[:n], xs[n:]
    first = ss.ops.int_tensor(0)
    slices = [ss.ops.take(x, first, axis=a, mode="fast") for x, a in zip(scanned, in_axes)]
    outs = ctx.apply(body, [*states, *slices])
    steps: Expr | None = None  # (L,): every scan input has the same length (onnxruntime's check)
    for x, a in zip(scanned, in_axes):
        length = value_slice(ss.ops.shape_of(x), [a], [a + 1 if a != -1 else None])
        here = ss.ops.zeros(length, "int64")
        steps = here if steps is None else ss.ops.take(stacked(steps, here), first, axis=0)
    assert steps is not None
    # a final state has its initial state's type (onnxruntime refuses a body that changes it)
    result: list[Expr] = [ss.ops.cast_like(like(o, s), stacked(s, o)) for o, s in zip(outs[:n], states)]
    for y, ax in zip(outs[n:], out_axes):  # a negative axis counts in the output (rank + 1)
        result.append(ss.ops.take(ss.ops.expand_dims(y, ax), steps, axis=ax))
    return result


@register("Scan", since=8)
def _scan_v8(ctx: NodeContext) -> Outputs:
    """Opset 8's ``Scan``: every state and scan input has a batch axis first, the scan inputs their
    sequence axis second; the body sees one batch entry and one step. The final states have the
    initial states' types, each scan output is ``(B, L, *body output)``; the optional sequence
    lengths (input 0) are ``(B,)``."""
    body = ctx.graph_attr("body")
    m = ctx.attr_int("num_scan_inputs")
    xs = [ctx.input(i) for i in range(1, ctx.num_inputs)]
    n = len(xs) - m
    if m < 1 or n < 0 or len(body.output) < n:
        ctx.fail(BAD_ATTRIBUTE, f"num_scan_inputs={m} for {len(xs)} inputs")
    states, scanned = xs[:n], xs[n:]
    zero = ss.ops.int_tensor(0)
    one_entry = [ss.ops.take(s, zero, axis=0) for s in states]
    steps_in = [ss.ops.take(ss.ops.take(x, zero, axis=0), zero, axis=0) for x in scanned]
    outs = ctx.apply(body, [*one_entry, *steps_in])
    bl: Expr | None = None  # (B, L): every scan input's batch and length agree
    for x in scanned:
        here = ss.ops.cast(ss.ops.sum(x, axis=(0, 1), exclude=True), "int64")
        bl = here if bl is None else ss.ops.cast_like(bl, stacked(bl, here))
    assert bl is not None
    batch = ss.ops.take(bl, zero, axis=1)  # (B,)
    steps = ss.ops.take(bl, zero, axis=0)  # (L,)
    checks = [stacked(ss.ops.sum(s, axis=0, exclude=True), batch) for s in states]
    if ctx.has_input(0):
        checks.append(stacked(batch, ctx.input(0)))
    result: list[Expr] = [ss.ops.cast_like(s, stacked(e, o)) for s, e, o in zip(states, one_entry, outs[:n])]
    for y in outs[n:]:
        y = ss.ops.take(ss.ops.expand_dims(y, 0, num_newaxis=2), steps, axis=1)
        result.append(ss.ops.take(y, batch, axis=0))
    for check in checks:
        result = [ss.ops.cast_like(r, ss.ops.cast_like(check, r)) for r in result]
    return result
