"""Tensor indexing: ``x[...]``, ``narrow``, ``index_select`` and their aten forms; pieces:
``split``, ``chunk``, ``select``, ``unbind``.

Indexing ``x[...]`` with ints, slices, ``None`` and ``...`` is a ``strided_slice`` over the
indexed axes (axes after ``...`` counted from the end), a ``squeeze`` of the int-indexed axes
(which makes ``x[5]`` require ``x.shape[0] > 5``) and ``expand_dims`` for each ``None``; one
integer-tensor index is a ``take`` (several: :mod:`symshape.torch.convert.gather`). An integer
index that is a run-time size or a symbolic dimension (``x[:, -t]``) is a ``take`` by a
one-entry tensor in mode ``raise``, whose value range states Python's bounds (``-n <= i < n``).

A slice bound that is a run-time size (``x[:, :t]`` with ``t = y.size(1)``) makes the
``strided_slice`` bounds valued tensors (:mod:`symshape.torch.shape_values`); a bound that is a
dimension of an annotation (``t = x.shape[1]`` of an input) is a literal symbolic bound.

``narrow`` by a start or length computed from shapes, and ``split`` into computed sections, are
``take`` s of ``arange`` s (in range, lengths non-negative, sections adding up to the axis).
``x.split(s, d)`` of an axis only inference knows has as many pieces as the graph uses (``q, k,
v = ...``), each ``x[i*s:(i+1)*s]``; ``chunk`` and ``unbind`` likewise (a chunk whose pieces the
graph takes otherwise has the ``n`` pieces torch makes on a long enough axis).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

import symshape as ss
from symshape.torch.context import Ctx
from symshape.torch.convert.elementwise import keys
from symshape.torch.convert.shape import sized
from symshape.torch.registry import converts
from symshape.torch.shape_values import bound_tensor, has_value, index_entry, item_of, scalar_value
from symshape.torch.values import Opaque, Unsupported, static_shape

__all__ = [
    "getitem", "index_tensor", "narrow", "index_select", "aten_slice", "aten_index", "split", "chunk",
    "select", "unbind",
]

aten = torch.ops.aten

# -- indexing -----------------------------------------------------------------------------------


Bound = int | ss.Dim | Opaque | None


def _bound(ctx: Ctx, v: Any, what: str) -> Bound:
    """A slice bound or index: None, an int, a dimension (read from an annotation), or a run-time
    size carrying a value."""
    if v is None:
        return None
    if isinstance(v, Opaque) and has_value(v) and v.kind == "int":
        return v
    return ctx.size(v, what)


def _negated(b: Bound) -> ss.Expr | None:
    """``u`` (a 0-d int64 expression) of a bound ``-u`` of a size ``u >= 0`` (a run-time ``t`` or
    a dimension ``t`` of an annotation), else None."""
    if isinstance(b, Opaque) and b.negates is not None and b.negates.value is not None:
        return b.negates.value
    if isinstance(b, ss.Dim) and not b.is_constant and all(c < 0 for _, c in b.terms):
        return ss.ops.int_tensor(-b)
    return None


def _from_end_index(ctx: Ctx, x: ss.Expr, axis: int, u: ss.Expr) -> tuple[ss.Expr, ss.Expr]:
    """The index Python makes of a slice bound ``-u`` along an axis of ``n``, counted from the
    start: ``n - min(u, n)``, and ``0`` when ``u == 0`` (``x[:, -0:]`` is all of it), i.e.
    ``min(u, 1) * (n - min(u, n))``; and ``n``."""
    n = ctx.let(ss.ops.take(ss.ops.shape_of(x), ss.ops.int_tensor(axis), axis=0, mode="fast"), "n")
    one = ss.ops.minimum(u, ss.ops.int_tensor(1))
    return ss.ops.multiply(one, ss.ops.subtract(n, ss.ops.minimum(u, n))), n


def _from_end(ctx: Ctx, x: ss.Expr, axis: int, b: Bound) -> Bound:
    """A slice bound ``-u`` of a size (``x[:, -t:-1]``) as the index counted from the start
    (:func:`_from_end_index`), a shape value."""
    u = _negated(b)
    if u is None:
        return b
    index, _ = _from_end_index(ctx, x, axis, u)
    what = b.what if isinstance(b, Opaque) else str(b)
    return Opaque(ctx.node_name, what, ctx.span, "int", value=ctx.let(index, "bound"))


def _tail(ctx: Ctx, x: ss.Expr, axis: int, u: ss.Expr, last: bool) -> ss.Expr:
    """``x[..., -u:]`` (``last``) or ``x[..., :-u]`` along ``axis``: the first ``L`` entries of
    the reversed axis (or the rest of them), reversed back, where ``L = n - index`` counts the
    entries from the index of ``-u`` to the end. Slicing the reversed axis from its start needs
    no clamp that the dimensions' bounds cannot remove, so the sizes read ``min(n, t)`` and
    ``n - min(n, t)`` (slicing at the index gave ``max(0, n - min(n, max(0, n - min(n, t))))``)."""
    v = x if isinstance(x, ss.Var) else ctx.let(x, "tail")
    index, n = _from_end_index(ctx, v, axis, u)
    length = Opaque(
        ctx.node_name, "length", ctx.span, "int", value=ctx.let(ss.ops.subtract(n, index), "length")
    )
    flipped = ss.ops.strided_slice(v, [None], [None], strides=[-1], axes=[axis])
    part = _slice(flipped, [0 if last else length], [length if last else None], [1], [axis])
    return ss.ops.strided_slice(part, [None], [None], strides=[-1], axes=[axis])


def _int_bound(ctx: Ctx, v: Any, what: str) -> int | None:
    b = _bound(ctx, v, what)
    if b is not None and not isinstance(b, int):
        raise Unsupported(f"{what} must be a constant integer, got {_show_bound(b)}")
    return b


def _show_bound(b: Bound) -> str:
    return b.describe() if isinstance(b, Opaque) else str(b)


def _slice(
    x: ss.Expr, begin: Sequence[Bound], end: Sequence[Bound], strides: Sequence[int], axes: Sequence[int]
) -> ss.Expr:
    """``strided_slice`` with literal bounds (ints, dimensions) or, when a bound is a run-time
    size, with valued bound tensors."""
    if any(isinstance(v, Opaque) for v in (*begin, *end)):
        if any(st < 0 for st in strides):
            raise Unsupported("a run-time slice bound with a negative step is not supported")
        b, e = bound_tensor(begin, True), bound_tensor(end, False)
        assert b is not None and e is not None
        return ss.ops.strided_slice(x, b, e, strides=list(strides), axes=list(axes))
    return ss.ops.strided_slice(x, list(begin), list(end), strides=list(strides), axes=list(axes))  # type: ignore[arg-type]


@converts(operator.getitem)
def getitem(ctx: Ctx, obj: Any, index: Any) -> Any:
    """``obj[index]``: a Python container, a run-time size tuple, or tensor indexing."""
    if isinstance(obj, ss.Expr):
        return index_tensor(ctx, obj, index)
    if isinstance(obj, Opaque):
        if obj.cascade:
            return obj.derived("any")
        if isinstance(index, Opaque):
            return index.derived("int")
        return item_of(ctx, obj, index, obj.item(index)) if obj.kind == "sizes" else obj.derived("any")
    if isinstance(index, Opaque):
        return index.derived("any")
    if isinstance(obj, (tuple, list, dict)):
        try:
            return obj[index]
        except (IndexError, KeyError, TypeError) as e:
            raise Unsupported(f"indexing a {type(obj).__name__}: {e}") from None
    raise Unsupported(f"indexing a {type(obj).__name__} is not supported")


def _is_int_list(it: Any) -> bool:
    return (
        isinstance(it, list)
        and bool(it)
        and all(isinstance(v, int) and not isinstance(v, bool) and -(2**62) < v < 2**62 for v in it)
    )


def _int_list(it: list[int]) -> ss.Expr:
    return ss.const(np.array(it, dtype=np.int64))


def index_tensor(ctx: Ctx, x: ss.Expr, index: Any) -> ss.Expr:
    """Basic (and one integer-tensor) indexing, see the module docstring."""
    items = list(index) if isinstance(index, tuple) else [index]
    # a list of ints (`x[:, [0, -1]]`) indexes as the int64 tensor of its entries
    items = [_int_list(it) if _is_int_list(it) else it for it in items]
    if sum(1 for it in items if it is Ellipsis) > 1:
        raise Unsupported("more than one `...` in an index")
    tensors = [it for it in items if isinstance(it, ss.Expr)]
    if len(tensors) > 1:
        from symshape.torch.convert.gather import index_by_tensors

        return index_by_tensors(ctx, x, items)
    e = items.index(Ellipsis) if Ellipsis in items else len(items)
    before, after = items[:e], items[e + 1 :]

    def consumes(it: Any) -> bool:
        return it is not None

    # the axis of each consuming item: counted from the front before `...`, from the end after
    axes: list[tuple[Any, int]] = []
    k = 0
    for it in before:
        if consumes(it):
            axes.append((it, k))
            k += 1
    n_after = sum(1 for it in after if consumes(it))
    k = -n_after
    for it in after:
        if consumes(it):
            axes.append((it, k))
            k += 1
    begin: list[Bound] = []
    end: list[Bound] = []
    strides: list[int] = []
    slice_axes: list[int] = []
    squeeze_axes: list[int] = []
    take: tuple[ss.Expr, int] | None = None
    picks: list[tuple[ss.Expr, int]] = []  # indices by run-time sizes, with their axes
    tails: list[tuple[int, ss.Expr, bool]] = []  # x[..., -t:] and x[..., :-t] (see _tail)
    for it, axis in axes:
        if isinstance(it, slice):
            if it.start is None and it.stop is None and it.step is None:
                continue
            step = _int_bound(ctx, it.step, "a slice step")
            if step is not None and step <= 0:
                raise Unsupported("slice steps must be positive")
            lo, hi = _bound(ctx, it.start, "a slice start"), _bound(ctx, it.stop, "a slice end")
            u_lo, u_hi = _negated(lo), _negated(hi)
            if step in (None, 1) and u_lo is not None and hi is None:
                tails.append((axis, u_lo, True))  # x[..., -t:]
                continue
            if step in (None, 1) and u_hi is not None and lo in (None, 0):
                tails.append((axis, u_hi, False))  # x[..., :-t]
                continue
            begin.append(_from_end(ctx, x, axis, lo))
            end.append(_from_end(ctx, x, axis, hi))
            strides.append(step or 1)
            slice_axes.append(axis)
        elif isinstance(it, ss.Expr):
            take = (it, axis)
        else:
            i = _bound(ctx, it, "an index")
            assert i is not None
            if isinstance(i, Opaque) or (isinstance(i, ss.Dim) and not i.is_constant):
                picks.append((index_entry(i), axis))
                squeeze_axes.append(axis)
                continue
            begin.append(i)
            end.append(i + 1 if not (isinstance(i, int) and i == -1) else None)
            strides.append(1)
            slice_axes.append(axis)
            squeeze_axes.append(axis)
    if take is not None and (squeeze_axes or any(it is None for it in items)):
        raise Unsupported("a tensor index together with int or None indices is not supported")
    out = x
    if slice_axes:
        out = _slice(out, begin, end, strides, slice_axes)
    for axis, u, last in tails:
        out = _tail(ctx, out, axis, u, last)
    for idx, axis in picks:
        out = ss.ops.take(out, idx, axis=axis, mode="raise")
    if squeeze_axes:
        out = ss.ops.squeeze(out, axis=squeeze_axes)
    if take is not None:
        idx, axis = take
        if ctx.host.is_bool(idx):  # x[mask]: the elements where mask holds (a data-dependent size)
            if axis != 0 or slice_axes or tails:
                raise Unsupported("a bool mask index after other indices is not supported")
            return ss.ops.boolean_mask(out, idx)
        out = ss.ops.take(out, idx, axis=axis, mode="raise")
    # None: new axes (front part left to right, back part right to left)
    pos = 0
    for it in before:
        if it is None:
            out = ss.ops.expand_dims(out, axis=pos)
            pos += 1
        elif not (isinstance(it, int) and not isinstance(it, bool)) and not isinstance(it, (ss.Dim, Opaque)):
            pos += 1
    trailing = 0
    for it in reversed(after):
        if it is None:
            out = ss.ops.expand_dims(out, axis=-(trailing + 1))
            trailing += 1
        elif not (isinstance(it, int) and not isinstance(it, bool)) and not isinstance(it, (ss.Dim, Opaque)):
            trailing += 1
    return out


@converts(*keys("narrow", inplace=False))
def narrow(ctx: Ctx, input: Any, dim: Any, start: Any, length: Any) -> Any:
    """``x.narrow(dim, start, length)``: a slice that must have ``length`` elements; a negative
    ``start`` counts from the end (``narrow(1, -2, 2)`` is ``x[:, -2:]``)."""
    x = ctx.tensor(input)
    if _run_time(start) or _run_time(length):
        return _narrow_computed(ctx, x, ctx.axis(dim), start, length)
    axis, b = ctx.axis(dim), ctx.integer(start, "start")
    n = ctx.integer(length, "length")
    if n < 0:
        raise ss.SymshapeError(ss.errors.INVALID_ARGUMENT, f"narrow: length must be non-negative, got {n}")
    if b < 0 < b + n:
        raise ss.SymshapeError(
            ss.errors.INVALID_ARGUMENT,
            f"narrow: start {b} counts from the end, so start + length ({b + n}) passes the end",
        )
    end = None if b < 0 and b + n == 0 else b + n
    if n == 0 and b != 0:  # torch's "start out of range": -d <= start <= d (an empty piece too)
        x = x if isinstance(x, ss.Var) else ctx.let(x, "input")
        at = ss.const(np.array([b - 1 if b > 0 else b], dtype=np.int64))
        ctx.let(ss.ops.take(x, at, axis=axis, mode="raise" if b < 0 else "nonnegative"), "check_start")
    return sized(ss.ops.strided_slice(x, [b], [end], axes=[axis]), axis, n)


def _run_time(v: Any) -> bool:
    """A size computed from a shape (with a value) or a symbolic dimension."""
    return (isinstance(v, Opaque) and has_value(v) and v.kind == "int") or (
        isinstance(v, ss.Dim) and not v.is_constant
    )


def _narrow_computed(ctx: Ctx, x: ss.Expr, axis: int, start: Any, length: Any) -> ss.Expr:
    """``narrow`` by a start or length computed from shapes (``x.narrow(1, 0, t)``): a ``take`` of
    ``arange(s, s + n)`` (in range: ``s + n <= d``; ``s >= 0``, or a literal from the end), the
    length required non-negative (torch's "length must be non-negative")."""
    s, n = scalar_value(start), scalar_value(length)
    if s is None or n is None:  # (raises: a size without a value)
        ctx.integer(start if s is None else length, "start" if s is None else "length")
        raise Unsupported("narrow: a start or length of this kind is not supported")
    if isinstance(start, int) and start < 0:  # counted from the end
        d = ss.ops.take(ss.ops.shape_of(x), ss.ops.int_tensor(axis), axis=0, mode="fast")
        s = ss.ops.add(d, ss.ops.int_tensor(start))
    s = ctx.let(s, "start")
    ctx.let(ss.ops.zeros(ss.ops.expand_dims(n, 0)), "check_length")
    # start <= d (torch's "start out of range", an empty piece too): index s - 1 where s >= 1
    before = ss.ops.arange(ss.ops.subtract(s, ss.ops.minimum(s, ss.ops.int_tensor(1))), s)
    ctx.let(ss.ops.take(x, before, axis=axis, mode="nonnegative"), "check_start")
    return ss.ops.take(x, ss.ops.arange(s, ss.ops.add(s, n)), axis=axis, mode="nonnegative")


@converts(*keys("index_select", inplace=False))
def index_select(ctx: Ctx, input: Any, dim: Any, index: Any) -> Any:
    # torch refuses negative indices here (unlike x[index])
    return ss.ops.take(ctx.tensor(input), ctx.tensor(index, "index"), axis=ctx.axis(dim), mode="nonnegative")


@converts(aten.slice)
def aten_slice(ctx: Ctx, input: Any, dim: Any = 0, start: Any = None, end: Any = None, step: Any = 1) -> Any:
    """``aten.slice.Tensor(x, dim, start, end, step)`` (``end`` may be the int64 maximum)."""
    x = ctx.tensor(input)
    e = _bound(ctx, end, "a slice end")
    if isinstance(e, int) and e >= 2**62:
        e = None
    b = _bound(ctx, start, "a slice start")
    axis = ctx.axis(dim)
    b, e = _from_end(ctx, x, axis, b), _from_end(ctx, x, axis, e)  # (`x[-t:]`: Python's clamping)
    return _slice(x, [0 if b is None else b], [e], [ctx.integer(step, "step")], [axis])


@converts(aten.index)
def aten_index(ctx: Ctx, input: Any, indices: Any) -> Any:
    """``aten.index.Tensor(x, [None, idx])``: one integer-tensor index."""
    x = ctx.tensor(input)
    items = list(indices)
    return index_tensor(ctx, x, tuple(slice(None) if it is None else it for it in items))


# -- pieces: split, chunk, select, unbind --------------------------------------------------------


def _pieces(ctx: Ctx, call: ss.Expr, n: int) -> tuple[ss.Expr, ...]:
    v = ctx.let(call, "pieces")
    return tuple(v[i] for i in range(n))


@converts(*keys("split", aten.split_with_sizes, "split_with_sizes", inplace=False))
def split(ctx: Ctx, input: Any, split_size_or_sections: Any, dim: Any = 0) -> Any:
    """``x.split(size, dim)`` (the number of pieces from the size of ``dim`` when it is known, from
    an exported program's node, or from the pieces a traced graph uses) or ``x.split([a, b, c],
    dim)`` (the sizes must add up to it)."""
    x = ctx.tensor(input)
    axis = ctx.axis(dim)
    if isinstance(split_size_or_sections, (list, tuple)):
        if any(_computed(v) for v in split_size_or_sections):
            return _split_computed(ctx, x, axis, list(split_size_or_sections))
        sizes = ctx.ints(list(split_size_or_sections), "the sizes")
        bounds = [sum(sizes[: i + 1]) for i in range(len(sizes) - 1)]
        parts = ctx.let(ss.ops.split(x, bounds, axis=axis), "pieces")
        return tuple(parts[i] for i in range(len(sizes) - 1)) + (
            sized(parts[len(sizes) - 1], axis, sizes[-1]),
        )
    s = ctx.integer(split_size_or_sections, "split_size")
    shape = static_shape(x)
    d = shape[axis] if shape is not None and -len(shape) <= axis < len(shape) else None
    if (d is None or not d.is_constant) and ctx.num_outputs is not None:
        # an exported program's node says how many pieces there are (as an ONNX Split's outputs):
        # all but the last have `s` elements
        n = ctx.num_outputs
        return _pieces(ctx, ss.ops.split(x, [s * (i + 1) for i in range(n - 1)], axis=axis), n)
    if (d is None or not d.is_constant) and ctx.items_used is not None:
        # a traced graph uses pieces 0 .. n-1 (`q, k, v = x.split(s, 2)`): piece i is
        # x[i*s:(i+1)*s] along the axis (the last one shorter where the axis ends). That torch's
        # unpacking also needs exactly n pieces is not checked.
        if s < 1:
            raise Unsupported(f"split_size must be positive, got {s}")
        v = ctx.let(x, "input") if not isinstance(x, ss.Var) else x
        return tuple(
            ss.ops.strided_slice(v, [i * s], [(i + 1) * s], axes=[axis]) for i in range(ctx.items_used)
        )
    if d is None or not d.is_constant:
        raise Unsupported(
            f"split by size {s} needs the size of dim {axis}, which only inference knows "
            "(pass the section sizes, or use chunk)"
        )
    total = int(d.constant_value)  # type: ignore[arg-type]
    n = max(1, -(-total // s))
    if total % s == 0:
        return _pieces(ctx, ss.ops.split(x, n, axis=axis), n)
    return _pieces(ctx, ss.ops.split(x, [s * (i + 1) for i in range(n - 1)], axis=axis), n)


def _computed(v: Any) -> bool:
    """A size computed from a shape (with a value) or a symbolic dimension."""
    return (isinstance(v, Opaque) and has_value(v) and v.kind == "int") or (
        isinstance(v, ss.Dim) and not v.is_constant
    )


def _split_computed(ctx: Ctx, x: ss.Expr, axis: int, sizes: list[Any]) -> tuple[ss.Expr, ...]:
    """``x.split([a, t - a], dim)`` with sizes computed from shapes: piece ``i`` is a ``take`` of
    ``arange(o_i, o_i + s_i)`` (``o_i`` the sum of the sizes before), each size non-negative and
    their sum the axis' size (torch's rule)."""
    v = x if isinstance(x, ss.Var) else ctx.let(x, "input")
    entries = [scalar_value(s) for s in sizes]
    if any(e is None for e in entries):
        ctx.sizes(sizes, "the sizes")  # (raises: a size without a value)
        raise Unsupported("split: section sizes of this kind are not supported")
    pieces: list[ss.Expr] = []
    offset: ss.Expr = ss.ops.int_tensor(0)
    for i, e in enumerate(entries):
        assert e is not None
        size = ctx.let(e, f"size{i}")
        ctx.let(ss.ops.zeros(ss.ops.expand_dims(size, 0)), f"check_size{i}")  # (non-negative)
        end = ctx.let(ss.ops.add(offset, size), f"end{i}")
        pieces.append(ss.ops.take(v, ss.ops.arange(offset, end), axis=axis, mode="nonnegative"))
        offset = end
    d = ss.ops.take(ss.ops.shape_of(v), ss.ops.int_tensor(axis), axis=0, mode="fast")
    # the sizes add up to the axis: a reshape of `total` zeros to the axis' size
    total = ss.ops.zeros(ss.ops.expand_dims(offset, 0))
    ctx.let(ss.ops.reshape(total, ss.ops.expand_dims(d, 0)), "check_sizes")
    return tuple(pieces)


@converts(*keys("chunk", inplace=False))
def chunk(ctx: Ctx, input: Any, chunks: Any, dim: Any = 0) -> Any:
    """``x.chunk(n, dim)``, torch's rule: pieces of ``c = ceil(d / n)`` along ``dim``, the last one
    shorter, ``ceil(d / c)`` of them. A constant ``d`` gives the split exactly; otherwise the
    pieces the graph has (an exported node's outputs, or the pieces a traced graph uses) are
    ``x[i*c:(i+1)*c]``, ``c`` a dimension or a shape value; with neither, the ``n`` pieces torch
    makes when ``d`` is long enough (the last one required non-empty)."""
    n = ctx.integer(chunks, "chunks")
    if n < 1:
        raise Unsupported(f"chunks must be positive, got {n}")
    x = ctx.tensor(input)
    axis = ctx.axis(dim)
    shape = static_shape(x)
    d = shape[axis] if shape is not None and -len(shape) <= axis < len(shape) else None
    if d is not None and d.is_constant:
        total = int(d.constant_value)  # type: ignore[arg-type]
        c = max(1, -(-total // n))
        k = max(1, -(-total // c))
        if k == n and c * n == total:
            return _pieces(ctx, ss.ops.split(x, n, axis=axis), n)
        return _pieces(ctx, ss.ops.split(x, [c * (i + 1) for i in range(k - 1)], axis=axis), k)
    count = ctx.num_outputs if ctx.num_outputs is not None else ctx.items_used
    if count is None:
        # the graph does not say which pieces it uses (`x.chunk(3, -1)[-1]`, a slice of them): the
        # n pieces torch makes when the axis is long enough, the last required non-empty (with
        # fewer, the tuple would be shorter)
        count = n
    v = x if isinstance(x, ss.Var) else ctx.let(x, "input")
    if d is not None:
        size = (d + (n - 1)) // n
        return _exist(ctx, v, tuple(
            ss.ops.strided_slice(v, [i * size], [(i + 1) * size], axes=[axis])  # type: ignore[list-item]
            for i in range(count)
        ), axis, ss.ops.int_tensor((count - 1) * size))
    sh = ctx.let(ss.ops.shape_of(v), "shape")
    length = ss.ops.take(sh, ss.ops.int_tensor(axis), axis=0, mode="fast")
    c_val = ctx.let(
        ss.ops.floor_divide(ss.ops.add(length, ss.ops.int_tensor(n - 1)), ss.ops.int_tensor(n)), "size"
    )

    def at(i: int) -> ss.Expr:
        return ss.ops.expand_dims(ss.ops.multiply(c_val, ss.ops.int_tensor(i)), axis=0)

    pieces = tuple(ss.ops.strided_slice(v, at(i), at(i + 1), axes=[axis]) for i in range(count))
    return _exist(ctx, v, pieces, axis, ss.ops.multiply(c_val, ss.ops.int_tensor(count - 1)))


def _exist(
    ctx: Ctx, v: ss.Expr, pieces: tuple[ss.Expr, ...], axis: int, start: ss.Expr
) -> tuple[ss.Expr, ...]:
    """``pieces``, the last one (starting at ``start``) required to exist: torch makes
    ``ceil(d / c)`` pieces, fewer than asked when ``d`` is small (``x.chunk(3)`` of 4 gives two
    of 2), so the last piece the graph uses must start before ``d`` (unpacking ``q, k, v =
    x.chunk(3)`` fails otherwise), unless ``d`` is 0 (torch then gives ``n`` empty pieces): a
    ``take`` of ``v`` at ``arange(start, start + min(d, 1))``, empty where ``d`` is 0."""
    d = ss.ops.take(ss.ops.shape_of(v), ss.ops.int_tensor(axis), axis=0, mode="fast")
    at = ctx.let(start, "start")
    idx = ss.ops.arange(at, ss.ops.add(at, ss.ops.minimum(d, ss.ops.int_tensor(1))))
    ctx.let(ss.ops.take(v, idx, axis=axis, mode="nonnegative"), "check_piece")
    return pieces


@converts(*keys("select", inplace=False))
def select(ctx: Ctx, input: Any, dim: Any, index: Any) -> Any:
    """``x.select(dim, i)``: ``x[..., i, ...]`` at ``dim``."""
    x = ctx.tensor(input)
    axis = ctx.axis(dim)
    if (isinstance(index, Opaque) and has_value(index) and index.kind == "int") or (
        isinstance(index, ss.Dim) and not index.is_constant
    ):
        # a run-time size or a symbolic dimension: Python's bounds from the index's range
        out = ss.ops.take(x, index_entry(index), axis=axis, mode="raise")
        return ss.ops.squeeze(out, axis=[axis])
    i = ctx.integer(index, "index")
    out = ss.ops.strided_slice(x, [i], [i + 1 if i != -1 else None], axes=[axis])
    return ss.ops.squeeze(out, axis=[axis])


@converts(*keys("unbind", inplace=False))
def unbind(ctx: Ctx, input: Any, dim: Any = 0) -> Any:
    """``x.unbind(dim)``: as many slices as the size of ``dim`` (known from an annotation or an
    exported program's node: ``split`` into that many pieces of size 1); in a traced graph that
    uses pieces 0 .. n-1 (``q, k, v = qkv.unbind(0)``), ``x.select(dim, i)`` for each."""
    x = ctx.tensor(input)
    axis = ctx.axis(dim)
    shape = static_shape(x)
    n: int | None = None
    if shape is not None and -len(shape) <= axis < len(shape) and shape[axis].is_constant:
        n = int(shape[axis].constant_value)  # type: ignore[arg-type]
    elif ctx.num_outputs is not None:
        n = ctx.num_outputs
    if n is not None:
        parts = _pieces(ctx, ss.ops.split(x, n, axis=axis), n)
        return tuple(ss.ops.squeeze(p, axis=[axis]) for p in parts)
    if ctx.items_used is None:
        raise Unsupported("unbind needs the size of the dim, which only inference knows")
    return tuple(select(ctx, x, axis, i) for i in range(ctx.items_used))
