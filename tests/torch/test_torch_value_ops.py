"""Calls that keep a tensor's shape but not its entries (``flip``, ``roll``, ``sort``, ``cumsum``,
``fill_``, ``full_like``, ``zero_``, bitwise operators): the value symshape tracks for a small
integer tensor (a table of sizes, ``torch.tensor(x.shape)``) is torch's, or none.

Each case computes an index from such a tensor through one call and indexes with it, so the
value decides ``valid_at`` (an index must be below the axis's size). Traced with torch.fx (a
buffer of constants: ``torch.fx`` cannot trace ``torch.tensor(x.shape)``) and exported with
``torch.export`` (``torch.tensor`` of run-time sizes), then at every point of a small grid
``valid_at`` equals whether eager torch runs, and where it runs the shapes equal torch's (every
node for fx, the output for export).
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch
from torch.export import Dim, export

import symshape as ss
import symshape.torch as sst
from torch_zoo.oracle import (
    Spec,
    assert_verdicts,
    check_model,
    example_of,
    export_point,
    fn_module,
    substitute,
    types_of,
)

XY: dict[str, Spec] = {"x": (("b", "n", 2), "float32"), "y": (("t",), "float32")}
GRID = {"b": (1, 2, 3), "n": (1, 2, 3, 4, 5, 6, 7), "t": (1, 2, 3, 4, 5, 6, 7, 8)}
TABLE = (3, 0, 2, 1)


class WithTable(torch.nn.Module):
    """``f(table, x, y)`` of an input ``table`` annotated with its entries (``TABLE``)."""

    def __init__(self, f: Callable[..., torch.Tensor]) -> None:
        super().__init__()
        self.f = f

    def forward(self, x: torch.Tensor, y: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
        return self.f(table, x, y)


def _with_table(p: dict[str, int]) -> dict[str, torch.Tensor]:
    return {**example_of(XY, p), "table": torch.tensor(TABLE)}


TABLE_TYPE = ss.Tensor((len(TABLE),), "int64", value=TABLE)


def _pick(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """``x`` at ``index`` along its axis 1 (the index must be below ``n``)."""
    return x.relu().index_select(1, index)


def _sizes(x: torch.Tensor) -> torch.Tensor:
    """``x``'s sizes ``(b, n, 2)`` as an int64 tensor (run-time sizes when exported)."""
    return torch.tensor(x.relu().shape)


# (id, f(table, x, y)): `table` is (3, 0, 2, 1)
TRACED: list[tuple[str, Callable[..., torch.Tensor]]] = [
    ("flip", lambda tb, x, y: _pick(x, tb.flip(0)[:1])),
    ("flip_dims_kw", lambda tb, x, y: _pick(x, torch.flip(tb, dims=[0])[:2])),
    ("roll", lambda tb, x, y: _pick(x, tb.roll(1)[:1])),
    ("roll_back", lambda tb, x, y: _pick(x, torch.roll(tb, -1, 0)[1:2])),
    ("roll_past_the_length", lambda tb, x, y: _pick(x, tb.roll(6, 0)[:1])),
    ("sort_values", lambda tb, x, y: _pick(x, tb.sort().values[-1:])),
    ("sort_descending", lambda tb, x, y: _pick(x, tb.sort(descending=True)[0][-2:-1])),
    ("sort_indices", lambda tb, x, y: _pick(x, tb.sort()[1][:1])),
    ("argsort", lambda tb, x, y: _pick(x, tb.argsort(descending=True)[-2:])),
    ("cumsum", lambda tb, x, y: _pick(x, tb.cumsum(0)[1:3])),
    ("cumsum_int32", lambda tb, x, y: _pick(x, tb.int().cumsum(0)[1:2])),
    ("cumprod", lambda tb, x, y: _pick(x, (tb + 1).cumprod(0)[1:2] - 2)),
    ("fill_", lambda tb, x, y: _pick(x, tb.clone().fill_(5))),
    ("zero_", lambda tb, x, y: _pick(x, tb.clone().zero_() + 3)),
    ("full_like", lambda tb, x, y: _pick(x, torch.full_like(tb, 4)[:1])),
    ("and", lambda tb, x, y: _pick(x, tb & 6)),
    ("or", lambda tb, x, y: _pick(x, tb[1:] | 4)),
    ("xor", lambda tb, x, y: _pick(x, torch.bitwise_xor(tb, 5)[1:2])),
    ("invert", lambda tb, x, y: x.relu()[:, ~tb]),
    ("fmod", lambda tb, x, y: _pick(x, torch.fmod(tb - 5, 4) + 3)),
    ("div_trunc", lambda tb, x, y: _pick(x, torch.div(tb - 5, 2, rounding_mode="trunc") + 3)),
]

