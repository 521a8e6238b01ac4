"""Transposed convolutions (symshape.torch.convert.conv) against torch: the module, the
function and the exported ``aten.convolution(..., transposed=True)``, every node's shape at
concrete sizes, and the output size as torch's formula
``(i - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1``."""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.export import Dim, export

import symshape as ss
import symshape.torch as sst
from torch_zoo.oracle import Wrap, check_fn, export_mismatches, fn_module, types_of

IMG = {"x": (("b", 4, "h", "w"), "float32")}
IMG_SIZES = [{"b": 2, "h": 5, "w": 7}, {"b": 1, "h": 3, "w": 3}, {"b": 1, "h": 8, "w": 2}]

MODULES: list[tuple[nn.Module, tuple[int, int, int, int, int]]] = [
    # the module, and along H: (stride, padding, dilation, kernel, output_padding)
    (nn.ConvTranspose2d(4, 2, 2, stride=2), (2, 0, 1, 2, 0)),
    (nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1), (2, 1, 1, 3, 1)),
    (nn.ConvTranspose2d(4, 6, (3, 1), stride=(1, 3), dilation=2, groups=2), (1, 0, 2, 3, 0)),
    (nn.ConvTranspose2d(4, 2, 1, stride=3), (3, 0, 1, 1, 0)),
    (nn.ConvTranspose2d(4, 4, 3, padding=1, groups=4, bias=False), (1, 1, 1, 3, 0)),
    (nn.ConvTranspose2d(4, 3, 5, stride=2, padding=2, output_padding=1), (2, 2, 1, 5, 1)),
]


@pytest.mark.parametrize("module,params", MODULES, ids=[f"m{i}" for i in range(len(MODULES))])
def test_conv_transpose2d_module(module: nn.Module, params: tuple[int, int, int, int, int]) -> None:
    res = check_fn(Wrap(module), IMG, IMG_SIZES)
    s, p, d, k, op = params
    h = ss.dim("h")
    out = res.type_of("m")
    assert isinstance(out, ss.TensorType)
    assert out.dims[1] == module.out_channels  # type: ignore[attr-defined]
    assert out.dims[2] == (h - 1) * s - 2 * p + d * (k - 1) + op + 1


FUNCTIONS: list[tuple[Any, tuple[int, ...]]] = [
    # the call, and the weight's shape (C_in, C_out / groups, *k)
    (lambda x, w: F.conv_transpose2d(x, w), (4, 3, 3, 3)),
    (lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1), (4, 3, 3, 3)),
    (
        lambda x, w: F.conv_transpose2d(x, w, w[0, :, 0, 0], stride=(2, 3), output_padding=(1, 2)),
        (4, 3, 3, 3),
    ),
    (lambda x, w: F.conv_transpose2d(x, w, groups=2, dilation=2), (4, 1, 3, 2)),
]


@pytest.mark.parametrize("fn,weight", FUNCTIONS, ids=[f"f{i}" for i in range(len(FUNCTIONS))])
def test_conv_transpose2d_function(fn: Any, weight: tuple[int, ...]) -> None:
    check_fn(fn_module(fn, 2), {**IMG, "y": (weight, "float32")}, IMG_SIZES)


def test_a_computed_weight_needs_its_kernel_size() -> None:
    res = sst.infer(
        fn_module(lambda x, w: F.conv_transpose2d(x, w[:, :1], groups=2), 2),
        types_of({**IMG, "y": ((4, 3, 3, 3), "float32")}),
    )
    assert [d.code for d in res.errors] == ["unsupported-op"]
    assert "kernel size" in res.errors[0].message


def test_conv_transpose1d_and_3d() -> None:
    check_fn(
        Wrap(nn.ConvTranspose1d(4, 5, 4, stride=3, padding=1)),
        {"x": (("b", 4, "t"), "float32")},
        [{"b": 2, "t": 9}, {"b": 1, "t": 1}],
    )
    check_fn(
        fn_module(lambda x, w: F.conv_transpose3d(x, w, stride=2), 2),
        {"x": (("b", 2, "d", 3, 4), "float32"), "y": ((2, 3, 2, 2, 2), "float32")},
        [{"b": 1, "d": 4}, {"b": 2, "d": 1}],
    )


def test_wrong_channels_are_reported_at_the_layer() -> None:
    res = sst.infer(Wrap(nn.ConvTranspose2d(3, 2, 2, stride=2)), types_of(IMG))
    assert res.status == "error"
    assert res.errors[0].code != "unsupported-op", res.report()
    assert any("self.m.weight" in n.message for n in res.errors[0].notes), res.report()


class Up(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.up(x).relu()


def test_exported_transposed_convolution() -> None:
    torch.manual_seed(0)
    model = Up().eval()
    ep = export(model, (torch.randn(2, 4, 5, 6),), dynamic_shapes={"x": {0: Dim.DYNAMIC, 2: Dim.DYNAMIC}})
    types = types_of({"x": (("b", 4, "h", 6), "float32")})
    for prog in (ep, ep.run_decompositions()):
        targets = {str(n.target) for n in prog.graph.nodes}
        assert targets & {"aten.conv_transpose2d.input", "aten.convolution.default"}, targets
        res = sst.infer(prog, types)
        assert res.ok, res.report()
        assert export_mismatches(res, prog, types) == []
