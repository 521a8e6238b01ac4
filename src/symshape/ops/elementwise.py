"""Elementwise operators: numpy-broadcasting binary arithmetic and comparisons, unary functions
(float-only where Relax requires it), ``where``, ``cast``, ``zeros_like``/``ones_like``.

Arithmetic that computes shape values (``add`` ... ``minimum``) has a relation of its own
(:mod:`symshape.relations.values`); the others share ``broadcast``.
"""

from __future__ import annotations

from symshape.encoding.types import Attrs
from symshape.ir.expr import Call, Expr
from symshape.ir.op import OPS
from symshape.ops.spec import NO_ATTRS, OpSpec, register_ops
from symshape.relations.common import (
    attr_dtype,
    bad,
)
from symshape.relations.running import CUMSUM

__all__ = [
    "add",
    "subtract",
    "multiply",
    "divide",
    "power",
    "maximum",
    "minimum",
    "floor_divide",
    "trunc_divide",
    "mod",
    "logical_and",
    "logical_or",
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "relu",
    "sigmoid",
    "tanh",
    "exp",
    "log",
    "sqrt",
    "negative",
    "abs",
    "floor",
    "ceil",
    "round",
    "sign",
    "erf",
    "rsqrt",
    "copy",
    "cumsum",
    "trunc",
    "sin",
    "cos",
    "log2",
    "log10",
    "logical_not",
    "zeros_like",
    "ones_like",
    "leaky_relu",
    "clip",
    "isnan",
    "isinf",
    "isfinite",
    "where",
    "cast",
    "cast_like",
]


def _chk_cast(attrs: Attrs, op: str) -> None:
    attr_dtype(attrs, "dtype", op, required=True)


def _chk_like(attrs: Attrs, op: str) -> None:
    attr_dtype(attrs, "dtype", op)


def _chk_clip(attrs: Attrs, op: str) -> None:
    for k in ("a_min", "a_max"):
        v = attrs.get(k)
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            raise bad(op, f"attribute {k} must be a number, got {v!r}")


def _chk_leaky(attrs: Attrs, op: str) -> None:
    v = attrs.get("alpha", 0.01)
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        raise bad(op, f"attribute alpha must be a number, got {v!r}")


_BINARY = (
    "add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "floor_divide",
    "trunc_divide", "mod", "logical_and", "logical_or",
)  # fmt: skip


_COMPARE = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")


# Relax registers these as float-only (``require_float_dtype``): an int or bool tensor is an error
_UNARY_FLOAT = (
    "sigmoid", "tanh", "exp", "log", "sqrt", "erf", "rsqrt", "sin", "cos", "log2", "log10",
)  # fmt: skip


_UNARY = (
    "nn.relu", "negative", "abs", "floor", "ceil", "round", "sign", "copy", "trunc", "logical_not",
)  # fmt: skip


# arithmetic that computes shape values has a relation of its own (the broadcast rule plus the
# value of the result: symshape.relations.values); the others share ``broadcast``
_VALUED = (
    "add", "subtract", "multiply", "divide", "floor_divide", "trunc_divide", "mod", "maximum", "minimum",
    "logical_and", "logical_or", "logical_not", "negative",
)  # fmt: skip


_BINARY_DOC = "numpy-broadcasting elementwise operator"


SPECS: tuple[OpSpec, ...] = (
    *(OpSpec(n, n if n in _VALUED else "broadcast", 2, NO_ATTRS, doc=_BINARY_DOC) for n in _BINARY),
    # each computes the value of its result too (bool entries 0/1: symshape.relations.values)
    *(OpSpec(n, n, 2, NO_ATTRS, doc="comparison with a bool result") for n in _COMPARE),
    *(
        OpSpec(n, n if n in _VALUED else "unary", 1, NO_ATTRS, doc="elementwise unary operator")
        for n in _UNARY
    ),
    *(
        OpSpec(n, "unary_float", 1, NO_ATTRS, doc="elementwise unary operator on float tensors")
        for n in _UNARY_FLOAT
    ),
    *(
        OpSpec(n, "init_like", 1, {"dtype": "dtype"}, _chk_like, doc="a constant tensor of the input's shape")
        for n in ("zeros_like", "ones_like")
    ),
    *(
        OpSpec(n, "identity_bool", 1, NO_ATTRS, doc="elementwise predicate with a bool result")
        for n in ("isnan", "isinf", "isfinite")
    ),
    OpSpec("nn.leaky_relu", "unary_float", 1, {"alpha": "float"}, _chk_leaky),
    # the input's type; a valued input's value summed (symshape.relations.running), the entries'
    # range that of running sums (symshape.ir.ranges)
    OpSpec(
        "cumsum",
        CUMSUM,
        1,
        {"axis": "int", "exclusive": "bool", "reverse": "bool"},
        doc="cumulative sum along an axis (exclusive: of the entries before; reverse: from the end)",
    ),
    OpSpec("clip", "unary", 1, {"a_min": "float", "a_max": "float"}, _chk_clip),
    OpSpec("where", "where", 3, NO_ATTRS),
    OpSpec("cast", "cast", 1, {"dtype": "dtype"}, _chk_cast),
    OpSpec("cast_like", "cast_like", 2, NO_ATTRS),
)


