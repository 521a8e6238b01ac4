"""Unbatched inputs (session 13, "tx"): torch's convolutions, pools, instance norms and
``nn.MultiheadAttention`` take an input without its batch axis (``Conv2d`` on ``(C, H, W)``,
attention on ``(L, E)``) and refuse the other ranks; batch norms take exactly theirs. Each case
is a module, its inputs' symbolic shapes and the sizes to try (0 and 1 included); at every size
``res.valid_at`` must say what eager torch does (it runs or it raises), and where it runs every
node's shape must be symshape's with the sizes substituted. Each module is checked on the input
as given (its rank known at import) and after a ``relu`` (its rank known only to inference:
the importer's ``torch.batched``/``torch.unbatched`` operators)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import symshape as ss
import symshape.torch as sst
from torch_zoo.oracle import Spec, example_of, record


def _grid(**axes: range) -> list[dict[str, int]]:
    names = sorted(axes)
    return [dict(zip(names, vals)) for vals in itertools.product(*(axes[n] for n in names))]


class Direct(nn.Module):
    """``m(x)``."""

    def __init__(self, m: nn.Module | Callable[..., Any]) -> None:
        super().__init__()
        self.m = m

    def forward(self, x: torch.Tensor) -> Any:
        return self.m(x)


class AfterRelu(Direct):
    """``m(relu(x))``: the input's rank is not known at import time."""

    def forward(self, x: torch.Tensor) -> Any:
        return self.m(torch.relu(x))


def _shape(nd: int, rank: int, c: int) -> tuple[Any, ...]:
    """An input of ``rank`` axes for a ``nd``-d layer: batch ``b``, channels ``c``, spatial ``t``
    (a rank below ``nd + 1`` drops the channels too; one above adds a leading ``b``)."""
    spatial = ("t",) * nd
    if rank == nd + 2:
        return ("b", c, *spatial)
    if rank == nd + 1:
        return (c, *spatial)
    if rank <= nd:
        return spatial[nd - rank :]
    return ("b",) * (rank - nd - 1) + (c, *spatial)


def _modules() -> list[tuple[str, int, set[int], Callable[[], Any]]]:
    """(name, nd, ranks torch accepts, a fresh module) per layer."""
    out: list[tuple[str, int, set[int], Callable[[], Any]]] = []
    for nd in (1, 2, 3):
        both = {nd + 1, nd + 2}
        out += [
            (f"Conv{nd}d", nd, both, lambda nd=nd: getattr(nn, f"Conv{nd}d")(2, 3, 2, padding=1)),
            (
                f"Conv{nd}d reflect",
                nd,
                both,
                lambda nd=nd: getattr(nn, f"Conv{nd}d")(2, 3, 1, padding_mode="circular"),
            ),
            (
                f"ConvTranspose{nd}d",
                nd,
                both,
                lambda nd=nd: getattr(nn, f"ConvTranspose{nd}d")(2, 3, 2, stride=2),
            ),
            (
                f"F.conv{nd}d",
                nd,
                both,
                lambda nd=nd: lambda x: getattr(F, f"conv{nd}d")(x, torch.ones((3, 2) + (1,) * nd)),
            ),
            (
                f"F.conv_transpose{nd}d",
                nd,
                both,
                lambda nd=nd: (
                    lambda x: getattr(F, f"conv_transpose{nd}d")(x, torch.ones((2, 3) + (2,) * nd), stride=2)
                ),
            ),
            (f"MaxPool{nd}d", nd, both, lambda nd=nd: getattr(nn, f"MaxPool{nd}d")(2)),
            (
                f"MaxPool{nd}d indices",
                nd,
                both,
                lambda nd=nd: getattr(nn, f"MaxPool{nd}d")(2, 1, return_indices=True),
            ),
            (f"AvgPool{nd}d ceil", nd, both, lambda nd=nd: getattr(nn, f"AvgPool{nd}d")(2, ceil_mode=True)),
            (f"F.max_pool{nd}d", nd, both, lambda nd=nd: lambda x: getattr(F, f"max_pool{nd}d")(x, 2, 1, 1)),
            (f"F.avg_pool{nd}d", nd, both, lambda nd=nd: lambda x: getattr(F, f"avg_pool{nd}d")(x, 1)),
            (f"LPPool{nd}d", nd, both, lambda nd=nd: getattr(nn, f"LPPool{nd}d")(2, 2)),
            (f"InstanceNorm{nd}d", nd, both, lambda nd=nd: getattr(nn, f"InstanceNorm{nd}d")(2, affine=True)),
            (
                f"BatchNorm{nd}d",
                nd,
                {2, 3} if nd == 1 else {nd + 2},
                lambda nd=nd: getattr(nn, f"BatchNorm{nd}d")(2).eval(),
            ),
        ]
    out += [
        ("AdaptiveAvgPool1d", 1, {2, 3}, lambda: nn.AdaptiveAvgPool1d(2)),
        ("AdaptiveMaxPool1d", 1, {2, 3}, lambda: nn.AdaptiveMaxPool1d(1)),
        ("AdaptiveAvgPool2d", 2, {3, 4}, lambda: nn.AdaptiveAvgPool2d((2, 1))),
        ("AdaptiveAvgPool2d to 1", 2, {2, 3, 4, 5}, lambda: nn.AdaptiveAvgPool2d(1)),
        ("AdaptiveMaxPool2d", 2, {3, 4}, lambda: nn.AdaptiveMaxPool2d((1, 2))),
        ("F.adaptive_max_pool2d indices", 2, {3, 4}, lambda: lambda x: F.adaptive_max_pool2d(x, 2, True)),
        ("AdaptiveAvgPool3d to 1", 3, {3, 4, 5, 6}, lambda: nn.AdaptiveAvgPool3d(1)),
        ("F.instance_norm", 1, {3, 4}, lambda: lambda x: F.instance_norm(x)),
        (
            "F.batch_norm training",
            1,
            {1, 2, 3, 4},
            lambda: lambda x: F.batch_norm(x, None, None, training=True),
        ),
        ("GroupNorm", 1, {2, 3, 4}, lambda: nn.GroupNorm(1, 2)),
    ]
    return out


