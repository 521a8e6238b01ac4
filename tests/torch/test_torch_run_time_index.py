"""Run-time sizes against eager torch: ``expand`` by them (one way, as torch: an axis of size 1
grows to any size, any other stays) and integer indices by them (``x[:, -t]``, ``x.select(1, t)``:
Python's bounds ``-n <= i < n``).

Each function is imported at symbolic sizes (traced with torch.fx, and exported with
``torch.export``), then at every point of a small grid ``valid_at`` equals whether eager torch
runs, and where it runs every node's shape equals torch's (fx) or the output's (export). ``t`` is
the size of a second input ``y``; ``y.relu().size(0)`` makes it a run-time shape value (only
inference knows it), ``y.shape[0]`` the annotation's dimension.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
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
GRID = {"b": (1, 2, 3), "n": (1, 2, 3, 4), "t": (1, 2, 3, 4, 5)}


def _rt(y: torch.Tensor) -> Any:
    """``y``'s size as a run-time shape value (the size of a computed tensor)."""
    return y.relu().size(0)


# (id, function of x and y)
EXPAND: list[tuple[str, Callable[..., Any]]] = [
    ("lead_run_time", lambda x, y: x.relu().expand(_rt(y), -1, -1)),
    ("lead_run_time_of_size1", lambda x, y: x[:1].expand(_rt(y), -1, -1)),
    ("lead_dim_of_computed", lambda x, y: x.relu().expand(y.shape[0], -1, -1)),
    ("new_axis_run_time", lambda x, y: x.relu().expand(2, _rt(y), -1, -1)),
    ("middle_run_time", lambda x, y: x.relu()[:, :1].expand(-1, _rt(y), -1)),
    ("middle_run_time_no_keep", lambda x, y: x.relu().expand(x.size(0), _rt(y), 2)),
    ("size_tuple", lambda x, y: x.relu().expand(x.new_zeros(_rt(y), 1, 2).relu().size())),
    ("sum_of_sizes", lambda x, y: x.relu()[:, :1].expand(-1, _rt(y) + x.relu().size(1), -1)),
    ("difference_of_sizes", lambda x, y: x.relu().expand(-1, _rt(y) - 1, -1)),
]

INDEX: list[tuple[str, Callable[..., Any]]] = [
    ("neg_run_time", lambda x, y: x.relu()[:, -_rt(y)]),
    ("pos_run_time", lambda x, y: x.relu()[:, _rt(y)]),
    ("neg_dim", lambda x, y: x[:, -y.shape[0]]),
    ("pos_dim", lambda x, y: x[:, y.shape[0]]),
    ("pos_dim_minus_one", lambda x, y: x[:, y.shape[0] - 1]),
    ("neg_after_ellipsis", lambda x, y: x.relu()[..., -_rt(y), :]),
    ("with_none_and_int", lambda x, y: x.relu()[None, 0, -_rt(y), None]),
    ("first_axis", lambda x, y: x.relu()[-_rt(y)]),
    ("and_slice_from_end", lambda x, y: x.relu()[-_rt(y) :, -_rt(y)]),
    ("select_neg", lambda x, y: x.relu().select(1, -_rt(y))),
    ("select_dim", lambda x, y: x.select(1, y.shape[0] - 2)),
]

CASES = EXPAND + INDEX

# torch.export specialises these at any valid example (not a question for symshape): a one-way
# expand of the batch holds only where b == 1 or b == t (export fixes b, or ties it to t), and
# `expand(-1, t - 1, -1)` of an axis n holds only where n == 1 or n == t - 1 (export ties t to n)
SPECIALISED_BY_EXPORT = {
    "lead_run_time",
    "lead_dim_of_computed",
    "new_axis_run_time",
    "size_tuple",
    "difference_of_sizes",
}
EXPORTED = [c for c in CASES if c[0] not in SPECIALISED_BY_EXPORT]


def _points() -> list[dict[str, int]]:
    names = sorted(GRID)
    return [dict(zip(names, combo)) for combo in itertools.product(*(GRID[n] for n in names))]


def _runs(model: torch.nn.Module, example: dict[str, torch.Tensor]) -> bool:
    try:
        with torch.no_grad():
            model(**example)
    except (RuntimeError, IndexError):
        return False
    return True


