"""The Pythonic front-end (issue 16): operators, indexing and methods on expressions build the
same calls as ``ss.ops``, and give the shapes numpy gives at concrete sizes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import symshape as ss
from symshape.encoding.dtypes import dtype_name
from symshape.ir.frontend import static_arity, static_dtype, static_kind

N, M, K = ss.dims("N M K")
SIZES = {N: 4, M: 5, K: 6}


def _x(dtype: str = "float32") -> ss.Var:
    return ss.var("x", ss.Tensor((N, M, K), dtype))


def _shape_at(e: ss.Expr, params: list[ss.Var], env: dict[Any, int]) -> tuple[int, ...]:
    res = ss.infer(ss.Function(params, e))
    assert res.status in ("ok", "guarded"), res.report()
    for g in res.guards:
        assert g.holds(env), f"{g} fails at {env}"
    t = res.type_of(e)
    assert isinstance(t, ss.TensorType) and t.shape is not None
    return tuple(int(d.subs(env)) for d in t.shape)


# -- operators --------------------------------------------------------------------------------

BINARY: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("add", lambda a, b: a + b),
    ("subtract", lambda a, b: a - b),
    ("multiply", lambda a, b: a * b),
    ("divide", lambda a, b: a / b),
    ("floor_divide", lambda a, b: a // b),
    ("mod", lambda a, b: a % b),
    ("power", lambda a, b: a**b),
    ("less", lambda a, b: a < b),
    ("less_equal", lambda a, b: a <= b),
    ("greater", lambda a, b: a > b),
    ("greater_equal", lambda a, b: a >= b),
]


@pytest.mark.parametrize("name, fn", BINARY, ids=[n for n, _ in BINARY])
def test_binary_operators_build_the_ops_call(name: str, fn: Callable[[Any, Any], Any]) -> None:
    x = _x()
    y = ss.var("y", ss.Tensor((M, 1), "float32"))
    e = fn(x, y)
    assert ss.structural_equal(e, getattr(ss.ops, name)(x, y))
    want = fn(np.ones((4, 5, 6), "float32"), np.ones((5, 1), "float32")).shape
    assert _shape_at(e, [x, y], SIZES) == want
    res = ss.infer(ss.Function([x, y], e))
    t = res.type_of(e)
    assert isinstance(t, ss.TensorType)
    assert t.dtype == ("bool" if name.startswith(("less", "greater")) else "float32")


@pytest.mark.parametrize("name, fn", BINARY, ids=[n for n, _ in BINARY])
@pytest.mark.parametrize("dtype", ["float16", "int32"])
def test_scalars_take_the_other_sides_dtype(name: str, fn: Callable[[Any, Any], Any], dtype: str) -> None:
    x = _x(dtype)
    for e in (fn(x, 2), fn(2, x)):  # ``2 < x`` is ``x > 2``: the constant is the other argument
        assert isinstance(e, ss.Call) and x in e.args
        (c,) = [a for a in e.args if a is not x]
        assert isinstance(c, ss.Constant) and c.type == ss.Tensor((), dtype)
        res = ss.infer(ss.Function([x], e))
        assert res.status == "ok", res.report()


def test_scalar_of_an_unknown_dtype_is_cast_like_the_other_side() -> None:
    x = ss.var("x")  # no annotation: the dtype is not known when the call is built
    e = x + 1
    assert isinstance(e, ss.Call) and isinstance(e.args[1], ss.Call)
    assert e.args[1].callee is ss.Op.get("cast_like")
    x2 = ss.var("x", ss.Tensor((N,), "float16"))
    res = ss.infer(ss.Let(x, x2, e))
    assert res.type_of(e) == ss.Tensor((N,), "float16")


def test_a_float_scalar_with_an_int_tensor_is_a_dtype_error_as_in_relay() -> None:
    x = _x("int32")
    res = ss.infer(ss.Function([x], x + 0.5))
    assert res.status == "error" and res.errors[0].code == "dtype-mismatch"


def test_unary_and_logical_operators() -> None:
    x = _x()
    assert ss.structural_equal(-x, ss.ops.negative(x))
    assert ss.structural_equal(abs(x), ss.ops.abs(x))
    b = x < 0
    assert ss.structural_equal(b & b, ss.ops.logical_and(b, b))
    assert ss.structural_equal(b | b, ss.ops.logical_or(b, b))
    assert ss.structural_equal(~b, ss.ops.logical_not(b))
    assert +x is x


def test_equality_stays_identity_and_eq_is_elementwise() -> None:
    x, y = _x(), _x()
    assert (x == x) is True and (x == y) is False and x != y
    assert len({x, y, x}) == 2  # expressions stay usable as dict keys
    assert ss.structural_equal(x.eq(y), ss.ops.equal(x, y))
    assert ss.structural_equal(x.ne(1.0), ss.ops.not_equal(x, ss.const(np.float32(1))))


def test_matmul_operator_matches_numpy() -> None:
    a = ss.var("a", ss.Tensor((N, M, K), "float32"))
    b = ss.var("b", ss.Tensor((K, 3), "float32"))
    e = a @ b
    assert ss.structural_equal(e, ss.ops.matmul(a, b))
    assert _shape_at(e, [a, b], SIZES) == (np.ones((4, 5, 6)) @ np.ones((6, 3))).shape
    assert _shape_at(b.T @ b, [b], SIZES) == (np.ones((6, 3)).T @ np.ones((6, 3))).shape


METHODS: list[tuple[str, Callable[[Any], Any]]] = [
    ("T", lambda x: x.T),
    ("transpose", lambda x: x.transpose(2, 0, 1)),
    ("transpose tuple", lambda x: x.transpose((1, 0, 2))),
    ("reshape", lambda x: x.reshape(-1, 6)),
    ("reshape tuple", lambda x: x.reshape((2, -1))),
    ("sum", lambda x: x.sum()),
    ("sum axis", lambda x: x.sum(1)),
    ("mean keepdims", lambda x: x.mean(axis=(0, 2), keepdims=True)),
    ("max", lambda x: x.max(axis=-1)),
    ("min", lambda x: x.min(axis=(0,))),
    ("prod", lambda x: x.prod(0)),
    ("argmax", lambda x: x.argmax(axis=1)),
    ("squeeze", lambda x: x[:, :1].squeeze(1)),
]


@pytest.mark.parametrize("name, fn", METHODS, ids=[n for n, _ in METHODS])
def test_methods_match_numpy(name: str, fn: Callable[[Any], Any]) -> None:
    x = _x()
    assert _shape_at(fn(x), [x], SIZES) == np.shape(fn(np.ones((4, 5, 6))))


def test_astype_accepts_numpy_and_torch_spellings() -> None:
    x = _x()
    for spelling in ("float16", np.float16, np.dtype("float16")):
        e = x.astype(spelling)
        assert ss.infer(ss.Function([x], e)).type_of(e) == ss.Tensor((N, M, K), "float16")


# -- indexing ---------------------------------------------------------------------------------


def _index_item(draw: Any) -> object:
    kind = draw(st.sampled_from(["int", "slice", "slice", "none", "full"]))
    if kind == "int":
        return draw(st.integers(-4, 3))
    if kind == "none":
        return None
    if kind == "full":
        return slice(None)
    opt = st.none() | st.integers(-7, 7)
    step = draw(st.none() | st.sampled_from([1, 2, 3, -1, -2]))
    return slice(draw(opt), draw(opt), step)


@st.composite
def indices(draw: Any) -> tuple[object, ...]:
    n = draw(st.integers(0, 4))
    items = [_index_item(draw) for _ in range(n)]
    if draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), Ellipsis)
    # at most 3 consuming items for a rank-3 tensor
    consuming = [i for i, it in enumerate(items) if it is not None and it is not Ellipsis]
    for i in reversed(consuming[3:]):
        del items[i]
    return tuple(items)


@given(idx=indices(), sizes=st.tuples(st.integers(1, 6), st.integers(1, 6), st.integers(1, 6)))
def test_indexing_matches_numpy(idx: tuple[object, ...], sizes: tuple[int, int, int]) -> None:
    x = _x()
    env = dict(zip((N, M, K), sizes))
    e = x[idx]
    res = ss.infer(ss.Function([x], e))
    try:
        want = np.empty(sizes)[idx].shape
    except IndexError:
        # numpy rejects the index at these sizes: symshape rejects it for every size, or a guard
        # fails at these sizes
        assert res.status == "error" or any(not g.holds(env) for g in res.guards), res.report()
        return
    assert res.status in ("ok", "guarded"), (idx, res.report())
    assert all(g.holds(env) for g in res.guards), (idx, [str(g) for g in res.guards])
    t = res.type_of(e)
    assert isinstance(t, ss.TensorType) and t.shape is not None
    assert tuple(int(d.subs(env)) for d in t.shape) == want, (idx, str(t))


@pytest.mark.parametrize(
    "build, ref",
    [
        (lambda x: x[:, : M - 1], lambda a: a[:, : 5 - 1]),
        (lambda x: x[:, M - 1], lambda a: a[:, 5 - 1]),
        (lambda x: x[N - 2 :, :, 1 : K - 1], lambda a: a[4 - 2 :, :, 1 : 6 - 1]),
        (lambda x: x[..., ss.encoding.dims.const(2)], lambda a: a[..., 2]),
    ],
)
def test_symbolic_indices_and_bounds(build: Callable[[Any], Any], ref: Callable[[Any], Any]) -> None:
    x = _x()
    assert _shape_at(build(x), [x], SIZES) == ref(np.empty((4, 5, 6))).shape


def test_indexing_with_a_tensor_index_is_take() -> None:
    x = _x()
    idx = ss.var("i", ss.Tensor((2, 3), "int64"))
    for index, ref in (
        (idx, lambda a, i: a[i]),
        ((slice(None), idx), lambda a, i: a[:, i]),
        ((Ellipsis, idx), lambda a, i: a[..., i]),
        ((None, 0, idx), lambda a, i: a[None, 0, i]),
    ):
        e = x[index]
        want = ref(np.empty((4, 5, 6)), np.zeros((2, 3), "int64")).shape
        assert _shape_at(e, [x, idx], SIZES) == want


def test_a_bool_tensor_index_is_a_boolean_mask() -> None:
    x = _x()
    mask = ss.var("m", ss.Tensor((N, M), "bool"))
    e = x[mask]
    assert isinstance(e, ss.Call) and e.callee is ss.Op.get("boolean_mask")
    res = ss.infer(ss.Function([x, mask], e))
    t = res.type_of(e)
    want = np.empty((4, 5, 6))[np.ones((4, 5), bool)].shape
    assert isinstance(t, ss.TensorType) and t.ndim == len(want) and t.shape[1:] == (K,)  # type: ignore[index]
    assert ss.structural_equal(x[x > 0], ss.ops.boolean_mask(x, x > 0))
    with pytest.raises(ss.SymshapeError, match="leading axes"):
        x[:, mask]


@pytest.mark.parametrize(
    "index, fragment",
    [
        ((Ellipsis, Ellipsis), "single ellipsis"),
        ((1.5,), "cannot index"),
        (("a",), "cannot index"),
        ((slice(None, None, 0),), "step cannot be zero"),
        ((slice(0.5, None),), "must be an int"),
    ],
)
def test_bad_indices_are_symshape_errors(index: tuple[object, ...], fragment: str) -> None:
    with pytest.raises(ss.SymshapeError, match=fragment) as e:
        _x()[index]
    assert e.value.code == "invalid-argument"


def test_two_tensor_indices_are_refused() -> None:
    x = _x()
    i = ss.var("i", ss.Tensor((2,), "int64"))
    with pytest.raises(ss.SymshapeError, match="only one tensor index"):
        x[i, i]
    with pytest.raises(ss.SymshapeError, match="moves its axes first"):
        x[0, :, i]


# -- tuples -----------------------------------------------------------------------------------


def test_tuple_typed_values_keep_tuple_get_item() -> None:
    t = ss.var("t", ss.TupleType([ss.Tensor((N,), "float32"), ss.Tensor((M,), "float32")]))
    assert isinstance(t[0], ss.TupleGetItem) and t[-1].index == 1  # type: ignore[attr-defined]
    u = ss.var("u")  # unknown kind: an int index is a tuple index, as before
    assert isinstance(u[0], ss.TupleGetItem)
    x = _x()
    assert not isinstance(x[0], ss.TupleGetItem)  # a tensor: take row 0
    assert static_kind(ss.Tuple([x, x])) == "tuple" and static_kind(x) == "tensor"
    with pytest.raises(ss.SymshapeError, match="arity"):
        u[-1]
    with pytest.raises(ss.SymshapeError, match="indexed by an int"):
        t[0:1]


def test_split_and_batch_norm_unpack() -> None:
    x = _x()
    a, b = ss.ops.split(x, 2, axis=0)
    p, q, r = ss.ops.split(x, [1, 3], axis=2)
    res = ss.infer(ss.Function([x], ss.Tuple([a, b, p, q, r])))
    assert res.status in ("ok", "guarded")
    assert res.type_of(q) == ss.Tensor((N, M, 2), "float32")
    c = ss.var("c", ss.Tensor((M,), "float32"))
    out, mean, var = ss.ops.batch_norm(x, c, c, c, c, axis=1)
    assert [f.index for f in (out, mean, var)] == [0, 1, 2]
    assert static_arity(ss.Tuple([x])) == 1
    assert len(list(ss.Tuple([x, x, x]))) == 3


def test_unknown_arity_cannot_be_unpacked() -> None:
    with pytest.raises(ss.SymshapeError, match="arity") as e:
        _a, _b = ss.var("u")
    assert e.value.code == "invalid-argument"
    with pytest.raises(ss.SymshapeError, match="arity"):
        list(ss.ops.relu(_x()))


def test_static_dtype_follows_the_first_argument() -> None:
    x = _x("float16")
    assert static_dtype(ss.ops.sum(ss.ops.relu(x[0] * 2), axis=0)) == "float16"
    assert static_dtype(ss.ops.cast(x, "int8")) == "int8"
    assert static_dtype(ss.ops.argmax(x)) == "int32"
    assert static_dtype(ss.var("y")) is None


# -- dtypes -----------------------------------------------------------------------------------


class _FakeTorchDtype:
    """Stands for ``torch.float32`` (its type is ``torch.dtype``, its str ``torch.float32``)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __str__(self) -> str:
        return f"torch.{self.name}"