def _sizes(name: str, shape: tuple[Any, ...], nd: int) -> list[dict[str, int]]:
    """The sizes to try: a batch of 0, 1, 2; spatial sizes from 1 (from 0 for the norms; see the
    report of session 13 for the empty spatial axes of convolutions and max pools, where torch
    has rules of its own)."""
    names = {n for n in shape if isinstance(n, str)}
    small = range(0 if "norm" in name.lower() else 1, 4 if nd < 3 else 3)
    return _grid(**{n: (range(0, 3) if n == "b" else small) for n in names})


def _dims(p: dict[str, int]) -> dict[ss.Dim, int]:
    return {ss.dim(k, min=0): v for k, v in p.items()}


def _types(specs: dict[str, Spec]) -> dict[str, ss.Type]:
    """The inputs' types, every symbol ``>= 0`` (empty tensors are sizes to check too)."""
    return {
        n: ss.Tensor(tuple(ss.dim(d, min=0) if isinstance(d, str) else d for d in shape), dt)
        for n, (shape, dt) in specs.items()
    }


def mismatches(res: Any, model: nn.Module, example: dict[str, torch.Tensor], p: dict[str, int]) -> list[str]:
    """Nodes whose tensors' shapes or dtypes differ from symshape's types at the sizes ``p``."""
    env, out = _dims(p), []
    for name, value in record(model, res.fx_graph, example).items():
        values = value if isinstance(value, tuple) else (value,)
        if not all(isinstance(v, torch.Tensor) for v in values):
            continue
        t = res.type_of(name)
        types = t.fields if isinstance(t, ss.TupleType) else (t,)
        for ty, v in zip(types, values, strict=True):
            assert isinstance(ty, ss.TensorType)
            got = None if ty.ndim is None else tuple(int(d.subs(env)) for d in ty.dims)
            if got != tuple(v.shape) or ty.dtype != str(v.dtype).removeprefix("torch."):
                out.append(f"{name}: symshape {ty} -> {got}, torch {tuple(v.shape)} {v.dtype}")
    return out


def _runs(model: nn.Module, example: dict[str, torch.Tensor]) -> bool:
    try:
        with torch.no_grad():
            model(**example)
        return True
    except (RuntimeError, ValueError, IndexError, NotImplementedError):
        return False


