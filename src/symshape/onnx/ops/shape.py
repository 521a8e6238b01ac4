"""Shape manipulation: ``Reshape``, ``Flatten``, ``Squeeze``, ``Unsqueeze``, ``Transpose``,
``Concat``, ``Split``, ``Expand``, ``Tile``, ``DepthToSpace``, ``SpaceToDepth``, ``CenterCropPad``
(``Pad``: :mod:`symshape.onnx.ops.pad`, ``Slice``: :mod:`symshape.onnx.ops.slice`), and the
operators that make shapes and constants: ``Constant``, ``ConstantOfShape``, ``Shape``, ``Size``,
``Range``, ``EyeLike``.

Sizes given as inputs (``Reshape``'s target, ``Slice``'s bounds, ...) are read as constants
where the model has them; ``Reshape``'s target and ``ConstantOfShape``'s shape may also be
computed at run time (symshape reads their shape values). ONNX semantics, per opset:

* ``Reshape``: 0 copies the input dimension at the same index (unless ``allowzero``), -1 is
  inferred; symshape's ``reshape`` has the same rule for these two values and checks the element
  count (a guard where it depends on symbols).
* ``Split`` by sizes splits at their running sums, and the sizes must add up to the axis' length
  (an error, or a guard ``d == sum`` where the axis is symbolic); without sizes into equal parts
  (one per output; the axis must divide); opset 18's ``num_outputs`` makes the last part smaller
  when the axis does not divide, which needs the axis' size as a constant.
* ``Tile``: ``(d0, d1) * (r0, r1)`` is ``(r0*d0, r1*d1)``: a size-1 axis before each axis,
  broadcast to the repeats, adjacent axes merged.
* ``DepthToSpace``/``SpaceToDepth``: the reshape-transpose-reshape of the ONNX definition (both
  modes), with the divisibility conditions as guards.
* ``Shape``/``Size`` of a static shape are folded to constants by the importer; otherwise
  ``Shape`` is ``shape_of`` (sliced by ``start``/``end``) and ``Size`` the product of its entries,
  both carrying their values.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import symshape as ss
from symshape import Expr
from symshape.encoding.values import MAX_VALUE_LEN, VALUE_DTYPES
from symshape.errors import BAD_ATTRIBUTE, RANK_MISMATCH
from symshape.onnx.context import CORE_OP, DTYPE, LEGACY, NodeContext
from symshape.onnx.dtypes import DTYPES
from symshape.onnx.ops.common import (
    PlanTable,
    checked,
    expand,
    prepared,
    set_dim,
    tuple_of,
    unsqueeze,
    value_slice,
)
from symshape.onnx.ops.index_maps import flat_value
from symshape.onnx.registry import Outputs, register

__all__: list[str] = []


# ----------------------------------------------------------------------------------------------
# reshape, flatten, squeeze, unsqueeze, transpose


def _reshape(ctx: NodeContext, x: Expr, shape: tuple[int, ...], allowzero: bool) -> Expr:
    for s in shape:
        if s < -1:
            ctx.fail(BAD_ATTRIBUTE, f"the target shape {list(shape)} has the invalid value {s}")
    if type(shape) is tuple and type(allowzero) is bool:  # (the call prepared once per target)
        p = prepared(("reshape", shape, allowzero), ss.ops.reshape, 1, newshape=shape, allowzero=allowzero)
        if p is not None:
            return p.build(x)
    return ss.ops.reshape(x, shape, allowzero=allowzero)


@register("Reshape", since=1)
def _reshape_v1(ctx: NodeContext) -> Outputs:
    shape = ctx.attr_ints("shape")
    if shape is None:
        ctx.fail(BAD_ATTRIBUTE, "attribute 'shape' is required")
    return _reshape(ctx, ctx.input(0), shape, False)


@register("Reshape", since=5, value_inputs=(1,))
def _reshape_v5(ctx: NodeContext) -> Outputs:
    allowzero = bool(ctx.attr("allowzero", 0)) if ctx.opset >= 14 else False
    if ctx.const(1) is None:  # computed at run time: its value (0 copies, -1 infers)
        return ss.ops.reshape(ctx.input(0), flat_value(ctx, 1), allowzero=allowzero)
    return _reshape(ctx, ctx.input(0), ctx.ints(1, "the target shape"), allowzero)


@register("Flatten", since=1)
def _flatten(ctx: NodeContext) -> Outputs:
    return ss.ops.flatten(ctx.input(0), axis=ctx.attr_int("axis", 1))


def _squeeze(ctx: NodeContext, axes: tuple[int, ...] | None) -> Expr:
    return ss.ops.squeeze(ctx.input(0), axis=None if axes is None else tuple(axes))


@register("Squeeze", since=1)
def _squeeze_v1(ctx: NodeContext) -> Outputs:
    return _squeeze(ctx, ctx.attr_ints("axes"))


@register("Squeeze", since=13, value_inputs=(1,))
def _squeeze_v13(ctx: NodeContext) -> Outputs:
    return _squeeze(ctx, ctx.opt_ints(1, "the axes"))


@register("Unsqueeze", since=1)
def _unsqueeze_v1(ctx: NodeContext) -> Outputs:
    # the axes by the node's attribute bytes (equal bytes, equal attributes: one serialization
    # instead of reading the attribute; a model has many Unsqueeze nodes of a few axes)
    key = ctx.attribute_bytes()
    axes = None if key is None else _AXES.get(key)
    if axes is None:
        axes = ctx.attr_ints("axes")
        if axes is None:
            ctx.fail(BAD_ATTRIBUTE, "attribute 'axes' is required")
        if key is not None:
            _AXES.put(key, axes)
    return unsqueeze(ctx, ctx.input(0), axes)


#: the axes of Unsqueeze nodes (opsets 1-12) by their attribute bytes (NodeContext.attribute_bytes)
_AXES: PlanTable[bytes, tuple[int, ...]] = PlanTable(__name__)


@register("Unsqueeze", since=13, value_inputs=(1,))
def _unsqueeze_v13(ctx: NodeContext) -> Outputs:
    return unsqueeze(ctx, ctx.input(0), ctx.ints(1, "the axes"))


@register("Transpose", since=1)
def _transpose(ctx: NodeContext) -> Outputs:
    perm = ctx.attr_ints("perm")
    if perm is not None:  # (the call prepared once per permutation)
        p = prepared(("transpose", perm), ss.ops.transpose, 1, axes=list(perm))
        if p is not None:
            return p.build(ctx.input(0))
    return ss.ops.transpose(ctx.input(0), None if perm is None else list(perm))


# ----------------------------------------------------------------------------------------------
# concat, split, slice


@register("Concat", since=1)
def _concat(ctx: NodeContext) -> Outputs:
    axis = ctx.attr_int("axis", 1 if ctx.opset < 4 else None)
    xs = ctx.inputs()
    if not xs:
        ctx.fail(BAD_ATTRIBUTE, "Concat needs at least one input")
    # the call concatenate(xs) makes: of the tuple of the inputs, its attributes checked once per
    # axis (see common.prepared; a model has many Concat nodes of one axis)
    p = prepared(("concatenate", axis), _concatenate, 1, axis=axis)
    if p is None:
        return ss.ops.concatenate(xs, axis=axis)
    return p.build(tuple_of(xs))


def _concatenate(t: Expr, axis: int) -> Expr:
    """``concatenate`` of a tuple expression (its call's one argument)."""
    return ss.ops.concatenate(t, axis=axis)


def _split(ctx: NodeContext, sizes: tuple[int, ...] | None, num_outputs: int | None) -> Outputs:
    x = ctx.input(0)
    axis = ctx.attr_int("axis", 0)
    n = ctx.num_outputs
    if sizes is not None and len(sizes) > 0:
        if len(sizes) != n:
            ctx.fail(BAD_ATTRIBUTE, f"{len(sizes)} split sizes for {n} outputs")
        if any(s < 0 for s in sizes):
            ctx.fail(BAD_ATTRIBUTE, f"split sizes must be non-negative, got {list(sizes)}")
        cuts = tuple(int(v) for v in np.cumsum(sizes[:-1])) if n > 1 else ()
        parts = ss.ops.split(x, cuts, axis=axis, total=sum(sizes))  # the sizes must fill the axis
        return [parts[i] for i in range(n)]
    if num_outputs is not None:
        if num_outputs != n:
            ctx.fail(BAD_ATTRIBUTE, f"num_outputs={num_outputs} but the node has {n} outputs")
        shape = ctx.static_shape(0)
        if shape is None:
            t = ctx.tensor_type(0)
            r = t.ndim if t is not None else None
            if r is None:
                ctx.unsupported(CORE_OP, "Split by num_outputs over an axis of unknown size")
            ax = axis + r if axis < 0 else axis
            if 0 <= ax < r and t is not None and t.dims[ax].is_constant:
                shape_ax = int(t.dims[ax])
            else:
                return _split_ceil(ctx, x, axis, n)
        else:
            ax = axis + len(shape) if axis < 0 else axis
            if not 0 <= ax < len(shape):
                ctx.fail(BAD_ATTRIBUTE, f"axis {axis} is out of range for rank {len(shape)}")
            shape_ax = shape[ax]
        chunk = -(-shape_ax // n)
        if shape_ax < chunk * (n - 1):  # (onnxruntime refuses; the spec has no size for it)
            ctx.fail(BAD_ATTRIBUTE, f"num_outputs={n} over size {shape_ax}: the last part would be negative")
        sizes2 = [min(chunk, max(shape_ax - chunk * i, 0)) for i in range(n)]
        return _split(ctx, tuple(sizes2), None)
    parts = ss.ops.split(x, n, axis=axis)
    return [parts[i] for i in range(n)]


@register("Split", since=1, value_inputs=(1,))
def _split_v1(ctx: NodeContext) -> Outputs:
    sizes = ctx.attr_ints("split")
    if sizes is None and ctx.has_input(1):
        sizes = ctx.ints(1, "the split sizes")
    return _split(ctx, sizes, None)


@register("Split", since=2)
def _split_v2(ctx: NodeContext) -> Outputs:
    return _split(ctx, ctx.attr_ints("split"), None)


@register("Split", since=13, value_inputs=(1,))
def _split_v13(ctx: NodeContext) -> Outputs:
    num = ctx.attr("num_outputs") if ctx.opset >= 18 else None
    if num is not None and ctx.has_input(1):
        ctx.fail(BAD_ATTRIBUTE, "Split takes either the split input or num_outputs, not both")
    if ctx.has_input(1) and ctx.const(1) is None:
        return _split_values(ctx)
    return _split(ctx, ctx.opt_ints(1, "the split sizes"), num)


def _split_ceil(ctx: NodeContext, x: Expr, axis: int, n: int) -> Outputs:
    """``Split`` into ``n`` parts of ``ceil(d / n)`` along an axis of symbolic size ``d`` (the last
    parts smaller, or empty): part ``i`` is ``x[i*c : (i+1)*c]`` (slicing clamps), ``c`` computed
    from the axis' size as a shape value."""
    d = value_slice(ss.ops.shape_of(x), [axis], [axis + 1 if axis != -1 else None])
    c = ss.ops.floor_divide(ss.ops.add(d, ctx.constant([n - 1], "int64")), ctx.constant([n], "int64"))
    outs: list[Expr] = []
    for i in range(n):
        begin = ss.ops.multiply(c, ctx.constant([i], "int64"))
        end = ss.ops.multiply(c, ctx.constant([i + 1], "int64"))
        outs.append(value_slice(x, begin, end, axes=[axis]))
    if n >= 3:  # the last part d - (n - 1)*c is not negative (onnxruntime refuses it: d = 1, n = 3)
        last = ss.ops.subtract(d, ss.ops.multiply(c, ctx.constant([n - 1], "int64")))
        outs = [checked(o, [ss.ops.full(0.0, last)]) for o in outs]
    return outs


def _split_values(ctx: NodeContext) -> Outputs:
    """``Split`` by sizes computed at run time: part ``i`` is the slice from the sum of the sizes
    before it, as long as size ``i`` (their values; one size per output). The sizes must add up
    to the axis' length (:func:`_filled`)."""
    sizes = ss.ops.reshape(ctx.input(1), (ctx.num_outputs,))  # one size per output (checked)
    axis = ctx.attr_int("axis", 0)
    ends: list[Expr] = [ctx.constant([0], "int64")]
    for i in range(ctx.num_outputs):
        ends.append(ss.ops.add(ends[-1], value_slice(sizes, [i], [i + 1])))  # (1,): its value
    x = _filled(ctx, ctx.input(0), axis, ends[-1])
    return [value_slice(x, ends[i], ends[i + 1], axes=[axis]) for i in range(ctx.num_outputs)]


def _filled(ctx: NodeContext, x: Expr, axis: int, total: Expr) -> Expr:
    """``x`` reshaped to its own shape with the axis' length replaced by ``total`` (a value): the
    element counts agree exactly where ``total`` is that length, a guard (or an error) where the
    sizes' values are known, nothing to check where they are not. ``x`` where its rank is unknown."""
    r = ctx.rank(0)
    if r is None or not -r <= axis < r:
        return x
    ax = axis + r if axis < 0 else axis
    sh = ss.ops.shape_of(x)
    parts: list[Expr] = [total]
    if ax > 0:
        parts.insert(0, value_slice(sh, [0], [ax]))
    if ax < r - 1:
        parts.append(value_slice(sh, [ax + 1], [r]))
    target = parts[0] if len(parts) == 1 else ss.ops.concatenate(parts, axis=0)
    return ss.ops.reshape(x, target, allowzero=True)  # allowzero: a total of 0 is 0, not a copy


# ----------------------------------------------------------------------------------------------
# expand, tile (Pad: onnx/ops/pad.py)


@register("Expand", since=8, value_inputs=(1,))
def _expand(ctx: NodeContext) -> Outputs:
    if ctx.const(1) is None:  # computed at run time: its value
        return ss.ops.expand(ctx.input(0), ctx.input(1))
    return expand(ctx.input(0), ctx.sizes(1, "the shape"))


@register("Tile", since=1)
def _tile_v1(ctx: NodeContext) -> Outputs:
    ctx.unsupported(LEGACY, "Tile of opset 1 (tiles and axis inputs)")


@register("Tile", since=6, value_inputs=(1,))
def _tile(ctx: NodeContext) -> Outputs:
    if ctx.const(1) is None:  # computed at run time: its value (numpy's tile would pad it)
        k, rank = ctx.static_shape(1), ctx.rank(0)
        if k is not None and len(k) == 1 and rank is not None and k[0] != rank:
            ctx.fail(RANK_MISMATCH, f"{k[0]} repeats for an input of rank {rank}")
        return ss.ops.tile(ctx.input(0), ctx.input(1))
    reps = ctx.sizes(1, "the repeats")
    x = ctx.input(0)
    r = len(reps)
    if r == 0 or all(k == 1 for k in reps):
        rank = ctx.rank(0)
        if rank is not None and rank != r:
            ctx.fail(RANK_MISMATCH, f"{r} repeats for an input of rank {rank}")
        if r == 0:
            return ss.ops.copy(x)
    y = x
    for i in range(r):
        y = ss.ops.expand_dims(y, 2 * i)
    y = expand(y, [k for rep in reps for k in (rep, 1)])
    return ss.ops.reshape(y, (-3,) * r)


# ----------------------------------------------------------------------------------------------
# depth/space


def _block(ctx: NodeContext) -> int:
    b = ctx.attr_int("blocksize")
    if b < 1:
        ctx.fail(BAD_ATTRIBUTE, f"blocksize must be >= 1, got {b}")
    return b


@register("DepthToSpace", since=1)
def _depth_to_space(ctx: NodeContext) -> Outputs:
    b = _block(ctx)
    mode = ctx.attr_str("mode", "DCR", ("DCR", "CRD")) if ctx.opset >= 11 else "DCR"
    x = ctx.input(0)
    if mode == "DCR":  # (N, b, b, C/b², H, W)
        y = ss.ops.reshape(x, (0, -4, b, -1, 0, 0))
        y = ss.ops.reshape(y, (0, 0, -4, b, -1, 0, 0))
        y = ss.ops.transpose(y, [0, 3, 4, 1, 5, 2])
    else:  # (N, C/b², b, b, H, W)
        y = ss.ops.reshape(x, (0, -4, -1, b, 0, 0))
        y = ss.ops.reshape(y, (0, -4, -1, b, 0, 0, 0))
        y = ss.ops.transpose(y, [0, 1, 4, 2, 5, 3])
    return ss.ops.reshape(y, (0, 0, -3, -3))


@register("SpaceToDepth", since=1)
def _space_to_depth(ctx: NodeContext) -> Outputs:
    b = _block(ctx)
    y = ss.ops.reshape(ctx.input(0), (0, 0, -4, -1, b, -4, -1, b))  # (N, C, H/b, b, W/b, b)
    y = ss.ops.transpose(y, [0, 3, 5, 1, 2, 4])  # (N, b, b, C, H/b, W/b)
    y = ss.ops.reshape(y, (0, -3, 0, 0, 0))
    return ss.ops.reshape(y, (0, -3, 0, 0))


@register("CenterCropPad", since=18, value_inputs=(1,))
def _center_crop_pad(ctx: NodeContext) -> Outputs:
    shape = ctx.sizes(1, "the shape")
    axes = ctx.attr_ints("axes") or tuple(range(len(shape)))
    if len(axes) != len(shape):
        ctx.fail(BAD_ATTRIBUTE, f"{len(shape)} sizes for {len(axes)} axes")
    y, r = ctx.input(0), ctx.rank(0)
    for a, s in zip(axes, shape):
        if r is None or not -r <= a < r:
            y = set_dim(y, a, s)  # (its take checks the axis)
            continue
        # an empty axis is padded to s (both runtimes): emptied and padded, no take from the axis
        ax = a % r
        y = ss.ops.strided_slice(y, [0], [0], axes=[ax])
        y = ss.ops.pad(y, tuple((0, s if i == ax else 0) for i in range(r)))
    return y


# ----------------------------------------------------------------------------------------------
# constants and shapes


def _constant_value(ctx: NodeContext) -> np.ndarray[Any, Any]:
    for key in ("value", "sparse_value"):
        if ctx.has_attr(key):
            return np.asarray(ctx.attr(key))
    if ctx.has_attr("value_float"):
        return np.asarray(ctx.attr_float("value_float"), dtype=np.float32)
    if ctx.has_attr("value_floats"):
        return np.asarray(ctx.attr("value_floats"), dtype=np.float32)
    if ctx.has_attr("value_int"):
        return np.asarray(ctx.attr_int("value_int"), dtype=np.int64)
    if ctx.has_attr("value_ints"):
        return np.asarray(ctx.attr("value_ints"), dtype=np.int64)
    if ctx.has_attr("value_string") or ctx.has_attr("value_strings"):
        ctx.unsupported(DTYPE, "a string constant")
    ctx.fail(BAD_ATTRIBUTE, "Constant needs one value attribute")


@register("Constant", since=1)
def _constant(ctx: NodeContext) -> Outputs:
    arr = _constant_value(ctx)
    if arr.dtype.kind in "OSU":
        ctx.unsupported(DTYPE, "a string constant")
    try:
        return ss.const(arr)
    except ss.SymshapeError:
        ctx.unsupported(DTYPE, f"a constant of type {arr.dtype}")


@register("ConstantOfShape", since=9, value_inputs=(0,))
def _constant_of_shape(ctx: NodeContext) -> Outputs:
    dtype = "float32"
    fill = 0.0
    v: np.ndarray[Any, Any] | None = None
    if ctx.has_attr("value"):
        v = np.asarray(ctx.attr("value"))
        dtype = str(v.dtype)
        if v.dtype.kind in "OSU" or dtype not in DTYPES:
            ctx.unsupported(DTYPE, f"a value of type {dtype}")
        if v.size == 1 and v.dtype.kind in "iubf":  # (a float's fill: its entries' range)
            fill = float(v.reshape(-1)[0])
    if ctx.const(0) is None:  # computed at run time: its value
        return ss.ops.constant_of_shape(ctx.input(0), fill, dtype)
    shape = ctx.sizes(0, "the shape")
    if len(shape) <= 1 and dtype in VALUE_DTYPES and math.prod(shape) <= MAX_VALUE_LEN:
        # a small int tensor: a constant carrying its entries
        fill_value = v.reshape(-1)[0] if v is not None and v.size == 1 else 0
        return ss.const(np.full(shape, fill_value, dtype=dtype))
    # a constant of its shape (no call: a model's weights are often ConstantOfShape nodes)
    return ss.Constant(shape=shape, dtype=dtype)


@register("Shape", since=1)
def _shape(ctx: NodeContext) -> Outputs:
    # the importer folds the shape of a static tensor; here it is not static: its value
    y = ss.ops.shape_of(ctx.input(0))
    if ctx.opset >= 15:
        start = ctx.attr_int("start", 0)
        end = ctx.attr("end")
        if start != 0 or end is not None:
            e = None if end is None else int(end)
            return value_slice(y, [start], [e])
    return y


@register("Size", since=1)
def _size(ctx: NodeContext) -> Outputs:
    r = ctx.rank(0)
    if r is None:  # the type only
        return ss.ops.cast(ss.ops.sum(ss.ops.zeros_like(ctx.input(0)), axis=None), "int64")
    if r == 0:
        return ctx.constant(1, "int64")
    sh = ss.ops.shape_of(ctx.input(0))
    y: Expr = ss.ops.take(sh, ctx.constant(0, "int64"))
    for i in range(1, r):
        y = ss.ops.multiply(y, ss.ops.take(sh, ctx.constant(i, "int64")))
    return y


@register("Range", since=11, value_inputs=(0, 1, 2))
def _range(ctx: NodeContext) -> Outputs:
    if any(ctx.const(i) is None for i in range(3)):  # computed at run time: their values
        return ss.ops.arange(ctx.input(0), ctx.input(1), ctx.input(2))
    vals = [ctx.require_const(i, ("the start", "the limit", "the delta")[i]) for i in range(3)]
    start, limit, delta = (float(v.reshape(-1)[0]) for v in vals)
    if delta == 0:
        ctx.fail(BAD_ATTRIBUTE, "Range's delta must not be 0")
    n = max(math.ceil((limit - start) / delta), 0)
    return ss.Constant(shape=(n,), dtype=str(vals[0].dtype))


@register("EyeLike", since=9)
def _eye_like(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    rank = ctx.rank(0)
    if rank is not None and rank != 2:
        ctx.fail(RANK_MISMATCH, f"EyeLike needs a 2-d input, got rank {rank}")
    if ctx.has_attr("dtype"):
        return ss.ops.cast(x, ctx.attr_dtype("dtype"))
    return ss.ops.zeros_like(x)
