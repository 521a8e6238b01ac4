"""Elementwise calls: arithmetic with scalars and broadcasting, comparisons, unary math,
activations, dtype conversions, and calls that keep their input's type (``contiguous``,
``dropout`` in a shape check, ...). ``where``/``masked_fill``/``clamp`` are in
:mod:`symshape.torch.convert.selection`.

Arithmetic on two tensors broadcasts (``ss.ops.add``) after torch's type promotion of both
operands (:mod:`symshape.torch.convert.promotion`; a Python number or a run-time size is a 0-d
scalar operand: ``int_tensor * 0.5`` is float32); on two Python values (sizes read from an
annotation) it is evaluated, so ``c // self.n_head`` of a known ``c`` is a dimension. Activations
without a symshape operator are written with the operators that define them (GELU is
``x * (1 + erf(x / sqrt 2)) / 2``, as TVM's PyTorch frontend does), which types them exactly.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

import symshape as ss
from symshape.torch.context import Ctx, dtype_name
from symshape.torch.convert.entry_ops import refuse
from symshape.torch.convert.promotion import PROMOTE, as_floating
from symshape.torch.registry import converts
from symshape.torch.shape_values import arith, is_size, scalar_value
from symshape.torch.values import DtypeOf, Opaque, Unsupported

__all__ = [
    "keys",
    "binary",
    "promoted",
    "same",
    "cast",
    "gelu",
    "activation",
    "UNARY",
]

aten = torch.ops.aten
Fn = Callable[..., Any]


def keys(name: str, *extra: Any, methods: bool = True, inplace: bool = True) -> tuple[Any, ...]:
    """Every spelling of the torch operation ``name``: ``torch.name``, ``F.name``, the method
    (and its in-place form ``name_``), the aten packet; plus ``extra``."""
    out: list[Any] = []
    for ns in (torch, torch.special, F):
        fn = getattr(ns, name, None)
        if fn is not None and callable(fn) and fn not in out:
            out.append(fn)
    if methods:
        out.append(name)
        if inplace:
            out.append(f"{name}_")
    for aten_name in (name, f"{name}_") if inplace else (name,):
        try:
            out.append(getattr(aten, aten_name))
        except (AttributeError, RuntimeError):
            pass
    out.extend(extra)
    return tuple(out)


def _tensorish(v: object) -> bool:
    return isinstance(v, ss.Expr)


def binary(ctx: Ctx, a: Any, b: Any, op: Fn, py: Fn | None, kind: str | None = None) -> Any:
    """``op(a, b)`` for tensors (a Python number operand becomes a 0-d tensor), ``py(a, b)`` for
    Python values, an opaque value when either is one."""
    if _tensorish(a) or _tensorish(b):
        return op(*promoted(ctx, a, b, floating=kind == "float"))
    for v in (a, b):
        if isinstance(v, Opaque):
            if v.cascade:
                return v.derived("any")
            k = kind or ("sizes" if any(_is_sizes(x) for x in (a, b)) else _kind(a, b))
            return arith(ctx, py, a, b, v.derived(k)) if py is not None else v.derived(k)
    if py is None:
        raise Unsupported("needs tensor operands")
    try:
        return py(a, b)
    except (TypeError, ZeroDivisionError, ValueError, ss.SymshapeError):
        return Opaque(ctx.node_name, f"{a!s} {_sym(py)} {b!s}", ctx.span, kind or _kind(a, b))


def promoted(ctx: Ctx, a: Any, b: Any, floating: bool) -> tuple[ss.Expr, ss.Expr]:
    """Both operands in the dtype torch computes ``a op b`` in (:mod:`.promotion`): a Python
    number (or a run-time size) is a 0-d constant ranked as a scalar."""

    def side(v: Any, name: str) -> tuple[ss.Expr, bool]:
        if isinstance(v, ss.Expr) or (isinstance(v, Opaque) and v.cascade):
            t = ctx.tensor(v)
            return (t if isinstance(t, ss.Var) else ctx.let(t, name)), False
        return _scalar(ctx, v), True

    (x, xs), (y, ys) = side(a, "lhs"), side(b, "rhs")
    # a scalar is a fresh constant at each use (the program stays a tree)
    x2 = _scalar(ctx, a) if xs else x
    y2 = _scalar(ctx, b) if ys else y
    return (
        PROMOTE(x, y, scalar=xs, other_scalar=ys, floating=floating),
        PROMOTE(y2, x2, scalar=ys, other_scalar=xs, floating=floating),
    )


def _scalar(ctx: Ctx, v: Any) -> ss.Expr:
    """A Python number as a 0-d operand: an int keeps its value (so ``arange(t) + 1`` has a
    range), and so does a size (a symbolic dimension, a run-time size: ``(t - 1) - arange(t)``
    of torch's reflect-padding decomposition); other numbers are typed constants."""
    if isinstance(v, int) and not isinstance(v, bool) and -(2**63) <= v < 2**63:
        return ss.const(np.array(v, dtype=np.int64))
    if is_size(v):
        size = scalar_value(v)
        assert size is not None
        return size
    return ctx.scalar_tensor(v)


def _is_sizes(v: object) -> bool:
    return isinstance(v, (tuple, list)) or (isinstance(v, Opaque) and v.kind == "sizes")


def _kind(a: object, b: object) -> str:
    if any(isinstance(v, float) or (isinstance(v, Opaque) and v.kind == "float") for v in (a, b)):
        return "float"
    return "int"


def _sym(fn: Fn) -> str:
    return {
        operator.add: "+",
        operator.sub: "-",
        operator.mul: "*",
        operator.truediv: "/",
        operator.floordiv: "//",
        operator.mod: "%",
        operator.pow: "**",
    }.get(fn, getattr(fn, "__name__", "?"))


def _arith(op: Fn, py: Fn | None, kind: str | None = None) -> Fn:
    def conv(ctx: Ctx, input: Any, other: Any, *, alpha: Any = 1, out: Any = None) -> Any:
        return binary(ctx, input, other, op, py, kind)

    return conv


def checked(ctx: Ctx, x: ss.Expr, what: str, rule: str = "bool") -> ss.Var:
    """``x`` (bound to a variable), after a binding of its own that checks its dtype
    (``torch.dtype_refuse``: torch's ``what`` refuses a bool ``x``, or a floating one). The check
    is beside the data flow, so that ``x``'s value and range reach the operator unchanged."""
    if not isinstance(x, ss.Var):
        x = ctx.let(x, "input")
    if rule != "bool" or not ctx.host.not_bool(x):  # (a check that cannot fail is left out)
        ctx.let(refuse(x, rule, what), "check_dtype")
    return x


def _not_both_bool(what: str, op: Fn, py: Fn) -> Fn:
    """``a op b``, refused (``dtype-mismatch``) where both operands are bool: torch's kernel for
    ``what`` takes no bool (``b // b``, ``b % b``; ``b // 2`` is int64)."""

    def conv(ctx: Ctx, input: Any, other: Any, *args: Any, **kwargs: Any) -> Any:
        return not_both_bool(ctx, input, other, what, op, py)

    return conv


def not_both_bool(ctx: Ctx, a: Any, b: Any, what: str, op: Fn, py: Fn) -> Any:
    """``binary(a, b, op, py)`` after the check of :func:`_not_both_bool`."""
    if _tensorish(a) or _tensorish(b):
        a = ctx.let(a, "lhs") if isinstance(a, ss.Expr) and not isinstance(a, ss.Var) else a
        b = ctx.let(b, "rhs") if isinstance(b, ss.Expr) and not isinstance(b, ss.Var) else b
        ctx.let(refuse(promoted(ctx, a, b, floating=False)[0], "bool", what), "check_dtype")
    return binary(ctx, a, b, op, py)


_ARITH: tuple[tuple[str, Fn, Fn | None, tuple[Any, ...]], ...] = (
    ("add", ss.ops.add, operator.add, (operator.add, operator.iadd)),
    ("mul", ss.ops.multiply, operator.mul, (operator.mul, operator.imul, torch.multiply, "multiply")),
    ("pow", ss.ops.power, operator.pow, (operator.pow,)),
    ("maximum", ss.ops.maximum, None, (torch.fmax,)),
    ("minimum", ss.ops.minimum, None, (torch.fmin,)),
)
for _name, _op, _py, _ops in _ARITH:
    converts(*keys(_name, *_ops))(_arith(_op, _py))
# (a constant tensor // a traced one: torch records `Tensor.__floordiv__`)
converts(*keys("floor_divide", operator.floordiv, operator.ifloordiv, "__floordiv__"))(
    _not_both_bool("floor division", ss.ops.floor_divide, operator.floordiv)
)
converts(*keys("remainder", operator.mod))(_not_both_bool("remainder", ss.ops.mod, operator.mod))
converts(operator.truediv, operator.itruediv, torch.true_divide, "true_divide")(
    _arith(ss.ops.divide, operator.truediv, "float")
)


def _no_bool_operand(ctx: Ctx, v: Any, other: Any) -> Any:
    """A subtraction's operand: torch refuses a bool one, a tensor or a Python ``True`` beside a
    tensor ("Subtraction, the `-` operator, with a bool tensor is not supported")."""
    if isinstance(v, ss.Expr):
        return checked(ctx, v, "subtraction")
    if isinstance(v, bool) and isinstance(other, ss.Expr):
        ctx.let(refuse(ctx.scalar_tensor(v), "bool", "subtraction"), "check_dtype")
    return v


def subtract(ctx: Ctx, a: Any, b: Any) -> Any:
    """``a - b``, neither of them bool (torch's rule)."""
    lhs, rhs = _no_bool_operand(ctx, a, b), _no_bool_operand(ctx, b, a)
    return binary(ctx, lhs, rhs, ss.ops.subtract, operator.sub)


@converts(*keys("sub", operator.sub, operator.isub, torch.subtract, "subtract"))
def sub(ctx: Ctx, input: Any, other: Any, *, alpha: Any = 1, out: Any = None) -> Any:
    return subtract(ctx, input, other)


@converts(*keys("div", torch.divide, "divide"))
def div(ctx: Ctx, input: Any, other: Any, *, rounding_mode: Any = None, out: Any = None) -> Any:
    """``torch.div`` (``rounding_mode="floor"`` is a floor division; ``"trunc"`` rounds toward
    zero, symshape's ``trunc_divide``, and keeps an integer dtype)."""
    if rounding_mode == "floor":
        return not_both_bool(ctx, input, other, "floor division", ss.ops.floor_divide, operator.floordiv)
    if rounding_mode == "trunc":
        return not_both_bool(ctx, input, other, "trunc division", ss.ops.trunc_divide, _trunc_div)
    return binary(ctx, input, other, ss.ops.divide, operator.truediv, "float")


def _trunc_div(a: Any, b: Any) -> Any:
    """``a / b`` rounded toward zero (exact for ints)."""
    if isinstance(a, int) and isinstance(b, int):
        q = abs(a) // abs(b)
        return q if (a < 0) == (b < 0) else -q
    return float(math.trunc(a / b))


@converts(*keys("float_power", inplace=False))
def float_power(ctx: Ctx, input: Any, exponent: Any) -> Any:
    """``torch.float_power``: a ``float64`` power."""
    def op(a: ss.Expr, b: ss.Expr) -> ss.Expr:
        return ss.ops.power(ss.ops.cast(a, "float64"), ss.ops.cast(b, "float64"))

    return binary(ctx, input, exponent, op, None)


@converts(aten.rsub)
def rsub(ctx: Ctx, input: Any, other: Any, alpha: Any = 1) -> Any:
    """``aten.rsub(x, y)`` is ``y - x``."""
    return subtract(ctx, other, input)


@converts(operator.pos, *keys("positive", inplace=False))
def positive(ctx: Ctx, input: Any) -> Any:
    """``+x``: ``x`` itself, not bool (torch refuses a bool one, as it refuses ``-x``)."""
    if isinstance(input, ss.Expr):
        return checked(ctx, input, "positive")
    if isinstance(input, Opaque):
        return input
    return +input


@converts(operator.neg, *keys("neg", torch.negative, "negative"))
def neg(ctx: Ctx, input: Any) -> Any:
    if isinstance(input, ss.Expr):
        return ss.ops.negative(checked(ctx, input, "negation"))
    if isinstance(input, Opaque):
        out = input.derived(input.kind)
        if input.kind == "int" and input.of is not None and input.value is not None:
            # `-t` of a dimension `t`: its value, and what it negates (a slice bound from the end)
            value = ctx.let(ss.ops.subtract(ss.ops.int_tensor(0), input.value), "value")
            out = replace(out, value=value, negates=input)
        return out
    return -input


# -- comparisons and logic ------------------------------------------------------------------------

_COMPARE: tuple[tuple[str, Fn, Fn | None, tuple[Any, ...]], ...] = (
    ("eq", ss.ops.equal, operator.eq, (operator.eq,)),
    ("ne", ss.ops.not_equal, operator.ne, (operator.ne, torch.not_equal, "not_equal")),
    ("lt", ss.ops.less, operator.lt, (operator.lt, torch.less, "less")),
    ("le", ss.ops.less_equal, operator.le, (operator.le, torch.less_equal, "less_equal")),
    ("gt", ss.ops.greater, operator.gt, (operator.gt, torch.greater, "greater")),
    ("ge", ss.ops.greater_equal, operator.ge, (operator.ge, torch.greater_equal, "greater_equal")),
    ("logical_and", ss.ops.logical_and, None, ()),
    ("logical_or", ss.ops.logical_or, None, ()),
    ("logical_xor", lambda a, b: ss.ops.not_equal(ss.ops.cast(a, "bool"), ss.ops.cast(b, "bool")), None, ()),
)
for _name, _op, _py, _ops in _COMPARE:
    converts(*keys(_name, *_ops))(_arith(_op, _py, "bool"))


@converts(operator.not_, *keys("logical_not"))
def logical_not(ctx: Ctx, input: Any) -> Any:
    """``not x``: bool whatever ``x``'s dtype (torch's rule: a float ``x`` gives bool)."""
    if isinstance(input, ss.Expr):
        return ss.ops.logical_not(input if ctx.host.is_bool(input) else ss.ops.cast(input, "bool"))
    if isinstance(input, Opaque):
        return input.derived("bool")
    return not input


# -- unary math ---------------------------------------------------------------------------------


def _one(ctx: Ctx, x: Any) -> ss.Expr:
    return ctx.tensor(x)


def _c(ctx: Ctx, v: float, like: ss.Expr) -> ss.Expr:
    return ctx.operand(v, like)


def _softplus(ctx: Ctx, x: ss.Expr) -> ss.Expr:
    return ss.ops.log(ss.ops.add(_c(ctx, 1.0, x), ss.ops.exp(x)))


def _hardsigmoid(ctx: Ctx, x: ss.Expr) -> ss.Expr:
    return ss.ops.clip(ss.ops.add(ss.ops.divide(x, _c(ctx, 6.0, x)), _c(ctx, 0.5, x)), 0.0, 1.0)


def _elu(ctx: Ctx, x: ss.Expr) -> ss.Expr:
    neg_part = ss.ops.subtract(ss.ops.exp(x), _c(ctx, 1.0, x))
    return ss.ops.where(ss.ops.greater(x, _c(ctx, 0.0, x)), x, neg_part)


def _square(ctx: Ctx, x: ss.Expr) -> ss.Expr:
    """``x ** 2``: ``x`` promoted with the integer 2 (a bool ``x`` gives int64), times itself."""
    p = ctx.let(PROMOTE(x, _scalar(ctx, 2), scalar=False, other_scalar=True, floating=False), "promoted")
    return ss.ops.multiply(p, p)


#: unary operations by torch name: how each is written with symshape operators
UNARY: dict[str, Callable[[Ctx, ss.Expr], ss.Expr]] = {
    "relu": lambda c, x: ss.ops.relu(x),
    "sigmoid": lambda c, x: ss.ops.sigmoid(x),
    "tanh": lambda c, x: ss.ops.tanh(x),
    "exp": lambda c, x: ss.ops.exp(x),
    "log": lambda c, x: ss.ops.log(x),
    "sqrt": lambda c, x: ss.ops.sqrt(x),
    "rsqrt": lambda c, x: ss.ops.rsqrt(x),
    "abs": lambda c, x: ss.ops.abs(x),
    "floor": lambda c, x: ss.ops.floor(x),
    "ceil": lambda c, x: ss.ops.ceil(x),
    "round": lambda c, x: ss.ops.round(x),
    "trunc": lambda c, x: ss.ops.trunc(x),
    "sign": lambda c, x: ss.ops.sign(x),
    "erf": lambda c, x: ss.ops.erf(x),
    "sin": lambda c, x: ss.ops.sin(x),
    "cos": lambda c, x: ss.ops.cos(x),
    "log2": lambda c, x: ss.ops.log2(x),
    "log10": lambda c, x: ss.ops.log10(x),
    "isnan": lambda c, x: ss.ops.isnan(x),
    "isinf": lambda c, x: ss.ops.isinf(x),
    "isfinite": lambda c, x: ss.ops.isfinite(x),
    "reciprocal": lambda c, x: ss.ops.divide(_c(c, 1.0, x), x),
    "square": lambda c, x: _square(c, x),
    "log1p": lambda c, x: ss.ops.log(ss.ops.add(x, _c(c, 1.0, x))),
    "expm1": lambda c, x: ss.ops.subtract(ss.ops.exp(x), _c(c, 1.0, x)),
    "exp2": lambda c, x: ss.ops.power(_c(c, 2.0, x), x),
    "silu": lambda c, x: ss.ops.multiply(x, ss.ops.sigmoid(x)),
    "mish": lambda c, x: ss.ops.multiply(x, ss.ops.tanh(_softplus(c, x))),
    "softplus": _softplus,
    "hardsigmoid": _hardsigmoid,
    "hardswish": lambda c, x: ss.ops.multiply(x, _hardsigmoid(c, x)),
    "relu6": lambda c, x: ss.ops.clip(x, 0.0, 6.0),
    "elu": _elu,
    "selu": _elu,
    "celu": _elu,
    "logsigmoid": lambda c, x: ss.ops.negative(_softplus(c, ss.ops.negative(x))),
    "softsign": lambda c, x: ss.ops.divide(x, ss.ops.add(_c(c, 1.0, x), ss.ops.abs(x))),
    "tanhshrink": lambda c, x: ss.ops.subtract(x, ss.ops.tanh(x)),
    "sgn": lambda c, x: ss.ops.sign(x),
}


#: the unary operations torch computes in floating point: an integer or bool input is promoted to
#: the default float (``int_x.sqrt()`` is float32)
FLOATING_UNARY = frozenset(
    {"sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt", "erf", "sin", "cos", "log2", "log10",
     "reciprocal", "log1p", "expm1", "exp2", "softsign", "tanhshrink"}
)  # fmt: skip


#: the unary operations torch refuses for a bool input ("abs_cpu" not implemented for 'Bool',
#: ``relu`` is ``clamp_min``, ``relu6`` ``hardtanh``)
BOOL_REFUSED_UNARY = frozenset({"relu", "abs", "floor", "ceil", "round", "trunc", "relu6"})


def _unary(name: str) -> Fn:
    rule = UNARY[name]
    floating = name in FLOATING_UNARY
    no_bool = name in BOOL_REFUSED_UNARY

    def conv(ctx: Ctx, input: Any, *args: Any, **kwargs: Any) -> Any:
        x = ctx.tensor(input)
        if no_bool:
            x = checked(ctx, x, name)
        return rule(ctx, as_floating(x) if floating else x)

    conv.__name__ = name
    return conv


for _name in UNARY:
    converts(*keys(_name))(_unary(_name))


def activation(name: str) -> Callable[[Ctx, ss.Expr], ss.Expr]:
    """The rule of an activation by torch name (for modules)."""
    return UNARY[name]


@converts(*keys("gelu"))
def gelu(ctx: Ctx, input: Any, approximate: Any = "none") -> Any:
    """GELU written with ``erf`` (``approximate="tanh"``: with ``tanh``)."""
    x = ctx.tensor(input)
    if approximate == "tanh":
        inner = ss.ops.multiply(
            _c(ctx, 0.7978845608, x), ss.ops.add(x, ss.ops.multiply(x, ss.ops.multiply(x, x)))
        )
        core = ss.ops.tanh(inner)
    else:
        core = ss.ops.erf(ss.ops.multiply(x, _c(ctx, 0.7071067811865476, x)))
    return ss.ops.multiply(ss.ops.multiply(x, _c(ctx, 0.5, x)), ss.ops.add(_c(ctx, 1.0, x), core))


@converts(*keys("leaky_relu"))
def leaky_relu(ctx: Ctx, input: Any, negative_slope: Any = 0.01, inplace: Any = False) -> Any:
    return ss.ops.leaky_relu(ctx.tensor(input), alpha=float(ctx.static(negative_slope, "negative_slope")))


@converts(*keys("hardtanh"))
def hardtanh(ctx: Ctx, input: Any, min_val: Any = -1.0, max_val: Any = 1.0, inplace: Any = False) -> Any:
    return ss.ops.clip(
        checked(ctx, ctx.tensor(input), "hardtanh", "unsigned"),
        float(ctx.static(min_val, "min_val")),
        float(ctx.static(max_val, "max_val")),
    )


@converts(*keys("threshold"))
def threshold(ctx: Ctx, input: Any, threshold: Any, value: Any, inplace: Any = False) -> Any:
    x = checked(ctx, ctx.tensor(input), "threshold")
    return ss.ops.where(ss.ops.greater(x, ctx.operand(threshold, x)), x, ctx.operand(value, x))


@converts(*keys("glu"))
def glu(ctx: Ctx, input: Any, dim: Any = -1) -> Any:
    """``a * sigmoid(b)`` of the two halves along ``dim`` (which must be even)."""
    x = ctx.tensor(input)
    halves = ctx.let(ss.ops.split(x, 2, axis=ctx.axis(dim)), "halves")
    return ss.ops.multiply(halves[0], ss.ops.sigmoid(halves[1]))


@converts(*keys("prelu"))
def prelu(ctx: Ctx, input: Any, weight: Any) -> Any:
    """``x`` where positive, ``weight * x`` elsewhere, ``weight`` along dim 1 (or one value)."""
    x, w = ctx.tensor(input), ctx.tensor(weight, "weight")
    from symshape.torch.values import static_shape

    ws = static_shape(w)
    if ws is not None and len(ws) == 1 and ws[0] == 1:
        return ss.ops.where(ss.ops.greater(x, _c(ctx, 0.0, x)), x, ss.ops.multiply(x, w))
    return ss.ops.bias_add(x, w, axis=1)


# -- dtypes -------------------------------------------------------------------------------------


def cast(ctx: Ctx, x: ss.Expr, dtype: Any) -> ss.Expr:
    """``x`` cast to ``dtype`` (a torch dtype, or ``y.dtype`` of a computed tensor)."""
    if isinstance(dtype, DtypeOf):
        return ss.ops.cast_like(x, dtype.of)
    return ss.ops.cast(x, dtype_name(ctx.static(dtype, "dtype")))


@converts("to", aten.to, aten._to_copy, "type")
def to(ctx: Ctx, input: Any, *args: Any, **kwargs: Any) -> Any:
    """``x.to(dtype)``, ``x.to(device, dtype)``, ``x.to(other)``, ``x.type(dtype)``; a device
    alone keeps the type."""
    x = ctx.tensor(input)
    dtype = kwargs.get("dtype")
    for a in args:
        if isinstance(a, (torch.dtype, DtypeOf)):
            dtype = a
        elif isinstance(a, ss.Expr):
            return ss.ops.cast_like(x, a)
    if dtype is None:
        return x
    return cast(ctx, x, dtype)


@converts("type_as", aten.type_as)
def type_as(ctx: Ctx, input: Any, other: Any) -> Any:
    return ss.ops.cast_like(ctx.tensor(input), ctx.tensor(other, "other"))


def _to_dtype(dtype: torch.dtype) -> Fn:
    def conv(ctx: Ctx, input: Any, *args: Any, **kwargs: Any) -> Any:
        return ss.ops.cast(ctx.tensor(input), dtype_name(dtype))

    return conv


for _name, _dt in (
    ("float", torch.float32),
    ("double", torch.float64),
    ("half", torch.float16),
    ("bfloat16", torch.bfloat16),
    ("long", torch.int64),
    ("int", torch.int32),
    ("short", torch.int16),
    ("bool", torch.bool),
    ("byte", torch.uint8),
):
    converts(_name)(_to_dtype(_dt))


# -- calls that keep the type -------------------------------------------------------------------


@converts(
    "contiguous",
    "clone",
    "detach",
    "detach_",
    "cpu",
    "cuda",
    "requires_grad_",
    "pin_memory",
    "float_power_",
    "nan_to_num",
    torch.clone,
    torch.detach,
    torch.nan_to_num,
    F.dropout,
    F.dropout1d,
    F.dropout2d,
    F.dropout3d,
    F.alpha_dropout,
    F.feature_alpha_dropout,
    F.normalize,
    torch.dropout,
    torch.nn.functional.dropout,
    "dropout",
    aten.clone,
    aten.contiguous,
    aten.detach,
    aten.detach_,
    aten.alias,
    aten.lift_fresh_copy,
    aten.dropout,
)
def same(ctx: Ctx, input: Any, *args: Any, **kwargs: Any) -> Any:
    """Calls whose result has the input's type (in a shape check): the input itself."""
    return ctx.tensor(input)


@converts(aten._weight_norm, torch._weight_norm)
def weight_norm(ctx: Ctx, v: Any, g: Any, dim: Any = 0) -> Any:
    """``torch._weight_norm(v, g, dim)`` (``nn.utils.weight_norm``'s weight, wav2vec2's positional
    convolution): ``v * (g / norm(v))``, of ``v``'s shape (``g`` broadcasts against it)."""
    x = ctx.tensor(v)
    return ss.ops.multiply(x, ss.ops.cast_like(ctx.tensor(g, "g"), x))


@converts(aten.native_dropout)
def native_dropout(ctx: Ctx, input: Any, p: Any, train: Any) -> Any:
    """``(out, mask)``, both shaped like the input (the mask is bool)."""
    x = ctx.tensor(input)
    return (x, ss.ops.cast(x, "bool"))


def _like(op: Fn) -> Fn:
    def conv(ctx: Ctx, input: Any, *args: Any, dtype: Any = None, **kwargs: Any) -> Any:
        out = op(ctx.tensor(input))
        return cast(ctx, out, dtype) if dtype is not None else out

    return conv


converts(*keys("zeros_like", inplace=False))(_like(ss.ops.zeros_like))
converts(*keys("ones_like", inplace=False))(_like(ss.ops.ones_like))
