"""``MaxPool`` with ``auto_pad`` ``SAME_UPPER``/``SAME_LOWER`` and a stride over the window, against
onnxruntime (with and without graph optimizations) and onnx's reference evaluator
(:func:`size_oracle.disagreements`): onnxruntime's single-output kernel refuses a negative total
pad, ``(d - 1) % s >= K`` ("padding values must be non-negative"), and runs only where one output
is asked for, every dilation is 1 and ``storage_order`` is 0; with the ``Indices`` output, a
dilation or ``storage_order`` 1 its ``MaxPool``-8 kernel runs every size (as the reference does).
(With a dilation and a kernel over 1, onnxruntime's SAME pad is that of the undilated kernel,
which gives other sizes: not compared here.)
"""

from __future__ import annotations

from typing import Any

import pytest
from onnx import helper
from onnx_helpers import In, make_model
from size_oracle import disagreements, feeds_of

import symshape as ss
import symshape.onnx as sso

SIZES = [{"b": v} for v in range(1, 9)]

# (attributes, the Indices output too, the guard)
CASES: list[tuple[dict[str, Any], bool, str]] = [
    ({"kernel_shape": [1], "strides": [2]}, False, "b % 2 == 1"),
    ({"kernel_shape": [1], "strides": [2]}, True, "True"),
    ({"kernel_shape": [1], "strides": [3], "storage_order": 1}, False, "True"),
    ({"kernel_shape": [1], "strides": [3], "dilations": [2]}, False, "True"),
    ({"kernel_shape": [2], "strides": [3]}, True, "True"),
    ({"kernel_shape": [2], "strides": [3]}, False, "(b + 2) % 3 <= 1"),
    ({"kernel_shape": [1], "strides": [2], "dilations": [1]}, False, "b % 2 == 1"),
]


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER"])
@pytest.mark.parametrize(("attrs", "indices", "guard"), CASES)
def test_max_pool_same_pads(auto_pad: str, attrs: dict[str, Any], indices: bool, guard: str) -> None:
    outs = ["y", "i"] if indices else ["y"]
    ins = [In("x", "float32", [1, 1, "b"])]
    m = make_model([helper.make_node("MaxPool", ["x"], outs, auto_pad=auto_pad, **attrs)], ins, outs, 18,
                   ir_version=8)  # fmt: skip
    b = ss.dim("b")
    # (the reference runs every size, and its SAME_LOWER gives other sizes: (b - 1)//s there)
    plain = guard != "True"
    runners = ["onnxruntime", "onnxruntime-plain"] + (
        [] if plain or auto_pad == "SAME_LOWER" else ["reference"]
    )
    for runner in runners:
        got = disagreements(m, {"b": b}, SIZES, feeds_of(ins), runner)
        assert got == [], runner + ":\n" + "\n".join(got)
    res = sso.infer(m, dims={"b": b})
    assert res.valid_when() == guard, res.report()
