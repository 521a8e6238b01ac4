"""Elementwise relations: ``identity``, ``unary``, ``unary_float``, ``identity_bool``, ``init_like``,
numpy ``broadcast``, ``where``, ``cast``.

``identity`` gives every argument the same type, whatever it is (Relay's IdentityRel; user
operators such as a ``print`` use it). The elementwise unary operators use ``unary`` (the input
must be a tensor; the output is its type) or, for the operators Relax registers as float-only
(``exp``, ``log``, ``sqrt``, ``sigmoid``, ``tanh``, ``erf``, ``sin``, ...), ``unary_float``,
which also rejects an integer or ``bool`` tensor (``dtype-mismatch``, no guard). Predicates such
as ``isnan`` use ``identity_bool`` (same shape, ``bool``); ``zeros_like``/``ones_like`` use
``init_like`` (same shape, the ``dtype`` attribute or the input's dtype). ``where(cond, x, y)``
broadcasts all three shapes; ``cond`` must be ``bool`` and ``x``, ``y`` share a dtype.
``cast(x, dtype)`` keeps the shape; ``cast_like(x, like)`` takes ``like``'s dtype. Every operand
of these relations but ``identity``'s must be a tensor: a tuple or function operand is a
``type-mismatch`` (see :func:`~symshape.relations.base.tensor_or_defer`).

Broadcast rule per (right-aligned) dimension pair ``x, y``:

=====================================  ==========================================================
case                                   result
=====================================  ==========================================================
``x == y`` (canonical or provable)     ``x``
``x == 1`` / ``y == 1``                the other one
two different constants, neither 1     error ``not-broadcastable``
``n`` against ``5``                    ``5``, guard ``n == 1 or n == 5``
``n`` against ``m``                    ``max(n, m)``, guard ``n == m or n == 1 or m == 1``
``n`` against ``m``, either may be 0   ``min(max(n, m), m*n)`` (numpy: 0 against 1 gives 0),
                                       the same guard
an unknown dimension                   defer (last pass: equate the two)
=====================================  ==========================================================
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from symshape.encoding.conds import all_of, any_of, eq, ge
from symshape.encoding.dims import Dim, bounds, dmax, dmin
from symshape.encoding.types import Attrs, Tensor, TensorType, Type
from symshape.encoding.values import Value
from symshape.errors import DTYPE_MISMATCH, NOT_BROADCASTABLE
from symshape.relations.base import Context, Lazy, RelationFn, register_relation, relation
from symshape.relations.common import attr_dtype, require_float
from symshape.relations.operands import tensor_args, tensor_or_defer, unknown_rank
from symshape.relations.values import (
    BINARY_VALUE_OPS,
    COMPARE_VALUE_OPS,
    LOGICAL_VALUE_OPS,
    binary_value,
    cast_value,
    compare_value,
    logical_value,
    negative_value,
    not_value,
    where_value,
    with_value,
)

__all__ = [
    "identity_rel",
    "unary_rel",
    "unary_float_rel",
    "init_like_rel",
    "identity_bool_rel",
    "broadcast_rel",
    "broadcast_bool_rel",
    "broadcast_shapes",
    "join_dtype",
    "where_rel",
    "cast_rel",
    "cast_like_rel",
    "logical_not_rel",
    "negative_rel",
]


@relation("identity")
def identity_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """All arguments have the same type."""
    first = args[0]
    for t in args[1:]:
        first = ctx.unify(first, t)
    return True


def _unary(ctx: Context, args: Sequence[Type], float_only: bool) -> bool:
    x = tensor_or_defer(args[0], ctx, 0)
    if x is None:
        # a hole: the output's type flows back into it (an annotated result types the operand)
        ctx.unify(args[0], args[1])
        x = tensor_or_defer(ctx.resolve(args[0]), ctx, 0)
        if x is None:
            # nothing determines the operand: the rule (out = x) is stated, and the hole itself
            # is what the report names (not this call as well)
            return ctx.final
    if float_only:
        require_float(ctx, x, complex_ok=True)
    if x.value is not None:  # the operator computes new entries: their value is not known
        x = TensorType(x.shape, x.dtype)
    ctx.assign(args[1], x)
    return True


@relation("unary")
def unary_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out = x`` for a tensor ``x`` (elementwise unary operators: relu, abs, negative, ...)."""
    return _unary(ctx, args, False)


