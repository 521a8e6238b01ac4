"""Indexing: ``Gather``, ``GatherElements``, ``GatherND``, ``ScatterElements``, ``ScatterND``,
``Scatter``, ``TensorScatter``, ``TopK``, ``OneHot``, ``Compress``, and the data-dependent
``NonZero``, ``Unique``, ``NonMaxSuppression``.

* ``Gather`` is symshape's ``take`` along ``axis``:
  ``data.shape[:axis] + indices.shape + data.shape[axis+1:]``; of a valued tensor (a shape) with
  constant indices it has the entries' value.
* ``GatherElements`` is :func:`symshape.ops.gather.gather_elements` in mode ``fast``: the
  indices' shape (at most the data's off ``axis``: onnxruntime's rule), the data's dtype, and
  indices of known range within ``-d <= i < d`` (the indices' shape and the data's dtype where
  neither rank is known).
* ``GatherND`` with ``k = indices.shape[-1]`` (a constant) and ``b = batch_dims``:
  ``indices.shape[:-1] + data.shape[b+k:]``, built as ``k`` calls of ``take`` in mode ``fast``, one per
  index column ``j`` (``indices[..., j]``) reading data axis ``b + j``: the first with
  ``batch_dims=b`` (which also checks that the batch axes agree), each later one with the
  indices' leading axes as batch axes. Each column whose value range is known must lie in its
  axis (``-d <= i < d``, onnxruntime's bound; of constant indices, each column's own range). A
  symbolic ``k`` is used when one length in ``[0, rank(data) - b]`` lies in its range (a guard
  ``k ==`` it); otherwise (or with a rank unknown) the output's rank is only known at run time:
  a tensor of unknown rank of the data's dtype, once ``k <= rank(data) - b`` and the batch axes
  agree (where both ranks are known).
* The scatters give the data's type; the updates must have the shape of what the indices read
  (``GatherElements``'s result for ``ScatterElements``, ``GatherND``'s for ``ScatterND``, the
  cache's with at most its size at ``axis`` for ``TensorScatter``).
* ``TopK``: the input with ``k`` at ``axis`` (``k`` computed at run time: its value), at most
  the axis' size; indices ``int64``.
* ``OneHot``: the indices (rank >= 1) with a new axis of size ``depth`` at ``axis``, the values'
  dtype (exactly two values); a depth computed at run time gives an axis of its value (>= 1).
* ``Compress`` with a constant condition keeps as many entries as it has true values, which
  must lie in the axis (numpy's rule; onnxruntime ignores the condition's entries past the axis).
* ``NonZero``, ``Unique`` and ``NonMaxSuppression`` have sizes that depend on the data: they are
  evaluated when their inputs are constants, otherwise the size is a fresh symbol (``u0``, ... for
  ``NonZero`` and ``Unique``, named by inference; ``selected_<k>`` for ``NonMaxSuppression``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import symshape as ss
from symshape import Expr
from symshape.encoding.dim_bounds import bounds
from symshape.errors import BAD_ATTRIBUTE, RANK_MISMATCH
from symshape.ir.nodes import Call
from symshape.ir.op import Op
from symshape.onnx.context import NodeContext
from symshape.onnx.ops.common import checked, same_as_input, set_dim, stacked, to_int64, value_slice
from symshape.onnx.registry import Outputs, register
from symshape.ops.gather import gather_elements

__all__: list[str] = []


@register("Gather", since=1)
def _gather(ctx: NodeContext) -> Outputs:
    # "fast": a negative index reads from the end (ONNX), so a valued input (a shape) gives the
    # entries' value; the type does not depend on the mode
    return ss.ops.take(ctx.input(0), ctx.input(1), axis=ctx.attr_int("axis", 0), mode="fast")


@register("GatherElements", since=11)
def _gather_elements(ctx: NodeContext) -> Outputs:
    data, ind = ctx.input(0), ctx.input(1)
    r = ctx.rank(0) or ctx.rank(1)
    if r is None:  # the indices' shape, the data's dtype
        return ss.ops.cast_like(ind, data)
    axis = ctx.attr_int("axis", 0)
    if not -r <= axis < r:
        ctx.fail(BAD_ATTRIBUTE, f"axis {axis} is out of range for rank {r}")
    return gather_elements(data, ind, axis % r, r, mode="fast")


@register("GatherND", since=11)
def _gather_nd(ctx: NodeContext) -> Outputs:
    b = ctx.attr_int("batch_dims", 0) if ctx.opset >= 12 else 0
    y = _gather_nd_of(ctx, b)
    if y is None:
        y = _gather_nd_fixed_k(ctx, b)
    return y


def _gather_nd_of(ctx: NodeContext, b: int) -> Expr | None:
    """``GatherND`` of inputs 0 and 1; None when the indices' last dimension is not a constant."""
    t = ctx.tensor_type(1)
    if t is None or t.ndim is None or t.ndim < 1 or not t.dims[-1].is_constant:
        return None
    return _gather_nd_k(ctx.input(0), ctx.input(1), int(t.dims[-1]), t.ndim - 1, b, ctx.const(1))


