"""What the importer reads of each node once (graph.scan) and what it keeps after the run: report
names of unnamed nodes (also inside If branches, and when asked after the run), the node fields a
NodeContext reads on demand, and INTS attributes read without iterating protobuf containers."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx_helpers import In, make_model

import symshape.onnx as sso
from symshape.onnx.context import NodeContext
from symshape.onnx.graph import scan
from symshape.onnx.importer import Importer

F = "float32"
node = helper.make_node  # (unnamed nodes: onnx_helpers.node names them)


def _model_with_unnamed_nodes() -> onnx.ModelProto:
    then_g = helper.make_graph(
        [node("Relu", ["x"], ["t"])],
        "then",
        [],
        [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)],
    )
    else_g = helper.make_graph(
        [node("Neg", ["x"], ["e"])], "else", [], [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)]
    )
    nodes = [
        node("Relu", ["x"], ["a"]),
        node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g),
        node("Abs", ["a"], ["z"], name="abs"),
    ]
    return make_model(nodes, [In("x", F, ("n", 4)), In("c", "bool", ())], ["y", "z"])


def test_scan_names_every_node_once_in_graph_order() -> None:
    m = _model_with_unnamed_nodes()
    imp = Importer(m, "m")
    every: dict[int, object] = {}
    top = scan(m.graph, "", imp._converter, every)
    assert [i.ident for i in top] == ["#0", "#1", "abs"]
    assert [i.what for i in every.values()] == [  # type: ignore[attr-defined]
        "node '#0' (Relu)",
        "node '#1' (If)",
        "node '#1/else#0' (Neg)",  # (make_node sorts the attributes: else_branch first)
        "node '#1/then#0' (Relu)",
        "node 'abs' (Abs)",
    ]
    assert list(top[2].inputs) == ["a"] and list(top[2].outputs) == ["z"]


def test_report_names_are_the_same_after_the_run() -> None:
    m = _model_with_unnamed_nodes()
    imp = Importer(m, "m")
    imp.run()
    g = m.graph
    assert imp.what(g.node[0]) == "node '#0' (Relu)"
    assert imp.what(g.node[2]) == "node 'abs' (Abs)"
    then_node = g.node[1].attribute[0].g.node[0]
    assert imp.what(then_node) in ("node '#1/then#0' (Relu)", "node '#1/else#0' (Neg)")


def test_a_run_names_unnamed_nodes_in_reports() -> None:
    # an impossible Reshape at an unnamed node: the error names it by position
    nodes = [node("Relu", ["x"], ["a"]), node("Reshape", ["a", "s"], ["y"])]
    m = make_model(nodes, [In("x", F, (2, 3))], ["y"], inits={"s": np.array([4, 2], np.int64)})
    res = sso.infer(m)
    assert res.status == "error"
    assert "node '#1' (Reshape)" in res.report()


def test_node_context_reads_name_and_domain_on_demand() -> None:
    n = helper.make_node("Relu", ["x"], ["y"], name="r", domain="ai.onnx")
    ctx = NodeContext(None, n, 17, None, [])  # type: ignore[arg-type]
    assert (ctx.name, ctx.domain, ctx.op_type, ctx.num_outputs) == ("r", "ai.onnx", "Relu", 1)
    with pytest.raises(AttributeError):
        ctx.no_such_field  # noqa: B018


@pytest.mark.parametrize(
    ("perm", "expected"),
    [([1, 0], (1, 0)), ([0, 2, 1], (0, 2, 1))],  # INTS attributes
)
def test_attr_ints_of_ints_attributes(perm: list[int], expected: tuple[int, ...]) -> None:
    n = helper.make_node("Transpose", ["x"], ["y"], perm=perm)
    ctx = NodeContext(None, n, 17, None, [])  # type: ignore[arg-type]
    assert ctx.attr_ints("perm") == expected
    assert ctx.attr_ints("perm") == expected  # (parsed once, then read again)


@pytest.mark.parametrize(
    ("given", "expected"),
    [((3,), (3,)), (5, (5,)), ((True, 1), None), ((1.5,), None)],
)
def test_attr_ints_of_given_values(given: object, expected: tuple[int, ...] | None) -> None:
    n = helper.make_node("Transpose", ["x"], ["y"])
    ctx = NodeContext(None, n, 17, None, [], {"perm": given})  # type: ignore[arg-type]
    if expected is None:
        with pytest.raises(sso.ConversionError):
            ctx.attr_ints("perm")
    else:
        assert ctx.attr_ints("perm") == expected
