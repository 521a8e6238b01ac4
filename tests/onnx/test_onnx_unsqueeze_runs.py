"""An ``Unsqueeze`` is one ``expand_dims`` per run of consecutive inserted positions (``axes=[1, 2]``
of densenet121's and inception_v2's per-channel weights: one call of ``num_newaxis=2``, not two).

The oracle is onnxruntime, on random inputs with a symbolic batch axis ``N`` (sizes substituted,
:func:`size_oracle.disagreements`): the type is numpy's ``expand_dims``, and an out-of-range or
repeated axis is still an error. The number of ``expand_dims`` calls is the number of runs of the
output positions, counted here from numpy's result shape.
"""

from __future__ import annotations

import re

import numpy as np
import onnx
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import helper
from onnx_helpers import In, make_model
from size_oracle import disagreements, feeds_of

import symshape.onnx as sso
from symshape.onnx.importer import Importer
from symshape.onnx.ops import common

SIZES = [{"N": 1}, {"N": 3}]


def _model(shape: tuple[int | str, ...], axes: list[int], opset: int) -> tuple[onnx.ModelProto, In]:
    x = In("x", "float32", shape)
    if opset >= 13:
        n = helper.make_node("Unsqueeze", ["x", "axes"], ["y"], name="unsq")
        return make_model([n], [x], ["y"], opset=opset, inits={"axes": np.array(axes, np.int64)}), x
    n = helper.make_node("Unsqueeze", ["x"], ["y"], name="unsq")
    n.attribute.append(helper.make_attribute("axes", axes, attr_type=onnx.AttributeProto.INTS))
    return make_model([n], [x], ["y"], opset=opset), x


def _runs(positions: list[int]) -> int:
    """The number of maximal runs of consecutive ints among ``positions`` (sorted, distinct)."""
    return sum(1 for i, p in enumerate(positions) if i == 0 or positions[i - 1] != p - 1)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(1, 4), min_size=0, max_size=3),
    st.lists(st.integers(-5, 4), min_size=1, max_size=4),
    st.sampled_from([11, 13]),
)
def test_unsqueeze_runs_against_onnxruntime(rest: list[int], axes: list[int], opset: int) -> None:
    shape: tuple[int | str, ...] = ("N", *rest)
    model, x = _model(shape, axes, opset)
    common._UNSQUEEZE_PLANS.clear()
    res = sso.infer(model)
    out_rank = len(shape) + len(axes)
    in_range = all(-out_rank <= a < out_rank for a in axes)
    good = in_range and len({a % out_rank for a in axes}) == len(axes)
    if not good:  # onnxruntime refuses it too (checked where it is valid)
        assert res.status == "error", res.report()
        assert "unsq" in res.report()
        return
    assert res.status == "ok", res.report()
    assert disagreements(model, ["N"], SIZES, feeds_of([x])) == []
    # one expand_dims per run of the output positions the axes name
    positions = sorted(a % out_rank for a in axes)
    one_sign = min(axes) >= 0 or max(axes) < 0
    common._UNSQUEEZE_PLANS.clear()
    for _ in range(2):  # the first node makes the plan (axes of one sign), a second takes it
        text = str(Importer(model, "m").run())
        assert len(re.findall(r"expand_dims\(", text)) == _runs(positions), (axes, text)
        assert (tuple(axes) in common._UNSQUEEZE_PLANS) == one_sign
