"""The ONNX importer's tests need the ``onnx`` extra (onnx, onnxruntime; the README's test command
installs it); without onnx installed they are not collected, so the rest of the suite runs on a
plain ``.[dev]`` install."""

from __future__ import annotations

import importlib.util

collect_ignore_glob = (
    []
    if importlib.util.find_spec("onnx") is not None and importlib.util.find_spec("onnxruntime") is not None
    else ["test_*.py"]
)
