"""An initializer's value: its type and expression, built when a converter first asks for them.

The importer binds each initializer (and each constant it folds from ``Constant`` nodes) to a
:class:`LazyConstant`, the :class:`~symshape.onnx.context.Value` whose expression and type are made
on first use: a constant whose value only is read (a ``Reshape`` target, the shape of a
``ConstantOfShape``) never enters the program. It is one object per initializer (a model has
hundreds), without closures.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from symshape import Constant, Expr, TensorType, Type, Var
from symshape.encoding.leaf_types import plain_copy
from symshape.encoding.values import VALUE_DTYPES
from symshape.onnx.context import Value
from symshape.onnx.spans import OnnxSpan
from symshape.relations.values import constant_type

__all__ = ["LazyConstant"]


class LazyConstant(Value):
    """A constant's :class:`~symshape.onnx.context.Value` (``const`` is its array when kept).
    ``type`` is the constant's type (a small integer tensor's carries its entries as its value);
    ``expr`` builds the constant, binds it to a variable annotated with that type in ``outer`` (the
    outermost graph's bindings: in scope everywhere) and is that variable. ``kind`` is what it is
    in the model (``initializer``), ``position`` its place (for its span)."""

    __slots__ = ("shape", "dtype", "base", "kind", "label", "position", "outer")

    def __init__(
        self,
        name: str,
        shape: tuple[int, ...],
        dtype: str,
        base: TensorType,
        arr: np.ndarray[Any, Any] | None,
        kind: str,
        label: str,
        position: int,
        outer: list[tuple[Var, Expr]],
        elem_type: int,
    ) -> None:
        # (Value's fields set here: its __init__ wants an expression or a maker)
        self.name, self._expr, self.const, self._type, self.elem_type = name, None, arr, None, elem_type
        self.synthetic, self._make, self._type_fn = False, None, None
        self.shape, self.dtype, self.base, self.kind = shape, dtype, base, kind
        self.label, self.position, self.outer = label, position, outer

    @property
    def type(self) -> Type | None:
        t = self._type
        if t is None:
            t = self.base
            arr = self.const
            if arr is not None and len(self.shape) <= 1 and self.dtype in VALUE_DTYPES:
                t = constant_type(self.base, arr)  # a small int tensor: its entries are its value
            self._type = t
        return t

    @property
    def expr(self) -> Expr:
        e = self._expr
        if e is None:
            e = self._expr = self._build()
        return e

    def _build(self) -> Expr:
        # what ss.Constant(shape, dtype) with data, and ss.var, make: built from the fields, without
        # checking again the shape, dtype and type the importer made (as the weights are built)
        span = OnnxSpan.at(self.label, self.position, f"{self.kind} '{self.name}'")
        c: Constant = _new_expr(Constant)
        c.type, c.data, c.span = plain_copy(self.base), self.const, span
        v: Var = _new_expr(Var)
        v.name, v.type_annotation, v.span = self.name, self.type, span
        self.outer.append((v, c))
        return v


#: expressions built without their constructors' checks and span lookup (every field is set here)
_new_expr: Final[Any] = object.__new__