@relation("unary_float")
def unary_float_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out = x`` for a float tensor ``x`` (exp, log, sqrt, sigmoid, tanh, ...; Relax's
    float-only unary operators)."""
    return _unary(ctx, args, True)


@relation("init_like")
def init_like_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out = Tensor(x.shape, dtype or x.dtype)`` (zeros_like, ones_like)."""
    dtype = attr_dtype(attrs, "dtype", ctx.name)
    x = tensor_or_defer(args[0], ctx, 0)
    if x is None:
        return False
    ctx.assign(args[1], TensorType(x.shape, dtype or x.dtype))
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
    if cy is not None:
        cond = any_of(eq(x, 1), eq(x, y))
    elif cx is not None:
        cond = any_of(eq(y, 1), eq(y, x))
    else:
        cond = any_of(eq(x, y), eq(x, 1), eq(y, 1))
    # a guard (known as such: the same question asked before, up to renaming) is proved by none
    # of its disjuncts, so the three proofs would fail: they are not tried
    if ctx.known_verdict(cond) != "guard":
        if ctx.prove(eq(x, y)):
            return x
        if ctx.prove(eq(x, 1)):
            return y
        if ctx.prove(eq(y, 1)):
            return x
    ctx.require(cond, NOT_BROADCASTABLE, Lazy(_not_broadcastable, ta, tb, i, x, y))
    if cy is not None:
        return y
    if cx is not None:
        return x
    if (bounds(x)[0] >= 1 and bounds(y)[0] >= 1) or ctx.prove(all_of(ge(x, 1), ge(y, 1))):
        return dmax(x, y)
    # numpy broadcasts 0 against 1 to 0: under the guard the result is max(x, y), or 0 when
    # either is 0 (the other is then 0 or 1)
    return dmin(dmax(x, y), x * y)


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
        elif y is None or x is y:
            out.append(x)
        elif (
            len(xt := x.terms) == 1 and len(yt := y.terms) == 1 and not xt[0][0] and not yt[0][0]
        ) and (xt[0][1] == yt[0][1] or yt[0][1] == 1):
            out.append(x)  # (two nonzero constants, equal or the second 1: what _pair gives)
        else:
            r = _pair(ctx, x, y, i, ta, tb)
            if r is None:
                return None
            out.append(r)
    return tuple(reversed(out))


def _broadcast_result(
    ctx: Context, args: Sequence[Type], attrs: Attrs
) -> tuple[TensorType, list[TensorType]] | None:
    """The broadcast of the inputs and the inputs; None to defer."""
    tensors = tensor_args(ctx, args)
    if tensors is None:
        return None
    dtype: object = tensors[0].dtype
    for t in tensors:
        if t.dtype != dtype:  # (else the join is that dtype: no list, no call)
            dtype = join_dtype(ctx, [t.dtype for t in tensors], ctx.name)
            break
    out_dtype = attrs.get("out_dtype", dtype)
    for t in tensors:
        if type(t.shape) is not tuple:  # (``t.ndim is None``)
            return Tensor(None, out_dtype), tensors
    acc = tensors[0]
    for t in tensors[1:]:
        shape = broadcast_shapes(ctx, acc, t)
        if shape is None:
            return None
        acc = TensorType(shape, dtype)  # type: ignore[arg-type]  # (a dtype the inputs have)
    if acc is not tensors[0] and out_dtype == dtype:
        return acc, tensors  # (built here, of the result's dtype)
    return TensorType(acc.dims, out_dtype), tensors  # type: ignore[arg-type]  # (normalized there)


