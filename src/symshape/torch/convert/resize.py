"""Resizing: ``F.interpolate`` (``F.upsample``), ``nn.Upsample`` (``UpsamplingNearest2d``,
``UpsamplingBilinear2d``) and the ``aten.upsample_*`` overloads of exported programs;
``pixel_shuffle``/``pixel_unshuffle`` (and their modules).

symshape has no resize operator (see the gap list); the result's shape is computed as a shape
value, which needs no rank at import time: ``x.shape[:2]`` followed by the spatial sizes, each
``size`` (given) or ``floor(d * scale_factor)`` (torch's rule; a scale ``p/q`` is
``(d * p) // q``), entrywise on ``x.shape[2:]``. The result is a tensor of that shape with ``x``'s
dtype. The mode (``nearest``, ``bilinear``, ...) does not change the shape.

``pixel_shuffle(x, r)`` is ``x`` reshaped to ``x.shape[:-3] + (C // r**2, H * r, W * r)`` read from
its shape value: the reshape keeps the element count, so it requires ``C % r**2 == 0``, as torch
does; ``pixel_unshuffle`` to ``(C * r**2, H // r, W // r)``, requiring ``r`` to divide ``H`` and
``W``.

>>> _ratio(1.5), _ratio(2.0), _ratio(0.5)
((3, 2), (2, 1), (1, 2))
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F

import symshape as ss
from symshape.torch.context import Ctx
from symshape.torch.convert.shape import valued_shape
from symshape.torch.registry import converts
from symshape.torch.shape_values import scalar_value
from symshape.torch.values import Unsupported

__all__ = ["resize", "pixel_shuffle"]

aten = torch.ops.aten


def _ratio(scale: float) -> tuple[int, int]:
    """A scale factor as ``p/q``, exactly the float's value (1.5 is 3/2, 0.25 is 1/4). torch's size
    is ``floor(d * scale)`` computed in floating point, which is ``(d * p) // q`` only while
    ``d * p`` is exact in a double: a scale with a short binary expansion. Others (0.7 is not
    7/10 in binary; at ``d = 10`` torch gives 7 where ``d * 7 // 10`` and the exact binary value
    disagree at other sizes) have no exact symbolic size: unsupported, with the advice to give
    ``size=``."""
    f = Fraction(scale)
    if f.numerator >= 2**20 or f.denominator >= 2**20:
        raise Unsupported(
            f"scale_factor {scale!r}: torch computes the size floor(d * {scale!r}) in floating point, "
            "which no symbolic size states exactly for this scale (exact ones: 2, 0.5, 1.5, 0.25, ...); "
            "give the size (size=...) instead"
        )
    return f.numerator, f.denominator


def _seq(v: Any) -> list[Any]:
    return list(v) if isinstance(v, (list, tuple)) else [v]


def resize(
    ctx: Ctx, input: Any, size: Any = None, scale_factor: Any = None, mode: Any = "nearest"
) -> ss.Expr:
    """``input`` resized to ``size`` or by ``scale_factor`` (see the module docstring). Every mode
    but ``area`` (an adaptive pooling) needs the input's channels and spatial sizes and the
    output's spatial sizes >= 1."""
    x = ctx.tensor(input)
    if (size is None) == (scale_factor is None):
        raise Unsupported("exactly one of size and scale_factor must be given")
    sh = ctx.let(ss.ops.shape_of(x), "shape")
    lead = ss.ops.strided_slice(sh, [0], [2])
    if size is not None:
        one = scalar_value(size) if not isinstance(size, (list, tuple)) else None
        if one is not None:
            # one size for every spatial axis: x.shape[2:] * 0 + size
            zero = ss.ops.multiply(ss.ops.strided_slice(sh, [2], [None]), ss.ops.int_tensor(0))
            spatial: ss.Expr = ss.ops.add(zero, one)
        else:
            # sizes, literal or run-time (``size=skip.shape[2:]``)
            valued = valued_shape(ctx, size, "size")
            spatial = valued if valued is not None else ss.ops.int_tensor(ctx.sizes(size, "size"))
    else:
        scales = [ctx.static(s, "scale_factor") for s in _seq(scale_factor)]
        if not all(isinstance(s, (int, float)) and not isinstance(s, bool) and s > 0 for s in scales):
            raise Unsupported(f"scale_factor must be positive numbers, got {scale_factor!r}")
        ratios = [_ratio(float(s)) for s in scales]
        rest = ss.ops.strided_slice(sh, [2], [None])
        p = _entries([r[0] for r in ratios], isinstance(scale_factor, (list, tuple)))
        q = _entries([r[1] for r in ratios], isinstance(scale_factor, (list, tuple)))
        spatial = ss.ops.floor_divide(ss.ops.multiply(rest, p), q)
    spatial = ctx.let(spatial, "sizes")
    if mode != "area":  # torch: "Input and output sizes should be greater than 0", and a
        # "Non-empty data tensor" (every axis but the batch: the channels too)
        one = ss.ops.int_tensor(1)
        rest_in = ss.ops.strided_slice(sh, [1], [None])
        sizes = ss.ops.concatenate([rest_in, spatial], axis=0)
        ctx.let(ss.ops.zeros(ss.ops.subtract(sizes, one)), "check_sizes")
    shape = ss.ops.concatenate([lead, spatial], axis=0)
    return ss.ops.cast_like(ss.ops.zeros(shape, "float32"), x)


