"""Relations that keep the elements and change the shape: ``flatten``, ``reshape``, ``reshape_like``.

=====================  =========================================================================
relation               rule (Relay semantics; every optimistic Relay check is a condition here)
=====================  =========================================================================
``flatten``            ``(prod(sh[:axis]), prod(sh[axis:]))``, ``axis`` in ``[-rank, rank]``
``reshape``            ``newshape`` with Relay's 0, -1, -2, -3, -4; the element count must be
                       preserved (``reshape-size``): ``(n, 6) -> (-1, 4)`` gives ``((3*n)//2, 4)``
                       and the guard ``n % 2 == 0``; ``(2, 3) -> (7,)`` is an error. Counts are
                       compared in full (``(0, 5, 0) -> (0, 5, 0, 2)`` is valid: 0 elements
                       each), cancelling only factors known to be positive; -1 needs the other
                       result dimensions to be non-zero (numpy), a guard where they may be 0
``reshape_like``       ``like``'s shape, same element count
=====================  =========================================================================

An input of unknown rank gives a result of unknown rank, except where the attributes fix the
rank (a ``newshape`` without -2, a ``like`` of known rank): the result then has that rank and
unknown dimensions where the input would decide them. Every operand must be a tensor: anything
else is a ``type-mismatch``.
"""

from __future__ import annotations

from collections.abc import Sequence

from symshape.encoding.types import Attrs, Tensor, TensorType, Type
from symshape.errors import RESHAPE_SIZE
from symshape.relations.base import Context, Lazy, relation
from symshape.relations.common import Checks, attr_bool, attr_int, equal_counts, norm_axis, product, shape_str
from symshape.relations.newshape import Spec, parse_newshape, reshape_dims
from symshape.relations.operands import ranked_or_defer, tensor_args, tensor_or_defer, unknown_rank
from symshape.relations.reshape_target import require_reshape, reshape_by_value, reshape_unknown_rank
from symshape.relations.values import reshape_value, with_value

__all__ = ["flatten_rel", "Spec", "parse_newshape", "reshape_dims", "reshape_rel", "reshape_like_rel"]


@relation("flatten")
def flatten_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out = Tensor((prod(sh[:axis]), prod(sh[axis:])))``."""
    out = args[1]
    axis = attr_int(attrs, "axis", 1, ctx.name)
    x = ranked_or_defer(ctx, args, out, lambda x: Tensor((ctx.fresh_dim(), ctx.fresh_dim()), x.dtype))
    if isinstance(x, bool):
        return x
    sh = x.dims
    if axis != len(sh):  # axis in [-rank, rank]
        axis = norm_axis(ctx, axis, len(sh), "flatten")
    ctx.assign(out, Tensor((product(sh[:axis]), product(sh[axis:])), x.dtype))
    return True


# ----------------------------------------------------------------------------------------------
# reshape

@relation("reshape")
def reshape_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """Relay's reshape with special values; the element count is preserved. With two inputs the
    new shape is the value of the second (see :mod:`~symshape.relations.reshape_target`)."""
    allowzero = attr_bool(attrs, "allowzero", False, ctx.name)
    if ctx.num_inputs == 2:
        return reshape_by_value(ctx, args, allowzero)
    out = args[1]
    spec = parse_newshape(attrs, ctx.name)
    x = tensor_or_defer(args[0], ctx, 0)
    if x is None:
        return False
    if x.ndim is None:
        return reshape_unknown_rank(ctx, x, spec, allowzero, out)
    dims, conds, err = reshape_dims(x.dims, spec, allowzero)
    if err is not None:
        ctx.fail(RESHAPE_SIZE, f"reshape of `{x}` to {tuple(map(str, spec))}: {err}")
    if not require_reshape(ctx, x, Lazy(shape_str, spec), conds):
        return False
    ctx.assign(out, with_value(Tensor(dims, x.dtype), reshape_value(x, dims)))
    return True


@relation("reshape_like")
def reshape_like_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out = Tensor(like.shape, x.dtype)`` with the same number of elements (a condition); on
    the last run a ``like`` of known rank gives that shape even when ``x``'s rank is unknown."""
    out = args[2]
    ts = tensor_args(ctx, args, 2)
    if ts is None:
        return False
    x, like = ts
    if x.ndim is None or like.ndim is None:
        if like.ndim is not None and ctx.final:
            ctx.assign(out, TensorType(like.shape, x.dtype))
            return True
        return unknown_rank(ctx, out, x.dtype)
    chk = Checks()
    chk.require(
        equal_counts(product(x.dims), product(like.dims)),
        RESHAPE_SIZE,
        f"reshape_like: `{x}` and `{like}` have different numbers of elements",
    )
    if not chk.commit(ctx):
        return False
    ctx.assign(out, TensorType(like.shape, x.dtype))
    return True
