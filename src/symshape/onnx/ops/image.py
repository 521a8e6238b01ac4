"""Image and signal operators: ``Resize``, ``Upsample``, ``GridSample``, ``AffineGrid``,
``Col2Im``, ``RoiAlign``, ``MaxRoiPool``, ``DeformConv``, ``DFT``, ``STFT``.

* ``Resize``/``Upsample`` with ``sizes``: those sizes (``keep_aspect_ratio_policy`` other than
  ``stretch``: ``round(d_j * min_i (max_i) s_i/d_i)``, over symbolic axes the min (max) over ``i``
  of ``(2*d_j*s_i + d_i)//(2*d_i)``, exact); sizes computed at run time are read as shape values.
  An axis of size 0 resizes to size 0 only (both onnxruntime and onnx's reference evaluator refuse
  a scale from 0): ``min(d, 1) == min(max(d, s), 1)`` per resized axis that may be empty; keeping
  the aspect ratio, no resized axis may be empty (onnxruntime refuses a ratio over 0; the reference
  evaluator too for not_smaller, but runs not_larger, an empty axis taking no part in the least).
  (onnxruntime also refuses a size 0 from a non-empty axis, a scale of 0; the reference runs it,
  and so does symshape: ``interpolate(size=h // 8)`` is not guarded ``h >= 8``.)
  With ``scales``: ``floor(d * scale)``;
  symbolic ``d`` is exact for an integer scale (``d*s``: a size-1 axis broadcast to ``s`` and
  merged) and for ``1/m`` (``floor(d/m)``: a slice from ``m - 1`` with step ``m``); other scales of a
  symbolic axis give ``floor(d*p/q)`` for the scale's exact value ``p/q``, on shape values.
* ``GridSample``: ``(N, C)`` of the input, the spatial axes of the grid; the grid has the input's
  ``N`` and rank, and one coordinate per spatial axis; the input's spatial axes are non-empty.
* ``AffineGrid``: ``(N, *size[2:], r)``; ``theta`` is ``(N, r, r + 1)`` for ``N = size[0]``.
* ``Col2Im``: ``(N, C, *image_shape)`` with ``C`` the input's second axis over the block size; the
  input's last axis is the number of blocks. An image or block shape computed at run time (shape
  values) gives the same, each axis fitting at least one block (guards).
* ``RoiAlign``/``MaxRoiPool``: ``(num_rois, C, *output size)``.
* ``DeformConv``: the convolution's output shape; the offsets and the mask have it, with
  ``offset_group*2*K`` and ``offset_group*K`` channels for ``K`` kernel positions.
* ``DFT``: the signal axis becomes ``dft_length`` (or ``dft_length//2 + 1`` one-sided; computed at
  run time: an axis of its value, >= 1), the last axis 2; ``STFT``: ``(batch, frames, bins, 2)``
  with ``frames = (L - frame_length)//frame_step + 1``
  (the frame length: a constant, the window's length, or ``L``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

import symshape as ss
from symshape import Expr
from symshape.encoding.dim_bounds import bounds
from symshape.encoding.dims import Dim
from symshape.encoding.types import TensorType
from symshape.errors import BAD_ATTRIBUTE, RANK_MISMATCH
from symshape.onnx.context import CORE_OP, SHAPE_VALUES, NodeContext
from symshape.onnx.ops.common import checked, norm_axes, scale_axis, set_dim, stacked, value_slice
from symshape.onnx.ops.nn import conv_with_bias
from symshape.onnx.registry import Outputs, register
from symshape.relations.values import entries_of

__all__: list[str] = []

#: index 0 (a ``take`` in mode ``raise`` of it needs the axis non-empty)
_ZERO = ss.const(np.array(0, np.int64))


def _scale_dim(ctx: NodeContext, y: Expr, axis: int, rank: int, d: ss.Dim | None, scale: float) -> Expr:
    if d is not None and d.is_constant:
        return set_dim(y, axis, math.floor(scale * int(d)))
    if scale == 1.0:
        return y
    f = Fraction(scale)
    if f.denominator == 1:
        return scale_axis(y, axis, rank, int(f))
    if f.numerator == 1:
        m = f.denominator
        return ss.ops.strided_slice(y, [m - 1], [None], strides=[m], axes=[axis])
    # floor(d * p/q) for the scale's exact value p/q, on shape values
    sh = ss.ops.shape_of(y)
    d_v = value_slice(sh, [axis], [axis + 1])
    new = ss.ops.floor_divide(
        ss.ops.multiply(d_v, ctx.constant([f.numerator], "int64")), ctx.constant([f.denominator], "int64")
    )
    parts = [value_slice(sh, [0], [axis]), new, value_slice(sh, [axis + 1], [rank])]
    target = ss.ops.concatenate(parts, axis=0)
    return ss.ops.cast_like(ss.ops.zeros(target, "float32"), y)


def _resize(
    ctx: NodeContext,
    scales: np.ndarray[Any, Any] | None,
    sizes: tuple[int, ...] | None,
    axes: tuple[int, ...] | None,
) -> Expr:
    x = ctx.input(0)
    t = ctx.tensor_type(0)
    n = len(sizes) if sizes is not None else (len(scales) if scales is not None else 0)
    if axes is None:
        rank = n
        ax = list(range(n))
        if (r := ctx.rank(0)) is not None and r != n:
            ctx.fail(RANK_MISMATCH, f"{n} scales or sizes for an input of rank {r}")
    else:
        if len(axes) != n:
            ctx.fail(BAD_ATTRIBUTE, f"{n} scales or sizes for {len(axes)} axes")
        rank = ctx.need_rank(0, "Resize with axes")
        ax = norm_axes(ctx, axes, rank)
    dims = t.dims if t is not None and t.ndim == rank else None
    y = x
    if sizes is not None:
        policy = ctx.attr_str("keep_aspect_ratio_policy", "stretch", ("stretch", "not_larger", "not_smaller"))
        if policy != "stretch":
            if dims is None:
                ctx.unsupported(CORE_OP, f"keep_aspect_ratio_policy={policy} of an input of unknown rank")
            if not all(dims[a].is_constant for a in ax):
                return _keep_aspect_ratio(ctx, x, rank, ax, sizes, policy == "not_larger")
            sizes = _kept_ratio_sizes(ctx, [int(dims[a]) for a in ax], list(sizes), policy == "not_larger")
        for a, s in zip(ax, sizes):  # (taking s > 0 entries of an axis needs it non-empty)
            y = set_dim(y, a, s)
            if s > 0 and (dims is None or bounds(dims[a])[0] < 1):  # (even where another is empty)
                with ctx.checking(f"axis {a}, resized to {s}, is not empty"):
                    y = ss.ops.cast_like(y, ss.ops.take(x, _ZERO, axis=a, mode="raise"))
        return y
    assert scales is not None
    for a, s in zip(ax, scales.reshape(-1).tolist()):
        if s <= 0:
            ctx.fail(BAD_ATTRIBUTE, f"scales must be positive, got {s}")
        y = _scale_dim(ctx, y, a, rank, dims[a] if dims is not None else None, float(s))
    return y


def _kept_ratio_sizes(ctx: NodeContext, d: list[int], s: list[int], smaller: bool) -> tuple[int, ...]:
    """The sizes of constant axes ``d`` resized to ``s`` keeping their aspect ratio, by the exact
    formula of :func:`_keep_aspect_ratio` (``round(d_j * s_i/d_i)`` half up, the least over ``i``
    for not_larger, the greatest for not_smaller), so that a model gives the same sizes whether
    its dimensions are constants or symbols bound later (float rounding at a tie differed: 58
    for 59 at (6, 27) resized to (13, 1000)). An axis of size 0 has an unbounded ratio: it takes
    no part in not_larger's least (the reference evaluator's rule), and not_smaller's greatest is
    unbounded: onnxruntime refuses either (an error; see the module docstring)."""
    if 0 in d:
        ctx.fail(BAD_ATTRIBUTE, "keep_aspect_ratio_policy over an axis of size 0 (onnxruntime refuses it)")
    out = []
    for j, dj in enumerate(d):
        cands = [s[j]] + [(2 * dj * s[i] + di) // (2 * di) for i, di in enumerate(d) if i != j and di > 0]
        out.append(min(cands) if smaller else max(cands))
    return tuple(out)


def _keep_aspect_ratio(
    ctx: NodeContext, x: Expr, rank: int, ax: Sequence[int], sizes: Sequence[int] | Expr, smaller: bool
) -> Expr:
    """``Resize`` to ``sizes`` (constants, or a 1-d tensor whose value is read) keeping the aspect
    ratio over axes ``ax`` of which some are symbolic: the scale is ``min_i s_i/d_i``
    (``smaller``: not_larger) or ``max_i s_i/d_i``, and axis ``j`` becomes ``round(d_j * scale)``
    (half up). Rounding is monotone, so that is ``min_i`` (``max_i``) of ``round(d_j*s_i/d_i) =
    (2*d_j*s_i + d_i)//(2*d_i)``: exact, on shape values."""
    sh = ss.ops.shape_of(x)
    d = [value_slice(sh, [a], [a + 1]) for a in ax]

    def c(v: int) -> Expr:
        return ctx.constant([v], "int64")

    if isinstance(sizes, Expr):
        sz = ss.ops.cast(sizes, "int64")
        s = [value_slice(sz, [i], [i + 1]) for i in range(len(ax))]
    else:
        s = [c(v) for v in sizes]
    pick = ss.ops.minimum if smaller else ss.ops.maximum
    new: dict[int, Expr] = {}
    for j, a in enumerate(ax):
        out = s[j]  # i == j: round(d_j*s_j/d_j) = s_j
        for i in range(len(ax)):
            if i != j:
                num = ss.ops.add(ss.ops.multiply(ss.ops.multiply(d[j], s[i]), c(2)), d[i])
                out = pick(out, ss.ops.floor_divide(num, ss.ops.multiply(d[i], c(2))))
        new[a] = out
    parts = [new[a] if a in new else value_slice(sh, [a], [a + 1]) for a in range(rank)]
    y = ss.ops.cast_like(ss.ops.zeros(ss.ops.concatenate(parts, axis=0), "float32"), x)
    for a in ax:  # (a ratio over an empty axis: onnxruntime refuses it)
        with ctx.checking(f"axis {a}, resized keeping the aspect ratio, is not empty"):
            y = ss.ops.cast_like(y, ss.ops.take(x, _ZERO, axis=a, mode="raise"))
    return y