def _gather_nd_fixed_k(ctx: NodeContext, b: int) -> Expr:
    """``GatherND`` whose index length ``k`` (the indices' last dimension) is symbolic: the output
    has rank ``rank(indices) - 1 + rank(data) - b - k``. When a single length in
    ``[0, rank(data) - b]`` lies in ``k``'s range (data of rank ``b + 1`` and ``k >= 1``:
    ``k == 1``), ``k`` equals it (a guard); otherwise (or with a rank unknown) the output has
    unknown rank and the data's dtype (:func:`_gather_nd_unranked`)."""
    t, r = ctx.tensor_type(1), ctx.rank(0)
    if t is None or t.ndim is None or t.ndim < 1 or r is None:
        return _gather_nd_unranked(ctx, b)
    lo, hi = bounds(t.dims[-1])
    fits = [v for v in range(r - b + 1) if lo <= v <= hi]
    if len(fits) != 1:
        return _gather_nd_unranked(ctx, b)
    return _gather_nd_k(ctx.input(0), _of_length(ctx.input(1), fits[0]), fits[0], t.ndim - 1, b)


def _gather_nd_unranked(ctx: NodeContext, b: int) -> Expr:
    """``GatherND`` whose output rank is only known at run time: a tensor of unknown rank of the
    data's dtype. With both ranks known it is of shape ``indices.shape[:-1] + data.shape[b+k:]``
    (a shape value of symbolic length), once ``k <= rank(data) - b`` and the batch axes agree
    (onnxruntime's checks)."""
    data, ind = ctx.input(0), ctx.input(1)
    sd, si = ss.ops.shape_of(data), ss.ops.shape_of(ind)
    checks: list[Expr] = []
    r = ctx.rank(0)
    if r is None or ctx.rank(1) is None:
        shape: Expr = ss.ops.concatenate([si, sd])  # of unknown length
    else:
        bk = ss.ops.add(ss.ops.take(si, _i64(-1), mode="fast"), _i64(b))
        # the axes the index tuples read, b .. b + k - 1, must be data's: k <= rank(data) - b
        checks.append(ss.ops.take(sd, ss.ops.arange(_i64(b), bk), mode="nonnegative"))
        if b:  # data.shape[:b] == indices.shape[:b]
            checks.append(stacked(*(ss.ops.full(0.0, value_slice(s, [0], [b])) for s in (sd, si))))
        rest = ss.ops.take(sd, ss.ops.arange(bk, _i64(r)))
        shape = ss.ops.concatenate([value_slice(si, [0], [-1]), rest])
    return checked(ss.ops.cast_like(ss.ops.full(0.0, shape), data), checks)


def _i64(v: int) -> Expr:
    return ss.const(np.array(v, dtype=np.int64))


def _of_length(ind: Expr, k: int) -> Expr:
    """The indices ``ind`` with their last dimension ``k``, once it equals ``k`` (a guard)."""
    return ss.ops.take(stacked(set_dim(ind, -1, k), ind), ss.const(np.array(0, dtype=np.int64)), axis=0)


