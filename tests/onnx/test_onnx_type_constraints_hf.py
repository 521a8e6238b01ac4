"""Type constraints on a real export: transformers' T5 by the TorchScript exporter at opsets 11-14.

T5's relative position buckets take ``torch.min`` of int64 tensors, exported as ONNX ``Min`` on
int64: integers are allowed from ``Min``-12 on, so onnxruntime refuses the opset-11 model at load
(at every size) and loads the others. symshape must agree: a ``dtype-mismatch`` error naming a
``Min`` node at opset 11 (``valid_at`` False everywhere), none at 13 and 14.
"""

from __future__ import annotations

from typing import Any

import pytest

import symshape as ss
import symshape.onnx as sso
from symshape.onnx.spans import OnnxSpan

pytest.importorskip("torch", reason="the export needs torch (CPU)")
pytest.importorskip("transformers", reason="the export needs transformers")
ort = pytest.importorskip("onnxruntime")

from hf_models import export, spec_named  # noqa: E402


def _ort_loads(path: str) -> bool:
    try:
        ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    except Exception as e:  # (onnxruntime's exception types vary by version)
        assert "Type" in str(e), str(e)[:300]
        return False
    return True


@pytest.mark.parametrize("opset", [11, 13, 14])
def test_t5_min_on_int64_follows_the_opset(opset: int, tmp_path_factory: Any) -> None:
    spec = spec_named("t5")
    path = export(spec, str(tmp_path_factory.mktemp(f"t5_{opset}")), dynamo=False, opset=opset)
    loads = _ort_loads(path)
    assert loads is (opset >= 12)
    syms = {n: ss.dim(n) for n in spec.dim_names}
    res = sso.infer(path, dims=syms)
    mismatches = [d for d in res.errors if d.code == "dtype-mismatch"]
    size = {syms[k]: v for k, v in spec.sizes[0].items()}
    assert res.valid_at(size) is loads, res.report()
    if loads:
        assert not mismatches, res.report()
        return
    assert mismatches, res.report()
    for d in mismatches:
        assert isinstance(d.span, OnnxSpan) and "(Min)" in d.span.what, d
        assert "int64" in d.message and "Min-8 allows T in {float16, float32, float64}" in d.message
