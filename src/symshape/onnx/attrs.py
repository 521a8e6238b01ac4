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
from collections.abc import Callable
from typing import Any, Final

import numpy as np
import onnx
from onnx import AttributeProto, numpy_helper

from symshape.errors import INVALID_ARGUMENT, SymshapeError
from symshape.onnx.external import read as read_external

__all__ = [
    "parse_attribute",
    "parse_attributes",
    "tensor_value",
    "decoded_dtype",
    "sparse_value",
    "SPARSE_DENSE_MAX",
    "HASHABLE_TYPES",
    "fields_after_op_type",
    "op_type_field",
]

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


def tensor_value(
    t: onnx.TensorProto,
    dims: tuple[int, ...] | None = None,
    base_dir: str | None = None,
    data_type: int | None = None,
    internal: bool = False,
) -> np.ndarray[Any, Any]:
    """A ``TensorProto``'s value as a numpy array; ``dims``, ``data_type``: ``t.dims`` and
    ``t.data_type`` when the caller has read them already, ``internal``: it has read
    ``t.data_location`` and it is not ``EXTERNAL`` (protobuf fields cost an access each).
    External data is read from ``base_dir`` (the model's folder, see
    :mod:`symshape.onnx.external`; None: it must have been loaded).

    The common element types (float32/64, int32/64, uint64) are decoded with numpy directly (the
    array may be read-only); the others by ``onnx.numpy_helper``.

    >>> from onnx import helper
    >>> tensor_value(helper.make_tensor("s", onnx.TensorProto.INT64, [2], [1, -1])).tolist()
    [1, -1]
    """
    et = t.data_type if data_type is None else data_type
    dt = _RAW.get(et)
    if dt is not None and (internal or t.data_location != _TP.EXTERNAL) and not t.HasField("segment"):
        shape = tuple(t.dims[:]) if dims is None else dims
        raw = t.raw_data
        if raw:
            if len(raw) == dt.itemsize * math.prod(shape):
                arr = np.frombuffer(raw, dtype=dt)
                if len(shape) != 1:
                    arr = arr.reshape(shape)
                return arr if dt.isnative else arr.astype(dt.newbyteorder("="), copy=False)
        else:
            data = getattr(t, _FIELD[et])
            if len(data) == math.prod(shape):
                return np.array(data, dtype=dt.newbyteorder("=")).reshape(shape)
    elif base_dir is not None and not internal and t.data_location == _TP.EXTERNAL:
        return read_external(t, base_dir, f"tensor '{t.name}'")
    return np.asarray(numpy_helper.to_array(t))


#: the dtype names of the arrays :func:`tensor_value` decodes itself, by element type
_RAW_NAMES: Final[dict[int, str]] = {et: dt.newbyteorder("=").name for et, dt in _RAW.items()}


def decoded_dtype(t: onnx.TensorProto) -> str | None:
    """The dtype name of ``tensor_value(t)``'s array, read from ``t``'s fields without decoding
    it, where :func:`tensor_value` decodes ``t`` itself (an element type it reads directly,
    stored in the model, its data of the length its dimensions give); None otherwise (decode
    ``t`` to know: it may fail).

    >>> from onnx import helper
    >>> decoded_dtype(helper.make_tensor("v", onnx.TensorProto.FLOAT, [1], [0.5]))
    'float32'
    """
    et = t.data_type
    name = _RAW_NAMES.get(et)
    if name is None or t.data_location == _TP.EXTERNAL or t.HasField("segment"):
        return None
    n = 1
    for d in t.dims:
        if d < 0:
            return None
        n *= d
    raw = t.raw_data
    if raw:
        return name if len(raw) == _RAW[et].itemsize * n else None
    return name if len(getattr(t, _FIELD[et])) == n else None


