"""Weights: ``ConstantOfShape`` nodes of a constant shape filled with a float.

Models exported without their weights (the ``light_*`` models in onnx's wheel) make every weight a
``ConstantOfShape`` of a constant shape: half of their nodes. :class:`Weights` binds such a node as
its converter and the importer's ``_bind`` would (a constant of that shape, without values, bound to
a variable annotated with its type, both with the node's span), without a conversion context. Any
other form (an integer fill, a shape computed at run time, a negative size, an attribute it does not
read) is left to the converter, which also reports what is wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np
import onnx

from symshape import Constant, Expr, TensorType, Var
from symshape.encoding.leaf_types import plain_copy
from symshape.onnx.attrs import decoded_dtype, tensor_value
from symshape.onnx.context import Value
from symshape.onnx.dtypes import DTYPE_TO_ONNX, DTYPES
from symshape.onnx.spans import OnnxSpan

__all__ = ["Weights"]


class Weights:
    """Binds weight nodes (see the module docstring) into ``bindings`` through ``define``; the
    fill of each distinct ``value`` attribute is read once."""

    def __init__(
        self,
        tensor_type: Callable[[tuple[int, ...], str], TensorType],
        define: Callable[[Value], Value],
        base_dir: str | None = None,
    ) -> None:
        """``base_dir``: the model's folder, where external fill values are read from."""
        self._tensor_type = tensor_type
        self._dir = base_dir
        self._define = define
        self._fills: dict[bytes, str | None] = {}
        # the fields of a weight's type (None: not a weight) and its ONNX element type, by its shape
        # and its serialized value attribute
        self._bases: dict[tuple[tuple[int, ...], bytes | None], tuple[dict[str, Any] | None, int]] = {}

    def bind(
        self,
        node: onnx.NodeProto,
        outputs: Sequence[str],
        inputs: Sequence[Value | None],
        span: OnnxSpan,
        bindings: list[tuple[Var, Expr]],
    ) -> bool:
        """Bind ``node`` (its ``outputs`` names given) when it is a weight (True), else do nothing
        (False)."""
        if len(inputs) != 1 or len(outputs) != 1 or inputs[0] is None:
            return False
        v = self.make(node, outputs[0], inputs[0], span.file, span.line, span.what, bindings)
        if v is None:
            return False
        self._define(v)
        return True

    def make(
        self,
        node: onnx.NodeProto,
        name: str,
        shape_value: Value,
        file: str,
        position: int,
        what: str,
        bindings: list[tuple[Var, Expr]],
    ) -> Value | None:
        """The value of ``node`` when it is a weight whose output is ``name`` and whose shape input
        is ``shape_value``: its constant, bound in ``bindings`` to a variable annotated with its
        type, both with the span of the ``position``-th place of the model's ``file``
        (``what``: the node as reports name it); None (and nothing done) when it is not one. The
        caller defines the value (one call per weight: a model has hundreds, done inline)."""
        if not name:
            return None
        shape = shape_value.int_vector()
        if shape is None:
            return None
        attrs = node.attribute
        n = len(attrs)
        fill: bytes | None
        if not n:
            fill = None  # (not b"": an attribute of default fields serializes to that)
        elif n == 1:
            fill = attrs[0].SerializeToString()
        else:
            return None
        key = (shape, fill)
        hit = self._bases.get(key)
        if hit is None:
            base = self._base(shape, fill, attrs)
            et = 0 if base is None or not isinstance(base.dtype, str) else DTYPE_TO_ONNX.get(base.dtype, 0)
            hit = self._bases[key] = (None if base is None else _type_fields(base), et)
        fields, et = hit
        if fields is None:
            return None
        span = _span(file, position, what)
        # its own type object (the converter makes one per constant: an annotation is admitted per
        # type object), with the fields of the shared one (what plain_copy makes)
        t: TensorType = _new(TensorType)
        t.__dict__.update(fields)
        e: Constant = _new(Constant)
        e.type, e.data, e.span = t, None, span
        var: Var = _new(Var)
        var.name, var.type_annotation, var.span = name, t, span
        bindings.append((var, e))
        # (Value.of's fields, and the element type)
        v: Value = _new(Value)
        v.name, v._expr, v.const, v._type, v.elem_type = name, var, None, t, et
        v.synthetic, v._make, v._type_fn = False, None, None
        return v

    def _base(
        self, shape: tuple[int, ...], fill: bytes | None, attrs: Sequence[onnx.AttributeProto]
    ) -> TensorType | None:
        """The (shared) type of a weight of ``shape`` and ``attrs`` (``fill``: its one attribute
        serialized, None for none), or None when the node is not a weight."""
        if shape and min(shape) < 0:
            return None
        dtype: str | None = "float32"
        if fill is not None:
            dtype = self._fills.get(fill, _NO_FILL)
            if dtype is _NO_FILL:
                dtype = self._fills[fill] = _float_fill(attrs[0], self._dir)
            if dtype is None:
                return None
        assert dtype is not None
        return self._tensor_type(shape, dtype)


def _float_fill(a: onnx.AttributeProto, base_dir: str | None) -> str | None:
    """The dtype of a ``ConstantOfShape``'s ``value`` attribute when it is a float tensor the
    converter reads without complaint, else None (the converter decides)."""
    if a.name != "value" or a.type != onnx.AttributeProto.TENSOR:
        return None
    t = a.t
    dtype = decoded_dtype(t)  # (without decoding it where sure: numpy's dtype names cost)
    if dtype is not None:
        return dtype if dtype in _FLOAT_DTYPES else None
    return _decoded_float_fill(t, base_dir)


def _decoded_float_fill(t: onnx.TensorProto, base_dir: str | None) -> str | None:
    """:func:`_float_fill` of a ``value`` attribute holding ``t``, by decoding it."""
    try:
        v = np.asarray(tensor_value(t, base_dir=base_dir))
    except Exception:
        return None
    dtype = str(v.dtype)
    return dtype if v.dtype.kind == "f" and dtype in DTYPES else None


def _type_fields(base: TensorType) -> dict[str, Any]:
    """The instance fields of a copy of ``base`` (see :func:`~symshape.encoding.leaf_types.plain_copy`),
    as :meth:`Weights.make` sets them."""
    return dict(plain_copy(base).__dict__)


#: expressions, types and values built without their constructors' checks and span lookup (every
#: field is set here, from types the importer made)
_new: Final[Any] = object.__new__
_span: Final = OnnxSpan.in_file
_NO_FILL: Final = "?"
#: the float dtypes among those ``decoded_dtype`` names (a fill's dtype must be a float symshape has)
_FLOAT_DTYPES: Final = frozenset({"float32", "float64"}) & DTYPES
