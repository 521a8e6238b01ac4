"""The operator constructors (``ss.ops``): registration, literal-attribute checks at the call
site, inference through ``ss.infer`` and the ``normalize`` hooks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import symshape as ss
from symshape import ops
from symshape.ir.op import OPS

n, h, w, s = ss.dims("n h w s")


def test_every_constructor_builds_a_call_of_a_registered_pure_op() -> None:
    for name in ops.__all__:
        assert callable(getattr(ops, name)), name
    for op in OPS.values():
        assert op.pure


BAD: list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = [
    (ops.reshape, ((-1, -1),), {}),
    (ops.reshape, ((2, -7),), {}),
    (ops.transpose, ((0, 0),), {}),
    (ops.squeeze, ((1, 1),), {}),
    (ops.sum, (), {"axis": (0, 0)}),
    (ops.split, (0,), {}),
    (ops.split, ((3, 1),), {}),
    (ops.strided_slice, ((0,), (1,), (0,)), {}),
    (ops.conv2d, (), {"strides": 0, "w": None}),
    (ops.conv2d, (), {"padding": (1, 2, 3), "w": None}),
    (ops.conv2d, (), {"data_layout": "NCHWc", "w": None}),
    (ops.max_pool2d, (), {"pool_size": (1, 2, 3)}),
    (ops.cast, ("float31",), {}),
    (ops.expand_dims, (0,), {"num_newaxis": -1}),
    (ops.pad, (((1, -1),),), {}),
    (ops.dense, (), {"units": "4", "w": None}),
]


@pytest.mark.parametrize("fn,args,kwargs", BAD, ids=[f"{f.__name__}-{i}" for i, (f, _, _) in enumerate(BAD)])
def test_literal_attribute_errors_raise_at_the_call_site(
    fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    x = ss.var("x", ss.Tensor((2, 3, 4, 4)))
    if "w" in kwargs:
        kwargs = {**kwargs, "w": ss.var("w")}
        call = lambda: fn(x, kwargs.pop("w"), *args, **kwargs)  # noqa: E731
    else:
        call = lambda: fn(x, *args, **kwargs)  # noqa: E731
    with pytest.raises(ss.SymshapeError) as e:
        call()
    assert e.value.code == "bad-attribute"


def test_small_cnn_program_with_symbolic_batch() -> None:
    x = ss.var("x", ss.Tensor((n, 3, h, w)))
    w1, b1 = ss.var("w1"), ss.var("b1")
    y = ops.relu(ops.bias_add(ops.conv2d(x, w1, channels=16, kernel_size=3, padding=1, strides=2), b1))
    y = ops.max_pool2d(y, pool_size=2, strides=2)
    y = ops.global_avg_pool2d(y)
    y = ops.batch_flatten(y)
    wd = ss.var("wd")
    y = ops.softmax(ops.dense(y, wd, units=10))
    res = ss.infer(ss.Function([x, w1, b1, wd], y))
    assert res.ok, res.report()
    assert str(res.type_of(y)) == "Tensor[(n, 10), float32]"
    assert str(res.type_of(w1)) == "Tensor[(16, 3, 3, 3), float32]"
    assert str(res.type_of(b1)) == "Tensor[(16,), float32]"
    assert str(res.type_of(wd)) == "Tensor[(10, 16), float32]"


def test_attention_like_program() -> None:
    x = ss.var("x", ss.Tensor((n, s, 64)))
    q = ops.reshape(x, (0, 0, 4, 16))
    k = ops.transpose(q, (0, 2, 3, 1))
    att = ops.softmax(ops.matmul(ops.transpose(q, (0, 2, 1, 3)), k))
    out = ops.reshape(
        ops.transpose(ops.matmul(att, ops.transpose(q, (0, 2, 1, 3))), (0, 2, 1, 3)), (0, 0, -1)
    )
    res = ss.infer(ss.Function([x], out))
    assert res.status == "ok", res.report()
    assert str(res.type_of(att)) == "Tensor[(n, 4, s, s), float32]"
    assert str(res.type_of(out)) == "Tensor[(n, s, 64), float32]"


def test_tuple_ops_in_a_program() -> None:
    x = ss.var("x", ss.Tensor((n, 6)))
    parts = ops.split(x, 3, axis=1)
    y = ops.concatenate([parts[0], parts[2]], axis=1)
    z = ops.stack([y, y], axis=0)
    res = ss.infer(ss.Function([x], z))
    assert res.status == "ok"
    assert str(res.type_of(z)) == "Tensor[(2, n, 4), float32]"


def test_guard_and_error_from_a_program() -> None:
    x = ss.var("x", ss.Tensor((n, 6)))
    res = ss.infer(ss.Function([x], ops.reshape(x, (-1, 4))))
    assert res.status == "guarded" and [str(g) for g in res.guards] == ["n % 2 == 0"]
    y = ss.var("y", ss.Tensor((2, 3)))
    res = ss.infer(ss.Function([y], ops.reshape(y, (7,))))
    assert res.status == "error" and res.errors[0].code == "reshape-size"


def test_zeros_and_where_in_a_program() -> None:
    c = ss.var("c", ss.Tensor((n, 1), "bool"))
    z = ops.zeros((1, 4), "float32")
    o = ops.ones((n, 4), "float32")
    out = ops.where(c, z, o)
    res = ss.infer(ss.Function([c], out))
    assert res.status == "ok" and str(res.type_of(out)) == "Tensor[(n, 4), float32]"


# ----------------------------------------------------------------------------------------------
# normalization


def _normalized_attrs(body_fn: Callable[[ss.Var], ss.Call], shape: Any) -> dict[str, Any]:
    x = ss.var("x", ss.Tensor(shape))
    f = ss.Function([x], body_fn(x))
    nf = ss.normalize(f)
    assert isinstance(nf, ss.Function)
    body = nf.body
    assert isinstance(body, ss.Call)
    again = ss.normalize(nf)  # idempotent
    assert isinstance(again, ss.Function) and isinstance(again.body, ss.Call)
    assert dict(again.body.attrs) == dict(body.attrs)
    return dict(body.attrs)


def test_normalize_reshape_special_values_when_constant() -> None:
    assert _normalized_attrs(lambda x: ops.reshape(x, (0, -1)), (2, 3, 4))["newshape"] == (2, 12)
    assert _normalized_attrs(lambda x: ops.reshape(x, (-3, -2)), (2, 3, 4))["newshape"] == (6, 4)
    # symbolic result: explicit symbolic dimensions
    assert _normalized_attrs(lambda x: ops.reshape(x, (0, -1)), (n, 3, 4))["newshape"] == (n, 12)


def test_normalize_axes() -> None:
    assert _normalized_attrs(lambda x: ops.transpose(x), (n, 3, 4))["axes"] == (2, 1, 0)
    assert _normalized_attrs(lambda x: ops.transpose(x, (0, -1, 1)), (n, 3, 4))["axes"] == (0, 2, 1)
    assert _normalized_attrs(lambda x: ops.squeeze(x), (2, 1, 4, 1))["axis"] == (1, 3)
    assert _normalized_attrs(lambda x: ops.squeeze(x, -1), (2, 4, 1))["axis"] == 2
    assert _normalized_attrs(lambda x: ops.sum(x, axis=(-1, 0)), (n, 3, 4))["axis"] == (2, 0)
    assert _normalized_attrs(lambda x: ops.softmax(x), (n, 3, 4))["axis"] == 2
    assert _normalized_attrs(lambda x: ops.expand_dims(x, -1), (n, 3))["axis"] == 2
    assert _normalized_attrs(lambda x: ops.concatenate([x, x], -1), (n, 3))["axis"] == 1
    assert _normalized_attrs(lambda x: ops.stack([x, x], -1), (n, 3))["axis"] == 2
    assert _normalized_attrs(lambda x: ops.flatten(x, -1), (n, 3, 4))["axis"] == 2
    assert _normalized_attrs(lambda x: ops.strided_slice(x, [0], [1], axes=[-1]), (n, 3))["axes"] == (1,)