register_ops(SPECS)


def add(x: Expr, y: Expr) -> Call:
    """Elementwise ``x + y`` with numpy broadcasting."""
    return OPS["add"].wrapper_call(x, y)


def subtract(x: Expr, y: Expr) -> Call:
    """Elementwise ``x - y`` with numpy broadcasting."""
    return OPS["subtract"].wrapper_call(x, y)


def multiply(x: Expr, y: Expr) -> Call:
    """Elementwise ``x * y`` with numpy broadcasting."""
    return OPS["multiply"].wrapper_call(x, y)


def divide(x: Expr, y: Expr) -> Call:
    """Elementwise ``x / y`` with numpy broadcasting."""
    return OPS["divide"].wrapper_call(x, y)


def power(x: Expr, y: Expr) -> Call:
    """Elementwise ``x ** y`` with numpy broadcasting."""
    return OPS["power"].wrapper_call(x, y)


def maximum(x: Expr, y: Expr) -> Call:
    """Elementwise maximum with numpy broadcasting."""
    return OPS["maximum"].wrapper_call(x, y)


def minimum(x: Expr, y: Expr) -> Call:
    """Elementwise minimum with numpy broadcasting."""
    return OPS["minimum"].wrapper_call(x, y)


def floor_divide(x: Expr, y: Expr) -> Call:
    """Elementwise ``x // y`` with numpy broadcasting."""
    return OPS["floor_divide"].wrapper_call(x, y)


def trunc_divide(x: Expr, y: Expr) -> Call:
    """Elementwise ``x / y`` rounded toward zero with numpy broadcasting (C's integer ``/``, ONNX
    ``Div`` of integers, torch's ``div(rounding_mode="trunc")``; on floats ``trunc(x / y)``)."""
    return OPS["trunc_divide"].wrapper_call(x, y)


def mod(x: Expr, y: Expr) -> Call:
    """Elementwise ``x % y`` with numpy broadcasting."""
    return OPS["mod"].wrapper_call(x, y)


def logical_and(x: Expr, y: Expr) -> Call:
    """Elementwise logical and with numpy broadcasting."""
    return OPS["logical_and"].wrapper_call(x, y)


def logical_or(x: Expr, y: Expr) -> Call:
    """Elementwise logical or with numpy broadcasting."""
    return OPS["logical_or"].wrapper_call(x, y)


def equal(x: Expr, y: Expr) -> Call:
    """Elementwise ``x == y`` (bool) with numpy broadcasting."""
    return OPS["equal"].wrapper_call(x, y)


def not_equal(x: Expr, y: Expr) -> Call:
    """Elementwise ``x != y`` (bool) with numpy broadcasting."""
    return OPS["not_equal"].wrapper_call(x, y)


def less(x: Expr, y: Expr) -> Call:
    """Elementwise ``x < y`` (bool) with numpy broadcasting."""
    return OPS["less"].wrapper_call(x, y)


def less_equal(x: Expr, y: Expr) -> Call:
    """Elementwise ``x <= y`` (bool) with numpy broadcasting."""
    return OPS["less_equal"].wrapper_call(x, y)


def greater(x: Expr, y: Expr) -> Call:
    """Elementwise ``x > y`` (bool) with numpy broadcasting."""
    return OPS["greater"].wrapper_call(x, y)


def greater_equal(x: Expr, y: Expr) -> Call:
    """Elementwise ``x >= y`` (bool) with numpy broadcasting."""
    return OPS["greater_equal"].wrapper_call(x, y)


def relu(x: Expr) -> Call:
    """``max(x, 0)`` elementwise (``nn.relu``)."""
    return OPS["nn.relu"].wrapper_call(x)


def sigmoid(x: Expr) -> Call:
    """Logistic sigmoid, elementwise."""
    return OPS["sigmoid"].wrapper_call(x)


def tanh(x: Expr) -> Call:
    """Hyperbolic tangent, elementwise."""
    return OPS["tanh"].wrapper_call(x)


def exp(x: Expr) -> Call:
    """Exponential, elementwise."""
    return OPS["exp"].wrapper_call(x)


def log(x: Expr) -> Call:
    """Natural logarithm, elementwise."""
    return OPS["log"].wrapper_call(x)


