"""External data: tensors whose bytes live in a file next to the model, read only when needed.

symshape loads a model file without onnx's walk over every tensor for external data
(``onnx.load(path, load_external_data=False)``: that walk visits every attribute of every node in
Python, most of the time of ``onnx.load`` for a model of a thousand nodes). The importer reads a
tensor's bytes only for the values it keeps (small initializers: reshape targets, slice bounds,
scales), relative to the model's folder (``base_dir``); weights are never read. A model given as
a ``ModelProto`` has no folder (``base_dir`` None): its external tensors are as the caller loaded
them (values unknown when not loaded, as ``onnx`` leaves them).

* :func:`check_file` raises ``SymshapeError`` (``invalid-argument``) when the file of a tensor the
  importer will read is missing (checked once per file, at import, so that the error is the
  caller's exception and not a node's diagnostic);
* :func:`read` decodes an external tensor (``onnx.numpy_helper.to_array``, which checks the
  location stays inside ``base_dir`` and the bytes inside the file), an unreadable one raising
  ``SymshapeError``;
* :func:`inlined` gives a copy of a node whose tensor attributes are external with their bytes
  read (for onnx's reference evaluator, which reads attributes itself).
"""

from __future__ import annotations

import os
from typing import Any, Final

import numpy as np
import onnx

from symshape.errors import INVALID_ARGUMENT, SymshapeError

__all__ = ["check_file", "inlined", "is_external", "location", "read"]

_EXTERNAL: Final = onnx.TensorProto.EXTERNAL
_TENSOR: Final = onnx.AttributeProto.TENSOR
_TENSORS: Final = onnx.AttributeProto.TENSORS


def is_external(t: onnx.TensorProto) -> bool:
    """Whether ``t``'s bytes are stored outside the model."""
    return bool(t.data_location == _EXTERNAL)


def location(t: onnx.TensorProto) -> str:
    """The file of an external tensor, relative to the model's folder ("" when not given)."""
    for e in t.external_data:
        if e.key == "location":
            return str(e.value)
    return ""


def check_file(t: onnx.TensorProto, what: str, base_dir: str, seen: dict[str, bool]) -> None:
    """Raise ``SymshapeError`` when the file of external tensor ``t`` (``what``:
    ``initializer 'shape'``) is not in ``base_dir``; ``seen`` remembers the files checked."""
    loc = location(t)
    ok = seen.get(loc)
    if ok is None:
        ok = seen[loc] = bool(loc) and os.path.isfile(os.path.join(base_dir, loc))
    if not ok:
        where = f"file '{loc}'" if loc else "no file named"
        raise SymshapeError(
            INVALID_ARGUMENT,
            f"the external data of {what} cannot be read: {where} in {base_dir or os.curdir}",
        )


def read(t: onnx.TensorProto, base_dir: str, what: str) -> np.ndarray[Any, Any]:
    """The value of external tensor ``t`` (``what`` names it in an error), read from its file in
    ``base_dir``."""
    from onnx import numpy_helper

    try:
        return np.asarray(numpy_helper.to_array(t, base_dir))
    except Exception as e:  # a missing file, a location outside base_dir, bytes past the end
        msg = " ".join(str(e).split()) or type(e).__name__
        raise SymshapeError(
            INVALID_ARGUMENT, f"the external data of {what} cannot be read ({location(t)}): {msg}"
        ) from None


def inlined(node: onnx.NodeProto, base_dir: str | None) -> onnx.NodeProto:
    """``node``, or when one of its tensor attributes is external and ``base_dir`` is known, a copy
    with those tensors' bytes read into it."""
    if base_dir is None or not any(
        (a.type == _TENSOR and is_external(a.t)) or (a.type == _TENSORS and any(map(is_external, a.tensors)))
        for a in node.attribute
    ):
        return node
    from onnx.external_data_helper import load_external_data_for_tensor

    copy = onnx.NodeProto()
    copy.CopyFrom(node)
    for a in copy.attribute:
        for t in [a.t] if a.type == _TENSOR else list(a.tensors) if a.type == _TENSORS else []:
            if is_external(t):
                load_external_data_for_tensor(t, base_dir)
    return copy
