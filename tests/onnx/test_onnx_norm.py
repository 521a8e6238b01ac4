"""Converters of symshape.onnx.ops.norm, against onnx's reference evaluator."""

from __future__ import annotations

import numpy as np
import pytest
from onnx_helpers import Case, In, check_node, infer_node, node

F = "float32"


def v(*shape: int) -> np.ndarray:
    return np.ones(shape, np.float32)


CASES = [
    Case(
        "batch_norm",
        node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"]),
        [In("x", F, ("n", 3, "h", "w"))],
        ["Tensor[(n, 3, h, w), float32]"],
        [{"n": 2, "h": 2, "w": 3}],
        inits={"s": v(3), "b": v(3), "m": v(3), "v": v(3)},
    ),
    Case(
        "batch_norm_training",
        node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"], training_mode=1),
        [In("x", F, ("n", 3, "l"))],
        ["Tensor[(n, 3, l), float32]", "Tensor[(3,), float32]", "Tensor[(3,), float32]"],
        [{"n": 2, "l": 4}],
        inits={"s": v(3), "b": v(3), "m": v(3), "v": v(3)},
        opset=15,
    ),
    Case(
        "instance_norm",
        node("InstanceNormalization", ["x", "s", "b"], ["y"]),
        [In("x", F, ("n", 2, "l"))],
        ["Tensor[(n, 2, l), float32]"],
        [{"n": 2, "l": 3}],
        inits={"s": v(2), "b": v(2)},
    ),
    Case(
        "layer_norm_stats",
        node("LayerNormalization", ["x", "s", "b"], ["y", "mean", "inv"], axis=1),
        [In("x", F, ("n", "s", 8))],
        ["Tensor[(n, s, 8), float32]", "Tensor[(n, 1, 1), float32]", "Tensor[(n, 1, 1), float32]"],
        [{"n": 2, "s": 3}],
        inits={"s": v(8), "b": v(8)},
    ),
    Case(
        "layer_norm_negative_axis",
        node("LayerNormalization", ["x", "s"], ["y", "mean"], axis=-2),
        [In("x", F, ("n", "s", 8))],
        ["Tensor[(n, s, 8), float32]", "Tensor[(n, 1, 1), float32]"],
        [{"n": 2, "s": 3}],
        inits={"s": v(1, 8)},
    ),
    Case(
        "group_norm",
        node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2),
        [In("x", F, ("n", 4, "l"))],
        ["Tensor[(n, 4, l), float32]"],
        [{"n": 2, "l": 3}],
        inits={"s": v(4), "b": v(4)},
        opset=21,
    ),
    Case(
        "rms_norm",
        node("RMSNormalization", ["x", "s"], ["y"]),
        [In("x", F, ("n", 8))],
        ["Tensor[(n, 8), float32]"],
        [{"n": 2}],
        inits={"s": v(8)},
        opset=23,
    ),
    Case(
        "softmax_v13",
        node("Softmax", ["x"], ["y"]),
        [In("x", F, ("n", "s"))],
        ["Tensor[(n, s), float32]"],
        [{"n": 2, "s": 3}],
    ),
    Case(
        "log_softmax_v11_axis",
        node("LogSoftmax", ["x"], ["y"], axis=1),
        [In("x", F, ("n", 3, 4))],
        ["Tensor[(n, 3, 4), float32]"],
        [{"n": 2}],
        opset=11,
    ),
    Case(
        "hardmax",
        node("Hardmax", ["x"], ["y"], axis=0),
        [In("x", F, ("n", 3))],
        ["Tensor[(n, 3), float32]"],
        [{"n": 2}],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_norm(case: Case) -> None:
    check_node(case)


def test_batch_norm_parameter_size_mismatch() -> None:
    res = infer_node(
        node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], name="bn"),
        [In("x", F, ("n", 3, 4))],
        {"s": v(4), "b": v(3), "m": v(3), "v": v(3)},
    )
    assert res.status == "error"
    assert str(res.errors[0].span) == "test: node 'bn' (BatchNormalization)"
    assert any("initializer 's'" in str(n.span) for n in res.errors[0].notes)


def test_softmax_axis_out_of_range() -> None:
    res = infer_node(node("Softmax", ["x"], ["y"], axis=2), [In("x", F, ("n", 3))])
    assert res.status == "error" and res.errors[0].code == "axis-out-of-range"
