"""Index value ranges through relu, clamp and abs, against eager torch.

An embedding of 10 rows reads indices computed from positions (``arange(t)``) or from ids declared
with a value range; the index bound guard comes from the range the indices have after ``relu``,
``clamp`` (by numbers, by a run-time size or a symbolic dimension), ``clamp_min``/``clamp_max`` or
``abs``. At each sequence length of a grid ``valid_at`` equals whether eager torch runs for every
id of the declared range (the functions are monotone or ``abs``, so filling the ids with the
range's ends and 0 decides it). ``range_of`` the index tensor is compared with the values torch
computes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import symshape as ss
import symshape.torch as sst

ROWS = 10
B = 2
LENGTHS = (1, 3, 9, 10, 11, 13, 14, 15, 16, 20)


def _pos(ids: torch.Tensor) -> torch.Tensor:
    return torch.arange(ids.size(1))


def _gather_computed(m: Any, ids: torch.Tensor) -> torch.Tensor:
    """``torch.gather`` of a computed table by computed rows (ranks unknown at import time)."""
    return torch.gather(m.emb.weight * 2, 0, _rows_back(ids) + 0)


def _rows_back(ids: torch.Tensor) -> torch.Tensor:
    """Row indices 5, 4, ... (negative past t = 6), one per column of a 4-wide table."""
    return (5 - _pos(ids)).unsqueeze(1).expand(-1, 4)


class Indexed(torch.nn.Module):
    """``emb(f(ids))`` (or ``f(self, ids)`` itself with ``direct``), ``f`` free to use the module's
    own ``act`` (an activation module) and ``emb``."""

    def __init__(
        self, f: Callable[..., Any], act: torch.nn.Module | None = None, direct: bool = False
    ) -> None:
        super().__init__()
        self.emb = torch.nn.Embedding(ROWS, 4)
        self.f = f
        self.act = act if act is not None else torch.nn.Identity()
        self.direct = direct
        self.register_buffer("cap", torch.tensor(9))  # small int buffers: constants with values
        self.register_buffer("caps", torch.tensor([3, 9, 12]))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        if self.direct:
            return self.f(self, ids)  # type: ignore[no-any-return]
        return self.emb(self.f(self, ids))  # type: ignore[no-any-return]


# (id, f(module, ids) -> indices, declared range of ids or None, activation module)
CASES: list[tuple[str, Callable[..., Any], tuple[int, int] | None, torch.nn.Module | None]] = [
    ("relu", lambda m, ids: torch.relu(_pos(ids) - 3), None, None),
    ("relu_method", lambda m, ids: (_pos(ids) - 3).relu(), None, None),
    ("F_relu", lambda m, ids: F.relu(_pos(ids) - 3), None, None),
    ("ReLU_module", lambda m, ids: m.act(_pos(ids) - 3), None, torch.nn.ReLU()),
    ("relu_of_negative_rows", lambda m, ids: m.emb.weight[torch.relu(12 - _pos(ids)) - 3], None, None),
    ("relu_rows", lambda m, ids: m.emb.weight[:, torch.relu(_pos(ids) - 2)], None, None),
    ("abs", lambda m, ids: (_pos(ids) - 5).abs(), None, None),
    ("abs_reversed", lambda m, ids: torch.abs(5 - _pos(ids)), None, None),
    ("clamp_min", lambda m, ids: torch.clamp_min(_pos(ids) - 5, 0), None, None),
    ("clamp_min_method", lambda m, ids: (_pos(ids) - 5).clamp_min(0), None, None),
    ("clamp_max_fn", lambda m, ids: torch.clamp_max(_pos(ids), 12), None, None),
    ("clamp_kw_min", lambda m, ids: (_pos(ids) - 4).clamp(min=0), None, None),
    ("clamp_by_size", lambda m, ids: _pos(ids).clamp(max=ids.relu().size(1) // 2), None, None),
    ("clamp_by_dim", lambda m, ids: (_pos(ids) + 4).clamp(0, ids.shape[0] + 7), None, None),
    # by a tensor constant of the model (torch.tensor in forward, an int buffer): its value
    ("clamp_by_tensor_constant", lambda m, ids: _pos(ids).clamp(max=torch.tensor(9)), None, None),
    ("clamp_by_tensor_constant_too_big", lambda m, ids: _pos(ids).clamp(max=torch.tensor(10)), None, None),
    ("clamp_by_buffer", lambda m, ids: _pos(ids).clamp(max=m.cap), None, None),
    ("clamp_min_by_buffer", lambda m, ids: (_pos(ids) - 20).clamp(min=m.cap - 9), None, None),
    ("clamp_by_buffer_entry", lambda m, ids: _pos(ids).clamp(max=m.caps[1]), None, None),
    ("clamp_by_buffer_entry_too_big", lambda m, ids: _pos(ids).clamp(max=m.caps[2]), None, None),
    ("rows_from_buffer", lambda m, ids: m.caps[_pos(ids).clamp(max=2)], None, None),
    ("ids_clamp", lambda m, ids: ids.clamp(0, 9), (-20, 30), None),
    ("ids_relu_clamp_max", lambda m, ids: ids.relu().clamp(max=9), (-20, 30), None),
    ("ids_relu", lambda m, ids: F.relu(ids), (-20, 9), None),
    ("ids_relu_too_big", lambda m, ids: ids.relu(), (-20, 10), None),
    ("ids_abs_clamp", lambda m, ids: ids.abs().clamp_max(9), (-20, 30), None),
    ("ids_abs", lambda m, ids: ids.abs(), (-9, 8), None),
    ("ids_abs_too_big", lambda m, ids: ids.abs(), (-10, 8), None),
    ("ids_hardtanh", lambda m, ids: F.hardtanh(ids, 0, 9), (-20, 30), None),
    # embedding, index_select and gather refuse negative indices (x[i] counts them from the end)
    ("negative_after_relu", lambda m, ids: torch.relu(12 - _pos(ids)) - 3, None, None),
    ("negative_positions", lambda m, ids: _pos(ids) - 3, None, None),
    ("ids_negative", lambda m, ids: ids, (-1, 9), None),
    ("index_select_rows", lambda m, ids: torch.index_select(m.emb.weight, 0, 5 - _pos(ids)), None, None),
    ("gather_rows", lambda m, ids: torch.gather(m.emb.weight, 0, _rows_back(ids)), None, None),
    # of a computed table (its rank unknown at import time: moved by torch.movedim)
    ("gather_rows_computed", _gather_computed, None, None),
    ("getitem_negative_rows", lambda m, ids: m.emb.weight[5 - _pos(ids)], None, None),
]


def _types(declared: tuple[int, int] | None) -> dict[str, ss.Type]:
    b, t = ss.dims("b t")
    return {"ids": ss.Tensor((b, t), "int64", values=declared)}


def _runs(model: torch.nn.Module, t: int, declared: tuple[int, int] | None) -> bool:
    fills = (0,) if declared is None else (declared[0], 0, declared[1])
    try:
        with torch.no_grad():
            for v in fills:
                model(torch.full((B, t), v, dtype=torch.int64))
    except (IndexError, RuntimeError):  # gather's out-of-bounds index is a RuntimeError
        return False
    return True


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_verdicts_equal_eager_torch(case: Any) -> None:
    name, f, declared, act = case
    model = Indexed(f, act, direct="rows" in name)
    res = sst.infer(model, _types(declared))
    assert res.unresolved == [] and not res.import_errors, res.report()
    truth = {t: _runs(model, t, declared) for t in LENGTHS}
    if not any(truth.values()):
        assert res.status == "error", res.report()
        assert res.errors[0].code == "constraint-violated", res.report()
        return
    assert res.ok, res.report()
    wrong = {t: ok for t, ok in truth.items() if bool(res.valid_at({"b": B, "t": t})) != ok}
    assert wrong == {}, f"valid_at differs from eager torch at {wrong}; valid_when {res.valid_when()}"


def test_relu_guard_text() -> None:
    """``emb(relu(arange(t) - 3))``: positions past 12 read row 10 of 10."""
    res = sst.infer(Indexed(CASES[0][1]), _types(None))
    assert res.valid_when() == "t <= 13"
    why = res.why_invalid({"b": 2, "t": 14})
    assert "take of indices in [0, max(0, t - 4)] from axis 0" in why, why
    assert "needs `max(0, t - 4) <= 9`, which is false at t = 14" in why, why
    moved = "the indices, with entries in [0, max(0, t - 4)], are computed from "
    assert moved + "`arange(0, t, 1)`, with entries in [0, t - 1]" in why, why


def _index_node(res: Any) -> Any:
    """The expression of the node whose value indexes the embedding (the embedding's argument)."""
    node = next(n for n in res.fx_graph.nodes if n.op == "call_module" and n.target == "emb")
    return res.values[node.args[0].name]


@settings(max_examples=40, deadline=None)
@given(shift=st.integers(-6, 12), t=st.integers(1, 12), which=st.sampled_from(["relu", "abs", "clamp"]))
def test_range_of_matches_torch_values(shift: int, t: int, which: str) -> None:
    """``range_of`` the indices, at concrete ``t``, is exactly the least and greatest value torch
    computes (the functions of ``arange(t) - shift`` are exact on its range)."""
    fs: dict[str, Callable[..., Any]] = {
        "relu": lambda m, ids: torch.relu(_pos(ids) - shift),
        "abs": lambda m, ids: (_pos(ids) - shift).abs(),
        "clamp": lambda m, ids: (_pos(ids) - shift).clamp(min=0),
    }
    f = fs[which]
    model = Indexed(f)
    res = sst.infer(model, _types(None))
    r = res.range_of(_index_node(res))
    assert r is not None and r[0] is not None and r[1] is not None, (which, shift)
    values = f(model, torch.zeros(B, t, dtype=torch.int64))
    env = {ss.dim("t"): t, ss.dim("b"): B}
    lo, hi = int(r[0].subs(env)), int(r[1].subs(env))
    if which == "abs" and shift > 0:
        # the sign of arange(t) - s changes with t: for all t the least value is 0 (sound, not exact)
        assert lo == 0 <= int(values.min())
    else:
        assert lo == int(values.min()), (which, shift, t, r)
    assert hi == int(values.max()), (which, shift, t, r)


_CONSTANT_CASES = ("clamp_by_tensor_constant", "clamp_by_buffer", "rows_from_buffer")
EXPORTED = [c for c in CASES if c[0].startswith(_CONSTANT_CASES)]


@pytest.mark.parametrize("case", EXPORTED, ids=[c[0] for c in EXPORTED])
def test_exported_constant_values_equal_eager_torch(case: Any) -> None:
    """The same through ``torch.export``: buffers and lifted constants (``torch.tensor(9)`` in
    ``forward``) carry their entries there too."""
    name, f, declared, act = case
    model = Indexed(f, act, direct="rows" in name)
    t_dim = torch.export.Dim("t", min=2, max=64)
    ep = torch.export.export(
        model, (torch.zeros(B, 5, dtype=torch.int64),), dynamic_shapes={"ids": {1: t_dim}}
    )
    res = sst.infer(ep)
    assert not res.import_errors, res.report()
    program = res.report(program=True)
    assert "lifted_tensor" in program or "caps" in program or "cap:" in program, program
    truth = {t: _runs(model, t, declared) for t in LENGTHS if t >= 2}
    ids_type = res.type_of("ids")
    assert isinstance(ids_type, ss.TensorType) and isinstance(ids_type.shape, tuple)
    (t_sym,) = (d for d in ids_type.shape if d.constant_value is None)
    wrong = {t: ok for t, ok in truth.items() if bool(res.valid_at({t_sym: t})) != ok}
    assert wrong == {}, f"valid_at differs from eager torch at {wrong}; valid_when {res.valid_when()}"
