"""take and strided_slice: tables + numpy properties."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from test_relations_common import against_numpy, check_row, rows, small_shape

TABLE: list[tuple[Any, ...]] = [
    (
        "take",
        ["Tensor[(n, m, 5), float32]", "Tensor[(3, 4), int32]"],
        {"axis": 1},
        "Tensor[(n, 3, 4, 5), float32]",
    ),
    (
        "take",
        ["Tensor[(n, m, 5), float32]", "Tensor[(k,), int64]"],
        {"axis": -1},
        "Tensor[(n, m, k), float32]",
    ),
    ("take", ["Tensor[(n, m, 5), float32]", "Tensor[(3, 4), int32]"], {}, "Tensor[(3, 4), float32]"),
    ("take", ["Tensor[(n, m, 5), float32]", "Tensor[(3, 4), float32]"], {"axis": 1}, "!dtype-mismatch"),
    ("take", ["Tensor[(n, m, 5), float32]", "Tensor[(3,), int32]"], {"axis": 3}, "!axis-out-of-range"),
    (
        "take",
        ["Tensor[(b, m, 5), float32]", "Tensor[(b, 2), int32]"],
        {"axis": 1, "batch_dims": 1},
        "Tensor[(b, 2, 5), float32]",
    ),
    (
        "take",
        ["Tensor[(n, m, 5), float32]", "Tensor[(b, 2), int32]"],
        {"axis": 1, "batch_dims": 1},
        "Tensor[(n, 2, 5), float32]",
        ["n == b"],
    ),
    ("take", ["Tensor[?, float32]", "Tensor[(3,), int32]"], {"axis": 0}, "Tensor[?, float32]"),
    # strided_slice: numpy semantics, exact symbolic formulas
    (
        "strided_slice",
        ["Tensor[(n, m, 5), float32]"],
        {"begin": (1, 0), "end": (-1, 2**40), "strides": (1, 2)},
        "Tensor[(max(0, n - 2), (m + 1)//2, 5), float32]",
    ),
    (
        "strided_slice",
        ["Tensor[(n, 5), float32]"],
        {"begin": (None,), "end": (None,), "strides": (-1,)},
        "Tensor[(n, 5), float32]",
    ),
    (
        "strided_slice",
        ["Tensor[(n, 5), float32]"],
        {"begin": (3,), "end": (1,), "strides": (-1,), "axes": (1,)},
        "Tensor[(n, 2), float32]",
    ),
    (
        "strided_slice",
        ["Tensor[(n, 5), float32]"],
        {"begin": (0,), "end": (2,)},
        "Tensor[(min(2, n), 5), float32]",
    ),
    (
        "strided_slice",
        ["Tensor[(n, 5), float32]"],
        {"begin": (3,), "end": (1,), "axes": (1,)},
        "Tensor[(n, 0), float32]",
    ),
    (
        "strided_slice",
        ["Tensor[(n, 5), float32]"],
        {"begin": (1,), "end": (2,), "axes": (-1,), "slice_mode": "size"},
        "Tensor[(n, 2), float32]",
    ),
    (
        "strided_slice",
        ["Tensor[(n, 5), float32]"],
        {"begin": (1,), "end": (-1,), "axes": (1,), "slice_mode": "size"},
        "Tensor[(n, 4), float32]",
    ),
    (
        "strided_slice",
        ["Tensor[(n, 5), float32]"],
        {"begin": (0, 0, 0), "end": (1, 1, 1)},
        "!axis-out-of-range",
    ),
    (
        "strided_slice",
        ["Tensor[(n, 5), float32]"],
        {"begin": (0,), "end": (1,), "strides": (0,)},
        "!bad-attribute",
    ),
    ("strided_slice", ["Tensor[(n, 5), float32]"], {"begin": (0,), "end": (1, 2)}, "!bad-attribute"),
    (
        "strided_slice",
        ["Tensor[(n, 5), float32]"],
        {"begin": (0,), "end": (1,), "axes": (2,)},
        "!axis-out-of-range",
    ),
]


@rows(TABLE)
def test_index_table(row: tuple[Any, ...]) -> None:
    check_row(*row)


SETTINGS = settings(max_examples=50, deadline=None)


@SETTINGS
@given(small_shape(1, 3), small_shape(0, 2), st.data())
def test_take_matches_numpy(shape: tuple[int, ...], ind: tuple[int, ...], data: st.DataObject) -> None:
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape) - 1, len(shape))))
    against_numpy(
        data,
        "take",
        [shape, ind],
        {"axis": axis},
        lambda x, i: np.take(x, np.zeros(i.shape, dtype="int64"), axis=axis),
        dtypes=["float32", "int32"],
    )


INDEX = st.one_of(st.none(), st.integers(-8, 8))


@SETTINGS
@given(small_shape(1, 3), st.data())
def test_strided_slice_matches_numpy(shape: tuple[int, ...], data: st.DataObject) -> None:
    k = data.draw(st.integers(1, len(shape)))
    begin = tuple(data.draw(INDEX) for _ in range(k))
    end = tuple(data.draw(INDEX) for _ in range(k))
    strides = tuple(data.draw(st.sampled_from([1, 1, 2, 3, -1, -2])) for _ in range(k))

    def ref(x: np.ndarray) -> np.ndarray:
        return x[tuple(slice(b, e, s) for b, e, s in zip(begin, end, strides))]

    against_numpy(data, "strided_slice", [shape], {"begin": begin, "end": end, "strides": strides}, ref)


@SETTINGS
@given(small_shape(1, 3), st.data())
def test_strided_slice_axes_and_size_mode_match_numpy(shape: tuple[int, ...], data: st.DataObject) -> None:
    r = len(shape)
    ax = data.draw(st.integers(-r, r - 1))
    b = data.draw(st.integers(-6, 6))
    size = data.draw(st.integers(-1, 6))

    def ref(x: np.ndarray) -> np.ndarray:
        # size mode: end = begin + size (size < 0: to the end), on the canonical (non-negative) begin
        d = x.shape[ax]
        start = min(max(b + d if b < 0 else b, 0), d)
        stop = d if size < 0 else min(start + size, d)
        idx = [slice(None)] * x.ndim
        idx[ax] = slice(start, stop)
        return x[tuple(idx)]

    against_numpy(
        data,
        "strided_slice",
        [shape],
        {"begin": (b,), "end": (size,), "axes": (ax,), "slice_mode": "size"},
        ref,
    )
