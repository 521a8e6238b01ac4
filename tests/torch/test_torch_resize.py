"""Resizing (symshape.torch.convert.resize) against torch: ``F.interpolate`` by size and by
scale factor, ``nn.Upsample``, a size read from another tensor (``size=skip.shape[2:]``), and the
``aten.upsample_*`` overloads of exported programs."""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import symshape as ss
import symshape.torch as sst
from torch_zoo.oracle import Wrap, check_fn, export_mismatches, fn_module, types_of

IMG = {"x": (("b", 3, "h", "w"), "float32")}
SIZES = [{"b": 2, "h": 5, "w": 7}, {"b": 1, "h": 4, "w": 1}, {"b": 1, "h": 9, "w": 6}]

CALLS = [
    lambda x: F.interpolate(x, scale_factor=2),
    lambda x: F.interpolate(x, scale_factor=2.0, mode="bilinear", align_corners=False),
    lambda x: F.interpolate(x, scale_factor=(2, 3), mode="nearest"),
    lambda x: F.interpolate(x, scale_factor=1.5, mode="bicubic"),
    lambda x: F.interpolate(x, size=(8, 4), mode="bilinear"),
    lambda x: F.interpolate(x, size=6),
    lambda x: F.interpolate(x.relu(), size=x.shape[2:]),
    lambda x: F.interpolate(x.relu(), size=x.relu().shape[-2:], mode="bilinear") + x,
    lambda x: F.interpolate(x.relu()[:, :, ::2], size=x.shape[2]),
    lambda x: F.interpolate(x.flatten(2), scale_factor=2, mode="linear"),
]


@pytest.mark.parametrize("fn", CALLS, ids=[f"r{i}" for i in range(len(CALLS))])
def test_interpolate(fn: Any) -> None:
    check_fn(fn_module(fn, 1), IMG, SIZES)


@pytest.mark.parametrize(
    "module",
    [
        nn.Upsample(scale_factor=2, mode="nearest"),
        nn.Upsample(size=(3, 5)),
        nn.UpsamplingBilinear2d(scale_factor=2),
        nn.UpsamplingNearest2d(size=4),
    ],
)
def test_upsample_modules(module: nn.Module) -> None:
    check_fn(Wrap(module), IMG, SIZES)


def test_scale_factor_types() -> None:
    res = check_fn(fn_module(CALLS[3], 1), IMG, SIZES)
    b, h, w = ss.dims("b h w")
    assert res.type_of("interpolate") == ss.Tensor((b, 3, (3 * h) // 2, (3 * w) // 2), "float32")


class UpCat(nn.Module):
    """A UNet decoder step: upsample to the skip's size, concatenate."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        skip = x.relu()
        low = F.max_pool2d(skip, 2)
        up = F.interpolate(low, size=skip.shape[2:], mode="bilinear", align_corners=False)
        return torch.cat([up, skip], dim=1)


def test_exported_upsampling() -> None:
    from torch.export import Dim, export

    model = UpCat()
    ep = export(model, (torch.randn(2, 3, 8, 6),), dynamic_shapes={"x": {0: Dim.DYNAMIC, 2: Dim.DYNAMIC}})
    types = types_of({"x": (("b", 3, "h", 6), "float32")})
    res = sst.infer(ep, types)
    assert res.ok, res.report()
    assert export_mismatches(res, ep, types) == []
    check_fn(model, IMG, [SIZES[0], SIZES[2]])


class _Up(nn.Module):
    """milesial/Pytorch-UNet's ``Up``: bilinear upsampling, pad to the skip, concatenate, conv."""

    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)
        self.conv = nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(inplace=True))

    def forward(self, x1: torch.Tensor, x2: torch.Tensor) -> torch.Tensor:
        x1 = self.up(x1)
        diff_y = x2.size()[2] - x1.size()[2]
        diff_x = x2.size()[3] - x1.size()[3]
        x1 = F.pad(x1, [diff_x // 2, diff_x - diff_x // 2, diff_y // 2, diff_y - diff_y // 2])
        return self.conv(torch.cat([x2, x1], dim=1))


class MilesialUNet(nn.Module):
    def __init__(self, w: int = 4) -> None:
        super().__init__()
        self.inc = nn.Conv2d(3, w, 3, padding=1)
        self.down1 = nn.Conv2d(w, 2 * w, 3, padding=1)
        self.down2 = nn.Conv2d(2 * w, 2 * w, 3, padding=1)
        self.up1 = _Up(4 * w, w)
        self.up2 = _Up(2 * w, w)
        self.outc = nn.Conv2d(w, 2, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x1 = self.inc(x)
        x2 = self.down1(F.max_pool2d(x1, 2))
        x3 = self.down2(F.max_pool2d(x2, 2))
        return self.outc(self.up2(self.up1(x3, x2), x1))


def test_a_unet_that_pads_to_its_skips_takes_every_size() -> None:
    """Odd sizes too: the padding makes up for the pooling's floor, so the output is the input's
    size wherever both poolings have a row and a column."""
    res = check_fn(MilesialUNet(), IMG, [{"b": 2, "h": 9, "w": 13}, {"b": 1, "h": 4, "w": 7}])
    b, h, w = ss.dims("b h w")
    assert res.type_of("outc") == ss.Tensor((b, 2, h, w), "float32")
    assert all(g.holds({b: 1, h: 5, w: 4}) for g in res.guards)
    assert not all(g.holds({b: 1, h: 3, w: 8}) for g in res.guards)  # h // 4 == 0


SHUFFLES = [
    (lambda x: F.pixel_shuffle(x, 2), {"x": (("b", 8, "h", "w"), "float32")}),
    (lambda x: F.pixel_shuffle(x.relu(), 2), {"x": (("b", 8, "h", "w"), "float32")}),
    (lambda x: F.pixel_shuffle(x, 3), {"x": ((9, "h", "w"), "float32")}),
    (lambda x: F.pixel_unshuffle(x, 2), {"x": (("b", 3, "h", "w"), "float32")}),
    (lambda x: F.pixel_shuffle(F.pixel_unshuffle(x.relu(), 2), 2), {"x": (("b", 3, "h", "w"), "float32")}),
]


@pytest.mark.parametrize("fn,specs", SHUFFLES, ids=[f"p{i}" for i in range(len(SHUFFLES))])
def test_pixel_shuffle(fn: Any, specs: dict[str, Any]) -> None:
    check_fn(fn_module(fn, 1), specs, [{"b": 2, "h": 4, "w": 6}, {"b": 1, "h": 2, "w": 8}])


def test_pixel_shuffle_module() -> None:
    check_fn(Wrap(nn.PixelShuffle(3)), {"x": (("b", 9, "h", "w"), "float32")}, [{"b": 2, "h": 3, "w": 1}])


def test_pixel_shuffle_needs_the_channels_to_divide() -> None:
    six = types_of({"x": (("b", 6, 4, 4), "float32")})
    res = sst.infer(fn_module(lambda x: F.pixel_shuffle(x, 2), 1), six)
    assert res.status == "error" and res.errors[0].code == "reshape-size", res.report()
    b, h, w = ss.dims("b h w")
    res = sst.infer(Wrap(nn.PixelUnshuffle(2)), types_of(IMG))
    assert res.status == "guarded", res.report()
    assert all(g.holds({b: 1, h: 4, w: 6}) for g in res.guards)
    assert not all(g.holds({b: 1, h: 5, w: 6}) for g in res.guards)
