"""``cumsum``'s value and range against numpy, and the importers' cumulative sums (torch's
``cumsum``, ONNX ``CumSum``/``CumProd``) against torch eager and onnx's reference evaluator.

A 0-d or 1-d tensor with a value (sizes, entries of either sign) summed along its axis, with
``exclusive`` and ``reverse``: every entry is known and equals numpy's at every substitution, and
the stated range holds every entry.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symshape as ss
from dim_strategies import signed_entries

n, m = ss.dims("n m")
SYMS = (n, m)


def entries(size: int) -> st.SearchStrategy[tuple[ss.Dim, ...]]:
    return signed_entries(SYMS, (size, size), offsets=(-5, 5))


def np_cumsum(a: np.ndarray[Any, Any], exclusive: bool, reverse: bool) -> np.ndarray[Any, Any]:
    x = a[::-1] if reverse else a
    s = np.cumsum(x) - (x if exclusive else 0)
    return np.asarray(s[::-1] if reverse else s)


def _at(d: ss.Dim, env: dict[ss.Dim, int]) -> int:
    return int(d.subs(env))


@settings(max_examples=80, deadline=None)
@given(
    st.integers(1, 5).flatmap(entries),
    st.booleans(),
    st.booleans(),
    st.sampled_from([0, -1]),
    st.integers(1, 7),
    st.integers(1, 7),
)
def test_value_and_range_are_numpys(
    v: tuple[ss.Dim, ...], exclusive: bool, reverse: bool, axis: int, nv: int, mv: int
) -> None:
    e = ss.ops.cumsum(ss.ops.int_tensor(v), axis, exclusive=exclusive, reverse=reverse)
    res = ss.infer(ss.Function([], e))
    assert res.ok, res.report()
    got = res.value_of(e)
    env = {n: nv, m: mv}
    want = np_cumsum(np.array([_at(d, env) for d in v]), exclusive, reverse)
    assert got is not None and not isinstance(got, ss.Dim)
    assert [_at(d, env) for d in got if d is not None] == want.tolist()
    r = res.range_of(e)
    assert r is not None and r[0] is not None and r[1] is not None
    assert _at(r[0], env) <= want.min() and want.max() <= _at(r[1], env)


@given(entries(1), st.booleans(), st.integers(1, 7))
def test_zero_d(v: tuple[ss.Dim, ...], exclusive: bool, nv: int) -> None:
    """A 0-d value is its own running sum (exclusive: 0)."""
    e = ss.ops.cumsum(ss.ops.int_tensor(v[0]), 0, exclusive=exclusive)
    res = ss.infer(ss.Function([], e))
    got = res.value_of(e)
    assert isinstance(got, ss.Dim)
    assert _at(got, {n: nv, m: nv}) == (0 if exclusive else _at(v[0], {n: nv, m: nv}))


def test_an_unknown_entry_hides_the_sums_after_it() -> None:
    """``(n, ?, m)`` sums to ``(n, ?, ?)``: an entry is known while the entries it sums are."""
    y = ss.var("y", ss.Tensor((3,), "int64"))  # entries unknown
    parts = [ss.ops.int_tensor((n,)), ss.ops.strided_slice(y, [0], [1]), ss.ops.int_tensor((m,))]
    for reverse, want in ((False, (n, None, None)), (True, (None, None, m))):
        z = ss.ops.cumsum(ss.ops.concatenate(parts), 0, reverse=reverse)
        res = ss.infer(ss.Function([y], z))
        assert res.value_of(z) == want


# ----------------------------------------------------------------------------------------------
# the importers


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")
@pytest.mark.parametrize("kind", ["int64", "int32", "bool", "dtype=int32", "inplace int32", "reversed"])
@settings(max_examples=15, deadline=None)
@given(tv=st.integers(1, 9))
def test_torch_cumsum_against_eager(kind: str, tv: int) -> None:
    """``torch.cumsum`` of a table of sizes of either sign (its value annotated): the value and
    dtype are eager torch's."""
    import torch

    import symshape.torch as sst

    def f(tb: torch.Tensor) -> torch.Tensor:
        if kind == "int32":
            return tb.int().cumsum(0)
        if kind == "bool":
            return (tb > 0).cumsum(0)
        if kind == "dtype=int32":
            return torch.cumsum(tb, 0, dtype=torch.int32)
        if kind == "inplace int32":
            return tb.int().cumsum_(-1)
        if kind == "reversed":
            return tb.flip(0).cumsum(0).flip(0)
        return torch.cumsum(tb, dim=0)

    class M(torch.nn.Module):  # type: ignore[misc]
        def forward(self, table: torch.Tensor) -> torch.Tensor:
            return f(table)

    t = ss.dim("t")
    table = (t - 5, ss.parse_dim("7"), ss.parse_dim("-7"), 9 - 2 * t)
    res = sst.infer(M(), {"table": ss.Tensor((4,), "int64", value=table)})
    assert res.ok, res.report()
    out = res.type_of("output")
    want = M()(torch.tensor([_at(d, {t: tv}) for d in table]))
    assert isinstance(out, ss.TensorType) and out.dtype == str(want.dtype).removeprefix("torch.")
    assert out.value is not None and not isinstance(out.value, ss.Dim), str(out)
    assert [_at(d, {t: tv}) for d in out.value if d is not None] == want.tolist(), str(out)


@pytest.mark.parametrize("op", ["CumSum", "CumProd"])
@pytest.mark.parametrize(("exclusive", "reverse"), [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_onnx_cumulative_of_sizes_against_the_reference(op: str, exclusive: int, reverse: int) -> None:
    """ONNX ``CumSum``/``CumProd`` of ``Shape(x) - 2`` (sizes of either sign): the value symshape
    infers is onnx's reference evaluator's at every size."""
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper
    from onnx.reference import ReferenceEvaluator

    import symshape.onnx as sso

    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Sub", ["s", "two"], ["a"]),
        helper.make_node(op, ["a", "axis"], ["y"], exclusive=exclusive, reverse=reverse),
    ]
    inits = [numpy_helper.from_array(np.array(v, np.int64), k) for k, v in (("two", 2), ("axis", 0))]
    g = helper.make_graph(
        nodes, "cum", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["A", "B", 3])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, None)], inits,
    )  # fmt: skip
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 26)])
    a, b = ss.dims("A B")
    res = sso.infer(model, dims={"A": a, "B": b})
    v = res.value_of("y")
    assert v is not None and not isinstance(v, ss.Dim) and None not in v, str(res.type_of("y"))
    ref = ReferenceEvaluator(model)
    for av, bv in ((1, 1), (2, 5), (4, 3), (7, 1)):
        (want,) = ref.run(None, {"x": np.zeros((av, bv, 3), np.float32)})
        assert [_at(d, {a: av, b: bv}) for d in v] == want.tolist(), (op, av, bv, [str(d) for d in v])
