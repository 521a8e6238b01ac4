"""An exported program runs only at the sizes ``torch.export`` specialised its inputs to (review
s13 U1): a static export, or a Python check under ``Dim.AUTO`` (transformers' ViT refuses any image
but its own size). The type given may name symbols there; the result then needs them equal to the
recorded sizes, exactly where the exported program accepts its input."""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import pytest

import symshape as ss

torch = pytest.importorskip("torch")
sst = pytest.importorskip("symshape.torch")
from torch.export import Dim, export  # noqa: E402


class _Checked(torch.nn.Module):  # type: ignore[misc]
    """Like HF ViT's patch embedding: refuses any image but 32 x 32."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Conv2d(3, 4, 8, stride=8)

    def forward(self, x: Any) -> Any:
        if x.shape[2] != 32 or x.shape[3] != 32:
            raise ValueError(f"image size {tuple(x.shape[2:])} is not 32x32")
        return self.proj(x).flatten(2)


def _runs(ep: Any, shape: tuple[int, ...]) -> bool:
    try:
        ep.module()(torch.zeros(*shape))
    except Exception:  # (the exported program's guard, or the model's own check)
        return False
    return True


@pytest.fixture(scope="module")
def auto_export() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dyn = {"x": {0: Dim.AUTO, 2: Dim.AUTO, 3: Dim.AUTO}}
        return export(_Checked().eval(), (torch.zeros(2, 3, 32, 32),), dynamic_shapes=dyn)


def test_sizes_pinned_by_a_python_check(auto_export: Any) -> None:
    b, h, w = ss.dims("b h w")
    res = sst.infer(auto_export, {"x": ss.Tensor((b, 3, h, w), "float32")})
    assert res.status == "guarded" and res.valid_when() == "h == 32 and w == 32"
    for bb, hh, ww in itertools.product((1, 3), (16, 32, 40), (8, 32)):
        assert res.valid_at({b: bb, h: hh, w: ww}) is _runs(auto_export, (bb, 3, hh, ww)), (bb, hh, ww)
    why = res.why_invalid({b: 1, h: 16, w: 32})
    assert "torch.export_sizes needs `h == 32`, which is false at h = 16" in why, why


def test_a_static_export_runs_only_at_its_example_sizes() -> None:
    ep = export(torch.nn.Conv2d(3, 4, 8, stride=8).eval(), (torch.zeros(2, 3, 32, 32),))
    b, h, w = ss.dims("b h w")
    res = sst.infer(ep, {"input": ss.Tensor((b, 3, h, w), "float32")})
    assert res.valid_when() == "b == 2 and h == 32 and w == 32"
    for bb, hh in itertools.product((1, 2), (16, 32)):
        assert res.valid_at({b: bb, h: hh, w: 32}) is _runs(ep, (bb, 3, hh, 32))
    # the type given with those very sizes needs nothing
    exact = sst.infer(ep, {"input": ss.Tensor((2, 3, 32, 32), "float32")})
    assert exact.status == "ok"


def test_dynamic_axes_stay_symbolic() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ep = export(
            torch.nn.Conv2d(3, 4, 3).eval(),
            (torch.zeros(2, 3, 16, 16),),
            dynamic_shapes={"input": {0: Dim("b"), 2: Dim("h", min=4), 3: Dim("w", min=4)}},
        )
    b, h, w = ss.dims("b h w")
    res = sst.infer(ep, {"input": ss.Tensor((b, 3, h, w), "float32")})
    assert res.status == "guarded" and res.valid_when() == "h >= 3 and w >= 3"
    assert res.valid_at({b: 5, h: 7, w: 9}) and _runs(ep, (5, 3, 7, 9))
