"""Empty sizes (session 14, "tz"): torch's rules for empty axes of convolutions (plain, grouped,
padded, strided, dilated, transposed), pooling (max, average, LP, adaptive) and recurrent layers,
each found by running eager torch. Each case is a module and its input's symbolic shape (every
symbol declared ``min=0``); at every size of a grid including 0 and 1, ``res.valid_at`` must be
True exactly where eager torch runs, and where it runs every node's shape and dtype must be
symshape's with the sizes substituted. Modules that take an unbatched input are checked on the
input as given and after a ``relu`` (its rank then known only to inference)."""

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


class Direct(nn.Module):
    def __init__(self, m: nn.Module | Callable[..., Any]) -> None:
        super().__init__()
        self.m = m

    def forward(self, x: torch.Tensor) -> Any:
        return self.m(x)


class AfterRelu(Direct):
    """``m(relu(x))``: the input's rank is not known at import time."""

    def forward(self, x: torch.Tensor) -> Any:
        return self.m(torch.relu(x))


def _dims(p: dict[str, int]) -> dict[ss.Dim, int]:
    return {ss.dim(k, min=0): v for k, v in p.items()}


def _types(specs: dict[str, Spec]) -> dict[str, ss.Type]:
    return {
        n: ss.Tensor(tuple(ss.dim(d, min=0) if isinstance(d, str) else d for d in shape), dt)
        for n, (shape, dt) in specs.items()
    }


def mismatches(res: Any, model: nn.Module, example: dict[str, torch.Tensor], p: dict[str, int]) -> list[str]:
    """Nodes whose tensors' shapes or dtypes differ from symshape's types at the sizes ``p``."""
    env, out = _dims(p), []
    for name, value in record(model, res.fx_graph, example).items():
        values = value if isinstance(value, tuple) else (value,)
        flat: list[Any] = []
        for v in values:
            flat += list(v) if isinstance(v, tuple) else [v]
        if not flat or not all(isinstance(v, torch.Tensor) for v in flat):
            continue
        t = res.type_of(name)
        types: list[Any] = []
        for f in t.fields if isinstance(t, ss.TupleType) else (t,):
            types += list(f.fields) if isinstance(f, ss.TupleType) else [f]
        for ty, v in zip(types, flat, strict=True):
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
    except (RuntimeError, ValueError, IndexError):
        return False


def check(make: Callable[[], Any], shape: tuple[Any, ...], wrap: type[Direct], values: range) -> None:
    """``wrap(make())`` on an input of ``shape``: valid_at and the shapes as torch at every size."""
    torch.manual_seed(0)
    model = wrap(make())
    specs: dict[str, Spec] = {"x": (shape, "float32")}
    res = sst.infer(model, _types(specs))
    names = sorted({d for d in shape if isinstance(d, str)})
    wrong = []
    for vals in itertools.product(values, repeat=len(names)):
        p = dict(zip(names, vals))
        example = example_of(specs, p)
        runs = _runs(model, example)
        valid = bool(res.valid_at(_dims(p)))
        if runs and not valid and p.get("b", 0) >= 2 and not _runs(model, example_of(specs, {**p, "b": 1})):
            continue  # (torch's mkldnn path for a batch of 2 or more: see test_mkldnn_batches)
        if valid != runs:
            wrong.append(f"at {p}: torch {'runs' if runs else 'raises'}")
        elif runs:
            wrong += [f"at {p}: {m}" for m in mismatches(res, model, example, p)]
    assert not wrong, f"{wrong[:6]}\nvalid_when: {res.valid_when()}\n{res.report()}"


def _conv(nd: int, *args: Any, **kwargs: Any) -> Callable[[], Any]:
    return lambda: getattr(nn, f"Conv{nd}d")(*args, **kwargs)


def _convt(nd: int, *args: Any, **kwargs: Any) -> Callable[[], Any]:
    return lambda: getattr(nn, f"ConvTranspose{nd}d")(*args, **kwargs)


