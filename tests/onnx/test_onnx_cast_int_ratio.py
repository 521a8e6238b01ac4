"""A size computed in float and cast back to int: ``int(math.ceil(h / p) * p)`` as the TorchScript
exporter writes it, ``Cast(Mul(Ceil(Div(Cast(h, float), p)), p), int64)`` (MobileViT pads its
feature maps to a multiple of the patch so). symshape gives the int its value in int arithmetic
(``ceil(n/d)`` is ``(n + d - 1)//d``); before, the value was unknown and every size after it a
fresh one. Checked against onnxruntime: the int feeds a ``Range`` whose length is observed."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_helpers import run_ort

import symshape as ss
import symshape.onnx as sso


def _model(steps: list[tuple[str, float | None]], as_initializer: bool) -> onnx.ModelProto:
    """x (n, 3) float -> n -> Cast(float) -> the steps (op, float constant) -> Cast(int64) -> Range."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
        helper.make_node("Cast", ["n"], ["f0"], to=TensorProto.FLOAT),
    ]
    inits = [
        numpy_helper.from_array(np.array(0, np.int64), "zero"),
        numpy_helper.from_array(np.array(1, np.int64), "one"),
    ]
    for i, (op, c) in enumerate(steps):
        ins = [f"f{i}"]
        if c is not None:
            arr = numpy_helper.from_array(np.array(c, np.float32), f"c{i}")
            if as_initializer:
                inits.append(arr)
            else:
                nodes.append(helper.make_node("Constant", [], [f"c{i}"], value=arr))
            ins.append(f"c{i}")
        nodes.append(helper.make_node(op, ins, [f"f{i + 1}"]))
    nodes += [
        helper.make_node("Cast", [f"f{len(steps)}"], ["k"], to=TensorProto.INT64),
        helper.make_node("Range", ["zero", "k", "one"], ["y"]),
    ]
    g = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, None)], initializer=inits,
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


CASES = {
    "ceil_to_multiple_of_2": [("Div", 2.0), ("Ceil", None), ("Mul", 2.0)],
    "floor_to_multiple_of_3": [("Div", 3.0), ("Floor", None), ("Mul", 3.0)],
    "ceil_div_4": [("Div", 4.0), ("Ceil", None)],
    "truncated_div_2": [("Div", 2.0)],
    "three_halves_ceil": [("Mul", 3.0), ("Div", 2.0), ("Ceil", None)],
    "times_4_over_2": [("Mul", 4.0), ("Div", 2.0)],
}


@pytest.mark.parametrize("as_initializer", [False, True], ids=["constant", "initializer"])
@pytest.mark.parametrize("name", list(CASES))
def test_int_size_through_float(name: str, as_initializer: bool) -> None:
    model = _model(CASES[name], as_initializer)
    n = ss.dim("n")
    res = sso.infer(model, dims={"n": n})
    assert res.status == "ok", res.report()
    t = res.types()["y"]
    assert isinstance(t, ss.TensorType) and t.dims is not None
    assert not t.dims[0].is_symbol or t.dims[0] == n  # a formula of n, not a fresh size
    for size in (1, 2, 3, 4, 5, 7, 8, 13):
        (y,) = run_ort(model, {"x": np.zeros((size, 3), np.float32)})
        assert (int(t.dims[0].subs({n: size})),) == y.shape, (name, size, t)


def test_a_float_input_keeps_its_unknown_value() -> None:
    """A float that is not a cast of an int (a model input) still has no value: a fresh size."""
    model = _model(CASES["ceil_to_multiple_of_2"], False)
    g = model.graph
    g.node[2].CopyFrom(helper.make_node("ReduceSum", ["x"], ["f0"], keepdims=0))  # float, no value
    res = sso.infer(model, dims={"n": ss.dim("n")})
    t = res.types()["y"]
    assert isinstance(t, ss.TensorType) and t.dims is not None and str(t.dims[0]) != "n"
    assert "n" not in str(t.dims[0])