def sparse_value(t: onnx.SparseTensorProto, base_dir: str | None = None) -> np.ndarray[Any, Any]:
    """A ``SparseTensorProto`` as a dense numpy array (linear or coordinate indices). A malformed
    one (a negative dimension, values or indices that cannot be read, indices out of range or not
    one per value; more than :data:`SPARSE_DENSE_MAX` elements) is a ``SymshapeError``
    (``invalid-argument``)."""
    dense_shape = tuple(int(d) for d in t.dims)
    where = f"sparse initializer '{t.values.name}'"
    if any(d < 0 for d in dense_shape):
        raise SymshapeError(INVALID_ARGUMENT, f"{where}: dims {list(dense_shape)} has a negative entry")
    try:
        values = tensor_value(t.values, base_dir=base_dir)
        idx = tensor_value(t.indices, base_dir=base_dir)
    except SymshapeError:
        raise
    except Exception as e:  # an undefined data type, data disagreeing with its dims
        raise SymshapeError(INVALID_ARGUMENT, f"{where} cannot be read: {type(e).__name__}: {e}") from None
    nnz = values.size
    if idx.dtype.kind not in "iu" or values.ndim != 1:
        raise SymshapeError(INVALID_ARGUMENT, f"{where}: values must be 1-D and indices integers")
    idx = idx.astype(np.int64)
    if math.prod(dense_shape) > SPARSE_DENSE_MAX:  # (checked before the dense array is made)
        raise SymshapeError(
            INVALID_ARGUMENT, f"{where}: dims {list(dense_shape)} are too large to make dense"
        )
    out = np.zeros(dense_shape, dtype=values.dtype)
    if idx.shape == (nnz,):
        high: Any = math.prod(dense_shape)
        flat = True
    elif idx.shape == (nnz, len(dense_shape)):
        high = np.array(dense_shape, dtype=np.int64)
        flat = False
    else:
        raise SymshapeError(
            INVALID_ARGUMENT,
            f"{where}: indices of shape {list(idx.shape)} are not one per value ({nnz}) of a "
            f"rank-{len(dense_shape)} tensor",
        )
    if nnz and bool(((idx < 0) | (idx >= high)).any()):
        raise SymshapeError(
            INVALID_ARGUMENT, f"{where}: an index is out of range of dims {list(dense_shape)}"
        )
    if flat:
        out.reshape(-1)[idx] = values
    else:
        out[tuple(idx.T)] = values
    return out


#: the most elements a sparse initializer is made dense for (a larger one is a value of its type)
SPARSE_DENSE_MAX: Final = 1 << 24


#: the attribute types whose values hash (numbers, strings and tuples of them; a float hashes by
#: its value, so ``0.0`` and ``-0.0`` are one key)
HASHABLE_TYPES: Final = frozenset(
    int(t) for t in (_T.INT, _T.FLOAT, _T.STRING, _T.INTS, _T.FLOATS, _T.STRINGS)
)
_T_INT: Final = int(_T.INT)
_T_INTS: Final = int(_T.INTS)
#: how each attribute type's value is read (INT and INTS, the most common, are tested first)
_READERS: Final[dict[int, Callable[[AttributeProto], Any]]] = {
    int(_T.FLOAT): lambda a: float(a.f),
    int(_T.STRING): lambda a: _str(a.s),
    int(_T.TENSOR): lambda a: tensor_value(a.t),
    int(_T.SPARSE_TENSOR): lambda a: sparse_value(a.sparse_tensor),
    int(_T.GRAPH): lambda a: a.g,
    int(_T.TYPE_PROTO): lambda a: a.tp,
    int(_T.FLOATS): lambda a: tuple(float(x) for x in a.floats),
    int(_T.STRINGS): lambda a: tuple(_str(x) for x in a.strings),
    int(_T.TENSORS): lambda a: tuple(tensor_value(x) for x in a.tensors),
    int(_T.SPARSE_TENSORS): lambda a: tuple(sparse_value(x) for x in a.sparse_tensors),
    int(_T.GRAPHS): lambda a: tuple(a.graphs),
    int(_T.TYPE_PROTOS): lambda a: tuple(a.type_protos),
}
#: the attribute types holding tensors, read with the model's folder for external data
_TENSOR_READERS: Final[dict[int, Callable[[AttributeProto, str], Any]]] = {
    int(_T.TENSOR): lambda a, d: tensor_value(a.t, base_dir=d),
    int(_T.SPARSE_TENSOR): lambda a, d: sparse_value(a.sparse_tensor, d),
    int(_T.TENSORS): lambda a, d: tuple(tensor_value(x, base_dir=d) for x in a.tensors),
    int(_T.SPARSE_TENSORS): lambda a, d: tuple(sparse_value(x, d) for x in a.sparse_tensors),
}
_TENSOR_TYPES: Final = frozenset(_TENSOR_READERS)


