"""ONNX element types and symshape dtypes.

symshape's dtype catalogue covers the numeric and boolean ONNX types. The others (``string``, the
``float8``/``float4``/``float6`` and ``int4``/``int2`` families) have no symshape dtype yet: values of
those types get an unknown dtype (``?``), their shapes are still inferred.

>>> to_dtype(1), to_dtype(7), to_dtype(8)
('float32', 'int64', None)
>>> to_elem_type("float64")
11
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "ONNX_TO_DTYPE",
    "DTYPE_TO_ONNX",
    "DTYPES",
    "to_dtype",
    "to_elem_type",
    "elem_type_name",
    "INT_DTYPES",
]

# TensorProto.DataType values (stable protocol numbers)
ONNX_TO_DTYPE: Final[dict[int, str]] = {
    1: "float32",
    2: "uint8",
    3: "int8",
    4: "uint16",
    5: "int16",
    6: "int32",
    7: "int64",
    9: "bool",
    10: "float16",
    11: "float64",
    12: "uint32",
    13: "uint64",
    14: "complex64",
    15: "complex128",
    16: "bfloat16",
}
DTYPE_TO_ONNX: Final[dict[str, int]] = {v: k for k, v in ONNX_TO_DTYPE.items()}
#: the dtypes ONNX and symshape share
DTYPES: Final = frozenset(ONNX_TO_DTYPE.values())
INT_DTYPES: Final = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})

_NAMES: Final[dict[int, str]] = {
    0: "undefined", 8: "string", 17: "float8e4m3fn", 18: "float8e4m3fnuz", 19: "float8e5m2",
    20: "float8e5m2fnuz", 21: "uint4", 22: "int4", 23: "float4e2m1", 24: "float8e8m0", 25: "uint2",
    26: "int2", 27: "float6e2m3", 28: "float6e3m2",
}  # fmt: skip


def to_dtype(elem_type: int) -> str | None:
    """The symshape dtype of an ONNX element type; None when symshape has none."""
    return ONNX_TO_DTYPE.get(int(elem_type))


def to_elem_type(dtype: object) -> int:
    """The ONNX element type of a symshape dtype; 0 (undefined) when unknown."""
    return DTYPE_TO_ONNX.get(dtype, 0) if isinstance(dtype, str) else 0


def elem_type_name(elem_type: int) -> str:
    """A readable name of an ONNX element type (``float32``, ``string``, ``float8e4m3fn``)."""
    return ONNX_TO_DTYPE.get(int(elem_type)) or _NAMES.get(int(elem_type), f"type {elem_type}")
