"""Converters of symshape.onnx.ops.control (If)."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper
from onnx_helpers import In, make_model, node, reference

import symshape as ss
import symshape.onnx as sso

F = "float32"


def _branch(name: str, op_nodes: list, out: str, shape: list | None) -> object:
    return helper.make_graph(
        op_nodes, name, [], [helper.make_tensor_value_info(out, TensorProto.FLOAT, shape)]
    )


def _if_model(cond: In | None, inits: dict) -> object:
    then_g = _branch("then", [node("Relu", ["x"], ["t_out"], name="relu_then")], "t_out", None)
    shape = helper.make_tensor("sh", TensorProto.INT64, [1], [-1])
    else_g = _branch(
        "else",
        [
            node("Constant", [], ["sh"], name="c_else", value=shape),
            node("Reshape", ["x", "sh"], ["e_out"], name="flat"),
        ],
        "e_out",
        None,
    )
    n = node("If", ["c"], ["y"], name="if0", then_branch=then_g, else_branch=else_g)
    ins = [In("x", F, ("n", 4))] + ([cond] if cond is not None else [])
    return make_model([n], ins, ["y"], inits=inits)


def test_if_with_a_constant_condition_is_its_branch() -> None:
    m = _if_model(None, {"c": np.array(False)})
    res = sso.infer(m)
    assert res.status == "ok"
    assert str(res.type_of("y")) == "Tensor[(4*n,), float32]"
    assert str(res.type_of("e_out")) == "Tensor[(4*n,), float32]"  # values of the taken branch


def test_if_with_a_run_time_condition_joins_the_branches() -> None:
    m = _if_model(In("c", "bool", ()), {})
    res = sso.infer(m)
    assert res.ok
    t = res.type_of("y")
    assert isinstance(t, ss.TensorType)
    assert t.ndim is None  # ranks 2 and 1 join to an unknown rank
    for c in (True, False):
        (y,) = reference(m, {"x": np.ones((3, 4), np.float32), "c": np.array(c)})
        assert y.ndim in (1, 2)


def test_if_branches_with_equal_types_keep_them() -> None:
    then_g = _branch("then", [node("Relu", ["x"], ["a"], name="r")], "a", None)
    else_g = _branch("else", [node("Neg", ["x"], ["b"], name="ng")], "b", None)
    n = node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)
    res = sso.infer(make_model([n], [In("x", F, ("n", 4)), In("c", "bool", (1,))], ["y"]))
    assert res.status == "ok" and str(res.type_of("y")) == "Tensor[(n, 4), float32]"


def test_unsupported_node_inside_a_branch_is_reported_up_front() -> None:
    then_g = _branch("then", [node("Loop", ["x"], ["a"], name="inner_loop")], "a", None)
    else_g = _branch("else", [node("Neg", ["x"], ["b"], name="ng")], "b", None)
    n = node("If", ["c"], ["y"], name="branchy", then_branch=then_g, else_branch=else_g)
    res = sso.infer(make_model([n], [In("x", F, ("n", 4)), In("c", "bool", ())], ["y"]))
    assert res.status == "error"
    cause, op, names = res.unsupported[0]
    assert (cause.key, op, names) == ("control-flow", "Loop", ("inner_loop",))
