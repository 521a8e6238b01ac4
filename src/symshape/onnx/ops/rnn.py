"""Recurrent layers: ``RNN``, ``GRU``, ``LSTM``.

With ``D`` directions (2 for ``bidirectional``), hidden size ``H`` and ``layout`` 0 (the default)
the input ``X`` is ``(S, B, I)``; ``Y`` is ``(S, D, B, H)`` and ``Y_h`` (and ``LSTM``'s ``Y_c``) are
``(D, B, H)``. With ``layout`` 1 (opset 14) ``X`` is ``(B, S, I)``, ``Y`` ``(B, S, D, H)`` and
``Y_h`` ``(B, D, H)``. ``H`` is the ``hidden_size`` attribute, else the recurrence weight's last
dimension. The weights, biases, lengths and initial states must have their shapes for these sizes
(:func:`_weight_checks`).
"""

from __future__ import annotations

import symshape as ss
from symshape import Expr
from symshape.onnx.context import CORE_OP, NodeContext
from symshape.onnx.ops.common import set_dim, stacked
from symshape.onnx.registry import Outputs, register

__all__: list[str] = []


def _hidden(ctx: NodeContext) -> int:
    if ctx.has_attr("hidden_size"):
        return ctx.attr_int("hidden_size")
    r = ctx.tensor_type(2)
    if r is not None and r.ndim == 3 and r.dims[2].is_constant:
        return int(r.dims[2])
    ctx.unsupported(CORE_OP, "the hidden size is not known (no hidden_size, weight R not static)")


#: gates per operator: the weights stack G blocks of H rows
_GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def _weight_checks(ctx: NodeContext, x: Expr, h: int, d: int, layout: int) -> list[Expr]:
    """Expressions that need the weights' shapes (onnxruntime's checks): ``W (D, G*H, I)`` with
    ``X``'s input size ``I``, ``R (D, G*H, H)``, ``B (D, 2*G*H)``, ``sequence_lens (B,)``,
    ``initial_h``/``initial_c`` ``(D, B, H)`` (``(B, D, H)`` for layout 1), ``P (D, 3*H)``."""
    gh = _GATES[ctx.op_type] * h

    def exactly(v: Expr, shape: tuple[int, ...]) -> Expr:
        return stacked(ss.ops.cast_like(ss.Constant(shape=shape, dtype="float32"), x), v)

    w = ctx.input(1)
    out: list[Expr] = []
    with ctx.checking(f"W is (num_directions {d}, {_GATES[ctx.op_type]}*hidden_size {gh}, input_size)"):
        out.append(exactly(ss.ops.sum(w, axis=2), (d, gh)))
    with ctx.checking("W's input_size (axis 2) is X's"):
        out.append(stacked(ss.ops.sum(x, axis=(2,), exclude=True), ss.ops.sum(w, axis=(2,), exclude=True)))
    with ctx.checking(f"R is ({d}, {gh}, hidden_size {h})"):
        out.append(exactly(ctx.input(2), (d, gh, h)))
    if ctx.has_input(3):
        with ctx.checking(f"B is ({d}, {2 * gh})"):
            out.append(exactly(ctx.input(3), (d, 2 * gh)))
    rows = ss.ops.sum(x, axis=(1 - layout,), exclude=True)  # (B,)
    if ctx.has_input(4):
        with ctx.checking("sequence_lens is (batch_size,), X's"):
            out.append(stacked(rows, ctx.input(4)))
    at = 0 if layout == 0 else 1  # the directions' axis of the states
    state: Expr = ss.ops.expand_dims(ss.ops.expand_dims(rows, at), 2)  # (1, B, 1) or (B, 1, 1)
    state = set_dim(set_dim(state, at, d), 2, h)  # (D, B, H) or (B, D, H)
    shape = f"({d}, batch_size, {h})" if layout == 0 else f"(batch_size, {d}, {h})"
    for i in (5, 6) if ctx.op_type == "LSTM" else (5,):
        if ctx.has_input(i):
            with ctx.checking(f"{'initial_h' if i == 5 else 'initial_c'} is {shape}"):
                out.append(stacked(state, ctx.input(i)))
    if ctx.op_type == "LSTM" and ctx.has_input(7):
        with ctx.checking(f"P is ({d}, {3 * h})"):
            out.append(exactly(ctx.input(7), (d, 3 * h)))
    return out


@register(["RNN", "GRU", "LSTM"], since=1)
def _rnn(ctx: NodeContext) -> Outputs:
    h = _hidden(ctx)
    d = 2 if ctx.attr_str("direction", "forward") == "bidirectional" else 1
    layout = ctx.attr_int("layout", 0) if ctx.opset >= 14 else 0
    x = ctx.input(0)
    hs = set_dim(x, 2, h)  # (S, B, H) or (B, S, H)
    for check in _weight_checks(ctx, x, h, d, layout):
        hs = ss.ops.cast_like(hs, check)
    states = ss.Constant(shape=(d,), dtype="int64")
    if layout == 0:
        y: Expr = set_dim(ss.ops.expand_dims(hs, 1), 1, d)  # (S, D, B, H)
        yh: Expr = ss.ops.take(hs, states, axis=0)  # (D, B, H)
    else:
        y = set_dim(ss.ops.expand_dims(hs, 2), 2, d)  # (B, S, D, H)
        yh = ss.ops.take(hs, states, axis=1)  # (B, D, H)
    outs: list[Expr | None] = [y if ctx.has_output(0) else None, yh if ctx.has_output(1) else None]
    if ctx.op_type == "LSTM":
        outs.append(yh if ctx.has_output(2) else None)
    return outs