def _gather_nd_k(
    data: Expr, ind: Expr, k: int, lead: int, b: int, value: np.ndarray[Any, Any] | None = None
) -> Expr:
    """``GatherND`` of ``data`` by ``ind`` (of rank ``lead + 1``, index tuples of length ``k``);
    ``value``: the indices' entries when they are a constant (each column then has its own
    range, where a column taken from the tensor would have the whole tensor's)."""
    if k == 0:  # each index tuple selects the whole slice data.shape[b:]
        rows = ss.ops.sum(ind, axis=-1)  # indices.shape[:-1] (a sum over the empty axis: zeros)
        return ss.ops.take(ss.ops.expand_dims(data, b), rows, axis=b, batch_dims=b)
    y: Expr = data
    for j in range(k):  # column j indexes data axis b + j: a negative index reads from the end
        if value is not None:
            col: Expr = ss.const(np.array(value[..., j], dtype=np.int64))
        else:
            col = ss.ops.take(ind, ss.const(np.array(j, dtype=np.int64)), axis=-1, mode="fast")
        at = b if j == 0 else lead  # after the first take, y's leading axes are indices.shape[:-1]
        y = ss.ops.take(y, col, axis=at, batch_dims=at, mode="fast")
    return y


def _scattered(ctx: NodeContext, read: Expr | None) -> Expr:
    """The data's type, once the updates (input 2) have the shape of ``read``, what the indices
    read from the data (onnxruntime's checks; stacking the two needs the same shape)."""
    data = ctx.input(0)
    if read is None:
        return ss.ops.copy(data)
    with ctx.checking("the updates have the shape of what the indices address in the data"):
        return ss.ops.cast_like(data, stacked(ss.ops.cast_like(read, data), ctx.input(2)))


@register("Scatter", since=9)
@register("ScatterElements", since=11)
def _scatter_elements(ctx: NodeContext) -> Outputs:
    r = ctx.rank(0)
    axis = ctx.attr_int("axis", 0)
    if r is None:
        return _scattered(ctx, None)
    if not -r <= axis < r:  # (a scalar has no axis: onnxruntime refuses it too)
        ctx.fail(BAD_ATTRIBUTE, f"axis {axis} is out of range for rank {r}")
    return _scattered(ctx, gather_elements(ctx.input(0), ctx.input(1), axis % r, r, mode="fast"))


@register("ScatterND", since=11)
def _scatter_nd(ctx: NodeContext) -> Outputs:
    read = _gather_nd_of(ctx, 0)
    r, q, u = ctx.rank(0), ctx.rank(1), ctx.rank(2)
    if read is None and r is not None and q is not None and q >= 1 and u is not None:
        # the index tuples' length k is symbolic: the updates' rank q - 1 + r - k fixes it
        k = q - 1 + r - u
        if not 0 <= k <= r:
            ctx.fail(RANK_MISMATCH, f"updates of rank {u} fit no index length for data of rank {r} "
                     f"and indices of rank {q}")  # fmt: skip
        read = _gather_nd_k(ctx.input(0), _of_length(ctx.input(1), k), k, q - 1, 0)
    return _scattered(ctx, read)


@register("TensorScatter", since=24)
def _tensor_scatter(ctx: NodeContext) -> Outputs:
    """The cache's type; the update has the cache's shape but at ``axis`` (not 0), where it is at
    most the cache's; the write indices are ``(batch,)`` (the spec and the reference's checks)."""
    past, upd = ctx.input(0), ctx.input(1)
    r = ctx.rank(0) or ctx.rank(1)
    if r is None:
        return same_as_input(ctx)
    axis = ctx.attr_int("axis", -2)
    if not -r <= axis < r or axis % r == 0:
        ctx.fail(BAD_ATTRIBUTE, f"axis {axis} is out of range or the batch axis for rank {r}")
    a = axis % r
    seq = ss.ops.take(ss.ops.shape_of(upd), ss.const(np.array(a, dtype=np.int64)))
    # the cache's first `seq` entries along the axis: the update's shape, when seq <= max
    with ctx.checking(f"the update is the cache's shape but for axis {a}, where it is no longer"):
        fits = ss.ops.take(past, ss.ops.arange(seq), axis=a, mode="nonnegative")
        checks = [stacked(fits, upd)]
    if ctx.has_input(2):
        with ctx.checking("write_indices is (batch,), the cache's"):
            batch = ss.ops.sum(past, axis=tuple(range(1, r)))  # (batch,)
            checks.append(stacked(batch, ctx.input(2)))
    y: Expr = ss.ops.copy(past)
    for check in checks:
        y = ss.ops.cast_like(y, check)
    return y


