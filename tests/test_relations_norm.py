"""softmax, bias_add, layer_norm, batch_norm: tables + numpy properties."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import symshape as ss
from test_relations_common import against_numpy, check_row, rows, run, small_shape

TABLE: list[tuple[Any, ...]] = [
    ("softmax", ["Tensor[(n, 10), float32]"], {"axis": -1}, "Tensor[(n, 10), float32]"),
    ("softmax", ["Tensor[(n, 10), float32]"], {"axis": 2}, "!axis-out-of-range"),
    ("softmax", ["Tensor[?, float32]"], {"axis": 2}, "Tensor[?, float32]"),
    (
        "bias_add",
        ["Tensor[(n, c, h, w), float32]", "?"],
        {"axis": 1},
        "Tensor[(n, c, h, w), float32]",
        [],
        ["Tensor[(n, c, h, w), float32]", "Tensor[(c,), float32]"],
    ),
    (
        "bias_add",
        ["Tensor[(n, h, w, c), float32]", "?"],
        {"axis": -1},
        "Tensor[(n, h, w, c), float32]",
        [],
        ["Tensor[(n, h, w, c), float32]", "Tensor[(c,), float32]"],
    ),
    ("bias_add", ["Tensor[(n, 8), float32]", "Tensor[(4,), float32]"], {"axis": 1}, "!shape-mismatch"),
    (
        "bias_add",
        ["Tensor[(n, 8), float32]", "Tensor[(m,), float32]"],
        {"axis": 1},
        "Tensor[(n, 8), float32]",
        ["m == 8"],
    ),
    ("bias_add", ["Tensor[(n, 8), float32]", "Tensor[(8, 1), float32]"], {"axis": 1}, "!rank-mismatch"),
    ("bias_add", ["Tensor[(n, 8), float32]", "?"], {"axis": 2}, "!axis-out-of-range"),
    (
        "layer_norm",
        ["Tensor[(b, t, 64), float32]", "?", "?"],
        {"axis": -1},
        "Tensor[(b, t, 64), float32]",
        [],
        ["Tensor[(b, t, 64), float32]", "Tensor[(64,), float32]", "Tensor[(64,), float32]"],
    ),
    (
        "layer_norm",
        ["Tensor[(b, t, 64), float32]", "Tensor[(32,), float32]", "?"],
        {"axis": -1},
        "!shape-mismatch",
    ),
]


@rows(TABLE)
def test_norm_table(row: tuple[Any, ...]) -> None:
    check_row(*row)


def test_batch_norm_gives_a_tuple_and_infers_parameters() -> None:
    holes = [ss.IncompleteType() for _ in range(4)]
    sol, outs, ins = run("batch_norm", ["Tensor[(n, c, h, w), float32]", *holes], {"axis": 1})
    assert sol.status == "ok"
    assert str(outs[0]) == "(Tensor[(n, c, h, w), float32], Tensor[(c,), float32], Tensor[(c,), float32])"
    assert all(str(t) == "Tensor[(c,), float32]" for t in ins[1:])
    sol, _, _ = run("batch_norm", ["Tensor[(n, 3, h, w), float32]", "Tensor[(4,), float32]", *holes[:3]], {})
    assert sol.status == "error" and sol.errors[0].code == "shape-mismatch"


SETTINGS = settings(max_examples=40, deadline=None)


@SETTINGS
@given(small_shape(1, 4), st.integers(-5, 4), st.integers(1, 6), st.data())
def test_bias_add_matches_numpy(shape: tuple[int, ...], axis: int, c: int, data: st.DataObject) -> None:
    if data.draw(st.booleans()) and -len(shape) <= axis < len(shape):
        c = shape[axis]

    def ref(x: np.ndarray, b: np.ndarray) -> np.ndarray:
        if not -x.ndim <= axis < x.ndim or b.shape != (x.shape[axis],):
            raise ValueError
        ax = axis % x.ndim
        return x + b.reshape([-1 if i == ax else 1 for i in range(x.ndim)])

    against_numpy(data, "bias_add", [shape, (c,)], {"axis": axis}, ref)


@SETTINGS
@given(small_shape(1, 4), st.integers(-5, 4), st.data())
def test_softmax_matches_numpy(shape: tuple[int, ...], axis: int, data: st.DataObject) -> None:
    def ref(x: np.ndarray) -> np.ndarray:
        e = np.exp(x - np.max(x, axis=axis, keepdims=True)) if x.size else np.sum(x, axis=axis, keepdims=True)
        return np.broadcast_to(e, x.shape)

    against_numpy(data, "softmax", [shape], {"axis": axis}, ref)
