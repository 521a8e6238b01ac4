"""An initializer's value: its type and expression, built when a converter first asks for them.

The importer binds each initializer (and each constant it folds from ``Constant`` nodes) to a
:class:`LazyConstant`, the :class:`~symshape.onnx.context.Value` whose expression and type are made
on first use: a constant whose value only is read (a ``Reshape`` target, the shape of a
``ConstantOfShape``) never enters the program. It is one object per initializer (a model has
hundreds), without closures.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from symshape import Constant, Expr, TensorType, Type, Var
from symshape.encoding.leaf_types import plain_copy
from symshape.encoding.values import VALUE_DTYPES
from symshape.onnx.attrs import tensor_value
from symshape.onnx.context import Value
from symshape.onnx.spans import OnnxSpan
from symshape.relations.values import constant_type

if TYPE_CHECKING:
    import onnx

__all__ = ["LazyConstant"]


class LazyConstant(Value):
    """A constant's :class:`~symshape.onnx.context.Value` (``const`` is its array when kept).
    ``type`` is the constant's type (a small integer tensor's carries its entries as its value);
    ``expr`` builds the constant, binds it to a variable annotated with that type in ``outer`` (the
    outermost graph's bindings: in scope everywhere) and is that variable. ``kind`` is what it is
    in the model (``initializer``), ``position`` its place (for its span).

    An int64 vector initializer (``source``: its ``TensorProto``) is decoded when its value is first
    read; :meth:`int_vector` reads it without numpy (the shape of a weight).
    """

    __slots__ = ("shape", "dtype", "base", "kind", "label", "position", "outer", "_arr", "_source")

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
        source: onnx.TensorProto | None = None,
    ) -> None:
        # (Value's fields set here: its __init__ wants an expression or a maker)
        self.name, self._expr, self._arr, self._type, self.elem_type = name, None, arr, None, elem_type
        self.synthetic, self._make, self._type_fn = False, None, None
        self.shape, self.dtype, self.base, self.kind = shape, dtype, base, kind
        self.label, self.position, self.outer, self._source = label, position, outer, source

    @property
    def const(self) -> np.ndarray[Any, Any] | None:
        src = self._source
        if src is not None:
            self._source = None
            try:
                self._arr = tensor_value(src, self.shape)
            except Exception:
                self._arr = None
        return self._arr

    @const.setter
    def const(self, arr: np.ndarray[Any, Any] | None) -> None:
        self._source, self._arr = None, arr

    def int_vector(self) -> tuple[int, ...] | None:
        src = self._source
        if src is not None and not src.HasField("segment"):
            raw = src.raw_data
            n = self.shape[0]
            if raw and len(raw) == 8 * n:  # (what tensor_value reads, without numpy)
                unpack = _UNPACK.get(n)
                if unpack is None:
                    unpack = _UNPACK[n] = struct.Struct(f"<{n}q").unpack
                return unpack(raw)
        return super().int_vector()

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
#: struct's readers of little-endian int64 vectors, by length (a model's shapes have few lengths)
_UNPACK: Final[dict[int, Any]] = {}
