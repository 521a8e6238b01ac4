"""Review guards (s13, rv): small hand-written models whose valid sizes have an exact, non-trivial
answer, imported with torch.fx, against eager torch on dense grids.

* ``valid_at`` is True exactly where eager torch runs (every grid point, sizes from 0 or 1);
* at every valid point the output type with the sizes substituted is eager torch's shape;
* ``valid_at`` / ``why_invalid`` on bad assignments answer or raise ``SymshapeError``, never a raw
  exception.

The models: strided and dilated convolutions into a ceil-mode average pool and a fixed Linear
(valid iff the pooled map is 1x4, 2x2 or 4x1); a Whisper-style encoder front (two convolutions,
the second strided, then the whole 16-row position table added, or the table sliced to the
length); a two-level UNet with a ceil-mode pool and transposed convolutions (valid iff
``h % 4 == 0 and w % 4 == 0`` and h, w >= 4); attention over a symbolic width split into 4 heads
by ``view`` (valid iff ``d % 4 == 0`` or the tensor is empty).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest

import symshape as ss

torch = pytest.importorskip("torch", reason="the eager-torch oracle needs torch (CPU)")
nn = torch.nn
F = torch.nn.functional

import symshape.torch as sst  # noqa: E402


class StridedConvNet(nn.Module):  # type: ignore[misc]
    def __init__(self) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(3, 2, 5, stride=3, padding=1)
        self.c2 = nn.Conv2d(2, 2, 3, dilation=2)
        self.pool = nn.AvgPool2d(3, stride=2, ceil_mode=True)
        self.fc = nn.Linear(2 * 2 * 2, 3)

    def forward(self, x: Any) -> Any:
        y = self.pool(F.relu(self.c2(F.relu(self.c1(x)))))
        return self.fc(y.flatten(1))


class WhisperFront(nn.Module):  # type: ignore[misc]
    def __init__(self, sliced: bool) -> None:
        super().__init__()
        self.conv1 = nn.Conv1d(4, 8, 3, padding=1)
        self.conv2 = nn.Conv1d(8, 8, 3, stride=2, padding=1)
        self.embed_positions = nn.Embedding(16, 8)
        self.sliced = sliced

    def forward(self, x: Any) -> Any:
        x = F.gelu(self.conv2(F.gelu(self.conv1(x)))).permute(0, 2, 1)
        if self.sliced:
            return x + self.embed_positions.weight[: x.shape[1]]
        return x + self.embed_positions(torch.arange(self.embed_positions.num_embeddings))


class UNetLike(nn.Module):  # type: ignore[misc]
    def __init__(self, c: int = 2) -> None:
        super().__init__()
        self.enc1 = nn.Conv2d(3, c, 3, padding=1)
        self.enc2 = nn.Conv2d(c, 2 * c, 3, padding=1)
        self.mid = nn.Conv2d(2 * c, 2 * c, 3, padding=1)
        self.up2 = nn.ConvTranspose2d(2 * c, 2 * c, 2, stride=2)
        self.dec2 = nn.Conv2d(4 * c, c, 3, padding=1)
        self.up1 = nn.ConvTranspose2d(c, c, 2, stride=2)
        self.dec1 = nn.Conv2d(2 * c, 1, 1)

    def forward(self, x: Any) -> Any:
        e1 = F.relu(self.enc1(x))
        e2 = F.relu(self.enc2(F.max_pool2d(e1, 2)))
        m = F.relu(self.mid(F.max_pool2d(e2, 2, ceil_mode=True)))
        d2 = F.relu(self.dec2(torch.cat([self.up2(m), e2], dim=1)))
        return self.dec1(torch.cat([self.up1(d2), e1], dim=1))


class HeadsSplit(nn.Module):  # type: ignore[misc]
    def forward(self, x: Any) -> Any:
        b, t, d = x.shape
        q = x.view(b, t, 4, d // 4).transpose(1, 2)
        a = torch.softmax(q @ q.transpose(-1, -2), dim=-1) @ q
        return a.transpose(1, 2).reshape(b, t, d)


Case = tuple[Callable[[], Any], str, tuple[Any, ...], dict[str, int], list[dict[str, int]]]


def _grid(**axes: Any) -> list[dict[str, int]]:
    return [dict(zip(axes, v)) for v in itertools.product(*axes.values())]


#: name -> (model, input name, shape with symbol names, symbols' minimums, grid)
CASES: dict[str, Case] = {
    "strided": (StridedConvNet, "x", ("b", 3, "h", "w"), {"b": 1, "h": 0, "w": 0},
                _grid(b=(1,), h=range(0, 46), w=(0, 14, 17, 18, 20, 23, 24, 29, 30, 35, 36, 41, 42))),
    "whisper_table": (lambda: WhisperFront(False), "x", ("b", 4, "t"), {"b": 1, "t": 0},
                      _grid(b=(1, 2), t=range(0, 70))),
    "whisper_sliced": (lambda: WhisperFront(True), "x", ("b", 4, "t"), {"b": 1, "t": 0},
                       _grid(b=(1, 2), t=range(0, 70))),
    "unet": (UNetLike, "x", ("b", 3, "h", "w"), {"b": 1, "h": 0, "w": 0},
             _grid(b=(1,), h=range(0, 18), w=(0, 1, 2, 3, 4, 5, 6, 8, 12, 13))),
    "heads": (HeadsSplit, "x", ("b", "t", "d"), {"b": 0, "t": 0, "d": 0},
              _grid(b=(0, 1, 2), t=(0, 1, 3), d=range(0, 18))),
}  # fmt: skip


def _imported(name: str) -> tuple[Any, Any, dict[str, ss.Dim]]:
    build, inp, shape, mins, _ = CASES[name]
    torch.manual_seed(0)
    model = build().eval()
    syms = {k: ss.dim(k, min=v) for k, v in mins.items()}
    ty = ss.Tensor(tuple(syms[d] if isinstance(d, str) else d for d in shape), "float32")
    return model, sst.infer(model, {inp: ty}), syms


def _eager(model: Any, shape: tuple[Any, ...], p: dict[str, int]) -> tuple[int, ...] | None:
    x = torch.zeros(tuple(p[d] if isinstance(d, str) else d for d in shape))
    try:
        with torch.no_grad():
            return tuple(model(x).shape)
    except RuntimeError:
        return None


@pytest.mark.parametrize("name", sorted(CASES))
def test_valid_exactly_where_eager_torch_runs(name: str) -> None:
    model, res, syms = _imported(name)
    _, _, shape, _, grid = CASES[name]
    assert res.status == "guarded", res.report()
    out_type = res.type_of(res.program.body)
    wrong = []
    runs = 0
    for p in grid:
        env = {syms[k]: v for k, v in p.items()}
        real = _eager(model, shape, p)
        runs += real is not None
        if res.valid_at(env) != (real is not None):
            wrong.append(f"{p}: eager {'runs' if real else 'fails'}")
        elif real is not None:
            got = tuple(int(d.subs(env)) for d in out_type.shape)
            if got != real:
                wrong.append(f"{p}: type {out_type} gives {got}, eager {real}")
    assert wrong == []
    assert 0 < runs < len(grid)  # the grid has both answers


def test_the_conditions_read_as_stated() -> None:
    """valid_when() of the front with the whole table: its length must be 1 or 16."""
    _, res, _ = _imported("whisper_table")
    assert res.valid_when() == "(t - 1)//2 == 0 or (t - 1)//2 == 15"
    _, res, _ = _imported("whisper_sliced")
    assert res.valid_when() == "t >= 1 and t <= 32"


@pytest.mark.parametrize(
    "env",
    [{}, {"b": 1}, {"b": 1, "t": 2.5}, {"b": 1, "t": "3"}, {"b": 1, "t": None}, {"b": True, "t": 3},
     {"b": 1, "t": 3, "nope": 2}, {0: 1}, [("b", 1)], None],
)  # fmt: skip
def test_bad_assignments_raise_symshape_errors(env: Any) -> None:
    _, res, _ = _imported("whisper_sliced")
    with pytest.raises(ss.SymshapeError):
        res.valid_at(env)


def test_values_outside_the_declared_range_are_invalid_and_say_so() -> None:
    _, res, syms = _imported("whisper_sliced")
    for env in ({syms["b"]: 0, syms["t"]: 3}, {syms["b"]: 1, syms["t"]: -1}):
        assert res.valid_at(env) is False
        assert "outside the declared range" in res.why_invalid(env)
    assert res.valid_at({"b": 1, "t": 10**30}) is False
    assert "t <= 32" in res.why_invalid({"b": 1, "t": 33})
