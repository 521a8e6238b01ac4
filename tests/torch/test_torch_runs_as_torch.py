"""Rules where torch is stricter or different from Relay's operators, checked against torch running.

Each case is a small module, its inputs' symbolic shapes and the sizes to try; at every size
``res.valid_at`` must say what torch does (it runs or it raises), and where it runs every node's
shape must be symshape's with the sizes substituted. The rules (each failed before, found by a
review of the importer): pooling with ``ceil_mode`` drops a last window that starts in the end
padding, and a padding over half the kernel is refused; ``chunk`` gives fewer pieces than asked
when the axis is short; ``bmm`` does not broadcast its batch; ``mm``/``mv`` take matrices and
vectors only; ``narrow`` with a negative start counts from the end; ``arange`` refuses bounds the
wrong way round; ``interpolate`` refuses a 0 size; normalizations computing statistics from the
input need more than one value per statistic. Exported programs: core ATen's
``constant_pad_nd``, ``adaptive_max_pool2d`` (values and indices) and the functional batch norm
of a training model (five results).
"""

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
from torch_zoo.oracle import Fn1, Spec, Wrap, check_model, example_of, fn_module, substitute, types_of


def _grid(**axes: range) -> list[dict[str, int]]:
    names = sorted(axes)
    return [dict(zip(names, vals)) for vals in itertools.product(*(axes[n] for n in names))]


class QKV(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = x.chunk(3, -1)
        return q * k + v


class Halves(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, b = x.chunk(2, 1)
        return torch.cat([b, a], 1)


X2 = {"x": (("b", "c"), "float32")}
X3 = {"x": (("b", 3, "t"), "float32")}
X4 = {"x": (("b", 3, "h", "w"), "float32")}

CASES: list[tuple[str, Callable[[], nn.Module], dict[str, Spec], list[dict[str, int]]]] = [
    # pooling: torch's ceil_mode rule (a window may overhang; one starting in the end pad is dropped)
    *[
        (
            f"maxpool1d k{k} s{s} p{p} d{d} ceil",
            lambda k=k, s=s, p=p, d=d: nn.MaxPool1d(k, s, p, d, ceil_mode=True),
            X3,
            _grid(b=range(1, 2), t=range(1, 9)),
        )
        for k, s, p, d in [
            (2, 2, 0, 1),
            (1, 2, 0, 1),
            (2, 3, 1, 1),
            (3, 2, 1, 1),
            (3, 2, 0, 1),
            (2, 2, 1, 2),
            (3, 3, 1, 1),
        ]
    ],
    *[
        (
            f"avgpool1d k{k} s{s} p{p} ceil",
            lambda k=k, s=s, p=p: nn.AvgPool1d(k, s, p, ceil_mode=True),
            X3,
            _grid(b=range(1, 2), t=range(1, 9)),
        )
        for k, s, p in [(1, 2, 0), (2, 2, 1), (3, 2, 1), (3, 3, 0)]
    ],
    (
        "maxpool2d 3 2 1 ceil (googlenet)",
        lambda: nn.MaxPool2d(3, 2, 1, ceil_mode=True),
        X4,
        _grid(b=range(1, 2), h=range(1, 7), w=range(3, 5)),
    ),
    # chunk: fewer pieces than asked when the axis is short
    ("chunk into q, k, v", lambda: QKV(), X2, _grid(b=range(2, 3), c=range(1, 13))),
    ("chunk into halves", lambda: Halves(), X2, _grid(b=range(2, 3), c=range(1, 7))),
    # narrow from the end
    *[
        (
            f"narrow({st}, {ln})",
            lambda st=st, ln=ln: fn_module(lambda x: x.narrow(1, st, ln), 1),
            X2,
            _grid(b=range(1, 2), c=range(1, 6)),
        )
        for st, ln in [(-2, 2), (-3, 2), (1, 2), (-1, 1)]
    ],
    # arange's bounds must agree with the step's sign
    (
        "arange(t - 3)",
        lambda: fn_module(lambda x: torch.arange(x.shape[1] - 3), 1),
        X2,
        _grid(b=range(1, 2), c=range(1, 6)),
    ),
    (
        "arange(2, t, 2)",
        lambda: fn_module(lambda x: torch.arange(2, x.shape[1], 2), 1),
        X2,
        _grid(b=range(1, 2), c=range(1, 6)),
    ),
    (
        "arange(t, 1, -1)",
        lambda: fn_module(lambda x: torch.arange(x.shape[1], 1, -1), 1),
        X2,
        _grid(b=range(1, 2), c=range(1, 5)),
    ),
    # interpolate: sizes of 0 are refused (not by 'area', an adaptive pooling)
    (
        "interpolate x0.5 bilinear",
        lambda: fn_module(lambda x: F.interpolate(x, scale_factor=0.5, mode="bilinear"), 1),
        X4,
        _grid(b=range(1, 2), h=range(1, 4), w=range(1, 4)),
    ),
    (
        "upsample nearest x2",
        lambda: nn.Upsample(scale_factor=2),
        X4,
        _grid(b=range(1, 2), h=range(1, 3), w=range(1, 3)),
    ),
    # statistics from the input: more than one value each
    (
        "batchnorm1d training",
        lambda: nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)),
        {"x": (("b", 3), "float32")},
        _grid(b=range(1, 4)),
    ),
    (
        "batchnorm1d eval",
        lambda: nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)).eval(),
        {"x": (("b", 3), "float32")},
        _grid(b=range(1, 4)),
    ),
    (
        "batchnorm2d training after pooling",
        lambda: nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.BatchNorm2d(3)),
        X4,
        _grid(b=range(1, 3), h=range(1, 3), w=range(2, 3)),
    ),
    (
        "batchnorm2d training",
        lambda: nn.BatchNorm2d(3),
        X4,
        _grid(b=range(1, 3), h=range(1, 3), w=range(1, 3)),
    ),
    ("instancenorm1d", lambda: nn.InstanceNorm1d(3), X3, _grid(b=range(1, 3), t=range(1, 4))),
    ("groupnorm eval", lambda: nn.GroupNorm(1, 3).eval(), X3, _grid(b=range(1, 3), t=range(1, 3))),
    (
        "F.batch_norm training",
        lambda: fn_module(lambda x: F.batch_norm(x, None, None, training=True), 1),
        X3,
        _grid(b=range(1, 3), t=range(1, 3)),
    ),
]


