"""``NonZero`` of a ``ConstantOfShape`` with a non-zero fill: every index, ``(rank, numel)``.

The TorchScript exporter writes ``arange(n)`` as ``NonZero(ConstantOfShape(n, value=1))`` then
``Transpose``/``Squeeze`` (Longformer has 20 of them). A fresh data-dependent size there lost every
shape after it; now the size is the element count, and onnxruntime agrees at every size (its
values too: row ``k`` is ``(arange(numel) // stride_k) % d_k``). A fill of 0 keeps the fresh size
(NonZero finds nothing, which symshape does not count)."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx_helpers import run_ort

import symshape as ss
import symshape.onnx as sso


def _model(dims: tuple[str, ...], fill: Any, elem: int) -> onnx.ModelProto:
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("ConstantOfShape", ["s"], ["c"], value=helper.make_tensor("v", elem, [1], [fill])),
        helper.make_node("NonZero", ["c"], ["y"]),
    ]
    g = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(dims))],
        [helper.make_tensor_value_info("y", TensorProto.INT64, None)],
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


CASES = [
    (("n",), 1, TensorProto.INT64),
    (("n", "m"), 1.5, TensorProto.FLOAT),
    (("a", "b", "c"), True, TensorProto.BOOL),
]


@pytest.mark.parametrize(("dims", "fill", "elem"), CASES, ids=[f"rank{len(c[0])}" for c in CASES])
def test_nonzero_of_filled_shape(dims: tuple[str, ...], fill: Any, elem: int) -> None:
    model = _model(dims, fill, elem)
    res = sso.infer(model)
    assert res.status == "ok", res.report()
    t = res.types()["y"]
    assert isinstance(t, ss.TensorType) and t.dtype == "int64"
    syms = [ss.dim(d) for d in dims]
    for sizes in itertools.product((1, 2, 3), repeat=len(dims)):
        x = np.zeros(sizes, dtype=np.float32)
        (y,) = run_ort(model, {"x": x})
        assert np.array_equal(y, np.stack(np.nonzero(np.ones(sizes)))), sizes
        env = dict(zip(syms, sizes))
        assert tuple(int(d.subs(env)) for d in t.dims) == y.shape, (sizes, t)


def test_nonzero_of_zero_fill_keeps_a_fresh_size() -> None:
    res = sso.infer(_model(("n",), 0, TensorProto.INT64))
    t = res.types()["y"]
    assert isinstance(t, ss.TensorType) and t.dims is not None
    assert t.dims[0] == 1 and t.dims[1].is_symbol and str(t.dims[1]) != "n"