def _cases() -> list[tuple[str, Callable[[], Any], tuple[Any, ...], bool]]:
    """(name, a fresh module, the input's shape, whether it takes an unbatched input too)."""
    out: list[tuple[str, Callable[[], Any], tuple[Any, ...], bool]] = []
    for nd in (1, 2, 3):
        sp = ("h",) * nd
        out += [
            (f"Conv{nd}d", _conv(nd, 2, 3, 1), ("b", 2, *sp), True),
            (f"Conv{nd}d padded", _conv(nd, 2, 3, 1, padding=1), ("b", 2, *sp), True),
            (f"Conv{nd}d k3 p1", _conv(nd, 2, 3, 3, padding=1), ("b", 2, *sp), True),
            (f"Conv{nd}d groups", _conv(nd, 2, 4, 1, padding=1, groups=2), ("b", 2, *sp), True),
            (
                f"Conv{nd}d circular",
                _conv(nd, 2, 3, 1, padding=1, padding_mode="circular"),
                ("b", 2, *sp),
                False,
            ),
            (f"ConvTranspose{nd}d", _convt(nd, 2, 3, 1), ("b", 2, *sp), True),
            (f"ConvTranspose{nd}d s2", _convt(nd, 2, 3, 2, stride=2), ("b", 2, *sp), True),
            (f"MaxPool{nd}d", lambda nd=nd: getattr(nn, f"MaxPool{nd}d")(1), ("b", "c", *sp), True),
            (
                f"AvgPool{nd}d p1",
                lambda nd=nd: getattr(nn, f"AvgPool{nd}d")(2, padding=1),
                ("b", "c", *sp),
                True,
            ),
            (f"LPPool{nd}d", lambda nd=nd: getattr(nn, f"LPPool{nd}d")(2, 1), ("b", "c", *sp), True),
            (
                f"AdaptiveAvgPool{nd}d to 1",
                lambda nd=nd: getattr(nn, f"AdaptiveAvgPool{nd}d")(1),
                ("b", "c", *sp),
                True,
            ),
        ]
    out += [
        ("Conv2d channels", _conv(2, 0, 3, 1, padding=1), ("b", 0, "h", "w"), False),
        (
            "Conv2d stride dilation",
            _conv(2, 2, 2, 2, stride=2, dilation=2, padding=1),
            ("b", 2, "h", "w"),
            False,
        ),
        (
            "ConvTranspose1d crop",
            _convt(1, 2, 3, 3, stride=2, padding=2, output_padding=1),
            ("b", 2, "h"),
            False,
        ),
        ("ConvTranspose2d groups", _convt(2, 2, 4, 2, stride=2, groups=2), ("b", 2, "h", "w"), False),
        ("F.conv1d", lambda: lambda x: F.conv1d(x, torch.ones(3, 2, 2), padding=1), ("b", 2, "h"), True),
        (
            "F.conv_transpose2d",
            lambda: lambda x: F.conv_transpose2d(x, torch.ones(2, 3, 1, 1)),
            ("b", 2, "h", "w"),
            True,
        ),
        ("AdaptiveAvgPool1d", lambda: nn.AdaptiveAvgPool1d(2), ("b", "c", "h"), True),
        ("AdaptiveMaxPool1d", lambda: nn.AdaptiveMaxPool1d(2), ("b", "c", "h"), True),
        ("AdaptiveMaxPool1d to 1", lambda: nn.AdaptiveMaxPool1d(1), ("b", "c", "h"), True),
        ("AdaptiveAvgPool2d", lambda: nn.AdaptiveAvgPool2d((2, 1)), ("b", "c", "h", "w"), True),
        ("AdaptiveMaxPool2d", lambda: nn.AdaptiveMaxPool2d(2), ("b", "c", "h", "w"), True),
        (
            "F.adaptive_max_pool2d indices",
            lambda: lambda x: F.adaptive_max_pool2d(x, 2, True),
            ("b", "c", "h", "w"),
            True,
        ),
        ("F.max_pool2d", lambda: lambda x: F.max_pool2d(x, 2, 1, 1), ("b", "c", "h", "w"), True),
    ]
    for cls in (nn.RNN, nn.LSTM, nn.GRU):
        name = cls.__name__
        out += [
            (name, lambda cls=cls: cls(3, 4), ("t", "b", 3), False),
            (f"{name} batch_first", lambda cls=cls: cls(3, 4, batch_first=True), ("b", "t", 3), False),
            (f"{name} unbatched", lambda cls=cls: cls(3, 4), ("t", 3), False),
            (
                f"{name} 2 layers bidirectional",
                lambda cls=cls: cls(3, 4, 2, bidirectional=True),
                ("t", "b", 3),
                False,
            ),
        ]
    return out