def _topk(ctx: NodeContext, k: int | Expr) -> Outputs:
    """The first ``k`` entries along the axis (a ``take`` of ``arange(k)``: a ``k`` larger than the
    axis is out of range, as onnxruntime refuses it)."""
    if isinstance(k, int):
        if k < 0:
            ctx.fail(BAD_ATTRIBUTE, f"k must be non-negative, got {k}")
        k = ss.const(np.array(k, dtype=np.int64))
    y = ss.ops.take(ctx.input(0), ss.ops.arange(k), axis=ctx.attr_int("axis", -1), mode="nonnegative")
    return [y, to_int64(y)]


@register("TopK", since=1)
def _topk_v1(ctx: NodeContext) -> Outputs:
    return _topk(ctx, ctx.attr_int("k"))


@register("TopK", since=10, value_inputs=(1,))
def _topk_v10(ctx: NodeContext) -> Outputs:
    if ctx.const(1) is None:  # computed at run time (``x.topk(x.size(1) // 2)``): its value
        return _topk(ctx, ss.ops.take(ctx.input(1), ss.const(np.array(0, dtype=np.int64))))
    k = ctx.ints(1, "k")
    if len(k) != 1:
        ctx.fail(BAD_ATTRIBUTE, f"k must have one value, got {len(k)}")
    return _topk(ctx, k[0])


@register("OneHot", since=9, value_inputs=(1,))
def _one_hot(ctx: NodeContext) -> Outputs:
    """The indices (rank >= 1: onnx's inference and onnxruntime refuse a scalar) with a new axis of
    size ``depth`` at ``axis``, of the values' dtype (the values: exactly two entries)."""
    ind = ctx.input(0)
    if ctx.rank(0) == 0:
        ctx.fail(RANK_MISMATCH, "the indices must have rank >= 1, got a scalar")
    axis = ctx.attr_int("axis", -1)
    with ctx.checking("values has two entries (off value, on value)"):
        values = stacked(ctx.input(2), ss.ops.zeros((2,), "float32"))  # (off value, on value)
    depth_v = ctx.const(1)
    if depth_v is None:  # computed at run time (a size): an axis of its value, cast to int64
        hot = ss.ops.arange(ss.ops.reshape(ss.ops.cast(ctx.input(1), "int64"), ()))
        # onnxruntime refuses a depth < 1 ("Depth is negative"): entry 0 of the axis must exist
        first = ss.ops.take(hot, ss.const(np.array(0, dtype=np.int64)), axis=0, mode="nonnegative")
        y = ss.ops.take(ss.ops.expand_dims(ind, axis), hot, axis=axis)
        return ss.ops.add(ss.ops.cast_like(y, values), ss.ops.cast_like(first, values))
    depth_v = depth_v.reshape(-1)
    if depth_v.size != 1:
        ctx.fail(BAD_ATTRIBUTE, f"depth must have one value, got {depth_v.size}")
    depth = int(depth_v[0])
    if depth < 1:
        ctx.fail(BAD_ATTRIBUTE, f"depth must be >= 1, got {depth}")
    return ss.ops.cast_like(set_dim(ss.ops.expand_dims(ind, axis), axis, depth), values)


@register("Compress", since=9, value_inputs=(1,))
def _compress(ctx: NodeContext) -> Outputs:
    cond = ctx.require_const(1, "the condition").reshape(-1)
    # the entries it keeps, read by take: each must exist (numpy's and the reference's check;
    # onnxruntime instead ignores a condition's entries past the axis)
    kept = ss.const(np.flatnonzero(cond).astype(np.int64))
    x = ctx.input(0)
    if ctx.has_attr("axis"):
        return ss.ops.take(x, kept, axis=ctx.attr_int("axis"), mode="nonnegative")
    return ss.ops.take(x, kept, mode="nonnegative")


