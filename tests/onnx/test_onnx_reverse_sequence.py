"""``ReverseSequence``: ``sequence_lens`` has one entry per batch row, against onnxruntime (symshape
copied the input's type and said ``valid_at`` True for 4 lengths over 5 rows, which onnxruntime
refuses; onnx's ``test_reversesequence_*`` made symbolic)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from torch_models import run_all_values

import symshape as ss
import symshape.onnx as sso


@pytest.mark.parametrize(("batch_axis", "time_axis"), [(1, 0), (0, 1)])
def test_reverse_sequence_lengths_per_row(batch_axis: int, time_axis: int) -> None:
    g = helper.make_graph(
        [helper.make_node("ReverseSequence", ["x", "lens"], ["y"], batch_axis=batch_axis,
                          time_axis=time_axis)],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["a", "b", 3]),
         helper.make_tensor_value_info("lens", TensorProto.INT64, ["k"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )  # fmt: skip
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    syms = {d: ss.dim(d) for d in "abk"}
    res = sso.infer(model, dims=syms)
    assert res.status == "guarded", res.report()
    for a, b, k in ((4, 5, 5), (4, 5, 4), (5, 4, 5), (2, 2, 2), (3, 1, 1), (1, 3, 1)):
        rows = (a, b)[batch_axis]
        try:
            actual = run_all_values(
                model, {"x": np.ones((a, b, 3), np.float32), "lens": np.ones(k, np.int64)}
            )
        except Exception:  # a length per row
            actual = None
        env = {syms["a"]: a, syms["b"]: b, syms["k"]: k}
        assert res.valid_at(env) == (actual is not None) == (k == rows), (
            (a, b, k),
            [str(g) for g in res.guards],
        )
        assert actual is None or actual["y"] == (a, b, 3)