def _empty_alike(
    ctx: NodeContext, x: Expr, ax: Sequence[int], sizes: Sequence[Dim | int | None], size: Any
) -> list[Expr]:
    """The checks that each resized axis ``ax[j]`` of ``x`` that may be empty is resized to 0
    when it is (see the module docstring): its new size is ``sizes[j]`` (None: only the run
    knows), ``size(j)`` as a 1-element int64 tensor."""
    t = ctx.tensor_type(0)
    dims = t.dims if isinstance(t, TensorType) and t.ndim is not None else None
    out: list[Expr] = []
    one = ctx.constant([1], "int64")
    for j, a in enumerate(ax):
        d = dims[a] if dims is not None and a < len(dims) else None
        s = sizes[j] if j < len(sizes) else None
        if (bounds(d)[0] if d is not None else 0) >= 1 or (s is not None and s == 0):
            continue
        dv = ss.ops.minimum(value_slice(ss.ops.shape_of(x), [a], [a + 1]), one)
        sv = ss.ops.minimum(ss.ops.maximum(dv, ss.ops.cast(size(j), "int64")), one)
        with ctx.checking(f"an empty axis {a} resizes to size 0"):
            out.append(stacked(ss.ops.zeros(dv, "float32"), ss.ops.zeros(sv, "float32")))
    return out


