"""Reading an ONNX model for the importer: a ``ModelProto`` as given, or a file without its external
data, parsed from a memory map of the file.

* :func:`load_model` gives the model, its label for reports and the folder its external data is
  read from (see :mod:`symshape.onnx.external`); a missing or unparsable file is a
  ``SymshapeError`` (``invalid-argument``).
* :func:`read_model_file` parses a file as ``onnx.load(path, load_external_data=False)`` does, its
  errors those of ``open`` and protobuf (the CLI words them itself).

A binary model (``.onnx``, ``.pb`` or an extension ``onnx`` does not know) of 1 MiB or more is
parsed from a read-only memory map of the file: protobuf copies what it keeps (the tensors' bytes
too) into the message, so the map is closed before the model is returned, and the parse skips the
copy of the whole file that ``f.read()`` makes (half the time of loading a model of 10 MB of
weights). A smaller
file, a file that is not a regular one (a pipe) or a platform without ``mmap`` is read with
``f.read()``; a text format (``.onnxtxt``, ``.textproto``, ``.json``) is left to ``onnx.load``.
(As with any map, a file truncated by another process during the parse, a millisecond, would
fault.)
"""

from __future__ import annotations

import os
import stat
from typing import Any, Final

import onnx

from symshape.errors import INVALID_ARGUMENT, SymshapeError

__all__ = ["load_model", "read_model_file"]


def load_model(model_or_path: Any) -> tuple[onnx.ModelProto, str, str | None]:
    """The model, its label (the path as given, or the graph's name) and the folder its external
    data is read from: a file's folder (the model is loaded without its external data, which the
    importer reads for the tensors whose values it keeps, see :mod:`symshape.onnx.external`), None
    for a ``ModelProto`` (used as the caller loaded it)."""
    if isinstance(model_or_path, onnx.ModelProto):
        name = model_or_path.graph.name or "onnx"
        return model_or_path, name, None
    if isinstance(model_or_path, (str, bytes)) or hasattr(model_or_path, "__fspath__"):
        path = model_or_path.decode() if isinstance(model_or_path, bytes) else str(model_or_path)
        try:
            model = read_model_file(path)
        except FileNotFoundError:
            raise SymshapeError(INVALID_ARGUMENT, f"no such ONNX file: {path}") from None
        except Exception as e:  # protobuf's DecodeError and friends
            raise SymshapeError(INVALID_ARGUMENT, f"{path} is not an ONNX model: {e}") from None
        return model, path, os.path.dirname(os.path.abspath(path))
    raise SymshapeError(
        INVALID_ARGUMENT,
        f"expected an onnx.ModelProto or a path, got {type(model_or_path).__name__}",
    )


def read_model_file(path: str) -> onnx.ModelProto:
    """The model in file ``path`` without its external data: what
    ``onnx.load(path, load_external_data=False)`` gives, with its exceptions."""
    ext = os.path.splitext(path)[1]
    if onnx.serialization.registry.get_format_from_file_extension(ext) not in (None, "protobuf"):
        return onnx.load(path, load_external_data=False)
    model = onnx.ModelProto()
    with open(path, "rb") as f:
        mapped = _map(f.fileno())
        if mapped is None:
            data = f.read()
            size, used = len(data), model.ParseFromString(data)
        else:
            with mapped, memoryview(mapped) as view:  # (the view is released before the map closes)
                size, used = len(view), model.ParseFromString(view)
    if used is not None and used != size:  # (onnx's check)
        from google.protobuf.message import DecodeError  # type: ignore[import-untyped]

        raise DecodeError(f"Protobuf decoding consumed too few bytes: {used} out of {size}")
    return model


#: the size from which a file is mapped (below, the calls of the map cost more than the copy saved:
#: 17 us against 0.09 ms per MB)
_MAP_FROM: Final = 1 << 20


def _map(fd: int) -> Any:
    """A read-only memory map of the regular file ``fd`` of at least :data:`_MAP_FROM` bytes (an
    ``mmap.mmap``), or None (a small file, a pipe: an empty file cannot be mapped, a pipe neither)."""
    try:
        import mmap
    except ImportError:  # (a platform without it)
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size < _MAP_FROM:
            return None
        return mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError, OverflowError):  # (a file system that cannot map it)
        return None
