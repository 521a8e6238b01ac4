"""``GatherND``/``ScatterND`` with constant indices against onnxruntime, where the differential
fuzzer (:mod:`tests.onnx.test_onnx_differential_fuzz`) found false errors.

Each index column reads its own data axis, but its range was the whole tensor's: indices
``[[2, 0, 0], [0, 0, 1]]`` (batch_dims 1) into ``(2, 3, c, 3)`` needed ``c > 2`` (column 1 is
all 0), and ScatterND's ``[[-1, -1], [1, 0]]`` into ``(3, 1, a)`` was an error (column 1 is in
``[-1, 0]``, within the axis of 1). Each row: symshape's ``valid_at`` and output shape against
onnxruntime at several sizes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from tests.onnx.onnx_helpers import run_ort

import symshape as ss
import symshape.onnx as sso


def _model(
    node: onnx.NodeProto, inputs: Mapping[str, Sequence[int | str]], inits: Mapping[str, Any]
) -> onnx.ModelProto:
    vis = [helper.make_tensor_value_info(k, TensorProto.FLOAT, list(s)) for k, s in inputs.items()]
    g = helper.make_graph(
        [node], "g", vis,
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()],
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])


def _agrees(model: onnx.ModelProto, inputs: Mapping[str, Sequence[int | str]], sym: str) -> None:
    s = ss.dim(sym)
    res = sso.infer(model, dims={sym: s})
    assert not res.unsupported, res.report()
    for n in (1, 2, 3, 5):
        feeds = {
            k: np.arange(int(np.prod(sh)), dtype=np.float32).reshape(sh)
            for k, sh in ((k, [n if d == sym else int(d) for d in v]) for k, v in inputs.items())
        }
        try:
            got: tuple[int, ...] | None = tuple(run_ort(model, feeds)[0].shape)
        except Exception:
            got = None
        valid = not res.errors and (res.valid_at({s: n}) if any(sym in v for v in inputs.values()) else True)
        assert valid == (got is not None), f"{sym}={n}: onnxruntime {got}, valid_at {valid}\n{res.report()}"
        if got is not None:
            t = res.type_of("y")
            assert isinstance(t, ss.TensorType) and t.subs({s: n}) == ss.Tensor(got, "float32"), (n, t, got)


ND = [
    # (op, batch_dims, data shape, indices, updates shape)
    ("GatherND", 1, (2, 3, "c", 3), [[2, 0, 0], [0, 0, 1]], None),
    ("GatherND", 0, ("c", 3), [[0, 2], [0, -3]], None),
    ("GatherND", 0, (3, "c"), [[2, 0], [-3, 1]], None),  # column 1 needs c > 1
    ("ScatterND", 0, (3, 1, "c"), [[-1, -1], [1, 0]], (2, "c")),
    ("ScatterND", 0, (1, "c", 1), [[0, 1]], (1, 1)),  # needs c > 1
]


@pytest.mark.parametrize(("op", "bd", "shape", "ind", "upd"), ND)
def test_nd_index_columns_against_onnxruntime(
    op: str, bd: int, shape: tuple[int | str, ...], ind: list[list[int]], upd: tuple[int | str, ...] | None
) -> None:
    inputs: dict[str, Sequence[int | str]] = {"x": shape}
    ins = ["x", "k"]
    if upd is not None:
        inputs["u"] = upd
        ins.append("u")
    attrs: dict[str, Any] = {"batch_dims": bd} if op == "GatherND" else {}
    node = helper.make_node(op, ins, ["y"], **attrs)
    _agrees(_model(node, inputs, {"k": np.array(ind, np.int64)}), inputs, "c")


def test_gather_nd_one_index_tuple_of_a_vector() -> None:
    """Indices ``[1]`` (a single tuple, rank 1) into ``(a,)``: a scalar (the fuzzer's find: a
    constant column made 1-d gave ``(1,)``)."""
    node = helper.make_node("GatherND", ["x", "k"], ["y"])
    inputs = {"x": ("a",)}
    _agrees(_model(node, inputs, {"k": np.array([0], np.int64)}), inputs, "a")
