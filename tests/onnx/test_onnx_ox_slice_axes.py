"""``Slice`` by axes computed at run time (an ``axes`` input whose value is not known), against
onnxruntime (with and without graph optimizations) and onnx's reference evaluator at sizes
including 0 and 1 (:func:`size_oracle.disagreements`).

The output has the input's rank; an axis is the input's dimension where every entry's bounds keep
it whole, else a size the run decides (``?``). onnxruntime refuses repeated axes and axes out of
range (the reference evaluator lets a repeated axis' last entry win): more axes than the rank is
an error, and so are a scalar input and bounds whose lengths differ from the axes'.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import helper
from onnx_helpers import In, make_model
from size_oracle import disagreements, feeds_of

import symshape as ss
import symshape.onnx as sso

N = helper.make_node
I64 = np.int64
BIG = np.iinfo(np.int64).max
RUNNERS = ("onnxruntime", "onnxruntime-plain", "reference")
SIZES = [{"a": 0, "b": 2}, {"a": 1, "b": 1}, {"a": 3, "b": 4}, {"a": 5, "b": 0}]


def _model(inputs: Sequence[In], inits: Mapping[str, Any], steps: bool = False) -> onnx.ModelProto:
    ins = ["x", "s", "e", "ax"] + (["st"] if steps else [])
    return make_model([N("Slice", ins, ["y"])], inputs, ["y"], 18, dict(inits), ir_version=8)


def _agree(model: onnx.ModelProto, fed: Mapping[str, Any], inputs: Sequence[In]) -> sso.OnnxInferenceResult:
    syms = {"a": ss.dim("a", min=0), "b": ss.dim("b", min=0)}
    for runner in RUNNERS:
        got = disagreements(model, syms, SIZES, feeds_of(inputs, fed), runner)
        assert got == [], runner + ":\n" + "\n".join(got)
    return sso.infer(model, dims=syms)


X = In("x", "float32", ["a", "b", 3])
AX1 = In("ax", "int64", [1])


# (axes fed, starts, ends, steps or None, whether starts/ends/steps are graph inputs, the type)
CASES = [
    ([1], [1], [3], None, True, "Tensor[(?, ?, ?), float32]"),
    ([-1], [-2], [BIG], [1], True, "Tensor[(?, ?, ?), float32]"),
    ([0], [1], [BIG], None, False, "Tensor[(?, ?, ?), float32]"),
    ([2], [-2], [-BIG], [-1], False, "Tensor[(?, ?, ?), float32]"),
    # bounds that keep every axis whole: the input's type
    ([0], [0], [BIG], None, False, "Tensor[(a, b, 3), float32]"),
    ([-2], [0], [BIG], [1], False, "Tensor[(a, b, 3), float32]"),
    ([1], [-1], [-BIG], [-1], False, "Tensor[(a, b, 3), float32]"),
    ([2], [-5], [7], [1], False, "Tensor[(?, ?, 3), float32]"),
]


@pytest.mark.parametrize(("axes", "starts", "ends", "steps", "by_run", "want"), CASES)
def test_slice_by_axes_computed_at_run_time(
    axes: list[int], starts: list[int], ends: list[int], steps: list[int] | None, by_run: bool, want: str
) -> None:
    bounds = {"s": np.array(starts, I64), "e": np.array(ends, I64)}
    if steps is not None:
        bounds["st"] = np.array(steps, I64)
    fed: dict[str, Any] = {"ax": np.array(axes, I64)}
    inputs = [X, AX1]
    if by_run:
        fed.update(bounds)
        inputs += [In(k, "int64", [1]) for k in bounds]
        inits = {}
    else:
        inits = bounds
    res = _agree(_model(inputs, inits, steps is not None), fed, inputs)
    assert res.status == "ok" and not res.unsupported, res.report()
    assert str(res.type_of("y")) == want


def test_two_axes_computed_at_run_time() -> None:
    inputs = [X, In("ax", "int64", [2]), In("s", "int64", [2])]
    fed = {"ax": np.array([2, 0], I64), "s": np.array([1, 0], I64)}
    res = _agree(_model(inputs, {"e": np.array([BIG, BIG], I64)}), fed, inputs)
    assert str(res.type_of("y")) == "Tensor[(?, ?, ?), float32]" and res.status == "ok"
    # the starts [0, 0] keep every axis whole
    whole = {"s": np.zeros(2, I64), "e": np.array([BIG, BIG], I64)}
    res = _agree(_model(inputs[:2], whole), {"ax": fed["ax"]}, inputs[:2])
    assert str(res.type_of("y")) == "Tensor[(a, b, 3), float32]"


def test_the_run_decides_the_sliced_size() -> None:
    # a broadcast of the result against the input: a guard over the sliced size, not a
    # condition on a and b alone (the run's axis and bounds decide it)
    inputs = [In("x", "float32", [4, "a"]), AX1]
    nodes = [N("Slice", ["x", "s", "e", "ax"], ["y"]), N("Add", ["y", "x"], ["z"])]
    bounds = {"s": np.array([1], I64), "e": np.array([BIG], I64)}
    m = make_model(nodes, inputs, ["z"], 18, bounds, ir_version=8)
    a = ss.dim("a")
    res = sso.infer(m, dims={"a": a})
    assert res.status == "guarded" and "which the run decides" in res.report(), res.report()
    with pytest.raises(ss.SymshapeError, match="sizes the program computes"):
        res.valid_at({a: 3})


# (the axes' static length, the input's rank, starts length, what fails)
REFUSED = [
    (3, ["a", "b"], 3, "an axis repeats"),
    (1, [], 1, "a scalar cannot be sliced"),
    (1, ["a", "b"], 2, "1 axes for bounds of lengths"),
    (0, [], 0, "a scalar cannot be sliced"),
]


@pytest.mark.parametrize(("k", "shape", "m", "why"), REFUSED)
def test_run_time_axes_that_onnxruntime_refuses(k: int, shape: list[str], m: int, why: str) -> None:
    inputs = [In("x", "float32", shape), In("ax", "int64", [k]), In("s", "int64", [m]), In("e", "int64", [m])]
    model = _model(inputs, {})
    res = sso.infer(model, dims={"a": ss.dim("a"), "b": ss.dim("b")})
    assert res.status == "error" and why in res.report(), res.report()
    # every choice of axes (in range where there are any) fails in onnxruntime
    r = len(shape)
    choices = list(itertools.product(range(max(r, 1)), repeat=k))
    for axes in choices:
        fed = {"x": np.zeros([2] * r, np.float32), "ax": np.array(axes, I64).reshape(k),
               "s": np.zeros(m, I64), "e": np.ones(m, I64)}  # fmt: skip
        for run in ("onnxruntime", "onnxruntime-plain"):
            assert disagreements(model, {}, [{}], feeds_of(inputs, fed), run) == [], (axes, run)
