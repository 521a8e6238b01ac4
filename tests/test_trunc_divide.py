"""``trunc_divide`` and core ``divide`` of ints: division rounded toward zero (C's integer ``/``,
ONNX ``Div`` of integers, torch's ``div(rounding_mode="trunc")``), one value and range rule,
against numpy (``np.fix(a / b)``), torch and onnxruntime.

Values: entries ``a*sym + c`` of either sign divided by a constant or a symbolic divisor of
known sign must be known and equal numpy's truncated quotient at every substitution; a divisor of
unknown sign gives no value (never a wrong one). Ranges: for declared input ranges, every quotient
numpy computes lies in the stated range (and reaches it, for a constant divisor).
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
from symshape.encoding.dims import bounds

n, m, t = ss.dims("n m t")
SYMS = (n, m)


def i64(v: Any) -> ss.Constant:
    return ss.const(np.array(v, "int64"))


def _trunc(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """numpy's quotient rounded toward zero (exact for integers: by magnitudes, then the sign)."""
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


def entries(size: int) -> st.SearchStrategy[tuple[ss.Dim, ...]]:
    return signed_entries(SYMS, (size, size))


# divisors: constants of either sign, sizes of known sign, and one of unknown sign
DIVISORS = [ss.parse_dim(str(k)) for k in (1, 2, 3, 5, -1, -2, -4)] + [n + 1, -m, 2 * n, m - 3]


def _at(d: ss.Dim, env: dict[ss.Dim, int]) -> int:
    return int(d.subs(env))


INT_DIVS = [("trunc_divide", ss.ops.trunc_divide), ("divide", ss.ops.divide)]
"""The operators sharing the rule on ints (``divide`` truncates ints as C does)."""


@pytest.mark.parametrize(("opname", "op"), INT_DIVS, ids=[o[0] for o in INT_DIVS])
@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 4).flatmap(entries),
    st.sampled_from(DIVISORS),
    st.booleans(),
    st.integers(1, 8),
    st.integers(1, 8),
)
def test_value_is_numpy_truncation(
    opname: str, op: Any, a: tuple[ss.Dim, ...], d: ss.Dim, scalar: bool, nv: int, mv: int
) -> None:
    x = ss.ops.int_tensor(a)
    y = ss.ops.int_tensor(d) if scalar else ss.ops.int_tensor((d,))
    e = op(x, y)
    res = ss.infer(ss.Function([], e))
    assert res.ok, res.report()
    v = res.value_of(e)
    env = {n: nv, m: mv}
    sign_known = bounds(d)[0] >= 1 or bounds(d)[1] <= -1
    if not sign_known:
        return  # unknown (m - 3 may be 0): no value needed; a wrong one is caught below
    assert v is not None and not isinstance(v, ss.Dim)
    want = _trunc(np.array([_at(x, env) for x in a]), np.array(_at(d, env)))
    got = [_at(q, env) for q in v]
    assert got == want.tolist(), (a, d, env)
    fix = np.fix(np.array([_at(x, env) for x in a], "float64") / _at(d, env))  # numpy's own
    assert got == fix.astype("int64").tolist(), (a, d, env)


@pytest.mark.parametrize(("opname", "op"), INT_DIVS, ids=[o[0] for o in INT_DIVS])
@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3).flatmap(entries), st.integers(1, 8), st.integers(1, 8))
def test_unknown_sign_divisor_value_is_never_wrong(
    opname: str, op: Any, a: tuple[ss.Dim, ...], nv: int, mv: int
) -> None:
    d = m - 3
    e = op(ss.ops.int_tensor(a), ss.ops.int_tensor(d))
    res = ss.infer(ss.Function([], e))
    v = res.value_of(e)
    env = {n: nv, m: mv}
    if v is None or mv == 3:
        return
    want = _trunc(np.array([_at(x, env) for x in a]), np.array(mv - 3))
    assert [None if q is None else _at(q, env) for q in v] == want.tolist()


def test_divide_of_ints_is_trunc_divide() -> None:
    """Core ``divide`` of ints has ``trunc_divide``'s value for a dividend of unknown sign too
    (it was valueless there); of floats it has no range (``7.0 / 2`` is not truncated)."""
    a = ss.ops.int_tensor(n - 5)
    for op in (ss.ops.divide, ss.ops.trunc_divide):
        e = op(a, i64(2))
        res = ss.infer(ss.Function([], e))
        assert str(res.value_of(e)) == "max(0, n - 5)//2 - max(0, -n + 5)//2"
    x = ss.var("x", ss.Tensor((2, 3), "int64", values=(0, 7)))
    q = ss.ops.divide(ss.ops.cast(x, "float32"), ss.const(np.array(2.0, "float32")))
    assert ss.infer(ss.Function([x], q)).range_of(q) is None


def test_float_quotient_is_truncated_in_type_only() -> None:
    x = ss.var("x", ss.Tensor((n, 3), "float32"))
    e = ss.ops.trunc_divide(x, ss.const(np.array(2.0, "float32")))
    res = ss.infer(ss.Function([x], e))
    assert str(res.type_of(e)) == "Tensor[(n, 3), float32]"


# ----------------------------------------------------------------------------------------------
# ranges


