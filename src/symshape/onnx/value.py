"""An ONNX value as the importer knows it: :class:`Value` (its expression, its constant value and
type when known without inference). Converters see values through
:class:`~symshape.onnx.context.NodeContext`; the importer keeps one per ONNX value name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from symshape import Expr, Type

__all__ = ["Value"]


@dataclass(eq=False, repr=False, slots=True)
class Value:
    """An ONNX value as the importer knows it.

    ``expr`` is its symshape expression; ``const`` its value when known (small constants);
    ``type`` its type when known without inference (parameters, constants); ``elem_type`` the ONNX
    element type when known; ``synthetic`` marks a stand-in for an output the importer could not
    convert (a parameter of unknown or declared type).

    An initializer's expression is built when a converter first asks for it (``_make``): one whose
    value only is read (a ``Reshape`` target, the shape of a ``ConstantOfShape``) never becomes
    part of the program. ``materialized`` says whether it has been built.
    """

    name: str
    _expr: Expr | None
    const: np.ndarray[Any, Any] | None = None
    _type: Type | None = None
    elem_type: int = 0
    synthetic: bool = False
    _make: Callable[[], Expr] | None = None
    _type_fn: Callable[[], Type] | None = None

    def __post_init__(self) -> None:
        assert self._expr is not None or self._make is not None

    @property
    def expr(self) -> Expr:
        e = self._expr
        if e is None:
            assert self._make is not None
            e = self._expr = self._make()
            self._make = None
        return e

    @property
    def type(self) -> Type | None:
        """The type known without inference (``_type_fn``, when given, computes it on first use:
        a constant's type carrying its entries as the value)."""
        t = self._type
        if t is None and self._type_fn is not None:
            t = self._type = self._type_fn()
            self._type_fn = None
        return t

    @property
    def materialized(self) -> bool:
        """Whether the expression exists (always, except for an initializer not used yet)."""
        return self._expr is not None

    def __repr__(self) -> str:
        return f"Value({self.name!r}, type={self.type})"

    def int_vector(self) -> tuple[int, ...] | None:
        """The value as a tuple of ints when it is a known 1-d integer tensor, else None."""
        c = self.const
        if c is None or c.ndim != 1 or c.dtype.kind not in "iu":
            return None
        return tuple(c.tolist())

    @staticmethod
    def of(name: str, expr: Expr, type: Type | None = None) -> Value:
        """``Value(name, expr, None, type)``, made without the dataclass' ``__init__`` (one per
        node output and weight of a model)."""
        v: Value = _new(Value)
        v.name, v._expr, v.const, v._type, v.elem_type = name, expr, None, type, 0
        v.synthetic, v._make, v._type_fn = False, None, None
        return v


_new: Final[Any] = object.__new__
