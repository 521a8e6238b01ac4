"""Converters of symshape.onnx.ops.index, against onnx's reference evaluator."""

from __future__ import annotations

import numpy as np
import pytest
from onnx_helpers import Case, In, check_node, infer_node, node

F = "float32"


def i64(*v: int) -> np.ndarray:
    return np.array(v, dtype=np.int64)


def idx(hi: int):  # random indices in [0, hi)
    return lambda s, r: r.integers(0, hi, s).astype(np.int64)


CASES = [
    Case(
        "gather",
        node("Gather", ["x", "i"], ["y"], axis=1),
        [In("x", F, ("n", 5, 4)), In("i", "int64", ("k", 2), data=idx(5))],
        ["Tensor[(n, k, 2, 4), float32]"],
        [{"n": 2, "k": 3}],
    ),
    Case(
        "gather_scalar_index",
        node("Gather", ["x", "i"], ["y"]),
        [In("x", F, (6, "d"))],
        ["Tensor[(d,), float32]"],
        [{"d": 3}],
        inits={"i": np.array(-1, np.int64)},
    ),
    Case(
        "gather_elements",
        node("GatherElements", ["x", "i"], ["y"], axis=0),
        [In("x", F, (3, "d")), In("i", "int64", ("k", "d"), data=idx(3))],
        ["Tensor[(k, d), float32]"],
        [{"k": 2, "d": 4}],
    ),
    Case(
        "gather_nd",
        node("GatherND", ["x", "i"], ["y"]),
        [In("x", F, (3, 4, "d")), In("i", "int64", ("k", 2), data=idx(3))],
        ["Tensor[(k, d), float32]"],
        [{"k": 5, "d": 2}],
    ),
    Case(
        "gather_nd_batch",
        node("GatherND", ["x", "i"], ["y"], batch_dims=1),
        [In("x", F, ("b", 3, 4)), In("i", "int64", ("b", "k", 1), data=idx(3))],
        ["Tensor[(b, k, 4), float32]"],
        [{"b": 2, "k": 3}],
    ),
    Case(
        "gather_nd_full",
        node("GatherND", ["x", "i"], ["y"]),
        [In("x", F, (3, 3)), In("i", "int64", ("k", 2), data=idx(3))],
        ["Tensor[(k,), float32]"],
        [{"k": 2}],
    ),
    Case(
        "scatter_nd",
        node("ScatterND", ["x", "i", "u"], ["y"]),
        [
            In("x", F, (4, "d")),
            In("i", "int64", (2, 1), data=lambda s, r: np.array([[0], [2]])),
            In("u", F, (2, "d")),
        ],
        ["Tensor[(4, d), float32]"],
        [{"d": 3}],
    ),
    Case(
        "scatter_elements",
        node("ScatterElements", ["x", "i", "u"], ["y"], axis=1),
        [In("x", F, ("n", 5)), In("i", "int64", ("n", 2), data=idx(5)), In("u", F, ("n", 2))],
        ["Tensor[(n, 5), float32]"],
        [{"n": 3}],
    ),
    Case(
        "topk",
        node("TopK", ["x", "k"], ["v", "i"], axis=1),
        [In("x", F, ("n", 6))],
        ["Tensor[(n, 3), float32]", "Tensor[(n, 3), int64]"],
        [{"n": 2}],
        inits={"k": i64(3)},
    ),
    Case(
        "one_hot",
        node("OneHot", ["i", "d", "v"], ["y"], axis=1),
        [In("i", "int64", ("n", "s"), data=idx(4))],
        ["Tensor[(n, 4, s), float32]"],
        [{"n": 2, "s": 3}],
        inits={"d": np.array(4, np.int64), "v": np.array([0, 1], np.float32)},
    ),
    Case(
        "one_hot_last",
        node("OneHot", ["i", "d", "v"], ["y"]),
        [In("i", "int64", ("n",), data=idx(5))],
        ["Tensor[(n, 5), int64]"],
        [{"n": 3}],
        inits={"d": np.array(5.0, np.float32), "v": i64(0, 1)},
    ),
    Case(
        "compress_axis",
        node("Compress", ["x", "c"], ["y"], axis=1),
        [In("x", F, ("n", 3))],
        ["Tensor[(n, 2), float32]"],
        [{"n": 2}],
        inits={"c": np.array([True, False, True])},
    ),
    Case(
        "compress_flat",
        node("Compress", ["x", "c"], ["y"]),
        [In("x", F, (2, 2))],
        ["Tensor[(1,), float32]"],
        [{}],
        inits={"c": np.array([False, True])},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_index(case: Case) -> None:
    check_node(case)


def test_nonzero_of_a_constant_is_folded() -> None:
    res = infer_node(node("NonZero", ["c"], ["y"]), [], {"c": np.array([[1, 0], [1, 1]], np.int64)})
    assert str(res.type_of("y")) == "Tensor[(2, 3), int64]"


def test_nonzero_of_data_needs_fresh_symbols() -> None:
    res = infer_node(node("NonZero", ["x"], ["y"]), [In("x", F, ("n",))])
    assert res.unsupported[0][0].key == "shape-values"


def test_gather_batch_dims_mismatch_is_an_error() -> None:
    res = infer_node(
        node("GatherND", ["x", "i"], ["y"], batch_dims=1), [In("x", F, (2, 3)), In("i", "int64", (3, 1))]
    )
    assert res.status == "error" and res.errors[0].code == "shape-mismatch"
