"""Control flow: ``If``.

An ``If`` whose condition is a constant is its taken branch, converted in place. Otherwise both
branches become symshape blocks and the node a symshape ``If``, whose type is the join of the
branches' types (equal dimensions stay, differing ones become fresh symbols). ``Loop`` and ``Scan``
(bodies with loop-carried state) are not converted yet.
"""

from __future__ import annotations

import symshape as ss
from symshape.onnx.context import NodeContext
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