def _size(z: ss.Expr) -> ss.Expr:
    return ss.ops.take(ss.ops.shape_of(z), i64(1), axis=0)


RANGE_DIVISORS: list[tuple[str, Any, Any]] = [
    *((f"{k}", (lambda z, k=k: i64(k)), (lambda tt, k=k: k)) for k in (1, 2, 3, -1, -3)),
    ("t + 1", lambda z: ss.ops.add(_size(z), i64(1)), lambda tt: tt + 1),
    ("-t", lambda z: ss.ops.negative(_size(z)), lambda tt: -tt),
]


@pytest.mark.parametrize(("name", "build", "value"), RANGE_DIVISORS, ids=[r[0] for r in RANGE_DIVISORS])
@pytest.mark.parametrize(
    ("floating", "op"),
    [(False, ss.ops.trunc_divide), (True, ss.ops.trunc_divide), (False, ss.ops.divide)],
    ids=["int", "float", "int-divide"],
)
@settings(max_examples=20, deadline=None)
@given(lo=st.integers(-9, 9), width=st.integers(0, 9), tt=st.integers(1, 5), seed=st.integers(0, 2**16))
def test_range_is_sound(
    name: str, build: Any, value: Any, floating: bool, op: Any, lo: int, width: int, tt: int, seed: int
) -> None:
    hi = lo + width
    x = ss.var("x", ss.Tensor((2, 3), "int64", values=(lo, hi)))
    z = ss.var("z", ss.Tensor((2, t), "float32"))
    num: ss.Expr = ss.ops.cast(x, "float32") if floating else x
    den = build(z)
    den = ss.ops.cast(den, "float32") if floating else den
    out = op(num, den)
    res = ss.infer(ss.Function([x, z], ss.Tuple([out, z])))
    r = res.range_of(out)
    assert r is not None and r[0] is not None and r[1] is not None, (name, r)
    low, high = int(r[0].subs({t: tt})), int(r[1].subs({t: tt}))
    rng = np.random.default_rng(seed)
    c = value(tt)
    for a in (rng.integers(lo, hi + 1, (2, 3)), np.full((2, 3), lo), np.full((2, 3), hi)):
        got = np.trunc(a.astype("float32") / np.float32(c)) if floating else _trunc(a, np.array(c))
        assert low <= got.min() and got.max() <= high, (name, (lo, hi), tt, (low, high), got)
    if not floating:  # monotone in the dividend: the bounds are reached at lo and hi
        ends = sorted(int(_trunc(np.array(v), np.array(c))) for v in (lo, hi))
        assert (low, high) == tuple(ends), (name, (lo, hi), tt)


# ----------------------------------------------------------------------------------------------
# the importers


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")
@settings(max_examples=30, deadline=None)
@given(st.sampled_from([1, 2, 3, -1, -2, -5]), st.integers(1, 12))
def test_torch_trunc_division_against_eager(c: int, tv: int) -> None:
    """``torch.div(table, c, rounding_mode="trunc")`` of a table of sizes of either sign (its
    value annotated), against torch eager at the table's entries."""
    import torch

    import symshape.torch as sst

    class M(torch.nn.Module):  # type: ignore[misc]
        def forward(self, table: torch.Tensor) -> torch.Tensor:
            return torch.div(table, c, rounding_mode="trunc")

    entries = (t - 5, ss.parse_dim("7"), ss.parse_dim("-7"), 9 - 2 * t)
    res = sst.infer(M(), {"table": ss.Tensor((4,), "int64", value=entries)})
    assert res.ok, res.report()
    v = res.type_of("output").value
    assert v is not None and not isinstance(v, ss.Dim)
    want = M()(torch.tensor([int(e.subs({t: tv})) for e in entries]))
    assert [int(q.subs({t: tv})) for q in v] == want.tolist()


@pytest.mark.skipif(importlib.util.find_spec("onnxruntime") is None, reason="needs onnxruntime")
def test_onnx_div_of_a_size_against_onnxruntime() -> None:
    """ONNX ``Div`` of int64 sizes ``Shape(x)[0] - k`` by constants of either sign: symshape's value
    is onnxruntime's at every size."""
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    import symshape.onnx as sso

    def c(name: str, v: Any) -> Any:
        return numpy_helper.from_array(np.array(v, dtype=np.int64), name)

    for k in (-3, 0, 4, 7):
        for d in (1, 2, 3, -2, -5):
            nodes = [
                helper.make_node("Shape", ["x"], ["s"]),
                helper.make_node("Sub", ["s", "k"], ["a"]),
                helper.make_node("Div", ["a", "d"], ["q"]),
            ]
            g = helper.make_graph(
                nodes, "div", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])],
                [helper.make_tensor_value_info("q", TensorProto.INT64, None)], [c("k", k), c("d", d)],
            )  # fmt: skip
            model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
            big = ss.dim("N")
            res = sso.infer(model, dims={"N": big})
            v = res.value_of("q")
            assert v is not None and not isinstance(v, ss.Dim), (k, d)
            sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
            for nv in range(1, 12):
                (want,) = sess.run(None, {"x": np.zeros(nv, np.float32)})
                assert [int(e.subs({big: nv})) for e in v] == want.tolist(), (k, d, nv)