def sqrt(x: Expr) -> Call:
    """Square root, elementwise."""
    return OPS["sqrt"].wrapper_call(x)


def negative(x: Expr) -> Call:
    """``-x`` elementwise."""
    return OPS["negative"].wrapper_call(x)


def abs(x: Expr) -> Call:
    """Absolute value, elementwise."""
    return OPS["abs"].wrapper_call(x)


def floor(x: Expr) -> Call:
    """Floor, elementwise."""
    return OPS["floor"].wrapper_call(x)


def ceil(x: Expr) -> Call:
    """Ceiling, elementwise."""
    return OPS["ceil"].wrapper_call(x)


def round(x: Expr) -> Call:
    """Round to nearest, elementwise."""
    return OPS["round"].wrapper_call(x)


def sign(x: Expr) -> Call:
    """Sign (-1, 0, 1), elementwise."""
    return OPS["sign"].wrapper_call(x)


def erf(x: Expr) -> Call:
    """Error function, elementwise."""
    return OPS["erf"].wrapper_call(x)


def rsqrt(x: Expr) -> Call:
    """``1 / sqrt(x)`` elementwise."""
    return OPS["rsqrt"].wrapper_call(x)


def copy(x: Expr) -> Call:
    """A copy of ``x``."""
    return OPS["copy"].wrapper_call(x)


def cumsum(x: Expr, axis: int, exclusive: bool = False, reverse: bool = False) -> Call:
    """Running sums of ``x`` along ``axis`` (numpy's ``cumsum``; ``exclusive``: each entry is the
    sum of those before it, ONNX's ``CumSum``; ``reverse``: summed from the end)."""
    return OPS["cumsum"].wrapper_call(x, axis=axis, exclusive=exclusive, reverse=reverse)


def trunc(x: Expr) -> Call:
    """Truncation toward zero, elementwise."""
    return OPS["trunc"].wrapper_call(x)


def sin(x: Expr) -> Call:
    """Sine, elementwise."""
    return OPS["sin"].wrapper_call(x)


def cos(x: Expr) -> Call:
    """Cosine, elementwise."""
    return OPS["cos"].wrapper_call(x)


def log2(x: Expr) -> Call:
    """Base-2 logarithm, elementwise."""
    return OPS["log2"].wrapper_call(x)


def log10(x: Expr) -> Call:
    """Base-10 logarithm, elementwise."""
    return OPS["log10"].wrapper_call(x)


def logical_not(x: Expr) -> Call:
    """Logical not, elementwise."""
    return OPS["logical_not"].wrapper_call(x)


def zeros_like(x: Expr, dtype: str | None = None) -> Call:
    """Zeros of ``x``'s shape and ``dtype`` (None: ``x``'s dtype)."""
    if dtype is None:
        return OPS["zeros_like"].wrapper_call(x)
    return OPS["zeros_like"].wrapper_call(x, dtype=dtype)


def ones_like(x: Expr, dtype: str | None = None) -> Call:
    """Ones of ``x``'s shape and ``dtype`` (None: ``x``'s dtype)."""
    if dtype is None:
        return OPS["ones_like"].wrapper_call(x)
    return OPS["ones_like"].wrapper_call(x, dtype=dtype)


def leaky_relu(x: Expr, alpha: float = 0.01) -> Call:
    """``x if x > 0 else alpha * x`` elementwise (``nn.leaky_relu``)."""
    return OPS["nn.leaky_relu"].wrapper_call(x, alpha=alpha)


def clip(x: Expr, a_min: float, a_max: float) -> Call:
    """Clamp every element to ``[a_min, a_max]``."""
    return OPS["clip"].wrapper_call(x, a_min=a_min, a_max=a_max)


def isnan(x: Expr) -> Call:
    """Elementwise NaN test (bool)."""
    return OPS["isnan"].wrapper_call(x)


def isinf(x: Expr) -> Call:
    """Elementwise infinity test (bool)."""
    return OPS["isinf"].wrapper_call(x)


def isfinite(x: Expr) -> Call:
    """Elementwise finiteness test (bool)."""
    return OPS["isfinite"].wrapper_call(x)


def where(cond: Expr, x: Expr, y: Expr) -> Call:
    """``x`` where ``cond`` else ``y``; the three shapes broadcast; ``cond`` is bool."""
    return OPS["where"].wrapper_call(cond, x, y)


def cast(x: Expr, dtype: str) -> Call:
    """``x`` converted to ``dtype``."""
    return OPS["cast"].wrapper_call(x, dtype=dtype)


def cast_like(x: Expr, like: Expr) -> Call:
    """``x`` converted to ``like``'s dtype."""
    return OPS["cast_like"].wrapper_call(x, like)
