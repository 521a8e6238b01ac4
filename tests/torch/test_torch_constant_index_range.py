"""An integer tensor constant of rank 2 or more (symbolic tracing folds
``torch.arange(3)[None, :]`` to one) carries the range of its entries, so that indexing by it
states its bound: ``x[torch.arange(2)[:, None], torch.arange(3)[None, :]]`` needs ``h >= 3`` of
``x: (4, h, 5)``; ``valid_at`` said True at ``h = 2`` where torch fails. Against eager torch."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import symshape as ss
import symshape.torch as sst
from torch_zoo.oracle import fn_module

H = ss.dim("h")

CASES: list[tuple[str, Any]] = [
    ("leading", lambda x: x[torch.arange(2)[:, None], torch.arange(3)[None, :]]),
    ("after-slice", lambda x: x[:, torch.arange(2)[:, None], torch.arange(3)[None, :]]),
    ("2d-table", lambda x: x[:, torch.tensor([[0, 4], [2, 1]])]),
    ("negative", lambda x: x[:, torch.tensor([[-3, 0]])]),
]


def _runs(f: Any, h: int) -> bool:
    try:
        f(torch.zeros(4, h, 5))
        return True
    except IndexError:
        return False


@pytest.mark.parametrize(("name", "f"), CASES, ids=[c[0] for c in CASES])
def test_constant_index_tables_state_their_bounds(name: str, f: Any) -> None:
    res = sst.infer(fn_module(f, 1), {"x": ss.Tensor((4, H, 5), "float32")})
    assert res.ok, res.report()
    wrong = [h for h in range(1, 8) if bool(res.valid_at({H: h})) != _runs(f, h)]
    assert wrong == [], (res.valid_when(), [str(g) for g in res.guards])
