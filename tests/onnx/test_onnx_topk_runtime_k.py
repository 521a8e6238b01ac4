"""``TopK`` with ``k`` computed at run time (``x.topk(x.size(1) // 2 + 1)`` exported by TorchScript)
was ``unsupported-op``; now ``k``'s value sizes the axis. ``k`` must not exceed the axis
(onnxruntime refuses a larger one), which symshape did not check for a constant ``k`` either
(``valid_at`` True at an axis of 1 for ``k = 3``, onnx's ``test_top_k`` made symbolic). Every
value's shape and ``valid_at`` against onnxruntime at several sizes."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from torch_models import run_all_values

import symshape as ss
import symshape.onnx as sso


def _model(k_from: str, axis: int) -> onnx.ModelProto:
    """``TopK(x, k)`` on ``x`` (m, n) along ``axis``, ``k`` = ``n // 2 + 1``, the length of ``s`` or
    the constant 3."""
    if k_from == "three":
        nodes = []
    elif k_from == "half":
        nodes = [
            helper.make_node("Shape", ["x"], ["sh"], start=1, end=2),
            helper.make_node("Div", ["sh", "two"], ["h"]),
            helper.make_node("Add", ["h", "one"], ["k"]),
        ]
    else:
        nodes = [helper.make_node("Shape", ["s"], ["k"])]
    nodes += [
        helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=axis),
        helper.make_node("GatherElements", ["x", "i"], ["g"], axis=axis),
    ]
    consts = (("two", 2), ("one", 1)) if k_from != "three" else (("k", 3),)
    inits = [numpy_helper.from_array(np.array([v], dtype=np.int64), n) for n, v in consts]
    g = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["m", "n"]),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, ["k"])],
        [helper.make_tensor_value_info("v", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("g", TensorProto.FLOAT, None)], inits,
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


ROWS = [
    ("half", 1, "ok"), ("half", -1, "ok"), ("s", 1, "guarded"),
    ("three", 1, "guarded"), ("three", 0, "guarded"),
]  # fmt: skip


@pytest.mark.parametrize(("k_from", "axis", "status"), ROWS)
def test_topk_k_computed_at_run_time(k_from: str, axis: int, status: str) -> None:
    model = _model(k_from, axis)
    syms = {name: ss.dim(name) for name in ("m", "n", "k")}
    res = sso.infer(model, dims=syms)
    assert res.status == status, res.report()
    types = res.types()
    rng = np.random.default_rng(0)
    for m, n, k in ((1, 1, 1), (2, 2, 3), (1, 7, 7), (3, 10, 4), (2, 5, 6), (1, 3, 1), (4, 3, 2)):
        env = {syms["m"]: m, syms["n"]: n, syms["k"]: k}
        feeds = {"x": rng.standard_normal((m, n)).astype(np.float32), "s": np.zeros(k, np.float32)}
        try:
            actual = run_all_values(model, feeds)
        except Exception:  # onnxruntime refuses k > n
            actual = None
        assert res.valid_at(env) == (actual is not None), ((m, n, k), [str(g) for g in res.guards])
        for name, shape in (actual or {}).items():
            t = types[name]
            assert isinstance(t, ss.TensorType) and t.ndim is not None, (name, t)
            assert tuple(int(d.subs(env)) for d in t.dims) == shape, (name, str(t), (m, n, k))
