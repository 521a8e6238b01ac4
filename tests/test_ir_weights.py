"""Untyped weights inferred from the operator call (Relay's BiasAddRel / Conv2DRel)."""

from __future__ import annotations

import symshape as ss

F32 = "float32"


def test_untyped_bias_in_bias_add() -> None:
    n, h, w = ss.dims("n h w")
    x = ss.var("x", ss.Tensor((n, 16, h, w), F32))
    b = ss.var("b")
    out = ss.ops.bias_add(x, b, axis=1)
    res = ss.infer(ss.Function([x, b], out))
    assert res.status == "ok", res.report()
    assert str(res.type_of(b)) == "Tensor[(16,), float32]"
    assert str(res.type_of(out)) == "Tensor[(n, 16, h, w), float32]"


def test_untyped_conv_weight_inferred_from_call() -> None:
    n, h, w = ss.dims("n h w")
    x = ss.var("x", ss.Tensor((n, 3, h, w), F32))
    wt = ss.var("w")
    out = ss.ops.conv2d(x, wt, strides=(1, 1), padding=(1, 1), channels=16, kernel_size=(3, 3))
    res = ss.infer(ss.Function([x, wt], out))
    assert res.status == "ok", res.report()
    assert str(res.type_of(wt)) == "Tensor[(16, 3, 3, 3), float32]"
    assert str(res.type_of(out)) == "Tensor[(n, 16, h, w), float32]"


def test_conv_then_bias_then_relu_with_untyped_weights() -> None:
    n = ss.dim("n")
    x = ss.var("x", ss.Tensor((n, 3, 32, 32), F32))
    wt, b = ss.var("w"), ss.var("b")
    conv = ss.ops.conv2d(x, wt, strides=(1, 1), padding=(1, 1), channels=16, kernel_size=(3, 3))
    out = ss.ops.relu(ss.ops.bias_add(conv, b, axis=1))
    res = ss.infer(ss.Function([x, wt, b], out))
    assert res.status == "ok", res.report()
    assert str(res.type_of(b)) == "Tensor[(16,), float32]"
    assert str(res.type_of(out)) == "Tensor[(n, 16, 32, 32), float32]"
