"""Recurrent layers: ``RNN``, ``GRU``, ``LSTM``.

With ``D`` directions (2 for ``bidirectional``), hidden size ``H`` and ``layout`` 0 (the default)
the input ``X`` is ``(S, B, I)``; ``Y`` is ``(S, D, B, H)`` and ``Y_h`` (and ``LSTM``'s ``Y_c``) are
``(D, B, H)``. With ``layout`` 1 (opset 14) ``X`` is ``(B, S, I)``, ``Y`` ``(B, S, D, H)`` and
``Y_h`` ``(B, D, H)``. ``H`` is the ``hidden_size`` attribute, else the recurrence weight's last
dimension.
"""

from __future__ import annotations

import symshape as ss
from symshape import Expr
from symshape.onnx.context import CORE_OP, NodeContext
from symshape.onnx.ops.common import set_dim
from symshape.onnx.registry import Outputs, register

__all__: list[str] = []


def _hidden(ctx: NodeContext) -> int:
    if ctx.has_attr("hidden_size"):
        return ctx.attr_int("hidden_size")
    r = ctx.tensor_type(2)
    if r is not None and r.ndim == 3 and r.dims[2].is_constant:
        return int(r.dims[2])
    ctx.unsupported(CORE_OP, "the hidden size is not known (no hidden_size, weight R not static)")


@register(["RNN", "GRU", "LSTM"], since=1)
def _rnn(ctx: NodeContext) -> Outputs:
    h = _hidden(ctx)
    d = 2 if ctx.attr_str("direction", "forward") == "bidirectional" else 1
    layout = ctx.attr_int("layout", 0) if ctx.opset >= 14 else 0
    x = ctx.input(0)
    hs = set_dim(x, 2, h)  # (S, B, H) or (B, S, H)
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