@pytest.mark.parametrize("name, make, specs, points", CASES, ids=[c[0] for c in CASES])
def test_runs_as_torch(
    name: str, make: Callable[[], nn.Module], specs: dict[str, Spec], points: list[dict[str, int]]
) -> None:
    model = make()
    model = model if isinstance(model, (Fn1, QKV, Halves)) else Wrap(model)
    res = sst.infer(model, types_of(specs))
    assert res.status in ("ok", "guarded"), res.report()
    for p in points:
        example = example_of(specs, p)
        try:
            with torch.no_grad():
                model(**example)
            runs = True
        except (RuntimeError, ValueError, IndexError):
            runs = False
        at = {ss.dim(k): v for k, v in p.items()}
        assert bool(res.valid_at(at)) == runs, (
            f"{name} at {p}: torch {'runs' if runs else 'raises'}; {res.valid_when()}"
        )
        if runs:
            mm = check_model(res, model, example, p)
            assert not mm, f"{name} at {p}: {mm}"


def test_chunk_piece_that_may_not_exist() -> None:
    """``x.chunk(4, 1)[1]`` needs a second piece: ``c >= 2`` (``c = 3`` gives three pieces of 1)."""
    model = fn_module(lambda x: x.chunk(4, 1)[1] * 2, 1)
    res = sst.infer(model, types_of(X2))
    for c in range(1, 9):
        try:
            model(torch.zeros(2, c))
            runs = True
        except IndexError:
            runs = False
        assert bool(res.valid_at({ss.dim("b"): 2, ss.dim("c"): c})) == runs, c


