"""``x[:, :, i, j]``: advanced indexing by adjacent integer tensors after full slices (core ATen's
``aten.index.Tensor(x, [None, None, i, j])``, bicubic upsampling after ``run_decompositions()``:
ViT with ``interpolate_pos_encoding``) was ``unsupported-op``; the result is
``x.shape[:k] + S + x.shape[k+m:]``. Every node against eager torch (module) at two sizes, and
the exported core-ATen program's output."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import symshape as ss
import symshape.torch as sst
from torch_zoo.oracle import check_fn, fn_module

B, H = ss.dims("b h")

CASES: list[tuple[str, Any]] = [
    ("one-after-two", lambda x: x[:, :, torch.arange(3)]),
    ("two-after-one", lambda x: x[:, torch.arange(2)[:, None], torch.arange(3)[None, :]]),
    ("leading", lambda x: x[torch.arange(2)]),
    ("2d-index-then-slice", lambda x: x[:, :, torch.tensor([[0, 1], [1, 0]]), :]),
    ("three-after-one", lambda x: x[:, torch.arange(2)[:, None], torch.arange(3)[None, :], torch.arange(3)]),
]


@pytest.mark.parametrize(("name", "f"), CASES, ids=[c[0] for c in CASES])
def test_index_after_slices(name: str, f: Any) -> None:
    model = fn_module(f, 1)
    check_fn(model, {"x": (("b", 4, "h", 5), "float32")}, [{"b": 2, "h": 3}, {"b": 3, "h": 7}])
    dims = {0: torch.export.Dim("b"), 2: torch.export.Dim("h", min=3)}
    ep = torch.export.export(model, (torch.randn(2, 4, 6, 5),), dynamic_shapes={"x": dims})
    res = sst.infer(ep.run_decompositions(), {"x": ss.Tensor((B, 4, H, 5), "float32")})
    assert res.ok, res.report()
    out = res.type_of(ep.graph_module.graph.output_node().args[0][0].name)
    for bv, hv in ((2, 3), (3, 7)):
        want = tuple(model(torch.randn(bv, 4, hv, 5)).shape)
        assert tuple(int(d) for d in out.subs({B: bv, H: hv}).shape) == want