def _resize_to(ctx: NodeContext, axes: tuple[int, ...] | None) -> Expr:
    """``Resize`` to ``sizes`` computed at run time (``interpolate(x, size=(h // p, w // p))``
    exports them as ``Concat(Slice(Shape(x)), ...)``): the input's shape with the resized axes'
    dimensions taken from the sizes' value (all of it without ``axes``)."""
    x, sizes = ctx.input(0), ctx.input(3)
    policy = ctx.attr_str("keep_aspect_ratio_policy", "stretch", ("stretch", "not_larger", "not_smaller"))
    st, rank = ctx.tensor_type(3), ctx.rank(0)
    n = st.dims[0] if st is not None and st.ndim == 1 else None
    if policy != "stretch":
        rank = ctx.need_rank(0, f"keep_aspect_ratio_policy={policy} with sizes computed at run time")
        ax = list(range(rank)) if axes is None else norm_axes(ctx, axes, rank)
        if n is None or not n.is_constant:
            ctx.unsupported(SHAPE_VALUES, f"keep_aspect_ratio_policy={policy} with sizes of unknown length")
        if int(n) != len(ax):
            ctx.fail(RANK_MISMATCH, f"{int(n)} sizes for {len(ax)} resized axes")
        return _keep_aspect_ratio(ctx, x, rank, ax, sizes, policy == "not_larger")
    if axes is None:
        if rank is not None and n is not None and n.is_constant and int(n) != rank:
            ctx.fail(RANK_MISMATCH, f"{int(n)} sizes for an input of rank {rank}")
        target: Expr = sizes
    else:
        rank = ctx.need_rank(0, "Resize with axes")
        ax = norm_axes(ctx, axes, rank)
        sh = ss.ops.shape_of(x)
        parts: list[Expr] = []
        prev = 0
        for i in sorted(range(len(ax)), key=lambda i: ax[i]):
            parts += [value_slice(sh, [prev], [ax[i]]), value_slice(sizes, [i], [i + 1])]
            prev = ax[i] + 1
        target = ss.ops.concatenate([*parts, value_slice(sh, [prev], [rank])], axis=0)
    y = ss.ops.cast_like(ss.ops.zeros(target, "float32"), x)
    if rank is None:
        return y
    ax = list(range(rank)) if axes is None else norm_axes(ctx, axes, rank)
    st3 = ctx.tensor_type(3)
    es = entries_of(st3) if st3 is not None else None
    sz = ss.ops.cast(sizes, "int64")
    checks = _empty_alike(ctx, x, ax, list(es or ()), lambda j: value_slice(sz, [j], [j + 1]))
    return checked(y, checks)