# (id, f(x, y)): `_sizes(x)` is (b, n, 2)
EXPORTED: list[tuple[str, Callable[..., torch.Tensor]]] = [
    ("flip", lambda x, y: _pick(x, _sizes(x).flip(0)[:1])),
    ("roll", lambda x, y: _pick(x, _sizes(x).roll(1)[:1])),
    ("roll_two", lambda x, y: _pick(x, _sizes(x).roll(2)[2:])),
    ("cumsum", lambda x, y: y.relu().index_select(0, _sizes(x).cumsum(0)[1:2])),
    ("fill_", lambda x, y: y.relu().index_select(0, _sizes(x).fill_(3))),
    ("full_like", lambda x, y: y.relu().index_select(0, torch.full_like(_sizes(x), 5))),
    ("and_constants", lambda x, y: y.relu().index_select(0, torch.tensor([3, 4]) & 6)),
    ("xor_constants", lambda x, y: y.relu().index_select(0, torch.tensor([3, 4]) ^ 1)),
]


def _points() -> list[dict[str, int]]:
    names = sorted(GRID)
    return [dict(zip(names, combo)) for combo in itertools.product(*(GRID[n] for n in names))]


def _runs(model: torch.nn.Module, p: dict[str, int]) -> bool:
    example = _with_table(p) if isinstance(model, WithTable) else example_of(XY, p)
    try:
        with torch.no_grad():
            model(**example)
    except (RuntimeError, IndexError):
        return False
    return True


@pytest.mark.parametrize("case", TRACED, ids=[c[0] for c in TRACED])
def test_traced_values_give_torchs_verdicts_and_shapes(case: Any) -> None:
    model = WithTable(case[1])
    res = sst.infer(model, {**types_of(XY), "table": TABLE_TYPE})
    assert res.errors == [] and res.unresolved == [], res.report()
    points = _points()
    truth = [_runs(model, p) for p in points]
    assert any(truth) and not all(truth)  # the index decides
    assert_verdicts(res, points, truth)
    for p in [p for p, t in zip(points, truth) if t][::5]:
        assert check_model(res, model, _with_table(p), p) == [], p


@pytest.mark.parametrize("case", EXPORTED, ids=[c[0] for c in EXPORTED])
def test_exported_values_give_torchs_verdicts_and_shapes(case: Any) -> None:
    model = fn_module(case[1], 2)
    points = _points()
    truth = [_runs(model, p) for p in points]
    assert any(truth) and not all(truth)
    base = export_point(points, truth)
    dynamic = {"x": {0: Dim.DYNAMIC, 1: Dim.DYNAMIC}, "y": {0: Dim.DYNAMIC}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ep = export(model, (), example_of(XY, base), dynamic_shapes=dynamic)
    res = sst.infer(ep, types_of(XY))
    assert res.errors == [] and res.unresolved == [], res.report()
    out = next(n for n in ep.graph.nodes if n.op == "output").args[0][0]
    assert_verdicts(res, points, truth)
    for p, t in zip(points, truth):
        if t:
            with torch.no_grad():
                want = tuple(model(**example_of(XY, p)).shape)
            got = res.type_of(out.name)
            assert isinstance(got, ss.TensorType) and got.ndim is not None
            assert tuple(substitute(d, p) for d in got.dims) == want, p


# (id, f(table, x, y)) whose result's dtype is torch's rule for the call (each was another one)
DTYPES: list[tuple[str, Callable[..., torch.Tensor]]] = [
    ("cumsum_int32", lambda tb, x, y: tb.int().cumsum(0)),
    ("cumsum_bool", lambda tb, x, y: (tb > 1).cumsum(0)),
    ("cumsum_dtype", lambda tb, x, y: tb.cumsum(0, dtype=torch.float32)),
    ("cumsum_in_place_int32", lambda tb, x, y: tb.int().cumsum_(0)),
    ("float_power", lambda tb, x, y: torch.float_power(tb, 2)),
    ("div_trunc_int", lambda tb, x, y: torch.div(tb, 2, rounding_mode="trunc")),
    ("sort_indices", lambda tb, x, y: x.relu().sort(1)[1]),
]


@pytest.mark.parametrize("case", DTYPES, ids=[c[0] for c in DTYPES])
def test_dtypes_and_shapes_are_torchs(case: Any) -> None:
    model = WithTable(case[1])
    res = sst.infer(model, {**types_of(XY), "table": TABLE_TYPE})
    assert res.errors == [] and res.unresolved == [], res.report()
    p = {"b": 2, "n": 3, "t": 4}
    with torch.no_grad():
        want = model(**_with_table(p))
    out = res.type_of("output")
    assert isinstance(out, ss.TensorType)
    assert out.dtype == str(want.dtype).removeprefix("torch."), (out, want.dtype)
    assert tuple(substitute(d, p) for d in out.dims) == tuple(want.shape)


def test_values_that_are_not_known_are_not_claimed() -> None:
    """A random fill, ``tril`` and a sort of entries that are not constants keep the shape and
    dtype, not the value."""
    model = WithTable(
        lambda tb, x, y: (
            torch.randint_like(tb, 9),
            tb.view(2, 2).tril(),
            (tb + x.relu().size(1)).sort().values,
        )
    )
    res = sst.infer(model, {**types_of(XY), "table": TABLE_TYPE})
    assert res.ok, res.report()
    (rand, tril, ordered) = res.type_of("output").fields
    assert rand == ss.Tensor((4,), "int64") and rand.value is None
    assert tril == ss.Tensor((2, 2), "int64")
    assert ordered == ss.Tensor((4,), "int64") and ordered.value is None
