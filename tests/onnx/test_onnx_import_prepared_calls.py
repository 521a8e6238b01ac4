"""``Concat`` and the pools (``MaxPool``, ``AveragePool``, ``LpPool``) convert through prepared
calls, ``Unsqueeze`` (opsets 1-12) reads its axes by its attribute bytes once per distinct
attributes, ``BatchNormalization``'s outputs are ``common.item_of`` (``TupleGetItem`` without the
constructor's checks); the same program, report and types as the plain calls and constructors,
and ``item_of`` is ``ss.TupleGetItem`` inside and outside a span scope.

``Concat`` converts through a prepared call (``concatenate`` of the tuple of its inputs, its
attributes checked once per axis) and ``common.tuple_of`` (that tuple without the constructor's
checks): the same program, report and types as ``ss.ops.concatenate`` of the input list, for a
table of models (axes of both signs, one input, mismatched shapes, an axis out of range, the
opset-1 default axis, a missing axis) and the light models that have ``Concat`` nodes (as shipped
and with a symbolic batch); and ``tuple_of`` is ``ss.Tuple`` inside and outside a span scope."""

from __future__ import annotations

import re
from typing import Any

import onnx
import pytest
from benchmarks.workloads import fresh_caches
from onnx import helper
from onnx_helpers import In, light_model, make_model

import symshape as ss
import symshape.onnx as sso
from symshape.onnx.context import NodeContext
from symshape.onnx.importer import Importer
from symshape.onnx.ops import common
from symshape.onnx.ops import nn as nn_mod
from symshape.onnx.ops import norm as norm_mod
from symshape.onnx.ops import shape as shape_mod
from symshape.onnx.spans import OnnxSpan


def _concat_model(axes: list[int | None], n: int = 2, opset: int = 17, same: bool = True) -> onnx.ModelProto:
    ins = [In(f"x{i}", "float32", ("b", 3 if same or i == 0 else 4, "h")) for i in range(n)]
    nodes = []
    for k, axis in enumerate(axes):
        attrs: dict[str, Any] = {} if axis is None else {"axis": axis}
        nodes.append(helper.make_node("Concat", [i.name for i in ins], [f"y{k}"], **attrs))
    return make_model(nodes, ins, [f"y{k}" for k in range(len(axes))], opset=opset)


CASES: dict[str, onnx.ModelProto] = {
    "axes": _concat_model([0, 1, -1, 1, -3]),
    "one-input": _concat_model([1, 1], n=1),
    "three": _concat_model([2, 2], n=3),
    "mismatch": _concat_model([0, 1], same=False),
    "out-of-range": _concat_model([3, -4]),
    "opset1-default": _concat_model([None, 1], opset=1),
    "missing-axis": _concat_model([None]),
}


def _conversion(m: onnx.ModelProto) -> list[str]:
    fresh_caches()
    fn = Importer(m, "m").run()
    res = sso.infer(m, label="m")
    out = [str(fn), res.status, res.report(), *(f"{k}: {t}" for k, t in res.types().items())]
    # (the unknown types' variables are numbered by a counter of the process: not compared)
    return [re.sub(r"\?t\d+", "?t", x) for x in out]


def _both(m: onnx.ModelProto) -> tuple[list[str], list[str]]:
    fast = _conversion(m)
    with pytest.MonkeyPatch.context() as mp:  # the plain calls (of Concat's input list, of a pool)
        mp.setattr(shape_mod, "prepared", lambda key, wrapper, nargs, **kw: None)
        mp.setattr(nn_mod, "prepare", lambda wrapper, nargs, **kw: None)
        mp.setattr(shape_mod, "tuple_of", ss.Tuple)  # (the constructors)
        mp.setattr(norm_mod, "item_of", ss.TupleGetItem)
        mp.setattr(NodeContext, "attribute_bytes", lambda self: None)  # (attributes read)
        plain = _conversion(m)
    return fast, plain


@pytest.mark.parametrize("case", list(CASES))
def test_concat_through_its_prepared_call_is_the_plain_call(case: str) -> None:
    fast, plain = _both(CASES[case])
    assert fast == plain


def _pool_model(op: str, spatial: int, opset: int = 17, outputs: int = 1, **attrs: Any) -> onnx.ModelProto:
    sizes: list[int | str] = ["h", 9, 7]
    x = In("x", "float32", ("b", 3, *sizes[:spatial]))
    outs = ["y", "i"][:outputs]
    nodes = [helper.make_node(op, ["x"], outs, **attrs), helper.make_node(op, ["x"], ["z"], **attrs)]
    return make_model(nodes, [x], [*outs, "z"], opset=opset)


