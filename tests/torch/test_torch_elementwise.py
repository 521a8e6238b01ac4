"""symshape.torch.convert.elementwise against torch: arithmetic with scalars and broadcasting,
comparisons, unary math, activations, where/masked_fill/clamp, dtype conversions."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

import symshape as ss
import symshape.torch as sst
from torch_zoo.oracle import check_fn, fn_module, types_of

X = {"x": (("b", 3, "n"), "float32")}
XY = {"x": (("b", 1, "n"), "float32"), "y": ((4, 1), "float32")}
SIZES = [{"b": 2, "n": 5}, {"b": 1, "n": 1}]

UNARY_FNS = [
    torch.relu,
    torch.sigmoid,
    torch.tanh,
    torch.exp,
    torch.log,
    torch.sqrt,
    torch.rsqrt,
    torch.abs,
    torch.floor,
    torch.ceil,
    torch.round,
    torch.trunc,
    torch.sign,
    torch.erf,
    torch.sin,
    torch.cos,
    torch.log2,
    torch.log10,
    torch.reciprocal,
    torch.square,
    torch.log1p,
    torch.expm1,
    torch.neg,
    F.relu,
    F.gelu,
    F.silu,
    F.mish,
    F.softplus,
    F.hardsigmoid,
    F.hardswish,
    F.relu6,
    F.elu,
    F.selu,
    F.celu,
    F.logsigmoid,
    F.softsign,
    F.tanhshrink,
    F.leaky_relu,
    F.hardtanh,
    lambda x: F.gelu(x, approximate="tanh"),
    lambda x: x.relu_(),
    lambda x: -x,
    lambda x: F.threshold(x, 0.1, 0.0),
    lambda x: torch.isnan(x),
    lambda x: ~(x > 0),
    lambda x: F.dropout(x, 0.5, training=False),
    lambda x: x.contiguous().clone().detach(),
    lambda x: torch.tril(x),
    lambda x: torch.cumsum(x, 1),
    lambda x: F.normalize(x, dim=1),
]


@pytest.mark.parametrize("fn", UNARY_FNS, ids=lambda f: getattr(f, "__name__", "lambda"))
def test_unary(fn: Any) -> None:
    check_fn(fn_module(fn, 1), X, SIZES)


SCALAR_FNS = [
    lambda x: x + 1,
    lambda x: 2 * x,
    lambda x: x / 3,
    lambda x: x**2,
    lambda x: 1 - x,
    lambda x: x // 2,
    lambda x: x % 2,
    lambda x: x * 0.5 + 1.5,
    lambda x: torch.add(x, 1, alpha=2),
    lambda x: x.sub(1.0),
    lambda x: x.mul_(3),
    lambda x: torch.div(x, 2, rounding_mode="floor"),
    lambda x: torch.pow(x, 2.0),
    lambda x: x > 0,
    lambda x: x.eq(1),
    lambda x: (x < 1) & (x > -1),
    lambda x: torch.clamp(x, min=0.0),
    lambda x: x.clamp(-1, 1),
    lambda x: torch.clip(x, max=2.0),
    lambda x: x * (x.shape[2] ** -0.5),
    lambda x: x / math.sqrt(x.size(-1)),
    lambda x: torch.where(x > 0, x, 0.0),
    lambda x: torch.where(x > 0, 1.0, 0.0),
]


@pytest.mark.parametrize("fn", SCALAR_FNS, ids=[f"scalar{i}" for i in range(len(SCALAR_FNS))])
def test_with_scalars(fn: Any) -> None:
    check_fn(fn_module(fn, 1), X, SIZES)


BINARY_FNS = [
    torch.add,
    torch.sub,
    torch.mul,
    torch.div,
    torch.maximum,
    torch.minimum,
    torch.pow,
    torch.eq,
    torch.lt,
    torch.ge,
    lambda x, y: x + y * 2,
    lambda x, y: torch.max(x, y),
    lambda x, y: torch.where(x > y, x, y),
    lambda x, y: x.masked_fill(y > 0, 0.0),
    lambda x, y: torch.clamp(x, min=y),
    lambda x, y: x.type_as(y),
    lambda x, y: (x > 0) | (y > 0),
]


@pytest.mark.parametrize("fn", BINARY_FNS, ids=[f"binary{i}" for i in range(len(BINARY_FNS))])
def test_broadcasting(fn: Any) -> None:
    check_fn(fn_module(fn, 2), XY, SIZES)


CONVERSIONS = [
    lambda x: x.to(torch.float16),
    lambda x: x.float(),
    lambda x: x.long(),
    lambda x: x.int(),
    lambda x: x.bool(),
    lambda x: x.half(),
    lambda x: x.double(),
    lambda x: x.to("cpu"),
    lambda x: x.to(dtype=torch.int64),
    lambda x: x.type(torch.int32),
    lambda x: torch.zeros_like(x),
    lambda x: torch.ones_like(x, dtype=torch.int64),
    lambda x: torch.full_like(x, 7),
    lambda x: torch.empty_like(x),
    lambda x: torch.rand_like(x),
    lambda x: x.to(x.dtype),
    lambda x: (x > 0).to(x.dtype) * x,
]


@pytest.mark.parametrize("fn", CONVERSIONS, ids=[f"conv{i}" for i in range(len(CONVERSIONS))])
def test_dtypes(fn: Any) -> None:
    check_fn(fn_module(fn, 1), X, SIZES)


def test_int_tensor_arithmetic() -> None:
    check_fn(fn_module(lambda x: x * 2 + 1, 1), {"x": (("b", "n"), "int64")}, SIZES)


def test_not_broadcastable_is_an_error_at_the_call() -> None:
    res = sst.infer(
        fn_module(lambda x, y: x + y, 2), types_of({"x": (("b", 3), "float32"), "y": ((4,), "float32")})
    )
    assert res.status == "error"
    (err,) = res.errors
    assert err.code == "not-broadcastable"
    assert err.span is not None and err.span.file == __file__


def test_symbolic_broadcast_is_a_guard() -> None:
    res = sst.infer(
        fn_module(lambda x, y: x + y, 2), types_of({"x": (("b", 3), "float32"), "y": ((5, 3), "float32")})
    )
    assert res.status == "guarded"
    assert [str(g) for g in res.guards] == ["b == 1 or b == 5"]


def test_static_size_arithmetic_is_dimension_arithmetic() -> None:
    """Sizes of an annotated input are dimensions; arithmetic on them is evaluated."""
    fn = fn_module(lambda x: x.view(x.shape[0] * x.shape[1], x.size(2) // 2, 2), 1)
    res = check_fn(fn, {"x": (("b", 3, 4), "float32")}, [{"b": 2}, {"b": 5}])
    b = ss.dim("b")
    view = next(n for n in res.fx_graph.nodes if n.target == "view")
    assert res.type_of(view) == ss.Tensor((3 * b, 2, 2), "float32")
    mul = next(n for n in res.fx_graph.nodes if n.name == "mul")
    assert res.value_of(mul) == 3 * b


@given(
    st.lists(st.integers(1, 4), min_size=1, max_size=4),
    st.lists(st.booleans(), min_size=4, max_size=4),
    st.integers(0, 3),
)
def test_broadcast_property(shape: list[int], ones: list[bool], drop: int) -> None:
    """Random broadcastable shapes (some axes 1, some leading axes dropped) against torch."""
    other = [1 if o else d for d, o in zip(shape, ones)][min(drop, len(shape) - 1) :]
    specs = {"x": (tuple(shape), "float32"), "y": (tuple(other), "float32")}
    check_fn(fn_module(lambda x, y: x * y - y, 2), specs, [{}])
