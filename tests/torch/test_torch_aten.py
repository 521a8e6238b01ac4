"""symshape.torch.convert.aten and the aten spellings of the other converters: exported programs
(``torch.export``, and after ``run_decompositions()``: core aten) against torch's own symbolic
shapes (``node.meta["val"]``, torch's symbols renamed to the user's)."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.export import Dim, export

import symshape as ss
import symshape.torch as sst
from torch_zoo.oracle import export_mismatches, types_of


class Vision(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 5)
        self.ln = nn.LayerNorm(5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.max_pool2d(torch.relu(self.bn(self.conv(x))), 2, return_indices=True)[0]
        y = F.adaptive_avg_pool2d(y, 1).flatten(1)
        return self.ln(self.fc(y)).softmax(-1)


class Heads(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(16, 48)
        self.emb = nn.Embedding(10, 16)

    def forward(self, x: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        x = x + self.emb(ids)
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(b, t, 4, 4).transpose(1, 2)
        k = k.view(b, t, 4, 4).transpose(1, 2)
        v = v.reshape(b, t, 4, -1).permute(0, 2, 1, 3)
        att = (q @ k.transpose(-2, -1) * 0.5).masked_fill(ids[:, None, None, :] == 0, float("-inf"))
        y = att.softmax(-1) @ v
        y = y + F.scaled_dot_product_attention(q, k, v)
        return y.transpose(1, 2).reshape(b, t, c)[:, 1:, :].sum(-1)


CASES = [
    (
        "vision",
        Vision,
        {"x": ((2, 3, 16, 20),)},
        {"x": {0: "b", 2: "h", 3: "w"}},
        {"x": (("b", 3, "h", "w"), "float32")},
    ),
    (
        "heads",
        Heads,
        {"x": ((2, 5, 16),), "ids": ((2, 5), "int")},
        {"x": {0: "b", 1: "t"}, "ids": {0: "b", 1: "t"}},
        {"x": (("b", "t", 16), "float32"), "ids": (("b", "t"), "int64")},
    ),
]


def _export(
    name: str, make: type[nn.Module], shapes: dict[str, tuple], dyn: dict[str, dict[int, str]]
) -> object:
    torch.manual_seed(0)
    model = make().eval()
    args = {k: torch.randint(1, 10, s[0]) if len(s) > 1 else torch.randn(*s[0]) for k, s in shapes.items()}
    dynamic = {k: {ax: Dim.DYNAMIC for ax in v} for k, v in dyn.items()}
    return export(model, (), args, dynamic_shapes=dynamic)


@pytest.fixture(scope="module", params=CASES, ids=[c[0] for c in CASES])
def exported(request: pytest.FixtureRequest) -> tuple[object, dict[str, ss.Type]]:
    name, make, shapes, dyn, specs = request.param
    return _export(name, make, shapes, dyn), types_of(specs)


def test_training_ir(exported: tuple[object, dict[str, ss.Type]]) -> None:
    ep, types = exported
    res = sst.infer(ep, types)
    assert res.ok, res.report()
    assert export_mismatches(res, ep, types) == []


def test_core_aten(exported: tuple[object, dict[str, ss.Type]]) -> None:
    ep, types = exported
    core = ep.run_decompositions()  # type: ignore[attr-defined]
    res = sst.infer(core, types)
    assert res.ok, res.report()
    assert export_mismatches(res, core, types) == []
    targets = {str(n.target) for n in core.graph.nodes}
    assert "aten.sym_size.int" in targets


def test_sizes_read_from_inputs_fold() -> None:
    """``sym_size`` of a user input is the user's dimension; arithmetic on it too."""
    ep = _export("heads", Heads, CASES[1][2], CASES[1][3])
    res = sst.infer(ep, types_of(CASES[1][4]))
    b, t = ss.dims("b t")
    sizes = [res.value_of(n) for n in ep.graph.nodes if str(n.target) == "aten.sym_size.int"]  # type: ignore[attr-defined]
    assert set(sizes) == {b, t}


def test_inputs_from_the_exported_program() -> None:
    """Without ``inputs``, the types come from the program (torch's symbol names)."""
    ep = _export("vision", Vision, CASES[0][2], CASES[0][3])
    res = sst.infer(ep)
    assert res.ok
    out = res.type_of("output")
    assert isinstance(out, ss.TensorType) and out.dims[1] == 5
    assert str(out.dims[0]).startswith("s")


def test_parameters_of_an_exported_program_are_named_by_path() -> None:
    ep = _export("vision", Vision, CASES[0][2], CASES[0][3])
    prog = sst.from_fx(ep, types_of(CASES[0][4]))
    names = {p.name for p in prog.params}
    assert {"self.conv.weight", "self.fc.weight", "self.bn.running_mean"} <= names


def test_assertions_are_not_part_of_the_types() -> None:
    """Run-time asserts of exported programs (``_assert_scalar`` on torch's symbols) are no-ops."""

    class Checked(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            torch._check(x.shape[0] > 1)
            return x * 2

    ep = export(Checked(), (torch.randn(4, 3),), dynamic_shapes={"x": {0: Dim.DYNAMIC}})
    res = sst.infer(ep, types_of({"x": (("b", 3), "float32")}))
    assert res.status == "ok", res.report()
