"""dense, matmul, batch_matmul: tables + numpy properties."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from test_relations_common import against_numpy, check_row, rows, small_shape

TABLE: list[tuple[Any, ...]] = [
    # units given: an unannotated weight is inferred as (units, K)
    (
        "dense",
        ["Tensor[(n, m), float32]", "?"],
        {"units": 7},
        "Tensor[(n, 7), float32]",
        [],
        ["Tensor[(n, m), float32]", "Tensor[(7, m), float32]"],
    ),
    (
        "dense",
        ["Tensor[(n, m), float32]", "Tensor[(7, 5), float32]"],
        {},
        "Tensor[(n, 7), float32]",
        ["m == 5"],
    ),
    ("dense", ["Tensor[(n, 4), float32]", "Tensor[(7, 5), float32]"], {}, "!shape-mismatch"),
    ("dense", ["Tensor[(n, 4), float32]", "Tensor[(7, 5), float32]"], {"units": 7}, "!shape-mismatch"),
    ("dense", ["Tensor[(n, 4), float32]", "Tensor[(6, 4), float32]"], {"units": 7}, "!shape-mismatch"),
    ("dense", ["Tensor[(b, t, 4), float32]", "Tensor[(6, 4), float32]"], {}, "Tensor[(b, t, 6), float32]"),
    ("dense", ["Tensor[(b, t, 4), float32]", "Tensor[(6, 4, 1), float32]"], {}, "!rank-mismatch"),
    ("dense", ["Tensor[(), float32]", "Tensor[(6, 4), float32]"], {}, "!rank-mismatch"),
    (
        "dense",
        ["Tensor[(n, 4), float16]", "Tensor[(6, 4), float16]"],
        {"out_dtype": "float32"},
        "Tensor[(n, 6), float32]",
    ),
    ("dense", ["Tensor[(n, 4), float32]", "?"], {"units": 0}, "!bad-attribute"),
    # matmul: numpy semantics
    (
        "matmul",
        ["Tensor[(2, 1, n, m), float32]", "Tensor[(5, m, 3), float32]"],
        {},
        "Tensor[(2, 5, n, 3), float32]",
    ),
    ("matmul", ["Tensor[(m,), float32]", "Tensor[(5, m, 3), float32]"], {}, "Tensor[(5, 3), float32]"),
    ("matmul", ["Tensor[(n, m), float32]", "Tensor[(m,), float32]"], {}, "Tensor[(n,), float32]"),
    ("matmul", ["Tensor[(m,), float32]", "Tensor[(m,), float32]"], {}, "Tensor[(), float32]"),
    (
        "matmul",
        ["Tensor[(n, m), float32]", "Tensor[(k, 3), float32]"],
        {},
        "Tensor[(n, 3), float32]",
        ["m == k"],
    ),
    ("matmul", ["Tensor[(n, 3), float32]", "Tensor[(4, 3), float32]"], {}, "!shape-mismatch"),
    ("matmul", ["Tensor[(2, n, 3), float32]", "Tensor[(4, 3, 3), float32]"], {}, "!not-broadcastable"),
    ("matmul", ["Tensor[(), float32]", "Tensor[(3,), float32]"], {}, "!rank-mismatch"),
    (
        "matmul",
        ["Tensor[(b, n, k), float32]", "Tensor[(t, k, m), float32]"],
        {},
        "Tensor[(max(b, t), n, m), float32]",
        ["b == t or b == 1 or t == 1"],
    ),
    # batch_matmul
    (
        "batch_matmul",
        ["Tensor[(b, n, k), float32]", "Tensor[(b, m, k), float32]"],
        {},
        "Tensor[(b, n, m), float32]",
    ),
    (
        "batch_matmul",
        ["Tensor[(1, n, k), float32]", "Tensor[(b, k, m), float32]"],
        {"transpose_b": False},
        "Tensor[(b, n, m), float32]",
    ),
    (
        "batch_matmul",
        ["Tensor[(b, k, n), float32]", "Tensor[(b, m, k), float32]"],
        {"transpose_a": True},
        "Tensor[(b, n, m), float32]",
    ),
    ("batch_matmul", ["Tensor[(2, n, 3), float32]", "Tensor[(2, m, 4), float32]"], {}, "!shape-mismatch"),
    ("batch_matmul", ["Tensor[(2, n, 3), float32]", "Tensor[(3, m, 3), float32]"], {}, "!not-broadcastable"),
    ("batch_matmul", ["Tensor[(n, 3), float32]", "Tensor[(3, m, 3), float32]"], {}, "!rank-mismatch"),
]


@rows(TABLE)
def test_linalg_table(row: tuple[Any, ...]) -> None:
    check_row(*row)


SETTINGS = settings(max_examples=50, deadline=None)


@SETTINGS
@given(small_shape(1, 4, hi=4), small_shape(1, 4, hi=4), st.data())
def test_matmul_matches_numpy(a: tuple[int, ...], b: tuple[int, ...], data: st.DataObject) -> None:
    if len(a) >= 1 and len(b) >= 2 and data.draw(st.booleans()):
        b = (*b[:-2], a[-1], b[-1])  # make the contraction agree more often
    against_numpy(data, "matmul", [a, b], {}, np.matmul)


@SETTINGS
@given(small_shape(1, 3, hi=4), st.integers(1, 4), st.integers(1, 4), st.data())
def test_dense_matches_numpy(x: tuple[int, ...], units: int, k: int, data: st.DataObject) -> None:
    if data.draw(st.booleans()):
        k = x[-1]
    against_numpy(data, "dense", [x, (units, k)], {}, lambda a, w: np.matmul(a, w.T))


@SETTINGS
@given(
    st.tuples(st.integers(1, 3), st.integers(1, 4), st.integers(1, 4)),
    st.tuples(st.integers(1, 3), st.integers(1, 4), st.integers(1, 4)),
    st.booleans(),
    st.data(),
)
def test_batch_matmul_matches_numpy(x: Any, y: Any, tb: bool, data: st.DataObject) -> None:
    def ref(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.matmul(a, b.transpose(0, 2, 1) if tb else b)

    against_numpy(data, "batch_matmul", [x, y], {"transpose_b": tb}, ref)
