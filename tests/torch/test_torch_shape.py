"""symshape.torch.convert.shape and .indexing against torch: views, permutations, joins and splits, indexing,
factories; and the ranks the importer cannot know yet."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import symshape as ss
import symshape.torch as sst
from torch_zoo.oracle import check_fn, fn_module, types_of

X = {"x": (("b", 6, "n"), "float32")}
SIZES = [{"b": 2, "n": 4}, {"b": 3, "n": 1}]

VIEWS = [
    lambda x: x.view(x.shape[0], -1),
    lambda x: x.reshape(-1),
    lambda x: x.view(x.size(0), 2, 3, -1),
    lambda x: torch.reshape(x, (x.shape[0], 3, -1)),
    lambda x: x.flatten(),
    lambda x: x.flatten(1),
    lambda x: torch.flatten(x, 0, 1),
    lambda x: x.flatten(1, 2),
    lambda x: x.unflatten(1, (2, 3)),
    lambda x: x.unflatten(1, (-1, 3)),
    lambda x: x.unflatten(1, (2, 1, 3)),
    lambda x: x.view_as(x),
    lambda x: x.permute(2, 0, 1),
    lambda x: x.permute((0, 2, 1)),
    lambda x: x.transpose(0, 2),
    lambda x: x.transpose(-1, -2),
    lambda x: torch.swapaxes(x, 0, 1),
    lambda x: x.mT,
    lambda x: x.sum(0).t(),
    lambda x: x[0].T,
    lambda x: x.unsqueeze(0),
    lambda x: x.unsqueeze(-1),
    lambda x: x[:, :1].squeeze(1),
    lambda x: torch.movedim(x, 0, 2),
    lambda x: x.relu().view(x.shape),
    lambda x: x.relu().view(x.size()),
    lambda x: x.relu().view(x.size(0), -1),
    lambda x: x.relu().flatten(1).transpose(0, 1),
]


@pytest.mark.parametrize("fn", VIEWS, ids=[f"view{i}" for i in range(len(VIEWS))])
def test_views(fn: Any) -> None:
    check_fn(fn_module(fn, 1), X, SIZES)


def test_copied_sizes_of_a_computed_tensor() -> None:
    """``y.view(y.size(0), -1)`` of a computed ``y`` copies the dimension (Relay's 0)."""

    def f(x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(x)
        return y.view(y.size(0), y.size(1), -1)

    res = check_fn(fn_module(f, 1), {"x": (("b", 6, "n", 2), "float32")}, [{"b": 2, "n": 3}])
    b, n = ss.dims("b n")
    assert res.type_of("view") == ss.Tensor((b, 6, 2 * n), "float32")


JOINS = [
    lambda x: torch.cat([x, x], dim=1),
    lambda x: torch.cat((x, x * 2), -1),
    lambda x: torch.stack([x, x]),
    lambda x: torch.stack([x, x], dim=-1),
    lambda x: x.split([2, 4], dim=1)[1],
    lambda x: x.split(2, 1)[2],
    lambda x: torch.split(x, [1, 5], 1)[0],
    lambda x: x.chunk(3, dim=1)[0],
    lambda x: x.relu().chunk(2, 1)[1],
    lambda x: x.unbind(1)[3],
    lambda x: torch.concat([x, x], 0),
    lambda x: x.expand(2, -1, -1, -1),
    lambda x: x[:, :1].expand(-1, 5, -1),
    lambda x: x.relu()[:, :1].expand(-1, 4, -1),
    lambda x: x[:, :1].relu().expand_as(x),
    lambda x: x.repeat(1, 2, 1),
    lambda x: x.repeat(2, 1, 1, 3),
]


@pytest.mark.parametrize("fn", JOINS, ids=[f"join{i}" for i in range(len(JOINS))])
def test_joins_and_splits(fn: Any) -> None:
    check_fn(fn_module(fn, 1), X, SIZES)


INDEXING = [
    lambda x: x[0],
    lambda x: x[:, 1],
    lambda x: x[:, -1],
    lambda x: x[..., 0],
    lambda x: x[..., -1],
    lambda x: x[:, 1:4],
    lambda x: x[:, ::2],
    lambda x: x[:, 1:-1:2],
    lambda x: x[None],
    lambda x: x[:, None],
    lambda x: x[..., None],
    lambda x: x[None, ..., None],
    lambda x: x[0, ..., None, 1:],
    lambda x: x[:, 2:100],
    lambda x: x[1:],
    lambda x: x[:, :, :1],
    lambda x: x.narrow(1, 2, 3),
    lambda x: x.select(1, 2),
    lambda x: torch.select(x, -1, 0),
    lambda x: x.relu()[:, 0, None],
]


@pytest.mark.parametrize("fn", INDEXING, ids=[f"index{i}" for i in range(len(INDEXING))])
def test_indexing(fn: Any) -> None:
    check_fn(fn_module(fn, 1), X, [{"b": 2, "n": 4}, {"b": 3, "n": 2}])


def test_integer_tensor_index() -> None:
    specs = {"x": (("b", 6, "n"), "float32"), "y": (("k",), "int64")}
    check_fn(fn_module(lambda x, i: x[:, i], 2), specs, [{"b": 2, "n": 3, "k": 4}])
    check_fn(fn_module(lambda x, i: torch.index_select(x, 2, i), 2), specs, [{"b": 2, "n": 3, "k": 5}])
    check_fn(fn_module(lambda x, i: x[i], 2), specs, [{"b": 3, "n": 3, "k": 2}])


def test_index_past_a_symbolic_size_is_a_guard() -> None:
    res = sst.infer(fn_module(lambda x: x[:, :, 3], 1), types_of(X))
    assert res.status == "guarded"
    assert all(g.holds({ss.dim("n"): 4}) for g in res.guards)
    assert not all(g.holds({ss.dim("n"): 3}) for g in res.guards)


FACTORIES = [
    lambda x: torch.zeros(2, 3) + x.new_zeros(x.shape[0], 1, 1),
    lambda x: torch.ones(4, dtype=torch.int64),
    lambda x: torch.full((x.size(0), 2), 1.5),
    lambda x: torch.arange(x.shape[2]),
    lambda x: torch.arange(1, x.shape[2] + 3, 2),
    lambda x: torch.arange(0.0, 1.0, 0.25),
    lambda x: torch.tensor([[1, 2], [3, 4]]),
    lambda x: torch.eye(x.shape[1]),
    lambda x: x.new_zeros(2, 3),
    lambda x: x.new_ones((x.shape[0],)),
    lambda x: torch.randn(2, 4),
    lambda x: torch.empty(3),
    lambda x: torch.randint(0, 5, (3, 2)),
    lambda x: x + torch.arange(x.shape[2]).float(),
    lambda x: x.new_full((2, x.shape[2]), 3.0),
    lambda x: x.new_empty(x.shape[:2]),
]


@pytest.mark.parametrize("fn", FACTORIES, ids=[f"factory{i}" for i in range(len(FACTORIES))])
def test_factories(fn: Any) -> None:
    check_fn(fn_module(fn, 1), X, SIZES)


@pytest.mark.parametrize(
    "fn, code",
    [
        (lambda x: x.view(x.shape[0], 5), "reshape-size"),
        (lambda x: x.view(x.shape[0], 5, x.shape[2]), "reshape-size"),
        (lambda x: x.transpose(0, 3), "axis-out-of-range"),
        (lambda x: x.permute(1, 0), "rank-mismatch"),
        (lambda x: torch.cat([x[:, :3], x[:, :2]], dim=0), "shape-mismatch"),
        (lambda x: x.split([2, 3], dim=1)[0], "shape-mismatch"),
        (lambda x: x.narrow(1, 4, 3), "shape-mismatch"),
        (lambda x: x.expand(2, -1, 5, -1), "not-broadcastable"),
        (lambda x: x.relu().expand(-1, 1, -1), "shape-mismatch"),
    ],
)
def test_errors(fn: Any, code: str) -> None:
    res = sst.infer(fn_module(fn, 1), types_of(X))
    assert res.status == "error", res.report()
    assert res.errors[0].code == code
    assert res.errors[0].span is not None and res.errors[0].span.file == __file__


@pytest.mark.parametrize(
    "fn, words",
    [
        (lambda x: x.sum(0, keepdim=True).flatten(-2, 2), "rank"),
        (lambda x: x.sum(0, keepdim=True).flatten(-3, 1), "rank"),
    ],
)
def test_ranks_the_importer_cannot_know_yet(fn: Any, words: str) -> None:
    """Ranks of computed tensors (where a converter needs one at import time): an
    ``unsupported-op`` error at the line. (Sizes of computed tensors are shape values:
    tests/torch/test_torch_shape_values.py.)"""
    res = sst.infer(fn_module(fn, 1), types_of(X))
    assert res.status == "error"
    (err,) = res.errors
    assert err.code == "unsupported-op"
    assert words in err.message
    assert err.span is not None and err.span.file == __file__


@settings(max_examples=25)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.randoms(use_true_random=False))
def test_permute_and_reshape_property(shape: list[int], rnd: Any) -> None:
    """A random permutation followed by a flatten and a reshape with -1, against torch."""
    perm = list(range(len(shape)))
    rnd.shuffle(perm)
    split = shape[perm[0]]

    def f(x: torch.Tensor) -> torch.Tensor:
        return x.permute(*perm).reshape(split, -1).flatten()

    check_fn(fn_module(f, 1), {"x": (tuple(shape), "float32")}, [{}])