CASES = [
    (f"{name} rank {rank} {wrap.__name__}", nd, rank, rank in ranks, make, wrap)
    for name, nd, ranks, make in _modules()
    for rank in range(nd, nd + 4)
    for wrap in (Direct, AfterRelu)
]


@pytest.mark.parametrize("name, nd, rank, accepted, make, wrap", CASES, ids=[c[0] for c in CASES])
def test_ranks_and_shapes_as_torch(
    name: str, nd: int, rank: int, accepted: bool, make: Callable[[], Any], wrap: type[Direct]
) -> None:
    torch.manual_seed(0)
    model = wrap(make())
    shape = ("b", 2) if name.startswith("BatchNorm1d") and rank == 2 else _shape(nd, rank, 2)
    specs: dict[str, Spec] = {"x": (shape, "float32")}
    res = sst.infer(model, _types(specs))
    if not accepted:  # torch refuses the rank at every size: an error
        assert res.status == "error", res.report()
    for p in _sizes(name, shape, nd):
        example = example_of(specs, p)
        runs = _runs(model, example)
        assert not (runs and not accepted), f"{name} at {p}: torch runs a rank the table says it refuses"
        at = _dims(p)
        assert bool(res.valid_at(at)) == runs, (
            f"{name} at {p}: torch {'runs' if runs else 'raises'}; {res.report()}"
        )
        if runs:
            mm = mismatches(res, model, example, p)
            assert not mm, f"{name} at {p}: {mm}"


def test_unknown_rank_input_has_unknown_rank_result() -> None:
    """An input whose rank nobody knows: the result's rank is not claimed (torch decides it at
    run time from the input's), and nothing is an error."""
    res = sst.infer(AfterRelu(nn.Conv2d(2, 3, 1)), {"x": ss.Tensor(None, "float32")})
    assert res.status != "error", res.report()
    out = [n.name for n in res.fx_graph.nodes if n.op == "call_module"][-1]
    t = res.type_of(out)
    assert isinstance(t, ss.TensorType) and t.ndim is None and t.dtype == "float32"


class _Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c = nn.Conv2d(2, 3, 3, padding=1)
        self.p = nn.MaxPool2d(2)
        self.a = nn.AdaptiveAvgPool2d(1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.a(self.p(torch.relu(self.c(x))))


@pytest.mark.parametrize("core", [False, True])
def test_exported_unbatched(core: bool) -> None:
    """An exported program keeps the unbatched aten calls (``aten.conv2d`` of ``(C, H, W)``; core
    ATen unsqueezes first): the same types at every size as eager torch."""
    h = torch.export.Dim("h", min=4, max=64)
    ep = torch.export.export(_Block(), (torch.randn(2, 8, 8),), dynamic_shapes={"x": {1: h, 2: h}})
    ep = ep.run_decompositions() if core else ep
    hh = ss.dim("hh")
    res = sst.infer(ep, {"x": ss.Tensor((2, hh, hh), "float32")})
    assert res.ok, res.report()
    out = next(n for n in ep.graph.nodes if n.op == "output").args[0][0].name
    for size in (4, 5, 9):
        want = tuple(ep.module()(torch.randn(2, size, size)).shape)
        t = res.type_of(out)
        assert isinstance(t, ss.TensorType) and t.ndim is not None
        assert tuple(int(d.subs({hh: size})) for d in t.dims) == want


@pytest.mark.parametrize(
    "f",
    [
        lambda x: x.relu().flatten(-2, 2),
        lambda x: (x * 2 + x.sigmoid()).movedim(0, 2),
        lambda x: F.max_pool1d(torch.relu(x), 2).flatten(-2),
    ],
)
def test_ranks_known_through_operators(f: Callable[..., Any]) -> None:
    """Ranks that follow from the operators (an activation, a broadcast, a pool) are known at
    import, where a converter needs one (these were ``unsupported-op`` before)."""
    model = Direct(f)
    specs: dict[str, Spec] = {"x": (("b", 6, "t"), "float32")}
    res = sst.infer(model, _types(specs))
    assert res.ok, res.report()
    for p in ({"b": 1, "t": 4}, {"b": 2, "t": 5}):
        example = example_of(specs, p)
        assert not mismatches(res, model, example, p)