def parse_attribute(a: AttributeProto, base_dir: str | None = None, t: int | None = None) -> Any:
    """The Python value of one attribute (see the module docstring); external tensors are read
    from ``base_dir`` (see :func:`tensor_value`); ``t``: ``a.type`` when the caller has read it
    already (protobuf fields cost an access each)."""
    if t is None:
        t = a.type
    if t == _T_INTS:
        return tuple(a.ints[:])  # (a slice: iterating a repeated field ends in a costly IndexError)
    if t == _T_INT:
        return a.i
    if base_dir is not None and t in _TENSOR_TYPES:
        return _TENSOR_READERS[t](a, base_dir)
    read = _READERS.get(t)
    if read is not None:
        return read(a)
    # UNDEFINED: infer from the populated field, as onnx.helper.get_attribute_value does
    return onnx.helper.get_attribute_value(a)


def parse_attributes(node: onnx.NodeProto, base_dir: str | None = None) -> dict[str, Any]:
    """All attributes of a node by name."""
    return {a.name: parse_attribute(a, base_dir) for a in node.attribute}


def fields_after_op_type(b: bytes, op_type: str = "") -> bytes | None:
    """The fields of a serialized ``NodeProto`` (``b``) after its operator type: its attributes,
    then its ``doc_string``, ``domain``, ... where set. Protobuf writes a message's fields in the
    order of their numbers (inputs, outputs, name, operator type, attributes, ...), so equal bytes
    are equal attributes: a key of what follows from a node's attributes, without reading them.
    None when a length takes more than one byte (a name of 128 bytes or more: the caller reads
    the attributes).

    ``op_type``, when given, is the node's operator type: where its field's bytes occur once in
    ``b`` (as a rule), they are that field, and the rest follows them (found without a Python
    loop over the head's fields; a long name then does not matter)."""
    if op_type:
        field = _OP_FIELDS.get(op_type)
        if field is None:
            field = _OP_FIELDS[op_type] = op_type_field(op_type)
        if field:
            _, found, rest = b.partition(field)  # (its first byte occurs once in it: no overlaps)
            if found and field not in rest:
                return rest
    pos, n = 0, len(b)
    while pos < n and b[pos] in _HEAD_TAGS:
        size = b[pos + 1]
        if size > 127:
            return None
        pos += 2 + size
    return b[pos:]


def op_type_field(op_type: str) -> bytes:
    """The bytes of a ``NodeProto``'s operator type field holding ``op_type``: its tag, length and
    text (empty when the length takes more than one byte, the tag's byte occurs again in it, or
    protobuf does not write the attributes after the field)."""
    raw = op_type.encode()
    if not raw or len(raw) > 127 or not _ATTRIBUTES_AFTER_OP_TYPE:
        return b""
    field = bytes((_OP_TYPE_TAG, len(raw))) + raw
    return b"" if _OP_TYPE_TAG in field[1:] else field


#: the operator type fields by operator type (a model has few)
_OP_FIELDS: Final[dict[str, bytes]] = {}
_OP_TYPE_TAG: Final = (4 << 3) | 2


def _attributes_follow_op_type() -> bool:
    """Whether protobuf writes a node's attributes after its operator type (in field order, as
    the key of :func:`fields_after_op_type` needs): checked once, on a node of every field."""
    n = onnx.helper.make_node("Op", ["x"], ["y"], name="n", doc_string="d", domain="d", axis=3)
    b: bytes = n.SerializeToString()
    attr: bytes = n.attribute[0].SerializeToString()
    return b.find(bytes((_OP_TYPE_TAG, 2)) + b"Op") < b.find(attr)


_ATTRIBUTES_AFTER_OP_TYPE: Final = _attributes_follow_op_type()
#: the tags (field number and wire type: length-delimited) of a ``NodeProto``'s input, output,
#: name and op_type
_HEAD_TAGS: Final = frozenset({(1 << 3) | 2, (2 << 3) | 2, (3 << 3) | 2, (4 << 3) | 2})