@register("Upsample", since=7)
def _upsample_v7(ctx: NodeContext) -> Outputs:
    scales = ctx.attr("scales")
    if scales is None:
        ctx.fail(BAD_ATTRIBUTE, "attribute 'scales' is required")
    return _resize(ctx, np.asarray(scales, dtype=np.float32), None, None)


@register("Upsample", since=9, value_inputs=(1,))
def _upsample_v9(ctx: NodeContext) -> Outputs:
    return _resize(ctx, ctx.require_const(1, "the scales"), None, None)


@register("Resize", since=10, value_inputs=(1,))
def _resize_v10(ctx: NodeContext) -> Outputs:
    return _resize(ctx, ctx.require_const(1, "the scales"), None, None)


@register("Resize", since=11, value_inputs=(2, 3))
def _resize_v11(ctx: NodeContext) -> Outputs:
    """``tf_crop_and_resize`` reads a ``roi`` of two values per resized axis (onnxruntime's and
    the reference's check); with ``axes``, onnxruntime also takes one of two values per axis of
    the input (a roi of that constant length is not checked further)."""
    y = _resize_v11_shape(ctx)
    mode = ctx.attr_str("coordinate_transformation_mode", "half_pixel")
    axes = ctx.attr_ints("axes") if ctx.opset >= 18 else None
    n = len(axes) if axes is not None else ctx.rank(0)
    if mode == "tf_crop_and_resize" and ctx.has_input(1) and n is not None:
        what = "resized axis (axes)" if axes is not None else "axis of the input"
        rt, r = ctx.tensor_type(1), ctx.rank(0)
        k = rt.dims[0] if rt is not None and rt.ndim == 1 and rt.dims[0].is_constant else None
        if axes is not None and r is not None and k is not None and int(k) == 2 * r:
            return y  # onnxruntime also takes a roi of every axis with axes
        with ctx.checking(f"roi is ({2 * n},): a start and an end per {what}"):
            roi = stacked(ss.Constant(shape=(2 * n,), dtype="float32"), ctx.input(1))
        y = ss.ops.cast_like(y, ss.ops.cast_like(roi, y))
    return y


def _resize_v11_shape(ctx: NodeContext) -> Expr:
    axes = ctx.attr_ints("axes") if ctx.opset >= 18 else None
    sizes = ctx.const(3) if ctx.has_input(3) else None
    if ctx.has_input(3) and sizes is None:
        sizes = ctx.value_of(3)
        if sizes is None:  # computed at run time: its value
            return _resize_to(ctx, axes)
    if sizes is not None and sizes.size > 0:
        return _resize(ctx, None, tuple(int(v) for v in sizes.reshape(-1)), axes)
    scales = ctx.require_const(2, "the scales") if ctx.has_input(2) else None
    if scales is None or scales.size == 0:
        ctx.fail(BAD_ATTRIBUTE, "Resize needs scales or sizes")
    return _resize(ctx, scales, None, axes)


@register("GridSample", since=16)
def _grid_sample(ctx: NodeContext) -> Outputs:
    x, grid = ctx.input(0), ctx.input(1)
    r = ctx.need_rank(1, "GridSample")
    rx = ctx.rank(0)
    if rx is not None and rx != r:
        ctx.fail(RANK_MISMATCH, f"GridSample: X has rank {rx}, the grid {r}")
    g = ss.ops.strided_slice(grid, [0], [1], axes=[r - 1])  # (N, D1_out, ..., 1)
    g = ss.ops.transpose(g, [0, r - 1, *range(1, r - 1)])  # (N, 1, D1_out, ...)
    g = ss.ops.sum(g, axis=0, keepdims=True)  # (1, 1, D1_out, ...): Y has X's N, as onnx infers
    xc = ss.ops.sum(x, axis=(0, 1), keepdims=True, exclude=True)  # (N, C, 1, ...)
    y = ss.ops.add(xc, ss.ops.cast_like(g, x))
    # onnxruntime's checks: X's and the grid's N alike (not broadcast), r - 2 coordinates per point
    with ctx.checking("X's and the grid's N (axis 0) alike"):
        batch = stacked(ss.ops.sum(x, axis=(0,), exclude=True), ss.ops.sum(grid, axis=(0,), exclude=True))
    with ctx.checking(f"the grid's last axis holds {r - 2} coordinates"):
        coords = stacked(
            ss.ops.sum(grid, axis=(r - 1,), exclude=True), ss.Constant(shape=(r - 2,), dtype="float32")
        )
    # and X's spatial axes non-empty (onnxruntime refuses to sample an empty one)
    first = ctx.constant([0], "int64")
    with ctx.checking("X's spatial axes are non-empty"):
        reads = [ss.ops.take(x, first, axis=a, mode="nonnegative") for a in range(2, r)]
    return checked(ss.ops.cast_like(ss.ops.cast_like(ss.ops.cast_like(y, batch), coords), x), reads)


