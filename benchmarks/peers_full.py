"""A reference for workload (f), not a peer: symshape's full path on the same model file.

``symshape.onnx.infer`` answers a model the ground walk can type (:mod:`symshape.onnx.ground`:
every size a constant, or symbols no rule needs a condition on) from that walk, and builds the
program and runs inference only when asked for more. ``full_infer(path)`` times what the walk
replaces: the importer converting the model into a program and symshape's inference on it
(``symshape.onnx._infer_full``, the path of every model the walk does not answer), so that the
table keeps showing what that path costs.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["NAME", "version", "full_infer"]

NAME = "ss-full"


def version() -> str | None:
    """symshape's version where ``symshape.onnx`` imports."""
    try:
        import symshape
        import symshape.onnx
    except Exception:
        return None
    return f"symshape {symshape.__version__} full path"


def full_infer(path: str) -> dict[str, Any]:
    """Load ``path`` with symshape's loader, convert it and infer (the full path)."""
    from symshape.onnx import _infer_full
    from symshape.onnx.loading import load_model

    model, _, base_dir = load_model(path)
    res = _infer_full(model, os.path.basename(path), base_dir, None, False, 2000)
    out = model.graph.output[0].name
    return {"status": str(res.status), "type": str(res.type_of(out))}
