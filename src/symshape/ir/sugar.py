"""Operator overloading and the numpy-like methods of expressions: the mixin :class:`ExprSugar`,
a base of :class:`~symshape.ir.nodes.Expr`.

``x + y``, ``x @ w``, ``x < 0``, ``x[..., 1:]``, ``x.reshape(n, -1)``, ``x.sum(axis=1)`` build
operator calls. What that needs to know about expressions (their kind and dtype when they are
built, how a Python number becomes a constant, how numpy indexing lowers to operators) lives in
:mod:`symshape.ir.frontend`, which sits above the node classes and installs itself here with
:func:`set_frontend` when :mod:`symshape.ir` is imported. This module imports no node class, so
the node classes can inherit from it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from symshape.encoding.dtypes import dtype_name
from symshape.errors import INVALID_ARGUMENT, SymshapeError

if TYPE_CHECKING:
    from symshape.ir.nodes import Call, Expr

__all__ = ["ExprSugar", "Frontend", "set_frontend"]


@dataclass(frozen=True)
class Frontend:
    """What the methods of :class:`ExprSugar` delegate to (see :mod:`symshape.ir.frontend`)."""

    binary: Callable[[str, Any, Any], Call]
    """``binary(op, a, b)``: the call of a binary operator, one side possibly a Python number."""
    op_call: Callable[[str, Sequence[Expr], Mapping[str, Any] | None], Call]
    """``op_call(op, args, attrs)``: the call of a registered operator."""
    getitem: Callable[[Expr, Any], Expr]
    """``x[index]``: a tuple field or numpy indexing of a tensor."""
    iterate: Callable[[Expr], Iterator[Expr]]
    """``iter(x)``: the fields of a tuple whose arity is known when it is built."""


_frontend: Frontend | None = None


def set_frontend(frontend: Frontend) -> None:
    """Install what the methods delegate to (done once by :mod:`symshape.ir.frontend`)."""
    global _frontend
    _frontend = frontend


def _front() -> Frontend:
    if _frontend is None:  # pragma: no cover - symshape.ir imports the front-end
        raise SymshapeError(INVALID_ARGUMENT, "the expression front-end is not installed: import symshape")
    return _frontend


def _binary(op: str) -> Callable[[ExprSugar, Any], Call]:
    def method(self: ExprSugar, other: Any) -> Call:
        return _front().binary(op, self, other)

    method.__doc__ = f"``{op}`` of the expression and ``other`` (a number becomes a constant)."
    return method


def _reflected(op: str) -> Callable[[ExprSugar, Any], Call]:
    def method(self: ExprSugar, other: Any) -> Call:
        return _front().binary(op, other, self)

    method.__doc__ = f"``{op}`` of ``other`` and the expression (a number becomes a constant)."
    return method


def _unary(op: str) -> Callable[[ExprSugar], Call]:
    def method(self: ExprSugar) -> Call:
        return _front().op_call(op, [_self(self)], None)

    method.__doc__ = f"``{op}`` of the expression."
    return method


def _reduction(op: str, what: str) -> Callable[..., Call]:
    def method(self: ExprSugar, axis: Any = None, keepdims: bool = False) -> Call:
        if isinstance(axis, list):
            axis = tuple(axis)
        return _front().op_call(op, [_self(self)], {"axis": axis, "keepdims": keepdims})

    method.__doc__ = f"{what} over ``axis`` (None: all axes); ``x.{op}(axis=None, keepdims=False)``."
    return method


def _self(x: ExprSugar) -> Expr:
    """``x`` as the expression it is (every instance of the mixin is an expression)."""
    return cast("Expr", x)


def _varargs(xs: tuple[Any, ...]) -> tuple[Any, ...]:
    """``f(1, 2)`` and ``f((1, 2))`` alike (numpy's ``reshape``/``transpose`` convention)."""
    if len(xs) == 1 and isinstance(xs[0], (tuple, list)):
        return tuple(xs[0])
    if len(xs) == 1 and xs[0] is None:
        return ()
    return tuple(xs)


class ExprSugar:
    """Python's operators and numpy's methods on expressions; each builds an operator call.
    ``==`` and ``!=`` stay identity (expressions are program points): use :meth:`eq`, :meth:`ne`."""

    __slots__ = ()

    __array_ufunc__ = None
    """numpy defers to the expression: ``np.ones(3) + x`` is ``x.__radd__``, a call, not an array."""

    __add__ = _binary("add")
    __radd__ = _reflected("add")
    __sub__ = _binary("subtract")
    __rsub__ = _reflected("subtract")
    __mul__ = _binary("multiply")
    __rmul__ = _reflected("multiply")
    __truediv__ = _binary("divide")
    __rtruediv__ = _reflected("divide")
    __floordiv__ = _binary("floor_divide")
    __rfloordiv__ = _reflected("floor_divide")
    __mod__ = _binary("mod")
    __rmod__ = _reflected("mod")
    __pow__ = _binary("power")
    __rpow__ = _reflected("power")
    __matmul__ = _binary("matmul")
    __rmatmul__ = _reflected("matmul")
    __and__ = _binary("logical_and")
    __rand__ = _reflected("logical_and")
    __or__ = _binary("logical_or")
    __ror__ = _reflected("logical_or")
    __lt__ = _binary("less")
    __le__ = _binary("less_equal")
    __gt__ = _binary("greater")
    __ge__ = _binary("greater_equal")
    eq = _binary("equal")
    """Elementwise ``==`` (bool); the operator ``==`` compares expressions by identity."""
    ne = _binary("not_equal")
    """Elementwise ``!=`` (bool); the operator ``!=`` compares expressions by identity."""
    __neg__ = _unary("negative")
    __abs__ = _unary("abs")
    __invert__ = _unary("logical_not")

    sum = _reduction("sum", "Sum")
    mean = _reduction("mean", "Mean")
    prod = _reduction("prod", "Product")
    max = _reduction("max", "Maximum")
    min = _reduction("min", "Minimum")
    all = _reduction("all", "Logical and")
    any = _reduction("any", "Logical or")
    argmax = _reduction("argmax", "Index of the maximum")
    argmin = _reduction("argmin", "Index of the minimum")

    def __pos__(self) -> Expr:
        return _self(self)

    def __getitem__(self, index: Any) -> Expr:
        """``t[0]`` of a tuple is a :class:`~symshape.ir.nodes.TupleGetItem`; a tensor is indexed
        like numpy (``x[..., 1:, ::2]``, ``x[:, 0]``, ``x[None]``, ``x[idx]``) by
        ``strided_slice``, ``squeeze``, ``expand_dims`` and ``take`` (``boolean_mask`` for a bool
        tensor known when it is built, on the leading axes). Which one is decided by the type the
        expression is known to have when it is built
        (:func:`~symshape.ir.frontend.static_kind`); an int index of an expression of unknown
        kind (an unannotated variable, a function's result) stays a ``TupleGetItem``."""
        return _front().getitem(_self(self), index)

    def __iter__(self) -> Iterator[Expr]:
        # without this, Python would iterate through __getitem__ forever (e[0], e[1], ...)
        return _front().iterate(_self(self))

    @property
    def T(self) -> Call:
        """The axes reversed (``transpose`` without axes)."""
        return _front().op_call("transpose", [_self(self)], {"axes": None})

    def transpose(self, *axes: Any) -> Call:
        """``x.transpose(1, 0, 2)`` or ``x.transpose((1, 0, 2))``; no axes reverses them."""
        ax = _varargs(axes)
        return _front().op_call("transpose", [_self(self)], {"axes": ax if ax else None})

    def reshape(self, *shape: Any) -> Call:
        """``x.reshape(n, -1)`` or ``x.reshape((n, -1))`` (Relay's special values apply)."""
        return _front().op_call("reshape", [_self(self)], {"newshape": _varargs(shape)})

    def astype(self, dtype: Any) -> Call:
        """``x`` converted to ``dtype`` (numpy and torch spellings accepted)."""
        return _front().op_call("cast", [_self(self)], {"dtype": dtype_name(dtype)})

    def squeeze(self, axis: Any = None) -> Call:
        """Remove axes of size 1."""
        return _front().op_call("squeeze", [_self(self)], {"axis": axis})

    def expand_dims(self, axis: int, num_newaxis: int = 1) -> Call:
        """Insert ``num_newaxis`` axes of size 1 at ``axis``."""
        return _front().op_call("expand_dims", [_self(self)], {"axis": axis, "num_newaxis": num_newaxis})
