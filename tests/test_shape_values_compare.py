"""Comparisons, ``where`` and bool casts of shape values that bounds do not decide: each entry is an
exact 0/1 dimension expression (``a == b``: ``1 - min(1, max(0, a - b, b - a))``), and ``where``
with such an entry picks ``c*x + (1 - c)*y``. Checked against numpy at random sizes, and on the
grouped-query-attention pattern of ONNX's ``Attention`` function body (the interleave factor
``where(q != kv and q % kv == 0, q // kv, 1)``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symshape as ss
from symshape.encoding.dims import bounds
from symshape.relations.values import EXACT_COMPARE, compare_entry, step

a, b, c = ss.dims("a b c")
SYMS = (a, b, c)

settings.register_profile("shape_values_compare", max_examples=80, deadline=None)
settings.load_profile("shape_values_compare")

_NP = {
    "equal": np.equal,
    "not_equal": np.not_equal,
    "less": np.less,
    "less_equal": np.less_equal,
    "greater": np.greater,
    "greater_equal": np.greater_equal,
}

envs = st.fixed_dictionaries({"a": st.integers(1, 9), "b": st.integers(1, 9), "c": st.integers(1, 9)})


def _at(d: ss.Dim, env: dict[str, int]) -> int:
    return int(d.subs({s: env[str(s)] for s in SYMS}))


@st.composite
def entry(draw: Any) -> ss.Dim:
    """A symbol, a linear form that may be negative, a product or quotient of symbols, or a
    constant."""
    kind = draw(st.integers(0, 3))
    x = draw(st.sampled_from(SYMS))
    y = draw(st.sampled_from(SYMS))
    if kind == 0:
        return ss.parse_dim(str(draw(st.integers(-5, 9))))
    if kind == 1:
        return draw(st.integers(-2, 3).filter(lambda v: v != 0)) * x + draw(st.integers(-4, 4))
    if kind == 2:
        return x * y - draw(st.integers(0, 3))
    return x // y + x % y


def _value(e: ss.Expr) -> Any:
    res = ss.infer(ss.Function([], e))
    assert res.ok, res.report()
    return res.value_of(e)


# ----------------------------------------------------------------------------------------------
# the exact forms


@pytest.mark.parametrize(
    ("op", "want"),
    [
        ("equal", "-min(1, max(0, -a + b, a - b)) + 1"),
        ("not_equal", "min(1, max(0, -a + b, a - b))"),
        ("less", "min(1, max(0, -a + b))"),
        ("less_equal", "min(1, max(0, -a + b + 1))"),
        ("greater", "min(1, max(0, a - b))"),
        ("greater_equal", "min(1, max(0, a - b + 1))"),
    ],
)
def test_exact_form_of_each_comparison(op: str, want: str) -> None:
    got = compare_entry(op, a, b)
    assert str(got) == want
    assert bounds(got) == (0, 1)  # a 0/1 value the bounds see as one
    for x in range(-3, 4):
        for y in range(-3, 4):
            assert int(got.subs({a: x, b: y})) == int(_NP[op](x, y)), (op, x, y)


@pytest.mark.parametrize(
    ("op", "x", "y", "want"),
    [
        ("equal", a, a, "1"),
        ("equal", a + 1, a, "0"),
        ("less", a, a + 1, "1"),
        ("greater_equal", a, ss.parse_dim("0"), "1"),  # a >= 1
        ("less_equal", a, ss.parse_dim("0"), "0"),
        ("not_equal", a * b, ss.parse_dim("0"), "1"),
    ],
)
def test_decided_comparisons_stay_constants(op: str, x: ss.Dim, y: ss.Dim, want: str) -> None:
    assert str(compare_entry(op, x, y)) == want


@given(entry(), entry(), st.sampled_from(sorted(EXACT_COMPARE)), envs)
def test_exact_compare_is_numpy(x: ss.Dim, y: ss.Dim, op: str, env: dict[str, int]) -> None:
    got = compare_entry(op, x, y)
    lo, hi = bounds(got)
    assert 0 <= lo and hi <= 1
    assert _at(got, env) == int(_NP[op](_at(x, env), _at(y, env)))


@given(entry(), envs)
def test_step(x: ss.Dim, env: dict[str, int]) -> None:
    assert _at(step(x), env) == (1 if _at(x, env) >= 1 else 0)


# ----------------------------------------------------------------------------------------------
# through the operators


@given(st.data(), envs)
def test_where_of_symbolic_comparisons_is_numpy(data: Any, env: dict[str, int]) -> None:
    """``where(op(u, v), x, y)`` of four valued vectors: every entry known and numpy's."""
    k = data.draw(st.integers(1, 4))
    u, v, x, y = (tuple(data.draw(entry()) for _ in range(k)) for _ in range(4))
    op = data.draw(st.sampled_from(sorted(_NP)))
    cond = getattr(ss.ops, op)(ss.ops.int_tensor(u), ss.ops.int_tensor(v))
    w = ss.ops.where(cond, ss.ops.int_tensor(x), ss.ops.int_tensor(y))
    arr = {name: np.array([_at(d, env) for d in t], "int64") for name, t in zip("uvxy", (u, v, x, y))}
    want = np.where(_NP[op](arr["u"], arr["v"]), arr["x"], arr["y"])
    got = _value(w)
    assert isinstance(got, tuple) and len(got) == k
    assert [_at(g, env) for g in got] == want.tolist()