@pytest.mark.parametrize(
    "make, args",
    [
        (lambda: nn.MaxPool2d(2, 2, padding=2), {}),
        (lambda: nn.AvgPool2d(3, 3, padding=2), {}),
        (lambda: nn.MaxPool2d(3, 1, padding=2, dilation=2), {}),
    ],
)
def test_pool_padding_over_half_the_kernel(make: Callable[[], nn.Module], args: dict[str, Any]) -> None:
    """torch refuses such a pooling at every size; symshape says so (bad-attribute)."""
    model = Wrap(make())
    with pytest.raises(RuntimeError, match="pad should be"):
        model(torch.randn(1, 3, 8, 8))
    res = sst.infer(model, types_of(X4))
    assert res.status == "error" and [e.code for e in res.errors] == ["bad-attribute"], res.report()


@pytest.mark.parametrize(
    "f, shapes, bad",
    [
        (
            torch.bmm,
            ((("b", "t", 4), "float32"), (("d", 4, 5), "float32")),
            [{"b": 1, "d": 2, "t": 3}, {"b": 2, "d": 1, "t": 3}],
        ),
        (torch.mm, ((("b", "t", 4), "float32"), ((4, 5), "float32")), None),
        (torch.mv, ((("t", 4), "float32"), ((4, 5), "float32")), None),
    ],
)
def test_matrix_products_take_their_ranks(f: Any, shapes: Any, bad: list[dict[str, int]] | None) -> None:
    """``bmm`` needs equal batch sizes (no broadcasting of 1); ``mm``/``mv`` refuse other ranks."""
    specs = dict(zip(("x", "y"), shapes))
    model = fn_module(f, 2)
    res = sst.infer(model, types_of(specs))
    if bad is None:
        assert res.status == "error", res.report()
        return
    for p in bad:
        with pytest.raises(RuntimeError):
            model(**example_of(specs, p))
        assert not res.valid_at({ss.dim(k): v for k, v in p.items()})
    assert res.valid_at({ss.dim("b"): 2, ss.dim("d"): 2, ss.dim("t"): 3})


def _exported(model: nn.Module, example: torch.Tensor, dynamic: dict[int, Any]) -> Any:
    from torch.export import export

    return export(model, (example,), dynamic_shapes=(dynamic,)).run_decompositions()


@pytest.mark.parametrize(
    "make, specs, size",
    [
        (lambda: nn.Sequential(nn.ZeroPad1d(2), nn.Conv1d(3, 4, 5)), X3, {"b": 3, "t": 7}),
        (lambda: nn.Sequential(nn.Conv2d(3, 4, 3), nn.AdaptiveMaxPool2d(2)), X4, {"b": 3, "h": 10, "w": 12}),
        (
            lambda: nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU()),
            X4,
            {"b": 2, "h": 8, "w": 9},
        ),
        (lambda: nn.InstanceNorm2d(3), X4, {"b": 2, "h": 8, "w": 9}),
        (lambda: nn.BatchNorm2d(3, track_running_stats=False), X4, {"b": 2, "h": 8, "w": 9}),
    ],
)
def test_core_aten_forms(make: Callable[[], nn.Module], specs: dict[str, Spec], size: dict[str, int]) -> None:
    """Core ATen's ``constant_pad_nd(x, pad, value)``, ``adaptive_max_pool2d`` (values and
    indices), ``_native_batch_norm_legit_functional`` (five results) and
    ``_native_batch_norm_legit.no_stats`` (no running statistics) of exported programs."""
    from torch.export import Dim

    model = make()
    example = example_of(specs, size)["x"]
    dyn = {i: Dim.DYNAMIC for i, d in enumerate(specs["x"][0]) if isinstance(d, str)}
    ep = _exported(model, example, dyn)
    res = sst.infer(ep, {"input": types_of(specs)["x"]})
    assert res.status in ("ok", "guarded"), res.report()
    for p in (size, {k: v + 1 for k, v in size.items()}):
        x = example_of(specs, p)["x"]
        want = tuple(model(x).shape)
        at = {ss.dim(k): v for k, v in p.items()}
        assert res.valid_at(at)
        out = ep.graph_signature.user_outputs[0]
        got = tuple(substitute(d, p) for d in res.type_of(out).shape)
        assert got == want


