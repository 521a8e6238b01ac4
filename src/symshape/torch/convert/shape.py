"""Shape and view calls, joins and splits.

torch sizes map onto Relay's ``reshape`` exactly: ``-1`` is inferred, a size read from an input
annotation is a dimension, and ``x.view(x.size(0), -1)`` (a dimension copied from the tensor
being reshaped, at the same position) is Relay's ``0``, which needs no value. ``flatten`` and
``unflatten`` with non-negative dims are reshapes with ``0``/``-1``/``-3``/``-4``/``-2``; dims
counted from the end of a tensor whose rank only inference knows are reshapes read from its
shape value (``x.shape[:start] + (-1,) + x.shape[end + 1:]``).

``x.transpose(a, b)`` and ``x.movedim(s, d)`` of a tensor whose rank only inference knows are
operators of the importer's own (:mod:`symshape.torch.convert.axes`).

Indexing (``x[...]``, ``narrow``, ``select``, ``index_select``) is in
:mod:`symshape.torch.convert.indexing`, factories (``zeros``, ``arange``, ...) in
:mod:`symshape.torch.convert.factories`.

Sizes of computed tensors (``x.size(0)`` of an intermediate ``x``) are shape values
(:mod:`symshape.torch.shape_values`): a shape holding one (``y.view(B, T, h, C // h)``,
``expand``) becomes a valued 1-d int64 tensor that ``reshape`` and ``expand`` read.
``x.split(s, d)`` of an axis only inference knows has as many pieces as the graph uses
(``q, k, v = ...``), each ``x[i*s:(i+1)*s]``; ``chunk`` and ``unbind`` likewise. That torch's
unpacking also checks the number of pieces is not modelled.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

import symshape as ss
from symshape.torch.context import Ctx
from symshape.torch.convert.elementwise import keys
from symshape.torch.convert.entry_ops import RANK_IN
from symshape.torch.registry import converts
from symshape.torch.shape_values import has_value, index_entry, shape_tensor
from symshape.torch.values import Opaque, Unsupported, static_shape

__all__ = [
    "view",
    "flatten",
    "unflatten",
    "permute",
    "reverse_dims",
    "expand",
    "cat",
    "split",
    "sized",
    "select",
    "valued_shape",
]

aten = torch.ops.aten
Size = int | ss.Dim


# -- reshapes -----------------------------------------------------------------------------------


def valued_shape(ctx: Ctx, v: Any, what: str) -> ss.Expr | None:
    """A shape argument that holds run-time sizes, as the 1-d int64 tensor carrying it
    (:func:`symshape.torch.shape_values.shape_tensor`); None when every size is known at import
    time. A run-time size without a value raises (``NeedsShapeValues``)."""
    entries = v
    if isinstance(v, (list, tuple)) and len(v) == 1 and isinstance(v[0], (list, tuple, Opaque)):
        entries = v[0]
    if isinstance(entries, Opaque):
        entries = [entries]
    if not isinstance(entries, (list, tuple)) or not any(isinstance(e, Opaque) for e in entries):
        return None
    for e in entries:
        if isinstance(e, Opaque) and not has_value(e):
            ctx.static(e, what)
        elif not isinstance(e, Opaque):
            ctx.size(e, what)
    t = shape_tensor(list(entries))
    if t is None:
        raise Unsupported(f"{what}: a run-time size of this kind is not supported")
    return t


def _spec(ctx: Ctx, x: ss.Expr, shape: Any, what: str) -> tuple[int | ss.Dim, ...] | ss.Expr:
    """A torch shape as Relay ``newshape``: copies of ``x``'s own sizes at their position are 0;
    other run-time sizes make it a valued shape tensor."""
    if isinstance(shape, (list, tuple)) and len(shape) == 1 and isinstance(shape[0], (list, tuple, Opaque)):
        shape = shape[0]
    if isinstance(shape, Opaque):
        if shape.of is x and shape.index == 0 and not shape.cascade:
            return (-2,)
        t = valued_shape(ctx, shape, what)
        assert t is not None
        return t
    if not isinstance(shape, (list, tuple)):
        shape = (shape,)
    copy = [
        isinstance(s, Opaque) and not s.cascade and s.of is x and s.index == i for i, s in enumerate(shape)
    ]
    if any(isinstance(s, Opaque) and not c for s, c in zip(shape, copy)):
        t = valued_shape(ctx, shape, what)
        assert t is not None
        return t
    out: list[int | ss.Dim] = []
    copies = literal_zero = False
    for i, s in enumerate(shape):
        if isinstance(s, Opaque) and not s.cascade and s.of is x and s.index == i:
            out.append(0)
            copies = True
            continue
        v = ctx.size(s, what)
        if isinstance(v, int) and v == 0:
            literal_zero = True
        if isinstance(v, int) and v < -1:
            raise Unsupported(f"{what}: invalid size {v}")
        out.append(v)
    if copies and literal_zero:
        raise Unsupported(f"{what}: a size 0 together with sizes copied from the input")
    if literal_zero:
        raise Unsupported(f"{what}: empty shapes (a size 0) are not supported")
    return tuple(out)


@converts("view", "reshape", torch.reshape, aten.view, aten.reshape, aten._unsafe_view)
def view(ctx: Ctx, input: Any, *shape: Any) -> Any:
    """``x.view(*sizes)``, ``torch.reshape(x, sizes)``."""
    x = ctx.tensor(input)
    if len(shape) == 1 and isinstance(shape[0], torch.dtype):
        raise Unsupported("a view as another dtype is not supported")
    spec = _spec(ctx, x, shape, "the shape")
    if isinstance(spec, ss.Expr):
        return ss.ops.reshape(x, spec, allowzero=True)
    if spec == (-2,):
        return x
    return ss.ops.reshape(x, spec)


@converts("view_as", "reshape_as")
def view_as(ctx: Ctx, input: Any, other: Any) -> Any:
    return ss.ops.reshape_like(ctx.tensor(input), ctx.tensor(other, "other"))


def _merge(x: ss.Expr, start: int, count: int) -> ss.Expr:
    """Merge ``count`` axes from ``start`` (pairwise ``-3`` reshapes)."""
    for _ in range(count - 1):
        x = ss.ops.reshape(x, (0,) * start + (-3, -2))
    return x


def _nonneg(ctx: Ctx, x: ss.Expr, axis: int, what: str, extra: int = 0) -> int:
    """``axis`` counted from the front; a negative one needs the rank (an input, a parameter, or
    an exported program's node)."""
    if axis >= 0:
        return axis
    r = ctx.rank(x)
    if r is None:
        raise Unsupported(f"a {what} counted from the end needs the rank, which only inference knows")
    return axis + r + extra


@converts(*keys("flatten", aten.flatten, inplace=False))
def flatten(ctx: Ctx, input: Any, start_dim: Any = 0, end_dim: Any = -1) -> Any:
    """``torch.flatten(x, start_dim, end_dim)``: ``(0,) * start + (-1,)`` up to the last axis,
    pairwise ``-3`` merges otherwise; dims counted from the end of a tensor whose rank only
    inference knows: a reshape to ``x.shape[:start] + (-1,) + x.shape[end + 1:]`` read from
    ``x``'s shape value."""
    x = ctx.tensor(input)
    e = ctx.axis(end_dim, "end_dim")
    s = ctx.axis(start_dim, "start_dim")
    if ctx.rank(x) is None and (s < 0 or e < -1):
        if (s < 0) == (e < 0) and e < s:
            raise Unsupported(f"flatten: end_dim {e} is before start_dim {s}")
        if s < 0 <= e:
            raise Unsupported("flatten: start_dim from the end with end_dim from the front needs the rank")
        if s == e:
            return x
        return _respliced(ctx, x, s, (-1,), None if e == -1 else e + 1)
    s = _nonneg(ctx, x, s, "start_dim")
    if e == -1:
        rank = ctx.rank(x)
        if s > 0 and rank is not None and s >= rank:
            raise ss.SymshapeError(
                ss.errors.AXIS_OUT_OF_RANGE,
                f"flatten: start_dim {s} is out of range for a tensor of rank {rank}",
            )
        if s > 0 and rank is None:  # axis s must exist (torch: "Dimension out of range")
            x = ctx.let(x, "input")
            ctx.let(ss.ops.sum(x, axis=[s]), "check_rank")
        return ss.ops.reshape(x, (0,) * s + (-1,))
    e = _nonneg(ctx, x, e, "end_dim")
    if e < s:
        raise Unsupported(f"flatten: end_dim {e} is before start_dim {s}")
    return _merge(x, s, e - s + 1) if e > s else x


def _respliced(
    ctx: Ctx, x: ss.Expr, lead_end: int, middle: Sequence[Size], tail_start: int | None
) -> ss.Expr:
    """``reshape(x, x.shape[:lead_end] + middle + x.shape[tail_start:])`` with ``x``'s shape as a
    value, so axes counted from the end need no rank at import time."""
    sh = ctx.let(ss.ops.shape_of(x), "shape")
    parts: list[ss.Expr] = [ss.ops.strided_slice(sh, [0], [lead_end]), ss.ops.int_tensor(tuple(middle))]
    if tail_start is not None:
        parts.append(ss.ops.strided_slice(sh, [tail_start], [None]))
    return ss.ops.reshape(x, ss.ops.concatenate(parts, axis=0), allowzero=True)


@converts(*keys("unflatten", aten.unflatten, inplace=False))
def unflatten(ctx: Ctx, input: Any, dim: Any, sizes: Any) -> Any:
    """``x.unflatten(dim, sizes)``: chained ``-4`` splits (a dim counted from the end of a tensor
    whose rank only inference knows: a reshape read from ``x``'s shape value)."""
    x = ctx.tensor(input)
    d = ctx.axis(dim)
    sz = list(ctx.sizes(sizes, "sizes"))
    if sz.count(-1) > 1:
        raise Unsupported("at most one size can be -1")
    if d < 0 and ctx.rank(x) is None:
        return _respliced(ctx, x, d, sz, None if d == -1 else d + 1)
    d = _nonneg(ctx, x, d, "dim")
    for j in range(len(sz) - 1):
        head = sz[j]
        rest = sz[j + 1 :]
        if head == -1:
            tail: Size = _product(rest)
        elif len(rest) == 1:
            tail = rest[0]
        else:
            tail = -1
        x = ss.ops.reshape(x, (0,) * (d + j) + (-4, head, tail, -2))
    return x


def _product(xs: Sequence[Size]) -> Size:
    out: Size = 1
    for v in xs:
        out = out * v
    return out


# -- permutations -------------------------------------------------------------------------------


@converts(*keys("permute", inplace=False))
def permute(ctx: Ctx, input: Any, *dims: Any) -> Any:
    """``x.permute(*dims)`` (a full permutation)."""
    x = ctx.tensor(input)
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = tuple(dims[0])
    return ss.ops.transpose(x, ctx.ints(list(dims), "dims"))


@converts(*keys("t", aten.numpy_T))
def reverse_dims(ctx: Ctx, input: Any) -> Any:
    """``x.t()`` / ``x.T``: all axes reversed."""
    return ss.ops.transpose(ctx.tensor(input))


@converts(*keys("unsqueeze"))
def unsqueeze(ctx: Ctx, input: Any, dim: Any) -> Any:
    return ss.ops.expand_dims(ctx.tensor(input), axis=ctx.axis(dim))


@converts(*keys("squeeze"))
def squeeze(ctx: Ctx, input: Any, dim: Any = None) -> Any:
    """``x.squeeze(dim)`` requires that axis to be 1 (torch leaves other sizes alone; see the gap
    list), except an axis whose size the importer knows is a constant other than 1 (an input's
    ``(4, n)``): torch leaves it, and so does the importer; ``x.squeeze()`` drops the axes that
    are 1."""
    x = ctx.tensor(input)
    if dim is None:
        return ss.ops.squeeze(x)
    axes = list(ctx.ints(dim, "dim"))
    shape = static_shape(x)
    if shape is not None:
        r = len(shape)
        # (an axis out of range stays, for squeeze's error)
        axes = [a for a in axes if not (-max(r, 1) <= a < max(r, 1) and r and _not_one(shape[a]))]
        if not axes:
            return x
    return ss.ops.squeeze(x, axis=axes)


def _not_one(d: ss.Dim) -> bool:
    return d.is_constant and d != 1


# -- broadcasting -------------------------------------------------------------------------------


@converts(*keys("expand", "broadcast_to", torch.broadcast_to, inplace=False))
def expand(ctx: Ctx, input: Any, *sizes: Any, **kwargs: Any) -> Any:
    """``x.expand(*sizes)``: ``broadcast_to`` when every size is known (``-1`` of an input or a
    parameter is its dimension). Otherwise ``expand`` by the sizes as a valued shape (``-1``
    keeps ``x``'s dimension), with an axis given as 1 required to be 1: torch's rule (each axis
    of ``x`` is 1 or the target). Both keep what is known of ``x``'s entries (an index range).

    torch's expand is one way (an axis of size 1 grows to any size, any other stays), the core's
    ``expand`` is ONNX's, which broadcasts both ways: ``x.expand(t, -1)`` of a size-3 ``x`` with a
    run-time ``t = 1`` would give 3. So sizes that hold run-time values are read twice:
    ``expand`` resolves the ``-1`` entries (its result's size there is ``x``'s), and
    ``broadcast_to`` ``x`` to the sizes with those entries replaced (``where(s == -1,
    shape_of(expand(x, s)), s)``) states torch's rule, ``x``'s axis is 1 or the target."""
    x = ctx.tensor(input)
    if "size" in kwargs:
        sizes = (kwargs["size"],)
    valued = valued_shape(ctx, sizes, "the sizes")
    if valued is not None:
        return _expand_one_way(ctx, x, valued)
    target = list(ctx.sizes(sizes, "the sizes"))
    keep = [i for i, s in enumerate(target) if isinstance(s, int) and s == -1]
    if keep:
        shape = static_shape(x)
        if shape is None:
            # torch needs at least as many sizes as x has axes (the core's expand broadcasts)
            out = RANK_IN(x, lo=0, hi=len(target), what=f"expand to {len(target)} sizes")
            for i, s in enumerate(target):
                if isinstance(s, int) and s == 1:
                    out = sized(out, i - len(target), 1)
            sizes_value = shape_tensor(target)
            assert sizes_value is not None  # ints and dimensions only
            if any(isinstance(s, ss.Dim) and not s.is_constant for s in target):
                return _expand_one_way(ctx, out, sizes_value)  # (a symbolic size may be 1)
            return ss.ops.expand(out, sizes_value)
        lead = len(target) - len(shape)
        for i in keep:
            if i < lead:
                raise Unsupported("-1 is not allowed for a new leading dimension")
            target[i] = shape[i - lead]
    return ss.ops.broadcast_to(x, target)


def _expand_one_way(ctx: Ctx, x: ss.Expr, sizes: ss.Expr) -> ss.Expr:
    """``x.expand(sizes)`` by a valued shape, one way (see :func:`expand`)."""
    x = ctx.let(x, "input")
    s = ctx.let(sizes, "sizes")
    both_ways = ctx.let(ss.ops.expand(x, s), "expanded")
    keep = ss.ops.equal(s, ss.ops.int_tensor(-1))
    target = ctx.let(ss.ops.where(keep, ss.ops.shape_of(both_ways), s), "target")
    return ss.ops.broadcast_to(x, target)


@converts("expand_as", aten.expand_as)
def expand_as(ctx: Ctx, input: Any, other: Any) -> Any:
    """``x.expand_as(y)``: ``broadcast_to(x, y.shape)`` when ``y``'s shape is known, otherwise
    ``x + zeros_like(y)`` required to have ``y``'s element count (so ``x``'s axes are 1 or
    ``y``'s)."""
    x, y = ctx.tensor(input), ctx.tensor(other, "other")
    shape = static_shape(y)
    if shape is not None:
        return ss.ops.broadcast_to(x, shape)
    return ss.ops.reshape_like(ss.ops.add(x, ss.ops.cast_like(ss.ops.zeros_like(y), x)), y)


@converts(*keys("repeat", inplace=False))
def repeat(ctx: Ctx, input: Any, *sizes: Any) -> Any:
    """``x.repeat(*sizes)`` of a tensor whose rank is known: new leading axes, then each axis
    concatenated ``r`` times (``r`` copies on a new axis, merged, for a run-time size ``r``); of a
    computed tensor, ``tile``."""
    x = ctx.tensor(input)
    reps = ctx.sizes(
        list(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (list, tuple)) else list(sizes), "sizes"
    )
    rank = ctx.rank(x)
    if rank is None:
        if not all(isinstance(r, int) for r in reps):
            raise Unsupported("repeat by a run-time size of a tensor whose rank is not known")
        # numpy's tile: the same result wherever torch's repeat is defined (at least one
        # repetition per axis; torch's own error for fewer is not reported)
        return ss.ops.tile(x, reps)
    if len(reps) < rank:
        raise Unsupported("repeat needs at least one size per dimension")
    out = x
    if len(reps) > rank:
        out = ss.ops.expand_dims(out, axis=0, num_newaxis=len(reps) - rank)
    for axis, r in enumerate(reps):
        if isinstance(r, ss.Dim):  # a run-time size (DeBERTa's ``.repeat(batch, 1, 1)``): a new
            # axis of r copies before this one, the two merged (r blocks of the axis, as tile)
            n = len(reps)
            y = ss.ops.expand(ss.ops.expand_dims(out, axis), [-1] * axis + [r] + [-1] * (n - axis))
            out = ss.ops.reshape(y, (0,) * axis + (-3,) + (0,) * (n - axis - 1))
        elif r < 0:
            raise ss.SymshapeError(ss.errors.INVALID_ARGUMENT, f"repeat: a negative count ({r})")
        elif r == 0:  # (torch gives an empty axis)
            out = ss.ops.strided_slice(out, [0], [0], axes=[axis])
        elif r != 1:
            v = ctx.let(out, f"tile{axis}")
            out = ss.ops.concatenate([v] * r, axis=axis)
    return out


# -- joining and splitting ----------------------------------------------------------------------


@converts(*keys("cat", torch.concat, torch.concatenate, aten.concat, inplace=False))
def cat(ctx: Ctx, tensors: Any, dim: Any = 0, *, axis: Any = None, out: Any = None) -> Any:
    """``torch.cat``; a tensor known to be of shape ``(0,)`` is skipped beside others (torch's
    legacy rule: transformers' ``DynamicLayer`` starts a KV cache as ``torch.tensor([])`` and
    concatenates the first keys to it, lifted to a constant by ``torch.export``)."""
    xs = [ctx.tensor(t, "each tensor") for t in ctx_list(tensors)]
    kept = [x for x in xs if not _empty_vector(static_shape(x))]
    return ss.ops.concatenate(kept or xs, axis=ctx.axis(axis if axis is not None else dim))


def _empty_vector(shape: tuple[ss.Dim, ...] | None) -> bool:
    return shape is not None and len(shape) == 1 and shape[0] == 0


@converts(*keys("stack", inplace=False))
def stack(ctx: Ctx, tensors: Any, dim: Any = 0, *, out: Any = None) -> Any:
    xs = [ctx.tensor(t, "each tensor") for t in ctx_list(tensors)]
    axis = ctx.axis(dim)
    if xs and axis in (0, -1) and all(ctx.rank(x) == 0 for x in xs):
        # scalars (an exported `torch.tensor(x.shape)`): joined so that their values stay one
        return ss.ops.concatenate([ss.ops.expand_dims(x, axis=0) for x in xs], axis=0)
    return ss.ops.stack(xs, axis=axis)


def ctx_list(v: Any) -> list[Any]:
    if isinstance(v, (list, tuple)):
        return list(v)
    raise Unsupported("expected a list of tensors")


def sized(x: ss.Expr, axis: int, n: Size) -> ss.Expr:
    """``x``, required to have ``n`` elements along ``axis`` (a ``bias_add`` of a length-``n``
    vector states exactly that)."""
    return ss.ops.bias_add(x, ss.ops.cast_like(ss.Constant(shape=(n,), dtype="float32"), x), axis=axis)


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


@converts(*keys("chunk", inplace=False))
def chunk(ctx: Ctx, input: Any, chunks: Any, dim: Any = 0) -> Any:
    """``x.chunk(n, dim)``, torch's rule: pieces of ``c = ceil(d / n)`` along ``dim``, the last one
    shorter, ``ceil(d / c)`` of them. A constant ``d`` gives the split exactly; otherwise the
    pieces the graph has (an exported node's outputs, or the pieces a traced graph uses) are
    ``x[i*c:(i+1)*c]``, ``c`` a dimension or a shape value; with neither, ``n`` equal sections
    (``d`` must divide)."""
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
        return _pieces(ctx, ss.ops.split(x, n, axis=axis), n)
    v = x if isinstance(x, ss.Var) else ctx.let(x, "input")
    if d is not None:
        size = (d + (n - 1)) // n
        return _exist(ctx, tuple(
            ss.ops.strided_slice(v, [i * size], [(i + 1) * size], axes=[axis])  # type: ignore[list-item]
            for i in range(count)
        ), axis)
    sh = ctx.let(ss.ops.shape_of(v), "shape")
    length = ss.ops.take(sh, ss.ops.int_tensor(axis), axis=0, mode="fast")
    c_val = ctx.let(
        ss.ops.floor_divide(ss.ops.add(length, ss.ops.int_tensor(n - 1)), ss.ops.int_tensor(n)), "size"
    )

    def at(i: int) -> ss.Expr:
        return ss.ops.expand_dims(ss.ops.multiply(c_val, ss.ops.int_tensor(i)), axis=0)

    pieces = tuple(ss.ops.strided_slice(v, at(i), at(i + 1), axes=[axis]) for i in range(count))
    return _exist(ctx, pieces, axis)


def _exist(ctx: Ctx, pieces: tuple[ss.Expr, ...], axis: int) -> tuple[ss.Expr, ...]:
    """``pieces``, the last one required to be non-empty: torch makes ``ceil(d / c)`` pieces, fewer
    than asked when ``d`` is small (``x.chunk(3)`` of 4 gives two of 2), so the last piece the
    graph uses must start before ``d`` (unpacking ``q, k, v = x.chunk(3)`` fails otherwise)."""
    last = ctx.let(pieces[-1], "piece")
    ctx.let(ss.ops.take(last, ss.ops.int_tensor(0), axis=axis, mode="raise"), "check_piece")
    return pieces[:-1] + (last,)


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