def _entries(vals: Sequence[int], per_axis: bool) -> ss.Expr:
    return ss.ops.int_tensor(tuple(vals)) if per_axis else ss.ops.int_tensor(vals[0])


@converts(F.interpolate, F.upsample, F.upsample_nearest, F.upsample_bilinear)
def interpolate(
    ctx: Ctx,
    input: Any,
    size: Any = None,
    scale_factor: Any = None,
    mode: Any = "nearest",
    align_corners: Any = None,
    recompute_scale_factor: Any = None,
    antialias: Any = False,
) -> Any:
    """``F.interpolate(x, size=None, scale_factor=None, mode=..., ...)``."""
    return resize(ctx, input, size, scale_factor, ctx.static(mode, "mode"))


@converts(nn.Upsample)
def upsample_module(ctx: Ctx, input: Any) -> Any:
    """``nn.Upsample`` (and its ``UpsamplingNearest2d``/``UpsamplingBilinear2d`` subclasses)."""
    m = ctx.module
    return resize(ctx, input, m.size, m.scale_factor, m.mode)


def _aten_nearest(ctx: Ctx, input: Any, output_size: Any, scale_factors: Any = None) -> Any:
    return resize(ctx, input, output_size, scale_factors)


def _aten_linear(
    ctx: Ctx, input: Any, output_size: Any, align_corners: Any = False, scale_factors: Any = None
) -> Any:
    return resize(ctx, input, output_size, scale_factors)


for _n in ("upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d", "_upsample_nearest_exact2d"):
    converts(getattr(aten, _n).vec)(_aten_nearest)
for _n in ("upsample_linear1d", "upsample_bilinear2d", "upsample_bicubic2d", "upsample_trilinear3d"):
    converts(getattr(aten, _n).vec)(_aten_linear)


def pixel_shuffle(ctx: Ctx, input: Any, factor: Any, inverse: bool) -> ss.Expr:
    """``pixel_shuffle``/``pixel_unshuffle`` by ``factor`` (see the module docstring)."""
    x = ctx.tensor(input)
    r = ctx.integer(factor, "the factor")
    if r < 1:
        raise Unsupported(f"the factor must be positive, got {r}")
    sh = ctx.let(ss.ops.shape_of(x), "shape")

    def entry(i: int) -> ss.Expr:
        return ss.ops.strided_slice(sh, [i], [i + 1 if i != -1 else None])

    rr, r1 = ss.ops.int_tensor(r * r), ss.ops.int_tensor(r)
    if inverse:
        c = ss.ops.multiply(entry(-3), rr)
        h, w = ss.ops.floor_divide(entry(-2), r1), ss.ops.floor_divide(entry(-1), r1)
    else:
        c = ss.ops.floor_divide(entry(-3), rr)
        h, w = ss.ops.multiply(entry(-2), r1), ss.ops.multiply(entry(-1), r1)
    shape = ss.ops.concatenate([ss.ops.strided_slice(sh, [0], [-3]), c, h, w], axis=0)
    return ss.ops.reshape(x, shape, allowzero=True)


@converts(F.pixel_shuffle, aten.pixel_shuffle)
def pixel_shuffle_fn(ctx: Ctx, input: Any, upscale_factor: Any) -> Any:
    return pixel_shuffle(ctx, input, upscale_factor, inverse=False)


@converts(F.pixel_unshuffle, aten.pixel_unshuffle)
def pixel_unshuffle_fn(ctx: Ctx, input: Any, downscale_factor: Any) -> Any:
    return pixel_shuffle(ctx, input, downscale_factor, inverse=True)


@converts(nn.PixelShuffle)
def pixel_shuffle_module(ctx: Ctx, input: Any) -> Any:
    return pixel_shuffle(ctx, input, ctx.module.upscale_factor, inverse=False)


@converts(nn.PixelUnshuffle)
def pixel_unshuffle_module(ctx: Ctx, input: Any) -> Any:
    return pixel_shuffle(ctx, input, ctx.module.downscale_factor, inverse=True)
