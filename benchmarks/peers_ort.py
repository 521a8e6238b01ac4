"""Peers for whole ONNX models: onnx's C++ shape inference and onnxruntime's symbolic one.

Workload (f) times symshape's ``symshape.onnx.infer`` (import and inference) on a model file
against

* ``onnx.shape_inference.infer_shapes(model, data_prop=True)`` -- C++, per-node inference with
  shape-data propagation, no arithmetic on ``dim_param`` s (peer ``onnx``);
* ``onnxruntime.tools.symbolic_shape_infer.SymbolicShapeInference.infer_shapes(model)`` -- Python
  and sympy, symbolic values of shape tensors (peer ``ort-sym``).

Every timing covers loading the model from its file, so the three do the same work. The models are
the ``light_*`` models in onnx's wheel (``onnx/backend/test/data/light``); ``--quick`` runs
squeezenet only.
"""

from __future__ import annotations

import contextlib
import glob
import os
import tempfile
import time
from collections.abc import Iterator
from typing import Any

from benchmarks import workloads as wl

__all__ = ["NAME", "version", "light_models", "node_count", "onnx_infer", "ort_infer", "symshape_infer"]

NAME = "ort-sym"


def version() -> str | None:
    """The installed onnxruntime's version when its symbolic shape inference imports."""
    try:
        import onnxruntime
        from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference  # noqa: F401
    except Exception:
        return None
    return str(onnxruntime.__version__)


def light_models() -> list[str]:
    """The paths of the light models in the installed onnx wheel, sorted (empty without onnx)."""
    try:
        import onnx
    except Exception:
        return []
    light = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
    return sorted(glob.glob(os.path.join(light, "light_*.onnx")))


def node_count(path: str) -> int:
    import onnx

    return len(onnx.load(path).graph.node)


def _output_text(model: Any) -> str:
    t = model.graph.output[0].type.tensor_type
    if not t.HasField("shape"):
        return "?"
    dims = [d.dim_param or (str(d.dim_value) if d.HasField("dim_value") else "?") for d in t.shape.dim]
    return f"({', '.join(dims)})"


def onnx_infer(path: str) -> dict[str, Any]:
    """onnx's C++ inference with shape-data propagation (strict: an inconsistency is an error)."""
    import onnx

    try:
        model = onnx.load(path)
        out = onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
    except Exception as e:
        return {
            "status": "error",
            "message": str(e).strip().splitlines()[0][:160] if str(e).strip() else "error",
        }
    return {"status": "ok", "type": _output_text(out)}


def ort_infer(path: str) -> dict[str, Any]:
    """onnxruntime's ``SymbolicShapeInference`` (no automatic merging of unknowns)."""
    import onnx
    from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference

    try:
        model = onnx.load(path)
        with _scratch_cwd():  # on failure it writes sym_shape_infer_temp.onnx into the cwd
            out = SymbolicShapeInference.infer_shapes(model)
    except Exception as e:
        return {
            "status": "error",
            "message": str(e).strip().splitlines()[0][:160] if str(e).strip() else "error",
        }
    if out is None:
        return {"status": "error", "message": "incomplete symbolic shape inference"}
    return {"status": "ok", "type": _output_text(out)}


@contextlib.contextmanager
def _scratch_cwd() -> Iterator[None]:
    """Run in a temporary working directory (removed afterwards)."""
    old = os.getcwd()
    with tempfile.TemporaryDirectory() as d:
        os.chdir(d)
        try:
            yield
        finally:
            os.chdir(old)


def symshape_infer(path: str) -> wl.RunResult:
    """symshape: load and convert (build), infer (solve)."""
    import onnx

    import symshape as ss
    from symshape.onnx.importer import Importer

    t0 = time.perf_counter()
    model = onnx.load(path)
    imp = Importer(model, os.path.basename(path))
    fn = imp.run()
    t1 = time.perf_counter()
    res = ss.infer(fn)
    t2 = time.perf_counter()
    status = "error" if imp.issues else str(res.status)
    out = model.graph.output[0].name
    detail = str(res.type_of(imp.named[out].expr)) if out in imp.named else ""
    return wl.RunResult(len(model.graph.node), t1 - t0, t2 - t1, status, wl.z3_calls(res), detail)
