"""Converters of symshape.onnx.ops.control (If)."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper
from onnx_helpers import In, make_model, node, reference, run_ort

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
    then_g = _branch("then", [node("NoSuchOp", ["x"], ["a"], name="inner_op")], "a", None)
    else_g = _branch("else", [node("Neg", ["x"], ["b"], name="ng")], "b", None)
    n = node("If", ["c"], ["y"], name="branchy", then_branch=then_g, else_branch=else_g)
    res = sso.infer(make_model([n], [In("x", F, ("n", 4)), In("c", "bool", ())], ["y"]))
    assert res.status == "error"
    cause, op, names = res.unsupported[0]
    assert (cause.key, op, names) == ("unsupported-op", "NoSuchOp", ("inner_op",))


def _scan_model(out_axis: int) -> object:
    """A running sum over the rows of ``x (n, 3)`` from ``s0 (3,)``: the body ``s' = s + x_t``, scan
    output ``y_t = s'`` and a second scan output ``x_t * 2`` stacked along ``out_axis``."""
    body = helper.make_graph(
        [
            node("Add", ["s_in", "x_t"], ["s_out"], name="acc"),
            node("Identity", ["s_out"], ["y_t"], name="emit"),
            node("Add", ["x_t", "x_t"], ["z_t"], name="twice"),
        ],
        "body",
        [helper.make_tensor_value_info(v, TensorProto.FLOAT, [3]) for v in ("s_in", "x_t")],
        [helper.make_tensor_value_info(v, TensorProto.FLOAT, [3]) for v in ("s_out", "y_t", "z_t")],
    )
    n = helper.make_node(
        "Scan", ["s0", "x"], ["s", "y", "z"], num_scan_inputs=1, body=body, scan_output_axes=[0, out_axis]
    )
    return make_model([n], [In("s0", F, (3,)), In("x", F, ("n", 3))], ["s", "y", "z"], opset=16)


def test_scan_stacks_the_body_outputs_along_the_scan_length() -> None:
    for out_axis in (0, 1):
        m = _scan_model(out_axis)
        n = ss.dim("n")
        res = sso.infer(m, dims={"n": n})
        assert res.status == "ok", res.report()
        z = "Tensor[(n, 3), float32]" if out_axis == 0 else "Tensor[(3, n), float32]"
        assert [str(res.type_of(v)) for v in ("s", "y", "z")] == [
            "Tensor[(3,), float32]",
            "Tensor[(n, 3), float32]",
            z,
        ]
        for k in (1, 4):
            got = run_ort(m, {"s0": np.zeros(3, np.float32), "x": np.ones((k, 3), np.float32)})
            assert [a.shape for a in got] == [
                tuple(int(d.subs({n: k})) for d in res.type_of(v).dims) for v in ("s", "y", "z")
            ]


def test_unsupported_node_inside_a_scan_body_is_reported() -> None:
    body = helper.make_graph(
        [node("Foo", ["s_in", "x_t"], ["s_out"], name="foo", domain="my.domain")],
        "body",
        [helper.make_tensor_value_info(v, TensorProto.FLOAT, [3]) for v in ("s_in", "x_t")],
        [helper.make_tensor_value_info("s_out", TensorProto.FLOAT, [3])],
    )
    n = helper.make_node("Scan", ["s0", "x"], ["s"], num_scan_inputs=1, body=body)
    m = make_model(
        [n], [In("s0", F, (3,)), In("x", F, ("n", 3))], ["s"], opset=16, extra_opsets={"my.domain": 1}
    )
    res = sso.infer(m)
    assert res.status == "error" and any("foo" in d.message for d in res.errors), res.report()
