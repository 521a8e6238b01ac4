"""Converters of symshape.onnx.ops.rnn, against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest
from onnx_helpers import Case, In, check_node, node

F = "float32"


def w(*shape: int) -> np.ndarray:
    return np.random.default_rng(0).standard_normal(shape).astype(np.float32)


CASES = [
    Case(
        "lstm_bidirectional",
        node("LSTM", ["x", "w", "r"], ["y", "h", "c"], hidden_size=5, direction="bidirectional"),
        [In("x", F, ("s", "b", 3))],
        ["Tensor[(s, 2, b, 5), float32]", "Tensor[(2, b, 5), float32]", "Tensor[(2, b, 5), float32]"],
        [{"s": 4, "b": 2}],
        inits={"w": w(2, 20, 3), "r": w(2, 20, 5)},
        runner="onnxruntime",
    ),
    Case(
        "gru_hidden_from_weight",
        node("GRU", ["x", "w", "r"], ["y", "h"]),
        [In("x", F, ("s", "b", 3))],
        ["Tensor[(s, 1, b, 4), float32]", "Tensor[(1, b, 4), float32]"],
        [{"s": 3, "b": 2}],
        inits={"w": w(1, 12, 3), "r": w(1, 12, 4)},
    ),
    Case(
        "rnn_layout1",
        node("RNN", ["x", "w", "r"], ["y", "h"], hidden_size=4, layout=1),
        [In("x", F, ("b", "s", 3))],
        ["Tensor[(b, s, 1, 4), float32]", "Tensor[(b, 1, 4), float32]"],
        [{"s": 3, "b": 2}],
        inits={"w": w(1, 4, 3), "r": w(1, 4, 4)},
    ),
    Case(
        "lstm_only_last",
        node("LSTM", ["x", "w", "r"], ["", "h"], hidden_size=2),
        [In("x", F, ("s", "b", 3))],
        ["Tensor[(1, b, 2), float32]"],
        [{"s": 2, "b": 3}],
        inits={"w": w(1, 8, 3), "r": w(1, 8, 2)},
        runner="onnxruntime",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_rnn(case: Case) -> None:
    check_node(case)
