"""Peers for whole ONNX models: onnx's C++ shape inference and onnxruntime's symbolic one.

Workload (f) times symshape's ``symshape.onnx.infer`` (import and inference) on a model file
against

* ``onnx.shape_inference.infer_shapes(model, data_prop=True)`` -- C++, per-node inference with
  shape-data propagation, no arithmetic on ``dim_param`` s (peer ``onnx``);
* ``onnxruntime.tools.symbolic_shape_infer.SymbolicShapeInference.infer_shapes(model)`` -- Python
  and sympy, symbolic values of shape tensors (peer ``ort-sym``).

Every timing covers loading the model from its file, each as its documentation shows: the peers
with ``onnx.load(path)``, symshape as a user calls it with a path (its loader,
``symshape.onnx.graph.load_model``, reads the file without onnx's walk over every tensor for
external data and reads external bytes only for the values it keeps). That walk is Python and a
large part of ``onnx.load`` for the models here (their weights are ``ConstantOfShape`` nodes: a
thousand tensor attributes in densenet121), so the ``onnx`` peer's note also gives its CPU time
without the walk (``onnx.load(path, load_external_data=False)``, the minimum over its runs: no
light model has external data, so its result is the same), and the CPU time of the C++ inference
alone: ``infer_shapes`` of a ``ModelProto`` serializes it for C++ and parses the inferred model
back, a round trip of the weights' bytes too (4 of its 12 ms on ``transformer12``). The models are
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


#: the least CPU times, by model path, of the ``onnx`` peer's runs without the external-data walk
#: and of its C++ inference alone
_WITHOUT_WALK: dict[str, float] = {}
_CPP_ONLY: dict[str, float] = {}


def onnx_infer(path: str) -> dict[str, Any]:
    """onnx's C++ inference with shape-data propagation (strict: an inconsistency is an error),
    after ``onnx.load(path)``. The load is done in its two steps, the same work as ``onnx.load``
    (parsing the file, then the walk that loads external data: ``load_external_data_for_model``,
    as ``onnx.load`` calls it), and so is the inference (:func:`_infer_shapes`); the type text adds
    the least CPU times of the runs so far without the walk (what
    ``onnx.load(path, load_external_data=False)`` and inference cost) and of the C++ inference
    alone (without the protobuf round trip between Python and C++)."""
    import onnx
    from onnx.external_data_helper import load_external_data_for_model

    try:
        c0 = time.process_time()
        model = onnx.load(path, load_external_data=False)
        c1 = time.process_time()
        load_external_data_for_model(model, os.path.dirname(path))
        c2 = time.process_time()
        out, cpp = _infer_shapes(model)
        c3 = time.process_time()
    except Exception as e:
        return {
            "status": "error",
            "message": str(e).strip().splitlines()[0][:160] if str(e).strip() else "error",
        }
    own = (c1 - c0) + (c3 - c2)
    best = _WITHOUT_WALK[path] = min(own, _WITHOUT_WALK.get(path, own))
    text = f"{_output_text(out)}; CPU without the external-data walk {best * 1e3:.1f} ms"
    if cpp is not None:
        least = _CPP_ONLY[path] = min(cpp, _CPP_ONLY.get(path, cpp))
        text += f", C++ inference alone {least * 1e3:.1f} ms"
    return {"status": "ok", "type": text}


def _infer_shapes(model: Any) -> tuple[Any, float | None]:
    """``onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)`` done in its
    three steps (the model serialized, the C++ inference on the bytes, its result parsed: the same
    work), and the CPU time of the C++ step (None where onnx's C++ module is not where this onnx
    version has it: then the public function, in one step)."""
    import onnx

    try:
        from onnx.onnx_cpp2py_export import shape_inference as cpp
    except ImportError:
        return onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True), None
    data = model.SerializeToString()
    c0 = time.process_time()
    inferred = cpp.infer_shapes(data, False, True, True)  # (check_type, strict_mode, data_prop)
    c1 = time.process_time()
    return onnx.load_from_string(inferred), c1 - c0


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
    """symshape as ``symshape.onnx.infer(path)`` runs it: load (its own loader), then the ground
    walk (:mod:`symshape.onnx.ground`) where it answers, the importer's conversion and inference
    otherwise (``build``: until the result is made; ``solve``: reading the output's type)."""
    from symshape.onnx import _infer_loaded
    from symshape.onnx.graph import load_model

    t0 = time.perf_counter()
    model, _, base_dir = load_model(path)
    res = _infer_loaded(model, os.path.basename(path), base_dir)
    t1 = time.perf_counter()
    out = model.graph.output[0].name
    detail = str(res.type_of(out))
    t2 = time.perf_counter()
    z3 = 0  # (the ground walk calls no solver; asking the result would run the full path)
    if res._ground is not None:
        detail += " (ground walk)"
    else:
        z3 = wl.z3_calls(res) or 0
    return wl.RunResult(len(model.graph.node), t1 - t0, t2 - t1, str(res.status), z3, detail)
