"""``valid_at`` with a partial assignment: a guard the given sizes do not decide is an
``invalid-argument`` error naming what is missing, never decided from the guard itself (the
condition of a stated guard is also a fact of the solver session; it must not prove itself)."""

from __future__ import annotations

import numpy as np
import pytest

import symshape as ss


def test_arange_table_guard_needs_its_symbol() -> None:
    torch = pytest.importorskip("torch")
    import symshape.torch as sst

    class PosEmb(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.pos = torch.nn.Embedding(4, 3)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x + self.pos(torch.arange(x.shape[1]))

    b, t = ss.dims("b t")
    res = sst.infer(PosEmb(), {"x": ss.Tensor((b, t, 3), "float32")})
    assert res.valid_when() == "t <= 4"
    with pytest.raises(ss.SymshapeError, match="give a value for t") as e:
        res.valid_at({b: 2})
    assert e.value.code == "invalid-argument"
    assert res.valid_at({b: 2, t: 4}) and not res.valid_at({b: 2, t: 5})


def test_run_time_guard_stays_open() -> None:
    pytest.importorskip("onnx")
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh

    import symshape.onnx as sso

    big = np.iinfo(np.int64).max
    g = h.make_graph(
        [
            h.make_node("Slice", ["x", "s", "e", "ax"], ["y"]),
            h.make_node("Pad", ["y", "p"], ["z"], mode="edge"),
        ],
        "g",
        [
            h.make_tensor_value_info("x", T.FLOAT, [4, 4]),
            h.make_tensor_value_info("s", T.INT64, [1]),
            h.make_tensor_value_info("a_in", T.FLOAT, ["a"]),
        ],
        [h.make_tensor_value_info("z", T.FLOAT, None)],
        [
            nh.from_array(np.array([big], np.int64), "e"),
            nh.from_array(np.array([-2], np.int64), "ax"),
            nh.from_array(np.array([2, 0, -1, 0], np.int64), "p"),
        ],
    )
    a = ss.dim("a")
    res = sso.infer(h.make_model(g, opset_imports=[h.make_opsetid("", 18)]), dims={"a": a})
    with pytest.raises(ss.SymshapeError, match="depends on sizes the program computes"):
        res.valid_at({a: 2})
