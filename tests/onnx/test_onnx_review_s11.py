"""Claims a review of this session's changes found wrong, each checked against onnxruntime at the
sizes concerned (each case fails before its fix):

* ``Pad`` in ``wrap`` mode: onnxruntime refuses an input with any empty axis ("Unexpected mode
  of 3"), padded or not, and with pads of 0 too; symshape was ``ok`` with ``valid_at(d=0)`` true.
* ``Reshape`` to a run-time target with -1 beside a copied dimension (``[0, k, -1]``): with -1
  onnxruntime requires the other entries' product to be non-zero, so ``x`` of ``(s, 6)`` fails at
  ``s = 0`` for every ``k``; symshape stated only the divisibility guard.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx_helpers import In, make_model, node, run_ort

import symshape as ss
import symshape.onnx as sso


def _runs(m: onnx.ModelProto, feeds: dict[str, Any]) -> bool:
    try:
        run_ort(m, feeds)
    except Exception:
        return False
    return True


@pytest.mark.parametrize(
    ("pads", "shape"),
    [([0, 0], ["d"]), ([1, 1], ["d"]), ([0, 1, 0, 1], ["d", 2]), ([1, 0, 1, 0], [2, "d"])],
)
def test_pad_wrap_needs_every_axis_non_empty(pads: list[int], shape: list[Any]) -> None:
    inits = {"p": np.array(pads, np.int64)}
    pad = node("Pad", ["x", "p"], ["y"], mode="wrap")
    m = make_model([pad], [In("x", "float32", shape)], ["y"], 19, inits)
    d = ss.dim("d", min=0)
    res = sso.infer(m, dims={"d": d})
    for size in (0, 1, 3):
        x = np.zeros(tuple(size if s == "d" else s for s in shape), np.float32)
        runs = _runs(m, {"x": x})
        assert runs == (size >= 1) and res.valid_at({d: size}) == runs, (size, res.report())


def test_pad_wrap_by_run_time_pads_of_other_axes_needs_every_axis_non_empty() -> None:
    """Pads computed at run time for axis 1 only (``axes``): axis 0, not padded, must not be empty
    either."""
    ins = [In("x", "float32", ["d", 2]), In("p", "int64", [2])]
    pad = node("Pad", ["x", "p", "", "ax"], ["y"], mode="wrap")
    m = make_model([pad], ins, ["y"], 19, {"ax": np.array([1])})
    d = ss.dim("d", min=0)
    res = sso.infer(m, dims={"d": d})
    for size in (0, 2):
        runs = _runs(m, {"x": np.zeros((size, 2), np.float32), "p": np.array([1, 1], np.int64)})
        assert runs == (size >= 1)
    assert "d >= 1" in [str(g.cond) for g in res.guards], res.report()


def test_reshape_beside_minus_one_needs_the_other_entries_non_zero() -> None:
    inits = {"c0": np.array([0], np.int64), "c2": np.array([-1], np.int64)}
    m = make_model(
        [
            node("Concat", ["c0", "k", "c2"], ["shape"], name="cat", axis=0),
            node("Reshape", ["x", "shape"], ["r"], name="rs"),
        ],
        [In("x", "float32", ["s", 6]), In("k", "int64", [1])],
        ["r"],
        opset=17,
        inits=inits,
    )
    s = ss.dim("s", min=0)
    res = sso.infer(m, dims={"s": s})
    x0, x2 = np.zeros((0, 6), np.float32), np.zeros((2, 6), np.float32)
    assert not any(_runs(m, {"x": x0, "k": np.array([k])}) for k in (-1, 0, 1, 2, 3, 6))
    assert _runs(m, {"x": x2, "k": np.array([3])})
    assert res.valid_at({s: 0}) is False and res.valid_at({s: 2}) is True, res.report()
