"""``torch.where(r < k, r, y)``: the branch that the condition compares with ``k`` is bounded by
its side of ``k`` (T5's relative position buckets, ``where(r < 2, r, min(f(r), 3))``, index a
table of 4 rows at every length; the importer used to hull ``r``'s whole range, ``[0, t - 1]``,
and reject ``t > 4`` where torch runs). Checked against eager torch at several lengths, through
an ``nn.Module`` and through ``torch.export``."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import symshape as ss
import symshape.torch as sst

T = ss.dim("t")
LENGTHS = (1, 2, 3, 4, 5, 9, 17)

CONDS: list[tuple[str, Any]] = [
    ("r<2", lambda r, big: torch.where(r < 2, r, big)),
    ("2>r", lambda r, big: torch.where(2 > r, r, big)),
    ("r<=1", lambda r, big: torch.where(r <= 1, r, big)),
    ("r>=2", lambda r, big: torch.where(r >= 2, big, r)),
    ("r>1", lambda r, big: torch.where(r > 1, big, r)),
    ("r<4-wrong", lambda r, big: torch.where(r < 5, r, big)),  # r = 4 reads row 4: out of range
]


class Buckets(torch.nn.Module):  # type: ignore[misc]
    def __init__(self, pick: Any) -> None:
        super().__init__()
        self.pick = pick
        self.bias = torch.nn.Embedding(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pos = torch.arange(x.shape[1])
        r = torch.abs(pos[:, None] - pos[None, :])
        big = torch.clamp(2 + (torch.log(r.float() + 1)).to(torch.long), max=3)
        return self.bias(self.pick(r, big))


def _runs(model: torch.nn.Module, t: int) -> bool:
    try:
        model(torch.zeros(2, t))
        return True
    except IndexError:
        return False


@pytest.mark.parametrize(("name", "pick"), CONDS, ids=[c[0] for c in CONDS])
@pytest.mark.parametrize("exported", [False, True], ids=["module", "export"])
def test_where_bounds_its_compared_branch(name: str, pick: Any, exported: bool) -> None:
    model = Buckets(pick).eval()
    if exported:
        dim = torch.export.Dim("t", min=2, max=64)
        ep = torch.export.export(model, (torch.zeros(2, 6),), dynamic_shapes={"x": {1: dim}})
        res = sst.infer(ep, {"x": ss.Tensor((2, T), "float32")})
    else:
        res = sst.infer(model, {"x": ss.Tensor((2, T), "float32")})
    assert res.ok or res.status == "error", res.report()
    lengths = [t for t in LENGTHS if t >= 2] if exported else LENGTHS
    wrong = {t: _runs(model, t) for t in lengths if bool(res.valid_at({T: t})) != _runs(model, t)}
    assert wrong == {}, (res.valid_when(), [str(g) for g in res.guards])
    if name != "r<4-wrong":
        assert res.status == "ok", res.report()