@pytest.mark.parametrize("scale", [0.25, 0.5, 1.5, 2.0, 3.0, 0.375])
def test_interpolate_scales_with_exact_sizes(scale: float) -> None:
    """``floor(h * scale)`` in floating point is ``(h * p) // q`` for a scale whose binary value
    is short; symshape's size equals torch's at every ``h``."""
    model = fn_module(lambda x: F.interpolate(x, scale_factor=scale, mode="nearest"), 1)
    res = sst.infer(model, types_of(X3))
    out = res.type_of("interpolate")
    for t in range(1, 60):
        try:
            want = tuple(model(torch.zeros(1, 3, t)).shape)
        except RuntimeError:
            assert not res.valid_at({ss.dim("b"): 1, ss.dim("t"): t})
            continue
        assert tuple(substitute(d, {"b": 1, "t": t}) for d in out.shape) == want


@pytest.mark.parametrize("scale", [0.7, 1.4, 0.3, 1 / 3])
def test_interpolate_scales_without_exact_sizes(scale: float) -> None:
    """0.7 is not 7/10 in binary: torch's ``floor(h * 0.7)`` matches neither ``h * 7 // 10`` nor
    the exact binary fraction at every ``h``; the converter says so (unsupported-op)."""
    res = sst.infer(fn_module(lambda x: F.interpolate(x, scale_factor=scale), 1), types_of(X3))
    assert [e.code for e in res.errors] == ["unsupported-op"], res.report()
    assert "floating point" in res.report()


class _InPlace(nn.Module):
    def __init__(self, how: str) -> None:
        super().__init__()
        self.how = how

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        if self.how == "add_":
            return x.add_(y)
        if self.how == "masked_fill_":
            return x.masked_fill_(y > 0, 0.0)
        z = torch.zeros_like(x)
        z.copy_(y)  # (copy_ broadcasts its source into z: allowed)
        return z.mul_(2)


@pytest.mark.parametrize("how", ["add_", "masked_fill_", "copy_"])
def test_in_place_cannot_grow(how: str) -> None:
    """``x.add_(y)`` writes into ``x``: the broadcast result must have ``x``'s shape."""
    specs = {"x": (("b", "u"), "float32"), "y": (("b", "t"), "float32")}
    model = _InPlace(how)
    res = sst.infer(model, types_of(specs))
    for p in _grid(b=range(2, 3), t=range(1, 4), u=range(1, 4)):
        try:
            model(**example_of(specs, p))
            runs = True
        except RuntimeError:
            runs = False
        assert bool(res.valid_at({ss.dim(k): v for k, v in p.items()})) == runs, (how, p, res.valid_when())


@pytest.mark.parametrize(
    "f, shape, runs",
    [
        (lambda x: torch.flatten(x.sum(0), 1), ("b", 3), False),  # rank 1 after the sum: no axis 1
        (lambda x: torch.flatten(x.sum(0), 1), ("b", 3, 4), True),
        (lambda x: x.sum(0).triu(), ("b", 3), False),  # triu needs 2 dimensions
        (lambda x: x.triu(1), ("b", 3), True),
        (lambda x: x.repeat(1, 0, 2), ("b", 2, 3), True),  # an empty axis
    ],
)
def test_rank_checks_and_empty_repeat(f: Any, shape: tuple[Any, ...], runs: bool) -> None:
    model = fn_module(f, 1)
    specs = {"x": (shape, "float32")}
    p = {"b": 3}
    try:
        want = tuple(model(**example_of(specs, p)).shape)
    except (RuntimeError, IndexError):
        want = None
    assert (want is not None) == runs
    res = sst.infer(model, types_of(specs))
    assert bool(res.valid_at({ss.dim("b"): 3})) == runs, res.report()
    if runs:
        assert not check_model(res, model, example_of(specs, p), p)


DTYPE_FNS: list[tuple[str, Callable[[torch.Tensor], torch.Tensor]]] = [
    ("sqrt", torch.sqrt),
    ("sigmoid", torch.sigmoid),
    ("exp", lambda x: x.exp()),
    ("tanh", torch.tanh),
    ("reciprocal", torch.reciprocal),
    ("abs", torch.abs),
    ("square", torch.square),
    ("where float", lambda x: torch.where(x > 0, x, 1.5)),
    ("where int", lambda x: torch.where(x > 0, x, 2)),
    ("clamp float", lambda x: x.clamp(min=0.5)),
    ("clamp int", lambda x: x.clamp(min=1)),
]


