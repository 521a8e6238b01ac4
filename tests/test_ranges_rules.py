"""Range rules of :mod:`symshape.ir.ranges` against numpy: a product by a size, cumulative sums,
a bool cast to a number, fills, float tensors with integer bounds.

Soundness is a property: for inputs with declared ranges (constants, drawn by hypothesis) and
concrete sizes, every entry numpy computes lies in the range symshape states with the sizes
substituted. Tightness is checked where the rule is exact (the extreme entries are reached).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symshape as ss

b, n, t = ss.dims("b n t")


def i64(v: Any) -> ss.Constant:
    return ss.const(np.array(v, "int64"))


def _size(z: ss.Expr) -> ss.Expr:
    """The 0-d exact value ``t`` (``z.shape[1]`` of ``z: (2, t)``)."""
    return ss.ops.take(ss.ops.shape_of(z), i64(1), axis=0)


def _half(x: ss.Expr) -> ss.Expr:
    """``cast(x, float32) + 0.5``: float entries that are not integers."""
    return ss.ops.add(ss.ops.cast(x, "float32"), ss.const(np.array(0.5, "float32")))


Build = Callable[[ss.Expr, ss.Expr], ss.Expr]  # (x: (b, n) ranged int64, z: (2, t) float32)
Numpy = Callable[[np.ndarray[Any, Any], int], np.ndarray[Any, Any]]  # (x, t)


@dataclass(frozen=True)
class Rule:
    name: str
    build: Build
    numpy: Numpy
    exact: bool = False  # with x = all lo or all hi, the stated bounds are reached


def _cumsum(axis: int, exclusive: bool, reverse: bool) -> Rule:
    def np_cumsum(a: np.ndarray[Any, Any], _t: int) -> np.ndarray[Any, Any]:
        x = np.flip(a, axis) if reverse else a
        s = np.cumsum(x, axis=axis)
        if exclusive:
            s = s - x
        return np.flip(s, axis) if reverse else s

    return Rule(
        f"cumsum axis={axis} exclusive={exclusive} reverse={reverse}",
        lambda x, z: ss.ops.cumsum(x, axis, exclusive=exclusive, reverse=reverse),
        np_cumsum,
        exact=True,
    )


RULES = [
    Rule("x * t", lambda x, z: ss.ops.multiply(x, _size(z)), lambda a, tt: a * tt, True),
    Rule("t * x", lambda x, z: ss.ops.multiply(_size(z), x), lambda a, tt: tt * a, True),
    Rule("x * -t", lambda x, z: ss.ops.multiply(x, ss.ops.negative(_size(z))), lambda a, tt: a * -tt, True),
    Rule("x * (t + 1) * 3",
         lambda x, z: ss.ops.multiply(ss.ops.multiply(x, ss.ops.add(_size(z), i64(1))), i64(3)),
         lambda a, tt: a * (tt + 1) * 3, True),
    Rule("relu(x) * arange(t)",
         lambda x, z: ss.ops.multiply(ss.ops.relu(ss.ops.expand_dims(x, -1)), ss.ops.arange(_size(z))),
         lambda a, tt: np.maximum(a, 0)[..., None] * np.arange(tt)),
    *(_cumsum(ax, ex, rv) for ax in (1, -1, 0) for ex in (False, True) for rv in (False, True)),
    Rule("cumsum of x * t", lambda x, z: ss.ops.cumsum(ss.ops.multiply(x, _size(z)), 1),
         lambda a, tt: np.cumsum(a * tt, axis=1), True),
    Rule("cast(x > 0)", lambda x, z: ss.ops.cast(ss.ops.greater(x, i64(0)), "int32"),
         lambda a, tt: (a > 0).astype("int32")),
    Rule("cumsum(cast(x != 0)) * cast(x != 0)",
         lambda x, z: ss.ops.multiply(ss.ops.cumsum(ss.ops.cast(ss.ops.not_equal(x, i64(0)), "int64"), 1),
                                      ss.ops.cast(ss.ops.not_equal(x, i64(0)), "int64")),
         lambda a, tt: np.cumsum(a != 0, axis=1) * (a != 0)),
    Rule("float: cumsum(cast(x)) - 1.5, cast back",
         lambda x, z: ss.ops.cast(ss.ops.subtract(ss.ops.cumsum(ss.ops.cast(x, "float32"), 1),
                                                  ss.const(np.array(1.5, "float32"))), "int64"),
         lambda a, tt: (np.cumsum(a.astype("float32"), axis=1) - np.float32(1.5)).astype("int64")),
    Rule("float: (cast(x) + 0.5) mod 3",
         lambda x, z: ss.ops.mod(_half(x), ss.const(np.array(3.0, "float32"))),
         lambda a, tt: np.mod(a.astype("float32") + np.float32(0.5), np.float32(3.0))),
    Rule("float: clip(cast(x) + 0.5)", lambda x, z: ss.ops.clip(_half(x), -1.5, 2.5),
         lambda a, tt: np.clip(a.astype("float32") + np.float32(0.5), -1.5, 2.5)),
    Rule("full(t)", lambda x, z: ss.ops.add(ss.ops.full(_size(z), (2, 3), "int64"), i64(1)),
         lambda a, tt: np.full((2, 3), tt + 1), True),
    Rule("ones_like", lambda x, z: ss.ops.cumsum(ss.ops.ones_like(x), 1),
         lambda a, tt: np.cumsum(np.ones_like(a), 1), True),
    Rule("constant_of_shape 4.0", lambda x, z: ss.ops.constant_of_shape(ss.ops.shape_of(x), 4.0, "float32"),
         lambda a, tt: np.full(a.shape, 4.0), True),
]  # fmt: skip


def _infer(rule: Rule, lo: int, hi: int) -> tuple[ss.InferenceResult, ss.Expr]:
    x = ss.var("x", ss.Tensor((b, n), "int64", values=(lo, hi)))
    z = ss.var("z", ss.Tensor((2, t), "float32"))
    out = rule.build(x, z)
    res = ss.infer(ss.Function([x, z], ss.Tuple([out, z])))
    assert res.status in ("ok", "guarded"), res.report()
    return res, out


def _bound(d: ss.Dim | None, env: dict[Any, int]) -> int | None:
    if d is None:
        return None
    v = d.subs(env)
    assert v.is_constant, (d, env)
    return int(v)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
@settings(max_examples=30, deadline=None)
@given(
    lo=st.integers(-4, 4),
    width=st.integers(0, 5),
    bb=st.integers(1, 3),
    nn=st.integers(1, 6),
    tt=st.integers(0, 5),
    seed=st.integers(0, 2**16),
)
def test_range_is_sound(rule: Rule, lo: int, width: int, bb: int, nn: int, tt: int, seed: int) -> None:
    """Every entry numpy computes from inputs inside the declared range lies in the stated one."""
    hi = lo + width
    res, out = _infer(rule, lo, hi)
    r = res.range_of(out)
    assert r is not None, f"{rule.name}: no range"
    env: dict[Any, int] = {b: bb, n: nn, t: tt}
    rng = np.random.default_rng(seed)
    samples = [rng.integers(lo, hi + 1, (bb, nn)), np.full((bb, nn), lo), np.full((bb, nn), hi)]
    for a in samples:
        got = rule.numpy(a.astype("int64"), tt)
        if got.size == 0:
            continue
        low, high = _bound(r[0], env), _bound(r[1], env)
        assert low is None or low <= got.min(), (rule.name, env, (lo, hi), r, got)
        assert high is None or got.max() <= high, (rule.name, env, (lo, hi), r, got)


@pytest.mark.parametrize("rule", [r for r in RULES if r.exact], ids=lambda r: r.name)
@pytest.mark.parametrize(("lo", "hi"), [(0, 3), (-2, 5), (-4, -1), (2, 2)])
def test_range_is_tight(rule: Rule, lo: int, hi: int) -> None:
    """Exact rules: the stated bounds are entries numpy computes (for all-lo / all-hi inputs)."""
    res, out = _infer(rule, lo, hi)
    r = res.range_of(out)
    assert r is not None and r[0] is not None and r[1] is not None, (rule.name, r)
    for bb, nn, tt in ((1, 1, 1), (2, 4, 3), (3, 5, 0)):
        env: dict[Any, int] = {b: bb, n: nn, t: tt}
        got = [rule.numpy(np.full((bb, nn), v, "int64"), tt) for v in (lo, hi)]
        entries = np.concatenate([g.reshape(-1) for g in got])
        assert _bound(r[0], env) == entries.min(), (rule.name, env, r)
        assert _bound(r[1], env) == entries.max(), (rule.name, env, r)


def test_unknown_sign_factor_gives_no_range() -> None:
    """A factor whose sign is not known (``t - 3``) scales nothing: no range rather than a wrong one."""
    x = ss.var("x", ss.Tensor((b, n), "int64", values=(0, 4)))
    z = ss.var("z", ss.Tensor((2, t), "float32"))
    out = ss.ops.multiply(x, ss.ops.subtract(_size(z), i64(3)))
    res = ss.infer(ss.Function([x, z], ss.Tuple([out, z])))
    assert res.range_of(out) is None


def test_cumsum_of_a_value_is_its_running_sums() -> None:
    """``cumsum`` is typed as its input; a valued input's value is summed (split offsets from
    sizes), and the range is that value's hull (tighter than the running sums' rule)."""
    x = ss.var("x", ss.Tensor((2, t), "float32"))
    s = ss.ops.shape_of(x)
    out = ss.ops.cumsum(s, 0)
    res = ss.infer(ss.Function([x], out))
    ty = res.type_of(out)
    assert isinstance(ty, ss.TensorType) and str(ty) == "Tensor[(2,), int64] = (2, t + 2)"
    assert res.range_of(out) == (ss.parse_dim("2"), t + 2)


def test_cumsum_bad_attribute() -> None:
    with pytest.raises(ss.SymshapeError) as e:
        ss.ops.cumsum(ss.var("x"), 1, exclusive=2)  # type: ignore[arg-type]
    assert e.value.code == "bad-attribute"


@pytest.mark.parametrize("join", ["concatenate", "stack"])
def test_take_of_a_column_has_that_columns_range(join: str) -> None:
    """``take(join([c0, c1], -1), j, axis=-1)`` by a constant ``j`` has column ``j``'s range, not
    the hull of both (GatherND's index columns: rows ``0..n-1`` and columns ``5..t+4``)."""
    z = ss.var("z", ss.Tensor((n, t), "float32"))
    rows = ss.ops.arange(ss.ops.take(ss.ops.shape_of(z), i64(0), axis=0))
    cols = ss.ops.add(ss.ops.arange(_size(z)), i64(5))
    r2, c2 = ss.ops.broadcast_to(ss.ops.expand_dims(rows, 1), (n, t)), ss.ops.broadcast_to(cols, (n, t))
    if join == "stack":
        grid = ss.ops.stack([r2, c2], axis=-1)
    else:
        grid = ss.ops.concatenate([ss.ops.expand_dims(r2, -1), ss.ops.expand_dims(c2, -1)], axis=2)
    first, second, both = (ss.ops.take(grid, i64(j), axis=-1) for j in (0, -1, [1, 0]))
    res = ss.infer(ss.Function([z], ss.Tuple([first, second, both])))
    assert res.ok, res.report()
    assert res.range_of(first) == (ss.parse_dim("0"), n - 1)
    assert res.range_of(second) == (ss.parse_dim("5"), t + 4)
    lo, hi = res.range_of(both) or (None, None)
    assert lo is not None and hi is not None
    for nv, tv in ((1, 1), (3, 9), (20, 2)):
        assert int(lo.subs({n: nv, t: tv})) == 0 and int(hi.subs({n: nv, t: tv})) == max(nv - 1, tv + 4)
