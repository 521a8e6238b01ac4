"""Converters of symshape.onnx.ops.linalg, against onnx's reference evaluator."""

from __future__ import annotations

import numpy as np
import pytest
from onnx_helpers import Case, In, check_node, infer_node, node

import symshape.onnx as sso

F = "float32"

CASES = [
    Case(
        "matmul_batched",
        node("MatMul", ["a", "b"], ["y"]),
        [In("a", F, ("n", "s", 8)), In("b", F, (8, 4))],
        ["Tensor[(n, s, 4), float32]"],
        [{"n": 2, "s": 3}],
    ),
    Case(
        "matmul_vector",
        node("MatMul", ["a", "b"], ["y"]),
        [In("a", F, ("k",)), In("b", F, ("n", "k", 3))],
        ["Tensor[(n, 3), float32]"],
        [{"n": 2, "k": 4}],
    ),
    Case(
        "gemm_trans",
        node("Gemm", ["a", "b", "c"], ["y"], transA=1, transB=1),
        [In("a", F, (8, "m")), In("b", F, (4, 8))],
        ["Tensor[(m, 4), float32]"],
        [{"m": 3}],
        inits={"c": np.ones(4, np.float32)},
    ),
    Case(
        "gemm_no_c",
        node("Gemm", ["a", "b"], ["y"]),
        [In("a", F, ("m", 8)), In("b", F, (8, 4))],
        ["Tensor[(m, 4), float32]"],
        [{"m": 3}],
    ),
    Case(
        "matmul_integer",
        node("MatMulInteger", ["a", "b"], ["y"]),
        [In("a", "uint8", ("m", 4)), In("b", "int8", (4, 2))],
        ["Tensor[(m, 2), int32]"],
        [{"m": 3}],
        runner="onnxruntime",
    ),
    Case("det", node("Det", ["x"], ["y"]), [In("x", F, ("n", 3, 3))], ["Tensor[(n,), float32]"], [{"n": 2}]),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_linalg(case: Case) -> None:
    check_node(case)


def test_gemm_c_must_broadcast_one_way() -> None:
    res = infer_node(
        node("Gemm", ["a", "b", "c"], ["y"]), [In("a", F, (3, 8)), In("b", F, (8, 4)), In("c", F, (2, 3, 4))]
    )
    assert res.status == "error"


def test_matmul_inner_mismatch() -> None:
    res = infer_node(node("MatMul", ["a", "b"], ["y"], name="mm"), [In("a", F, ("n", 8)), In("b", F, (7, 4))])
    assert res.status == "error" and str(res.errors[0].span) == "test: node 'mm' (MatMul)"


def test_einsum_needs_a_core_op() -> None:
    res = infer_node(
        node("Einsum", ["a", "b"], ["y"], equation="ij,jk->ik"), [In("a", F, (2, 3)), In("b", F, (3, 4))]
    )
    assert res.unsupported[0][0].key == "core-op"
    assert "Einsum" not in sso.supported_ops()
