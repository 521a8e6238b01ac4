"""A ``Scan`` body's declared sizes (symshape.onnx.ops.control), against onnxruntime at sizes 1 to 3.

onnxruntime allocates a ``Scan`` body's inputs and outputs by the constant sizes the body declares
and refuses a run where the computed size differs ("the pre-allocated shapes match the expected
output shapes"); a ``dim_param`` takes any size. So symshape requires each declared constant
(a guard, or an error naming the body's value) and gives the outputs those sizes, as onnx's
``infer_shapes`` writes them. (A ``Loop`` body's declared sizes are only warned about by
onnxruntime: test_onnx_control_loop runs other sizes.)
"""

from __future__ import annotations

from typing import Any

import pytest
from onnx import TensorProto, helper
from onnx_helpers import In
from size_oracle import disagreements, feeds_of

import symshape as ss
import symshape.onnx as sso

SIZES = [{"k": 1, "t": 3}, {"k": 2, "t": 1}, {"k": 3, "t": 4}]
INS = [In("i", "float32", ("k",)), In("xs", "float32", ("t", "k"))]


def _model(
    decl_in: list[Any] | None, decl_state: list[Any] | None, decl_scan: list[Any] | None, opset: int = 16
) -> Any:
    """A running sum: state ``s + x_t``, scan output the new state; the body declares the sizes."""
    f = TensorProto.FLOAT
    body = helper.make_graph(
        [
            helper.make_node("Add", ["s", "x"], ["s2"], name="acc"),
            helper.make_node("Identity", ["s2"], ["y"], name="emit"),
        ],
        "body",
        [helper.make_tensor_value_info("s", f, decl_in), helper.make_tensor_value_info("x", f, decl_in)],
        [
            helper.make_tensor_value_info("s2", f, decl_state),
            helper.make_tensor_value_info("y", f, decl_scan),
        ],
    )
    n = helper.make_node("Scan", ["i", "xs"], ["fin", "ys"], name="scan", num_scan_inputs=1, body=body)
    g = helper.make_graph(
        [n],
        "g",
        [helper.make_tensor_value_info("i", f, ["k"]), helper.make_tensor_value_info("xs", f, ["t", "k"])],
        [helper.make_tensor_value_info("fin", f, None), helper.make_tensor_value_info("ys", f, None)],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize(
    ("decl", "want"),
    [
        ((["D"], ["D"], ["D"]), ("Tensor[(k,), float32]", "Tensor[(t, k), float32]")),
        (([2], ["D"], ["D"]), ("Tensor[(2,), float32]", "Tensor[(t, 2), float32]")),
        ((["D"], [2], ["D"]), ("Tensor[(k,), float32]", "Tensor[(t, k), float32]")),
        ((["D"], ["D"], [2]), ("Tensor[(k,), float32]", "Tensor[(t, 2), float32]")),
    ],
)
def test_declared_constant_sizes_are_required(decl: tuple[Any, Any, Any], want: tuple[str, str]) -> None:
    model = _model(*decl)
    res = sso.infer(model, dims={"k": ss.dim("k"), "t": ss.dim("t")})
    assert (str(res.type_of("fin")), str(res.type_of("ys"))) == want, res.report()
    assert disagreements(model, ["k", "t"], SIZES, feeds_of(INS)) == []


def test_a_size_that_cannot_be_the_declared_one_is_an_error_naming_the_body_value() -> None:
    model = _model(["D"], ["D"], [2])
    model.graph.input[0].type.tensor_type.shape.dim[0].Clear()
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 3
    res = sso.infer(model, dims={"t": ss.dim("t")})
    assert res.status == "error"
    assert "Scan body output 'y' is declared with size 2 at axis 0, gets 3" in res.report()
