"""Shape and view calls and joins (splits are in :mod:`symshape.torch.convert.indexing`).

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
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

import symshape as ss
from symshape.torch.context import Ctx
from symshape.torch.convert.elementwise import keys
from symshape.torch.convert.entry_ops import ATLEAST_1D, AXIS, DIVISIBLE, RANK_IN
from symshape.torch.registry import converts
from symshape.torch.shape_values import has_value, scalar_value, shape_tensor
from symshape.torch.values import Opaque, Unsupported, static_shape

__all__ = [
    "view",
    "flatten",
    "unflatten",
    "permute",
    "reverse_dims",
    "expand",
    "cat",
    "sized",
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
        for d in dict.fromkeys((s, e)):  # (torch: "Dimension out of range")
            x = _dim_checked(ctx, x, d, "flatten")
        if s == e:  # (torch: a 0-d x becomes 1-d)
            return ATLEAST_1D(x)
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
        if rank is not None and rank > 0:  # (merges: a -1 is ambiguous where an axis is 0)
            return _merge(x, s, rank - s)
        return ss.ops.reshape(x, (0,) * s + (-1,))
    e = _nonneg(ctx, x, e, "end_dim")
    if e < s:
        raise Unsupported(f"flatten: end_dim {e} is before start_dim {s}")
    if e > s:
        return _merge(x, s, e - s + 1)
    return x if (ctx.rank(x) or 0) > 0 else ATLEAST_1D(x)  # (torch: a 0-d x becomes 1-d)


def _dim_checked(ctx: Ctx, x: ss.Expr, d: int, what: str) -> ss.Expr:
    """``x``, its dim ``d`` checked to be in range (torch's "Dimension out of range"): now when
    the importer knows the rank, else once inference does."""
    r = ctx.rank(x)
    if r is None:  # (a check beside x, which keeps its entry range)
        x = ctx.let(x, "input") if not isinstance(x, ss.Var) else x
        ctx.let(AXIS(x, axis=d, what=what), "check_dim")
        return x
    if not -max(r, 1) <= d < max(r, 1):
        raise ss.SymshapeError(ss.errors.AXIS_OUT_OF_RANGE, f"{what}: dim {d} is out of range for rank {r}")
    return x


def _respliced(
    ctx: Ctx, x: ss.Expr, lead_end: int, middle: Sequence[Size] | ss.Expr, tail_start: int | None
) -> ss.Expr:
    """``reshape(x, x.shape[:lead_end] + middle + x.shape[tail_start:])`` with ``x``'s shape as a
    value, so axes counted from the end need no rank at import time (``middle``: sizes, or the
    1-d tensor carrying them)."""
    sh = ctx.let(ss.ops.shape_of(x), "shape")
    mid = middle if isinstance(middle, ss.Expr) else ss.ops.int_tensor(tuple(middle))
    parts: list[ss.Expr] = [ss.ops.strided_slice(sh, [0], [lead_end]), mid]
    if tail_start is not None:
        parts.append(ss.ops.strided_slice(sh, [tail_start], [None]))
    return ss.ops.reshape(x, ss.ops.concatenate(parts, axis=0), allowzero=True)


@converts(*keys("unflatten", aten.unflatten, inplace=False))
def unflatten(ctx: Ctx, input: Any, dim: Any, sizes: Any) -> Any:
    """``x.unflatten(dim, sizes)``: chained ``-4`` splits (a dim counted from the end of a tensor
    whose rank only inference knows, or sizes computed from shapes: a reshape read from ``x``'s
    shape value, the dim checked against the rank)."""
    x = ctx.tensor(input)
    d = ctx.axis(dim)
    valued = valued_shape(ctx, sizes, "sizes")
    # (a -1 is computed from the axis' size alone, as torch does: a reshape's -1 is read from every
    # axis, ambiguous where another one is 0)
    minus = valued is None and -1 in ctx.sizes(sizes, "sizes")
    if valued is not None or (d < 0 and ctx.rank(x) is None) or minus:
        x = _dim_checked(ctx, x, d, "unflatten")
        entries = list(sizes) if valued is not None else list(ctx.sizes(sizes, "sizes"))
        if sum(1 for e in entries if isinstance(e, int) and e == -1) > 1:
            raise Unsupported("at most one size can be -1")
        return _respliced(ctx, x, d, _unflattened(ctx, x, d, entries), None if d == -1 else d + 1)
    sz = list(ctx.sizes(sizes, "sizes"))
    if sz.count(-1) > 1:
        raise Unsupported("at most one size can be -1")
    if ctx.rank(x) is not None:
        _dim_checked(ctx, x, d, "unflatten")
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


def _unflattened(ctx: Ctx, x: ss.Expr, d: int, entries: Sequence[Any]) -> ss.Expr:
    """The sizes ``dim`` of ``x`` unflattens into as a 1-d int64 tensor, a ``-1`` computed from that
    axis' size alone (``size // product of the others``, as torch does: a reshape's ``-1`` is
    ambiguous where another axis is 0)."""
    values = [scalar_value(e) for e in entries]
    if any(v is None for v in values):
        raise Unsupported("unflatten: sizes of this kind are not supported")
    known: ss.Expr = ss.ops.int_tensor(1)
    for e, v in zip(entries, values):
        if v is not None and not (isinstance(e, int) and e == -1):
            known = ss.ops.multiply(known, v)
    size: ss.Expr = ss.ops.take(ss.ops.shape_of(x), ss.ops.int_tensor(d), axis=0, mode="fast")
    divisor: ss.Expr = ss.ops.maximum(known, ss.ops.int_tensor(1))
    if any(isinstance(e, int) and e == -1 for e in entries):  # (torch: a multiple of the others)
        size, known = ctx.let(size, "size"), ctx.let(known, "known")
        divisor = ss.ops.maximum(known, ss.ops.int_tensor(1))
        ctx.let(DIVISIBLE(size, known, what="unflatten"), "check_sizes")
    fill = ss.ops.floor_divide(size, divisor)
    parts = [fill if isinstance(e, int) and e == -1 else v for e, v in zip(entries, values)]
    return ss.ops.concatenate([ss.ops.expand_dims(p, 0) for p in parts], axis=0)  # type: ignore[arg-type]


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
    """``x.t()`` / ``x.T``: all axes reversed (``t`` takes at most 2 of them: torch's rule)."""
    x = ctx.tensor(input)
    target = ctx.node_target
    if target in ("t", torch.t, aten.t) or getattr(target, "overloadpacket", None) is aten.t:
        x = ctx.let(x, "input") if not isinstance(x, ss.Var) else x
        ctx.let(RANK_IN(x, lo=0, hi=2, what="t()"), "check_rank")
    return ss.ops.transpose(x)


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
            # (a check beside x: a call of the importer's own operator would hide x's entry range)
            x = ctx.let(x, "input") if not isinstance(x, ss.Var) else x
            ctx.let(RANK_IN(x, lo=0, hi=len(target), what=f"expand to {len(target)} sizes"), "check_rank")
            out: ss.Expr = x
            rank = ctx.rank(x)  # (a new leading axis of 1 is no axis of x: nothing to check)
            lead = 0 if rank is None else len(target) - rank
            for i, s in enumerate(target):
                if isinstance(s, int) and s == 1 and i >= lead:
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
        # repetition per axis: torch's rule, checked beside x once inference knows its rank)
        x = ctx.let(x, "input") if not isinstance(x, ss.Var) else x
        ctx.let(RANK_IN(x, lo=0, hi=len(reps), what=f"repeat by {len(reps)} sizes"), "check_rank")
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