@pytest.mark.parametrize("dtype", ["int64", "float32", "float16"])
@pytest.mark.parametrize("name, f", DTYPE_FNS, ids=[n for n, _ in DTYPE_FNS])
def test_result_dtypes(name: str, f: Callable[[torch.Tensor], torch.Tensor], dtype: str) -> None:
    """Integer inputs of the float-valued operations and float scalars promote as in torch."""
    specs = {"x": (("b", 3), dtype)}
    model = fn_module(f, 1)
    want = str(model(**example_of(specs, {"b": 2})).dtype).removeprefix("torch.")
    res = sst.infer(model, types_of(specs))
    out = next(n for n in res.fx_graph.nodes if n.op == "output").args[0]
    assert res.type_of(out.name).dtype == want, res.report()


class _MHA(nn.Module):
    def __init__(self, how: str, batch_first: bool = True) -> None:
        super().__init__()
        self.m = nn.MultiheadAttention(8, 2, batch_first=batch_first)
        self.how = how

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        if self.how == "kpm":
            return self.m(x, x, x, key_padding_mask=y)[0]
        if self.how == "mask":
            return self.m(x, x, x, attn_mask=y)[0]
        return self.m(x, y, y)[0]


@pytest.mark.parametrize(
    "how, y, points",
    [
        ("kpm", (("d", "t"), "bool"), _grid(b=range(2, 3), d=range(1, 3), t=range(3, 4))),
        ("mask", (("d", "t"), "bool"), _grid(b=range(2, 3), d=range(1, 4), t=range(3, 4))),
        ("mask", (("d", "t", "t"), "bool"), _grid(b=range(2, 3), d=range(1, 5), t=range(3, 4))),
        (
            "cross",
            (("d", "s", 8), "float32"),
            _grid(b=range(2, 3), d=range(1, 3), s=range(5, 6), t=range(3, 4)),
        ),
    ],
)
def test_multihead_attention_shapes_are_exact(how: str, y: Spec, points: list[dict[str, int]]) -> None:
    """torch checks the masks' and the key's shapes exactly; symshape's attention would broadcast."""
    specs = {"x": (("b", "t", 8), "float32"), "y": y}
    model = _MHA(how).eval()
    res = sst.infer(model, types_of(specs))
    for p in points:
        try:
            with torch.no_grad():
                model(**example_of(specs, p))
            runs = True
        except (RuntimeError, AssertionError):
            runs = False
        assert bool(res.valid_at({ss.dim(k): v for k, v in p.items()})) == runs, (how, p, res.valid_when())


class _Masked(nn.Module):
    def forward(self, x: torch.Tensor, m: torch.Tensor) -> Any:
        y = x.sum(-1) > 0
        rows = (x > 0).any(-1)
        return (
            x[y],
            x[m],
            x[m & y],
            x[torch.where(y, True, False)],
            x[y * m],
            x.view(-1, 4)[y.view(-1)],
            x[rows],
        )


def test_bool_mask_index_selects_rows() -> None:
    """``x[mask]`` with a bool mask (a comparison, a bool input, a logical op, a where of bools,
    a product of masks, a view of one) keeps the rows where it holds: ``(u, *x.shape[mask.ndim:])``,
    ``u`` a size the data decides (was a dtype error)."""
    specs = {"x": (("b", "t", 4), "float32"), "m": (("b", "t"), "bool")}
    model = _Masked()
    res = sst.infer(model, types_of(specs))
    assert res.status == "ok", res.report()
    outs = next(n for n in res.fx_graph.nodes if n.op == "output").args[0]
    got = model(**example_of(specs, {"b": 2, "t": 3}))
    for node, value in zip(outs, got):
        t = res.type_of(node.name)
        assert t.ndim == value.ndim == 2 and str(t.shape[1]) == "4" and t.dtype == "float32"
    assert res.valid_at({ss.dim("b"): 2, ss.dim("t"): 3})
