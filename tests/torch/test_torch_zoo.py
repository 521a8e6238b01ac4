"""The zoo (tests/torch_zoo/models.py) against torch: every node's shape at concrete sizes, the
symbolic shapes of ``torch.export`` where it exports with dynamic dims, and the broken variants'
reports in the model's source.

The GPT-2 block's sizes (``B, T, C = x.size()``, ``split(self.n_embd, dim=2)``) are shape values
in a traced graph and plain sizes in an exported one: both are checked.
"""

from __future__ import annotations

import pytest
import torch
from torch.export import Dim, export

import symshape as ss
import symshape.torch as sst
from torch_zoo import models
from torch_zoo.models import BROKEN, CASES
from torch_zoo.oracle import check_model, export_mismatches

WORKING = ["gpt2_block", "bert_layer", "resnet18", "unet", "lstm_tagger", "vit"]
EXPORTABLE = [
    "gpt2_block",
    "bert_layer",
    "vit",
    "resnet18",
    "unet",
]  # the LSTM's export pins t (torch specializes it)
BROKEN_WORKING = ["gpt2_block", "bert_layer", "resnet18", "resnet18_flatten", "unet", "lstm_tagger", "vit"]


@pytest.fixture(scope="module")
def built() -> dict[str, torch.nn.Module]:
    torch.manual_seed(0)
    return {name: CASES[name].build().eval() for name in sorted(set(WORKING) | set(EXPORTABLE))}


@pytest.mark.parametrize("name", WORKING)
def test_every_node_matches_torch(name: str, built: dict[str, torch.nn.Module]) -> None:
    case = CASES[name]
    model = built[name]
    res = sst.infer(model, case.types())
    assert res.ok, res.report()
    assert res.errors == [] and res.unresolved == []
    for sizes in case.sizes:
        assert check_model(res, model, case.example(sizes), sizes) == [], sizes


@pytest.mark.parametrize("name", EXPORTABLE)
def test_exported_symbolic_shapes_match(name: str, built: dict[str, torch.nn.Module]) -> None:
    case = CASES[name]
    example = case.example(case.sizes[0])
    dynamic = {k: {ax: Dim.DYNAMIC for ax in v} for k, v in case.dynamic.items()}
    ep = export(built[name], (), example, dynamic_shapes=dynamic)
    res = sst.infer(ep, case.types())
    assert res.ok, res.report()
    assert export_mismatches(res, ep, case.types()) == []


def test_resnet18_is_valid_for_every_image_size(built: dict[str, torch.nn.Module]) -> None:
    res = sst.infer(built["resnet18"], CASES["resnet18"].types())
    assert res.status == "ok"
    b = ss.dim("b")
    h, w = ss.dims("h w")
    assert res.type_of("fc") == ss.Tensor((b, 10), "float32")
    assert res.type_of("layer1_0_conv1") == ss.Tensor((b, 8, (h - 1) // 4 + 1, (w - 1) // 4 + 1), "float32")


def test_vit_needs_its_image_size() -> None:
    """With a symbolic image the learned positions pin the number of patches: a guard that
    holds at 32 x 32 and not at 40 x 32."""
    torch.manual_seed(0)
    b, h, w = ss.dims("b h w")
    res = sst.infer(models.ViT().eval(), {"x": ss.Tensor((b, 3, h, w), "float32")})
    assert res.status == "guarded", res.report()
    assert all(g.holds({h: 32, w: 32}) for g in res.guards)
    assert not all(g.holds({h: 40, w: 32}) for g in res.guards)


@pytest.mark.parametrize("name", BROKEN_WORKING)
def test_broken_variants_report_in_the_model_source(name: str) -> None:
    case = BROKEN[name]
    torch.manual_seed(0)
    model = case.build().eval()
    res = sst.infer(model, case.types())
    assert res.status == "error"
    first = res.errors[0]
    assert first.code != "unsupported-op", res.report()
    assert first.span is not None and first.span.file == models.__file__
    with open(models.__file__) as f:
        lines = f.read().split("\n")
    assert case.broken_line in lines[first.span.line - 1], res.report()
    note_lines = [lines[n.span.line - 1] for n in first.notes if n.span is not None]
    assert all(n.span is None or n.span.file == models.__file__ for n in first.notes)
    assert any(case.broken_note in line for line in note_lines), res.report()
    with pytest.raises(AssertionError):  # and torch fails on it too
        try:
            with torch.no_grad():
                model(**case.example({"b": 2, "t": 5, "h": 32, "w": 32}))
        except (RuntimeError, ValueError) as e:
            raise AssertionError(str(e)) from e
