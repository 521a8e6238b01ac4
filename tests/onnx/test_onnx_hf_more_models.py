"""Oracle: more transformers architectures (:data:`hf_more_models.MORE_MODELS`), exported with
dynamic axes, against onnxruntime — as :mod:`test_onnx_hf_models` does for the first set.

For every model: symshape infers it with the dynamic axes as symbols (no error, no unsupported op,
the expected status); at every size where onnxruntime runs, every value's shape (inputs,
initializers, every node output made a graph output) is symshape's type with the sizes
substituted; ``valid_at`` is True exactly where onnxruntime runs (each model's sizes sit on both
sides of its guards, so every guard is checked as a true constraint); ``infer_shapes`` writes a
model that onnx's checker accepts with ``full_check=True`` (its strict shape inference included).
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

from hf_models import HFSpec, compare, export, exports_cached
from hf_more_models import more_spec
from torch_models import run_all_values

_HAS_ONNXSCRIPT = importlib.util.find_spec("onnxscript") is not None

#: (model, exporter) -> (status, number of guards, fewest values compared at a size that runs);
#: the guards as symshape states them in the comments
EXPECTED: dict[tuple[str, str], tuple[str, int, int]] = {
    # (frames - 1)//2 == 0 or (frames - 1)//2 == 11; dec < 17
    ("whisper", "ts"): ("guarded", 2, 364),
    ("speech2text", "ts"): ("guarded", 2, 647),  # dec < 21; (frames - 1)//4 < 64
    ("hubert", "ts"): ("guarded", 1, 149),  # samples >= 20
    ("mistral", "ts"): ("ok", 0, 356),
    # batch*total + past + seq - total - 1 < batch*total (the flattened mask read at row*total+col)
    ("mistral_kv", "ts"): ("guarded", 1, 367),
    ("phi", "ts"): ("ok", 0, 270),
    ("phi3", "ts"): ("ok", 0, 401),
    ("falcon", "ts"): ("ok", 0, 255),
    ("bloom", "ts"): ("ok", 0, 259),
    ("gptj", "ts"): ("guarded", 1, 285),  # seq < 17
    ("gpt_bigcode", "ts"): ("guarded", 1, 272),  # seq < 17
    # height >= 2, width >= 2, and (height//2 + 1)//2 == (height//2 - min(1, height//2) + 1)//2
    # (the patch merge's even and odd rows agree: height//2 even), the same for width
    ("swin", "ts"): ("guarded", 4, 606),
    ("beit", "ts"): ("guarded", 2, 814),  # height >= 4, width >= 4
    ("convnext", "ts"): ("guarded", 2, 71),  # height >= 8, width >= 8
    ("segformer", "ts"): ("guarded", 2, 343),  # height >= 5, width >= 5
    ("funnel", "ts"): ("guarded", 2, 610),  # seq <= 9; 2*seq + 5 < 4*seq
    ("mpnet", "ts"): ("guarded", 1, 246),  # seq < 19
    ("albert", "ts"): ("guarded", 1, 234),  # seq <= 20
    ("m2m100", "ts"): ("guarded", 2, 521),  # dec < 21; seq < 21
    # seq + 3*seq % 4 < 40 (positions of the padded sequence) and two bounds of the chunk
    # indices: batch >= 2 and 8 <= the padded sequence
    ("longformer", "ts"): ("guarded", 3, 2880),
    ("modernbert", "ts"): ("ok", 0, 246),
    ("convbert", "ts"): ("guarded", 1, 312),  # seq <= 20
    ("sew", "ts"): ("guarded", 1, 253),  # samples >= 30
    ("wavlm", "ts"): ("guarded", 1, 322),  # samples >= 20
    ("gpt_neo", "ts"): ("guarded", 1, 379),  # seq <= 16
    # shapes exact (a size computed in float); the stages' even sizes are left to Z3, which times
    # out on `(height - 1)//8 + 1 == 2*((height - 1)//16) + 2` beside the nonlinear reshape guards
    ("mobilevit", "ts"): ("inconclusive", 2, 1259),
    # past + seq - 1 < total (the mask read by GatherND)
    ("mistral_kv", "dynamo"): ("guarded", 1, 155),
}
if os.environ.get("SYMSHAPE_HF_ALL") == "1":  # a dynamo export costs 10-40 s of CPU
    EXPECTED |= {
        ("speech2text", "dynamo"): ("guarded", 2, 257),
        ("swin", "dynamo"): ("guarded", 4, 223),
        ("hubert", "dynamo"): ("guarded", 1, 116),
        ("phi", "dynamo"): ("ok", 0, 131),
        ("phi3", "dynamo"): ("ok", 0, 138),
        ("falcon", "dynamo"): ("ok", 0, 115),
        ("bloom", "dynamo"): ("ok", 0, 122),
        ("gptj", "dynamo"): ("guarded", 1, 139),
        ("gpt_bigcode", "dynamo"): ("guarded", 1, 108),
        ("convnext", "dynamo"): ("guarded", 2, 58),
        ("segformer", "dynamo"): ("guarded", 2, 178),
        ("mpnet", "dynamo"): ("guarded", 1, 137),
        ("albert", "dynamo"): ("guarded", 1, 113),
        ("m2m100", "dynamo"): ("guarded", 2, 198),
    }

_CASES = [pytest.param(more_spec(m), e, id=f"{m}-{e}") for m, e in EXPECTED]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """``export`` cached for the module: (spec, exporter) -> the path of the ``.onnx`` file."""
    return exports_cached(str(tmp_path_factory.mktemp("hf_more_onnx")))


def _load(path: str) -> onnx.ModelProto:
    model = onnx.load(path)
    del model.graph.value_info[:]  # the exporter's own shape inference is not the oracle
    return model


@pytest.mark.parametrize(("spec", "exporter"), _CASES)
def test_more_hf_models_against_onnxruntime(spec: HFSpec, exporter: str, exported: Any) -> None:
    if exporter == "dynamo" and not _HAS_ONNXSCRIPT:
        pytest.skip("the dynamo exporter needs onnxscript")
    path = exported(spec, exporter)
    model = _load(path)
    declared = {d.dim_param for i in model.graph.input for d in i.type.tensor_type.shape.dim if d.dim_param}
    assert declared == set(spec.dim_names)  # every dynamic axis stayed dynamic
    syms = {name: ss.dim(name) for name in spec.dim_names}
    res = sso.infer(model, dims=syms)
    status, guards, fewest = EXPECTED[(spec.name, exporter)]
    assert not res.unsupported and not res.errors, res.report()
    assert bool(res.inconclusive) == (status == "inconclusive"), res.report()
    if status == "inconclusive":  # which conditions Z3 decides before its (wall-clock) timeout
        assert res.status == status, res.report()  # depends on the load: 2 to 3 guards
    else:
        assert (res.status, len(res.guards)) == (status, guards), res.report()
    ran = refused = 0
    for size in spec.sizes:
        o = compare(path, res, syms, spec, size)
        assert not o.mismatches, o.mismatches[:5]
        assert o.valid == o.ran, (dict(size), o.ran, [str(g) for g in res.guards])
        if o.ran:
            ran += 1
            assert o.compared >= fewest, (dict(size), o.compared)
        refused += not o.ran
    assert ran >= 3 and any(s["batch"] == 1 for s in spec.sizes)
    assert refused >= (1 if guards else 0)  # a size breaking the guards is among the sizes
    onnx.checker.check_model(sso.infer_shapes(model), full_check=True)


def test_swin_odd_merge_is_outside_onnx_concat(exported: Any) -> None:
    """At a 2x2 image the patch merge concatenates its 0::2 rows (1 of them) with its 1::2 rows
    (none). onnxruntime skips empty inputs of a Concat and runs; ONNX's Concat (and onnx.reference)
    requires equal sizes off the axis. symshape states the model's guard: ``valid_at`` is False,
    and some Concat there has inputs that differ off its axis."""
    spec = more_spec("swin")
    path = exported(spec, "ts")
    model = _load(path)
    syms = {name: ss.dim(name) for name in spec.dim_names}
    res = sso.infer(model, dims=syms)
    size = {"batch": 1, "height": 2, "width": 2}
    assert not res.valid_at({syms[k]: v for k, v in size.items()})
    shapes = run_all_values(path, spec.make_inputs(size))
    bad = []
    for n in model.graph.node:
        if n.op_type == "Concat":
            (axis,) = [a.i for a in n.attribute if a.name == "axis"]
            ins = [shapes[i] for i in n.input]
            rank = len(ins[0])
            off = {tuple(s[k] for k in range(rank) if k != axis % rank) for s in ins}
            bad += [n.name] if len(off) > 1 else []
    assert bad


def test_falcon_alibi_export_is_refused_like_onnxruntime(tmp_path: Any) -> None:
    """The TorchScript exporter writes ALiBi's ``.bfloat16()`` as ``Cast(to=15)`` (torch's dtype
    number; ONNX's 15 is complex128, which Mul refuses): onnxruntime refuses the model, and symshape
    reports the dtype mismatch at the Cast (Cast-13 allows no complex) and the Mul, not a crash."""
    import onnxruntime as ort  # type: ignore[import-untyped]

    spec = HFSpec(
        "falcon_alibi", "FalconForCausalLM", "FalconConfig",
        {"vocab_size": 64, "hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 4,
         "alibi": True, "new_decoder_architecture": False, "parallel_attn": False, "bias": True,
         "max_position_embeddings": 16, "use_cache": False, "bos_token_id": 0, "eos_token_id": 0,
         "attn_implementation": "eager"},
        "logits", {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}},
        more_spec("bloom").sizes, more_spec("bloom").make_inputs,
    )  # fmt: skip
    path = export(spec, str(tmp_path), dynamo=False)
    model = _load(path)
    assert any(
        n.op_type == "Cast" and n.attribute[0].i == onnx.TensorProto.COMPLEX128 for n in model.graph.node
    )
    with pytest.raises(Exception, match="complex128"):
        ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    res = sso.infer(model, dims={"batch": ss.dim("batch"), "seq": ss.dim("seq")})
    assert res.status == "error"
    assert {e.code for e in res.errors} == {"dtype-mismatch"}, res.report()
