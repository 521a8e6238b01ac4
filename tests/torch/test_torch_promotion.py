"""torch's type promotion in the importer (symshape.torch.convert.promotion) against torch:
``result_dtype`` against ``torch.result_type`` for every pair of dtypes and kinds of operand, and
arithmetic and comparisons of mixed dtypes, every node's dtype compared with eager torch."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
import torch

from symshape.torch.convert.promotion import result_dtype
from torch_zoo.oracle import check_fn, fn_module

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


def _operand(dt: str, rank: int) -> Any:
    """A torch operand of ``dt``: rank 2 a dimensioned tensor, 1 a 0-d tensor, 0 a Python scalar."""
    t = torch.ones((2,) if rank == 2 else (), dtype=getattr(torch, dt))
    if rank == 0:
        return t.item() if dt != "bool" else True
    return t


@pytest.mark.parametrize("ranks", [(2, 2), (2, 1), (2, 0), (1, 1), (1, 0)])
def test_result_dtype_is_torchs(ranks: tuple[int, int]) -> None:
    misses = []
    for a, b in itertools.product(DTYPES, repeat=2):
        if ranks[1] == 0 and b not in ("bool", "int64", "float32"):
            continue  # Python scalars are bool, int or float
        want = str(torch.result_type(_operand(a, ranks[0]), _operand(b, ranks[1]))).removeprefix("torch.")
        got = result_dtype([(a, ranks[0]), (b, ranks[1])])
        if got != want:
            misses.append(f"{a}/{ranks[0]} with {b}/{ranks[1]}: {got}, torch {want}")
    assert misses == []


MIXED = [
    (lambda x, y: x * 0.5, "int64"),
    (lambda x, y: 1.0 - x, "int64"),
    (lambda x, y: x / 2, "int64"),
    (lambda x, y: x / y, "int64"),
    (lambda x, y: x.float() + x, "int64"),
    (lambda x, y: (x > 0) + 1, "int64"),
    (lambda x, y: x // 2 + x % 3, "int64"),
    (lambda x, y: (x > 1) & (x < 3), "int64"),
    (lambda x, y: x + y.sum(), "int32"),
    (lambda x, y: x.half() * y.double().sum(), "int64"),
    (lambda x, y: x.half() + y.double(), "int64"),
    (lambda x, y: x.to(torch.uint8) + y.to(torch.int8), "int64"),
    (lambda x, y: x.bool() * 3, "int64"),
    (lambda x, y: x.float() ** 2 + y, "int64"),
    (lambda x, y: x < 2.5, "int32"),
]


@pytest.mark.parametrize("fn,dt", MIXED, ids=[f"m{i}" for i in range(len(MIXED))])
def test_mixed_dtypes_match_torch(fn: Any, dt: str) -> None:
    specs = {"x": (("b", 4), dt), "y": (("b", 4), "int64")}
    check_fn(fn_module(fn, 2), specs, [{"b": 2}, {"b": 3}])
