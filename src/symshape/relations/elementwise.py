"""Elementwise relations: ``identity``, ``identity_bool``, numpy ``broadcast``, ``where``, ``cast``.

Unary operators use ``identity`` (the output is the input's type; Relay's IdentityRel), predicates
such as ``isnan`` use ``identity_bool`` (same shape, ``bool``). ``where(cond, x, y)`` broadcasts
all three shapes; ``cond`` must be ``bool`` and ``x``, ``y`` share a dtype. ``cast(x, dtype)``
keeps the shape; ``cast_like(x, like)`` takes ``like``'s dtype.

Broadcast rule per (right-aligned) dimension pair ``x, y``:

=====================================  ==========================================================
case                                   result
=====================================  ==========================================================
``x == y`` (canonical or provable)     ``x``
``x == 1`` / ``y == 1``                the other one
two different constants, neither 1     error ``not-broadcastable``
``n`` against ``5``                    ``5``, guard ``n == 1 or n == 5``
``n`` against ``m``                    ``max(n, m)``, guard ``n == m or n == 1 or m == 1``
an unknown dimension                   defer (last pass: equate the two)
=====================================  ==========================================================
"""

from __future__ import annotations

from collections.abc import Sequence

from symshape.encoding.conds import any_of, eq
from symshape.encoding.dims import Dim, dmax
from symshape.encoding.types import Attrs, Tensor, TensorType, Type
from symshape.errors import DTYPE_MISMATCH, NOT_BROADCASTABLE
from symshape.relations.base import Context, relation
from symshape.relations.common import attr_dtype

__all__ = [
    "identity_rel",
    "identity_bool_rel",
    "broadcast_rel",
    "broadcast_bool_rel",
    "broadcast_shapes",
    "join_dtype",
    "where_rel",
    "cast_rel",
    "cast_like_rel",
]


@relation("identity")
def identity_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """All arguments have the same type."""
    first = args[0]
    for t in args[1:]:
        first = ctx.unify(first, t)
    return True


def join_dtype(ctx: Context, dtypes: Sequence[object], what: str) -> object:
    """The common dtype of the inputs; two different known dtypes are a ``dtype-mismatch``."""
    known = [d for d in dtypes if d is not None]
    for d in known[1:]:
        if d != known[0]:
            ctx.fail(DTYPE_MISMATCH, f"{what}: dtypes {known[0]} and {d} differ")
    return known[0] if known else None


def _not_broadcastable(ta: TensorType, tb: TensorType, i: int, x: object, y: object) -> str:
    """The message for the ``i``-th dimension pair from the right, each dimension named by its
    0-based index in its own tensor (as printed next to it)."""
    ia, ib = len(ta.dims) - i, len(tb.dims) - i
    if ia == ib:
        return f"cannot broadcast `{ta}` and `{tb}`: dimension {ia}: {x} vs {y}"
    where = f"dimension {ia} of the first is {x}, dimension {ib} of the second is {y}"
    return f"cannot broadcast `{ta}` and `{tb}`: {where}"


def _pair(ctx: Context, x: Dim, y: Dim, i: int, ta: TensorType, tb: TensorType) -> Dim | None:
    if x == y:
        return x
    if x == 1:
        return y
    if y == 1:
        return x
    cx, cy = x.constant_value, y.constant_value
    if cx is not None and cy is not None:
        ctx.fail(NOT_BROADCASTABLE, _not_broadcastable(ta, tb, i, cx, cy))
    if x.has_unknowns or y.has_unknowns:
        if not ctx.final:
            return None
        return ctx.unify_dim(x, y)
    if ctx.prove(eq(x, y)):
        return x
    if ctx.prove(eq(x, 1)):
        return y
    if ctx.prove(eq(y, 1)):
        return x
    if cy is not None:
        cond = any_of(eq(x, 1), eq(x, y))
    elif cx is not None:
        cond = any_of(eq(y, 1), eq(y, x))
    else:
        cond = any_of(eq(x, y), eq(x, 1), eq(y, 1))
    ctx.require(cond, NOT_BROADCASTABLE, _not_broadcastable(ta, tb, i, x, y))
    if cy is not None:
        return y
    if cx is not None:
        return x
    return dmax(x, y)