@register("NonZero", since=9)
def _nonzero(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    shape = _filled_shape(x)
    r = None if shape is None else ctx.rank(0)
    if shape is not None and r:
        return _every_index(ctx, shape, r)
    return ss.ops.nonzero(x)  # (rank, u): u named by inference (u0, u1, ...)


def _filled_shape(x: Expr) -> Expr | None:
    """The shape operand of ``x`` when ``x`` is a ``ConstantOfShape`` filled with a non-zero value
    (none of its entries is 0), else None."""
    if isinstance(x, Call) and isinstance(x.callee, Op) and x.callee.name == "constant_of_shape":
        fill = x.attrs.get("value")
        if isinstance(fill, (int, float)) and fill != 0:
            return x.args[0]
    return None


def _every_index(ctx: NodeContext, shape: Expr, r: int) -> Expr:
    """``NonZero`` of a tensor of ``shape`` (rank ``r >= 1``) with no zero entry: every index in
    row-major order, ``(r, numel)``; row ``k`` is ``(arange(numel) // stride_k) % d_k``. (The
    TorchScript exporter writes ``arange(n)`` as ``NonZero(ConstantOfShape(n, 1))``: Longformer
    has 20 of them; a fresh size there lost every shape after it.)"""
    ds = [ss.ops.take(shape, ctx.constant(k, "int64")) for k in range(r)]
    numel: Expr = ds[0]
    for d in ds[1:]:
        numel = ss.ops.multiply(numel, d)
    idx = ss.ops.arange(0, numel, dtype="int64")
    rows: list[Expr] = []
    stride: Expr | None = None
    for k in reversed(range(r)):
        q = idx if stride is None else ss.ops.floor_divide(idx, stride)
        rows.append(ss.ops.expand_dims(q if k == 0 else ss.ops.mod(q, ds[k]), 0))
        stride = ds[k] if stride is None else ss.ops.multiply(stride, ds[k])
    return ss.ops.concatenate(rows[::-1], axis=0)


def _others(rank: int, axis: int) -> list[int]:
    return [a for a in range(rank) if a != axis]


@register("Unique", since=11)
def _unique(ctx: NodeContext) -> Outputs:
    """``Y`` has ``u`` distinct elements (or slices along ``axis``); ``indices`` and ``counts``
    are ``(u,)``, ``inverse_indices`` one per element (or slice) of the input; all ``int64``."""
    x = ctx.input(0)
    if not ctx.has_attr("axis"):
        y = ss.ops.unique(x)
        per_u: Expr = ss.ops.cast(y, "int64")
        inverse: Expr = ss.ops.reshape(ss.ops.cast(x, "int64"), (-1,))
    else:
        axis = ctx.attr_int("axis")
        r = ctx.need_rank(0, "Unique with an axis")
        if not -r <= axis < r:
            ctx.fail(BAD_ATTRIBUTE, f"axis {axis} is out of range for rank {r}")
        ax = axis + r if axis < 0 else axis
        y = ss.ops.unique(x, axis=ax)
        per_u = ss.ops.cast(ss.ops.sum(y, axis=_others(r, ax)) if r > 1 else y, "int64")
        inverse = ss.ops.cast(ss.ops.sum(x, axis=_others(r, ax)) if r > 1 else x, "int64")
    return [y, per_u, inverse, per_u]


@register("NonMaxSuppression", since=10)
def _nms(ctx: NodeContext) -> Outputs:
    """``(u, 3)`` ``int64`` (batch, class, box) of the ``u`` selected boxes: a fresh size. The
    boxes are ``(B, N, 4)``, the scores ``(B, C, N)`` (the spec; onnxruntime's check)."""
    boxes, scores = ctx.input(0), ctx.input(1)
    with ctx.checking("boxes' last axis is 4"):
        checks = [stacked(set_dim(boxes, -1, 4), boxes)]
    with ctx.checking("boxes (B, N, 4) and scores (B, C, N) have one B and one N"):
        checks.append(stacked(ss.ops.sum(boxes, axis=2), ss.ops.cast_like(ss.ops.sum(scores, axis=1), boxes)))
    return checked(ss.ops.zeros((ctx.fresh_dim("selected"), 3), "int64"), checks)
