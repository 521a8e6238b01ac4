"""``auto_pad=""`` is ``NOTSET`` for every windowed operator, as onnxruntime runs it (symshape
refused it as a bad attribute: review gr, finding F4)."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper

import symshape.onnx as sso

_CASES: list[tuple[str, dict[str, Any], tuple[int, ...] | None]] = [
    ("Conv", {"pads": [1, 0, 1, 0]}, (3, 2, 3, 3)),
    ("ConvTranspose", {"strides": [2, 1]}, (2, 3, 3, 3)),
    ("MaxPool", {"kernel_shape": [2, 2]}, None),
    ("AveragePool", {"kernel_shape": [2, 3], "pads": [0, 1, 0, 1]}, None),
    ("LpPool", {"kernel_shape": [2, 2]}, None),
]


@pytest.mark.parametrize("op, attrs, weight", _CASES, ids=[c[0] for c in _CASES])
def test_empty_auto_pad_is_notset(op: str, attrs: dict[str, Any], weight: tuple[int, ...] | None) -> None:
    inits = [] if weight is None else [numpy_helper.from_array(np.zeros(weight, np.float32), "w")]
    ins = ["x"] if weight is None else ["x", "w"]
    node = helper.make_node(op, ins, ["y"], auto_pad="", **attrs)
    x = helper.make_tensor_value_info("x", 1, [1, 2, 5, 6])
    g = helper.make_graph([node], "g", [x], [helper.make_tensor_value_info("y", 1, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    (y,) = sess.run(None, {"x": np.zeros((1, 2, 5, 6), np.float32)})
    res = sso.infer(m)
    assert res.status == "ok", res.report()
    assert str(res.type_of("y")) == f"Tensor[{tuple(y.shape)}, float32]"
