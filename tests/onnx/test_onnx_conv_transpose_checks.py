"""``ConvTranspose``'s conditions, against onnxruntime: the input's channels are the weight's first
axis, and a ``kernel_shape`` attribute is the weight's spatial shape.

With the weight an initializer (every exported model) symshape checked neither: ``ok`` for an input
of 5 channels into a weight of 3 ("filter number not equal to input channel number"), or with
``kernel_shape=[2, 2]`` for a 3x3 weight ("kernel_shape is not compatible with W shape"), where
onnxruntime refuses. Rows: the channels symbolic or constant, the weight an initializer or an input.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from torch_models import run_all_values

import symshape as ss
import symshape.onnx as sso


def _model(c: int | str, w_shape: tuple[int, ...], w_init: bool, **attrs: Any) -> onnx.ModelProto:
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", c, "h", 4])]
    inits = []
    if w_init:
        inits.append(numpy_helper.from_array(np.ones(w_shape, np.float32), "w"))
    else:
        inputs.append(helper.make_tensor_value_info("w", TensorProto.FLOAT, ["wc", *w_shape[1:]]))
    g = helper.make_graph(
        [helper.make_node("ConvTranspose", ["x", "w"], ["y"], **attrs)], "g", inputs,
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits,
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


ROWS = [
    # (input channels, weight shape, weight an initializer, attributes, symshape's status)
    ("c", (3, 2, 3, 3), True, {}, "guarded"),
    (5, (3, 2, 3, 3), True, {}, "error"),
    (3, (3, 2, 3, 3), True, {}, "ok"),
    (3, (4, 2, 3, 3), True, {"group": 2}, "error"),
    ("c", (4, 2, 3, 3), True, {"group": 2, "strides": [2, 2]}, "guarded"),
    (3, (3, 2, 3, 3), True, {"kernel_shape": [2, 2]}, "error"),
    (3, (3, 2, 3, 3), True, {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, "ok"),
    ("c", (3, 2, 3, 3), False, {"kernel_shape": [3, 2]}, "error"),
    ("c", (3, 2, 3, 3), False, {"kernel_shape": [3, 3]}, "guarded"),
]


@pytest.mark.parametrize(("c", "w_shape", "w_init", "attrs", "status"), ROWS)
def test_conv_transpose_channels_and_kernel(
    c: int | str, w_shape: tuple[int, ...], w_init: bool, attrs: dict[str, Any], status: str
) -> None:
    model = _model(c, w_shape, w_init, **attrs)
    syms = {k: ss.dim(k) for k in ("n", "h", "c", "wc")}
    used = {"n", "h"} | ({"c"} if c == "c" else set()) | ({"wc"} if not w_init else set())
    res = sso.infer(model, dims={k: syms[k] for k in sorted(used)})
    assert res.status == status, res.report()
    if status == "error":
        assert "ConvTranspose" in res.report()
    for cc, wc in ((3, 3), (5, 3), (4, 4), (3, 4)):
        size = {"n": 2, "h": 5, "c": cc if c == "c" else int(c), "wc": wc if not w_init else w_shape[0]}
        feeds = {"x": np.ones((size["n"], size["c"], size["h"], 4), np.float32)}
        if not w_init:
            feeds["w"] = np.ones((size["wc"], *w_shape[1:]), np.float32)
        try:
            actual = run_all_values(model, feeds)
        except Exception:  # channels or kernel mismatched
            actual = None
        env = {syms[k]: size[k] for k in used}
        assert res.valid_at(env) == (actual is not None), (size, [str(g) for g in res.guards])
        if actual is not None:
            y = res.type_of("y")
            assert tuple(int(d.subs(env)) for d in y.dims) == actual["y"], (str(y), size)
