"""``Slice`` by axes computed at run time whose entries are known sizes (``Shape(x)[0] - 1``):
onnxruntime refuses an axis named twice, also as its negative form ("'axes' has duplicates", with
and without graph optimizations); onnx's reference evaluator lets the last entry win. symshape
follows onnxruntime: a guard that no two entries name the same axis (it accepted them).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import onnx
import pytest
from onnx import helper
from onnx_helpers import In, make_model, reference
from size_oracle import disagreements, feeds_of

import symshape as ss
import symshape.onnx as sso

N = helper.make_node
X = In("x", "float32", ["a", "b", 3])
SIZES = [{"a": a, "b": b} for a, b in itertools.product((0, 1, 2, 3, 4), repeat=2)]


def _entry(e: object, k: int, nodes: list[onnx.NodeProto]) -> str:
    """Entry ``e`` of the axes: an int, or ``"a-1"`` / ``"b-2"`` (an axis' size minus a constant)."""
    out = f"e{k}"
    if isinstance(e, int):
        nodes.append(N("Constant", [], [out], value_ints=[e]))
        return out
    name, sub = str(e).split("-")
    nodes.append(N("Shape", ["x"], [f"s{k}"], start="ab".index(name), end="ab".index(name) + 1))
    nodes.append(N("Constant", [], [f"c{k}"], value_ints=[int(sub)]))
    nodes.append(N("Sub", [f"s{k}", f"c{k}"], [out]))
    return out


def _model(axes: Sequence[object]) -> onnx.ModelProto:
    nodes: list[onnx.NodeProto] = []
    parts = [_entry(e, k, nodes) for k, e in enumerate(axes)]
    n = len(axes)
    nodes += [
        N("Concat", parts, ["ax"], axis=0),
        N("Constant", [], ["st"], value_ints=[0] * n),
        N("Constant", [], ["en"], value_ints=[1] * n),
        N("Slice", ["x", "st", "en", "ax"], ["y"]),
    ]
    return make_model(nodes, [X], ["y"], 18, ir_version=8)


# (the axes, the symbols' least value, valid_when)
CASES: list[tuple[list[object], int, str]] = [
    (["a-1", "b-1"], 1, "a - 1 != b - 1 and max(a - 1, b - 1) <= 2"),
    ([-2, "a-1"], 1, "a != 2 and a <= 3"),  # (-2 is axis 1)
    ([0, "b-3"], 0, "b != 3 and b != 0 and b <= 5"),  # (b - 3 == -3 is axis 0 too)
]


@pytest.mark.parametrize(("axes", "least", "guard"), CASES)
@pytest.mark.parametrize("runner", ["onnxruntime", "onnxruntime-plain"])
def test_repeated_run_time_axes_are_refused(axes: list[object], least: int, guard: str, runner: str) -> None:
    m = _model(axes)
    syms = {"a": ss.dim("a", min=least), "b": ss.dim("b", min=least)}
    sizes = [s for s in SIZES if min(s.values()) >= least]
    got = disagreements(m, syms, sizes, feeds_of([X]), runner)
    assert got == [], "\n".join(got)
    res = sso.infer(m, dims=syms)
    assert res.valid_when() == guard, res.report()


@pytest.mark.parametrize("runner", ["onnxruntime", "onnxruntime-plain"])
def test_three_axes(runner: str) -> None:
    m = _model(["a-1", 2, "b-2"])
    syms = {"a": ss.dim("a"), "b": ss.dim("b")}
    sizes = [s for s in SIZES if min(s.values()) >= 1]
    got = disagreements(m, syms, sizes, feeds_of([X]), runner)
    assert got == [], "\n".join(got)
    a, b = syms["a"], syms["b"]
    res = sso.infer(m, dims=syms)
    assert res.valid_at({a: 2, b: 2}) is True  # (axes 1, 2, 0)
    assert res.valid_at({a: 2, b: 3}) is False  # (axes 1, 2, 1)
    assert res.valid_at({a: 1, b: 1}) is False  # (axes 0, 2, -1: 2 twice)


def test_the_reference_evaluator_lets_the_last_win() -> None:
    """Where they differ: the reference runs a repeated axis (symshape follows onnxruntime)."""
    m = _model(["a-1", "b-1"])
    out = reference(m, {"x": np.zeros((2, 2, 3), np.float32)})
    assert out is not None and out[0].shape == (2, 1, 3)
    res = sso.infer(m, dims={"a": ss.dim("a"), "b": ss.dim("b")})
    a, b = ss.dim("a"), ss.dim("b")
    assert res.valid_at({a: 2, b: 2}) is False
    assert "distinct_slice_axes needs `a - 1 != b - 1" in res.why_invalid({a: 2, b: 2})
