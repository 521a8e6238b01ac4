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


def _einsum(eq: str, ins: list[In], want: str, sizes: list[dict[str, int]]) -> Case:
    names = [i.name for i in ins]
    return Case(f"einsum[{eq}]", node("Einsum", names, ["y"], equation=eq), ins, [want], sizes, opset=12)


EINSUM = [
    _einsum(
        "bij, bjk -> bik",
        [In("a", F, ("b", "i", "j")), In("c", F, ("b", "j", "k"))],
        "Tensor[(b, i, k), float32]",
        [{"b": 2, "i": 3, "j": 4, "k": 5}],
    ),
    _einsum(
        "ij,jk",
        [In("a", F, ("i", "j")), In("c", F, ("j", "k"))],
        "Tensor[(i, k), float32]",
        [{"i": 2, "j": 3, "k": 4}],
    ),
    _einsum("...ii->...i", [In("a", F, ("b", "n", "n"))], "Tensor[(b, n), float32]", [{"b": 2, "n": 3}]),
    _einsum("i,i", [In("a", F, ("n",)), In("c", F, ("n",))], "Tensor[(), float32]", [{"n": 4}]),
    _einsum("ij->ji", [In("a", F, ("i", "j"))], "Tensor[(j, i), float32]", [{"i": 2, "j": 3}]),
    _einsum(
        "...j,jk->...k",
        [In("a", F, ("b", "s", "j")), In("c", F, ("j", "k"))],
        "Tensor[(b, s, k), float32]",
        [{"b": 2, "s": 3, "j": 4, "k": 5}],
    ),
]


@pytest.mark.parametrize("case", EINSUM, ids=str)
def test_einsum(case: Case) -> None:
    check_node(case)
    assert "Einsum" in sso.supported_ops()


def test_einsum_label_mismatch_is_an_error() -> None:
    res = infer_node(
        node("Einsum", ["a", "b"], ["y"], equation="ij,jk->ik"), [In("a", F, (2, 3)), In("b", F, (4, 5))]
    )
    assert res.status == "error"
