"""Padding modes that copy the input (``reflect``, ``replicate``, ``circular``) against eager torch:
convolution modules with ``padding_mode``, the padding modules and ``F.pad``. torch raises when
reflect padding is not smaller than the input (``p < n``) or circular padding wraps more than once
(``p <= n``); replicate pads any size. The amounts may be computed from sizes at run time
(``F.pad(x, (h // 2, h - 1, 0, 0), mode="reflect")``). At every point of a grid of image sides ``valid_at``
equals whether eager torch runs, and where it runs every node's shape equals torch's; the same for
the programs ``torch.export`` gives (``aten.pad`` with the mode).
"""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch.export import Dim, export

import symshape as ss
import symshape.torch as sst
from torch_zoo.oracle import (
    Spec,
    Wrap,
    assert_verdicts,
    check_model,
    example_of,
    fn_module,
    substitute,
    types_of,
)

X: dict[str, Spec] = {"x": ((1, 3, "h", "w"), "float32")}
GRID = [{"h": h, "w": w} for h, w in itertools.product(range(1, 7), range(1, 7))]

CASES: list[tuple[str, Any]] = [
    ("conv_reflect", torch.nn.Conv2d(3, 4, 3, padding=2, padding_mode="reflect")),
    ("conv_reflect_same", torch.nn.Conv2d(3, 4, (2, 4), padding="same", padding_mode="reflect")),
    ("conv_reflect_dilated", torch.nn.Conv2d(3, 4, 3, padding=(3, 1), dilation=2, padding_mode="reflect")),
    ("conv_circular", torch.nn.Conv2d(3, 4, 3, padding=(1, 3), padding_mode="circular")),
    ("conv_replicate", torch.nn.Conv2d(3, 4, 3, padding=2, stride=2, padding_mode="replicate")),
    ("conv1d_reflect", torch.nn.Conv1d(3, 4, 3, padding=4, padding_mode="reflect")),
    ("reflection_pad", torch.nn.ReflectionPad2d((1, 3, 0, 2))),
    ("replication_pad", torch.nn.ReplicationPad2d(3)),
    ("circular_pad", torch.nn.CircularPad2d(2)),
    ("zero_pad", torch.nn.ZeroPad2d(2)),
    ("F_pad_reflect_computed", lambda x: F.pad(x.relu(), (2, 1, 1, 3), mode="reflect")),
    ("F_pad_circular", lambda x: F.pad(x, (0, 4, 0, 0), mode="circular")),
    ("F_pad_replicate_computed", lambda x: F.pad(x * 2, (1, 1, 5, 0), mode="replicate")),
    # amounts computed from sizes at run time: the same conditions, on those sizes
    ("F_pad_reflect_by_size", lambda x: F.pad(x, (x.size(2) // 2, x.size(2) - 1, 0, 0), mode="reflect")),
    ("F_pad_reflect_crop_by_size", lambda x: F.pad(x, (x.size(2) - 3, 1, 1, 0), mode="reflect")),
    ("F_pad_circular_by_size", lambda x: F.pad(x, (x.size(2), 0, 0, x.size(3) // 2), mode="circular")),
    ("F_pad_replicate_by_size", lambda x: F.pad(x.relu(), (x.size(2), 1, 2, x.size(3)), mode="replicate")),
]


class Flat(torch.nn.Module):
    """A 1-d convolution of the image's rows laid end to end."""

    def __init__(self, m: torch.nn.Module) -> None:
        super().__init__()
        self.m = m

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.m(x.flatten(2))  # type: ignore[no-any-return]


def _model(case: Any) -> torch.nn.Module:
    name, m = case
    if name == "conv1d_reflect":
        return Flat(m)
    return Wrap(m) if isinstance(m, torch.nn.Module) else fn_module(m, 1)


def _runs(model: torch.nn.Module, p: dict[str, int]) -> bool:
    try:
        with torch.no_grad():
            model(**example_of(X, p))
    except RuntimeError:
        return False
    return True


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_traced_verdicts_and_shapes_equal_eager_torch(case: Any) -> None:
    model = _model(case)
    res = sst.infer(model, types_of(X))
    assert res.errors == [] and res.unresolved == [], res.report()
    truth = [_runs(model, p) for p in GRID]
    assert_verdicts(res, GRID, truth)
    for p in [p for p, t in zip(GRID, truth) if t][::5]:
        assert check_model(res, model, example_of(X, p), p) == [], p


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_exported_verdicts_and_shapes_equal_eager_torch(case: Any) -> None:
    model = _model(case)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ep = export(
            model, (), example_of(X, {"h": 7, "w": 9}), dynamic_shapes={"x": {2: Dim.DYNAMIC, 3: Dim.DYNAMIC}}
        )
    res = sst.infer(ep, types_of(X))
    assert res.errors == [] and res.unresolved == [], res.report()
    out = next(n for n in ep.graph.nodes if n.op == "output").args[0][0]
    for p in GRID:
        ran = _runs(model, p)
        assert bool(res.valid_at(p)) == ran, (p, res.valid_when())
        if ran:
            got = res.type_of(out.name)
            assert isinstance(got, ss.TensorType) and got.ndim is not None
            with torch.no_grad():
                want = tuple(model(**example_of(X, p)).shape)
            assert tuple(substitute(d, p) for d in got.dims) == want, p


def test_reflect_condition_is_explained() -> None:
    """``padding=2, padding_mode="reflect"``: torch needs both sides at least 3; the reason names
    the entries reflect padding reads."""
    res = sst.infer(Wrap(CASES[0][1]), types_of(X))
    assert res.valid_when() == "w >= 3 and h >= 3"
    why = res.why_invalid({"h": 2, "w": 5})
    # (the last axis is padded first, as torch does)
    assert "take of indices in [1, 2] from axis 2 of `Tensor[(1, 3, h, w + 4), float32]` (size h)" in why, why
    assert "needs `h >= 3`, which is false at h = 2" in why, why
    assert res.type_of("m") == ss.Tensor((1, 4, ss.dim("h") + 2, ss.dim("w") + 2), "float32")


def test_reflect_padding_too_large_is_an_error() -> None:
    """A known size: reflect padding of 3 on a side of 3 raises in torch and is an error here."""
    model = Wrap(torch.nn.Conv2d(3, 4, 3, padding=3, padding_mode="reflect"))
    with pytest.raises(RuntimeError):
        model(torch.zeros(1, 3, 3, 8))
    res = sst.infer(model, {"x": ss.Tensor((1, 3, 3, ss.dim("w")), "float32")})
    assert res.status == "error", res.report()
    assert res.errors[0].code == "constraint-violated", res.report()


def test_pad_mode_rank_rule() -> None:
    """torch pads k axes in these modes only of a (k + 1)-d or (k + 2)-d input."""
    model = fn_module(lambda x: F.pad(x, (1, 1), mode="reflect"), 1)
    with pytest.raises(NotImplementedError):
        model(torch.zeros(1, 3, 4, 4))
    res = sst.infer(model, types_of(X))
    # a rank error of the model (torch refuses it at every size), not an operator symshape lacks
    assert res.status == "error" and res.errors[0].code == "rank-mismatch", res.report()
    assert "F.pad in mode 'reflect' by 2 values needs a 2-d to 3-d input" in res.errors[0].message


def test_replicate_decomposed_program_equals_eager_torch() -> None:
    """``run_decompositions`` spells replicate padding ``x[clamp(arange(-p, n + p), 0, n - 1)]``: the
    clamp by the size ``n - 1`` keeps the range, so no condition is added (torch pads any size)."""
    model = Wrap(CASES[4][1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ep = export(
            model, (), example_of(X, {"h": 7, "w": 9}), dynamic_shapes={"x": {2: Dim.DYNAMIC, 3: Dim.DYNAMIC}}
        )
    res = sst.infer(ep.run_decompositions(), types_of(X))
    assert res.status == "ok", res.report()