@register("AffineGrid", since=20, value_inputs=(1,))
def _affine_grid(ctx: NodeContext) -> Outputs:
    size = ctx.ints(1, "the size")
    nd = len(size) - 2
    if nd not in (2, 3):
        ctx.fail(BAD_ATTRIBUTE, f"size must have 4 or 5 values, got {len(size)}")
    # theta is (N, r, r + 1) for size[0] = N (onnxruntime's check); the grid's N is size[0] (as
    # onnx infers it), not theta's symbol
    with ctx.checking(f"theta is (N, {nd}, {nd + 1}) for size's N = {size[0]}"):
        theta = stacked(ss.Constant(shape=(size[0], nd, nd + 1), dtype="float32"), ctx.input(0))
    n = ss.ops.sum(theta, axis=(0, 2, 3))  # (N,)
    y: Expr = ss.ops.expand_dims(n, 1, num_newaxis=nd + 1)
    for i, s in enumerate(size[2:]):
        y = set_dim(y, 1 + i, s)
    return set_dim(y, nd + 1, nd)


@register("Col2Im", since=18, value_inputs=(1, 2))
def _col2im(ctx: NodeContext) -> Outputs:
    nd = _col2im_rank(ctx)
    dil = ctx.attr_ints("dilations") or (1,) * nd
    strides = ctx.attr_ints("strides") or (1,) * nd
    pads = ctx.attr_ints("pads") or (0,) * (2 * nd)
    if len(dil) != nd or len(strides) != nd or len(pads) != 2 * nd:
        ctx.fail(BAD_ATTRIBUTE, f"dilations, strides and pads need {nd}, {nd} and {2 * nd} values")
    if ctx.const(1) is None or ctx.const(2) is None:
        return _col2im_run_time(ctx, dil, strides, pads)
    image = ctx.ints(1, "the image shape")
    block = ctx.ints(2, "the block shape")
    # L, the input's last axis, is the number of blocks (onnxruntime checks it)
    per_axis = [
        (image[i] + pads[i] + pads[i + nd] - dil[i] * (block[i] - 1) - 1) // strides[i] + 1 for i in range(nd)
    ]
    if min(per_axis, default=1) < 1:
        ctx.fail(BAD_ATTRIBUTE, f"the blocks {list(block)} do not fit the image {list(image)}")
    x = ctx.input(0)
    with ctx.checking(f"the input's axis 2 is the number of blocks L = {math.prod(per_axis)}"):
        x = ss.ops.take(
            stacked(set_dim(x, 2, math.prod(per_axis)), x), ss.const(np.array(0, dtype=np.int64)), axis=0
        )
    y = ss.ops.reshape(x, (0, -4, -1, math.prod(block), 0))  # (N, C, prod(block), L)
    y = ss.ops.sum(y, axis=(2, 3))
    y = ss.ops.expand_dims(y, 2, num_newaxis=len(image))
    out: Expr = y
    for i, s in enumerate(image):
        out = set_dim(out, 2 + i, s)
    return out


def _col2im_rank(ctx: NodeContext) -> int:
    """The number of spatial axes: the length of ``image_shape``, which ``block_shape`` shares."""
    lens = []
    for i in (1, 2):
        t = ctx.tensor_type(i)
        if t is None or t.ndim != 1 or not t.dims[0].is_constant:
            ctx.unsupported(SHAPE_VALUES, "Col2Im whose image or block shape has no known length")
        lens.append(int(t.dims[0]))
    if lens[0] != lens[1]:
        ctx.fail(BAD_ATTRIBUTE, f"image_shape has {lens[0]} values, block_shape {lens[1]}")
    return lens[0]


