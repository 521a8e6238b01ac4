"""``Pad`` (opsets 1, 2, 11, 18), by literal pads or pads computed at run time.

``pads`` are all begins then all ends; negative pads crop (a slice after the padding, the crops
no more than the padded axis: no negative size); by literal pads, ``reflect`` needs each pad
smaller than its axis, ``edge``/``wrap`` a non-empty axis, and a cropped axis of those modes an
entry left (onnxruntime's checks).

Pads computed at run time give the output's shape ``x.shape + begins + ends`` on shape values,
and the modes' reads on the pads' values (no condition where those are unknown).
"""

from __future__ import annotations

import symshape as ss
from symshape import Expr
from symshape.errors import BAD_ATTRIBUTE
from symshape.onnx.context import NodeContext
from symshape.onnx.ops.common import norm_axes, value_slice
from symshape.onnx.ops.index_maps import flat_value
from symshape.onnx.registry import Outputs, register

__all__: list[str] = []


def _pad(ctx: NodeContext, pads: tuple[int, ...], axes: tuple[int, ...] | None) -> Expr:
    x = ctx.input(0)
    if len(pads) % 2:
        ctx.fail(BAD_ATTRIBUTE, f"pads must have an even length, got {len(pads)}")
    k = len(pads) // 2
    if axes is None:
        before, after = list(pads[:k]), list(pads[k:])
        rank = k
    else:
        if len(axes) != k:
            ctx.fail(BAD_ATTRIBUTE, f"{len(pads)} pads for {len(axes)} axes")
        rank = ctx.need_rank(0, "Pad with axes")
        norm = norm_axes(ctx, axes, rank)
        before, after = [0] * rank, [0] * rank
        for a, b, e in zip(norm, pads[:k], pads[k:]):
            before[a], after[a] = b, e
    pos = [(max(b, 0), max(e, 0)) for b, e in zip(before, after)]
    y = ss.ops.pad(x, tuple(pos)) if any(b or e for b, e in pos) or rank == 0 else x
    y = _mode_reads(ctx, x, y, before, after)
    if rank == 0 or all(b >= 0 and e >= 0 for b, e in zip(before, after)):
        return y if y is not x else ss.ops.pad(x, tuple(pos))
    crop_b = [max(-b, 0) for b in before]
    crop_e: list[int | None] = [(-max(-e, 0) if e < 0 else None) for e in after]
    return value_slice(y, crop_b, crop_e)


def _mode_reads(ctx: NodeContext, x: Expr, y: Expr, before: list[int], after: list[int]) -> Expr:
    """``y`` (``x`` padded) typed by the entries that onnxruntime reads, each a ``take`` whose
    index states the condition: ``reflect`` reads ``x[p]`` for a pad ``p`` (``p < d``), ``edge`` and
    ``wrap`` ``x[0]`` (``d >= 1``; wrap on every axis, padded or not: onnxruntime refuses any
    empty one), of the axis after its crops (negative pads, which onnxruntime
    applies first); a cropped axis of those modes keeps an entry even without a pad ("zero
    effective input extent"); and in every mode the crops fit in the padded axis (no negative
    output size: ``y[crops - 1]``, where a slice would clamp)."""
    mode = ctx.attr_str("mode", "constant")
    copies = mode in ("reflect", "edge", "wrap")
    for a, (b, e) in enumerate(zip(before, after)):
        crop = max(-b, 0) + max(-e, 0)
        pad = max(b, e, 0)
        if crop:  # y is padded, not cropped yet: d + positive pads >= crops
            y = ss.ops.cast_like(y, ss.ops.take(y, ctx.constant([crop - 1], "int64"), axis=a, mode="fast"))
        if copies and (pad or crop or mode == "wrap"):  # (wrap: onnxruntime refuses any empty axis)
            i = crop + (pad if mode == "reflect" else 0)
            read = ss.ops.take(x, ctx.constant([i], "int64"), axis=a, mode="fast")
            y = ss.ops.cast_like(y, read)
    return y


@register("Pad", since=1)
def _pad_v1(ctx: NodeContext) -> Outputs:
    pads = ctx.attr_ints("paddings" if ctx.opset < 2 else "pads")
    if pads is None:
        ctx.fail(BAD_ATTRIBUTE, "attribute 'pads' is required")
    return _pad(ctx, pads, None)


@register("Pad", since=2)
def _pad_v2(ctx: NodeContext) -> Outputs:
    pads = ctx.attr_ints("pads")
    if pads is None:
        ctx.fail(BAD_ATTRIBUTE, "attribute 'pads' is required")
    return _pad(ctx, pads, None)


@register("Pad", since=11, value_inputs=(1, 3))
def _pad_v11(ctx: NodeContext) -> Outputs:
    axes = ctx.opt_ints(3, "the axes") if ctx.opset >= 18 else None
    if ctx.const(1) is None and ctx.value_of(1) is None:
        return _pad_values(ctx, axes)
    return _pad(ctx, ctx.ints(1, "the pads"), axes)


def _pad_values(ctx: NodeContext, axes: tuple[int, ...] | None) -> Expr:
    """``Pad`` by pads computed at run time: the output's shape is ``x.shape + begins + ends`` (a
    negative pad crops), computed on shape values; the result is a tensor of that shape and
    ``x``'s dtype."""
    x = ctx.input(0)
    r = ctx.need_rank(0, "Pad by pads computed at run time")
    pads = flat_value(ctx, 1)  # (TorchScript's F.pad moves the pads through a (rank, 2) tensor)
    if axes is None:
        k, where = r, list(range(r))
    else:
        where = norm_axes(ctx, axes, r)
        k = len(where)

    def side(offset: int) -> Expr:
        parts: list[Expr] = []
        for a in range(r):
            if a in where:
                j = offset + where.index(a)
                parts.append(value_slice(pads, [j], [j + 1]))
            else:
                parts.append(ctx.constant([0], "int64"))
        return ss.ops.concatenate(parts, axis=0) if r > 1 else parts[0]

    pads = ss.ops.reshape(pads, (2 * k,))  # as many pads as axes (checked)
    target = ss.ops.add(ss.ops.add(ss.ops.shape_of(x), side(0)), side(k))
    y = ss.ops.cast_like(ss.ops.zeros(target, "float32"), x)
    mode = ctx.attr_str("mode", "constant")
    if mode not in ("reflect", "edge", "wrap"):
        return y
    # the modes' reads (see _mode_reads) on the pads' values: of each padded axis after its
    # crops, entry max(b, e, 0) (reflect) or 0; where the pads' values are unknown, no condition
    zero = ctx.constant([0], "int64")
    for j, a in enumerate(where):
        b, e = value_slice(pads, [j], [j + 1]), value_slice(pads, [k + j], [k + j + 1])
        begin = ss.ops.maximum(ss.ops.negative(b), zero)
        d = value_slice(ss.ops.shape_of(x), [a], [a + 1])
        end = ss.ops.subtract(d, ss.ops.maximum(ss.ops.negative(e), zero))
        cropped = value_slice(x, begin, end, axes=[a])
        i = ss.ops.maximum(ss.ops.maximum(b, e), zero) if mode == "reflect" else zero
        y = ss.ops.cast_like(y, ss.ops.take(cropped, i, axis=a, mode="nonnegative"))
    if mode == "wrap":  # (onnxruntime refuses wrap of an input with any empty axis, padded or not)
        for a in range(r):
            if a not in where:
                y = ss.ops.cast_like(y, ss.ops.take(x, ctx.constant([0], "int64"), axis=a, mode="fast"))
    return y
