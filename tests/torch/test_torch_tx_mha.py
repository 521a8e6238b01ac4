"""``nn.MultiheadAttention`` against eager torch (session 13, "tx"): unbatched inputs (a query
``(L, E)``, key and value ``(S, E)``, a key padding mask ``(S,)``, an attention mask ``(L, S)`` or
``(num_heads, L, S)``), torch's rank checks, and attention masks whose rank the importer does not
know (computed: ``mask > 0``, ``x.new_zeros((n * heads, l, s))``). At every size ``res.valid_at``
says what torch does, and where it runs every node's shape is symshape's.

torch is run in training mode (the module's own state; dropout 0): an evaluated module under
``no_grad`` takes the "fast path" for batched self-attention, which reshapes a 3-d mask with
``view(N, -1, L, L)`` and so also runs masks ``(N, L, L)`` that the ordinary path refuses.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn as nn

import symshape as ss
import symshape.torch as sst
from torch_zoo.oracle import record

H = 2  # heads
E = 8  # embedding


class Attn(nn.Module):
    """``self.m(...)`` with the query, key/value and masks that ``make`` builds from the inputs."""

    def __init__(self, batch_first: bool, f: Callable[..., dict[str, Any]]) -> None:
        super().__init__()
        self.m = nn.MultiheadAttention(E, H, batch_first=batch_first)
        self.f = f

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> Any:
        return self.m(**self.f(x, y))


def _self(x: Any, y: Any) -> dict[str, Any]:
    return {"query": x, "key": x, "value": x}


def _cross(x: Any, y: Any) -> dict[str, Any]:
    return {"query": x, "key": y, "value": y, "average_attn_weights": False}


def _kpm(x: Any, y: Any) -> dict[str, Any]:
    return {"query": x, "key": x, "value": x, "key_padding_mask": y > 0}


def _am(x: Any, y: Any) -> dict[str, Any]:
    return {"query": x, "key": x, "value": x, "attn_mask": y > 0}


def _am_given(x: Any, y: Any) -> dict[str, Any]:
    return {"query": x, "key": x, "value": x, "attn_mask": y}


def _am_zeros(x: Any, y: Any) -> dict[str, Any]:
    """A 3-d mask computed from the sizes: ``(n * heads, l, l)`` of a sequence-first ``x``."""
    n = x.shape[1]
    return {"query": x, "key": x, "value": x, "attn_mask": x.new_zeros((n * H, x.shape[0], x.shape[0]))}


def _am_zeros_y(x: Any, y: Any) -> dict[str, Any]:
    """``(y.shape[0], l, l)``: a 3-d mask whose leading size is another input's."""
    return {"query": x, "key": x, "value": x, "attn_mask": x.new_zeros((y.shape[0], x.shape[0], x.shape[0]))}


def _grid(**axes: range) -> list[dict[str, int]]:
    names = sorted(axes)
    return [dict(zip(names, vals)) for vals in itertools.product(*(axes[n] for n in names))]


