"""Findings of the PyTorch differential fuzzer (:mod:`tests.torch.test_torch_tf_differential_fuzz`),
minimized, each checked against eager torch at every size of its grid: ``valid_at`` must be True
exactly where torch runs, and where it runs the output's shape and dtype must be symshape's type
with the sizes substituted. Each failed before its fix:

* ``arange`` of a size the importer knows as a number (``arange(x.shape[0])`` of an input
  ``(4, c)``) had no entry range, so indexing a shorter table by it was accepted;
* ``x.squeeze(d)`` of an axis whose constant size is not 1 was an error (torch leaves it);
* ``cumsum``/``cumprod``/``sort`` accepted a dim out of range;
* ``F.pad`` in ``reflect``/``replicate``/``circular`` mode of a tensor whose rank only inference
  knows was not held to torch's rank rule (``k + 1`` or ``k + 2`` dims for ``2 * k`` amounts);
* ``topk``, ``cummax``/``cummin`` and ``median(dim)`` were unsupported;
* ``expand`` of a tensor whose rank only inference knows by fewer sizes than axes was accepted;
* ``narrow`` by a start or length computed from a shape and ``split`` into computed sections
  were unsupported;
* ``chunk(n)`` whose pieces the graph takes from the end (``[-1]``) needed ``d % n == 0``, and any
  chunk of an empty axis was refused (torch gives ``n`` empty pieces);
* ``torch.where`` did not promote (a bool tensor and an int is int64; int32 and int64 tensors);
* ``unflatten`` of a dim out of range of a tensor whose rank only inference knows was accepted,
  and its ``-1`` was ambiguous where another axis is 0;
* ``narrow`` of an empty piece did not check its start (``-d <= start <= d``);
* ``torch.tensor(3) // x`` (``Tensor.__floordiv__``) was unsupported;
* ``F.pad`` in ``reflect``/``replicate`` mode of an empty channel axis was accepted;
* ``x.t()`` of a 3-d tensor whose rank only inference knows was accepted;
* indexing by a list of ints (``x[:, [0, -1]]``) and ``torch.nonzero`` were unsupported;
* ``clamp`` of a bool tensor by an int kept bool (torch: int64);
* ``repeat`` of a tensor whose rank only inference knows by fewer sizes than axes was accepted;
* ``interpolate`` (but ``area``) of an empty channel axis was accepted.

The cases marked as controls passed before too (the rule's other side).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
import torch
import torch.nn.functional as F

import symshape as ss
import symshape.torch as sst


class Fn(torch.nn.Module):
    def __init__(self, f: Callable[..., Any]) -> None:
        super().__init__()
        self.f = f

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> Any:
        return self.f(x, y)


Shape = tuple[int | str, ...]

#: (name, f(x, y), x's shape, y's shape, the symbol n's values)
CASES: list[tuple[str, Callable[..., Any], Shape, Shape, Sequence[int]]] = [
    (
        "index by arange of a known size",
        lambda x, y: y[torch.arange(x.shape[0])],
        (4, "n"),
        (2,),
        range(0, 4),
    ),
    (
        "index_select by arange of a known size",
        lambda x, y: y.index_select(0, torch.arange(x.shape[0])),
        (4, "n"),
        (3,),
        range(0, 3),
    ),
    ("squeeze a constant axis of 4", lambda x, y: x.squeeze((0,)), (4, "n"), (1,), range(0, 4)),
    ("squeeze axes 0 and 1 of (3, 1, n)", lambda x, y: x.squeeze((0, 1)), (3, 1, "n"), (1,), range(0, 4)),
    ("cumsum dim 2 of a 2-d intermediate", lambda x, y: (x + 1).cumsum(2), (3, "n"), (1,), range(1, 3)),
    ("cumsum dim -3 of a 2-d input", lambda x, y: x.cumsum(-3), (3, "n"), (1,), range(1, 3)),
    ("cumprod dim 2", lambda x, y: (x + 1).cumprod(2), (3, "n"), (1,), range(1, 3)),
    ("sort dim -3", lambda x, y: (x + 1).sort(-3)[0], (3, "n"), (1,), range(1, 3)),
    # (a control: a dim in range stays accepted)
    ("cumsum dim -2 is in range", lambda x, y: (x + 1).cumsum(-2), (3, "n"), (1,), range(0, 3)),
    (
        "reflect pad of a 1-d intermediate",
        lambda x, y: F.pad(x.float(), (2, 1), mode="reflect"),
        ("n",),
        (1,),
        range(1, 5),
    ),
    (
        "circular pad of a 2-d intermediate by 4",
        lambda x, y: F.pad(x[None], (1, 1, 1, 1), mode="circular"),
        ("n",),
        (1,),
        range(1, 4),
    ),
    # (a control: the rank rule holds)
    (
        "replicate pad of a 2-d intermediate",
        lambda x, y: F.pad(x[None], (1, 2), mode="replicate"),
        ("n",),
        (1,),
        range(0, 4),
    ),
    ("topk 2 of the last axis", lambda x, y: x.topk(2, -1), (3, "n"), (1,), range(0, 4)),
    (
        "topk of a computed k",
        lambda x, y: x.topk(x.shape[1] // 2, 1, largest=False)[1],
        (3, "n"),
        (1,),
        range(0, 5),
    ),
    ("topk 3 of axis 0 of an intermediate", lambda x, y: (x * 2).topk(3, 0)[0], ("n", 2), (1,), range(1, 5)),
    ("cummax", lambda x, y: x.cummax(1), (3, "n"), (1,), range(0, 3)),
    ("cummin out of range", lambda x, y: (x + 1).cummin(2)[1], (3, "n"), (1,), range(1, 3)),
    ("median along a dim", lambda x, y: x.median(1), (3, "n"), (1,), range(0, 3)),
    ("expand by fewer sizes than axes", lambda x, y: (x * 2).expand(-1, -1), (1, "n", 2), (1,), range(0, 3)),
    ("narrow by a computed length", lambda x, y: x.narrow(1, 0, x.shape[1] - 1), (3, "n"), (1,), range(0, 5)),
    (
        "narrow at a computed start",
        lambda x, y: (x + 1).narrow(1, (x + 1).shape[1] // 2, 1),
        (3, "n"),
        (1,),
        range(0, 5),
    ),
    (
        "narrow from the end by a computed length",
        lambda x, y: (x + 1).narrow(-1, -1, x.shape[0] - 2),
        ("n", 3),
        (1,),
        range(0, 5),
    ),
    (
        "split into computed sections",
        lambda x, y: x.split([1, x.shape[1] - 1], 1),
        (3, "n"),
        (1,),
        range(0, 5),
    ),
    (
        "split an intermediate into computed sections",
        lambda x, y: (x * 2).split([x.shape[1] - 2, 2], -1)[0],
        (3, "n"),
        (1,),
        range(0, 5),
    ),
    ("the last of chunk(3)", lambda x, y: (x + 1).chunk(3, -1)[-1], (3, "n"), (1,), (0, 3, 5, 6, 7)),
    (
        "three pieces of chunk(3), empty too",
        lambda x, y: (lambda t: t[0] + t[1] + t[2])((x + 1).chunk(3, 1)),
        (3, "n"),
        (1,),
        range(0, 8),
    ),
    (
        "where of a bool tensor and an int",
        lambda x, y: torch.where(x > 0, x > 1, 0),
        (3, "n"),
        (1,),
        range(0, 3),
    ),
    (
        "where of int32 and int64 tensors",
        lambda x, y: torch.where(x > 0, x.int(), x.long()),
        (3, "n"),
        (1,),
        range(0, 3),
    ),
    (
        "unflatten a dim out of range",
        lambda x, y: (x + 1).unflatten(-3, (1, -1)),
        (3, "n"),
        (1,),
        range(0, 3),
    ),
    (
        "unflatten by -1 where another axis is 0",
        lambda x, y: (x + 1).unflatten(-2, (1, -1)),
        (3, "n"),
        (1,),
        range(0, 4),
    ),
    (  # (a control)
        "unflatten into computed sizes",
        lambda x, y: (x + 1).unflatten(1, (x.shape[1] // 2, -1)),
        (3, "n"),
        (1,),
        range(0, 6),
    ),
    ("narrow an empty piece past the end", lambda x, y: (x + 1).narrow(1, 2, 0), (3, "n"), (1,), range(0, 4)),
    (
        "narrow an empty piece at a computed start",
        lambda x, y: x.narrow(1, x.shape[0], 0),
        (3, "n"),
        (1,),
        range(0, 5),
    ),
    (
        "a constant tensor // a traced one",
        lambda x, y: torch.tensor(3) // (x + 1),
        (3, "n"),
        (1,),
        range(0, 3),
    ),
    (
        "replicate pad of an empty channel axis",
        lambda x, y: F.pad(x * 1, (1, 1), mode="replicate"),
        (2, "n", 4),
        (1,),
        range(0, 3),
    ),
    (  # (a control)
        "reflect pad of an empty batch",
        lambda x, y: F.pad(x * 1, (1, 1), mode="reflect"),
        ("n", 3, 4),
        (1,),
        range(0, 3),
    ),
    ("t() of a 3-d intermediate", lambda x, y: (x[None] * 2).t(), (3, "n"), (1,), range(0, 3)),
    ("index by a list of ints", lambda x, y: x[:, [0, -1]], (3, "n"), (1,), range(0, 4)),
    ("nonzero", lambda x, y: torch.nonzero(x), (3, "n"), (1,), range(0, 3)),
    ("clamp of a bool tensor by an int", lambda x, y: (x > 0).clamp(min=0), (3, "n"), (1,), range(0, 3)),
    ("repeat by fewer sizes than axes", lambda x, y: (x[None] * 2).repeat(1, 3), (3, "n"), (1,), range(0, 3)),
    ("interpolate of empty channels", lambda x, y: F.interpolate(x, size=4), (2, "n", 3), (1,), range(0, 3)),
]


def _shape(s: Shape, n: Any) -> tuple[Any, ...]:
    return tuple(n if d == "n" else d for d in s)


def _outputs(v: Any) -> list[torch.Tensor]:
    return list(v) if isinstance(v, tuple) else [v]


@pytest.mark.parametrize("name,f,xs,ys,sizes", CASES, ids=[c[0] for c in CASES])
def test_finding_agrees_with_torch(
    name: str, f: Callable[..., Any], xs: Shape, ys: Shape, sizes: Sequence[int]
) -> None:
    n = ss.dim("n", min=0)
    model = Fn(f)
    res = sst.infer(
        model, {"x": ss.Tensor(_shape(xs, n), "float32"), "y": ss.Tensor(_shape(ys, n), "float32")}
    )
    assert not any(e.code == "unsupported-op" for e in res.errors), res.report()
    verdicts = []
    for k in sizes:
        x, y = torch.randn(_shape(xs, k)), torch.randn(_shape(ys, k))
        try:
            got = _outputs(model(x, y))
        except Exception:
            got = None
        valid = bool(res.valid_at({n: k}))
        verdicts.append((k, got is not None, valid))
        if got is None or not valid:
            continue
        t = res.type_of("output")
        types = list(t.fields) if isinstance(t, ss.TupleType) else [t]
        assert len(types) == len(got), (k, t)
        for ty, g in zip(types, got):
            assert isinstance(ty, ss.TensorType)
            st = ty.subs({n: k})
            # (a size only the run decides, nonzero's u0, matches any)
            want = tuple(int(d) if d.is_constant else n for d, n in zip(st.dims, g.shape))
            assert len(st.dims) == g.dim() and want == tuple(g.shape), (k, str(ty), tuple(g.shape))
            assert st.dtype == str(g.dtype).removeprefix("torch."), (k, str(ty), g.dtype)
    assert all(runs == valid for _, runs, valid in verdicts), (verdicts, res.report())
    # each case has a size where torch runs or refuses as the case says: the table is not vacuous
    assert any(runs for _, runs, _ in verdicts) or res.status == "error", verdicts


def test_cases_cover_both_verdicts() -> None:
    """Some cases torch refuses at every size (symshape must say error), others it runs."""
    refused = {
        "index by arange of a known size",
        "index_select by arange of a known size",
        "cumsum dim 2 of a 2-d intermediate",
        "sort dim -3",
        "reflect pad of a 1-d intermediate",
        "cummin out of range",
        "unflatten a dim out of range",
        "expand by fewer sizes than axes",
        "t() of a 3-d intermediate",
        "repeat by fewer sizes than axes",
    }
    for name, f, xs, ys, sizes in CASES:
        if name not in refused:
            continue
        for k in sizes:
            with pytest.raises((RuntimeError, IndexError, NotImplementedError)):
                f(torch.randn(_shape(xs, k)), torch.randn(_shape(ys, k)))
    assert set(refused) <= {c[0] for c in CASES}
