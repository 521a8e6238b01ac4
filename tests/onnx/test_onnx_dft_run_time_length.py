"""``DFT`` whose ``dft_length`` is computed at run time (``Shape``/``Gather`` of another tensor, that
minus one, or a fed scalar), against onnxruntime at several sizes.

symshape said ``unsupported-op`` (it read ``dft_length`` as a constant only). The signal axis is now
an axis of that value (``n//2 + 1`` for a one-sided forward DFT), which must be >= 1 (onnxruntime
refuses 0): a guard on the sizes it is computed from (``k - 1 >= 1``), or on the fresh size of a
fed length. The forward one-sided rows take real input only (the spec; onnxruntime is looser, see
test_onnx_dft_shapes.py), so their sizes have ``c == 1``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx_helpers import In, make_model, node
from size_oracle import disagreements, feeds_of

import symshape.onnx as sso

I64 = np.int64
X = In("x", "float32", ["b", "n", "c"])
Z = In("z", "float32", ["k"])
SIZES = [dict(b=2, n=5, c=1, k=6), dict(b=2, n=5, c=2, k=3), dict(b=1, n=1, c=2, k=1),
         dict(b=3, n=4, c=1, k=2), dict(b=1, n=8, c=2, k=8), dict(b=2, n=2, c=1, k=9)]  # fmt: skip
MODES = [(0, 0), (0, 1), (1, 0), (1, 1)]  # (inverse, onesided)
K = [node("Shape", ["z"], ["s"]), node("Gather", ["s", "zero"], ["k"], axis=0)]
LENGTHS: list[tuple[str, list[onnx.NodeProto], list[In], dict[str, Any]]] = [
    # (id, nodes making "dl", inputs besides x, fed values)
    ("shape", [*K, node("Identity", ["k"], ["dl"])], [Z], {}),
    ("shape-minus-1", [*K, node("Sub", ["k", "one"], ["dl"])], [Z], {}),
    ("fed", [], [In("dl", "int64", [])], {"dl": np.array(4, dtype=I64)}),
]


@pytest.mark.parametrize("opset", [17, 20])
@pytest.mark.parametrize(("inverse", "onesided"), MODES)
@pytest.mark.parametrize(("nodes", "ins", "fed"), [r[1:] for r in LENGTHS], ids=[r[0] for r in LENGTHS])
def test_dft_length_computed_at_run_time_against_onnxruntime(
    opset: int, inverse: int, onesided: int, nodes: list[onnx.NodeProto], ins: list[In], fed: dict[str, Any]
) -> None:
    inits: dict[str, Any] = {"zero": np.array(0, dtype=I64), "one": np.array(1, dtype=I64)}
    inputs = ["x", "dl"]
    if opset >= 20:  # the axis input: -2 (the signal axis 1 of (b, n, c))
        inits["ax"] = np.array(-2, dtype=I64)
        inputs.append("ax")
    dft = node("DFT", inputs, ["y"], inverse=inverse, onesided=onesided)
    for i, n in enumerate(nodes):
        n.name = f"pre_{i}"
    model = make_model([*nodes, dft], [X, *ins], ["y"], opset=opset, inits=inits)
    sizes = [s for s in SIZES if not (onesided and not inverse and s["c"] == 2)]  # real input only
    names = ["b", "n", "c"] + (["k"] if ins == [Z] else [])
    assert sso.infer(model, dims=None).unsupported == []
    assert disagreements(model, names, sizes, feeds_of([X, *ins], fed)) == []


def test_dft_length_computed_at_run_time_must_be_a_scalar() -> None:
    model = make_model([node("DFT", ["x", "dl"], ["y"])], [X, In("dl", "int64", [1])], ["y"], opset=17)
    res = sso.infer(model)
    assert [e.code for e in res.errors] == ["bad-attribute"] and "scalar" in res.report(), res.report()
