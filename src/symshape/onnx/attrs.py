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

from typing import Any

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


def tensor_value(t: onnx.TensorProto) -> np.ndarray[Any, Any]:
    """A ``TensorProto``'s value as a numpy array (external data must have been loaded)."""
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


def parse_attribute(a: AttributeProto) -> Any:
    """The Python value of one attribute (see the module docstring)."""
    t = a.type
    if t == _T.FLOAT:
        return float(a.f)
    if t == _T.INT:
        return int(a.i)
    if t == _T.STRING:
        return _str(a.s)
    if t == _T.TENSOR:
        return tensor_value(a.t)
    if t == _T.SPARSE_TENSOR:
        return sparse_value(a.sparse_tensor)
    if t == _T.GRAPH:
        return a.g
    if t == _T.TYPE_PROTO:
        return a.tp
    if t == _T.FLOATS:
        return tuple(float(x) for x in a.floats)
    if t == _T.INTS:
        return tuple(int(x) for x in a.ints)
    if t == _T.STRINGS:
        return tuple(_str(x) for x in a.strings)
    if t == _T.TENSORS:
        return tuple(tensor_value(x) for x in a.tensors)
    if t == _T.SPARSE_TENSORS:
        return tuple(sparse_value(x) for x in a.sparse_tensors)
    if t == _T.GRAPHS:
        return tuple(a.graphs)
    if t == _T.TYPE_PROTOS:
        return tuple(a.type_protos)
    # UNDEFINED: infer from the populated field, as onnx.helper.get_attribute_value does
    return onnx.helper.get_attribute_value(a)


def parse_attributes(node: onnx.NodeProto) -> dict[str, Any]:
    """All attributes of a node by name."""
    return {a.name: parse_attribute(a) for a in node.attribute}
