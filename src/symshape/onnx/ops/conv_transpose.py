"""Transposed convolution and unpooling: ``ConvTranspose``, ``MaxUnpool``
(the window parameters of :mod:`symshape.onnx.ops.nn`).

* ``ConvTranspose``: ``s*(d - 1) + output_padding + K - pb - pa`` per spatial axis (``SAME``:
  ``d*s``, at most that full size; or the ``output_shape`` attribute). Built as: each spatial axis
  scaled by ``s`` (a size-1 axis broadcast to ``s`` and merged), then one window of stride 1 that
  adds or removes the constant rest, then the channels set to the weight's ``C_out = W.shape[1] *
  group``, then the bias. The input's channels must be ``W.shape[0]`` and a ``kernel_shape``
  attribute ``W``'s spatial axes. onnxruntime's run-time checks: each output spatial size is at
  least 1 (an empty output is refused), ``output_padding`` is below the stride, an empty input
  spatial axis only without ``output_padding`` and ``output_shape``, and ``output_shape`` entries
  at least 1.
  (onnx's reference evaluator refuses every empty input spatial axis, and onnxruntime's ``SAME``
  size is ``s*(d - 1) + output_padding + K`` where that is below ``d*s``, ONNX's and the
  reference's ``d*s``: symshape follows onnxruntime in both.)
* ``MaxUnpool``: see :func:`_max_unpool`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

import symshape as ss
from symshape import Expr
from symshape.encoding.dim_bounds import bounds
from symshape.encoding.dims import Dim
from symshape.errors import BAD_ATTRIBUTE, SHAPE_MISMATCH
from symshape.onnx.context import NodeContext
from symshape.onnx.ops.common import scale_axis, set_dim, stacked, value_slice
from symshape.onnx.ops.nn import _check_nd, _kernel_from_weight, _nd, _spatial_attr, auto_pad_of
from symshape.onnx.registry import Outputs, register

__all__: list[str] = []


def _scale_axes(y: Expr, rank: int, scales: Sequence[int]) -> Expr:
    """Each spatial axis ``2 + i`` multiplied by ``scales[i]``."""
    for i, s in enumerate(scales):
        y = scale_axis(y, 2 + i, rank, s)
    return y


def _add_constants(ctx: NodeContext, y: Expr, nd: int, rest: Sequence[int]) -> Expr:
    """Each spatial axis ``2 + i`` plus the constant ``rest[i]`` (a stride-1 window: end padding
    adds, a wider window removes)."""
    if all(c == 0 for c in rest):
        return y
    pool = {1: ss.ops.max_pool1d, 2: ss.ops.max_pool2d, 3: ss.ops.max_pool3d}[nd]
    return pool(
        y,
        pool_size=tuple(max(-c, 0) + 1 for c in rest),
        strides=1,
        padding=tuple([0] * nd + [max(c, 0) for c in rest]),
    )


@register("ConvTranspose", since=1)
def _conv_transpose(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    nd = _nd(ctx, ctx.attr_ints("kernel_shape"), 1)
    _check_nd(ctx, nd)
    wt = ctx.tensor_type(1)
    static = (
        wt is not None
        and wt.ndim == nd + 2
        and wt.dims[1].is_constant
        and (ctx.attr_ints("kernel_shape") is not None or all(d.is_constant for d in wt.dims[2:]))
    )
    if not static:
        return _conv_transpose_values(ctx, nd)
    kernel = _kernel_from_weight(ctx, 1, nd)
    strides = _spatial_attr(ctx, "strides", nd, 1)
    dil = _spatial_attr(ctx, "dilations", nd, 1)
    out_pad = _spatial_attr(ctx, "output_padding", nd, 0)
    group = ctx.attr_int("group", 1)
    auto_pad = auto_pad_of(ctx)
    assert wt is not None
    c_out = int(wt.dims[1]) * group
    rank = nd + 2
    y: Expr = x
    out_shape = ctx.attr_ints("output_shape")
    if out_shape is not None:
        if len(out_shape) not in (nd, rank):
            ctx.fail(BAD_ATTRIBUTE, f"output_shape has {len(out_shape)} values for {nd} spatial axes")
        for i, v in enumerate(out_shape[-nd:]):
            if v < 1:  # (onnxruntime: "Explicit output size must be positive")
                ctx.fail(BAD_ATTRIBUTE, f"output_shape {list(out_shape)} has a size below 1")
            y = set_dim(y, 2 + i, v)
        # output_shape may be at most s - 1 over the full size s*(d - 1) + dil*(k - 1) + 1
        # (onnxruntime and the reference: "Explicit output_shape is inconsistent with input spatial
        # dimensions"; the end is padded up to s - 1, as an output_padding would, which is ignored)
        full = _scale_axes(x, rank, strides)
        extra = [dil[i] * (kernel[i] - 1) for i in range(nd)]
        full = _add_constants(ctx, full, nd, extra)
        for i, v in enumerate(out_shape[-nd:]):
            if v >= 1:
                what = f"output_shape[{i}] ({v}) is at most stride - 1 over the full size of axis {2 + i}"
                with ctx.checking(what):
                    index = ss.const(np.array(v - 1, dtype=np.int64))
                    y = ss.ops.cast_like(y, ss.ops.take(full, index, axis=2 + i, mode="raise"))
    else:
        y = _scale_axes(y, rank, strides)
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):  # d*s, or the full size where that is less
            rest = [min(0, out_pad[i] + dil[i] * (kernel[i] - 1) + 1 - strides[i]) for i in range(nd)]
        else:
            pads = ctx.attr_ints("pads") if auto_pad == "NOTSET" else None
            pads = pads or (0,) * (2 * nd)
            if len(pads) != 2 * nd:
                ctx.fail(BAD_ATTRIBUTE, f"attribute 'pads' has {len(pads)} values for {nd} spatial axes")
            rest = [
                out_pad[i] + dil[i] * (kernel[i] - 1) + 1 - pads[i] - pads[nd + i] - strides[i]
                for i in range(nd)
            ]
        y = _add_constants(ctx, y, nd, rest)
        y = _positive_sizes(ctx, y, nd, [s * lo + c for s, lo, c in zip(strides, _least(ctx, nd), rest)])
    y = _empty_input_checks(ctx, y, nd, out_pad, strides, out_shape is not None)
    y = set_dim(y, 1, c_out)
    for check in _transpose_checks(ctx, nd):
        y = ss.ops.cast_like(y, check)
    if ctx.has_input(2):
        y = ss.ops.bias_add(y, ctx.input(2), axis=1)
    return y


def _least(ctx: NodeContext, nd: int) -> list[int]:
    """The least size of each input spatial axis by its bounds (0 where not known)."""
    t = ctx.tensor_type(0)
    if t is None or t.ndim != nd + 2:
        return [0] * nd
    return [max(int(bounds(d)[0]), 0) for d in t.dims[2:]]


def _positive_sizes(ctx: NodeContext, y: Expr, nd: int, least: Sequence[int | None]) -> Expr:
    """``y`` once each spatial size (of at least ``least[i]``; None: not known) is ``>= 1``
    (onnxruntime: "Computed output dimension is <= 0")."""
    for i, lo in enumerate(least):
        if lo is None or lo < 1:
            with ctx.checking(f"the output's spatial axis {2 + i} is not empty"):
                y = ss.ops.cast_like(
                    y, ss.ops.take(y, ss.const(np.array(0, np.int64)), axis=2 + i, mode="raise")
                )
    return y


def _empty_input_checks(
    ctx: NodeContext, y: Expr, nd: int, out_pad: Sequence[int], strides: Sequence[int], out_shape: bool
) -> Expr:
    """``y`` once ``ConvTranspose``'s input sizes pass onnxruntime's checks: ``output_padding`` is
    below the stride, with ``output_shape`` too (it computes the input size back from the output's
    and compares: "output_padding may be too large for stride"), which at an empty input axis
    means none; with ``output_shape``
    no input spatial axis is empty ("Input spatial dimension must be positive"). (onnx's reference
    evaluator refuses every empty input spatial axis; symshape follows onnxruntime.)"""
    if any(op >= s for op, s in zip(out_pad, strides)):
        ctx.fail(BAD_ATTRIBUTE, f"output_padding {list(out_pad)} is not below the strides {list(strides)}")
    x = ctx.input(0)
    for i, lo in enumerate(_least(ctx, nd)):
        if lo < 1 and (out_shape or out_pad[i] > 0):
            why = "output_shape" if out_shape else f"output_padding {out_pad[i]}"
            with ctx.checking(f"the input's spatial axis {2 + i} is not empty (with {why})"):
                y = ss.ops.cast_like(
                    y, ss.ops.take(x, ss.const(np.array(0, np.int64)), axis=2 + i, mode="raise")
                )
    return y


def _transpose_checks(ctx: NodeContext, nd: int) -> list[Expr]:
    """Expressions that need ``ConvTranspose``'s conditions (onnxruntime's): the input's channels
    are the weight's first axis, and a ``kernel_shape`` attribute is the weight's spatial axes."""
    x, w = ctx.input(0), ctx.input(1)
    spatial = tuple(range(2, nd + 2))
    # (N, C) @ (C_w, W1): C == C_w
    with ctx.checking("the input's channels (axis 1) are the weight's axis 0"):
        out: list[Expr] = [
            ss.ops.matmul(ss.ops.sum(x, axis=spatial), ss.ops.cast_like(ss.ops.sum(w, axis=spatial), x))
        ]
    ks = ctx.attr_ints("kernel_shape")
    if ks is not None:
        with ctx.checking(f"the weight's spatial axes are kernel_shape {list(ks)}"):
            kernel = stacked(ss.ops.sum(w, axis=(0, 1)), ss.Constant(shape=tuple(ks), dtype="float32"))
            out.append(ss.ops.cast_like(kernel, x))
    return out


def _conv_transpose_values(ctx: NodeContext, nd: int) -> Expr:
    """``ConvTranspose`` whose kernel size or output channels are symbolic: the output shape
    ``(N, W1 * group, s*(x - 1) + out_pad + d*(k - 1) + 1 - pads)`` computed on shape values
    (``x``'s and the weight's), a tensor of that shape and ``x``'s dtype; the input channels must
    match the weight's first axis."""
    x, w = ctx.input(0), ctx.input(1)
    strides = _spatial_attr(ctx, "strides", nd, 1)
    dil = _spatial_attr(ctx, "dilations", nd, 1)
    out_pad = _spatial_attr(ctx, "output_padding", nd, 0)
    group = ctx.attr_int("group", 1)
    auto_pad = auto_pad_of(ctx)
    xs, ws = ss.ops.shape_of(x), ss.ops.shape_of(w)

    def vec(v: Sequence[int]) -> Expr:
        return ctx.constant(list(v), "int64")

    checks = _transpose_checks(ctx, nd)  # x's channels against the weight's first axis, kernel_shape
    head = ss.ops.concatenate(
        [value_slice(xs, [0], [1]), ss.ops.multiply(value_slice(ws, [1], [2]), vec([group]))], axis=0
    )
    out_shape = ctx.attr_ints("output_shape")
    if out_shape is not None:
        if len(out_shape) not in (nd, nd + 2):
            ctx.fail(BAD_ATTRIBUTE, f"output_shape has {len(out_shape)} values for {nd} spatial axes")
        spatial: Expr = vec(out_shape[-nd:])
    else:
        xsp = value_slice(xs, [2], [nd + 2])
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):  # d*s, or the full size where that is less
            ks = ctx.attr_ints("kernel_shape")
            k = vec(ks) if ks is not None else value_slice(ws, [2], [nd + 2])
            full = [out_pad[i] + 1 - strides[i] - dil[i] for i in range(nd)]  # (+ dil*k)
            rest_v = ss.ops.minimum(ss.ops.add(ss.ops.multiply(k, vec(dil)), vec(full)), vec([0] * nd))
            spatial = ss.ops.add(ss.ops.multiply(xsp, vec(strides)), rest_v)
        else:
            pads = ctx.attr_ints("pads") if auto_pad == "NOTSET" else None
            pads = pads or (0,) * (2 * nd)
            if len(pads) != 2 * nd:
                ctx.fail(BAD_ATTRIBUTE, f"attribute 'pads' has {len(pads)} values for {nd} spatial axes")
            ks = ctx.attr_ints("kernel_shape")
            k = vec(ks) if ks is not None else value_slice(ws, [2], [nd + 2])
            rest = [out_pad[i] + 1 - pads[i] - pads[nd + i] - strides[i] - dil[i] for i in range(nd)]
            spatial = ss.ops.add(
                ss.ops.add(ss.ops.multiply(xsp, vec(strides)), ss.ops.multiply(k, vec(dil))), vec(rest)
            )
    y: Expr = ss.ops.cast_like(ss.ops.zeros(ss.ops.concatenate([head, spatial], axis=0), "float32"), x)
    for check in checks:
        y = ss.ops.cast_like(y, check)
    if out_shape is None:
        y = _positive_sizes(ctx, y, nd, [None] * nd)
    elif any(v < 1 for v in out_shape[-nd:]):
        ctx.fail(BAD_ATTRIBUTE, f"output_shape {list(out_shape)} has a size below 1")
    y = _empty_input_checks(ctx, y, nd, out_pad, strides, out_shape is not None)
    if ctx.has_input(2):
        y = ss.ops.bias_add(y, ctx.input(2), axis=1)
    return y


