"""Converters of symshape.onnx.ops.index, against onnx's reference evaluator."""

from __future__ import annotations

import numpy as np
import pytest
from onnx_helpers import Case, In, check_node, infer_node, make_model, node, reference

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


def test_nonzero_of_data_has_a_fresh_size() -> None:
    res = infer_node(node("NonZero", ["x"], ["y"]), [In("x", F, ("n", 3))])
    assert res.status == "ok" and str(res.type_of("y")) == "Tensor[(2, u0), int64]"
    m = make_model([node("NonZero", ["x"], ["y"])], [In("x", F, ("n", 3))], ["y"])
    (y,) = reference(m, {"x": np.array([[1, 0, 2], [0, 0, 3]], np.float32)})
    assert y.shape == (2, 3)  # u0 = 3 here


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_unique_of_data_has_a_fresh_size(axis: int | None) -> None:
    attrs = {} if axis is None else {"axis": axis}
    n = node("Unique", ["x"], ["y", "i", "inv", "c"], **attrs)
    res = infer_node(n, [In("x", F, ("n", 3))])
    assert res.status == "ok", res.report()
    ty, ti, tinv, tc = (res.type_of(o) for o in ("y", "i", "inv", "c"))
    (u,) = [d for d in ti.dims]
    assert tc.dims == (u,) and ti.dtype == tc.dtype == tinv.dtype == "int64"
    m = make_model([n], [In("x", F, ("n", 3))], ["y", "i", "inv", "c"], opset=11)
    x = np.array([[1, 2, 2], [1, 2, 2], [0, 0, 5], [1, 2, 2]], np.float32)
    got = reference(m, {"x": x})
    env = {res._importer.dim_names.symbols["n"]: 4, u: got[1].shape[0]}
    for t, arr in zip((ty, ti, tinv, tc), got):
        assert tuple(int(d.subs(env)) for d in t.dims) == arr.shape


def test_non_max_suppression_has_a_fresh_size() -> None:
    n = node("NonMaxSuppression", ["b", "s"], ["y"])
    res = infer_node(n, [In("b", F, ("n", "k", 4)), In("s", F, ("n", "c", "k"))])
    t = res.type_of("y")
    assert res.status == "ok" and t.dtype == "int64" and t.dims[1] == 3 and not t.dims[0].is_constant


def test_gather_batch_dims_mismatch_is_an_error() -> None:
    res = infer_node(
        node("GatherND", ["x", "i"], ["y"], batch_dims=1), [In("x", F, (2, 3)), In("i", "int64", (3, 1))]
    )
    assert res.status == "error" and res.errors[0].code == "shape-mismatch"