def _col2im_run_time(
    ctx: NodeContext, dil: Sequence[int], strides: Sequence[int], pads: Sequence[int]
) -> Expr:
    """``Col2Im`` whose image or block shape is computed at run time (shape values): ``(N, C/K,
    *image)`` for ``K = prod(block)``, once ``C`` is a multiple of ``K``, each axis fits a block
    and ``L`` is the number of blocks (onnxruntime's checks)."""
    nd, x = len(dil), ctx.input(0)
    if ctx.rank(0) not in (3, None):
        ctx.fail(RANK_MISMATCH, f"the input must have rank 3 (N, C*K, L), got rank {ctx.rank(0)}")
    image, block = (ss.ops.cast(ctx.input(i), "int64") for i in (1, 2))

    def c(v: Sequence[int]) -> Expr:
        return ctx.constant(list(v), "int64")

    # per axis: (image + pads - dil*(block - 1) - 1)//stride + 1 blocks, at least 1
    span = ss.ops.subtract(
        ss.ops.add(image, c([pads[i] + pads[i + nd] + dil[i] - 1 for i in range(nd)])),
        ss.ops.multiply(block, c(dil)),
    )
    per = ss.ops.floor_divide(span, c(strides))  # blocks - 1 per axis
    sh = ss.ops.shape_of(x)
    n, ch = value_slice(sh, [0], [1]), value_slice(sh, [1], [2])

    k = ss.ops.shape_of(ss.ops.reshape(ss.ops.zeros(block, "float32"), (-1,)))  # [prod(block)]
    grid = ss.ops.zeros(ss.ops.add(per, c([1] * nd)), "float32")  # the blocks' grid
    blocks = ss.ops.shape_of(ss.ops.reshape(grid, (-1,)))
    first = ss.ops.take(grid, c([0]), axis=0, mode="nonnegative")
    for i in range(1, nd):  # block 0 exists on each axis: at least one block fits
        first = ss.ops.take(first, c([0]), axis=i, mode="nonnegative")
    cout = ss.ops.floor_divide(ch, k)
    want = ss.ops.zeros(ss.ops.concatenate([n, ss.ops.multiply(cout, k), blocks], axis=0), "float32")
    y = ss.ops.zeros(ss.ops.concatenate([n, cout, image], axis=0), "float32")
    return checked(ss.ops.cast_like(y, x), [stacked(x, want), first])


def _rois(ctx: NodeContext, out: tuple[int, int]) -> Expr:
    x, rois = ctx.input(0), ctx.input(1)
    r = ss.ops.sum(rois, axis=1, keepdims=True)  # (num_rois, 1)
    r = ss.ops.expand_dims(r, 2, num_newaxis=2)  # (num_rois, 1, 1, 1)
    c = ss.ops.sum(x, axis=(1,), keepdims=True, exclude=True)  # (1, C, 1, 1)
    y = ss.ops.add(ss.ops.cast_like(r, x), c)
    return set_dim(set_dim(y, 2, out[0]), 3, out[1])


@register("RoiAlign", since=10)
def _roi_align(ctx: NodeContext) -> Outputs:
    return _rois(ctx, (ctx.attr_int("output_height", 1), ctx.attr_int("output_width", 1)))


@register("MaxRoiPool", since=1)
def _max_roi_pool(ctx: NodeContext) -> Outputs:
    ps = ctx.attr_ints("pooled_shape")
    if ps is None or len(ps) != 2:
        ctx.fail(BAD_ATTRIBUTE, "attribute 'pooled_shape' needs two values")
    return _rois(ctx, (ps[0], ps[1]))


@register("DeformConv", since=19)
def _deform_conv(ctx: NodeContext) -> Outputs:
    """The convolution; the input's channels are a multiple of ``offset_group``, the offsets are
    ``(N, offset_group*2*K, *out)`` and the mask ``(N, offset_group*K, *out)`` for ``K`` kernel
    positions (the weight's spatial sizes) and the output's spatial axes ``out`` (onnxruntime's
    and the reference's checks)."""
    y = conv_with_bias(ctx, 3)
    r = ctx.rank(0) or ctx.rank(1)
    if r is None:
        return y
    og = ctx.attr_int("offset_group", 1)
    if og < 1:
        ctx.fail(BAD_ATTRIBUTE, f"offset_group must be >= 1, got {og}")
    nd, keep = r - 2, (0,) * (r - 2)
    # (1, 1, K, 1, ...): the kernel positions, from the weight
    k = ss.ops.reshape(ss.ops.sum(ctx.input(1), axis=(0, 1)), (1, 1, -1) + (1,) * nd)
    with ctx.checking(f"the input's channels are a multiple of offset_group {og}"):
        checks: list[Expr] = [ss.ops.reshape(ctx.input(0), (0, -4, og, -1) + keep)]
    for i, per in ((2, 2 * og), (4, og)):  # offsets, mask: (N, per*K, *out) as (N, per, K, *out)
        if ctx.has_input(i):
            name, kind = ("offset", "2*offset_group") if i == 2 else ("mask", "offset_group")
            with ctx.checking(
                f"the {name} is (N, {kind}*K, *out) for the K kernel positions and output sizes out"
            ):
                want = ss.ops.add(ss.ops.expand_dims(set_dim(y, 1, per), 2), ss.ops.cast_like(k, y))
                checks.append(stacked(want, ss.ops.reshape(ctx.input(i), (0, -4, per, -1) + keep)))
    for check in checks:
        y = ss.ops.cast_like(y, check)
    return y


