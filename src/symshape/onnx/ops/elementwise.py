"""Element-wise and broadcasting operators.

* Unary operators keep the input's type (``Relu``, ``Exp``, ``Clip``, ``Gelu``, ...; ``Neg`` of an
  integer tensor is ``0 - x``, which negates a shape value); ``IsNaN`` and
  ``IsInf`` give ``bool``. Extra inputs that do not change the shape (``Clip``'s bounds, ``Trilu``'s
  ``k``) are not read; ``ReverseSequence``'s ``sequence_lens`` has one entry per batch row.
  ``CumSum`` is ``cumsum`` (a shape value's running sums; otherwise its entries' range is that of
  running sums).
* Binary operators broadcast numpy-style from opset 7 (``Add``, ``Pow``, ``And``, ``BitShift``,
  ...); comparisons give ``bool``. Before opset 7 (``broadcast`` attribute) ``B`` is aligned with
  ``A`` at ``axis`` (default: the trailing axes), which numpy broadcasting gives once ``B`` has
  trailing size-1 axes.
* ``Pow`` (opset 12+) lets the exponent have another type: the result has the base's.
* ``PRelu`` broadcasts its slope to ``X`` only one way: the result is ``X``'s type.
* Variadic ``Max``, ``Min``, ``Sum``, ``Mean`` broadcast all inputs (opset 8+).
* ``Where`` is ``where`` (a branch that its condition compares with an integer constant,
  ``where(r < 4, r, ...)``, has its side's range: the core's rule for ``where``).
* ``Cast`` (``to``; a type name string in opset 1; to an element type symshape does not
  have, ``float8e4m3fn``, ``int4``, ...: the input's shape with an unknown dtype), ``CastLike``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import symshape as ss
from symshape import Expr
from symshape.errors import BAD_ATTRIBUTE, RANK_MISMATCH
from symshape.ir.nodes import Call, Constant, Var
from symshape.ir.op import Op, PreparedCall
from symshape.onnx.context import NodeContext
from symshape.onnx.dtypes import elem_type_name, to_dtype
from symshape.onnx.ops.common import PlanTable, chain, like, prepare, stacked, value_slice
from symshape.onnx.ops.pad_mask import unpadded_length
from symshape.onnx.registry import Outputs, register

__all__ = ["UNARY", "BINARY", "COMPARE", "OPAQUE_OP", "BITWISE_OP"]

#: the input's type, entries not tracked: operators that map an integer tensor's entries to
#: others (``BitwiseNot``: ``-x - 1``), so neither its exact value nor its range may pass through
#: as ``copy``'s would
OPAQUE_OP = ss.register_op(
    "onnx.opaque", "unary", 1, doc="the input's type; its entries are computed, not tracked", attr_types={}
)
#: numpy broadcasting without a value (bitwise operators: ``add`` would compute ``a + b``)
BITWISE_OP = ss.register_op(
    "onnx.bitwise", "broadcast", 2, doc="a broadcasting bitwise operator; entries not tracked", attr_types={}
)
_OPAQUE, _BITWISE = "onnx.opaque", "onnx.bitwise"

#: unary ONNX operator -> symshape operator (``copy`` for those without an own one that keep the
#: entries, :data:`OPAQUE_OP` for those that change them)
UNARY: dict[str, str] = {
    "Abs": "abs", "Neg": "negative", "Relu": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh",
    "Exp": "exp", "Log": "log", "Sqrt": "sqrt", "Floor": "floor", "Ceil": "ceil", "Round": "round",
    "Sign": "sign", "Erf": "erf", "Sin": "sin", "Cos": "cos",
    "Reciprocal": _OPAQUE, "Tan": "copy", "Asin": "copy", "Acos": "copy", "Atan": "copy",
    "Sinh": "copy", "Cosh": "copy", "Asinh": "copy", "Acosh": "copy", "Atanh": "copy",
    "Softplus": "copy", "Softsign": "copy", "Elu": "copy", "Selu": "copy", "Celu": "copy",
    "LeakyRelu": "copy", "ThresholdedRelu": "copy", "HardSigmoid": "copy", "HardSwish": "copy",
    "Mish": "copy", "Gelu": "copy", "Swish": "copy", "Shrink": _OPAQUE,
    "Clip": "copy",
    "LRN": "copy", "MeanVarianceNormalization": "copy", "LpNormalization": "copy",
}  # fmt: skip
_UNARY_SINCE: dict[str, int] = {
    "Acos": 7, "Asin": 7, "Atan": 7, "Cos": 7, "Sin": 7, "Tan": 7, "Asinh": 9, "Acosh": 9,
    "Atanh": 9, "Sinh": 9, "Cosh": 9, "Erf": 9, "Sign": 9, "Shrink": 9,
    "MeanVarianceNormalization": 9, "ThresholdedRelu": 10,
    "Round": 11, "Celu": 12, "HardSwish": 14, "Mish": 18,
    "Gelu": 20, "Swish": 24,
}  # fmt: skip

#: binary ONNX operator -> symshape operator, and the first opset with numpy broadcasting; on
#: bools (0/1) ``And`` is the minimum and ``Or`` the maximum, operators that compute the value (a
#: size chosen by a condition on sizes: the grouped-query factor of an expanded ``Attention``)
BINARY: dict[str, str] = {
    "Add": "add", "Sub": "subtract", "Mul": "multiply", "Div": "divide", "Pow": "power",
    "Mod": "mod", "And": "minimum", "Or": "maximum", "Xor": "not_equal",
    "BitShift": _BITWISE, "BitwiseAnd": _BITWISE, "BitwiseOr": _BITWISE, "BitwiseXor": _BITWISE,
}  # fmt: skip
COMPARE: dict[str, str] = {
    "Equal": "equal", "Less": "less", "Greater": "greater", "LessOrEqual": "less_equal",
    "GreaterOrEqual": "greater_equal",
}  # fmt: skip
_NUMPY_SINCE: dict[str, int] = {
    "Mod": 10, "BitShift": 11, "BitwiseAnd": 18, "BitwiseOr": 18, "BitwiseXor": 18,
    "LessOrEqual": 12, "GreaterOrEqual": 12,
}  # fmt: skip


def _ss_op(name: str) -> Callable[..., Expr]:
    """The symshape operator named in the tables above (one of ``ss.ops``, or this module's own)."""
    fn: Callable[..., Expr] = ss.Op.get(name) if name.startswith("onnx.") else getattr(ss.ops, name)
    return fn


def _prepared(op: str, name: str, nargs: int) -> PreparedCall | None:
    """The prepared call of the symshape operator ``name`` for the ONNX operator ``op`` (see
    :func:`~symshape.onnx.ops.common.prepare`; made once: a model has many nodes of a few
    element-wise operators)."""
    try:
        return _CALLS[op]
    except KeyError:
        return _CALLS.put(op, prepare(_ss_op(name), nargs))


#: the prepared calls of the unary and binary operators by ONNX operator (see ``_prepared``)
_CALLS: PlanTable[str, PreparedCall | None] = PlanTable(__name__)


def _unary(ctx: NodeContext) -> Outputs:
    # (Neg is ``negative``, which negates a shape value's entries: no dtype asked, so no probe)
    name = UNARY[ctx.op_type]
    p = _prepared(ctx.op_type, name, 1)
    return p.build(ctx.input(0)) if p is not None else _ss_op(name)(ctx.input(0))


for _op, _fn in UNARY.items():
    register(_op, since=_UNARY_SINCE.get(_op, 1))(_unary)


@register("Trilu", since=14)
def _trilu(ctx: NodeContext) -> Outputs:
    """The input's type, of rank 2 or more (onnxruntime: "Input tensor should have a rank of at
    least 2"; onnx's reference evaluator, numpy's ``tril``, makes a 1-d input a square)."""
    r = ctx.rank(0)
    if r is not None and r < 2:
        ctx.fail(RANK_MISMATCH, f"Trilu of a {r}-d tensor: it needs rank 2 or more")
    return ss.ops.copy(ctx.input(0))


@register("ReverseSequence", since=10)
def _reverse_sequence(ctx: NodeContext) -> Outputs:
    """The input's type; ``sequence_lens`` has one entry per batch row (onnxruntime's check)."""
    x = ctx.input(0)
    r = ctx.rank(0)
    axis = ctx.attr_int("batch_axis", 1)
    if r is None or not -r <= axis < r:
        return ss.ops.copy(x)
    rows = ss.ops.sum(x, axis=(axis % r,), exclude=True)
    with ctx.checking(f"sequence_lens has one entry per batch row (axis {axis % r})"):
        return ss.ops.cast_like(x, stacked(rows, ctx.input(1)))


def _cumulative(ctx: NodeContext, prod: bool) -> Outputs:
    """``CumSum`` with a constant axis is ``cumsum`` (the input's type; a shape value, split
    offsets from sizes, summed exactly; otherwise entries in the range of running sums, see
    :mod:`symshape.ir.ranges`; of a padded mask, at most the unpadded length:
    :mod:`~symshape.onnx.ops.pad_mask`). ``CumProd`` of a small 1-d integer tensor is multiplied entry by
    entry (its exact value); any other, and an axis known only at run time, is untracked
    (:data:`OPAQUE_OP`)."""
    x = ctx.input(0)
    t = ctx.tensor_type(0)
    c = ctx.const(1)
    axis: int | None = None
    if c is not None:
        if c.size != 1 or c.dtype.kind not in "iu":
            ctx.fail(BAD_ATTRIBUTE, f"the axis of {ctx.op_type} must be one integer, got {c.tolist()}")
        axis = int(c.reshape(-1)[0])
        rank = t.ndim if t is not None else None
        if rank is not None and not -rank <= axis < rank:
            ctx.fail(BAD_ATTRIBUTE, f"axis {axis} of a {rank}-d tensor")
    exclusive, reverse = bool(ctx.attr_int("exclusive", 0)), bool(ctx.attr_int("reverse", 0))
    if not prod:
        if axis is None:
            return OPAQUE_OP(x)
        y = ss.ops.cumsum(x, axis, exclusive=exclusive, reverse=reverse)
        n = unpadded_length(ctx, axis)  # (a padded mask: at most the unpadded length, pad_mask)
        if n is None:
            return y  # (no probe asked: the dtype is read only for a padded mask)
        dt = ctx.dtype_of(0)
        if dt is None or not dt.startswith(("int", "uint")):
            return y
        return ss.ops.minimum(y, ss.ops.cast(n, dt))
    k = t.dims[0] if t is not None and t.ndim == 1 else None
    if (
        t is None
        or k is None
        or not k.is_constant
        or not 0 < int(k) <= 16
        or not str(t.dtype).startswith("int")
    ):
        return OPAQUE_OP(x)
    parts = [value_slice(x, [i], [i + 1]) for i in range(int(k))]
    if reverse:
        parts.reverse()
    out: list[Expr] = []
    run: Expr = ctx.constant([1], str(t.dtype))
    for p in parts:
        nxt = ss.ops.multiply(run, p)
        out.append(run if exclusive else nxt)
        run = nxt
    if reverse:
        out.reverse()
    return ss.ops.concatenate(out, axis=0)


@register("BitwiseNot", since=18)
def _bitwise_not(ctx: NodeContext) -> Outputs:
    """``-x - 1`` for a signed integer ``x`` (its value and range follow), else untracked."""
    x = ctx.input(0)
    dt = ctx.dtype_of(0)
    if dt is not None and dt.startswith("int"):
        return ss.ops.subtract(ss.ops.negative(x), ctx.constant(1, dt))
    return OPAQUE_OP(x)


@register("CumSum", since=11, value_inputs=(1,))
def _cumsum(ctx: NodeContext) -> Outputs:
    return _cumulative(ctx, False)


@register("CumProd", since=26, value_inputs=(1,))
def _cumprod(ctx: NodeContext) -> Outputs:
    return _cumulative(ctx, True)


@register("IsNaN", since=9)
def _isnan(ctx: NodeContext) -> Outputs:
    return ss.ops.isnan(ctx.input(0))


@register("IsInf", since=10)
def _isinf(ctx: NodeContext) -> Outputs:
    return ss.ops.isinf(ctx.input(0))


@register("Not", since=1)
def _not(ctx: NodeContext) -> Outputs:
    # ``x == false``: a comparison computes the value where ``x``'s is known
    return ss.ops.equal(ctx.input(0), ctx.constant(False, "bool"))


@register("Identity", since=1)
def _identity(ctx: NodeContext) -> Outputs:
    return ctx.input(0)


def _legacy_align(ctx: NodeContext, b: Expr) -> Expr:
    """Opset < 7: with ``broadcast=1`` and ``axis``, ``B`` lines up with ``A`` from ``axis`` on."""
    if ctx.attr("broadcast", 0) and ctx.has_attr("axis"):
        axis = ctx.attr_int("axis")
        ra = ctx.need_rank(0, "broadcasting with an axis (opset < 7)")
        rb = ctx.need_rank(1, "broadcasting with an axis (opset < 7)")
        if axis < 0:
            axis += ra
        trailing = ra - axis - rb
        if trailing < 0 or axis < 0:
            ctx.fail(BAD_ATTRIBUTE, f"B of rank {rb} does not fit A of rank {ra} at axis {axis}")
        if trailing:
            b = ss.ops.expand_dims(b, -1, num_newaxis=trailing)
    return b


def _binary(ctx: NodeContext) -> Outputs:
    a, b = ctx.input(0), ctx.input(1)
    if ctx.opset < _NUMPY_SINCE.get(ctx.op_type, 7):
        b = _legacy_align(ctx, b)
    op = ctx.op_type
    if op == "Pow" and ctx.opset >= 12:
        return ss.ops.power(a, ss.ops.cast_like(b, a))
    name = COMPARE.get(op) or BINARY[op]
    p = _prepared(op, name, 2)
    return p.build(a, b) if p is not None else _ss_op(name)(a, b)


for _op in (*BINARY, *COMPARE):
    register(_op, since=_NUMPY_SINCE.get(_op, 1))(_binary)


@register("PRelu", since=1)
def _prelu(ctx: NodeContext) -> Outputs:
    x, slope = ctx.input(0), ctx.input(1)
    if ctx.opset < 7:
        slope = _legacy_align(ctx, slope)
    with ctx.checking("slope broadcasts to X's shape, one way"):
        return like(ss.ops.multiply(x, slope), x)


_VARIADIC = {"Max": "maximum", "Min": "minimum", "Sum": "add", "Mean": "add"}


@register(list(_VARIADIC), since=1)
def _variadic(ctx: NodeContext) -> Outputs:
    xs = ctx.inputs()
    if not xs:
        ctx.fail(BAD_ATTRIBUTE, f"{ctx.op_type} needs at least one input")
    return chain(_VARIADIC[ctx.op_type], xs)


@register("Where", since=9)
def _where(ctx: NodeContext) -> Outputs:
    # a branch its condition compares with a point (`Where(r < 4, r, ...)`) is bounded there by the
    # core's range rule for where (ir/ranges.py)
    return ss.ops.where(ctx.input(0), ctx.input(1), ctx.input(2))


_CAST1 = {
    "FLOAT": "float32", "FLOAT16": "float16", "DOUBLE": "float64", "INT8": "int8", "INT16": "int16",
    "INT32": "int32", "INT64": "int64", "UINT8": "uint8", "UINT16": "uint16", "UINT32": "uint32",
    "UINT64": "uint64", "BOOL": "bool",
}  # fmt: skip


@register("Cast", since=[1, 6])
def _cast(ctx: NodeContext) -> Outputs:
    to = ctx.attr("to")
    if isinstance(to, str):  # opset 1: a type name
        dt = _CAST1.get(to.upper())
        if dt is None:
            ctx.fail(BAD_ATTRIBUTE, f"attribute 'to' is not a known type name: {to!r}")
        return ss.ops.cast(ctx.input(0), dt)
    et = ctx.attr_int("to")
    if to_dtype(et) is None and et not in (0, 8) and elem_type_name(et) != f"type {et}":
        return ctx.with_unknown_dtype(ctx.input(0), et)  # float8, int4, ...: the shape stays
    dt = ctx.attr_dtype("to")
    x = ctx.input(0)
    if dt in _INT_DTYPES:
        r = _int_ratio(ctx, x, 6)
        if r is not None:  # an int computed in float: its value in int arithmetic
            n, d = r
            return ss.ops.cast(n if d == 1 else ss.ops.trunc_divide(n, ctx.constant(d, "int64")), dt)
    return ss.ops.cast(x, dt)


_INT_DTYPES = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})
#: the floats an int size is cast to exactly (below 2**24 for float32; float16 and bfloat16 hold
#: integers exactly only to 2048 and 256)
_EXACT_FLOATS = frozenset({"float32", "float64"})


