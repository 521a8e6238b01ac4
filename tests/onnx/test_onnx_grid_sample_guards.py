"""``GridSample``: the grid must have the input's batch (not broadcast) and one coordinate per
spatial axis, against onnxruntime.

symshape broadcast the two batches and never read the grid's last axis: ``valid_at`` True at a grid
of batch 1 for an input of batch 2, or with 3 coordinates for a 2-d image, where onnxruntime
refuses (onnx's ``test_gridsample_*`` made symbolic). Every size symbolic.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from torch_models import run_all_values

import symshape as ss
import symshape.onnx as sso


def _model(spatial: int, opset: int) -> onnx.ModelProto:
    xs = ["n", "c", *(f"d{i}" for i in range(spatial))]
    gs = ["m", *(f"o{i}" for i in range(spatial)), "k"]
    g = helper.make_graph(
        [helper.make_node("GridSample", ["x", "grid"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, xs),
         helper.make_tensor_value_info("grid", TensorProto.FLOAT, gs)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


# (n, c, m, k): input batch and channels, grid batch and coordinates; spatial sizes fixed below
SIZES = [(2, 3, 2, 2), (2, 3, 1, 2), (1, 3, 2, 2), (2, 1, 2, 3), (1, 1, 1, 2), (3, 2, 3, 3), (2, 2, 2, 1)]


@pytest.mark.parametrize(("spatial", "opset"), [(2, 16), (2, 20), (3, 20)])
def test_grid_sample_batch_and_coordinates(spatial: int, opset: int) -> None:
    model = _model(spatial, opset)
    names = ["n", "c", "m", "k", *(f"d{i}" for i in range(spatial)), *(f"o{i}" for i in range(spatial))]
    syms = {k: ss.dim(k) for k in names}
    res = sso.infer(model, dims=syms)
    assert not res.errors and not res.unsupported, res.report()
    y = res.type_of("y")
    ran = 0
    for n, c, m, k in SIZES:
        size = {"n": n, "c": c, "m": m, "k": k}
        size |= {f"d{i}": 4 + i for i in range(spatial)} | {f"o{i}": 3 - i for i in range(spatial)}
        feeds = {
            "x": np.ones([size[d] for d in ("n", "c", *(f"d{i}" for i in range(spatial)))], np.float32),
            "grid": np.zeros([size[d] for d in ("m", *(f"o{i}" for i in range(spatial)), "k")], np.float32),
        }
        try:
            actual = run_all_values(model, feeds)
        except Exception:  # another batch, or another number of coordinates
            actual = None
        env = {syms[d]: v for d, v in size.items()}
        assert res.valid_at(env) == (actual is not None), (size, [str(g) for g in res.guards])
        if actual is not None:
            ran += 1
            assert tuple(int(d.subs(env)) for d in y.dims) == actual["y"], (str(y), size)
    assert 0 < ran < len(SIZES)
