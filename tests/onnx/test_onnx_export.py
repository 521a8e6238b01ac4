"""infer_shapes (symshape.onnx.export): the model with every value's type written in."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx_helpers import In, make_model, node

import symshape as ss
import symshape.onnx as sso

F = "float32"


def _model() -> onnx.ModelProto:
    nodes = [
        node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1], strides=[2, 2]),
        node("Relu", ["c"], ["r"], name="relu"),
        node("Reshape", ["r", "s"], ["y"], name="flat"),
    ]
    inits = {"w": np.ones((4, 3, 3, 3), np.float32), "s": np.array([0, -1], np.int64)}
    return make_model(nodes, [In("x", F, ("N", 3, "H", 8))], ["y"], inits=inits)


def _dims(vi: onnx.ValueInfoProto) -> list[object]:
    return [d.dim_param if d.HasField("dim_param") else d.dim_value for d in vi.type.tensor_type.shape.dim]


def test_value_info_and_outputs_are_filled_in_canonical_syntax() -> None:
    m2 = sso.infer_shapes(_model())
    vi = {v.name: v for v in m2.graph.value_info}
    assert set(vi) == {"c", "r"}
    assert _dims(vi["c"]) == ["N", 4, "(H - 1)//2 + 1", 4]
    assert vi["c"].type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    assert _dims(m2.graph.output[0]) == ["N", "16*((H - 1)//2) + 16"]
    onnx.checker.check_model(m2)


def test_written_types_read_back_the_same() -> None:
    m2 = sso.infer_shapes(_model())
    # the inferred model's output type, imported as a declared graph input, is the same type
    out = m2.graph.output[0]
    m3 = make_model([node("Relu", ["z"], ["q"])], [], ["q"])
    m3.graph.input.append(onnx.ValueInfoProto(name="z", type=out.type))
    t = sso.infer(m3).type_of("q")
    assert str(t) == str(sso.infer(_model()).type_of("y"))


def test_the_input_model_is_not_changed() -> None:
    m = _model()
    before = m.SerializeToString()
    sso.infer_shapes(m)
    assert m.SerializeToString() == before


def test_an_error_raises() -> None:
    m = make_model(
        [node("Reshape", ["x", "s"], ["y"])], [In("x", F, (2, 3))], ["y"], inits={"s": np.array([7])}
    )
    with pytest.raises(ss.SymshapeError) as e:
        sso.infer_shapes(m)
    assert e.value.code == "reshape-size"


def test_unknown_dims_stay_empty() -> None:
    m = make_model([node("Relu", ["x"], ["y"])], [In("x", F, ("N",))], ["y"])
    m.graph.input[0].type.tensor_type.shape.dim[0].Clear()
    m2 = sso.infer_shapes(m)
    d = m2.graph.output[0].type.tensor_type.shape.dim[0]
    assert not d.HasField("dim_param") and not d.HasField("dim_value")
