"""``CenterCropPad`` of axes that may be empty, against onnxruntime (with and without graph
optimizations) and onnx's reference evaluator at sizes including 0 and 1
(:func:`size_oracle.disagreements`): an empty axis is padded to the target size by both runtimes,
so it needs no guard (it was guarded ``c >= 1``: the target size was taken from the axis).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import helper
from onnx_helpers import In, make_model
from size_oracle import disagreements, feeds_of

import symshape as ss
import symshape.onnx as sso

SIZES = [{"a": v, "c": w} for v in (0, 1, 3) for w in (0, 1, 2, 6)]

# (input shape, target sizes, axes or None, the result's type)
CASES: list[tuple[list[Any], list[int], list[int] | None, str]] = [
    (["c"], [4], [-1], "Tensor[(4,), float32]"),
    (["c"], [4], None, "Tensor[(4,), float32]"),
    (["c"], [0], [0], "Tensor[(0,), float32]"),
    (["a", "c"], [1, 3], None, "Tensor[(1, 3), float32]"),
    (["a", "c", 2], [5], [1], "Tensor[(a, 5, 2), float32]"),
    (["a", "c", 2], [2, 1], [-3, 2], "Tensor[(2, c, 1), float32]"),
]


@pytest.mark.parametrize(("shape", "target", "axes", "want"), CASES)
def test_center_crop_pad_of_empty_axes(
    shape: list[Any], target: list[int], axes: list[int] | None, want: str
) -> None:
    attrs = {} if axes is None else {"axes": axes}
    ins = [In("x", "float32", shape)]
    node = helper.make_node("CenterCropPad", ["x", "k"], ["y"], **attrs)
    m = make_model([node], ins, ["y"], 18, {"k": np.array(target, np.int64)}, ir_version=8)
    syms = {"a": ss.dim("a", min=0), "c": ss.dim("c", min=0)}
    for runner in ("onnxruntime", "onnxruntime-plain", "reference"):
        got = disagreements(m, syms, SIZES, feeds_of(ins), runner)
        assert got == [], runner + ":\n" + "\n".join(got)
    res = sso.infer(m, dims=syms)
    assert res.status == "ok" and str(res.type_of("y")) == want, res.report()