@relation("broadcast")
def broadcast_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out`` is the numpy broadcast of the inputs (``out_dtype`` attribute overrides dtype)."""
    got = _broadcast_result(ctx, args, attrs)
    if got is None:
        return False
    for o in args[ctx.num_inputs :]:
        ctx.assign(o, got[0])
    return True


ValueFn = Callable[[str, TensorType, TensorType, Sequence[Dim]], Value | None]
"""How a valued operator computes its result's value from its operands' and the result shape."""


def _valued_rel(op: str, value: ValueFn, out_dtype: str | None = None) -> RelationFn:
    """``broadcast`` (with ``out_dtype`` when given) for an operator that also computes the value
    of its result: the entrywise arithmetic (:func:`~symshape.relations.values.binary_value`) or
    comparison (bool entries 0/1, :func:`~symshape.relations.values.compare_value`)."""

    def rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
        if out_dtype is not None:
            attrs = Attrs({**dict(attrs), "out_dtype": out_dtype})
        got = _broadcast_result(ctx, args, attrs)
        if got is None:
            return False
        result, ins = got
        if len(ins) == 2 and (ins[0].value is not None or ins[1].value is not None):
            if isinstance(result.shape, tuple) and len(result.shape) <= 1:
                result = with_value(result, value(op, ins[0], ins[1], result.shape))
        for o in args[ctx.num_inputs :]:
            ctx.assign(o, result)
        return True

    what = "numpy broadcast" if out_dtype is None else f"broadcast with a {out_dtype} result"
    rel.__doc__ = f"{what}; the value of the result is the entrywise `{op}`."
    return rel


for _op in BINARY_VALUE_OPS:
    if _op != "floor_mod":
        register_relation(_op, _valued_rel(_op, binary_value))
for _op in COMPARE_VALUE_OPS:
    register_relation(_op, _valued_rel(_op, compare_value, "bool"))
for _op in LOGICAL_VALUE_OPS:
    register_relation(_op, _valued_rel(_op, logical_value))


@relation("logical_not")
def logical_not_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out = x`` (as ``unary``); the value of the result is each 0/1 entry's negation."""
    return _unary_valued(ctx, args, not_value)


@relation("negative")
def negative_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out = x`` (as ``unary``); the value of a signed integer result is each entry negated
    (``-shape_of(x)``: the sizes with their signs flipped, as ``0 - x`` gives them)."""
    return _unary_valued(ctx, args, negative_value)


def _unary_valued(ctx: Context, args: Sequence[Type], value: Callable[[TensorType], Value | None]) -> bool:
    """``out = x`` (as ``unary``) with the value ``value(x)`` gives the result (None: no value)."""
    x = tensor_or_defer(args[0], ctx, 0)
    v = None if x is None else value(x)
    if x is None or v is None:
        return _unary(ctx, args, False)
    ctx.assign(args[1], TensorType(x.shape, x.dtype, v))
    return True


@relation("broadcast_bool")
def broadcast_bool_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """Broadcast with a ``bool`` result (comparisons)."""
    return broadcast_rel(ctx, args, Attrs({**dict(attrs), "out_dtype": "bool"}))


@relation("identity_bool")
def identity_bool_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out = Tensor(x.shape, bool)`` (Relay's IdentityCompRel: isnan, isinf, isfinite)."""
    x, out = tensor_or_defer(args[0], ctx, 0), args[1]
    if x is None:
        return False
    ctx.assign(out, TensorType(x.shape, "bool"))
    return True


@relation("where")
def where_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out`` is the broadcast of ``cond, x, y`` with ``x``'s dtype; ``cond`` is ``bool``."""
    ts = tensor_args(ctx, args, 3)
    if ts is None:
        return False
    c, x, y = ts
    if c.dtype is not None and c.dtype != "bool":
        ctx.fail(DTYPE_MISMATCH, f"where: the condition must be bool, got {c.dtype}")
    dtype = join_dtype(ctx, [x.dtype, y.dtype], "where")
    if c.ndim is None or x.ndim is None or y.ndim is None:
        return unknown_rank(ctx, args[3], dtype)
    s1 = broadcast_shapes(ctx, x, y)
    if s1 is None:
        return False
    s2 = broadcast_shapes(ctx, c, Tensor(s1, dtype))
    if s2 is None:
        return False
    out = Tensor(s2, dtype)
    if c.value is not None and len(s2) <= 1:
        out = with_value(out, where_value(c, x, y, s2))
    ctx.assign(args[3], out)
    return True


@relation("cast")
def cast_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out = Tensor(x.shape, attrs.dtype)``."""
    out = args[1]
    dtype = attr_dtype(attrs, "dtype", ctx.name, required=True)
    x = tensor_or_defer(args[0], ctx, 0)
    if x is None:
        return False
    # between int32 and int64 the value stays (shape values are far from either bound); to bool
    # each entry is `!= 0`
    value = cast_value(x, dtype) if dtype is not None else None
    ctx.assign(out, TensorType(x.shape, dtype, value))
    return True


@relation("cast_like")
def cast_like_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out = Tensor(x.shape, like.dtype)``."""
    out = args[2]
    ts = tensor_args(ctx, args, 2)
    if ts is None:
        return False
    x, like = ts
    value = cast_value(x, like.dtype) if isinstance(like.dtype, str) else None
    ctx.assign(out, TensorType(x.shape, like.dtype, value))
    return True
