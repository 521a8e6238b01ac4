"""symshape.torch.convert.linalg against torch: matmul, @, mm, bmm, mv, F.linear, addmm, baddbmm, einsum."""

from __future__ import annotations

import os
from typing import Any

import pytest
import torch
import torch.nn.functional as F

import symshape as ss
import symshape.torch as sst
from torch_zoo.oracle import check_fn, fn_module, types_of

CASES: list[tuple[str, Any, dict[str, Any]]] = [
    ("matmul_2d", torch.matmul, {"x": (("b", "k"), "float32"), "y": (("k", 5), "float32")}),
    ("matmul_op", lambda x, y: x @ y, {"x": (("b", "t", "k"), "float32"), "y": (("k", 5), "float32")}),
    (
        "matmul_batch_broadcast",
        lambda x, y: x @ y,
        {"x": (("b", 1, "t", 4), "float32"), "y": ((3, 4, "t"), "float32")},
    ),
    ("matmul_1d", lambda x, y: x @ y, {"x": (("k",), "float32"), "y": (("k", 5), "float32")}),
    ("matmul_vec", lambda x, y: torch.matmul(x, y), {"x": (("b", "k"), "float32"), "y": (("k",), "float32")}),
    ("mm", torch.mm, {"x": (("b", "k"), "float32"), "y": (("k", 5), "float32")}),
    ("mv", torch.mv, {"x": (("b", "k"), "float32"), "y": (("k",), "float32")}),
    ("bmm", torch.bmm, {"x": (("b", "t", "k"), "float32"), "y": (("b", "k", 5), "float32")}),
    ("linear", lambda x, w: F.linear(x, w), {"x": (("b", "t", 4), "float32"), "y": ((6, 4), "float32")}),
    ("linear_1d", lambda x, w: F.linear(x, w), {"x": ((4,), "float32"), "y": ((6, 4), "float32")}),
    (
        "addmm",
        lambda x, y: torch.addmm(y[:, 0], x, y.T),
        {"x": (("b", 4), "float32"), "y": ((6, 4), "float32")},
    ),
    (
        "baddbmm",
        lambda x, y: torch.baddbmm(x, x, y),
        {"x": (("b", 3, 3), "float32"), "y": (("b", 3, 3), "float32")},
    ),
]


@pytest.mark.parametrize("name, fn, specs", CASES, ids=[c[0] for c in CASES])
def test_products(name: str, fn: Any, specs: dict[str, Any]) -> None:
    check_fn(fn_module(fn, len(specs)), specs, [{"b": 2, "t": 3, "k": 4}, {"b": 1, "t": 1, "k": 1}])


def test_linear_with_bias() -> None:
    specs = {"x": (("b", 4), "float32"), "y": ((6, 4), "float32"), "z": ((6,), "float32")}
    check_fn(fn_module(lambda x, w, b: F.linear(x, w, b), 3), specs, [{"b": 2}])


@pytest.mark.parametrize(
    "fn, specs, code",
    [
        (lambda x, y: x @ y, {"x": (("b", 4), "float32"), "y": ((5, 6), "float32")}, "shape-mismatch"),
        (torch.bmm, {"x": (("b", 3, 4), "float32"), "y": ((4, 5), "float32")}, "rank-mismatch"),
        (
            lambda x, w, b: F.linear(x, w, b),
            {"x": (("b", 4), "float32"), "y": ((6, 4), "float32"), "z": ((5,), "float32")},
            "shape-mismatch",
        ),
    ],
)
def test_errors(fn: Any, specs: dict[str, Any], code: str) -> None:
    res = sst.infer(fn_module(fn, len(specs)), types_of(specs))
    assert res.status == "error"
    assert res.errors[0].code == code
    span = res.errors[0].span
    assert span is not None and span.file.startswith(os.path.dirname(os.path.dirname(__file__)))


def test_inner_dimension_symbols_meet() -> None:
    """``(b, k) @ (m, 5)`` with two symbols is well typed when ``k == m``: a guard."""
    res = sst.infer(
        fn_module(lambda x, y: x @ y, 2), types_of({"x": (("b", "k"), "float32"), "y": (("m", 5), "float32")})
    )
    assert res.ok
    out = next(n for n in res.fx_graph.nodes if n.op == "call_function")
    assert res.type_of(out).dims[1] == ss.dim("m") * 0 + 5


QK = {"x": (("b", "h", "t", 4), "float32"), "y": (("b", "h", "s", 4), "float32")}
QK_SIZES = [{"b": 2, "h": 3, "t": 5, "s": 2}, {"b": 1, "h": 1, "t": 1, "s": 4}]
EINSUMS = [
    lambda x, y: torch.einsum("bhqd,bhkd->bhqk", x, y),
    lambda x, y: torch.einsum("bhqd,bhkd", x, y),  # implicit output: the labels used once, sorted
    lambda x, y: torch.einsum("bhtd->bthd", x),
    lambda x, y: torch.einsum("bhtd->", x),
    lambda x, y: torch.einsum("b h t d, b h s d -> b s", [x, y]),
    lambda x, y: torch.einsum("bhts,bhsd->bhtd", torch.einsum("bhtd,bhsd->bhts", x, y).softmax(-1), y),
    lambda x, y: torch.einsum("bhtd,d->bht", x, y[0, 0, 0]),
    lambda x, y: torch.einsum("bhtd,bhsd->bhts", x, y[:, :1]),  # a size-1 label broadcasts
]


@pytest.mark.parametrize("fn", EINSUMS, ids=[f"e{i}" for i in range(len(EINSUMS))])
def test_einsum(fn: Any) -> None:
    check_fn(fn_module(fn, 2), QK, QK_SIZES)


def test_einsum_mismatched_label_is_an_error_at_the_call() -> None:
    res = sst.infer(fn_module(lambda x, y: torch.einsum("bhqd,bhkd->bhqk", x, y[..., :3]), 2), types_of(QK))
    assert res.status == "error"
    assert res.errors[0].code == "not-broadcastable"
    assert res.errors[0].span is not None and res.errors[0].span.file == __file__


def test_einsum_with_an_ellipsis_is_unsupported() -> None:
    res = sst.infer(fn_module(lambda x, y: torch.einsum("...d,...d->...", x, y), 2), types_of(QK))
    assert [d.code for d in res.errors] == ["unsupported-op"]
