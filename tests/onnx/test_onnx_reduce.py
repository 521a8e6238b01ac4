"""Converters of symshape.onnx.ops.reduce, against onnx's reference evaluator."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from onnx_helpers import Case, In, check_node, infer_node, make_model, node, reference

F = "float32"


def i64(*v: int) -> np.ndarray:
    return np.array(v, dtype=np.int64)


CASES = [
    Case(
        "sum_axes_input",
        node("ReduceSum", ["x", "a"], ["y"]),
        [In("x", F, ("n", "s", 4))],
        ["Tensor[(n, 1, 4), float32]"],
        [{"n": 2, "s": 3}],
        inits={"a": i64(1)},
    ),
    Case(
        "sum_no_axes_noop",
        node("ReduceSum", ["x"], ["y"], noop_with_empty_axes=1),
        [In("x", F, ("n", 3))],
        ["Tensor[(n, 3), float32]"],
        [{"n": 2}],
    ),
    Case(
        "sum_all",
        node("ReduceSum", ["x"], ["y"], keepdims=0),
        [In("x", F, ("n", 3))],
        ["Tensor[(), float32]"],
        [{"n": 2}],
    ),
    Case(
        "mean_attr",
        node("ReduceMean", ["x"], ["y"], axes=[-1, 0], keepdims=0),
        [In("x", F, ("n", 3, 4))],
        ["Tensor[(3,), float32]"],
        [{"n": 2}],
        opset=13,
    ),
    Case(
        "max_input",
        node("ReduceMax", ["x", "a"], ["y"], keepdims=0),
        [In("x", F, ("n", 3, 4))],
        ["Tensor[(n, 4), float32]"],
        [{"n": 2}],
        inits={"a": i64(1)},
        opset=18,
    ),
    Case(
        "max_empty_axis",
        node("ReduceMax", ["x", "a"], ["y"]),
        [In("x", F, (2, 0))],
        ["Tensor[(2, 1), float32]"],
        [{}],
        inits={"a": i64(1)},
        opset=20,
    ),
    Case(
        "l2",
        node("ReduceL2", ["x", "a"], ["y"]),
        [In("x", F, ("n", 3))],
        ["Tensor[(1, 3), float32]"],
        [{"n": 2}],
        inits={"a": i64(0)},
        opset=18,
    ),
    Case(
        "log_sum_exp_attr",
        node("ReduceLogSumExp", ["x"], ["y"], axes=[1]),
        [In("x", F, ("n", 3))],
        ["Tensor[(n, 1), float32]"],
        [{"n": 2}],
        opset=13,
    ),
    Case(
        "argmax",
        node("ArgMax", ["x"], ["y"], axis=1, keepdims=0),
        [In("x", F, ("n", 3, "s"))],
        ["Tensor[(n, s), int64]"],
        [{"n": 2, "s": 2}],
    ),
    Case(
        "argmin_keepdims",
        node("ArgMin", ["x"], ["y"]),
        [In("x", F, ("n", 3))],
        ["Tensor[(1, 3), int64]"],
        [{"n": 2}],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_reduce(case: Case) -> None:
    check_node(case)


def test_duplicate_axes_are_reduced_once() -> None:
    """(as onnxruntime runs it: tests/onnx/test_onnx_check_texts_more.py)"""
    res = infer_node(node("ReduceSum", ["x", "a"], ["y"]), [In("x", F, ("n", 3))], {"a": i64(1, -1)})
    assert res.status == "ok" and str(res.type_of("y")) == "Tensor[(n, 1), float32]", res.report()


@given(
    st.lists(st.integers(1, 3), min_size=1, max_size=4).flatmap(
        lambda shape: st.tuples(
            st.just(shape),
            st.lists(
                st.integers(-len(shape), len(shape) - 1),
                unique_by=lambda a: a % len(shape),
                max_size=len(shape),
            ),
            st.booleans(),
        )
    )
)
def test_reduce_matches_reference(args: tuple[list[int], list[int], bool]) -> None:
    shape, axes, keep = args
    n = node("ReduceSum", ["x", "a"], ["y"], keepdims=int(keep))
    res = infer_node(n, [In("x", F, tuple(shape))], {"a": i64(*axes)})
    (y,) = reference(
        make_model([n], [In("x", F, tuple(shape))], ["y"], inits={"a": i64(*axes)}),
        {"x": np.ones(shape, np.float32)},
    )
    assert tuple(int(d) for d in res.type_of("y").dims) == y.shape
