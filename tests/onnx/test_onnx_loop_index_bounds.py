"""The index bounds of a ``take`` in the body of a ``Loop`` whose trip count may be 0 hold only
where the loop runs (``a == 0 or b <= 4``: ``ir.index_bounds.WHEN_RUN``, which
``onnx/ops/loop_premise.py`` sets; required outright it was a false error at ``a == 0``), judged
against onnxruntime without graph optimizations and onnx's reference evaluator (onnxruntime's optimized
graph folds the gather of a zero table away and runs every size)."""

from __future__ import annotations

import itertools

import numpy as np
from onnx import TensorProto, helper
from onnx_helpers import reference, run_ort_plain
from test_onnx_oy_loop_zero_trips import N, _ints, _model

import symshape as ss
import symshape.onnx as sso

# the body sums rows 0..b-1 of a 4-row table into the state (2,)
_BODY = [
    N("Shape", ["x"], ["bb"], start=1, end=2),
    N("Squeeze", ["bb"], ["b1"]),
    N("Constant", [], ["zero"], value=helper.make_tensor("zero", TensorProto.INT64, [], [0])),
    N("Constant", [], ["one"], value=helper.make_tensor("one", TensorProto.INT64, [], [1])),
    N("Range", ["zero", "b1", "one"], ["idx"]),
    N("Constant", [], ["tab"], value=helper.make_tensor("tab", TensorProto.FLOAT, [4, 2], [0.0] * 8)),
    N("Gather", ["tab", "idx"], ["rows"], axis=0),
    _ints("z0", [0]),
    N("ReduceSum", ["rows", "z0"], ["r"], keepdims=0),
    N("Add", ["s", "r"], ["s2"]),
]


def _runs(m: object, feeds: dict[str, np.ndarray]) -> bool:
    plain = run_ort_plain(m, feeds)  # type: ignore[arg-type]
    try:
        reference(m, feeds)  # type: ignore[arg-type]
        ref = True
    except Exception:
        ref = False
    assert (plain is not None) == ref
    return ref


def test_index_bounds_hold_where_the_loop_runs() -> None:
    m = _model(_BODY, cond=True, state="2")
    a, b = ss.dim("a", min=0), ss.dim("b", min=0)
    res = sso.infer(m, dims={"a": a, "b": b})
    assert res.valid_when() == "a == 0 or b <= 4"
    for av, bv in itertools.product(range(3), range(7)):
        feeds = {"x": np.zeros((av, bv), np.float32)}
        assert res.valid_at({a: av, b: bv}) == _runs(m, feeds), (av, bv)