def _verdicts_agree(res: Any, model: torch.nn.Module, points: list[dict[str, int]]) -> list[Any]:
    """The points where ``valid_at`` differs from eager torch."""
    return [p for p in points if bool(res.valid_at(p)) != _runs(model, example_of(XY, p))]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_traced_verdicts_and_shapes_equal_eager_torch(case: Any) -> None:
    _, f = case
    model = fn_module(f, 2)
    res = sst.infer(model, types_of(XY))
    assert res.errors == [] and res.unresolved == [], res.report()
    points = _points()
    truth = [_runs(model, example_of(XY, p)) for p in points]
    assert any(truth)
    assert_verdicts(res, points, truth)
    for p in [p for p, t in zip(points, truth) if t][::7]:
        assert check_model(res, model, example_of(XY, p), p) == [], p


@pytest.mark.parametrize("case", EXPORTED, ids=[c[0] for c in EXPORTED])
def test_exported_verdicts_and_shapes_equal_eager_torch(case: Any) -> None:
    _, f = case
    model = fn_module(f, 2)
    points = _points()
    truth = [_runs(model, example_of(XY, p)) for p in points]
    base = export_point(points, truth)
    dynamic = {"x": {0: Dim.DYNAMIC, 1: Dim.DYNAMIC}, "y": {0: Dim.DYNAMIC}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ep = export(model, (), example_of(XY, base), dynamic_shapes=dynamic)
    res = sst.infer(ep, types_of(XY))
    assert res.errors == [] and res.unresolved == [], res.report()
    out = next(n for n in ep.graph.nodes if n.op == "output").args[0][0]
    for p, t in zip(points, truth):
        assert bool(res.valid_at(p)) == t, (p, res.valid_when())
        if t:
            with torch.no_grad():
                want = tuple(model(**example_of(XY, p)).shape)
            got = res.type_of(out.name)
            assert isinstance(got, ss.TensorType) and got.ndim is not None
            assert tuple(substitute(d, p) for d in got.dims) == want, p


def test_expand_never_shrinks() -> None:
    """``x.expand(t, -1, -1)`` with a run-time ``t``: torch requires ``b == 1 or b == t`` (a run-time
    1 against a batch of 3 raises); the both-ways broadcast would have accepted it."""
    model = fn_module(EXPAND[0][1], 2)
    res = sst.infer(model, types_of(XY))
    assert res.status == "guarded", res.report()
    assert not res.valid_at({"b": 3, "n": 2, "t": 1})
    assert res.valid_at({"b": 1, "n": 2, "t": 3}) and res.valid_at({"b": 3, "n": 2, "t": 3})
    why = res.why_invalid({"b": 3, "n": 2, "t": 1})
    assert "broadcast_to needs `b == 1 or b == t`, which is false at b = 3, t = 1" in why, why
    assert "`expand.target` is `Tensor[(3,), int64] = (t, n, 2)`" in why, why
    assert res.type_of("expand") == ss.Tensor(ss.dims("t n") + (2,), "float32")
    assert str(res.valid_when()) == "b == 1 or b == t"


def test_expand_of_a_constant_size_one_way_is_an_error() -> None:
    """A run-time size that is a known 1 against a size of 3: an error, as torch's."""
    model = fn_module(lambda x, y: x.relu().expand(y.relu()[:1].size(0), -1), 2)
    specs: dict[str, Spec] = {"x": ((3, 2), "float32"), "y": (("t",), "float32")}
    with pytest.raises(RuntimeError):
        model(torch.zeros(3, 2), torch.zeros(4))
    res = sst.infer(model, types_of(specs))
    assert res.status == "error", res.report()
    assert res.errors[0].code == "not-broadcastable", res.report()


def test_negative_index_guard_is_pythons() -> None:
    """``x[:, -t]`` needs ``t <= n`` (sizes are at least 1 unless declared otherwise); ``x[:, t]``
    needs ``t < n``; an index out of range is an error where the sizes are known."""
    b = ss.dim("b")
    neg = sst.infer(fn_module(INDEX[0][1], 2), types_of(XY))
    pos = sst.infer(fn_module(INDEX[1][1], 2), types_of(XY))
    env = {"b": 2, "n": 3}
    assert [neg.valid_at({**env, "t": v}) for v in (1, 3, 4)] == [True, True, False]
    assert [pos.valid_at({**env, "t": v}) for v in (1, 2, 3)] == [True, True, False]
    out = neg.type_of("getitem")
    assert out == ss.Tensor((b, 2), "float32")
    known_sizes: dict[str, Spec] = {"x": ((2, 3, 2), "float32"), "y": ((4,), "float32")}
    known = sst.infer(fn_module(INDEX[0][1], 2), types_of(known_sizes))
    assert known.status == "error", known.report()
    (err,) = known.errors
    assert err.message.startswith("take of indices in [-4, -4] from axis 1"), err.message


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 9),
    t=st.integers(1, 12),
    case=st.sampled_from([c for c in INDEX if "dim" not in c[0]]),
)
def test_index_bounds_property(n: int, t: int, case: Any) -> None:
    """At any sizes, a run-time index's verdict is eager torch's (results cached per case)."""
    res = _inferred(case[0])
    model = fn_module(case[1], 2)
    p = {"b": 2, "n": n, "t": t}
    assert bool(res.valid_at(p)) == _runs(model, example_of(XY, p)), (p, res.valid_when())


