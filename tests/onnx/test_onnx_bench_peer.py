"""The benchmark peer for whole ONNX models (benchmarks/peers_ort.py) and workload (f).

No timings are asserted (benchmarks, never timed tests): the three infer the same output shape.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # benchmarks/ is a top-level package of the repository
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from benchmarks import onnx_transformer, peers_floor, peers_full, peers_ort, run  # noqa: E402
from torch_models import run_all_values  # noqa: E402

import symshape as ss  # noqa: E402
import symshape.onnx as sso  # noqa: E402


def test_light_models_and_peers() -> None:
    paths = peers_ort.light_models()
    assert len(paths) == 9
    resnet = next(p for p in paths if "resnet50" in p)
    r = peers_ort.symshape_infer(resnet)
    assert (
        r.status == "ok"
        and r.detail == "Tensor[(1, 1000), float32] (ground walk)"
        and r.ops == peers_ort.node_count(resnet)
    )
    # the full path, the reference beside it, gives the same type
    assert peers_full.full_infer(resnet) == {"status": "ok", "type": "Tensor[(1, 1000), float32]"}
    onnx_r = peers_ort.onnx_infer(resnet)  # (the type text adds its CPU time without the walk)
    assert onnx_r["status"] == "ok" and onnx_r["type"].split(";")[0] == "(1, 1000)"
    assert peers_ort.ort_infer(resnet) == {"status": "ok", "type": "(1, 1000)"}
    # the floor reads every node's fields: as many op types as nodes, attributes included
    floor = peers_floor.read_floor(resnet)
    assert floor["status"] == "ok" and int(floor["type"].split()[0]) > 4 * peers_ort.node_count(resnet)
    squeeze = next(p for p in paths if "squeezenet" in p)
    assert peers_ort.ort_infer(squeeze)["status"] == "error"  # onnxruntime gives up on Dropout-9


def test_workload_f_rows() -> None:
    assert peers_ort.version()
    quick = [c for c in run.cases(quick=True) if c.workload.startswith("(f)")]
    assert [c.workload for c in quick] == ["(f) onnx squeezenet"]
    full = [c for c in run.cases(quick=False) if c.workload.startswith("(f)")]
    assert len(full) == 10 and all(set(c.peers) == {"onnx", "ort-sym", "read-floor", "ss-full"} for c in full)
    assert full[-1].workload == "(f) onnx transformer12" and full[-1].size == 417


@pytest.fixture(scope="module")
def encoder() -> object:
    return onnx_transformer.build(layers=2, hidden=32, heads=4, ffn=64, vocab=50, max_pos=16)


def test_transformer_infers_ok_with_batch_and_seq(encoder: object) -> None:
    res = sso.infer(encoder)
    assert res.status == "ok", res.report()
    assert str(res.type_of("last_hidden_state")) == "Tensor[(batch, seq, 32), float32]"
    assert str(res.type_of("layer.1.attention/scores")) == "Tensor[(batch, 4, seq, seq), float32]"
    assert str(res.type_of("mask/bias")) == "Tensor[(batch, 1, 1, seq), float32]"


@pytest.mark.parametrize(("batch", "seq"), [(1, 1), (2, 5), (3, 16)])
def test_transformer_every_value_matches_onnxruntime(encoder: object, batch: int, seq: int) -> None:
    res = sso.infer(encoder)
    sub = {"batch": batch, "seq": seq}
    ids = np.zeros((batch, seq), np.int64)
    actual = run_all_values(encoder, {"input_ids": ids, "position_ids": ids, "attention_mask": ids})
    types = res.types()
    for name, shape in actual.items():
        t = types[name]
        assert isinstance(t, ss.TensorType) and t.dims is not None
        assert tuple(int(d.subs(sub)) for d in t.dims) == shape, name
    assert len(actual) > 70


def test_transformer_peers_agree() -> None:
    path = onnx_transformer.path(layers=2)
    assert peers_ort.symshape_infer(path).detail == "Tensor[(batch, seq, 128), float32] (ground walk)"
    assert peers_full.full_infer(path)["type"] == "Tensor[(batch, seq, 128), float32]"
    onnx_r = peers_ort.onnx_infer(path)
    assert onnx_r["status"] == "ok" and onnx_r["type"].split(";")[0] == "(batch, seq, 128)"
    assert peers_ort.ort_infer(path) == {"status": "ok", "type": "(batch, seq, 128)"}
