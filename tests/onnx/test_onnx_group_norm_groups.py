"""``GroupNormalization``: ``num_groups`` must divide the channels, against onnxruntime.

onnxruntime runs the operator's function, which reshapes ``X`` to ``(N, G, C/G, ...)``: channels
that ``G`` does not divide fail there. symshape gave ``X``'s type and said ``valid_at`` True
(onnx's ``test_group_normalization_*`` made symbolic). Opset 18 (``scale``/``bias`` of ``G``
entries) and 21 (of ``C``); the channels symbolic.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from torch_models import run_all_values

import symshape as ss
import symshape.onnx as sso


def _model(groups: int, opset: int) -> onnx.ModelProto:
    side = "c" if opset >= 21 else groups
    g = helper.make_graph(
        [helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=groups)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", "c", "h"]),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, [side]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [side])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize(("groups", "opset"), [(2, 18), (3, 18), (2, 21), (4, 21), (1, 21)])
def test_group_norm_groups_divide_the_channels(groups: int, opset: int) -> None:
    model = _model(groups, opset)
    syms = {k: ss.dim(k) for k in "nch"}
    res = sso.infer(model, dims=syms)
    assert not res.errors and not res.unsupported, res.report()
    for n, c, h in ((2, 4, 3), (1, 6, 1), (3, 5, 2), (1, 12, 4), (2, 3, 5), (1, 1, 1)):
        side = c if opset >= 21 else groups
        feeds = {
            "x": np.ones((n, c, h), np.float32),
            "s": np.ones(side, np.float32),
            "b": np.zeros(side, np.float32),
        }
        try:
            actual = run_all_values(model, feeds)
        except Exception:  # the groups do not divide the channels
            actual = None
        env = {syms["n"]: n, syms["c"]: c, syms["h"]: h}
        assert res.valid_at(env) == (actual is not None), ((n, c, h), [str(g) for g in res.guards])
        assert actual is None or actual["y"] == (n, c, h)
        assert (actual is not None) == (c % groups == 0)
