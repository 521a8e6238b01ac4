"""ONNX attributes as Python values, per ``AttributeProto`` type.

==================  ======================================================================
AttributeProto      Python value
==================  ======================================================================
``FLOAT``           ``float``
``INT``             ``int``
``STRING``          ``str`` (UTF-8 decoded; undecodable bytes stay ``bytes``)
``TENSOR``          ``numpy.ndarray`` (``onnx.numpy_helper.to_array``)
``SPARSE_TENSOR``   ``numpy.ndarray`` (densified)
``GRAPH``           ``onnx.GraphProto``
``TYPE_PROTO``      ``onnx.TypeProto``
``FLOATS`` ...      a tuple of the above
==================  ======================================================================

>>> from onnx import helper
>>> n = helper.make_node("Transpose", ["x"], ["y"], perm=[1, 0], name="t")
>>> parse_attributes(n)
{'perm': (1, 0)}
"""

from __future__ import annotations

import math
from typing import Any, Final

import numpy as np
import onnx
from onnx import AttributeProto, numpy_helper

__all__ = ["parse_attribute", "parse_attributes", "tensor_value", "sparse_value"]

_T = AttributeProto.AttributeType


def _str(b: bytes) -> str | bytes:
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return b


_TP = onnx.TensorProto
#: element types read straight from ``raw_data`` (little-endian, as ONNX stores them), or from the
#: typed field of the same width
_RAW: Final[dict[int, np.dtype[Any]]] = {
    _TP.FLOAT: np.dtype("<f4"), _TP.DOUBLE: np.dtype("<f8"), _TP.INT64: np.dtype("<i8"),
    _TP.INT32: np.dtype("<i4"), _TP.UINT64: np.dtype("<u8"),
}  # fmt: skip
_FIELD: Final[dict[int, str]] = {
    _TP.FLOAT: "float_data", _TP.DOUBLE: "double_data", _TP.INT64: "int64_data",
    _TP.INT32: "int32_data", _TP.UINT64: "uint64_data",
}  # fmt: skip


def tensor_value(t: onnx.TensorProto) -> np.ndarray[Any, Any]:
    """A ``TensorProto``'s value as a numpy array (external data must have been loaded).

    The common element types (float32/64, int32/64, uint64) are decoded with numpy directly (the
    array may be read-only); the others by ``onnx.numpy_helper``.

    >>> from onnx import helper
    >>> tensor_value(helper.make_tensor("s", onnx.TensorProto.INT64, [2], [1, -1])).tolist()
    [1, -1]
    """
    dt = _RAW.get(t.data_type)
    if dt is not None and t.data_location != _TP.EXTERNAL and not t.HasField("segment"):
        shape = tuple(t.dims)
        raw = t.raw_data
        if raw:
            if len(raw) == dt.itemsize * math.prod(shape):
                return np.frombuffer(raw, dtype=dt).reshape(shape).astype(dt.newbyteorder("="), copy=False)
        else:
            data = getattr(t, _FIELD[t.data_type])
            if len(data) == math.prod(shape):
                return np.array(data, dtype=dt.newbyteorder("=")).reshape(shape)
    return np.asarray(numpy_helper.to_array(t))


def sparse_value(t: onnx.SparseTensorProto) -> np.ndarray[Any, Any]:
    """A ``SparseTensorProto`` as a dense numpy array (linear or coordinate indices)."""
    dense_shape = tuple(int(d) for d in t.dims)
    values = tensor_value(t.values)
    out = np.zeros(dense_shape, dtype=values.dtype)
    idx = tensor_value(t.indices).astype(np.int64)
    if idx.ndim == 1:
        out.reshape(-1)[idx] = values
    else:
        out[tuple(idx.T)] = values
    return out


_FLOAT: Final = int(_T.FLOAT)
_INT: Final = int(_T.INT)
_STRING: Final = int(_T.STRING)
_TENSOR: Final = int(_T.TENSOR)
_SPARSE_TENSOR: Final = int(_T.SPARSE_TENSOR)
_GRAPH: Final = int(_T.GRAPH)
_TYPE_PROTO: Final = int(_T.TYPE_PROTO)
_FLOATS: Final = int(_T.FLOATS)
_INTS: Final = int(_T.INTS)
_STRINGS: Final = int(_T.STRINGS)
_TENSORS: Final = int(_T.TENSORS)
_SPARSE_TENSORS: Final = int(_T.SPARSE_TENSORS)
_GRAPHS: Final = int(_T.GRAPHS)
_TYPE_PROTOS: Final = int(_T.TYPE_PROTOS)


def parse_attribute(a: AttributeProto) -> Any:
    """The Python value of one attribute (see the module docstring)."""
    t = a.type
    if t == _INTS:
        return tuple(a.ints)
    if t == _INT:
        return a.i
    if t == _FLOAT:
        return float(a.f)
    if t == _STRING:
        return _str(a.s)
    if t == _FLOATS:
        return tuple(float(x) for x in a.floats)
    if t == _TENSOR:
        return tensor_value(a.t)
    if t == _SPARSE_TENSOR:
        return sparse_value(a.sparse_tensor)
    if t == _GRAPH:
        return a.g
    if t == _TYPE_PROTO:
        return a.tp
    if t == _STRINGS:
        return tuple(_str(x) for x in a.strings)
    if t == _TENSORS:
        return tuple(tensor_value(x) for x in a.tensors)
    if t == _SPARSE_TENSORS:
        return tuple(sparse_value(x) for x in a.sparse_tensors)
    if t == _GRAPHS:
        return tuple(a.graphs)
    if t == _TYPE_PROTOS:
        return tuple(a.type_protos)
    # UNDEFINED: infer from the populated field, as onnx.helper.get_attribute_value does
    return onnx.helper.get_attribute_value(a)


def parse_attributes(node: onnx.NodeProto) -> dict[str, Any]:
    """All attributes of a node by name."""
    return {a.name: parse_attribute(a) for a in node.attribute}
