"""Linear algebra: ``dense``, numpy ``matmul``, ``batch_matmul``.

* ``dense(x, w, units=None)``: ``w`` is ``(units, K)``, ``out = x.shape[:-1] + (units,)``. With
  ``units`` the weight is *assigned* ``(units, x.shape[-1])`` (an unannotated weight is inferred,
  an annotated one is unified with it). Without ``units`` the weight must be a rank-2 tensor
  (one of unknown rank gives an unknown number of units).
  Either way the contracted dimensions must agree (Relay does not check this).
* ``matmul(a, b, out_dtype=None)``: numpy semantics: a 1-d operand gets a 1 prepended (``a``) or
  appended (``b``) and that dimension removed from the result; batch dimensions broadcast;
  ``a[-1] == b[-2]``; ``out_dtype`` (Relax) sets the result's dtype.
* ``batch_matmul(x, y, transpose_a=False, transpose_b=True)``: rank-3 operands; batch
  dimensions equal or 1 (broadcast), contracted dimensions equal.
"""

from __future__ import annotations

from collections.abc import Sequence

from symshape.encoding.dims import Dim, as_dim
from symshape.encoding.types import Attrs, Tensor, TensorType, Type
from symshape.errors import RANK_MISMATCH, SHAPE_MISMATCH
from symshape.relations.base import Context, relation
from symshape.relations.common import Checks, attr_bool, attr_dtype, attr_int
from symshape.relations.elementwise import broadcast_shapes, join_dtype
from symshape.relations.operands import tensor_args, tensor_or_defer, unknown_rank

__all__ = ["dense_rel", "matmul_rel", "batch_matmul_rel"]


def _contracted(ctx: Context, what: str, x: TensorType, kx: Dim, y: TensorType, ky: Dim) -> bool:
    """States that the contracted dimensions ``kx`` (of ``x``) and ``ky`` (of ``y``, described as
    ``what``) agree; False: defer."""
    chk = Checks()
    chk.equal(
        kx, ky, SHAPE_MISMATCH, f"{ctx.name}: contracted dimensions differ: `{x}` has {kx}, {what} has {ky}"
    )
    return chk.commit(ctx)


Operands = tuple[TensorType, TensorType, object]


def _operands(ctx: Context, args: Sequence[Type], attrs: Attrs) -> Operands | bool:
    """The two ranked operands of a product and its dtype (``out_dtype``, else theirs), or the
    relation's answer without them (see :func:`~symshape.relations.base.ranked_or_defer`)."""
    out_dtype = attr_dtype(attrs, "out_dtype", ctx.name)
    ts = tensor_args(ctx, args, 2)
    if ts is None:
        return False
    a, b = ts
    dtype = out_dtype or join_dtype(ctx, [a.dtype, b.dtype], ctx.name)
    if a.ndim is None or b.ndim is None:
        return unknown_rank(ctx, args[2], dtype)
    return a, b, dtype


@relation("dense")
def dense_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out = x.shape[:-1] + (units,)`` with ``w: (units, K)``, ``K = x.shape[-1]``."""
    out = args[2]
    units_v = attrs.get("units")
    units = None if units_v is None else attr_int(attrs, "units", None, ctx.name, lo=1)
    out_dtype = attr_dtype(attrs, "out_dtype", ctx.name)
    x = tensor_or_defer(args[0], ctx, 0)
    w = tensor_or_defer(args[1], ctx, 1)
    if x is None:
        return False
    dtype = out_dtype or x.dtype
    if x.ndim is None:
        return unknown_rank(ctx, out, dtype)
    if x.ndim == 0:
        ctx.fail(RANK_MISMATCH, f"dense: the data `{x}` must have rank >= 1")
    k = x.dims[-1]
    if units is not None:
        wdtype = w.dtype if w is not None else x.dtype
        ctx.assign(args[1], Tensor((units, k), wdtype))
        n_out: Dim = as_dim(units)
    else:
        if w is None:
            return False
        if w.ndim is None:
            # a weight of unknown rank: the result has x's leading dimensions and an unknown
            # number of units (the weight may still be refined through a hole: last run only)
            if not ctx.final:
                return False
            ctx.assign(out, Tensor((*x.dims[:-1], ctx.fresh_dim()), dtype))
            return True
        if w.ndim != 2:
            ctx.fail(RANK_MISMATCH, f"dense: the weight `{w}` must have rank 2")
        if not _contracted(ctx, f"weight `{w}`", x, k, w, w.dims[1]):
            return False
        n_out = w.dims[0]
    ctx.assign(out, Tensor((*x.dims[:-1], n_out), dtype))
    return True


@relation("matmul")
def matmul_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """numpy ``matmul``: 1-d promotion, broadcast batch dimensions, ``a[-1] == b[-2]``."""
    out = args[2]
    got = _operands(ctx, args, attrs)
    if isinstance(got, bool):
        return got
    a, b, dtype = got
    if a.ndim == 0 or b.ndim == 0:
        ctx.fail(RANK_MISMATCH, f"matmul: operands must have rank >= 1, got `{a}` and `{b}`")
    sa = a.dims if len(a.dims) > 1 else (as_dim(1), *a.dims)
    sb = b.dims if len(b.dims) > 1 else (*b.dims, as_dim(1))
    if not _contracted(ctx, f"`{b}`", a, sa[-1], b, sb[-2]):
        return False
    batch = broadcast_shapes(ctx, Tensor(sa[:-2], a.dtype), Tensor(sb[:-2], b.dtype))
    if batch is None:
        return False
    shape = list(batch)
    if len(a.dims) > 1:
        shape.append(sa[-2])
    if len(b.dims) > 1:
        shape.append(sb[-1])
    ctx.assign(out, Tensor(tuple(shape), dtype))
    return True


@relation("batch_matmul")
def batch_matmul_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``(B, I, K) x (B, J, K) -> (B, I, J)`` (layouts per ``transpose_a``/``transpose_b``)."""
    out = args[2]
    ta = attr_bool(attrs, "transpose_a", False, ctx.name)
    tb = attr_bool(attrs, "transpose_b", True, ctx.name)
    got = _operands(ctx, args, attrs)
    if isinstance(got, bool):
        return got
    x, y, dtype = got
    if x.ndim != 3 or y.ndim != 3:
        ctx.fail(RANK_MISMATCH, f"batch_matmul: operands must have rank 3, got `{x}` and `{y}`")
    xb, xi, xk = (x.dims[0], x.dims[2], x.dims[1]) if ta else x.dims
    if tb:
        yb, yj, yk = y.dims
    else:
        yb, yk, yj = y.dims
    if not _contracted(ctx, f"`{y}`", x, xk, y, yk):
        return False
    batch = broadcast_shapes(ctx, Tensor((xb,), x.dtype), Tensor((yb,), y.dtype))
    if batch is None:
        return False
    ctx.assign(out, Tensor((*batch, xi, yj), dtype))
    return True
