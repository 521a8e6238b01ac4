"""Operator constructors: ``ss.ops.add(x, y)``, ``ss.ops.flatten(x, axis=1)``, ...

Each operator is registered once (:func:`symshape.ir.op.register_op`) with the relation that types
it; the functions here build calls and validate literal attributes at the call site.
"""

from __future__ import annotations

from typing import Any

from symshape.ir.expr import Call, Expr
from symshape.ir.op import Op, register_op

__all__ = [
    "add",
    "subtract",
    "multiply",
    "divide",
    "power",
    "maximum",
    "minimum",
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
    "flatten",
]

_BINARY = ("add", "subtract", "multiply", "divide", "power", "maximum", "minimum")
_COMPARE = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")
_UNARY = ("relu", "sigmoid", "tanh", "exp", "log", "sqrt", "negative", "abs")

for _n in _BINARY:
    register_op(_n, "broadcast", 2)
for _n in _COMPARE:
    register_op(_n, "broadcast_bool", 2)
for _n in _UNARY:
    register_op(_n, "identity", 1)
register_op("flatten", "flatten", 1)


def _op(name: str, *args: Any, **attrs: Any) -> Call:
    return Op.get(name)(*args, **attrs)


def add(x: Expr, y: Expr) -> Call:
    """Elementwise ``x + y`` with numpy broadcasting."""
    return _op("add", x, y)


def subtract(x: Expr, y: Expr) -> Call:
    return _op("subtract", x, y)


def multiply(x: Expr, y: Expr) -> Call:
    return _op("multiply", x, y)


def divide(x: Expr, y: Expr) -> Call:
    return _op("divide", x, y)


def power(x: Expr, y: Expr) -> Call:
    return _op("power", x, y)


def maximum(x: Expr, y: Expr) -> Call:
    return _op("maximum", x, y)


def minimum(x: Expr, y: Expr) -> Call:
    return _op("minimum", x, y)


def equal(x: Expr, y: Expr) -> Call:
    return _op("equal", x, y)


def not_equal(x: Expr, y: Expr) -> Call:
    return _op("not_equal", x, y)


def less(x: Expr, y: Expr) -> Call:
    return _op("less", x, y)


def less_equal(x: Expr, y: Expr) -> Call:
    return _op("less_equal", x, y)


def greater(x: Expr, y: Expr) -> Call:
    return _op("greater", x, y)


def greater_equal(x: Expr, y: Expr) -> Call:
    return _op("greater_equal", x, y)


def relu(x: Expr) -> Call:
    return _op("relu", x)


def sigmoid(x: Expr) -> Call:
    return _op("sigmoid", x)


def tanh(x: Expr) -> Call:
    return _op("tanh", x)


def exp(x: Expr) -> Call:
    return _op("exp", x)


def log(x: Expr) -> Call:
    return _op("log", x)


def sqrt(x: Expr) -> Call:
    return _op("sqrt", x)


def negative(x: Expr) -> Call:
    return _op("negative", x)


def abs(x: Expr) -> Call:  # noqa: A001
    return _op("abs", x)


def flatten(x: Expr, axis: int = 1) -> Call:
    """``(prod(x.shape[:axis]), prod(x.shape[axis:]))``."""
    return _op("flatten", x, axis=axis)
