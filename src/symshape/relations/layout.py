"""Relations that move, drop or insert axes: ``transpose``, ``squeeze``, ``expand_dims``.

=====================  =========================================================================
relation               rule (Relay semantics; every optimistic Relay check is a condition here)
=====================  =========================================================================
``transpose``          permutation (default: reversed); duplicate axes are an error
``squeeze``            drop axes of size 1 (a symbol needs the guard ``n == 1``); with
                       ``axis=None`` drop the provable 1s and require every other symbolic
                       dimension ``!= 1`` (otherwise the result rank would depend on its value)
``expand_dims``        insert ``num_newaxis`` ones at ``axis`` in ``[-rank-1, rank]``
=====================  =========================================================================

An input of unknown rank gives a result of unknown rank, except for ``transpose`` with ``axes``
(the result has that rank, unknown dimensions). Every operand must be a tensor: anything else is a
``type-mismatch``.
"""

from __future__ import annotations

from collections.abc import Sequence

from symshape.encoding.conds import eq, ne
from symshape.encoding.dims import as_dim
from symshape.encoding.types import Attrs, Tensor, TensorType, Type
from symshape.errors import (
    BAD_ATTRIBUTE,
    RANK_MISMATCH,
    SHAPE_MISMATCH,
)
from symshape.relations.base import Context, relation
from symshape.relations.common import (
    Checks,
    attr_axes,
    attr_int,
    norm_axis,
)
from symshape.relations.operands import ranked_or_defer
from symshape.relations.values import (
    reshape_value,
    with_value,
)

__all__ = ["transpose_rel", "squeeze_rel", "expand_dims_rel"]


@relation("transpose")
def transpose_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """Permute the dimensions by ``axes`` (default: reversed)."""
    out = args[1]
    axes = attr_axes(attrs, "axes", ctx.name)

    def unranked(x: TensorType) -> Type:
        if axes is None:
            return Tensor(None, x.dtype)
        # explicit axes fix the rank (Relax); the dimensions are unknown
        r = len(axes)
        if len({norm_axis(ctx, a, r, "transpose") for a in axes}) != r:
            ctx.fail(BAD_ATTRIBUTE, f"transpose: duplicate axes in {axes} for rank {r}")
        return Tensor(tuple(ctx.fresh_dim() for _ in range(r)), x.dtype)

    x = ranked_or_defer(ctx, args, out, unranked)
    if isinstance(x, bool):
        return x
    r = len(x.dims)
    if axes is None:
        perm = list(range(r - 1, -1, -1))
    else:
        if len(axes) != r:
            ctx.fail(
                RANK_MISMATCH, f"transpose: axes {axes} has {len(axes)} elements, but `{x}` has rank {r}"
            )
        perm = [norm_axis(ctx, a, r, "transpose") for a in axes]
        if len(set(perm)) != r:
            ctx.fail(BAD_ATTRIBUTE, f"transpose: duplicate axes in {axes} for rank {r}")
    ctx.assign(out, Tensor(tuple(x.dims[p] for p in perm), x.dtype))
    return True


@relation("squeeze")
def squeeze_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """Drop axes of size 1 (see the module docstring for ``axis=None``)."""
    out = args[1]
    axes = attr_axes(attrs, "axis", ctx.name)
    x = ranked_or_defer(ctx, args, out)
    if isinstance(x, bool):
        return x
    r = len(x.dims)
    chk = Checks()
    drop: set[int] = set()
    if axes is None:
        for i, d in enumerate(x.dims):
            if d == 1:
                drop.add(i)
            elif d.is_constant:
                continue
            elif d.has_unknowns and not ctx.final:
                return False
            elif ctx.prove(eq(d, 1)):
                drop.add(i)
            else:
                chk.require(
                    ne(d, 1),
                    SHAPE_MISMATCH,
                    f"squeeze without axis: dimension {i} of `{x}` ({d}) might be 1, "
                    "which would change the result's rank; pass axis",
                )
    else:
        for a in axes:
            i = norm_axis(ctx, a, r, "squeeze")
            if i in drop:
                ctx.fail(BAD_ATTRIBUTE, f"squeeze: duplicate axes in {axes} for rank {r}")
            drop.add(i)
            chk.equal(
                x.dims[i],
                as_dim(1),
                SHAPE_MISMATCH,
                f"squeeze: axis {i} of `{x}` has size {x.dims[i]}, not 1",
            )
    if not chk.commit(ctx):
        return False
    result = Tensor(tuple(d for i, d in enumerate(x.dims) if i not in drop), x.dtype)
    if x.value is not None and r == 1 and drop:  # (d,) -> d
        result = with_value(result, reshape_value(x, ()))
    ctx.assign(out, result)
    return True


@relation("expand_dims")
def expand_dims_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """Insert ``num_newaxis`` ones at ``axis`` (in ``[-rank-1, rank]``)."""
    out = args[1]
    axis = attr_int(attrs, "axis", None, ctx.name)
    k = attr_int(attrs, "num_newaxis", 1, ctx.name, lo=0)
    x = ranked_or_defer(ctx, args, out)
    if isinstance(x, bool):
        return x
    ax = norm_axis(ctx, axis, len(x.dims), "expand_dims", extra=1)
    sh = list(x.dims)
    sh[ax:ax] = [as_dim(1)] * k
    result = TensorType(tuple(sh), x.dtype)
    if x.value is not None and len(sh) <= 1:  # d -> (d,), or no new axis
        result = with_value(result, reshape_value(x, sh))
    ctx.assign(out, result)
    return True
