"""``Slice``: numpy slicing per axis (clamped, negative indices and steps), ``strided_slice``.

* Opset 1 has ``starts``, ``ends`` and ``axes`` attributes; from opset 10 they are inputs, with
  ``steps``. Bounds computed at run time are read as values; one that may be negative is counted
  from the end of its axis first (``strided_slice`` reads a symbolic index from the start). On a
  negative step ONNX clamps a start below ``-d`` to 0 (numpy to -1, empty).
* Axes computed at run time (an ``axes`` input whose value is not known): the output has the
  input's rank, and which axes are sliced is the run's, so each output size is one the run
  decides (a ``?``, which may be 0), except where every entry's bounds leave that axis whole
  (constant bounds such as ``[0, INT64_MAX)`` step 1, or an axis of size 0): the input's
  dimension. onnxruntime needs the axes within the rank ("'axes' has an axis outside of the
  tensor dimension count") and distinct ("'axes' has duplicates"; onnx's reference evaluator
  lets a repeated axis' last entry win, and symshape follows onnxruntime): more axes than the
  rank is an error, an axis out of range a guard where the axes carry a value range (a ``take``
  of the input's shape by them). Where their entries are known sizes (``Shape(x)[0] - 1``),
  no two may name the same axis (``a != b``, ``a - b != r`` for a rank ``r``): a guard; entries
  the run decides cannot be checked. A scalar cannot be sliced by them (onnxruntime: "Cannot
  slice scalars").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np

import symshape as ss
from symshape import Expr
from symshape.encoding.conds import TRUE, all_of, ne
from symshape.encoding.dim_bounds import bounds
from symshape.encoding.dims import Dim, fresh_any
from symshape.encoding.types import Attrs, Type
from symshape.errors import AXIS_OUT_OF_RANGE, BAD_ATTRIBUTE
from symshape.onnx.context import NodeContext
from symshape.onnx.ops.common import checked, value_slice
from symshape.onnx.registry import Outputs, register
from symshape.relations.base import Context, Lazy
from symshape.relations.index import slice_len
from symshape.relations.operands import tensor_or_defer
from symshape.relations.values import entries_of

__all__: list[str] = []


def _slice(
    ctx: NodeContext,
    starts: tuple[int, ...],
    ends: tuple[int, ...],
    axes: tuple[int, ...] | None,
    steps: tuple[int, ...] | None,
) -> Expr:
    if len(starts) != len(ends):
        ctx.fail(BAD_ATTRIBUTE, f"{len(starts)} starts but {len(ends)} ends")
    if axes is not None and len(axes) != len(starts):
        ctx.fail(BAD_ATTRIBUTE, f"{len(axes)} axes for {len(starts)} starts")
    if steps is not None:
        if len(steps) != len(starts):
            ctx.fail(BAD_ATTRIBUTE, f"{len(steps)} steps for {len(starts)} starts")
        if any(s == 0 for s in steps):
            ctx.fail(BAD_ATTRIBUTE, "Slice steps must not be 0")
    if axes is None:
        axes = tuple(range(len(starts)))
    if len(set(axes)) != len(axes):
        ctx.fail(BAD_ATTRIBUTE, f"Slice axes {list(axes)} repeat an axis")
    if any(a < 0 for a in axes) and any(a >= 0 for a in axes):
        r = ctx.rank(0)
        if r is not None and len(set(a + r if a < 0 else a for a in axes)) != len(axes):
            ctx.fail(BAD_ATTRIBUTE, f"Slice axes {list(axes)} repeat an axis")
    if not starts:
        return ss.ops.copy(ctx.input(0))
    begin: Expr | list[int | None] = list(starts)
    r = ctx.rank(0) if steps is not None and any(t < 0 and s < -1 for s, t in zip(starts, steps)) else None
    if r is not None and steps is not None:
        # on a negative step ONNX clamps a start below -d to 0 (the first element is taken),
        # numpy's strided_slice to -1 (empty): such a start is max(d + s, 0), from the start
        sizes, i64 = ss.ops.shape_of(ctx.input(0)), "int64"
        parts = []
        for s, t, a in zip(starts, steps, axes):
            e = ctx.constant(s, i64)
            if t < 0 and s < -1 and -r <= a < r:
                d = ss.ops.take(sizes, ctx.constant(a % r, i64))
                e = ss.ops.maximum(ss.ops.add(d, e), ctx.constant(0, i64))
            parts.append(ss.ops.expand_dims(e, 0))
        begin = ss.ops.concatenate(parts, axis=0)
    return value_slice(ctx.input(0), begin, list(ends), strides=steps, axes=list(axes))


@register("Slice", since=1)
def _slice_v1(ctx: NodeContext) -> Outputs:
    starts, ends = ctx.attr_ints("starts"), ctx.attr_ints("ends")
    if starts is None or ends is None:
        ctx.fail(BAD_ATTRIBUTE, "attributes 'starts' and 'ends' are required")
    return _slice(ctx, starts, ends, ctx.attr_ints("axes"), None)


def _from_end(ctx: NodeContext, i: int, axes: tuple[int, ...] | None) -> Expr:
    """Input ``i`` (a Slice's starts or ends, computed at run time) with each symbolic entry that
    may be negative counted from the end of its axis as ONNX does (``strided_slice`` takes a
    symbolic index as counted from the start): ``s < 0`` gives ``max(s + d, 0)``, written
    ``max(s, 0) + min(max(s + d, 0), d * min(1, max(-s, 0)))`` where the sign of ``s`` is not
    known (the second term is 0 for ``s >= 0``). Only for positive steps (the caller's check)."""
    b = ctx.input(i)
    t, x = ctx.tensor_type(i), ctx.tensor_type(0)
    es = None if t is None else entries_of(t)
    if es is None or x is None or x.ndim is None:
        return b
    rank = x.ndim
    ax = list(range(len(es))) if axes is None else [a + rank if a < 0 else a for a in axes]
    if len(ax) != len(es) or not all(0 <= a < rank for a in ax):
        return b
    fix = [e is not None and e.constant_value is None and bounds(e)[0] < 0 for e in es]
    if not any(fix):
        return b
    dtype = str(t.dtype) if t is not None else "int64"
    zero, one = ctx.constant(0, dtype), ctx.constant(1, dtype)
    sizes = ss.ops.cast(ss.ops.shape_of(ctx.input(0)), dtype)
    parts: list[Expr] = []
    for j, e in enumerate(es):
        s = ss.ops.take(b, ctx.constant(j, "int64"))
        if fix[j]:
            assert e is not None
            d = ss.ops.take(sizes, ctx.constant(ax[j], "int64"))
            back = ss.ops.maximum(ss.ops.add(s, d), zero)
            if bounds(e)[1] >= 0:  # either sign
                neg = ss.ops.minimum(one, ss.ops.maximum(ss.ops.subtract(zero, s), zero))
                back = ss.ops.add(ss.ops.maximum(s, zero), ss.ops.minimum(back, ss.ops.multiply(d, neg)))
            s = back
        parts.append(ss.ops.expand_dims(s, 0))
    return ss.ops.concatenate(parts, axis=0)


@register("Slice", since=10, value_inputs=(1, 2, 3, 4))
def _slice_v10(ctx: NodeContext) -> Outputs:
    if ctx.has_input(3) and ctx.const(3) is None and ctx.value_of(3) is None:
        return _runtime_axes(ctx)
    if any(ctx.has_input(i) and ctx.const(i) is None for i in (1, 2, 4)):
        # bounds computed at run time: their values (the axes must be constants)
        axes = ctx.opt_ints(3, "the axes")
        st = ctx.input(4) if ctx.has_input(4) else None
        steps = ctx.const(4) if st is not None else np.ones(1, dtype=np.int64)
        if steps is not None and bool((steps > 0).all()):
            begin, end = _from_end(ctx, 1, axes), _from_end(ctx, 2, axes)
        else:
            begin, end = ctx.input(1), ctx.input(2)
        return value_slice(ctx.input(0), begin, end, strides=st, axes=None if axes is None else list(axes))
    return _slice(
        ctx,
        ctx.ints(1, "the starts"),
        ctx.ints(2, "the ends"),
        ctx.opt_ints(3, "the axes"),
        ctx.opt_ints(4, "the steps"),
    )


def _bounds(ctx: NodeContext, i: int) -> tuple[int, ...] | None:
    """Input ``i``'s constant value as ints (None: absent, or not known)."""
    c = ctx.const(i) if ctx.has_input(i) else None
    if c is None and ctx.has_input(i):
        c = ctx.value_of(i)
    return None if c is None else tuple(int(v) for v in c.reshape(-1))


def _whole(d: Dim, starts: tuple[int, ...], ends: tuple[int, ...], steps: tuple[int, ...]) -> bool:
    """Whether every entry's bounds keep an axis of size ``d`` whole (as ONNX slices: on a
    negative step a start below -1 is left out, since ONNX clamps one below ``-d`` to 0)."""
    for s, e, t in zip(starts, ends, steps):
        if t == 0 or (t < 0 and s < -1) or slice_len(d, s, e, t) != d:
            return False
    return True


def _runtime_axes(ctx: NodeContext) -> Expr:
    """``Slice`` by axes computed at run time (see the module docstring)."""
    x = ctx.input(0)
    r = ctx.need_rank(0, "a Slice by axes computed at run time")
    n = ctx.static_shape(3)
    k = n[0] if n is not None and len(n) == 1 else None
    lengths = {
        i: s[0]
        for i in (1, 2, 4)
        if ctx.has_input(i) and (s := ctx.static_shape(i)) is not None and len(s) == 1
    }
    if k is not None and any(m != k for m in lengths.values()):
        ctx.fail(BAD_ATTRIBUTE, f"{k} axes for bounds of lengths {sorted(set(lengths.values()))}")
    if r == 0:
        ctx.fail(AXIS_OUT_OF_RANGE, "a scalar cannot be sliced (by axes computed at run time)")
    if k is not None and k > r:
        ctx.fail(BAD_ATTRIBUTE, f"{k} axes computed at run time for rank {r}: an axis repeats")
    if k == 0:
        return ss.ops.copy(x)
    starts, ends = _bounds(ctx, 1), _bounds(ctx, 2)
    steps = _bounds(ctx, 4) if ctx.has_input(4) else None if starts is None else (1,) * len(starts)
    t = ctx.tensor_type(0)
    dims: list[Dim] = []
    for i in range(r):
        d = None if t is None else t.dims[i]
        known = d is not None and not d.has_unknowns and starts is not None and ends is not None
        if known and steps is not None and _whole(d, starts, ends, steps):  # type: ignore[arg-type]
            dims.append(d)  # type: ignore[arg-type]
        else:
            dims.append(fresh_any(0))  # a size the run decides
    inside = ss.ops.take(ss.ops.shape_of(x), ss.ops.cast(ctx.input(3), "int64"), mode="fast")
    y = checked(ss.ops.cast_like(ss.ops.zeros(tuple(dims), "float32"), x), [inside])
    return _DISTINCT_AXES(y, ctx.input(3), rank=r) if k is None or k >= 2 else y


def _distinct_axes_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``y``'s type (the first argument) once no two entries of the axes (the second, of a
    rank-``rank`` tensor) that are known sizes name the same axis (onnxruntime: "'axes' has
    duplicates"; the reference evaluator lets the last win): ``a != b`` and ``a - b != rank``
    either way (an axis and its negative form), a guard."""
    y, ax, out = args
    at = tensor_or_defer(ax, ctx, 1)
    if at is None:
        return False
    es = entries_of(at)
    r = int(attrs["rank"])  # type: ignore[call-overload]
    known = [(i, e) for i, e in enumerate(es or ()) if e is not None]
    for n, (i, a) in enumerate(known):
        for j, b in known[n + 1 :]:
            c = all_of(ne(a, b), ne(a, b + r), ne(b, a + r))
            if c != TRUE:
                why = "Slice axes {} (`{}`) and {} (`{}`) must name different axes of rank {}"
                ctx.require(c, BAD_ATTRIBUTE, Lazy(why, i, a, j, b, r))
    ctx.unify(out, y)
    return True


_DISTINCT_AXES: Final = ss.register_op(
    "onnx.distinct_slice_axes",
    _distinct_axes_rel,
    2,
    doc="a Slice's result, checked",
    attr_types={"rank": "int"},
)
