"""Reductions: ``reduce`` (sum, mean, prod, all, any), ``reduce_nonempty`` (max, min) and
``arg_reduce`` (argmax, argmin).

Attributes ``axis`` (None: every axis; an int or a sequence; negative axes count from the end;
duplicates are an error), ``keepdims`` (reduced axes become 1 instead of disappearing) and
``exclude`` (reduce every axis *not* listed). ``axis=()`` reduces nothing (numpy; with
``exclude=True`` it reduces everything). ``max``/``min``/``argmax``/``argmin`` need a non-empty
reduced extent (numpy raises on a zero-size reduction): a dimension that may be 0 is a guard.
``argmax``/``argmin`` give ``int32``. A full reduction (no ``axis``, no ``keepdims``) of a tensor
of unknown rank is a scalar.
"""

from __future__ import annotations

from collections.abc import Sequence

from symshape.encoding.conds import ge
from symshape.encoding.dims import Dim, as_dim
from symshape.encoding.types import Attrs, Tensor, Type
from symshape.errors import BAD_ATTRIBUTE, SHAPE_MISMATCH
from symshape.relations.base import Context, relation
from symshape.relations.common import Checks, attr_axes, attr_bool, norm_axis
from symshape.relations.operands import ranked_or_defer

__all__ = ["reduce_rel", "reduce_nonempty_rel", "arg_reduce_rel", "reduced_axes"]


def reduced_axes(ctx: Context, attrs: Attrs, ndim: int) -> list[int]:
    """The sorted, non-negative axes a reduction removes."""
    axes = attr_axes(attrs, "axis", ctx.name)
    exclude = attr_bool(attrs, "exclude", False, ctx.name)
    if axes is None:
        chosen = set(range(ndim))
        return [] if exclude else sorted(chosen)
    norm = [norm_axis(ctx, a, ndim, ctx.name) for a in axes]
    if len(set(norm)) != len(norm):
        ctx.fail(BAD_ATTRIBUTE, f"{ctx.name}: duplicate axes in {axes} for rank {ndim}")
    if exclude:
        return [i for i in range(ndim) if i not in norm]
    return sorted(norm)


def _reduce(ctx: Context, args: Sequence[Type], attrs: Attrs, dtype: object, nonempty: bool) -> bool:
    out = args[1]
    attr_axes(attrs, "axis", ctx.name)
    keepdims = attr_bool(attrs, "keepdims", False, ctx.name)
    attr_bool(attrs, "exclude", False, ctx.name)
    # a full reduction without keepdims is a scalar whatever the input's rank
    scalar = attrs.get("axis") is None and not attr_bool(attrs, "exclude", False, ctx.name) and not keepdims
    x = ranked_or_defer(ctx, args, out, lambda x: Tensor(() if scalar else None, dtype or x.dtype))
    if isinstance(x, bool):
        return x
    odtype = dtype or x.dtype
    axes = reduced_axes(ctx, attrs, len(x.dims))
    chk = Checks()
    if nonempty:
        for i in axes:
            chk.require(
                ge(x.dims[i], 1),
                SHAPE_MISMATCH,
                f"{ctx.name}: reduction over axis {i} of `{x}`, which may be empty",
            )
    if not chk.commit(ctx):
        return False
    dims: list[Dim] = []
    for i, d in enumerate(x.dims):
        if i in axes:
            if keepdims:
                dims.append(as_dim(1))
        else:
            dims.append(d)
    ctx.assign(out, Tensor(tuple(dims), odtype))
    return True


@relation("reduce")
def reduce_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """Remove (or keep as 1) the reduced axes; the dtype is the input's."""
    return _reduce(ctx, args, attrs, None, False)


@relation("reduce_nonempty")
def reduce_nonempty_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """Like ``reduce``, and every reduced axis is non-empty (max, min)."""
    return _reduce(ctx, args, attrs, None, True)


@relation("arg_reduce")
def arg_reduce_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """Like ``reduce_nonempty`` with an ``int32`` result (argmax, argmin)."""
    return _reduce(ctx, args, attrs, "int32", True)
