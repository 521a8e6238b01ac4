"""``aten.native_group_norm`` (core ATen, ``run_decompositions()``: wav2vec2's feature encoder)
was ``unsupported-op``: ``(out, mean, rstd)`` with statistics ``(N, group)``, every node against
``torch.export``'s program run at several sizes."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import symshape as ss
import symshape.torch as sst
from torch_zoo.oracle import mismatches


class Norm(torch.nn.Module):  # type: ignore[misc]
    def __init__(self, groups: int, affine: bool) -> None:
        super().__init__()
        self.norm = torch.nn.GroupNorm(groups, 8, affine=affine)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def _run(ep: Any, x: torch.Tensor) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    class R(torch.fx.Interpreter):  # type: ignore[misc]
        def run_node(self, n: torch.fx.Node) -> Any:
            seen[n.name] = out = super().run_node(n)
            return out

    specs = ep.graph_signature.input_specs
    args = [ep.state_dict[s.target] if s.kind.name == "PARAMETER" else x for s in specs]
    with torch.no_grad():
        R(ep.graph_module).run(*args)
    return seen


CASES = [(2, True, 3), (4, False, 3), (8, True, 4), (1, True, 3)]


@pytest.mark.parametrize(("groups", "affine", "rank"), CASES)
def test_native_group_norm(groups: int, affine: bool, rank: int) -> None:
    model = Norm(groups, affine).eval()
    spatial = (5,) * (rank - 2)
    dyn = {0: torch.export.Dim("b"), 2: torch.export.Dim("t")}
    ep = torch.export.export(model, (torch.randn(2, 8, *spatial),), dynamic_shapes={"x": dyn})
    ep = ep.run_decompositions()
    assert any("native_group_norm" in str(n.target) for n in ep.graph_module.graph.nodes)
    b, t = ss.dims("b t")
    res = sst.infer(ep, {"x": ss.Tensor((b, 8, t, *spatial[1:]), "float32")})
    assert res.ok, res.report()
    for bv, tv in ((2, 3), (3, 7), (1, 2)):
        x = torch.randn(bv, 8, tv, *spatial[1:])
        mm = [m for m in mismatches(res, _run(ep, x), {"b": bv, "t": tv}) if not m.startswith("output")]
        assert mm == [], mm
