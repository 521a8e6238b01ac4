"""The benchmark peer for whole ONNX models (benchmarks/peers_ort.py) and workload (f).

No timings are asserted (benchmarks, never timed tests): the three infer the same output shape.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # benchmarks/ is a top-level package of the repository
    sys.path.insert(0, str(ROOT))

from benchmarks import peers_ort, run  # noqa: E402


def test_light_models_and_peers() -> None:
    paths = peers_ort.light_models()
    assert len(paths) == 9
    resnet = next(p for p in paths if "resnet50" in p)
    r = peers_ort.symshape_infer(resnet)
    assert (
        r.status == "ok"
        and r.detail == "Tensor[(1, 1000), float32]"
        and r.ops == peers_ort.node_count(resnet)
    )
    assert peers_ort.onnx_infer(resnet) == {"status": "ok", "type": "(1, 1000)"}
    assert peers_ort.ort_infer(resnet) == {"status": "ok", "type": "(1, 1000)"}
    squeeze = next(p for p in paths if "squeezenet" in p)
    assert peers_ort.ort_infer(squeeze)["status"] == "error"  # onnxruntime gives up on Dropout-9


def test_workload_f_rows() -> None:
    assert peers_ort.version()
    quick = [c for c in run.cases(quick=True) if c.workload.startswith("(f)")]
    assert [c.workload for c in quick] == ["(f) onnx squeezenet"]
    full = [c for c in run.cases(quick=False) if c.workload.startswith("(f)")]
    assert len(full) == 9 and all(set(c.peers) == {"onnx", "ort-sym"} for c in full)
