"""Pools whose window is longer than a constant padded input, and pools of empty axes, against
onnxruntime (with and without graph optimizations) and onnx's reference evaluator
(:func:`size_oracle.disagreements`).

* A window longer than the padded input (``num = d + pads - K < 0``): onnxruntime counts
  ``trunc(num/s) + 1`` windows (``ceil(num/s) + 1`` in ``ceil_mode``) and refuses a negative count;
  onnx's reference evaluator counts ``floor(num/s) + 1`` (the same in ``ceil_mode``). symshape
  follows onnxruntime over a constant size (it was an error); a symbolic size keeps the condition
  that the window fits (see :mod:`symshape.onnx.ops.nn`).
* onnxruntime refuses an empty axis but the batch unless the batch is empty too ("Only N can be
  zero"), global pools included: a guard ``N == 0 or C*H*W >= 1``.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from onnx import helper
from onnx_helpers import In, make_model
from size_oracle import disagreements, feeds_of

import symshape as ss
import symshape.onnx as sso

OPS = ["MaxPool", "AveragePool", "LpPool"]


def _model(op: str, attrs: dict[str, Any], shape: list[Any], opset: int = 19) -> Any:
    ins = [In("x", "float32", shape)]
    return make_model([helper.make_node(op, ["x"], ["y"], **attrs)], ins, ["y"], opset, ir_version=9), ins


# (operator, attributes, input's last axis, the result's last axis; None: onnxruntime refuses)
SHORT: list[tuple[str, dict[str, Any], int, int | None]] = [
    ("MaxPool", {"kernel_shape": [1, 3]}, 2, 0),
    ("AveragePool", {"kernel_shape": [1, 3], "strides": [1, 2]}, 2, 1),
    ("LpPool", {"kernel_shape": [1, 3], "strides": [1, 2]}, 2, 1),
    ("MaxPool", {"kernel_shape": [1, 4], "strides": [1, 2]}, 1, 0),
    ("MaxPool", {"kernel_shape": [1, 4], "strides": [1, 1]}, 1, None),
    ("AveragePool", {"kernel_shape": [1, 3], "strides": [1, 3], "ceil_mode": 1}, 1, 1),
    ("MaxPool", {"kernel_shape": [1, 3], "dilations": [1, 2]}, 4, 0),
    ("MaxPool", {"kernel_shape": [1, 3], "pads": [0, 1, 0, 0], "strides": [1, 3]}, 1, 1),
]


@pytest.mark.parametrize(("op", "attrs", "d", "want"), SHORT)
def test_a_window_longer_than_a_constant_input(
    op: str, attrs: dict[str, Any], d: int, want: int | None
) -> None:
    m, ins = _model(op, attrs, [1, 1, 3, d])
    res = sso.infer(m)
    if want is None:
        assert res.status == "error" and "larger than the padded input" in res.report(), res.report()
    else:
        assert res.status == "ok" and res.type_of("y").dims[-1] == want, res.report()
    for runner in ("onnxruntime", "onnxruntime-plain"):
        got = disagreements(m, {}, [{}], feeds_of(ins), runner)
        assert got == [], runner + ":\n" + "\n".join(got)


def test_windows_longer_than_constant_inputs_sweep() -> None:
    """Every kernel, stride, pad and mode of one axis over sizes 1 to 4, as onnxruntime counts."""
    for op, d, k, s, (pb, pa), ceil in itertools.product(
        OPS, range(1, 5), range(1, 5), range(1, 4), [(0, 0), (1, 0), (0, 1)], (0, 1)
    ):
        if pb >= k or pa >= k or d + pb + pa >= k:  # (pads below the kernel: onnxruntime's rule)
            continue
        attrs = {"kernel_shape": [k], "strides": [s], "pads": [pb, pa], "ceil_mode": ceil}
        m, ins = _model(op, attrs, [1, 1, d])
        got = disagreements(m, {}, [{}], feeds_of(ins), "onnxruntime-plain")
        assert got == [], f"{op} d={d} {attrs}:\n" + "\n".join(got)


# (not n = h = 0: onnxruntime runs it, and symshape keeps a symbolic window's condition, h >= 1
# for a window of 1, and GlobalMaxPool's max over h, as documented)
SIZES = [{"n": a, "c": b, "h": e} for a in (0, 1, 2) for b in (0, 1) for e in (0, 2, 3) if a or e]
EMPTY = [
    ("MaxPool", {"kernel_shape": [2], "pads": [1, 1]}, "n == 0 or c*h >= 1"),
    ("AveragePool", {"kernel_shape": [1]}, "n == 0 or c*h >= 1"),
    ("LpPool", {"kernel_shape": [2], "pads": [1, 0]}, "n == 0 or c*h >= 1"),
    ("GlobalAveragePool", {}, "n == 0 or c*h >= 1"),
    ("GlobalMaxPool", {}, "n == 0 or c*h >= 1"),
]


@pytest.mark.parametrize(("op", "attrs", "guard"), EMPTY)
def test_only_the_batch_may_be_empty(op: str, attrs: dict[str, Any], guard: str) -> None:
    m, ins = _model(op, attrs, ["n", "c", "h"])
    syms = {k: ss.dim(k, min=0) for k in ("n", "c", "h")}
    for runner in ("onnxruntime", "onnxruntime-plain"):
        got = disagreements(m, syms, SIZES, feeds_of(ins), runner)
        assert got == [], runner + ":\n" + "\n".join(got)
    res = sso.infer(m, dims=syms)
    assert guard in res.valid_when(), res.report()


@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"])
def test_a_global_pool_needs_rank_3(op: str) -> None:
    # onnxruntime: "Input dimension cannot be less than 3" (the reference evaluator reduces a
    # rank-2 GlobalMaxPool input to a scalar, keeps a GlobalAveragePool's, refuses GlobalLpPool's)
    m, ins = _model(op, {}, ["n", 3])
    res = sso.infer(m, dims={"n": ss.dim("n")})
    assert res.status == "error" and "rank must be 3 or more" in res.report(), res.report()
    for runner in ("onnxruntime", "onnxruntime-plain"):
        assert disagreements(m, {"n": ss.dim("n")}, [{"n": 1}, {"n": 2}], feeds_of(ins), runner) == []
    m, ins = _model(op, {}, ["n", 3, 2])
    assert sso.infer(m, dims={"n": ss.dim("n")}).status == "ok"