@register("DFT", since=17, value_inputs=(1, 2))
def _dft(ctx: NodeContext) -> Outputs:
    """The spec's checks: the last axis holds 1 (real) or 2 (complex) values, 1 for a one-sided
    forward DFT (onnxruntime also runs a complex one) and 2 for an inverse one; the axis is in
    ``[-r, -2]`` or ``[0, r - 2]``; ``dft_length`` is a scalar."""
    x = ctx.input(0)
    if ctx.opset >= 20:
        axis = ctx.ints(2, "the axis")[0] if ctx.has_input(2) else -2
    else:
        axis = ctx.attr_int("axis", 1)
    onesided = bool(ctx.attr_int("onesided", 0))
    inverse = bool(ctx.attr_int("inverse", 0))
    irfft = onesided and inverse
    r = ctx.rank(0)
    if r is not None and not (-r <= axis <= -2 or 0 <= axis <= r - 2):
        ctx.fail(BAD_ATTRIBUTE, f"axis {axis} is not a signal axis of rank {r}")
    parts = ss.ops.sum(x, axis=-1, keepdims=True, exclude=True)  # (1, ..., 1, c)
    if onesided:  # c == 1 (real, forward) or c == 2 (complex, inverse)
        text = (
            "the input of a one-sided inverse DFT is complex: its last axis holds 2 values"
            if inverse
            else "the input of a one-sided DFT is real: its last axis holds 1 value"
        )
        with ctx.checking(text):
            check: Expr = stacked(set_dim(parts, -1, 2 if inverse else 1), parts)
    else:  # c == 1 or c == 2: broadcasts against 2
        with ctx.checking("the input's last axis holds 1 (real) or 2 (complex) values"):
            check = ss.ops.add(parts, ss.ops.cast_like(ss.ops.zeros((2,), "float32"), parts))
    y: Expr = ss.ops.cast_like(x, check)
    if ctx.has_input(1) and ctx.rank(1) not in (0, None):
        ctx.fail(BAD_ATTRIBUTE, f"dft_length must be a scalar, got rank {ctx.rank(1)}")
    if ctx.has_input(1) and ctx.const(1) is not None:
        n = int(ctx.require_const(1, "the DFT length"))
        y = set_dim(y, axis, n // 2 + 1 if onesided and not inverse else n)
    elif ctx.has_input(1):
        y = _run_time_length(ctx, y, axis, onesided and not inverse)
    elif onesided:
        r = ctx.need_rank(0, "a one-sided DFT")
        a = axis + r if axis < 0 else axis
        if not inverse:  # d//2 + 1 = the length of range(0, d + 1, 2)
            pads = tuple((0, 1) if i == a else (0, 0) for i in range(r))
            y = ss.ops.strided_slice(ss.ops.pad(y, pads), [0], [None], strides=[2], axes=[a])
        else:  # IRFFT: 2*(d - 1)
            y = scale_axis(ss.ops.strided_slice(y, [1], [None], axes=[a]), a, r, 2)
    return set_dim(y, -1, 1 if irfft else 2)


def _run_time_length(ctx: NodeContext, y: Expr, axis: int, half: bool) -> Expr:
    """``y`` with the signal axis ``axis`` of ``dft_length`` entries, a value computed at run time
    (``n//2 + 1`` for ``half``, a one-sided forward DFT); ``n >= 1`` (onnxruntime refuses less)."""
    n = ss.ops.arange(ss.ops.reshape(ss.ops.cast(ctx.input(1), "int64"), ()))  # (n,)
    with ctx.checking("dft_length is at least 1"):
        first = ss.ops.take(n, ss.const(np.array(0, dtype=np.int64)), axis=0, mode="nonnegative")  # n >= 1
    if half:  # n//2 + 1 = the length of range(0, n + 1, 2)
        n = ss.ops.strided_slice(ss.ops.pad(n, ((0, 1),)), [0], [None], strides=[2])
    if axis >= 0:
        axis -= ctx.need_rank(0, "a DFT length computed at run time on a non-negative axis")
    after = -axis - 1  # the axes after the signal axis
    col = ss.ops.reshape(ss.ops.add(n, first), (-1,) + (1,) * after)  # (n, 1, ..., 1)
    return ss.ops.add(ss.ops.sum(y, axis=axis, keepdims=True), ss.ops.cast_like(col, y))


def _scalar(ctx: NodeContext, i: int, what: str) -> int:
    v = ctx.require_const(i, what)
    if v.ndim != 0:
        ctx.fail(BAD_ATTRIBUTE, f"{what} must be a scalar, got shape {list(v.shape)}")
    return int(v)


def _with(y: Expr, check: Expr) -> Expr:
    """``y``'s type, once ``check`` type-checks."""
    return checked(y, [check])


@register("STFT", since=17, value_inputs=(1, 3))
def _stft(ctx: NodeContext) -> Outputs:
    """``(B, frames, bins, 2)`` of a signal ``(B, L, c)`` (the spec: rank 3, ``c`` 1 or 2 and 1 for
    a one-sided STFT; onnxruntime also runs a rank-2 signal, a complex one-sided one and 1-element
    steps and lengths). The frame length is ``frame_length``, the window's length (which must equal
    it), or ``L``; ``frames = (L - length)//step + 1`` needs ``length <= L``."""
    x = ctx.input(0)
    r = ctx.rank(0)
    if r is not None and r != 3:
        ctx.fail(RANK_MISMATCH, f"the signal must have rank 3 (batch, length, 1 or 2), got rank {r}")
    step = _scalar(ctx, 1, "the frame step")
    if step < 1:
        ctx.fail(BAD_ATTRIBUTE, f"the frame step must be >= 1, got {step}")
    onesided = bool(ctx.attr_int("onesided", 1))
    parts = ss.ops.sum(x, axis=(0, 1))  # (c,): real (1) or complex (2)
    if onesided:
        with ctx.checking("the signal of a one-sided STFT is real: its last axis holds 1 value"):
            x = _with(x, stacked(set_dim(parts, 0, 1), parts))
    else:
        with ctx.checking("the signal's last axis holds 1 (real) or 2 (complex) values"):
            x = _with(x, ss.ops.add(parts, ss.ops.cast_like(ss.ops.zeros((2,), "float32"), parts)))
    window = ctx.input(2) if ctx.has_input(2) else None
    wt = ctx.tensor_type(2) if window is not None else None
    if wt is not None and wt.ndim is not None and wt.ndim != 1:
        ctx.fail(RANK_MISMATCH, f"the window must be 1-d, got rank {wt.ndim}")
    length: int | None = None
    if ctx.has_input(3):
        length = _scalar(ctx, 3, "the frame length")
        if window is not None:  # of the frame length
            with ctx.checking(f"the window's length is frame_length {length}"):
                x = _with(x, stacked(ss.Constant(shape=(length,), dtype="float32"), window))
    elif wt is not None and wt.ndim == 1 and wt.dims[0].is_constant:
        length = int(wt.dims[0])
    z = ss.ops.sum(x, axis=2)  # (B, L)
    if length is not None:
        with ctx.checking(f"the frame length {length} is at most the signal's length (axis 1)"):
            frames: Expr = ss.ops.max_pool1d(ss.ops.expand_dims(z, 1), pool_size=length, strides=step)
        frames = ss.ops.sum(frames, axis=1)  # (B, frames)
        per_frame: Expr = ss.Constant(shape=(length,), dtype="float32")
    elif window is None:  # one frame of the whole signal
        frames, per_frame = ss.ops.sum(z, axis=1, keepdims=True), ss.ops.sum(z, axis=0)
    else:  # the window's length w: frames start at 0, step, ... up to L - w
        w = ss.ops.take(ss.ops.shape_of(window), ss.ops.int_tensor(0))
        with ctx.checking("the window's length is at most the signal's length (axis 1)"):
            fits = ss.ops.take(z, ss.ops.arange(w), axis=1, mode="nonnegative")  # w <= L
        last = ss.ops.subtract(ss.ops.shape_of(window), ss.ops.int_tensor((1,)))  # [w - 1]
        frames = _with(value_slice(z, last, [None], [step], axes=[1]), fits)
        per_frame = window
    if onesided:  # length//2 + 1 bins: range(0, length + 1, 2)
        per_frame = ss.ops.strided_slice(ss.ops.pad(per_frame, ((0, 1),)), [0], [None], strides=[2])
    bins = ss.ops.reshape(ss.ops.cast_like(per_frame, z), (1, 1, -1))
    y = ss.ops.add(ss.ops.expand_dims(frames, 2), bins)  # (B, frames, bins)
    return set_dim(ss.ops.expand_dims(y, 3), 3, 2)
