"""A size only the run decides (a ``?`` for a ``Range`` of a bound read at run time, a ``Slice``
with such bounds, a ``ConstantOfShape`` or ``Tile`` of a run-time shape or reps) may be 0: the run
gives an empty tensor. Such a ``?`` was taken to be at least 1, as an annotation's is, so that
``Gather(Range(0, k), 0)`` was ``ok`` and onnxruntime fails at ``k = 0`` ("indices element out of
data bounds"). Now the gather states ``? >= 1``; without a consumer that needs an entry, the
model stays ``ok``. Checked against onnxruntime at ``k = 0`` (it fails) and ``k = 3`` (it runs).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx_helpers import run_ort

import symshape.onnx as sso

I64 = TensorProto.INT64
_TWO = helper.make_tensor("", I64, [1], [2])


def _c(name: str, v: Any) -> onnx.TensorProto:
    return onnx.numpy_helper.from_array(np.array(v, np.int64), name)


def _range() -> tuple[list[onnx.NodeProto], list[onnx.TensorProto]]:
    return [helper.make_node("Range", ["zero", "k", "one"], ["r"], name="range")], [
        _c("zero", 0),
        _c("one", 1),
    ]


def _slice() -> tuple[list[onnx.NodeProto], list[onnx.TensorProto]]:
    return [
        helper.make_node("Unsqueeze", ["k", "ax0"], ["k1"], name="k1"),
        helper.make_node("Slice", ["data", "zero1", "k1"], ["r"], name="slice"),
    ], [_c("ax0", [0]), _c("zero1", [0]), _c("data", [5, 6, 7, 8])]


def _constant_of_shape() -> tuple[list[onnx.NodeProto], list[onnx.TensorProto]]:
    return [
        helper.make_node("Unsqueeze", ["k", "ax0"], ["k1"], name="k1"),
        helper.make_node(
            "ConstantOfShape", ["k1"], ["r"], name="fill", value=helper.make_tensor("", I64, [1], [2])
        ),
    ], [_c("ax0", [0])]


def _tile() -> tuple[list[onnx.NodeProto], list[onnx.TensorProto]]:
    return [
        helper.make_node("Unsqueeze", ["k", "ax0"], ["k1"], name="k1"),
        helper.make_node("Tile", ["data", "k1"], ["r"], name="tile"),
    ], [_c("ax0", [0]), _c("data", [4])]


PRODUCERS: dict[str, Callable[[], tuple[list[onnx.NodeProto], list[onnx.TensorProto]]]] = {
    "range": _range,
    "slice": _slice,
    "constant_of_shape": _constant_of_shape,
    "tile": _tile,
}


def _model(producer: str, consumer: bool) -> onnx.ModelProto:
    nodes, inits = PRODUCERS[producer]()
    out = "r"
    if consumer:
        nodes.append(helper.make_node("Gather", ["r", "first"], ["g"], name="first_entry"))
        inits.append(_c("first", 0))
        out = "g"
    g = helper.make_graph(
        nodes,
        "empty",
        [helper.make_tensor_value_info("k", I64, [])],
        [helper.make_tensor_value_info(out, I64, None)],
        inits,
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def _runs(m: onnx.ModelProto, k: int) -> bool:
    try:
        run_ort(m, {"k": np.array(k, np.int64)})
    except Exception:
        return False
    return True


@pytest.mark.parametrize("producer", sorted(PRODUCERS))
def test_a_run_time_size_may_be_zero(producer: str) -> None:
    m = _model(producer, consumer=True)
    assert _runs(m, 3) and not _runs(m, 0)  # (the oracle: an empty tensor has no first entry)
    res = sso.infer(m)
    assert res.status == "guarded", res.report()
    assert [str(g.cond) for g in res.guards] == ["? >= 1"], res.report()
    assert "node 'first_entry' (Gather)" in res.report()
    # the producer alone runs at every k >= 0, and symshape says so
    alone = _model(producer, consumer=False)
    assert _runs(alone, 0) and _runs(alone, 3)
    assert sso.infer(alone).status == "ok"
