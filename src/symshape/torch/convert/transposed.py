"""Transposed convolutions: an operator of the importer's own, ``torch.conv_transpose``.

symshape has no transposed-convolution operator (see the gap list). ``torch.conv_transpose(x,
w, nd=, stride=, padding=, dilation=, output_padding=, groups=)`` takes the batched input
``(N, C_in, *i)`` and the weight ``(C_in, C_out / groups, *k)`` (its shape known: a parameter or
a constant) and gives ``(N, C_out, *o)`` with torch's size along each spatial axis

    ``o = (i - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1``

and torch's conditions, found by running torch 2.13 (CPU) at sizes 0 to 3 over strides,
paddings, dilations, output paddings, kernels and groups: the input's channels are the weight's
first axis; every ``o >= 0``; and unless the batch is empty, every input spatial size and every
``o`` is at least 1 (``Only zero batch or zero channel inputs are supported``, ``Output size is
too small``). torch's mkldnn path, which it takes for some float32 batches of 2 or more, runs a
result of size 0 from a non-empty input; symshape states the rule of the other paths, so such a
size is refused (a false error of that path, never an unsound answer).

The bias is a ``bias_add`` on the channel axis (:mod:`symshape.torch.convert.conv`).

>>> transposed_size(4, stride=2, padding=1, dilation=1, k=3, output_padding=1)
8
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import symshape as ss
from symshape.encoding.conds import ge
from symshape.encoding.dims import Dim, as_dim, bounds
from symshape.errors import RANK_MISMATCH, SHAPE_MISMATCH
from symshape.relations.base import Context
from symshape.relations.common import Checks
from symshape.relations.operands import tensor_args
from symshape.torch.convert.empty import nonempty_cond

__all__ = ["CONV_TRANSPOSE", "transposed_size"]


def transposed_size(i: Any, stride: int, padding: int, dilation: int, k: int, output_padding: int) -> Any:
    """torch's size of a transposed convolution's result along one axis of input size ``i``."""
    return (i - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1


def _ints(attrs: Any, name: str) -> list[int]:
    v = attrs.get(name)
    return [int(a) for a in v] if isinstance(v, (list, tuple)) else [int(v)]


def _conv_transpose_rel(ctx: Context, args: Sequence[ss.Type], attrs: Any) -> bool:
    got = tensor_args(ctx, args, 2)
    if got is None:
        return False
    x, w = got
    nd, groups = int(attrs.get("nd")), int(attrs.get("groups"))
    if x.ndim is None or w.ndim is None:
        if not ctx.final:
            return False
        ctx.assign(args[2], ss.Tensor(None, x.dtype))
        return True
    xs, ws = x.dims, w.dims
    if len(ws) != nd + 2:
        ctx.fail(RANK_MISMATCH, f"{ctx.name}: weight `{w}` must have rank {nd + 2} (C_in, C_out/groups, *k)")
    if len(xs) != nd + 2:
        ctx.fail(RANK_MISMATCH, f"{ctx.name}: input `{x}` must have rank {nd + 2} (N, C_in, *spatial)")
    ks = [k.constant_value for k in ws[2:]]
    if any(k is None for k in ks):
        ctx.fail(SHAPE_MISMATCH, f"{ctx.name}: the kernel size of weight `{w}` must be known")
    c_in = ws[0].constant_value
    if c_in is not None and c_in % groups:
        ctx.fail(
            SHAPE_MISMATCH,
            f"{ctx.name}: the weight's input channels {c_in} are not divisible by groups={groups}",
        )
    st, pad, dil, opad = (_ints(attrs, n) for n in ("stride", "padding", "dilation", "output_padding"))
    chk = Checks()
    chk.equal(
        xs[1],
        ws[0],
        SHAPE_MISMATCH,
        f"{ctx.name}: input channels {xs[1]} of `{x}` must match the weight's input channels {ws[0]} (`{w}`)",
    )
    outs: list[Dim] = []
    for j in range(nd):
        o = as_dim(transposed_size(xs[2 + j], st[j], pad[j], dil[j], int(ks[j]), opad[j]))  # type: ignore[arg-type]
        if bounds(o)[0] < 0:
            chk.require(
                ge(o, 0), SHAPE_MISMATCH, f"{ctx.name}: the result's size {o} on axis {2 + j} is negative"
            )
        outs.append(o)
    cond = nonempty_cond([*xs[2:], *outs], [xs[0]])
    if cond is not None:
        chk.require(
            cond,
            SHAPE_MISMATCH,
            f"{ctx.name}: torch refuses an empty input or result ({', '.join(map(str, outs))}) of `{x}` "
            "unless the batch is empty",
        )
    if not chk.commit(ctx):
        return False
    ctx.assign(args[2], ss.Tensor((xs[0], ws[1] * groups, *outs), x.dtype))
    return True


ss.relation("torch.conv_transpose")(_conv_transpose_rel)
#: ``torch.conv_transpose(x, w, nd=, stride=, padding=, dilation=, output_padding=, groups=)``
CONV_TRANSPOSE = ss.register_op(
    "torch.conv_transpose",
    "torch.conv_transpose",
    2,
    doc="torch's transposed convolution of a batched input (N, C_in, *i) by a weight "
    "(C_in, C_out/groups, *k)",
    attr_types={
        "nd": "int",
        "stride": "ints",
        "padding": "ints",
        "dilation": "ints",
        "output_padding": "ints",
        "groups": "int",
    },
)
