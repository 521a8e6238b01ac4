"""Converters of symshape.onnx.ops.attention, against onnx's reference evaluator."""

from __future__ import annotations

import pytest
from onnx_helpers import Case, In, check_node, node

F = "float32"

CASES = [
    Case(
        "mha_4d",
        node("Attention", ["q", "k", "v"], ["y"]),
        [In("q", F, ("b", 4, "s", 8)), In("k", F, ("b", 4, "l", 8)), In("v", F, ("b", 4, "l", 6))],
        ["Tensor[(b, 4, s, 6), float32]"],
        [{"b": 2, "s": 3, "l": 5}],
        opset=23,
    ),
    Case(
        "gqa_cache",
        node("Attention", ["q", "k", "v", "", "pk", "pv"], ["y", "k2", "v2", "qk"]),
        [
            In("q", F, ("b", 4, "s", 8)),
            In("k", F, ("b", 2, "s", 8)),
            In("v", F, ("b", 2, "s", 8)),
            In("pk", F, ("b", 2, "p", 8)),
            In("pv", F, ("b", 2, "p", 8)),
        ],
        [
            "Tensor[(b, 4, s, 8), float32]",
            "Tensor[(b, 2, p + s, 8), float32]",
            "Tensor[(b, 2, p + s, 8), float32]",
            "Tensor[(b, 4, s, p + s), float32]",
        ],
        [{"b": 1, "s": 2, "p": 3}],
        opset=23,
    ),
    Case(
        "mha_3d",
        node("Attention", ["q", "k", "v"], ["y"], q_num_heads=2, kv_num_heads=2),
        [In("q", F, ("b", "s", 8)), In("k", F, ("b", "l", 8)), In("v", F, ("b", "l", 6))],
        ["Tensor[(b, s, 6), float32]"],
        [{"b": 2, "s": 3, "l": 4}],
        opset=23,
    ),
    Case(
        "linear_gqa_past",
        node(
            "LinearAttention",
            ["q", "k", "v", "p"],
            ["y", "st"],
            q_num_heads=4,
            kv_num_heads=2,
            update_rule="linear",
        ),
        [
            In("q", F, ("b", "t", 4 * 3)),
            In("k", F, ("b", "t", 2 * 3)),
            In("v", F, ("b", "t", 2 * 5)),
            In("p", F, ("b", 2, 3, 5)),
        ],
        ["Tensor[(b, t, 20), float32]", "Tensor[(b, 2, 3, 5), float32]"],
        [{"b": 1, "t": 1}, {"b": 2, "t": 3}],
        opset=27,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_attention(case: Case) -> None:
    check_node(case)