@given(st.data(), envs)
def test_logic_on_bool_values_is_numpy(data: Any, env: dict[str, int]) -> None:
    """ONNX's ``And``/``Or`` on bools are ``minimum``/``maximum``, ``Not`` is ``1 - c`` through
    ``where``; cast of an int value to bool is ``!= 0``; all exact."""
    u, v, x = (data.draw(entry()) for _ in range(3))
    ux, vx, xx = (ss.ops.int_tensor((d,)) for d in (u, v, x))
    p = ss.ops.less(ux, vx)
    q = ss.ops.cast(xx, "bool")
    ue, ve, xe = (_at(d, env) for d in (u, v, x))
    for e, want in (
        (ss.ops.minimum(p, q), (ue < ve) and xe != 0),
        (ss.ops.maximum(p, q), (ue < ve) or xe != 0),
    ):
        got = _value(e)
        assert isinstance(got, tuple) and _at(got[0], env) == int(want)


def _gqa(q_heads: ss.Dim, kv_heads: ss.Dim) -> tuple[ss.Var, ss.Expr]:
    """The interleave factor of ONNX's ``Attention`` body (opset 23) and the reshape it feeds."""
    k = ss.var("K", ss.Tensor((2, kv_heads, 6, 8), "float32"))
    q_n = ss.ops.int_tensor((q_heads,))
    kv_n = ss.ops.strided_slice(ss.ops.shape_of(k), begin=[1], end=[2])
    zero = ss.ops.int_tensor((0,))
    not_same = ss.ops.not_equal(q_n, kv_n)
    divides = ss.ops.equal(ss.ops.mod(q_n, kv_n), zero)
    gqa = ss.ops.minimum(not_same, divides)
    factor = ss.ops.where(gqa, ss.ops.floor_divide(q_n, kv_n), ss.ops.int_tensor((1,)))
    return k, factor


@pytest.mark.parametrize(("q", "kv"), [(9, 3), (4, 4), (8, 2), (6, 1), (5, 5)])
def test_gqa_interleave_factor(q: int, kv: int) -> None:
    """Two head counts that are separate symbols: the factor is exact (``q // kv`` when ``kv``
    divides ``q`` and they differ, else 1) at every size."""
    qh, kvh = ss.dims("qh kvh")
    k, factor = _gqa(qh, kvh)
    res = ss.infer(ss.Function([k], factor))
    assert res.ok, res.report()
    got = res.value_of(factor)
    assert isinstance(got, tuple) and len(got) == 1 and got[0] is not None
    want = q // kv if q != kv and q % kv == 0 else 1
    assert int(got[0].subs({qh: q, kvh: kv})) == want


@given(st.data(), envs)
def test_core_logical_operators_are_numpy(data: Any, env: dict[str, int]) -> None:
    """``logical_and``/``logical_or``/``logical_not`` of bool values (comparisons) and of int
    values (an entry counts as ``!= 0``): every entry known and numpy's."""
    k = data.draw(st.integers(1, 3))
    u, v, x = (tuple(data.draw(entry()) for _ in range(k)) for _ in range(3))
    ut, vt, xt = (ss.ops.int_tensor(t) for t in (u, v, x))
    ua, va, xa = (np.array([_at(d, env) for d in t], "int64") for t in (u, v, x))
    p = ss.ops.less(ut, vt)
    for e, want in (
        (ss.ops.logical_and(p, ss.ops.cast(xt, "bool")), np.logical_and(ua < va, xa)),
        (ss.ops.logical_or(p, ss.ops.cast(xt, "bool")), np.logical_or(ua < va, xa)),
        (ss.ops.logical_not(p), np.logical_not(ua < va)),
        (ss.ops.logical_and(ut, xt), np.logical_and(ua, xa)),
        (ss.ops.logical_not(xt), np.logical_not(xa)),
    ):
        got = _value(e)
        assert isinstance(got, tuple) and len(got) == k
        assert [_at(g, env) for g in got] == want.astype("int64").tolist()