_FakeTorchDtype.__module__ = "torch"
_FakeTorchDtype.__name__ = "dtype"


@pytest.mark.parametrize(
    "spelling, want",
    [
        ("float32", "float32"),
        (np.float32, "float32"),
        (np.dtype("float32"), "float32"),
        (np.int64, "int64"),
        (np.bool_, "bool"),
        (np.dtype("uint8"), "uint8"),
        (_FakeTorchDtype("float32"), "float32"),
        (_FakeTorchDtype("int64"), "int64"),
        (_FakeTorchDtype("half"), "float16"),
        (_FakeTorchDtype("bfloat16"), "bfloat16"),
    ],
)
def test_dtype_spellings(spelling: object, want: str) -> None:
    assert dtype_name(spelling) == want
    if want != "bfloat16":  # numpy has no bfloat16 arrays
        assert ss.const(np.zeros(2), spelling).type.dtype == want
    assert ss.Constant((2,), spelling).type.dtype == want


@pytest.mark.parametrize(
    "build",
    [
        lambda x, dt: ss.ops.cast(x, dt),
        lambda x, dt: ss.ops.zeros((N, 2), dt),
        lambda x, dt: ss.ops.ones_like(x, dt),
        lambda x, dt: x.astype(dt),
    ],
)
@pytest.mark.parametrize("spelling", [np.float16, np.dtype("float16"), _FakeTorchDtype("half")])
def test_operator_dtype_attributes_accept_other_spellings(
    build: Callable[[Any, Any], Any], spelling: object
) -> None:
    x = _x()
    e = build(x, spelling)
    t = ss.infer(ss.Function([x], e)).type_of(e)
    assert isinstance(t, ss.TensorType) and t.dtype == "float16"
    assert e.attrs["dtype"] == "float16"


