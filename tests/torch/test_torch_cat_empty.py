"""``torch.cat`` skips a 1-d empty tensor beside tensors of another rank (torch's legacy rule).
transformers' ``DynamicLayer`` starts a KV cache as ``torch.tensor([])`` and concatenates the
first keys to it; ``torch.export`` lifts the empty tensor to a constant of shape ``(0,)``, and
GPT-2 and Llama with a cache were a ``rank-mismatch`` error where torch runs. Against eager torch,
through an ``nn.Module`` and ``torch.export``."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import symshape as ss
import symshape.torch as sst

B, P, S = ss.dims("b p s")


class Cache(torch.nn.Module):  # type: ignore[misc]
    def __init__(self, first: bool) -> None:
        super().__init__()
        self.first = first
        self.keys = torch.tensor([])

    def forward(self, past: torch.Tensor, new: torch.Tensor) -> torch.Tensor:
        parts = [self.keys, past, new] if self.first else [past, self.keys, new]
        return torch.cat(parts, dim=-2)


SIZES = [(1, 1, 1), (2, 3, 5), (3, 7, 2)]


@pytest.mark.parametrize("first", [True, False], ids=["empty-first", "empty-between"])
@pytest.mark.parametrize("exported", [False, True], ids=["module", "export"])
def test_cat_skips_an_empty_vector(first: bool, exported: bool) -> None:
    model = Cache(first).eval()
    m: Any = model
    if exported:
        d = {0: torch.export.Dim("b"), 2: torch.export.Dim("p")}
        m = torch.export.export(
            model, (torch.zeros(2, 4, 3, 8), torch.zeros(2, 4, 5, 8)),
            dynamic_shapes={"past": d, "new": {0: d[0], 2: torch.export.Dim("s")}},
        )  # fmt: skip
    types = {"past": ss.Tensor((B, 4, P, 8), "float32"), "new": ss.Tensor((B, 4, S, 8), "float32")}
    res = sst.infer(m, types)
    assert res.ok, res.report()
    t = res.type_of(m.graph_module.graph.output_node().args[0][0].name if exported else res.program.body)
    assert isinstance(t, ss.TensorType)
    for b, p, s in SIZES:
        want = tuple(model(torch.zeros(b, 4, p, 8), torch.zeros(b, 4, s, 8)).shape)
        assert tuple(int(d) for d in t.subs({B: b, P: p, S: s}).shape) == want
