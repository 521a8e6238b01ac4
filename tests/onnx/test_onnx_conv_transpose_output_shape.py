"""``ConvTranspose`` with an ``output_shape`` attribute: onnxruntime takes sizes up to ``s - 1``
over the full size ``s*(d - 1) + output_padding + dil*(k - 1) + 1`` and refuses larger ones
("Explicit output_shape is inconsistent with input spatial dimensions"); checked against
onnxruntime at several sizes."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import symshape as ss
import symshape.onnx as sso


def _model(out: list[int], strides: list[int], kernel: list[int], pad: int = 0) -> object:
    g = h.make_graph(
        [
            h.make_node(
                "ConvTranspose",
                ["x", "w"],
                ["y"],
                kernel_shape=kernel,
                strides=strides,
                output_shape=out,
                output_padding=[pad, 0],
            )
        ],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 1, "a", 3])],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
        [nh.from_array(np.ones([1, 2, *kernel], np.float32), "w")],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 18)])


@pytest.mark.parametrize(
    "out, strides, kernel, pad",
    [
        ([6, 8], [2, 2], [2, 3], 0),
        ([5, 7], [2, 2], [2, 3], 0),
        ([4, 5], [1, 1], [3, 3], 0),
        ([9, 5], [2, 1], [2, 3], 0),
        ([7, 6], [3, 1], [1, 3], 0),
        ([6, 5], [2, 1], [2, 3], 1),  # (output_padding is not added to the limit)
    ],
)
def test_output_shape_against_onnxruntime(
    out: list[int], strides: list[int], kernel: list[int], pad: int
) -> None:
    m = _model(out, strides, kernel, pad)
    a = ss.dim("a")
    res = sso.infer(m, dims={"a": a})
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])  # type: ignore[attr-defined]
    for n in range(1, 6):
        try:
            got = sess.run(None, {"x": np.zeros((1, 1, n, 3), np.float32)})[0].shape
        except Exception:
            got = None
        assert bool(res.valid_at({a: n})) == (got is not None), (n, got, res.report())
        if got is not None:
            assert tuple(int(d) for d in res.type_of("y").subs({a: n}).dims) == got
