"""The validity grid's models (tests/validity/models.py: GPT-2 with ``wpe(arange(t))``, HF BERT
embeddings with ``position_ids[:, :t]``, a transformer LM with ``pos[:, :t]``, a UNet with
transposed convolutions, ViT, ResNet-18, an LSTM tagger; transformers' GPT-2, BERT and Llama,
imported from their ``torch.export`` programs) imported at symbolic sizes: no import error, every
node's shape equal to eager torch's at valid grid points (for exported programs: to torch.export's
own symbolic shapes), and the guards true exactly where eager torch runs (on a sample of each
grid; GPT-2's ``t <= 24`` is an index bound of ``wpe``, from the value range of ``arange``).
"""

from __future__ import annotations

import pytest
import torch

import symshape as ss
import symshape.torch as sst
from torch_zoo.oracle import check_model, export_mismatches
from validity.grid import eager_valid, graph_of
from validity.models import GRID_CASES

Imported = tuple[str, torch.nn.Module, tuple[object, object], dict[str, ss.Dim]]


@pytest.fixture(scope="module", params=sorted(GRID_CASES))
def imported(request: pytest.FixtureRequest) -> Imported:
    case = GRID_CASES[request.param]
    torch.manual_seed(0)
    model = case.build().eval()
    syms = dict(zip(case.symbols.split(), ss.dims(case.symbols)))
    graph = graph_of(case, model)  # the module (torch.fx) or its torch.export program
    return request.param, model, (graph, sst.infer(graph, case.types(syms))), syms


def test_imports_without_error(imported: Imported) -> None:
    _, _, (_, res), _ = imported
    assert res.status in ("ok", "guarded"), res.report()  # type: ignore[attr-defined]
    assert res.errors == [] and res.unresolved == []  # type: ignore[attr-defined]
    for g in res.guards:  # type: ignore[attr-defined]
        assert "?" not in str(g), g


def test_every_node_matches_eager_torch(
    imported: Imported,
) -> None:
    name, model, (graph, res), syms = imported
    case = GRID_CASES[name]
    if isinstance(graph, torch.export.ExportedProgram):  # against torch.export's own shapes
        assert export_mismatches(res, graph, case.types(syms)) == []
        return
    valid = [p for p in case.grid if eager_valid(model, case.example(p))]
    for p in valid[:: max(1, len(valid) // 3)][:3]:
        assert check_model(res, model, case.example(p), p) == [], p


def test_guards_hold_where_eager_torch_runs(
    imported: Imported,
) -> None:
    name, model, (_, res), syms = imported
    case = GRID_CASES[name]
    misses = []
    for p in case.grid[::4]:
        truth = eager_valid(model, case.example(p))
        env = {syms[k]: v for k, v in p.items()}
        ours = all(g.holds(env) for g in res.guards)  # type: ignore[attr-defined]
        if truth and not ours:
            misses.append(f"{p}: eager runs, a guard fails")
        if ours and not truth:
            misses.append(f"{p}: eager fails, every guard holds")
    assert misses == []
