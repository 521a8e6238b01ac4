"""``type_as`` (symshape's ``cast_like``) keeps its input's range, as ``cast`` does: RoBERTa's
position ids ``(cumsum(mask).type_as(mask) + past) * mask + pad`` index a table of 22 rows, so
the model runs only up to ``seq = 20``; the range was dropped at ``type_as`` and ``valid_at`` said
True at 21 where torch fails. Against eager torch, through an ``nn.Module`` and ``torch.export``,
the fields' ``range_of`` by node name too."""

from __future__ import annotations

import pytest
import torch

import symshape as ss
import symshape.torch as sst

B, T = ss.dims("b t")
PAD = 1


class Positions(torch.nn.Module):  # type: ignore[misc]
    def __init__(self, rows: int, past: int) -> None:
        super().__init__()
        self.past = past
        self.pos = torch.nn.Embedding(rows, 4)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        mask = ids.ne(PAD).int()
        inc = (torch.cumsum(mask, dim=1).type_as(mask) + self.past) * mask
        return self.pos(inc.long() + PAD)


def _runs(model: torch.nn.Module, b: int, t: int) -> bool:
    try:
        model(torch.zeros(b, t, dtype=torch.long))
        return True
    except IndexError:
        return False


@pytest.mark.parametrize(("rows", "past"), [(22, 0), (10, 3)])
@pytest.mark.parametrize("exported", [False, True], ids=["module", "export"])
def test_type_as_keeps_the_range(rows: int, past: int, exported: bool) -> None:
    model = Positions(rows, past).eval()
    m: object = model
    if exported:
        dims = {0: torch.export.Dim("b", min=2), 1: torch.export.Dim("t", min=2, max=64)}
        m = torch.export.export(model, (torch.zeros(2, 5, dtype=torch.long),), dynamic_shapes={"ids": dims})
    res = sst.infer(m, {"ids": ss.Tensor((B, T), "int64")})
    assert res.status == "guarded", res.report()
    assert res.range_of("type_as") == (0, T)
    points = [(b, t) for b in (2, 3) for t in range(2, rows + 4)]
    wrong = [(b, t) for b, t in points if bool(res.valid_at({B: b, T: t})) != _runs(model, b, t)]
    assert wrong == [], res.valid_when()
