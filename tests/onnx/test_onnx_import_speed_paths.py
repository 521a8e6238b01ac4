"""The importer's fast paths give what the plain paths give.

* Window plans (``Conv``/pools remember the operator and attributes by the node's attributes,
  :meth:`NodeContext.attr_key`), prepared calls (``PreparedCall.build``, against the wrapper each
  was prepared from), and int64 vector initializers decoded when first read (a weight's
  shape read by ``Value.int_vector`` without numpy): with both turned off, the light models of
  onnx's wheel (as shipped and with a symbolic batch) and an exported-style transformer import to
  the same program (text and spans) and infer to the same types, guards, report and
  ``infer_shapes`` model, byte for byte.
* Plans are not shared across attribute types or between nodes whose plan depends on a weight's
  shape; a weight's fill attribute is told apart from no attribute.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

import numpy as np
import onnx
import pytest
from benchmarks import onnx_transformer
from onnx import TensorProto, helper, numpy_helper
from onnx_helpers import LIGHT, In, light_model, make_model, reference

import symshape as ss
import symshape.onnx as sso
from symshape.ir.expr import operands
from symshape.ir.op import PreparedCall
from symshape.onnx import lazy_constant
from symshape.onnx.attrs import parse_attribute, tensor_value
from symshape.onnx.context import NodeContext, Value
from symshape.onnx.graph import load_model
from symshape.onnx.importer import Importer
from symshape.onnx.lazy_constant import LazyConstant
from symshape.onnx.ops import nn as nn_mod
from symshape.onnx.spans import OnnxSpan

MODELS = ["densenet121", "squeezenet", "inception_v2", "resnet50", "shufflenet"]


def _spans(fn: ss.Function) -> str:
    """Every expression of ``fn`` in a fixed walk order, with its span and annotation."""
    seen: set[int] = set()
    out: list[str] = []
    stack: list[Any] = [fn.body, *fn.params]
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        out.append(f"{type(e).__name__} {e.span!r} {getattr(e, 'type_annotation', '')}")
        if isinstance(e, ss.Dataflow):
            for v, x in reversed(e.bindings):
                stack += [x, v]
            stack.append(e.body)
        else:
            stack.extend(reversed(list(operands(e))))
    return "\n".join(out)


def _everything(m: onnx.ModelProto) -> list[str]:
    imp = Importer(m, "m")
    fn = imp.run()
    res = sso.infer(m, label="m")
    out = [str(fn), _spans(fn), res.status, res.report()]
    out += [f"{k}: {t}" for k, t in res.types().items()]
    out += [str(g) for g in res.guards]
    try:
        out.append(hashlib.sha256(sso.infer_shapes(m).SerializeToString()).hexdigest())
    except ss.SymshapeError as e:
        out.append(str(e))
    return out


def _plain_paths(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(nn_mod, "_planned", lambda ctx, tag, cacheable, make: make())
    # (every prepared call made by the wrapper it was prepared from)
    mp.setattr(PreparedCall, "build", lambda self, *args: self._plain(*args))
    mp.setattr(lazy_constant, "_INT64", -1)  # (no initializer is decoded lazily)
    mp.setattr(LazyConstant, "int_vector", Value.int_vector)


@pytest.mark.parametrize("batch", [False, True], ids=["shipped", "batch-N"])
@pytest.mark.parametrize("name", MODELS)
def test_light_models_import_the_same_without_the_fast_paths(name: str, batch: bool) -> None:
    fast = _everything(light_model(name, batch))
    with pytest.MonkeyPatch.context() as mp:
        _plain_paths(mp)
        plain = _everything(light_model(name, batch))
    assert fast == plain


def test_transformer_imports_the_same_without_the_fast_paths() -> None:
    m = onnx_transformer.build(layers=2, hidden=32, heads=4, ffn=64, vocab=50, max_pos=16)
    fast = _everything(m)
    with pytest.MonkeyPatch.context() as mp:
        _plain_paths(mp)
        plain = _everything(m)
    assert fast == plain


def _conv_model(second: dict[str, Any]) -> onnx.ModelProto:
    w = np.zeros((4, 3, 3, 3), np.float32)
    first = helper.make_node("Conv", ["x", "w"], ["a"], name="c1", kernel_shape=[3, 3], strides=[1, 1])
    conv2 = helper.make_node("Conv", ["x", "w"], ["b"], name="c2", **second)
    return make_model([first, conv2], [In("x", "float32", ("n", 3, 8, 8))], ["a", "b"], inits={"w": w})


def test_a_plan_is_not_shared_with_an_attribute_of_another_type() -> None:
    # FLOATS strides of the same values as the first node's INTS: the second node is wrong
    conv2 = _conv_model({"kernel_shape": [3, 3]})
    conv2.graph.node[1].attribute.append(helper.make_attribute("strides", [1.0, 1.0]))
    for _ in range(2):  # (the second time, the first node's plan is remembered)
        res = sso.infer(conv2)
        assert res.status == "error"
        (err,) = res.errors
        assert err.code == "bad-attribute" and "'c2'" in err.render(source=False)
        assert str(res.type_of("a")) == "Tensor[(n, 4, 6, 6), float32]"


def test_plans_differ_by_attributes_and_not_by_node() -> None:
    m = _conv_model({"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]})
    for _ in range(2):
        res = sso.infer(m)
        assert res.status == "ok", res.report()
        assert str(res.type_of("a")) == "Tensor[(n, 4, 6, 6), float32]"
        assert str(res.type_of("b")) == "Tensor[(n, 4, 4, 4), float32]"


def test_a_conv_without_kernel_shape_takes_its_weights_kernel() -> None:
    # no kernel_shape: the plan is not remembered (SAME padding reads the weight's kernel)
    nodes = [
        helper.make_node("Conv", ["x", "w3"], ["a"], name="c3", auto_pad="SAME_LOWER", dilations=[2, 2]),
        helper.make_node("Conv", ["x", "w5"], ["b"], name="c5", auto_pad="SAME_LOWER", dilations=[2, 2]),
        helper.make_node("Conv", ["x", "w5"], ["c"], name="v5"),
    ]
    inits = {"w3": np.zeros((2, 3, 3, 3), np.float32), "w5": np.zeros((2, 3, 5, 5), np.float32)}
    m = make_model(nodes, [In("x", "float32", (1, 3, 9, 9))], ["a", "b", "c"], inits=inits)
    res = sso.infer(m)
    assert res.status == "ok", res.report()
    real = reference(m, {"x": np.zeros((1, 3, 9, 9), np.float32)})
    for name, arr in zip("abc", real):
        t = res.type_of(name)
        assert isinstance(t, ss.TensorType) and tuple(int(d) for d in t.dims) == arr.shape


def _ctx(n: onnx.NodeProto, attrs: dict[str, Any] | None = None) -> NodeContext:
    return NodeContext(None, n, 17, OnnxSpan.at("m", 1, "n"), [], attrs)  # type: ignore[arg-type]


def test_attr_key() -> None:
    a = _ctx(helper.make_node("Conv", ["x"], ["y"], strides=[1, 1], group=1))
    b = _ctx(helper.make_node("Conv", ["x"], ["y"], strides=[1.0, 1.0], group=1))
    assert a.attr_key() is not None and a.attr_key() != b.attr_key()
    assert a.attr_int("group") == 1  # (read from what attr_key parsed)
    t = numpy_helper.from_array(np.zeros(2, np.float32))
    assert _ctx(helper.make_node("ConstantOfShape", ["s"], ["y"], value=t)).attr_key() is None
    assert _ctx(helper.make_node("Conv", ["x"], ["y"]), {"group": 2}).attr_key() is None


@pytest.mark.parametrize(
    "tensor",
    [
        numpy_helper.from_array(np.array([3, 0, 7], np.int64), "s"),  # raw_data
        helper.make_tensor("s", TensorProto.INT64, [3], [3, 0, 7]),  # int64_data
    ],
    ids=["raw", "field"],
)
def test_int_vector_initializers_are_read_when_used(tensor: onnx.TensorProto) -> None:
    nodes = [helper.make_node("ConstantOfShape", ["s"], ["y"], name="w")]
    m = make_model(nodes, [], ["y"])
    m.graph.initializer.append(tensor)
    imp = Importer(m, "m")
    imp.run()
    assert str(imp.named["y"].type) == "Tensor[(3, 0, 7), float32]"
    s = imp.named["s"]
    assert isinstance(s, LazyConstant) and s.int_vector() == (3, 0, 7)
    assert s.const is not None and s.const.tolist() == [3, 0, 7] and s.const.dtype == np.int64
    assert s.int_vector() == (3, 0, 7)  # (decoded now: from the array)


def test_a_fill_attribute_of_default_fields_is_not_a_missing_one() -> None:
    # an attribute that serializes to no bytes: not a weight (the converter decides), unlike a
    # ConstantOfShape without attributes
    plain = helper.make_node("ConstantOfShape", ["s"], ["y"], name="w")
    odd = helper.make_node("ConstantOfShape", ["s"], ["z"], name="v")
    odd.attribute.add()
    assert odd.attribute[0].SerializeToString() == b""
    m = make_model([plain, odd], [], ["y", "z"], inits={"s": np.array([2], np.int64)})
    imp = Importer(m, "m")
    imp.run()
    assert imp._weights.bind(plain, ["y2"], [imp.named["s"]], OnnxSpan.at("m", 1, "w"), [])
    assert not imp._weights.bind(odd, ["z2"], [imp.named["s"]], OnnxSpan.at("m", 2, "v"), [])


def test_spans_around_a_subgraph() -> None:
    # the walk leaves a node's span scope when the next node enters its own: after a branch's
    # nodes, what the If converter builds (the If) takes the If node's span again, and a node
    # after the If its own
    def out(name: str) -> list[onnx.ValueInfoProto]:
        return [helper.make_tensor_value_info(name, TensorProto.FLOAT, None)]

    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["t"], name="inner")], "then", [], out("t"))
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"], name="other")], "else", [], out("e"))
    nodes = [
        helper.make_node("If", ["c"], ["y"], name="branch", then_branch=then_g, else_branch=else_g),
        helper.make_node("Abs", ["y"], ["z"], name="after"),
    ]
    m = make_model(nodes, [In("x", "float32", ("n", 4)), In("c", "bool", ())], ["z"])
    fn = Importer(m, "m").run()
    assert isinstance(fn.body, ss.Dataflow)
    (y_var, y), *_ = fn.body.bindings
    assert isinstance(y, ss.If) and isinstance(y.then_branch, ss.Dataflow)
    assert {str(e.span) for e in (y, y_var)} == {"m: node 'branch' (If)"}
    (_, relu), *_ = y.then_branch.bindings
    assert str(relu.span) == "m: node 'inner' (Relu)"
    assert str(fn.body.body.span) == "m: node 'after' (Abs)"
    assert not isinstance(fn.body.span, OnnxSpan)  # (the block: the caller's span, no node's)


def test_a_graph_out_of_order_is_converted_in_the_order_of_its_dependencies() -> None:
    # graph order up to the first node whose input is not defined yet, then ordered_nodes' order
    # for the rest: an undefined input (q) blocks nothing and is an error at its node
    nodes = [
        helper.make_node("Abs", ["x"], ["p"], name="p0"),
        helper.make_node("Relu", ["a"], ["b"], name="uses_a"),
        helper.make_node("Neg", ["x"], ["a"], name="makes_a"),
        helper.make_node("Relu", ["q"], ["c"], name="undefined"),
        helper.make_node("Abs", ["b"], ["d"], name="uses_b"),
    ]
    m = make_model(nodes, [In("x", "float32", ("n",))], ["d", "c", "p"])
    imp = Importer(m, "m")
    imp.run()
    lines = {v: getattr(imp.named[v].expr.span, "line", None) for v in "pbacd"}
    order = sorted(lines, key=lambda v: lines[v] or 0)
    assert order == ["p", "a", "c", "b", "d"]
    (issue,) = imp.issues
    assert issue.diagnostic.code == "undefined-var" and "'undefined'" in str(issue.diagnostic.span)
    res = sso.infer(m)
    assert str(res.type_of("d")) == "Tensor[(n,), float32]"


@pytest.mark.parametrize("name", MODELS)
def test_a_light_model_file_imports_as_the_model_onnx_loads(name: str) -> None:
    # symshape's loader skips onnx's walk for external data (the light models have none): the
    # file imports to what the ModelProto onnx.load gives imports to, byte for byte
    path = os.path.join(LIGHT, f"light_{name}.onnx")
    model, label, base_dir = load_model(path)
    assert label == path and base_dir == os.path.dirname(os.path.abspath(path))

    def run(m: onnx.ModelProto, d: str | None) -> ss.Function:
        return Importer(m, "m", base_dir=d).run()  # (one call site: the blocks' spans)

    from_file, from_proto = run(model, base_dir), run(onnx.load(path), None)
    assert str(from_file) == str(from_proto) and _spans(from_file) == _spans(from_proto)
    res = sso.infer(path, label="m")
    assert res.report() == sso.infer(onnx.load(path), label="m").report()
    assert sso.infer_shapes(path).SerializeToString() == sso.infer_shapes(onnx.load(path)).SerializeToString()


def test_node_context_of_is_the_constructor() -> None:
    n = helper.make_node("Conv", ["x", "w"], ["y"], name="c", strides=[2, 2])
    span = OnnxSpan.at("m", 3, "node 'c' (Conv)")
    m = make_model([n], [In("x", "float32", ("n", 3, 8, 8))], ["y"], inits={"w": np.zeros((4, 3, 3, 3))})
    imp = Importer(m, "m", base_dir="/nowhere")
    inputs: list[Value | None] = [None, None]
    made = NodeContext(imp, n, 17, span, inputs, op_type="Conv", outputs=["y"])
    fast = NodeContext.of(imp, n, 17, span, inputs, "Conv", ["y"])
    # (a field of the constructor's default value is the class's in a context made by ``of``)
    assert {k: getattr(fast, k) for k in vars(made)} == vars(made) and fast.base_dir == "/nowhere"
    assert set(vars(fast)) <= set(vars(made))
    assert fast.attr_ints("strides") == (2, 2) and dict(fast.elem_types) == {}
    # an element type symshape lacks is written into the context's own mapping, not a shared one
    fast.with_unknown_dtype(ss.var("x", ss.Tensor((2,), "float32")), TensorProto.FLOAT8E4M3FN)
    assert dict(fast.elem_types) == {0: TensorProto.FLOAT8E4M3FN}
    assert dict(NodeContext.of(imp, n, 17, span, inputs, "Conv", ["y"]).elem_types) == {}


def test_a_repeated_initializer_name_keeps_the_last() -> None:
    # onnxruntime "will use the latest encountered initializer" (and refuses two of other
    # shapes), the reference evaluator reads the last
    reshape = helper.make_node("Reshape", ["x", "s"], ["y"], name="r")
    m = make_model([reshape], [In("x", "float32", (2, 3))], ["y"])
    for v in ([3, 2], [6, 1]):
        m.graph.initializer.append(numpy_helper.from_array(np.array(v, np.int64), "s"))
    res = sso.infer(m)
    assert str(res.type_of("y")) == "Tensor[(6, 1), float32]"


def test_an_operator_call_takes_the_scope_span_or_the_callers() -> None:
    x = ss.var("x", ss.Tensor((2,), "float32"))
    here = ss.ops.relu(x)  # outside every scope: this line
    assert here.span is not None and here.span.file == __file__
    scoped = OnnxSpan.at("m", 1, "node 'a' (Relu)")
    with ss.span_scope(scoped):
        assert ss.ops.relu(x).span is scoped and ss.Op.get("nn.relu")(x).span is scoped
    with ss.span_scope(None):
        assert ss.ops.relu(x).span is None


def _segmented() -> onnx.TensorProto:
    t = helper.make_tensor("t", TensorProto.INT64, [2], [4, 5])
    t.segment.begin, t.segment.end = 0, 2
    return t


TENSORS = [
    numpy_helper.from_array(np.array([[1.5, -2.0]], np.float32), "t"),  # raw_data
    helper.make_tensor("t", TensorProto.DOUBLE, [2], [0.25, 8.0]),  # double_data
    helper.make_tensor("t", TensorProto.INT32, [3], [1, -2, 3]),  # int32_data
    helper.make_tensor("t", TensorProto.INT64, [0], []),  # empty
    helper.make_tensor("t", TensorProto.FLOAT16, [2], np.array([1, 2], np.float16)),  # numpy_helper's
    helper.make_tensor("t", TensorProto.BOOL, [2], [True, False]),
    _segmented(),
]


@pytest.mark.parametrize("tensor", TENSORS, ids=lambda t: f"{t.data_type}-{list(t.dims)}")
def test_tensor_value_with_the_fields_its_caller_read(tensor: onnx.TensorProto) -> None:
    """What the importer passes of a tensor it read already (its dims, data type, a location not
    external) gives the value read from the tensor alone, which is numpy_helper's value (a
    segment, which numpy_helper does not read either, the same error)."""

    def read(known: bool) -> Any:
        try:
            if known:
                return tensor_value(tensor, tuple(tensor.dims), None, tensor.data_type, True)
            return tensor_value(tensor)
        except Exception as e:
            return f"{type(e).__name__}: {e}"

    plain, known = read(False), read(True)
    if isinstance(plain, str):
        assert known == plain and tensor.HasField("segment")
        return
    want = numpy_helper.to_array(tensor)
    for got in (plain, known):
        assert got.dtype == want.dtype and got.shape == want.shape and got.tolist() == want.tolist()


@pytest.mark.parametrize(
    "value", [3, 2.5, "same_upper", [1, 2], [0.5], ["a", "b"], np.array([1, 2], np.int64)], ids=str
)
def test_parse_attribute_with_the_type_its_caller_read(value: Any) -> None:
    a = helper.make_attribute("x", value)
    got, want = parse_attribute(a, None, a.type), parse_attribute(a)
    if isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray) and got.tolist() == want.tolist() and got.dtype == want.dtype
    else:
        assert got == want and type(got) is type(want)