@register("MaxUnpool", since=9, value_inputs=(2,))
def _max_unpool(ctx: NodeContext) -> Outputs:
    """The input's axes scaled by the strides and widened by ``kernel - pads - strides``, or the
    ``output_shape`` input (a constant or computed at run time), which keeps the input's ``N`` and
    ``C`` and is no smaller on a spatial axis (onnxruntime's checks). The indices have the input's
    shape (the spec's rule), pads are smaller than the kernel (onnxruntime's)."""
    ks = ctx.attr_ints("kernel_shape")
    if ks is None:
        ctx.fail(BAD_ATTRIBUTE, "attribute 'kernel_shape' is required")
    nd = len(ks)
    _check_nd(ctx, nd)
    x = ctx.input(0)
    strides = _spatial_attr(ctx, "strides", nd, 1)
    pads = ctx.attr_ints("pads") or (0,) * (2 * nd)
    if len(pads) != 2 * nd:
        ctx.fail(BAD_ATTRIBUTE, f"attribute 'pads' has {len(pads)} values for {nd} spatial axes")
    if any(pads[i] >= ks[i % nd] for i in range(2 * nd)):
        ctx.fail(BAD_ATTRIBUTE, f"pads {list(pads)} must be smaller than the kernel {list(ks)}")
    y = _scale_axes(x, nd + 2, strides)
    rest = [ks[i] - pads[i] - pads[nd + i] - strides[i] for i in range(nd)]
    y = _add_constants(ctx, y, nd, rest)
    with ctx.checking("I (the indices) has X's shape"):
        y = ss.ops.cast_like(y, stacked(x, ctx.input(1)))  # the indices: the input's shape
    if not ctx.has_input(2):
        return y
    t = ctx.tensor_type(2)
    if t is not None and t.ndim == 1 and t.dims[0].is_constant and int(t.dims[0]) != nd + 2:
        ctx.fail(BAD_ATTRIBUTE, f"output_shape has {int(t.dims[0])} values for rank {nd + 2}")
    _unpool_output_shape_errors(ctx, nd, strides, rest)
    out: Expr = ss.ops.cast_like(ss.ops.zeros(ctx.input(2), "float32"), x)
    spatial = tuple(range(2, nd + 2))
    with ctx.checking("output_shape's N and C are the input's"):
        checks = [stacked(ss.ops.sum(out, axis=spatial), ss.ops.sum(x, axis=spatial))]  # (N, C)
    for a in spatial:  # entry size - 1 of the axis exists: the output shape is no smaller
        with ctx.checking(f"output_shape[{a}] is no smaller than the unpooled size of axis {a}"):
            size = ss.ops.take(ss.ops.shape_of(y), ss.ops.int_tensor(a))
            checks.append(ss.ops.take(out, ss.ops.arange(size), axis=a, mode="nonnegative"))
    for check in checks:
        out = ss.ops.cast_like(out, check)
    return out