_CACHE: dict[str, Any] = {}


def _inferred(name: str) -> Any:
    if name not in _CACHE:
        f = dict(CASES)[name]
        _CACHE[name] = sst.infer(fn_module(f, 2), types_of(XY))
    return _CACHE[name]


# x[..., -t:] and x[..., :-t]: the sizes read min(n, t) and n - min(n, t) (clamped at 0)
TAILS: list[tuple[str, Callable[..., Any], str]] = [
    ("last_run_time", lambda x, y: x.relu()[:, -_rt(y) :], "min(n, t)"),
    ("last_dim", lambda x, y: x[:, -y.shape[0] :], "min(n, t)"),
    ("all_but_last_run_time", lambda x, y: x.relu()[:, : -_rt(y)], "max(0, n - min(n, t))"),
    ("all_but_last_dim", lambda x, y: x[:, : -y.shape[0]], "max(0, n - min(n, t))"),
    ("last_two_axes", lambda x, y: x.relu()[-_rt(y) :, -y.shape[0] :], "min(n, t)"),
]


@pytest.mark.parametrize("case", TAILS, ids=[c[0] for c in TAILS])
def test_tail_slices_print_simplified_and_equal_eager_torch(case: Any) -> None:
    name, f, size = case
    model = fn_module(f, 2)
    res = sst.infer(model, types_of(XY))
    assert res.status == "ok", res.report()
    node = [n for n in res.fx_graph.nodes if n.op == "call_function"][-1]
    out = res.type_of(node.name)
    assert isinstance(out, ss.TensorType)
    assert str(out.dims[1]) == size, out
    if name == "last_two_axes":
        assert str(out.dims[0]) == "min(b, t)", out
    for p in _points()[::3]:
        assert check_model(res, model, example_of(XY, p), p) == [], p


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 7), t=st.integers(0, 9), last=st.booleans())
def test_tail_slices_with_a_size_that_may_be_zero(n: int, t: int, last: bool) -> None:
    """With ``t`` declared ``>= 0``: ``x[:, -0:]`` is all of ``x`` and ``x[:, :-0]`` none of it
    (Python's ``-0`` is 0), as torch computes."""
    res = _tail_inferred(last)
    node = [nd for nd in res.fx_graph.nodes if nd.op == "call_function"][-1]
    out = res.type_of(node.name)
    assert isinstance(out, ss.TensorType)
    x = torch.zeros(2, n, 2)
    want = (x[:, -t:] if last else x[:, :-t]).shape
    env = {ss.dim("b"): 2, ss.dim("n"): n, ss.dim("t", min=0): t}
    assert tuple(int(d.subs(env)) for d in out.dims) == tuple(want), (n, t, out)


def _tail_inferred(last: bool) -> Any:
    key = f"tail{last}"
    if key not in _CACHE:
        f = (lambda x, y: x[:, -y.shape[0] :]) if last else (lambda x, y: x[:, : -y.shape[0]])
        b, n, t = ss.dim("b"), ss.dim("n"), ss.dim("t", min=0)
        types = {"x": ss.Tensor((b, n, 2), "float32"), "y": ss.Tensor((t,), "float32")}
        _CACHE[key] = sst.infer(fn_module(f, 2), types)
    return _CACHE[key]
