"""Relations that join tensors or cut one into pieces: ``concatenate``, ``stack``, ``split``.

=====================  =========================================================================
relation               rule (Relay semantics; every optimistic Relay check is a condition here)
=====================  =========================================================================
``concatenate``        a tuple of tensors; sizes add up on ``axis``, the other axes must agree
``stack``              all shapes equal; a new axis of size ``len(xs)``
``split``              ``sections`` (must divide the axis) or ascending ``indices`` -> a tuple;
                       with ``total`` (ONNX's sizes) the axis must be ``total`` long
=====================  =========================================================================

A concatenation or stack with one field of known rank has that rank (unknown dimensions where
the other fields would decide them); no field of known rank, or an input of unknown rank to
``split``, gives results of unknown rank. The operand of ``concatenate``/``stack`` must be a tuple
of tensors, that of ``split`` a tensor: anything else is a ``type-mismatch``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from symshape.encoding.conds import eq, le
from symshape.encoding.dims import ZERO, Dim, as_dim, mod
from symshape.encoding.types import Attrs, IncompleteType, Tensor, TensorType, TupleType, Type, TypeVar
from symshape.errors import (
    ARITY_MISMATCH,
    DTYPE_MISMATCH,
    RANK_MISMATCH,
    SHAPE_MISMATCH,
    TYPE_MISMATCH,
)
from symshape.relations.base import Context, relation
from symshape.relations.common import (
    Checks,
    attr_int,
    bad,
    exact_div,
    norm_axis,
)
from symshape.relations.operands import ranked_or_defer, unknown_rank
from symshape.relations.values import (
    concat_value,
    with_value,
)

__all__ = ["concatenate_rel", "stack_rel", "parse_split", "parse_total", "split_rel"]


def _tuple_fields(ctx: Context, t: Type, what: str) -> list[TensorType] | None:
    """The fields of a tuple of tensors; None while the tuple or a field is still a hole."""
    if not isinstance(t, TupleType):
        if isinstance(t, (IncompleteType, TypeVar)):
            return None
        ctx.fail(TYPE_MISMATCH, f"{what} requires a tuple of tensors, found `{t}`")
    if not t.fields:
        ctx.fail(ARITY_MISMATCH, f"{what} requires at least one tensor")
    fs = []
    for f in t.fields:
        if not isinstance(f, TensorType):
            if not isinstance(f, (IncompleteType, TypeVar)):
                ctx.fail(TYPE_MISMATCH, f"{what} requires a tuple of tensors, found `{t}`")
            continue
        fs.append(f)
    return fs if len(fs) == len(t.fields) else None


def _same_rank_dtype(ctx: Context, fs: Sequence[TensorType], what: str) -> tuple[int | None, object]:
    """The common rank (None when every field's rank is unknown) and dtype of the fields."""
    dtype = None
    known = [f.dtype for f in fs if f.dtype is not None]
    for d in known[1:]:
        if d != known[0]:
            ctx.fail(DTYPE_MISMATCH, f"{what} requires all tensors to have the same dtype: {known[0]} vs {d}")
    dtype = known[0] if known else None
    ranks = {len(f.shape) for f in fs if type(f.shape) is tuple}  # (``f.ndim``: a property)
    if len(ranks) > 1:
        ctx.fail(RANK_MISMATCH, f"{what} requires all tensors to have the same rank: {sorted(ranks)}")
    return (ranks.pop() if ranks else None), dtype


def _agree(
    ctx: Context, fs: Sequence[TensorType], rank: int, skip: int, what: str
) -> tuple[Dim, ...] | None:
    """The shape the ranked fields share (every axis but ``skip``, checked), or None to defer:
    the first field's, but a constant where another field has one (the conditions make them
    equal: ``(n, 3)`` and ``(n, h)`` share ``(n, 3)``, as onnx's inference gives it). Fields of
    unknown rank have the rank of the others, and nothing more is known of them."""
    ranked = [(k, f.shape) for k, f in enumerate(fs) if type(f.shape) is tuple]
    j0, first = ranked[0]
    chk = Checks()
    shared = list(first)
    for k, dims in ranked[1:]:
        for i in range(rank):
            if i != skip and first[i] != dims[i]:  # (equal ones state nothing: no message)
                if dims[i].is_constant and not shared[i].is_constant:
                    shared[i] = dims[i]
                chk.equal(
                    first[i],
                    dims[i],
                    SHAPE_MISMATCH,
                    f"{what}: tensors {j0} and {k} differ on {'non-concatenated ' if skip >= 0 else ''}"
                    f"axis {i}: {first[i]} vs {dims[i]}",
                )
    if not chk.commit(ctx):
        return None
    return tuple(shared)


def _fields(ctx: Context, args: Sequence[Type], what: str) -> tuple[list[TensorType], int, object] | bool:
    """The fields of the tuple operand, their common rank and dtype; or the relation's answer
    without them: False to defer (a hole), or (no field of known rank) that of
    :func:`~symshape.relations.base.unknown_rank`."""
    fs = _tuple_fields(ctx, args[0], what)
    if fs is None:
        return False
    rank, dtype = _same_rank_dtype(ctx, fs, what)
    if rank is None:
        return unknown_rank(ctx, args[1], dtype)
    return fs, rank, dtype


def _total(ctx: Context, fs: Sequence[TensorType], ax: int) -> Dim:
    """The sum of the fields' sizes on axis ``ax`` (a fresh unknown for a field of unknown rank);
    of constant sizes, in ints."""
    total = 0
    for f in fs:
        if type(f.shape) is not tuple:
            break
        cv = f.shape[ax]._cv  # (``constant_value``, read from its slot)
        if cv is None:
            break
        total += cv
    else:
        return as_dim(total)
    return sum((f.dims[ax] if f.ndim is not None else ctx.fresh_dim() for f in fs), ZERO)


@relation("concatenate")
def concatenate_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """Sizes add up on ``axis``; the other axes must agree (``n`` vs ``m``: guard ``n == m``). One
    field of known rank fixes the result's rank (the others' sizes on ``axis`` are unknown)."""
    axis = attr_int(attrs, "axis", 0, ctx.name)
    got = _fields(ctx, args, "concatenate")
    if isinstance(got, bool):
        return got
    fs, rank, dtype = got
    if rank == 0:
        ctx.fail(RANK_MISMATCH, "concatenate: zero-dimensional tensors cannot be concatenated")
    ax = norm_axis(ctx, axis, rank, "concatenate")
    partial = False
    for f in fs:
        if type(f.shape) is not tuple:
            partial = True
            break
    if partial and not ctx.final:
        return False  # a field of unknown rank may still be refined through a hole
    first = _agree(ctx, fs, rank, ax, "concatenate")
    if first is None:
        return False
    shape = list(first)
    shape[ax] = _total(ctx, fs, ax)
    result = TensorType(tuple(shape), dtype)  # type: ignore[arg-type]  # (the inputs' dtype)
    if rank == 1 and any(f.value is not None for f in fs):
        result = with_value(result, concat_value(fs))
    ctx.assign(args[1], result)
    return True


@relation("stack")
def stack_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """All shapes equal; a new axis of size ``len(xs)`` at ``axis`` in ``[-rank-1, rank]``."""
    axis = attr_int(attrs, "axis", 0, ctx.name)
    got = _fields(ctx, args, "stack")
    if isinstance(got, bool):
        return got
    fs, rank, dtype = got
    ax = norm_axis(ctx, axis, rank, "stack", extra=1)
    if any(f.ndim is None for f in fs) and not ctx.final:
        return False
    first = _agree(ctx, fs, rank, -1, "stack")
    if first is None:
        return False
    shape = list(first)
    shape.insert(ax, as_dim(len(fs)))
    ctx.assign(args[1], Tensor(tuple(shape), dtype))
    return True


def parse_split(attrs: Attrs, op: str = "split") -> int | tuple[int, ...]:
    """``indices_or_sections``: an int ``>= 1`` (sections) or a non-decreasing sequence of
    non-negative ints (split points)."""
    v = attrs.get("indices_or_sections")
    if isinstance(v, int) and not isinstance(v, bool):
        if v < 1:
            raise bad(op, f"the number of sections must be >= 1, got {v}")
        return v
    if isinstance(v, tuple) and all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        idx = tuple(int(x) for x in v)
        if any(x < 0 for x in idx):
            raise bad(op, f"split indices must be non-negative, got {v!r}")
        if any(b < a for a, b in itertools.pairwise(idx)):
            raise bad(op, f"split indices must be sorted ascending, got {v!r}")
        return idx
    raise bad(op, f"indices_or_sections must be an int or a sequence of ints, got {v!r}")


def parse_total(attrs: Attrs, ios: int | tuple[int, ...], op: str = "split") -> int | None:
    """``total``: the length the pieces add up to (the last piece ends there; the axis must be as
    long), given with split indices only, at least the last index; None: not given."""
    v = attrs.get("total")
    if v is None:
        return None
    if not isinstance(v, int) or isinstance(v, bool):
        raise bad(op, f"total must be an int, got {v!r}")
    if isinstance(ios, int):
        raise bad(op, "total is given with split indices only, not with a number of sections")
    if v < (ios[-1] if ios else 0):
        raise bad(op, f"total {v} is less than the split index {ios[-1] if ios else 0}")
    return v


def _sizes_text(ios: tuple[int, ...], total: int) -> str:
    """The sizes of the pieces, as a list: ``[2, 3]`` for indices ``(2,)`` and total 5."""
    cuts = (0, *ios, total)
    return str([b - a for a, b in itertools.pairwise(cuts)])


@relation("split")
def split_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """A tuple of pieces along ``axis``: ``N`` equal sections or pieces between split indices
    (with ``total``, the last piece ends there and the axis must be ``total`` long)."""
    out = args[1]
    ios = parse_split(attrs, ctx.name)
    total = parse_total(attrs, ios, ctx.name)
    axis = attr_int(attrs, "axis", 0, ctx.name)
    npieces = ios if isinstance(ios, int) else len(ios) + 1
    x = ranked_or_defer(ctx, args, out, lambda x: TupleType((Tensor(None, x.dtype),) * npieces))
    if isinstance(x, bool):
        return x
    ax = norm_axis(ctx, axis, len(x.dims), "split")
    d = x.dims[ax]
    chk = Checks()
    sizes: list[Dim]
    if isinstance(ios, int):
        chk.require(
            eq(mod(d, ios), 0),
            SHAPE_MISMATCH,
            f"split: {ios} sections do not divide axis {ax} of `{x}`",
        )
        sizes = [exact_div(d, as_dim(ios))] * ios
    else:
        if total is not None:
            chk.require(
                eq(d, total),
                SHAPE_MISMATCH,
                f"split: the sizes {_sizes_text(ios, total)} add up to {total}, but axis {ax} of"
                f" `{x}` is {d} long",
            )
        elif ios:
            chk.require(
                le(ios[-1], d),
                SHAPE_MISMATCH,
                f"split: index {ios[-1]} is beyond axis {ax} of `{x}`",
            )
        prev = 0
        sizes = []
        for k in ios:
            sizes.append(as_dim(k - prev))
            prev = k
        sizes.append(d - prev if total is None else as_dim(total - prev))
    if not chk.commit(ctx):
        return False
    fields = []
    for s in sizes:
        sh = list(x.dims)
        sh[ax] = s
        fields.append(Tensor(tuple(sh), x.dtype))
    ctx.assign(out, TupleType(tuple(fields)))
    return True
