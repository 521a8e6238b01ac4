"""Oracle: real transformers models (tiny configs, no download) exported to ONNX, against onnxruntime.

Each model of :data:`hf_models.HF_MODELS` is exported once per session with dynamic batch and
sequence (or image, audio) axes, by the TorchScript exporter (``dynamo=False``) and, for a few, by
the ``torch.export``-based one (``dynamo=True``, torch's default from 2.9; needs ``onnxscript``;
``SYMSHAPE_HF_ALL=1`` exports every model both ways).
symshape infers it with the dynamic axes as symbols; onnxruntime runs it at four or five sizes,
edge ones included (batch 1, sequence 1, the sequence at the position table's limit and beyond
it). At every size where onnxruntime runs, every value's shape (inputs, initializers, every node
output) must be symshape's type with the sizes substituted; ``valid_at`` must be True exactly at
the sizes where onnxruntime runs.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

import onnx
import pytest

import symshape as ss
import symshape.onnx as sso

pytest.importorskip("torch", reason="the exported-model oracle needs torch (CPU)")
pytest.importorskip("transformers", reason="the transformers-model oracle needs transformers")

from hf_models import HF_MODELS, HFSpec, compare, exports_cached

_HAS_ONNXSCRIPT = importlib.util.find_spec("onnxscript") is not None

#: (model, exporter) -> (status, fewest values compared at a size where onnxruntime runs)
EXPECTED: dict[tuple[str, str], tuple[str, int]] = {
    ("gpt2", "ts"): ("guarded", 319),  # seq < 25: wpe has 24 rows
    ("gpt2_kv", "ts"): ("guarded", 331),  # a decoding step: past + seq < 25
    # a decoding step with masks shorter than past + seq as well: total >= past + seq
    ("gpt2_kv_short", "ts"): ("guarded", 331),
    ("bert", "ts"): ("guarded", 219),  # seq <= 20: position_ids[:, :seq] expanded
    ("roberta", "ts"): ("guarded", 222),  # positions cumsum(ids != pad) * (ids != pad) + pad
    ("opt", "ts"): ("guarded", 181),  # positions cumsum(ones) * ones - 1 + 2, in float
    ("distilbert", "ts"): ("guarded", 181),  # seq <= 20
    ("llama", "ts"): ("ok", 349),  # rotary positions, grouped-query attention: no limit
    ("llama_kv", "ts"): ("guarded", 360),  # a decoding step: the mask covers past + seq
    ("qwen2", "ts"): ("ok", 362),  # sliding-window mask, one key-value head
    ("gemma2", "ts"): ("ok", 693),  # sliding-window and global layers, soft-capping
    ("gpt_neox", "ts"): ("ok", 264),  # rotary positions on half of each head
    ("deberta", "ts"): ("guarded", 480),  # disentangled attention, log-bucketed relative positions
    ("clip_text", "ts"): ("guarded", 216),  # pooled at argmax(input_ids == eos): a run-time index
    ("t5", "ts"): ("ok", 551),  # relative position buckets: no limit
    ("bart", "ts"): ("guarded", 513),  # learned positions (offset 2) for both sequences
    ("vit", "ts"): ("guarded", 125),  # (height//8)*(width//8) patches must be 16
    ("vit_interp", "ts"): ("guarded", 178),  # interpolated positions: any image of 8x8 or more
    ("wav2vec2", "ts"): ("guarded", 161),  # three strided convolutions: 40 samples or more
    ("llama", "dynamo"): ("ok", 137),
    ("t5", "dynamo"): ("ok", 248),
    # the dynamo export reads the mask with GatherND at (arange(batch), arange(past + seq)):
    # each index column within its axis, total >= past + seq
    ("gpt2_kv_short", "dynamo"): ("guarded", 128),
}
#: more cases with SYMSHAPE_HF_ALL=1 (a dynamo export costs 5-10 s of CPU: the default run keeps three)
if os.environ.get("SYMSHAPE_HF_ALL") == "1":
    EXPECTED |= {
        ("gpt2", "dynamo"): ("guarded", 113),
        ("gpt2_kv", "dynamo"): ("guarded", 128),
        ("bert", "dynamo"): ("guarded", 103),
        ("roberta", "dynamo"): ("guarded", 109),
        ("opt", "dynamo"): ("guarded", 86),
        ("distilbert", "dynamo"): ("guarded", 96),
        ("qwen2", "dynamo"): ("ok", 147),
        ("bart", "dynamo"): ("guarded", 189),
        ("vit_interp", "dynamo"): ("guarded", 102),
        ("wav2vec2", "dynamo"): ("guarded", 127),
        ("llama_sdpa", "ts"): ("ok", 370),
        ("gemma2", "dynamo"): ("ok", 270),
        ("gpt_neox", "dynamo"): ("ok", 119),
        ("deberta", "dynamo"): ("guarded", 155),
        ("clip_text", "dynamo"): ("guarded", 100),
        ("llama_sdpa", "dynamo"): ("ok", 150),
        # opset 23: Attention, RotaryEmbedding, RMSNormalization; torch 2.13 writes the rotary
        # caches as (1, seq, 4), which onnxruntime accepts at batch 1 only: `batch == 1`
        ("llama_sdpa", "dynamo23"): ("guarded", 92),
    }

_SPECS = {s.name: s for s in HF_MODELS}
_CASES = [pytest.param(_SPECS[m], e, id=f"{m}-{e}") for m, e in EXPECTED]


@pytest.fixture(scope="session")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """``export`` cached for the session: (spec, exporter) -> the path of the ``.onnx`` file."""
    return exports_cached(str(tmp_path_factory.mktemp("hf_onnx")))


def _declared_dims(model: onnx.ModelProto) -> set[str]:
    return {d.dim_param for i in model.graph.input for d in i.type.tensor_type.shape.dim if d.dim_param}


@pytest.mark.parametrize(("spec", "exporter"), _CASES)
def test_hf_model_against_onnxruntime(spec: HFSpec, exporter: str, exported: Any) -> None:
    if exporter.startswith("dynamo") and not _HAS_ONNXSCRIPT:
        pytest.skip("the dynamo exporter needs onnxscript")
    path = exported(spec, exporter)
    model = onnx.load(path)
    del model.graph.value_info[:]  # the exporter's own shape inference is not the oracle
    assert _declared_dims(model) == set(spec.dim_names)  # every dynamic axis stayed dynamic
    syms = {name: ss.dim(name) for name in spec.dim_names}
    res = sso.infer(model, dims=syms)
    status, fewest = EXPECTED[(spec.name, exporter)]
    assert not res.unsupported and not res.errors, res.report()
    assert res.status == status, res.report()
    ran = 0
    for size in spec.sizes:
        o = compare(path, res, syms, spec, size)
        assert not o.mismatches, o.mismatches[:5]
        assert o.valid == o.ran, (dict(size), o.ran, [str(g) for g in res.guards])
        if o.ran:
            ran += 1
            assert o.compared >= fewest, (dict(size), o.compared)
    assert ran >= 2
    # infer_shapes writes the same types as value_info: onnx's checker and its strict shape
    # inference accept them (no conflict with what onnx infers itself)
    annotated = sso.infer_shapes(model)
    onnx.checker.check_model(annotated)
    onnx.shape_inference.infer_shapes(annotated, strict_mode=True)


def test_every_size_set_has_edges() -> None:
    """batch 1 in every model's sizes, and an invalid size beside the valid ones where the model
    has a limit (a guarded one)."""
    for spec in HF_MODELS:
        assert any(s["batch"] == 1 for s in spec.sizes), spec.name
        assert any(s.get("seq", 0) == 1 or "seq" not in s for s in spec.sizes), spec.name
        assert len(spec.sizes) >= 4, spec.name
