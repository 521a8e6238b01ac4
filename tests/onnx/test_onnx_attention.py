"""Converters of symshape.onnx.ops.attention, against onnx's reference evaluator."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from onnx_helpers import Case, In, check_node, make_model, node, reference, symbols_of

import symshape.onnx as sso

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


def test_flex_attention_gqa() -> None:
    """``ai.onnx.preview.FlexAttention``, symbolic, against the reference evaluator."""
    ins = [In("q", F, ("b", 4, "s", 8)), In("k", F, ("b", 2, "l", 8)), In("v", F, ("b", 2, "l", 6))]
    m = make_model(
        [helper.make_node("FlexAttention", ["q", "k", "v"], ["y"], domain="ai.onnx.preview")],
        ins,
        ["y"],
        opset=26,
        extra_opsets={"ai.onnx.preview": 1},
    )
    res = sso.infer(m, dims=symbols_of(ins))
    assert res.status == "ok", res.report()
    assert str(res.type_of("y")) == "Tensor[(b, 4, s, 6), float32]"
    rng = np.random.default_rng(0)
    feeds = {
        i.name: rng.standard_normal([{"b": 2, "s": 3, "l": 5}.get(d, d) for d in i.shape]).astype(F)
        for i in ins
    }
    (y,) = reference(m, feeds)
    assert y.shape == (2, 4, 3, 6)
