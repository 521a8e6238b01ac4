"""``Det`` needs square matrices, against onnxruntime: symshape summed the last two axes away and
said ``valid_at`` True for (3, 2) matrices, which onnxruntime refuses ("Matrix dimensions are not
equal"; onnx's ``test_det_*`` made symbolic)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from torch_models import run_all_values

import symshape as ss
import symshape.onnx as sso


@pytest.mark.parametrize("batch", [0, 1, 2])
def test_det_of_square_matrices(batch: int) -> None:
    lead = [f"b{i}" for i in range(batch)]
    g = helper.make_graph(
        [helper.make_node("Det", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [*lead, "m", "k"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )  # fmt: skip
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    syms = {d: ss.dim(d) for d in (*lead, "m", "k")}
    res = sso.infer(model, dims=syms)
    assert res.status == "guarded", res.report()
    for m, k in ((3, 3), (3, 2), (1, 1), (2, 5), (4, 4)):
        size = dict.fromkeys(lead, 2) | {"m": m, "k": k}
        x = np.eye(max(m, k), dtype=np.float32)[:m, :k] + np.zeros(
            [size[d] for d in (*lead, "m", "k")], np.float32
        )
        try:
            actual = run_all_values(model, {"x": x})
        except Exception:  # not square
            actual = None
        env = {syms[d]: v for d, v in size.items()}
        assert res.valid_at(env) == (actual is not None) == (m == k), (size, [str(g) for g in res.guards])
        if actual is not None:
            assert tuple(int(d.subs(env)) for d in res.type_of("y").dims) == actual["y"]
