"""The importer's shortcuts around symshape's constructors give what the constructors give.

* ``static_tensor_type`` (the types of weights and initializers) is ``ss.Tensor``: the same fields,
  or the same error, for a table of shapes and dtypes and for random ones.
* ``graph.dataflow`` (the model's block, its bindings unchecked) is ``Dataflow``: the same fields.
* ``attrs.fields_after_op_type`` (a node's attributes as bytes, the key of ``Conv`` and pool
  plans) is the node serialized without its inputs, outputs, name and operator type, for a table
  of nodes and random ones; the plans by those bytes are the plans by attribute values, and no
  plan at all, for a table of ``Conv`` nodes.
* ``graph.reachable`` (which node outputs the graph's outputs evaluate) is the walk of every
  operand by ``operands``, on the light models and on programs with tuples and function calls.
* With the three replaced by the constructors and the plain walk, the light models of onnx's
  wheel (as shipped and with a symbolic batch) import to the same program (text, spans,
  annotations) and infer to the same report and types.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from benchmarks.workloads import fresh_caches
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import helper
from onnx_helpers import In, light_model, make_model

import symshape as ss
import symshape.onnx as sso
from symshape.ir.expr import operands
from symshape.onnx import graph, importer, lazy_constant
from symshape.onnx.attrs import fields_after_op_type
from symshape.onnx.context import NodeContext, Value
from symshape.onnx.importer import Importer
from symshape.onnx.lazy_constant import LazyConstant, static_tensor_type
from symshape.onnx.ops import nn as nn_mod

MODELS = ["bvlc_alexnet", "densenet121", "inception_v1", "resnet50", "shufflenet", "squeezenet"]


def _outcome(f: Any, *args: Any) -> tuple[str, Any]:
    try:
        t = f(*args)
    except ss.SymshapeError as e:
        return ("error", (e.code, str(e)))
    return (type(t).__name__, dict(t.__dict__))


SHAPES: list[tuple[Any, ...]] = [(), (0,), (1,), (3, 4), (1024, 1025), (2**40,), (7, -1), (-3,), (True, 2)]
DTYPES = ["float32", "int64", "bool", "float16", "bfloat16", "not-a-dtype"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_static_tensor_type_is_tensor(shape: tuple[Any, ...], dtype: str) -> None:
    fast, plain = _outcome(static_tensor_type, shape, dtype), _outcome(ss.Tensor, shape, dtype)
    assert fast == plain
    assert list(fast[1]) == list(plain[1])  # (the fields in the same order: printing reads them)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(-3, 3000), max_size=5).map(tuple),
    st.sampled_from(DTYPES),
)
def test_static_tensor_type_is_tensor_for_random_shapes(shape: tuple[int, ...], dtype: str) -> None:
    fast, plain = _outcome(static_tensor_type, shape, dtype), _outcome(ss.Tensor, shape, dtype)
    assert fast == plain and list(fast[1]) == list(plain[1])
    if fast[0] == "TensorType":
        t = static_tensor_type(shape, dtype)
        assert t == ss.Tensor(shape, dtype) and hash(t) == hash(ss.Tensor(shape, dtype))


def test_dataflow_is_the_constructor() -> None:
    x = ss.var("x", ss.Tensor((2, 3), "float32"))
    a, b = ss.Var("a"), ss.Var("b")
    bindings = [(a, ss.ops.relu(x)), (b, ss.const(1.0))]
    span = ss.Span("m.py", 3, 1)
    with ss.span_scope(span):
        fast, plain = graph.dataflow(bindings, a), ss.Dataflow(bindings, a)
    assert (fast.bindings, fast.body, fast.span) == (plain.bindings, plain.body, plain.span)
    assert type(fast.bindings) is tuple and fast.span == span
    assert str(ss.Function([x], fast)) == str(ss.Function([x], plain))


def _plain_reachable(roots: Any) -> set[int]:
    """The walk ``reachable`` shortens: every operand, by ``operands``."""
    reached: set[int] = set()
    stack = list(roots)
    while stack:
        e = stack.pop()
        if isinstance(e, (ss.Var, ss.Constant)) or id(e) in reached:
            continue
        reached.add(id(e))
        stack.extend(operands(e))
    return reached


@pytest.mark.parametrize("name", MODELS)
def test_reachable_is_the_walk_of_every_operand(name: str) -> None:
    fn = Importer(light_model(name, False), name).run()
    body = fn.body
    assert isinstance(body, ss.Dataflow)
    roots = [body.body] + [e for _, e in body.bindings]
    assert graph.reachable(iter(roots)) == _plain_reachable(roots)
    # from each binding alone (a root deep inside the program)
    for _, e in body.bindings[-40:]:
        assert graph.reachable([e]) == _plain_reachable([e])


def test_reachable_through_tuples_and_function_calls() -> None:
    x = ss.var("x", ss.Tensor((2, 3), "float32"))
    r = ss.ops.relu(x)
    t = ss.Tuple([r, ss.ops.sigmoid(x)])
    g = ss.TupleGetItem(t, 1)
    f = ss.Function([ss.var("y", ss.Tensor((2, 3), "float32"))], ss.ops.tanh(x))
    call = ss.Call(f, [g])
    for roots in ([call], [g], [t, call], [ss.Tuple([call, r])]):
        assert graph.reachable(roots) == _plain_reachable(roots)
    assert id(f) in graph.reachable([call]) and id(r) in graph.reachable([call])


def test_an_output_no_graph_output_reads_is_bound() -> None:
    # 'dead' and 'dead2' (which reads 'dead') reach no graph output: both are bound to variables
    nodes = [
        helper.make_node("Relu", ["x"], ["y"]),
        helper.make_node("Sigmoid", ["x"], ["dead"]),
        helper.make_node("Tanh", ["dead"], ["dead2"]),
    ]
    m = make_model(nodes, [In("x", "float32", ("n", 3))], ["y"])
    fn = Importer(m, "m").run()
    assert isinstance(fn.body, ss.Dataflow)
    bound = [v.name for v, _ in fn.body.bindings]
    assert bound == ["dead", "dead2"]
    res = sso.infer(m)
    assert str(res.type_of("dead2")) == "Tensor[(n, 3), float32]"


def _program(m: onnx.ModelProto) -> list[str]:
    fn = Importer(m, "m").run()
    out = [str(fn), repr(fn.span), repr(fn.body.span)]
    assert isinstance(fn.body, ss.Dataflow)
    for v, e in fn.body.bindings:
        out.append(f"{v.name} {v.span!r} {v.type_annotation!r} {e.span!r} {getattr(e, 'type', None)!r}")
    res = sso.infer(m, label="m")
    out += [res.status, res.report()]
    out += [f"{k}: {t}" for k, t in res.types().items()]
    return out


@pytest.mark.parametrize("batch", [False, True], ids=["shipped", "batch-N"])
@pytest.mark.parametrize("name", ["bvlc_alexnet", "densenet121", "resnet50"])
def test_light_models_import_the_same_without_the_shortcuts(name: str, batch: bool) -> None:
    fast = _program(light_model(name, batch))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(lazy_constant, "static_tensor_type", ss.Tensor)
        mp.setattr(importer, "static_tensor_type", ss.Tensor)
        mp.setattr(graph, "dataflow", ss.Dataflow)
        mp.setattr(importer, "dataflow", ss.Dataflow)
        mp.setattr(graph, "reachable", _plain_reachable)
        plain = _program(light_model(name, batch))
    assert fast == plain


def _fields_oracle(n: onnx.NodeProto) -> bytes:
    """The node without its inputs, outputs, name and operator type, serialized."""
    m = onnx.NodeProto()
    m.CopyFrom(n)
    del m.input[:]
    del m.output[:]
    m.ClearField("name")
    m.ClearField("op_type")
    out: bytes = m.SerializeToString()
    return out


def _head_is_short(n: onnx.NodeProto) -> bool:
    heads = [*n.input, *n.output, n.name, n.op_type]
    return all(len(s.encode()) < 128 for s in heads)


FIELD_NODES = [
    helper.make_node("Relu", ["x"], ["y"]),
    helper.make_node("Conv", ["x", "w", ""], ["y"], name="c", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1], kernel_shape=[3, 3], doc_string="d"),
    helper.make_node("Custom", ["ä", "ß"], ["名前"], name="节点", domain="com.example", axis=1),
    helper.make_node("MaxPool", ["x" * 127], ["y"], kernel_shape=[2, 2]),
    helper.make_node("MaxPool", ["x" * 128], ["y"], kernel_shape=[2, 2]),
    helper.make_node("Gemm", ["a", "b"], ["c"], name="g" * 200, alpha=0.5, transB=1),
    helper.make_node("Cast", ["a"], ["b"], to=onnx.TensorProto.FLOAT, domain=""),
]
_present_empty_name = helper.make_node("Relu", ["x"], ["y"], kernel=[1] * 60)
_present_empty_name.name = ""
FIELD_NODES.append(_present_empty_name)


@pytest.mark.parametrize("node", FIELD_NODES, ids=lambda n: f"{n.op_type}-{len(n.SerializeToString())}")
def test_fields_after_op_type_are_the_node_without_its_head(node: onnx.NodeProto) -> None:
    got = fields_after_op_type(node.SerializeToString())
    if _head_is_short(node):
        assert got == _fields_oracle(node)
    else:
        assert got is None


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.text(max_size=140), max_size=3),
    st.lists(st.text(max_size=20), min_size=1, max_size=2),
    st.text(max_size=140),
    st.dictionaries(st.sampled_from(["axis", "perm", "mode", "alpha"]), st.integers(-3, 300), max_size=3),
    st.sampled_from(["", "com.microsoft"]),
)
def test_fields_after_op_type_for_random_nodes(
    inputs: list[str], outputs: list[str], name: str, attrs: dict[str, Any], domain: str
) -> None:
    node = helper.make_node("Op", inputs, outputs, name=name or None, domain=domain or None, **attrs)
    got = fields_after_op_type(node.SerializeToString())
    assert got == (_fields_oracle(node) if _head_is_short(node) else None)
    # equal attributes (and domain) give equal bytes, whatever the names
    other = helper.make_node("Op", ["q"], ["r"], name="s", domain=domain or None, **attrs)
    if got is not None:
        assert got == fields_after_op_type(other.SerializeToString())


def _convs(attrs: list[dict[str, Any]], names: list[str] | None = None) -> onnx.ModelProto:
    w = np.zeros((4, 3, 3, 3), np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w"], [f"y{i}"], name=(names or [""] * len(attrs))[i], **a)
        for i, a in enumerate(attrs)
    ]
    outs = [f"y{i}" for i in range(len(attrs))]
    return make_model(nodes, [In("x", "float32", ("n", 3, 9, 9))], outs, inits={"w": w})


PLAN_CASES: dict[str, list[dict[str, Any]]] = {
    "same": [{"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}] * 3,
    "order": [{"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, {"pads": [1, 1, 1, 1], "kernel_shape": [3, 3]}],
    "strides": [{"kernel_shape": [3, 3], "strides": [1, 1]}, {"kernel_shape": [3, 3], "strides": [2, 2]}],
    "no-kernel": [{"pads": [1, 1, 1, 1]}, {"pads": [1, 1, 1, 1]}, {"kernel_shape": [3, 3]}],
    "auto-pad": [{"auto_pad": "SAME_UPPER"}, {"auto_pad": "SAME_UPPER", "kernel_shape": [3, 3]}],
    "floats": [{"kernel_shape": [3, 3], "strides": [1, 1]}, {"kernel_shape": [3, 3], "strides": [1.0, 1.0]}],
    "bad": [{"kernel_shape": [3, 3], "pads": [1, 1]}, {"kernel_shape": [3, 3], "pads": [1, 1]}],
}


def _conversion(m: onnx.ModelProto) -> list[str]:
    fresh_caches()
    fn = Importer(m, "m").run()
    res = sso.infer(m, label="m")
    return [str(fn), res.status, res.report(), *(f"{k}: {t}" for k, t in res.types().items())]


@pytest.mark.parametrize("names", [None, ["a", "b" * 130, "c"]], ids=["unnamed", "long-name"])
@pytest.mark.parametrize("case", list(PLAN_CASES))
def test_conv_plans_by_attribute_bytes_are_the_plans_by_value(case: str, names: list[str] | None) -> None:
    m = _convs(PLAN_CASES[case], names)
    by_bytes = _conversion(m)
    with pytest.MonkeyPatch.context() as mp:  # keyed by the attributes' values
        mp.setattr(NodeContext, "attribute_bytes", lambda self: None)
        by_value = _conversion(m)
    with pytest.MonkeyPatch.context() as mp:  # no plan kept
        mp.setattr(nn_mod, "_planned", lambda ctx, tag, needs, make: make())
        plain = _conversion(m)
    assert by_bytes == by_value == plain


def test_a_conv_plan_without_kernel_shape_is_not_shared_by_its_attribute_bytes() -> None:
    # the same attributes (bytes), no kernel_shape: each plan follows from its weight's rank
    inits = {"w1": np.zeros((4, 3, 3), np.float32), "w2": np.zeros((4, 3, 5, 5), np.float32)}
    nodes = [
        helper.make_node("Conv", ["x1", "w1"], ["y0"], group=1),
        helper.make_node("Conv", ["x2", "w2"], ["y1"], group=1),
    ]
    ins = [In("x1", "float32", ("n", 3, 9)), In("x2", "float32", ("n", 3, 9, 9))]
    m = make_model(nodes, ins, ["y0", "y1"], inits=inits)
    res = sso.infer(m)
    assert [str(res.type_of(y)) for y in ("y0", "y1")] == [
        "Tensor[(n, 4, 7), float32]",
        "Tensor[(n, 4, 5, 5), float32]",
    ]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(nn_mod, "_planned", lambda ctx, tag, needs, make: make())
        plain = sso.infer(m)
    assert res.report() == plain.report()


def test_context_inputs_are_the_values_expressions() -> None:
    x = ss.var("x", ss.Tensor((2,), "float32"))
    made = Value("m", None, _make=lambda: ss.ops.relu(x))
    lazy = LazyConstant(
        "c", (2,), "int64", ss.Tensor((2,), "int64"), np.array([1, 2]), "initializer", "m", 3, [], 7
    )
    values = [Value("x", x), None, made, lazy, Value.of("y", ss.ops.sigmoid(x))]
    ctx = NodeContext(None, helper.make_node("Concat", ["x", "", "m", "c", "y"], ["z"]), 13, None, values)  # type: ignore[arg-type]
    got = ctx.inputs()
    assert made.materialized and lazy.materialized  # (built by inputs())
    assert got == [v.expr for v in values if v is not None]
    assert [type(e).__name__ for e in got] == ["Var", "Call", "Var", "Call"]
