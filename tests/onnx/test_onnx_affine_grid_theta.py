"""``AffineGrid``: ``theta`` is ``(N, r, r + 1)`` for the batch ``N = size[0]``, against
onnxruntime. symshape took ``N`` from ``theta`` and checked nothing, so ``valid_at`` was True for a
``theta`` of 3 rows with ``size = [2, ...]`` ("size[0] (2) must equal theta batch dimension (3)";
onnx's ``test_affine_grid_*`` made symbolic)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from torch_models import run_all_values

import symshape as ss
import symshape.onnx as sso


@pytest.mark.parametrize("size", [[2, 3, 5, 6], [1, 1, 4, 4, 3]])
def test_affine_grid_theta_shape(size: list[int]) -> None:
    g = helper.make_graph(
        [helper.make_node("AffineGrid", ["theta", "size"], ["grid"])], "g",
        [helper.make_tensor_value_info("theta", TensorProto.FLOAT, ["n", "r", "c"])],
        [helper.make_tensor_value_info("grid", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(size, dtype=np.int64), "size")],
    )  # fmt: skip
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])
    syms = {k: ss.dim(k) for k in "nrc"}
    res = sso.infer(model, dims=syms)
    assert res.status == "guarded", res.report()
    nd = len(size) - 2
    for n, r, c in ((size[0], nd, nd + 1), (size[0] + 1, nd, nd + 1), (size[0], nd + 1, nd + 1), (1, nd, nd)):
        try:
            actual = run_all_values(model, {"theta": np.zeros((n, r, c), np.float32)})
        except Exception:  # theta's shape does not fit size
            actual = None
        env = {syms["n"]: n, syms["r"]: r, syms["c"]: c}
        assert res.valid_at(env) == (actual is not None), ((n, r, c), [str(g) for g in res.guards])
        if actual is not None:
            assert tuple(int(d.subs(env)) for d in res.type_of("grid").dims) == actual["grid"]
