"""Dtype spellings: symshape's strings (``"float32"``), numpy's (``np.float32``,
``np.dtype("float32")``) and torch's (``torch.float32``), read without importing numpy or torch.

>>> dtype_name("float32")
'float32'
>>> import numpy as np
>>> dtype_name(np.float32), dtype_name(np.dtype("int64")), dtype_name(np.bool_)
('float32', 'int64', 'bool')
"""

from __future__ import annotations

from symshape.errors import BAD_DTYPE, SymshapeError

__all__ = ["KNOWN_DTYPES", "dtype_name"]

KNOWN_DTYPES: frozenset[str] = frozenset(
    "bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 bfloat16 float32 float64 "
    "complex64 complex128".split()
)

# torch's other names for the same dtypes (``torch.float`` is ``torch.float32``: str gives the
# canonical name, but ``torch.half`` and friends are listed for safety)
_ALIASES = {
    "half": "float16",
    "float": "float32",
    "double": "float64",
    "short": "int16",
    "int": "int32",
    "long": "int64",
    "bool_": "bool",
    "cfloat": "complex64",
    "cdouble": "complex128",
}


def _known_list() -> str:
    return ", ".join(sorted(KNOWN_DTYPES))


def dtype_name(dtype: object) -> str:
    """The dtype string of ``dtype``: a string as it is (checked), a numpy dtype or scalar type
    (``np.float32``, ``np.dtype("float32")``), or a torch dtype (``torch.float32``, recognised by
    its type's module and name, so torch is never imported). Anything else is ``bad-dtype``."""
    if isinstance(dtype, str):
        if dtype in KNOWN_DTYPES:
            return dtype
        raise SymshapeError(BAD_DTYPE, f"unknown dtype {dtype!r}; known: {_known_list()}")
    cls = type(dtype)
    mod = getattr(cls, "__module__", "") or ""
    if mod.split(".")[0] == "torch" and cls.__name__ == "dtype":
        # str(torch.float32) == "torch.float32"
        name = str(dtype).rpartition(".")[2]
        name = _ALIASES.get(name, name)
        if name in KNOWN_DTYPES:
            return name
        raise SymshapeError(
            BAD_DTYPE, f"the torch dtype {dtype} has no symshape dtype; known: {_known_list()}"
        )
    if mod.split(".")[0] == "numpy":
        # a numpy dtype object (np.dtype("float32"), np.dtypes.Float32DType())
        np_name = getattr(dtype, "name", None)
        if isinstance(np_name, str) and np_name in KNOWN_DTYPES:
            return np_name
    if isinstance(dtype, type) and (getattr(dtype, "__module__", "") or "").split(".")[0] == "numpy":
        # a numpy scalar type (np.float32, np.bool_): its dtype's name
        try:
            import numpy as np

            name = np.dtype(dtype).name
        except (ImportError, TypeError):  # pragma: no cover
            name = ""
        if name in KNOWN_DTYPES:
            return name
    raise SymshapeError(
        BAD_DTYPE,
        f"unknown dtype {dtype!r} ({cls.__name__}); give a dtype string, a numpy dtype or a torch "
        f"dtype; known: {_known_list()}",
    )