POOL_CASES: dict[str, onnx.ModelProto] = {
    "max2d": _pool_model("MaxPool", 2, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
    "max1d-ceil": _pool_model("MaxPool", 1, kernel_shape=[2], strides=[2], ceil_mode=1),
    "max3d-dilated": _pool_model("MaxPool", 3, kernel_shape=[2, 2, 1], dilations=[2, 1, 1]),
    "max-indices": _pool_model("MaxPool", 2, outputs=2, kernel_shape=[2, 2]),
    "avg-same": _pool_model("AveragePool", 2, kernel_shape=[3, 3], auto_pad="SAME_UPPER", strides=[2, 2]),
    "avg-valid": _pool_model("AveragePool", 2, kernel_shape=[3, 3], auto_pad="VALID"),
    "lp": _pool_model("LpPool", 2, kernel_shape=[2, 2], p=2),
    "too-big": _pool_model("MaxPool", 2, kernel_shape=[30, 3]),
    "bad-pads": _pool_model("AveragePool", 2, kernel_shape=[3, 3], pads=[1, 1]),
    "old-opset": _pool_model("MaxPool", 2, opset=7, kernel_shape=[2, 2], strides=[1, 2]),
}


@pytest.mark.parametrize("case", list(POOL_CASES))
def test_pools_through_their_prepared_calls_are_the_plain_calls(case: str) -> None:
    fast, plain = _both(POOL_CASES[case])
    assert fast == plain


def _unsqueeze_model(axes: list[Any], opset: int = 11) -> onnx.ModelProto:
    x = In("x", "float32", ("b", 3))
    nodes = []
    for k, a in enumerate(axes):
        attrs: dict[str, Any] = {} if a is None else {"axes": a}
        nodes.append(helper.make_node("Unsqueeze", ["x"], [f"y{k}"], **attrs))
    return make_model(nodes, [x], [f"y{k}" for k in range(len(axes))], opset=opset)


UNSQUEEZE_CASES: dict[str, onnx.ModelProto] = {
    "axes": _unsqueeze_model([[0], [-1], [1, 2], [0], [-1], [1, 2], [0, 3]]),
    "mixed-signs": _unsqueeze_model([[0, -1], [0, -1], [-1, 0]]),
    "repeated": _unsqueeze_model([[1, 1], [1, 1]]),
    "out-of-range": _unsqueeze_model([[0, -9], [0, -9]]),
    "missing": _unsqueeze_model([None, [0]]),
    "opset1": _unsqueeze_model([[0], [0], [2]], opset=1),
}


@pytest.mark.parametrize("case", list(UNSQUEEZE_CASES))
def test_unsqueeze_axes_by_attribute_bytes_are_the_axes_read(case: str) -> None:
    fast, plain = _both(UNSQUEEZE_CASES[case])
    assert fast == plain


@pytest.mark.parametrize("batch", [False, True], ids=["shipped", "batch-N"])
@pytest.mark.parametrize("name", ["squeezenet", "inception_v1", "inception_v2", "densenet121", "vgg19"])
def test_light_models_are_the_same_with_the_plain_calls(name: str, batch: bool) -> None:
    fast, plain = _both(light_model(name, batch))
    assert fast == plain


def test_tuple_of_is_the_tuple_constructor() -> None:
    xs = [ss.var("a", ss.Tensor((2,), "float32")), ss.ops.relu(ss.var("b", ss.Tensor((2,), "float32")))]
    at = ss.Span("m.onnx", 3, context="node 'c' (Concat)")
    with ss.span_scope(at):
        fast, plain = common.tuple_of(xs), ss.Tuple(xs)
    assert type(fast) is ss.Tuple and fast.fields == plain.fields and fast.span == plain.span == at
    outside = common.tuple_of(xs)  # (no scope: the constructor, the caller's span)
    assert type(outside) is ss.Tuple and outside.fields == tuple(xs) and outside.span is not None
    assert outside.span.file == __file__


def test_item_of_is_the_tuple_get_item_constructor() -> None:
    x = ss.var("x", ss.Tensor((2, 3), "float32"))
    g, b, m, v = (ss.var(f"p{i}", ss.Tensor((3,), "float32")) for i in range(4))
    bn = ss.ops.batch_norm(x, g, b, m, v, axis=1)
    at = ss.Span("m.onnx", 3, context="node 'bn' (BatchNormalization)")
    with ss.span_scope(at):
        fast, plain = common.item_of(bn, 1), ss.TupleGetItem(bn, 1)
    assert type(fast) is ss.TupleGetItem
    assert (fast.tuple_value, fast.index, fast.span) == (plain.tuple_value, plain.index, plain.span)
    assert fast.span == at
    outside = common.item_of(bn, 0)
    assert type(outside) is ss.TupleGetItem and outside.index == 0 and outside.tuple_value is bn
    assert outside.span is not None and outside.span.file == __file__
    with pytest.raises(ss.SymshapeError):  # (outside a scope: the constructor, its checks)
        common.item_of(bn, "0")  # type: ignore[arg-type]


def test_a_bound_output_variable_is_made_as_the_constructor_makes_it() -> None:
    imp = Importer(CASES["axes"], "m")
    imp.run()
    at = OnnxSpan.at("m", 9, "node 'n' (Relu)")
    e = ss.ops.relu(ss.var("x", ss.Tensor((2,), "float32")))
    imp._bind_var("out", e, at)
    var, bound = imp.bindings[-1]
    plain = ss.Var("out")
    plain.span = at
    assert type(var) is ss.Var and bound is e and imp.values["out"].expr is var
    slots = ("name", "type_annotation", "span")
    assert [getattr(var, s) for s in slots] == [getattr(plain, s) for s in slots]
