"""onnxruntime's pools refuse an empty axis other than the batch unless the batch is empty too
("Only N can be zero"), also where every size is a constant (the inference's fast path for
constant shapes must leave that case to the relation). Judged against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
sso = pytest.importorskip("symshape.onnx")
from onnx import TensorProto, helper  # noqa: E402

OPS = [
    ("MaxPool", {"kernel_shape": [2]}),
    ("AveragePool", {"kernel_shape": [1]}),
    ("GlobalAveragePool", {}),
    ("GlobalMaxPool", {}),
]
SHAPES = [(1, 0, 4), (0, 0, 4), (0, 2, 4), (1, 2, 4), (2, 3, 0)]


def _runs(model: object, shape: tuple[int, ...]) -> bool:
    so = ort.SessionOptions()
    so.log_severity_level = 4
    try:
        s = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])  # type: ignore[attr-defined]
        s.run(None, {"x": np.zeros(shape, np.float32)})
    except Exception:  # (onnxruntime's refusal)
        return False
    return True


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize(("op", "attrs"), OPS, ids=[o for o, _ in OPS])
def test_constant_shapes_as_onnxruntime(op: str, attrs: dict[str, object], shape: tuple[int, ...]) -> None:
    node = helper.make_node(op, ["x"], ["y"], **attrs)
    g = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    res = sso.infer(m)
    assert res.ok is _runs(m, shape), res.report()
