"""A ``dim_param`` read as a name the caller's symbol has (``batch-size`` as ``batch_size``, with
``dims={"N": ss.dim("batch_size")}``) gets another symbol: the two sizes were merged, and an
``Add`` of them passed without the guard onnxruntime's refusal at ``N=2, batch-size=3`` calls for
(review gr, S5)."""

from __future__ import annotations

from onnx import helper

import symshape as ss
import symshape.onnx as sso


def _model() -> object:
    x = helper.make_tensor_value_info("x", 1, ["N", 3])
    z = helper.make_tensor_value_info("z", 1, ["batch-size", 3])
    g = helper.make_graph(
        [helper.make_node("Add", ["x", "z"], ["y"])],
        "g",
        [x, z],
        [helper.make_tensor_value_info("y", 1, None)],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_the_callers_symbol_keeps_its_name() -> None:
    b = ss.dim("batch_size")
    res = sso.infer(_model(), dims={"N": b})
    assert str(res.type_of("x")) == "Tensor[(batch_size, 3), float32]"
    assert str(res.type_of("z")) == "Tensor[(batch_size_2, 3), float32]"
    assert res.status == "guarded"
    assert [str(g) for g in res.guards] == [
        "batch_size == batch_size_2 or batch_size == 1 or batch_size_2 == 1"
    ]


def test_without_dims_they_stay_apart() -> None:
    res = sso.infer(_model())
    assert res.status == "guarded" and len(res.guards) == 1
