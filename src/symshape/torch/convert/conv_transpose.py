"""Transposed convolutions: ``nn.ConvTranspose{1,2,3}d``, ``F.conv_transpose{1,2,3}d``,
``aten.conv_transpose*`` and ``aten.convolution`` (transposed or not, of exported programs).

symshape has no transposed-convolution operator (see the gap list), so each one is composed of
existing operators, the way the operation is usually explained: along every spatial axis the
input is *dilated* by the stride (``expand_dims`` of a new axis after it, ``pad`` that axis to
``stride``, ``reshape`` merging the two: ``i`` becomes ``i * stride``), padded (or cropped) so
that the total is what torch computes, then convolved with stride 1 and the kernel's dilation,
the weight ``(C_in, C_out / groups, *k)`` rearranged to ``(C_out, C_in / groups, *k)``.
Along each axis the result has torch's size

    ``(i - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1``

and the convolution checks the channels against the weight (``self.up1.weight`` in the notes).

>>> _total_pad(stride=2, padding=0, dilation=1, k=2, output_padding=0)
1
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F

import symshape as ss
from symshape.torch.context import Ctx
from symshape.torch.convert.nn import conv
from symshape.torch.registry import converts
from symshape.torch.values import Unsupported, static_shape

__all__ = ["conv_transpose", "convolution"]

aten = torch.ops.aten


def _nd(ctx: Ctx, v: Any, nd: int, what: str) -> tuple[int, ...]:
    vals = ctx.ints(v, what)
    if len(vals) == 1:
        return vals * nd
    if len(vals) != nd:
        raise Unsupported(f"{what}: {len(vals)} values for a {nd}-d transposed convolution")
    return vals


def _total_pad(stride: int, padding: int, dilation: int, k: int, output_padding: int) -> int:
    """The padding to add (negative: to crop) to an axis dilated to ``i * stride`` so that a
    stride-1 convolution gives torch's size: ``L + P - dilation * (k - 1) == (i - 1) * stride -
    2 * padding + dilation * (k - 1) + output_padding + 1`` with ``L = i * stride``."""
    return 2 * dilation * (k - 1) - 2 * padding + output_padding + 1 - stride


def _kernel(ctx: Ctx, w: ss.Expr, nd: int) -> tuple[int, ...]:
    shape = static_shape(w)
    if shape is None or len(shape) != nd + 2 or not all(d.is_constant for d in shape[2:]):
        raise Unsupported("a transposed convolution needs the kernel size, known for a parameter weight")
    return tuple(int(d.constant_value) for d in shape[2:])  # type: ignore[arg-type]


def _weight(w: ss.Expr, nd: int, groups: int) -> ss.Expr:
    """``(C_in, C_out/g, *k)`` as a convolution weight ``(C_out, C_in/g, *k)``."""
    spatial = tuple(range(2, nd + 2))
    if groups == 1:
        return ss.ops.transpose(w, (1, 0, *spatial))
    split = ss.ops.reshape(w, (-4, groups, -1, -2))  # (g, C_in/g, C_out/g, *k)
    swapped = ss.ops.transpose(split, (0, 2, 1, *(a + 1 for a in spatial)))
    return ss.ops.reshape(swapped, (-3, -2))


def conv_transpose(
    ctx: Ctx,
    nd: int,
    x: ss.Expr,
    w: ss.Expr,
    b: ss.Expr | None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: Any = 1,
    dilation: Any = 1,
) -> ss.Expr:
    """An ``nd``-d transposed convolution with torch's arguments (see the module docstring)."""
    if isinstance(padding, str):
        raise Unsupported(f"padding={padding!r} is not supported by transposed convolutions")
    st = _nd(ctx, stride, nd, "stride")
    pad = _nd(ctx, padding, nd, "padding")
    opad = _nd(ctx, output_padding, nd, "output_padding")
    dil = _nd(ctx, dilation, nd, "dilation")
    g = ctx.integer(groups, "groups")
    ks = _kernel(ctx, w, nd)
    for s, d, o in zip(st, dil, opad):
        if s < 1 or d < 1:
            raise Unsupported("strides and dilations must be positive")
        if o >= max(s, d) or o < 0:
            raise Unsupported(f"output_padding {o} must be smaller than the stride or the dilation")
    rank = nd + 2
    out = x
    for j in range(nd):
        axis = 2 + j
        if st[j] > 1:
            out = ss.ops.expand_dims(out, axis=axis + 1)
            widths = [(0, 0)] * (rank + 1)
            widths[axis + 1] = (0, st[j] - 1)
            out = ss.ops.pad(out, tuple(widths))
            out = ss.ops.reshape(out, (0,) * axis + (-3, -2))
        total = _total_pad(st[j], pad[j], dil[j], ks[j], opad[j])
        if total > 0:
            widths = [(0, 0)] * rank
            widths[axis] = (total // 2, total - total // 2)
            out = ss.ops.pad(out, tuple(widths))
        elif total < 0:
            out = ss.ops.strided_slice(out, [0], [total], axes=[axis])
    return conv(ctx, nd, out, _weight(w, nd, g), b, 1, 0, dil, g)


def _module(nd: int) -> Any:
    def convert(ctx: Ctx, input: Any, output_size: Any = None) -> Any:
        if output_size is not None:
            raise Unsupported("a transposed convolution with output_size is not supported")
        m = ctx.module
        return conv_transpose(
            ctx,
            nd,
            ctx.tensor(input),
            ctx.need_param("weight"),
            ctx.param("bias"),
            m.stride,
            m.padding,
            m.output_padding,
            m.groups,
            m.dilation,
        )

    return convert


def _function(nd: int) -> Any:
    def convert(
        ctx: Ctx,
        input: Any,
        weight: Any,
        bias: Any = None,
        stride: Any = 1,
        padding: Any = 0,
        output_padding: Any = 0,
        groups: Any = 1,
        dilation: Any = 1,
    ) -> Any:
        b = ctx.tensor(bias, "bias") if bias is not None else None
        return conv_transpose(
            ctx,
            nd,
            ctx.tensor(input),
            ctx.tensor(weight, "weight"),
            b,
            stride,
            padding,
            output_padding,
            groups,
            dilation,
        )

    return convert


_MODULES = {1: nn.ConvTranspose1d, 2: nn.ConvTranspose2d, 3: nn.ConvTranspose3d}
_FUNCTIONS = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}
for _nd_ in (1, 2, 3):
    converts(_MODULES[_nd_])(_module(_nd_))
    converts(_FUNCTIONS[_nd_], getattr(aten, f"conv_transpose{_nd_}d"))(_function(_nd_))


@converts(aten.convolution)
def convolution(
    ctx: Ctx,
    input: Any,
    weight: Any,
    bias: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    transposed: Any,
    output_padding: Any,
    groups: Any,
) -> Any:
    """``aten.convolution`` of exported programs: the number of strides gives the
    dimensionality; ``transposed=True`` is a transposed convolution."""
    nd = len(ctx.ints(stride, "stride"))
    x, w = ctx.tensor(input), ctx.tensor(weight, "weight")
    b = ctx.tensor(bias, "bias") if bias is not None else None
    if transposed:
        return conv_transpose(ctx, nd, x, w, b, stride, padding, output_padding, groups, dilation)
    return conv(ctx, nd, x, w, b, stride, padding, dilation, groups)