def broadcast_shapes(ctx: Context, ta: TensorType, tb: TensorType) -> tuple[Dim, ...] | None:
    """The broadcast shape of two ranked tensors, or None to defer."""
    sa, sb = ta.dims, tb.dims
    n = max(len(sa), len(sb))
    out: list[Dim] = []
    for i in range(1, n + 1):
        x = sa[-i] if i <= len(sa) else None
        y = sb[-i] if i <= len(sb) else None
        if x is None:
            assert y is not None
            out.append(y)
        elif y is None:
            out.append(x)
        else:
            r = _pair(ctx, x, y, i, ta, tb)
            if r is None:
                return None
            out.append(r)
    return tuple(reversed(out))


@relation("broadcast")
def broadcast_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out`` is the numpy broadcast of the inputs (``out_dtype`` attribute overrides dtype)."""
    ins = args[: ctx.num_inputs]
    outs = args[ctx.num_inputs :]
    tensors = [t for t in ins if isinstance(t, TensorType)]
    if len(tensors) < len(ins):
        return False
    dtype = join_dtype(ctx, [t.dtype for t in tensors], ctx.name)
    out_dtype = attrs.get("out_dtype", dtype)
    if any(t.ndim is None for t in tensors):
        result = Tensor(None, out_dtype)  # type: ignore[arg-type]
    else:
        acc = tensors[0]
        for t in tensors[1:]:
            shape = broadcast_shapes(ctx, acc, t)
            if shape is None:
                return False
            acc = Tensor(shape, dtype)  # type: ignore[arg-type]
        result = Tensor(acc.dims, out_dtype)  # type: ignore[arg-type]
    for o in outs:
        ctx.assign(o, result)
    return True


@relation("broadcast_bool")
def broadcast_bool_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """Broadcast with a ``bool`` result (comparisons)."""
    return broadcast_rel(ctx, args, Attrs({**dict(attrs), "out_dtype": "bool"}))


@relation("identity_bool")
def identity_bool_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out = Tensor(x.shape, bool)`` (Relay's IdentityCompRel: isnan, isinf, isfinite)."""
    x, out = args[0], args[1]
    if not isinstance(x, TensorType):
        return False
    ctx.assign(out, TensorType(x.shape, "bool"))
    return True


@relation("where")
def where_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out`` is the broadcast of ``cond, x, y`` with ``x``'s dtype; ``cond`` is ``bool``."""
    c, x, y = args[0], args[1], args[2]
    if not (isinstance(c, TensorType) and isinstance(x, TensorType) and isinstance(y, TensorType)):
        return False
    if c.dtype is not None and c.dtype != "bool":
        ctx.fail(DTYPE_MISMATCH, f"where: the condition must be bool, got {c.dtype}")
    dtype = join_dtype(ctx, [x.dtype, y.dtype], "where")
    if c.ndim is None or x.ndim is None or y.ndim is None:
        if not ctx.final:
            return False
        ctx.assign(args[3], Tensor(None, dtype))  # type: ignore[arg-type]
        return True
    s1 = broadcast_shapes(ctx, x, y)
    if s1 is None:
        return False
    s2 = broadcast_shapes(ctx, c, Tensor(s1, dtype))  # type: ignore[arg-type]
    if s2 is None:
        return False
    ctx.assign(args[3], Tensor(s2, dtype))  # type: ignore[arg-type]
    return True


@relation("cast")
def cast_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out = Tensor(x.shape, attrs.dtype)``."""
    x, out = args[0], args[1]
    dtype = attr_dtype(attrs, "dtype", ctx.name, required=True)
    if not isinstance(x, TensorType):
        return False
    ctx.assign(out, TensorType(x.shape, dtype))
    return True


@relation("cast_like")
def cast_like_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out = Tensor(x.shape, like.dtype)``."""
    x, like, out = args[0], args[1], args[2]
    if not (isinstance(x, TensorType) and isinstance(like, TensorType)):
        return False
    ctx.assign(out, TensorType(x.shape, like.dtype))
    return True
