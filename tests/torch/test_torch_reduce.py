"""symshape.torch.convert.reduce against torch: reductions over dims and the softmax family."""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torch.nn.functional as F

import symshape.torch as sst
from torch_zoo.oracle import check_fn, fn_module, types_of

X = {"x": (("b", 3, "n"), "float32")}
SIZES = [{"b": 2, "n": 5}, {"b": 1, "n": 1}]

REDUCTIONS = [
    lambda x: x.sum(),
    lambda x: x.sum(1),
    lambda x: x.sum(dim=(1, 2), keepdim=True),
    lambda x: torch.sum(x, -1),
    lambda x: x.mean(-1),
    lambda x: x.mean([0, 2]),
    lambda x: x.mean(dim=1, keepdim=True),
    lambda x: x.prod(2),
    lambda x: x.amax(1),
    lambda x: torch.amin(x, dim=(0, 1)),
    lambda x: x.max(),
    lambda x: x.max(1)[0],
    lambda x: x.max(dim=1, keepdim=True).indices,
    lambda x: torch.min(x, -1).values,
    lambda x: x.argmax(),
    lambda x: x.argmax(dim=2, keepdim=True),
    lambda x: torch.argmin(x, 1),
    lambda x: x.std(1),
    lambda x: x.var(dim=2, keepdim=True),
    lambda x: torch.logsumexp(x, 1),
    lambda x: x.norm(dim=-1),
    lambda x: torch.linalg.vector_norm(x, dim=1, keepdim=True),
    lambda x: (x > 0).all(1),
    lambda x: (x > 0).any(),
    lambda x: x.sum(1, dtype=torch.float64),
    lambda x: torch.max(x, 1),
]


@pytest.mark.parametrize("fn", REDUCTIONS, ids=[f"reduce{i}" for i in range(len(REDUCTIONS))])
def test_reductions(fn: Any) -> None:
    check_fn(fn_module(fn, 1), X, SIZES)


SOFTMAX = [
    lambda x: x.softmax(-1),
    lambda x: F.softmax(x, dim=1),
    lambda x: torch.softmax(x, 0),
    lambda x: F.log_softmax(x, dim=-1),
    lambda x: x.log_softmax(1),
    lambda x: F.softmin(x, dim=2),
    lambda x: F.softmax(x, dim=-1, dtype=torch.float64),
]


@pytest.mark.parametrize("fn", SOFTMAX, ids=[f"softmax{i}" for i in range(len(SOFTMAX))])
def test_softmax(fn: Any) -> None:
    check_fn(fn_module(fn, 1), X, SIZES)


@pytest.mark.parametrize("fn", [lambda x: x.sum(3), lambda x: x.softmax(-4), lambda x: x.max(5)])
def test_axis_out_of_range_is_an_error(fn: Any) -> None:
    res = sst.infer(fn_module(fn, 1), types_of(X))
    assert res.status == "error"
    assert res.errors[0].code == "axis-out-of-range"
    assert res.errors[0].span is not None and res.errors[0].span.file == __file__


def test_softmax_without_dim_is_unsupported() -> None:
    res = sst.infer(fn_module(lambda x: F.softmax(x), 1), types_of(X))
    assert [d.code for d in res.errors] == ["unsupported-op"]
    assert "without dim" in res.errors[0].message