def _unpool_output_shape_errors(
    ctx: NodeContext, nd: int, strides: Sequence[int], rest: Sequence[int]
) -> None:
    """``MaxUnpool``'s ``output_shape`` (input 2, its entries known) that can never fit the input:
    an error in ONNX terms, as onnxruntime refuses it ("output_shape batch and channel dimensions
    must match input", "output_shape is smaller than minimum required"). Left to the checks the
    converter builds (guards) when the sizes decide it only for some values of the symbols."""
    xt, ot = ctx.tensor_type(0), ctx.tensor_type(2)
    if xt is None or xt.ndim != nd + 2 or ot is None or not isinstance(ot.value, tuple):
        return
    os = ot.value
    if len(os) != nd + 2:
        return
    x = xt.dims
    least = [*x[:2], *(x[2 + i] * s + c for i, (s, c) in enumerate(zip(strides, rest)))]

    def shown(ds: Sequence[Dim | None]) -> str:
        return "(" + ", ".join("?" if d is None else str(d) for d in ds) + ")"

    where = f"for the input `{ctx.input_name(0)}` of shape {shown(x)}"
    for j in (0, 1):
        o = os[j]
        if o is not None and (bounds(o - x[j])[0] > 0 or bounds(x[j] - o)[0] > 0):
            ctx.fail(SHAPE_MISMATCH, f"output_shape {shown(os)} must keep the input's batch and channel "
                     f"sizes {shown(x[:2])} {where}")  # fmt: skip
    for a in range(2, nd + 2):
        o = os[a]
        if o is not None and bounds(least[a] - o)[0] > 0:
            ctx.fail(SHAPE_MISMATCH, f"output_shape {shown(os)} is smaller than the least size the "
                     f"input allows, {shown(least)}, on axis {a} ({o} < {least[a]}) {where} "
                     "(kernel_shape, strides and pads)")  # fmt: skip
