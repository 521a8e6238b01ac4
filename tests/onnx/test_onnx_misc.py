"""Converters of symshape.onnx.ops.misc (quantization, generators, windows, losses, fused
operators), against onnx's reference evaluator."""

from __future__ import annotations

import numpy as np
import pytest
from onnx_helpers import Case, In, check_node, node

F = "float32"


def idx(hi: int):
    return lambda s, r: r.integers(0, hi, s).astype(np.int64)


CASES = [
    Case(
        "quantize_zero_point",
        node("QuantizeLinear", ["x", "s", "z"], ["y"]),
        [In("x", F, ("n", 3))],
        ["Tensor[(n, 3), int8]"],
        [{"n": 2}],
        inits={"s": np.float32(0.5), "z": np.int8(0)},
    ),
    Case(
        "quantize_default_uint8",
        node("QuantizeLinear", ["x", "s"], ["y"]),
        [In("x", F, ("n",))],
        ["Tensor[(n,), uint8]"],
        [{"n": 2}],
        inits={"s": np.float32(0.5)},
    ),
    Case(
        "dequantize",
        node("DequantizeLinear", ["x", "s"], ["y"]),
        [In("x", "uint8", ("n", 2))],
        ["Tensor[(n, 2), float16]"],
        [{"n": 3}],
        inits={"s": np.float16(0.5)},
        opset=19,
    ),
    Case(
        "dynamic_quantize",
        node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"]),
        [In("x", F, ("n", 3))],
        ["Tensor[(n, 3), uint8]", "Tensor[(), float32]", "Tensor[(), uint8]"],
        [{"n": 2}],
    ),
    Case(
        "random_like",
        node("RandomUniformLike", ["x"], ["y"], dtype=11),
        [In("x", F, ("n", 2))],
        ["Tensor[(n, 2), float64]"],
        [{"n": 3}],
    ),
    Case(
        "random_normal", node("RandomNormal", [], ["y"], shape=[2, 3]), [], ["Tensor[(2, 3), float32]"], [{}]
    ),
    Case(
        "bernoulli",
        node("Bernoulli", ["x"], ["y"]),
        [In("x", F, ("n",), data=lambda s, r: r.random(s).astype(np.float32))],
        ["Tensor[(n,), float32]"],
        [{"n": 4}],
        opset=15,
    ),
    Case(
        "multinomial",
        node("Multinomial", ["x"], ["y"], sample_size=5),
        [In("x", F, ("b", 3))],
        ["Tensor[(b, 5), int32]"],
        [{"b": 2}],
        runner="onnxruntime",
    ),
    Case(
        "hann_window",
        node("HannWindow", ["n"], ["y"]),
        [],
        ["Tensor[(10,), float32]"],
        [{}],
        inits={"n": np.array(10, np.int64)},
    ),
    Case(
        "mel_weight_matrix",
        node("MelWeightMatrix", ["m", "d", "r", "lo", "hi"], ["y"]),
        [],
        ["Tensor[(9, 4), float32]"],
        [{}],
        inits={
            "m": np.array(4, np.int64),
            "d": np.array(16, np.int64),
            "r": np.array(8000, np.int64),
            "lo": np.float32(0),
            "hi": np.float32(4000),
        },
    ),
    Case(
        "nll_none",
        node("NegativeLogLikelihoodLoss", ["x", "t"], ["y"], reduction="none"),
        [In("x", F, ("n", 5, "d")), In("t", "int64", ("n", "d"), data=idx(5))],
        ["Tensor[(n, d), float32]"],
        [{"n": 2, "d": 3}],
    ),
    Case(
        "sce_mean_log_prob",
        node("SoftmaxCrossEntropyLoss", ["x", "t"], ["y", "lp"]),
        [In("x", F, ("n", 5)), In("t", "int64", ("n",), data=idx(5))],
        ["Tensor[(), float32]", "Tensor[(n, 5), float32]"],
        [{"n": 3}],
    ),
    Case(
        "rotary",
        node("RotaryEmbedding", ["x", "c", "s", "p"], ["y"]),
        [
            In("x", F, ("b", 2, "s", 4)),
            In("c", F, (8, 2)),
            In("s", F, (8, 2)),
            In("p", "int64", ("b", "s"), data=idx(8)),
        ],
        ["Tensor[(b, 2, s, 4), float32]"],
        [{"b": 1, "s": 3}],
        opset=23,
    ),
    Case(
        "causal_conv_state",
        node("CausalConvWithState", ["x", "w"], ["y", "st"]),
        [In("x", F, ("b", 4, "l"))],
        ["Tensor[(b, 4, l), float32]", "Tensor[(b, 4, 2), float32]"],
        [],
        inits={"w": np.ones((4, 1, 3), np.float32)},
        opset=27,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_misc(case: Case) -> None:
    check_node(case)