def _int_ratio(ctx: NodeContext, e: Expr, depth: int) -> tuple[Expr, int] | None:
    """``e`` (a float expression) as ``n / d`` for an int64 expression ``n`` and an int ``d >= 1``,
    when ``e`` is a tensor cast to float, divided or multiplied by positive integral float constants,
    rounded by ``ceil``/``floor`` (one division or multiplication between roundings: two round twice in
    float, ``h / 7 * 7`` is not ``h``): the TorchScript export of ``int(math.ceil(h / p) * p)`` (MobileViT's
    patch padding), ``Cast(Mul(Ceil(Div(Cast(h, float), 2.0)), 2.0), int64)``. Floats carry no value
    in symshape, so only a cast of an int (whose value symshape may know) gives ``n`` a value; the
    float arithmetic is exact for sizes below 2**24."""
    if depth == 0 or not isinstance(e, Call) or not isinstance(e.callee, Op):
        return None
    name, args = e.callee.name, e.args
    if name == "cast" and e.attrs.get("dtype") in _EXACT_FLOATS:
        return ss.ops.cast(args[0], "int64"), 1
    if name in ("ceil", "floor"):
        r = _int_ratio(ctx, args[0], depth - 1)
        if r is None:
            return None
        n, d = r
        if d == 1:
            return r
        up = ss.ops.add(n, ctx.constant(d - 1, "int64")) if name == "ceil" else n
        return ss.ops.floor_divide(up, ctx.constant(d, "int64")), 1
    if name in ("divide", "multiply") and len(args) == 2:
        k = _positive_int_constant(ctx, args[1])
        r = _int_ratio(ctx, args[0], depth - 1)
        if (k is None or r is None) and name == "multiply":
            k, r = _positive_int_constant(ctx, args[0]), _int_ratio(ctx, args[1], depth - 1)
        if k is None or r is None:
            return None
        n, d = r
        if d != 1:  # (a quotient not rounded yet: divided or multiplied again, float rounds twice)
            return None
        if name == "divide":
            return n, k
        return ss.ops.multiply(n, ctx.constant(k, "int64")), 1
    return None


def _positive_int_constant(ctx: NodeContext, e: Expr) -> int | None:
    """The value of a constant holding one positive integral number (below 2**24), else None: a
    literal, or the variable the importer bound to a model's constant (by its name)."""
    if isinstance(e, Constant):
        a = np.asarray(e.data)
    elif isinstance(e, Var):
        bound = ctx._imp.named.get(e.name)
        if bound is None or bound._expr is not e or bound.const is None:
            return None
        a = bound.const
    else:
        return None
    if a.size != 1 or a.dtype.kind != "f":
        return None
    f = float(a.reshape(-1)[0])
    return int(f) if f.is_integer() and 0 < f < 2**24 else None


@register("CastLike", since=15)
def _cast_like(ctx: NodeContext) -> Outputs:
    return ss.ops.cast_like(ctx.input(0), ctx.input(1))
