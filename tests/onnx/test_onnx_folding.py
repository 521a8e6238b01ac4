"""Constant folding: the numpy fast path agrees with onnx's reference evaluator, and evaluators are
shared between nodes that differ in names only."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import helper
from onnx.reference import ReferenceEvaluator

from symshape.onnx import folding


def _reference(node: Any, arrays: list[Any], opset: int) -> list[np.ndarray[Any, Any]]:
    ev = ReferenceEvaluator(folding._standalone(node, opset))
    return [np.asarray(r) for r in ev.run(None, {n: a for n, a in zip(node.input, arrays) if n})]


shapes = st.lists(st.integers(1, 3), min_size=0, max_size=3).map(tuple)


@settings(max_examples=60, deadline=None)
@given(
    shape=shapes,
    axes=st.lists(st.integers(-4, 4), min_size=1, max_size=2, unique=True),
    opset=st.sampled_from([11, 13, 21]),
)
def test_unsqueeze_matches_reference(shape: tuple[int, ...], axes: list[int], opset: int) -> None:
    x = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    if opset >= 13:
        node, arrays = helper.make_node("Unsqueeze", ["x", "a"], ["y"]), [x, np.array(axes, np.int64)]
    else:
        node, arrays = helper.make_node("Unsqueeze", ["x"], ["y"], axes=axes), [x]
    fast = folding._numpy(node, arrays, opset)
    try:
        ref = _reference(node, arrays, opset)
    except Exception:
        assert fast is None  # numpy refuses what the reference refuses
        return
    if fast is not None:
        assert [a.shape for a in fast] == [a.shape for a in ref]
        assert all(np.array_equal(a, b) for a, b in zip(fast, ref))


@settings(max_examples=60, deadline=None)
@given(
    shape=shapes,
    axes=st.none() | st.lists(st.integers(-3, 2), min_size=1, max_size=2, unique=True),
    opset=st.sampled_from([11, 13]),
)
def test_squeeze_matches_reference(shape: tuple[int, ...], axes: list[int] | None, opset: int) -> None:
    x = np.zeros(shape, np.int64)
    if opset >= 13:
        ins = ["x"] if axes is None else ["x", "a"]
        node = helper.make_node("Squeeze", ins, ["y"])
        arrays = [x] if axes is None else [x, np.array(axes, np.int64)]
    else:
        node = helper.make_node("Squeeze", ["x"], ["y"], **({} if axes is None else {"axes": axes}))
        arrays = [x]
    fast = folding._numpy(node, arrays, opset)
    try:
        ref = _reference(node, arrays, opset)
    except Exception:
        assert fast is None
        return
    if fast is not None:
        assert [a.shape for a in fast] == [a.shape for a in ref]


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat_matches_reference(axis: int) -> None:
    a, b = np.arange(6).reshape(2, 3), np.arange(6, 12).reshape(2, 3)
    node = helper.make_node("Concat", ["a", "b"], ["y"], axis=axis)
    fast = folding._numpy(node, [a, b], 17)
    assert fast is not None
    assert np.array_equal(fast[0], _reference(node, [a, b], 17)[0])


def test_evaluators_are_shared_across_names() -> None:
    folding._EVALUATORS.clear()
    for k in range(3):
        node = helper.make_node("Range", [f"s{k}", f"l{k}", f"d{k}"], [f"r{k}"], name=f"n{k}")
        (r,) = folding._evaluate(node, [np.array(0), np.array(k + 2), np.array(1)], 17)
        assert r.tolist() == list(range(k + 2))
    assert len(folding._EVALUATORS) == 1
