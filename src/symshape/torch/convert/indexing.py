"""Tensor indexing: ``x[...]``, ``narrow``, ``index_select`` and their aten forms.

Indexing ``x[...]`` with ints, slices, ``None`` and ``...`` is a ``strided_slice`` over the
indexed axes (axes after ``...`` counted from the end), a ``squeeze`` of the int-indexed axes
(which makes ``x[5]`` require ``x.shape[0] > 5``) and ``expand_dims`` for each ``None``; one
integer-tensor index is a ``take`` (several: :mod:`symshape.torch.convert.gather`). An integer
index that is a run-time size or a symbolic dimension (``x[:, -t]``) is a ``take`` by a
one-entry tensor in mode ``raise``, whose value range states Python's bounds (``-n <= i < n``).

A slice bound that is a run-time size (``x[:, :t]`` with ``t = y.size(1)``) makes the
``strided_slice`` bounds valued tensors (:mod:`symshape.torch.shape_values`); a bound that is a
dimension of an annotation (``t = x.shape[1]`` of an input) is a literal symbolic bound.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import torch

import symshape as ss
from symshape.torch.context import Ctx
from symshape.torch.convert.elementwise import keys
from symshape.torch.convert.shape import sized
from symshape.torch.registry import converts
from symshape.torch.shape_values import bound_tensor, has_value, index_entry, item_of
from symshape.torch.values import Opaque, Unsupported

__all__ = ["getitem", "index_tensor", "narrow", "index_select", "aten_slice", "aten_index"]

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


def index_tensor(ctx: Ctx, x: ss.Expr, index: Any) -> ss.Expr:
    """Basic (and one integer-tensor) indexing, see the module docstring."""
    items = list(index) if isinstance(index, tuple) else [index]
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
    return sized(ss.ops.strided_slice(x, [b], [end], axes=[axis]), axis, n)


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