def _unbatched(shape: tuple[Any, ...]) -> tuple[Any, ...]:
    return shape[1:]


CASES = [
    (f"{name} {kind} {wrap.__name__}", make, _unbatched(shape) if kind == "unbatched" else shape, wrap)
    for name, make, shape, unbatched in _cases()
    for kind in (("batched", "unbatched") if unbatched else ("batched",))
    for wrap in ((Direct, AfterRelu) if unbatched else (Direct,))
]


@pytest.mark.parametrize("name, make, shape, wrap", CASES, ids=[c[0] for c in CASES])
def test_empty_sizes_as_torch(
    name: str, make: Callable[[], Any], shape: tuple[Any, ...], wrap: type[Direct]
) -> None:
    small = len({d for d in shape if isinstance(d, str)}) >= 3
    check(make, shape, wrap, range(0, 3) if small else range(0, 4))


def test_transposed_convolution_rule_over_attributes() -> None:
    """A transposed convolution over strides, paddings, dilations, output paddings and kernels
    (1-d, a batch of 0 or 1): torch's rule is the result's size ``(i - 1)*s - 2p + d(k - 1) +
    op + 1`` at least 0, at least 1 and a non-empty input unless the batch is empty."""
    for k, s, p, d, op in itertools.product((1, 2, 3), (1, 2), (0, 1), (1, 2), (0, 1)):
        if op >= max(s, d):
            continue
        check(
            _convt(1, 2, 2, k, stride=s, padding=p, dilation=d, output_padding=op),
            ("b", 2, "h"),
            Direct,
            range(0, 3),
        )


def test_convolution_rule_over_attributes() -> None:
    """A plain convolution over kernels, paddings, strides, dilations and groups (1-d)."""
    for k, s, p, d, g in itertools.product((1, 2), (1, 2), (0, 1), (1, 2), (1, 2)):
        check(
            _conv(1, 2, 2, k, stride=s, padding=p, dilation=d, groups=g), ("b", 2, "h"), Direct, range(0, 3)
        )


def test_guard_reads_as_torch_rule() -> None:
    """The guard of a padded convolution says what torch requires."""
    b, h = ss.dim("b", min=0), ss.dim("h", min=0)
    res = sst.infer(Direct(nn.Conv1d(2, 3, 1, padding=1)), {"x": ss.Tensor((b, 2, h), "float32")})
    assert res.status == "guarded", res.report()
    assert res.valid_when() == "b == 0 or h >= 1", res.valid_when()
    assert not res.valid_at({b: 2, h: 0})
    assert "`b == 0 or h >= 1`" in str(res.why_invalid({b: 2, h: 0}))


def test_mkldnn_batches() -> None:
    """The one place symshape and eager torch differ on purpose: a transposed convolution whose
    result is empty from a non-empty input runs on torch's mkldnn path (a float32 batch of 2 or
    more) and raises on its other paths (a batch of 1: ``Output size is too small``); symshape
    refuses it at every batch but 0."""
    b, h = ss.dim("b", min=0), ss.dim("h", min=0)
    m = Direct(nn.ConvTranspose1d(2, 2, 1, padding=1))  # o = h - 2
    res = sst.infer(m, {"x": ss.Tensor((b, 2, h), "float32")})
    assert _runs(m, {"x": torch.randn(2, 2, 2)}) and not _runs(m, {"x": torch.randn(1, 2, 2)})
    assert not res.valid_at({b: 2, h: 2}) and not res.valid_at({b: 1, h: 2})
    assert res.valid_at({b: 0, h: 2}) and _runs(m, {"x": torch.randn(0, 2, 2)})
    assert res.valid_at({b: 1, h: 3}) and not res.valid_at({b: 0, h: 1})
