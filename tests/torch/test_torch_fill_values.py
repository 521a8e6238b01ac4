"""Fills carry their entries: ``torch.full(size, v)``, ``x.new_full(size, v)``, ``x.new_ones``,
``x.new_zeros`` of a Python number are symshape's ``full`` (a small int tensor's value, an
integer's range). ``new_ones`` and ``new_full`` were zeros (the value ``(0, 0)`` where torch has
``(1, 1)``: a wrong reshape target), ``torch.full`` had no entries (OPT in core ATen,
``run_decompositions()``, builds its positions from ``full(.., 1)``: its position-table guard
was lost and ``valid_at`` said True where torch fails). Against eager torch, through an
``nn.Module`` and ``torch.export``."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import symshape as ss
import symshape.torch as sst
from torch_zoo.oracle import fn_module

N = ss.dim("n")

FILLS: list[tuple[str, Any]] = [
    ("full", lambda x: torch.full((2,), 5)),
    ("full-neg", lambda x: torch.full((3,), -4, dtype=torch.int32)),
    ("new_ones", lambda x: x.new_ones(2)),
    ("new_zeros", lambda x: x.new_zeros((2,))),
    ("new_full", lambda x: x.new_full((2,), 7)),
    ("new_full-float", lambda x: x.new_full((2,), 2.5)),
    ("full-2d", lambda x: torch.full((2, x.shape[0]), 1.5)),
]
CASES = [(n, f, dt, e) for n, f in FILLS for dt in ("int64", "int32", "float32") for e in (False, True)]
IDS = [f"{c[0]}-{c[2]}-{'export' if c[3] else 'module'}" for c in CASES]


@pytest.mark.parametrize(("name", "f", "dt", "exported"), CASES, ids=IDS)
def test_fill_value_is_torchs(name: str, f: Any, dt: str, exported: bool) -> None:
    model = fn_module(f, 1)
    x = torch.zeros(3, dtype=getattr(torch, dt))
    m: Any = model
    if exported:
        m = torch.export.export(model, (x,), dynamic_shapes={"x": {0: torch.export.Dim("n")}})
    res = sst.infer(m, {"x": ss.Tensor((N,), dt)})
    assert res.ok, res.report()
    node = m.graph_module.graph.output_node().args[0][0].name if exported else res.program.body
    t = res.type_of(node)
    assert isinstance(t, ss.TensorType)
    want = model(x)
    assert str(t.dtype) == str(want.dtype).removeprefix("torch.")
    assert tuple(int(d) for d in t.subs({N: 3}).shape) == tuple(want.shape)
    v = t.value
    if not want.dtype.is_floating_point and want.ndim == 1 and name != "new_full-float":
        assert v is not None, (name, t)  # (2.5 cast to an int: no value, never a wrong one)
    if v is not None:
        assert not isinstance(v, ss.Dim)
        assert [None if e is None else int(e) for e in v] == want.tolist()


@pytest.mark.parametrize("rows", [6, 9])
def test_positions_from_a_float_fill_keep_their_range(rows: int) -> None:
    """OPT's positions in core ATen: ``(cumsum(full(1.0)) * full(1.0) - 1).long() + 2`` index a
    table of ``rows`` rows."""

    class Pos(torch.nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.pos = torch.nn.Embedding(rows, 2)

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            ones = torch.full((ids.shape[0], ids.shape[1]), 1.0)
            return self.pos((torch.cumsum(ones, 1) * ones - 1).long() + 2)

    b, t = ss.dims("b t")
    dims = {0: torch.export.Dim("b"), 1: torch.export.Dim("t", min=2, max=64)}
    ep = torch.export.export(Pos(), (torch.zeros(2, 3, dtype=torch.long),), dynamic_shapes={"ids": dims})
    res = sst.infer(ep.run_decompositions(), {"ids": ss.Tensor((b, t), "int64")})
    assert res.status == "guarded", res.report()
    for tv in range(2, rows + 3):
        try:
            Pos()(torch.zeros(2, tv, dtype=torch.long))
            runs = True
        except IndexError:
            runs = False
        assert bool(res.valid_at({b: 2, t: tv})) == runs, (tv, res.valid_when())
