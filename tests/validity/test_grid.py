"""The validity grid (issue 19): at every size of each model's grid, symshape's verdict
(``res.valid_at``) equals what eager torch does — no false reject, no false accept — and at the
invalid sizes ``why_invalid`` points at the line of the model where eager torch fails.

The truth is eager torch (``tests/validity/grid.py``); ``torch.export``'s verdicts on the same grid
are printed by ``python -m tests.validity.grid`` for comparison, not asserted.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import traceback
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

import symshape as ss  # noqa: E402

from .grid import Outcome, decide  # noqa: E402
from .models import GRID_CASES, GridCase  # noqa: E402

Decided = tuple[GridCase, Outcome, Any, dict[str, ss.Dim]]

TESTS = str(Path(__file__).resolve().parents[1])
GRID = os.path.join("validity", "grid.py")
_HF = importlib.util.find_spec("transformers")
# the models' sources: the test models, and transformers' package for its models
SOURCES = (TESTS,) + tuple(_HF.submodule_search_locations or ()) if _HF is not None else (TESTS,)

# valid_when as a person would write it; the grid decides whether it is true, this pins its form
EXPECTED_WHEN = {
    "gpt2": "t <= 24",
    "bert_emb": "t <= 20",
    "transformer_lm": "t <= 16",
    "unet": "h % 4 == 0 and w % 4 == 0",
    "vit": "(h//8)*(w//8) == 16",
    "resnet18": "True",
    "lstm_tagger": "True",
    "hf_gpt2": "t <= 24",
    "hf_bert": "t <= 20",
    "hf_llama": "True",
}


def failing_line(case: GridCase, model: torch.nn.Module, point: dict[str, int]) -> str | None:
    """``file:line`` of the innermost frame in the models' sources (tests/, transformers'
    package) when eager torch raises at ``point`` (the model's own line: its layer call or
    operator), None when it runs."""
    try:
        with torch.no_grad():
            model(**case.example(point))
    except Exception:
        frames = traceback.extract_tb(sys.exc_info()[2])
        mine = [f for f in frames if f.filename.startswith(SOURCES) and not f.filename.endswith(GRID)]
        return f"{mine[-1].filename}:{mine[-1].lineno}:" if mine else None
    return None


@pytest.fixture(scope="module", params=sorted(GRID_CASES))
def outcome(request: pytest.FixtureRequest) -> Decided:
    case = GRID_CASES[request.param]
    o, res, syms = decide(case)
    return case, o, res, syms


def test_verdicts_equal_eager_torch_at_every_size(outcome: Decided) -> None:
    case, o, _, _ = outcome
    assert o.misses == [], f"{case.name}: {len(o.misses)} wrong verdicts, e.g. {o.misses[:3]}"
    assert sum(o.eager) > 0 and len(o.points) > 20


def test_valid_when_reads_like_a_person_wrote_it(outcome: Decided) -> None:
    case, o, _, _ = outcome
    assert o.valid_when == EXPECTED_WHEN[case.name]


def test_why_invalid_points_at_the_failing_line(outcome: Decided) -> None:
    case, o, res, syms = outcome
    bad = [p for p, ok in zip(o.points, o.eager) if not ok]
    if not bad:
        assert res.valid_when() == "True"
        return
    torch.manual_seed(0)
    model = case.build().eval()
    step = max(1, len(bad) // 12)
    for p in bad[::step]:
        where = failing_line(case, model, p)
        assert where is not None
        text = res.why_invalid({syms[k]: v for k, v in p.items()})
        assert text.startswith("invalid at"), text
        assert where in text, f"{case.name} at {p}: eager fails at {where}; why_invalid says\n{text}"


# what the ONNX exports accept: the TorchScript exporter bakes the traced sequence length into the
# attention reshapes of nn.MultiheadAttention (so those exports run at one length only, which
# onnxruntime confirms); symshape reads it off the graph
EXPECTED_ONNX_WHEN = {**EXPECTED_WHEN, "bert_emb": "t == 20", "transformer_lm": "t == 16"}


# what keeps the TorchScript ONNX exporter (opset 17) from exporting transformers' models: the
# mask code traces into aten::diff (packed-sequence detection), which it cannot export; tracing
# BertModel's wrapped forward fails outright
ONNX_UNEXPORTABLE = {
    "hf_gpt2": "aten::diff",
    "hf_llama": "aten::diff",
    "hf_bert": "multiple values for argument 'use_cache'",
}
ONNX_CASES = sorted(set(GRID_CASES) - set(ONNX_UNEXPORTABLE))


@pytest.mark.parametrize("name", sorted(set(GRID_CASES) & set(ONNX_UNEXPORTABLE)))
def test_torchscript_onnx_exporter_cannot_export_transformers_models(name: str, tmp_path: Path) -> None:
    from .onnx_grid import export_case

    case = GRID_CASES[name]
    torch.manual_seed(0)
    with pytest.raises(Exception, match=ONNX_UNEXPORTABLE[name]):
        export_case(case, case.build().eval(), str(tmp_path))


@pytest.mark.parametrize("name", ONNX_CASES)
def test_onnx_export_verdicts_equal_onnxruntime(name: str) -> None:
    pytest.importorskip("onnxruntime")
    from .onnx_grid import decide_onnx

    o, res = decide_onnx(GRID_CASES[name])
    assert o.misses == [], f"{name}: {len(o.misses)} wrong verdicts, e.g. {o.misses[:3]}"
    assert o.valid_when == EXPECTED_ONNX_WHEN[name]
    if name in ("bert_emb", "transformer_lm"):
        assert any(w.code == "pinned-symbol" for w in res.warnings), res.report()
