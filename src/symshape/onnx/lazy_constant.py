"""An initializer's type and expression, built when a converter first asks for them.

The importer binds each initializer (and each constant it folds from ``Constant`` nodes) to a
:class:`~symshape.onnx.context.Value` whose expression and type are made on first use: a constant
whose value only is read (a ``Reshape`` target, the shape of a ``ConstantOfShape``) never enters the
program. :class:`LazyConstant` holds what both need: one small object per initializer (a model has
hundreds) rather than two closures over the same fields.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import symshape as ss
from symshape import Expr, TensorType, Type, Var
from symshape.encoding.values import VALUE_DTYPES
from symshape.onnx.context import Value
from symshape.onnx.spans import OnnxSpan
from symshape.relations.values import constant_type

__all__ = ["LazyConstant"]


class LazyConstant:
    """``typ()`` is the constant's type (a small integer tensor's carries its entries as its
    value); calling it builds the constant, binds it to a variable annotated with that type in
    ``outer`` (the outermost graph's bindings: in scope everywhere) and returns the variable.
    ``value`` is the :class:`Value` it stands behind (set by the importer)."""

    __slots__ = ("name", "shape", "dtype", "base", "arr", "kind", "label", "position", "outer", "value")

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
    ) -> None:
        self.name, self.shape, self.dtype, self.base = name, shape, dtype, base
        self.arr, self.kind, self.label, self.position, self.outer = arr, kind, label, position, outer
        self.value: Value | None = None

    def typ(self) -> Type:
        t: Type = self.base
        arr = self.arr
        if arr is not None and len(self.shape) <= 1 and self.dtype in VALUE_DTYPES:
            t = constant_type(self.base, arr)  # a small int tensor: its entries are its value
        return t

    def __call__(self) -> Expr:
        span = OnnxSpan.at(self.label, self.position, f"{self.kind} '{self.name}'")
        c = ss.Constant(shape=self.shape, dtype=self.dtype)
        c.data = self.arr  # what ss.const(arr) makes, without inspecting the array again
        c.span = span
        assert self.value is not None
        v = ss.var(self.name, self.value.type)
        v.span = span
        self.outer.append((v, c))
        return v