Shape = tuple[Any, ...]
# (name, batch_first, inputs, x shape, y shape, sizes)
CASES: list[tuple[str, bool, Callable[..., dict[str, Any]], Shape, Shape, list[dict[str, int]]]] = [
    ("unbatched self", False, _self, ("l", E), (1,), _grid(l=range(0, 4))),
    ("unbatched self batch_first", True, _self, ("l", E), (1,), _grid(l=range(0, 4))),
    ("unbatched cross", False, _cross, ("l", E), ("s", E), _grid(l=range(0, 3), s=range(0, 3))),
    ("unbatched cross batch_first", True, _cross, ("l", E), ("s", E), _grid(l=range(0, 3), s=range(0, 3))),
    (
        "unbatched query, batched key",
        False,
        _cross,
        ("l", E),
        ("s", 1, E),
        _grid(l=range(1, 3), s=range(1, 3)),
    ),
    (
        "batched query, unbatched key",
        False,
        _cross,
        ("l", 1, E),
        ("s", E),
        _grid(l=range(1, 3), s=range(1, 3)),
    ),
    ("1-d query", False, _self, (E,), (1,), [{}]),
    ("4-d query", True, _self, (1, "l", "l", E), (1,), _grid(l=range(1, 3))),
    ("unbatched key padding mask (d)", False, _kpm, ("l", E), ("d",), _grid(l=range(1, 4), d=range(1, 4))),
    ("unbatched key padding mask (1, l)", True, _kpm, ("l", E), (1, "l"), _grid(l=range(1, 3))),
    (
        "batched key padding mask (d, l)",
        True,
        _kpm,
        ("b", "l", E),
        ("d", "l"),
        _grid(b=range(1, 3), l=range(1, 3), d=range(1, 3)),
    ),
    ("unbatched attn_mask (d, l)", False, _am, ("l", E), ("d", "l"), _grid(l=range(1, 4), d=range(1, 4))),
    (
        "unbatched attn_mask (d, l, l)",
        False,
        _am,
        ("l", E),
        ("d", "l", "l"),
        _grid(l=range(1, 3), d=range(1, 5)),
    ),
    (
        "batched attn_mask (d, l, l)",
        True,
        _am,
        ("b", "l", E),
        ("d", "l", "l"),
        _grid(b=range(1, 3), l=range(1, 3), d=range(1, 6)),
    ),
    (
        "batched attn_mask (d, l)",
        True,
        _am,
        ("b", "l", E),
        ("d", "l"),
        _grid(b=range(1, 3), l=range(1, 4), d=range(1, 4)),
    ),
    (
        "batched attn_mask given (d, l, l)",
        False,
        _am_given,
        ("l", "b", E),
        ("d", "l", "l"),
        _grid(b=range(1, 3), l=range(1, 3), d=range(1, 6)),
    ),
    (
        "batched attn_mask new_zeros (n*h, l, l)",
        False,
        _am_zeros,
        ("l", "b", E),
        (1,),
        _grid(b=range(1, 4), l=range(1, 3)),
    ),
    (
        "batched attn_mask new_zeros (d, l, l)",
        False,
        _am_zeros_y,
        ("l", "b", E),
        ("d",),
        _grid(b=range(1, 3), l=range(1, 3), d=range(1, 6)),
    ),
    (
        "unbatched attn_mask new_zeros (d, l, l)",
        False,
        _am_zeros_y,
        ("l", E),
        ("d",),
        _grid(l=range(1, 3), d=range(1, 4)),
    ),
]


def _types(x: Shape, y: Shape) -> dict[str, ss.Type]:
    def t(shape: Shape) -> ss.Type:
        return ss.Tensor(tuple(ss.dim(d, min=0) if isinstance(d, str) else d for d in shape), "float32")

    return {"x": t(x), "y": t(y)}


def _example(shape: Shape, p: dict[str, int]) -> torch.Tensor:
    return torch.randn(tuple(p[d] if isinstance(d, str) else d for d in shape))


def _runs(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> bool:
    try:
        with torch.no_grad():
            model(x, y)
        return True
    except (RuntimeError, ValueError, AssertionError):
        return False


def _mismatches(res: Any, model: nn.Module, x: torch.Tensor, y: torch.Tensor, p: dict[str, int]) -> list[str]:
    env, out = {ss.dim(k, min=0): v for k, v in p.items()}, []
    for name, value in record(model, res.fx_graph, {"x": x, "y": y}).items():
        values = value if isinstance(value, tuple) else (value,)
        if not values or not all(isinstance(v, torch.Tensor) for v in values):
            continue
        t = res.type_of(name)
        for ty, v in zip(t.fields if isinstance(t, ss.TupleType) else (t,), values, strict=True):
            got = None if ty.ndim is None else tuple(int(d.subs(env)) for d in ty.dims)
            if got != tuple(v.shape):
                out.append(f"{name}: symshape {ty} -> {got}, torch {tuple(v.shape)}")
    return out


@pytest.mark.parametrize("name, bf, f, xs, ys, points", CASES, ids=[c[0] for c in CASES])
def test_attention_as_torch(
    name: str, bf: bool, f: Callable[..., dict[str, Any]], xs: Shape, ys: Shape, points: list[dict[str, int]]
) -> None:
    torch.manual_seed(0)
    model = Attn(bf, f)
    res = sst.infer(model, _types(xs, ys))
    for p in points:
        x, y = _example(xs, p), _example(ys, p)
        runs = _runs(model, x, y)
        at = {ss.dim(k, min=0): v for k, v in p.items()}
        assert bool(res.valid_at(at)) == runs, (
            f"{name} at {p}: torch {'runs' if runs else 'raises'}; {res.report()}"
        )
        if runs:
            mm = _mismatches(res, model, x, y, p)
            assert not mm, f"{name} at {p}: {mm}"
