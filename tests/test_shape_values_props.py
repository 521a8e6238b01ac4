"""Shape values against numpy: for every value-computing operator, random symbolic values (shapes
of tensors through ``shape_of``, literal int tensors with symbolic entries) and random index
arguments; after substituting random values for the symbols, each known entry of the inferred
value must equal numpy's computation on the ``np.shape``-derived arrays (an unknown entry is
allowed — never a wrong one — except where the rule says the entry is known)."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import symshape as ss
from dim_strategies import signed_entries
from symshape.encoding.dims import bounds

n, m = ss.dims("n m")
SYMS = (n, m)

settings.register_profile("shape_values", max_examples=60, deadline=None)
settings.load_profile("shape_values")


def entries(min_size: int = 1, max_size: int = 4) -> st.SearchStrategy[tuple[ss.Dim, ...]]:
    """Entries that may be negative: ``a*sym + b`` or constants."""
    return signed_entries(SYMS, (min_size, max_size), consts=(-6, 9), coefs=(-2, 3), offsets=(-4, 4))


@st.composite
def shapes(draw: Any) -> tuple[ss.Dim, ...]:
    k = draw(st.integers(1, 4))
    return tuple(
        draw(st.sampled_from([n, m, n + 1, 2 * m]))
        if draw(st.booleans())
        else ss.parse_dim(str(draw(st.integers(1, 5))))
        for _ in range(k)
    )


envs = st.fixed_dictionaries({"n": st.integers(1, 7), "m": st.integers(1, 7)})


def _at(d: ss.Dim, env: dict[str, int]) -> int:
    return int(d.subs({n: env["n"], m: env["m"]}))


def _arr(v: Any, env: dict[str, int]) -> np.ndarray:
    if isinstance(v, ss.Dim):
        return np.array(_at(v, env), "int64")
    return np.array([_at(d, env) for d in v], "int64")


def _value(e: ss.Expr) -> Any:
    res = ss.infer(ss.Function([], e))
    assert res.ok, res.report()
    return res.value_of(e)


def _check(got: Any, want: np.ndarray, env: dict[str, int], *, complete: bool = True) -> None:
    """``got`` (a value) agrees with ``want`` (numpy) entry by entry after substitution."""
    if want.ndim == 0:
        if got is None:
            assert not complete
            return
        assert isinstance(got, ss.Dim)
        assert _at(got, env) == int(want)
        return
    if got is None:
        assert not complete or want.size == 0
        return
    assert isinstance(got, tuple) and len(got) == want.shape[0]
    for g, w in zip(got, want.tolist()):
        if g is None:
            assert not complete
        else:
            assert _at(g, env) == w


@given(shapes(), envs)
def test_shape_of_is_np_shape(shape: tuple[ss.Dim, ...], env: dict[str, int]) -> None:
    x = ss.var("x", ss.Tensor(shape, "float32"))
    sh = ss.ops.shape_of(x)
    res = ss.infer(ss.Function([x], sh))
    concrete = np.zeros(tuple(_at(d, env) for d in shape))
    _check(res.value_of(sh), np.array(concrete.shape), env)


@given(st.lists(st.integers(-(2**40), 2**40), min_size=0, max_size=6), st.booleans())
def test_const_value_is_its_entries(vals: list[int], scalar: bool) -> None:
    arr = np.array(vals[0] if scalar and vals else vals, "int64")
    c = ss.const(arr)
    got = _value(c)
    if arr.size == 0:
        assert got is None
    else:
        _check(got, arr, {"n": 1, "m": 1})


@given(entries(), st.data(), envs)
def test_take(v: tuple[ss.Dim, ...], data: Any, env: dict[str, int]) -> None:
    k = len(v)
    mode = data.draw(st.sampled_from(["raise", "clip", "wrap", "fast"]))
    lo, hi = (-k, k - 1) if mode in ("raise", "fast") else (-3 * k, 3 * k)
    idx = data.draw(st.one_of(st.integers(lo, hi), st.lists(st.integers(lo, hi), min_size=1, max_size=4)))
    e = ss.ops.take(ss.ops.int_tensor(v), ss.const(np.array(idx, "int64")), mode=mode)
    want = np.take(_arr(v, env), np.array(idx), mode="raise" if mode == "fast" else mode)
    _check(_value(e), want, env)


@given(shapes(), st.data(), envs)
def test_take_of_shape_of(shape: tuple[ss.Dim, ...], data: Any, env: dict[str, int]) -> None:
    x = ss.var("x", ss.Tensor(shape, "float32"))
    k = len(shape)
    idx = data.draw(st.integers(-k, k - 1))
    e = ss.ops.take(ss.ops.shape_of(x), ss.const(np.array(idx, "int64")), axis=0, mode="raise")
    res = ss.infer(ss.Function([x], e))
    concrete = np.zeros(tuple(_at(d, env) for d in shape))
    _check(res.value_of(e), np.take(np.array(concrete.shape), idx), env)


bound = st.one_of(st.none(), st.integers(-6, 6))


@given(entries(max_size=6), bound, bound, st.integers(-3, 3).filter(lambda s: s != 0), envs)
def test_strided_slice(
    v: tuple[ss.Dim, ...], b: int | None, e: int | None, s: int, env: dict[str, int]
) -> None:
    ex = ss.ops.strided_slice(ss.ops.int_tensor(v), [b], [e], [s])
    want = _arr(v, env)[b:e:s]
    _check(_value(ex), want, env)


@given(entries(max_size=6), st.integers(-6, 6), st.integers(-1, 6), envs)
def test_strided_slice_size_mode(v: tuple[ss.Dim, ...], b: int, size: int, env: dict[str, int]) -> None:
    ex = ss.ops.strided_slice(ss.ops.int_tensor(v), [b], [size], slice_mode="size")
    arr = _arr(v, env)
    start = slice(b, None).indices(len(arr))[0]
    want = arr[start:] if size < 0 else arr[start : start + size]
    _check(_value(ex), want, env)


@given(st.lists(entries(max_size=3), min_size=1, max_size=3), envs)
def test_concatenate(parts: list[tuple[ss.Dim, ...]], env: dict[str, int]) -> None:
    e = ss.ops.concatenate([ss.ops.int_tensor(p) for p in parts])
    _check(_value(e), np.concatenate([_arr(p, env) for p in parts]), env)


@given(entries(min_size=1, max_size=1), envs)
def test_expand_dims_squeeze_reshape(v: tuple[ss.Dim, ...], env: dict[str, int]) -> None:
    scalar = ss.ops.int_tensor(v[0])
    arr0 = _arr(v[0], env)
    _check(_value(ss.ops.expand_dims(scalar, 0)), np.expand_dims(arr0, 0), env)
    _check(_value(ss.ops.squeeze(ss.ops.int_tensor(v))), np.squeeze(_arr(v, env)), env)
    _check(_value(ss.ops.reshape(scalar, (1,))), np.reshape(arr0, (1,)), env)
    _check(_value(ss.ops.reshape(ss.ops.int_tensor(v), ())), np.reshape(_arr(v, env), ()), env)


@given(entries(), st.sampled_from(["int32", "int64"]), st.sampled_from(["int32", "int64"]), envs)
def test_cast(v: tuple[ss.Dim, ...], src: str, dst: str, env: dict[str, int]) -> None:
    e = ss.ops.cast(ss.ops.int_tensor(v, dtype=src), dst)
    _check(_value(e), _arr(v, env).astype(dst), env)


NP = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "floor_divide": np.floor_divide,
    "mod": np.mod,
    "maximum": np.maximum,
    "minimum": np.minimum,
}
# where a dimension states the result exactly, the value must be known
EXACT = {"add", "subtract", "multiply", "maximum", "minimum"}


@given(st.sampled_from(sorted(NP)), entries(max_size=4), st.data(), envs)
def test_elementwise(op: str, a: tuple[ss.Dim, ...], data: Any, env: dict[str, int]) -> None:
    # the second operand: a 0-d value, a one-entry value, or one as long as the first (broadcast)
    form = data.draw(st.sampled_from(["scalar", "one", "same"]))
    b = data.draw(
        entries(min_size=len(a), max_size=len(a)) if form == "same" else entries(min_size=1, max_size=1)
    )
    swap = data.draw(st.booleans())
    ta = ss.ops.int_tensor(a)
    tb = ss.ops.int_tensor(b[0]) if form == "scalar" else ss.ops.int_tensor(b)
    xa, xb = _arr(a, env), (_arr(b[0], env) if form == "scalar" else _arr(b, env))
    if swap:
        ta, tb, xa, xb = tb, ta, xb, xa
    divisor = xb
    if op in ("floor_divide", "mod") and np.any(divisor == 0):
        return  # numpy's integer division by 0 is not a number
    e = getattr(ss.ops, op)(ta, tb)
    want = NP[op](xa, xb)
    complete = op in EXACT
    if op in ("floor_divide", "mod"):
        # known exactly where the bounds of each divisor entry tell its sign
        divisor_entries = a if swap else ((b[0],) if form == "scalar" else b)
        complete = all(bounds(d)[0] >= 1 or bounds(d)[1] <= -1 for d in divisor_entries)
    _check(_value(e), want, env, complete=complete)


@given(
    st.integers(-5, 5), st.integers(-5, 12), st.integers(-3, 3).filter(lambda s: s != 0), st.booleans(), envs
)
def test_arange_length_and_value(
    start: int, stop: int, step: int, symbolic: bool, env: dict[str, int]
) -> None:
    hi = n + stop if symbolic else ss.parse_dim(str(stop))
    e = ss.ops.arange(start, hi, step)
    x = ss.var("x", ss.Tensor((n,), "float32"))
    res = ss.infer(ss.Function([x], e))
    assert res.ok, res.report()
    t = res.type_of(e)
    want = np.arange(start, _at(hi, env), step)
    assert _at(t.shape[0], env) == len(want)
    if not symbolic:
        _check(res.value_of(e), want, env)


_COMPARE = {
    "equal": np.equal,
    "not_equal": np.not_equal,
    "less": np.less,
    "less_equal": np.less_equal,
    "greater": np.greater,
    "greater_equal": np.greater_equal,
}


@given(entries(), st.data(), envs)
def test_comparisons_of_values_are_numpy_bools(v: tuple[ss.Dim, ...], data: Any, env: dict[str, int]) -> None:
    """Every entry of a comparison of known entries is known and numpy's 0/1 at every
    substitution (an entry the bounds do not decide is an exact 0/1 expression: n == 3 is
    ``1 - min(1, max(0, n - 3, 3 - n))``)."""
    op = data.draw(st.sampled_from(sorted(_COMPARE)))
    w = data.draw(entries(min_size=len(v), max_size=len(v)))
    e = getattr(ss.ops, op)(ss.ops.int_tensor(v), ss.ops.int_tensor(w))
    want = _COMPARE[op](_arr(v, env), _arr(w, env)).astype("int64")
    _check(_value(e), want, env)


@given(entries(), st.data(), envs)
def test_where_and_casts_of_values(v: tuple[ss.Dim, ...], data: Any, env: dict[str, int]) -> None:
    """``where(v == -1, 1, v)`` — how exporters write ``expand(b, -1, -1)`` — and ``cast`` to and
    from bool against numpy."""
    k = len(v)
    ones = ss.ops.constant_of_shape(ss.const(np.array([k], "int64")), value=1, dtype="int64")
    minus = ss.ops.multiply(ones, ss.const(np.array(-1, "int64")))
    sv = ss.ops.int_tensor(v)
    w = ss.ops.where(ss.ops.equal(sv, minus), ones, sv)
    a = _arr(v, env)
    _check(_value(w), np.where(a == -1, 1, a), env)
    b = ss.ops.cast(sv, "bool")
    _check(_value(b), (a != 0).astype("int64"), env)
    back = ss.ops.cast(ss.ops.cast(ss.ops.greater(sv, ss.const(np.array(0, "int64"))), "bool"), "int64")
    _check(_value(back), (a > 0).astype("int64"), env)


def test_expand_with_minus_ones_as_exported() -> None:
    """torch's exporter writes ``cls.expand(b, -1, -1)`` as ``Expand(cls, Where(s == -1, 1, s))``:
    the entries are decided by ``b >= 1``, so the result is exactly ``(b, 1, 8)``."""
    b = ss.dim("b")
    sh = ss.ops.int_tensor((b, -1, -1))
    ones = ss.ops.constant_of_shape(ss.ops.shape_of(sh), value=1, dtype="int64")
    is_minus = ss.ops.equal(sh, ss.ops.multiply(ones, ss.const(np.array(-1, "int64"))))
    cls = ss.var("cls", ss.Tensor((1, 1, 8), "float32"))
    out = ss.ops.expand(cls, ss.ops.where(is_minus, ones, sh))
    res = ss.infer(ss.Function([cls], out))
    assert res.status == "ok" and res.z3_calls == 0
    assert res.value_of(is_minus) == (ss.parse_dim("0"), ss.parse_dim("1"), ss.parse_dim("1"))
    assert str(res.type_of(is_minus)) == "Tensor[(3,), bool] = (0, 1, 1)"
    assert str(res.type_of(out)) == "Tensor[(b, 1, 8), float32]"