def test_real_torch_dtypes() -> None:
    torch = pytest.importorskip("torch")
    assert dtype_name(torch.float32) == "float32"
    assert dtype_name(torch.long) == "int64"
    assert dtype_name(torch.bool) == "bool"


@pytest.mark.parametrize("bad", ["float", "f32", np.dtype("U3"), object(), float, None])
def test_bad_dtype_spellings(bad: object) -> None:
    with pytest.raises(ss.SymshapeError) as e:
        dtype_name(bad)
    assert e.value.code == "bad-dtype"


@pytest.mark.parametrize("build", [lambda n: n / 2, lambda n: 8 / n, lambda n: (2 * n) / n])
def test_true_division_of_dims_hints_at_floor_division(build: Callable[[Any], Any]) -> None:
    n = ss.dim("n")
    with pytest.raises(ss.SymshapeError, match=r"use `.* // .*`") as e:
        build(n)
    assert e.value.code == "bad-dim"
    assert (2 * n) // 2 == n  # the hinted spelling works


def test_a_dim_operand_of_an_expression_is_refused_with_a_hint() -> None:
    with pytest.raises(ss.SymshapeError, match="int_tensor") as e:
        _x() + N
    assert e.value.code == "invalid-argument"


@pytest.mark.parametrize(
    ("spelling", "name"),
    [(np.float32, "float32"), (np.dtype("int64"), "int64"), (np.bool_, "bool"), ("float16", "float16")],
)
def test_tensor_type_accepts_numpy_dtypes(spelling: object, name: str) -> None:
    assert ss.Tensor((2, 3), spelling).dtype == name
    assert ss.Tensor((2, 3), spelling) == ss.Tensor((2, 3), name)


def test_tensor_type_accepts_torch_dtypes() -> None:
    torch = pytest.importorskip("torch")
    assert str(ss.Tensor((1,), torch.float16)) == "Tensor[(1,), float16]"
    with pytest.raises(ss.SymshapeError) as e:
        ss.Tensor((1,), object())
    assert e.value.code == "bad-dtype"
