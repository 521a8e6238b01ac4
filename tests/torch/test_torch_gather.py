"""symshape.torch.convert.gather: indexing by several tensors, ``torch.gather`` and ``torch.diff``
against eager torch. Each function is imported at symbolic sizes (traced with torch.fx, and
exported with ``torch.export`` for the aten spellings), then at every size of a small grid
``valid_at`` equals whether eager torch runs, and where it runs every node's shape equals torch's
(fx), or the output's (export). Integer inputs are indices and hold zeros
(their range is not declared, so only shapes decide); the ``arange`` cases have ranged indices,
whose bounds are guards.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch
from torch.export import Dim, export

import symshape as ss
import symshape.torch as sst
from torch_zoo.oracle import Spec, assert_verdicts, check_model, export_point, fn_module, substitute, types_of

F32, I64 = "float32", "int64"


def _gather_arange(x: torch.Tensor, i: torch.Tensor) -> torch.Tensor:
    return torch.gather(x, 1, torch.arange(i.shape[1]).expand(x.shape[0], i.shape[1]))


def _index_arange(x: torch.Tensor, i: torch.Tensor, j: torch.Tensor) -> torch.Tensor:
    return x[torch.arange(i.shape[0]), torch.arange(j.shape[0])]


def _mask_pattern(x: torch.Tensor, i: torch.Tensor) -> torch.Tensor:
    """transformers' mask construction: ``x[batch[:, None, None], q[None, :, None]]``."""
    b = torch.arange(x.shape[0])[:, None, None]
    q = torch.arange(i.shape[0])[None, :, None]
    return x[b, q]


# (id, function, input specs, sizes each symbol takes)
CASES: list[tuple[str, Callable[..., Any], dict[str, Spec], dict[str, tuple[int, ...]]]] = [
    (
        "gather_last",
        lambda x, i: torch.gather(x, 1, i),
        {"x": (("a", "n"), F32), "y": (("c", "m"), I64)},
        {"a": (1, 3), "n": (2, 4), "c": (1, 2, 3), "m": (1, 5)},
    ),
    (
        "gather_first",
        lambda x, i: torch.gather(x, 0, i),
        {"x": (("a", "n"), F32), "y": (("c", "m"), I64)},
        {"a": (1, 3), "n": (2, 4), "c": (1, 5), "m": (1, 2, 4, 5)},
    ),
    (
        "gather_middle",
        lambda x, i: x.gather(1, i),
        {"x": (("a", "n", "k"), F32), "y": (("c", "m", "j"), I64)},
        {"a": (2,), "n": (3,), "k": (2, 3), "c": (1, 2, 3), "m": (1, 4), "j": (1, 3)},
    ),
    (
        "gather_arange",
        _gather_arange,
        {"x": (("a", "n"), F32), "y": (("c", "m"), I64)},
        {"a": (1, 2), "n": (3, 4), "c": (3,), "m": (1, 3, 4, 5)},
    ),
    # tensors computed in the traced module: neither rank is known at import time
    (
        "gather_computed_last",
        lambda x, i: torch.gather(x.log_softmax(-1), 2, i.unsqueeze(2)).squeeze(2),
        {"x": (("a", "n", "k"), F32), "y": (("c", "m"), I64)},
        {"a": (1, 2), "n": (2, 3), "k": (1, 4), "c": (1, 2, 3), "m": (1, 3, 4)},
    ),
    (
        "gather_computed_first",
        lambda x, i: torch.gather(x * 2, 0, i + 0),
        {"x": (("a", "n"), F32), "y": (("c", "m"), I64)},
        {"a": (1, 3), "n": (2, 4), "c": (1, 5), "m": (1, 2, 4, 5)},
    ),
    (
        "gather_computed_negative_dim",
        lambda x, i: x.relu().gather(-2, i.relu()),
        {"x": (("a", "n", "k"), F32), "y": (("c", "m", "j"), I64)},
        {"a": (2,), "n": (3,), "k": (2, 3), "c": (1, 2, 3), "m": (1, 4), "j": (1, 3)},
    ),
    (
        "diff",
        lambda x: torch.diff(x),
        {"x": (("a", "n"), F32)},
        {"a": (1, 2), "n": (1, 2, 5)},
    ),
    (
        "diff_prepend",
        lambda x, y: torch.diff(x, n=2, dim=0, prepend=y),
        {"x": (("a", "n"), F32), "y": (("c", "m"), F32)},
        {"a": (1, 3), "n": (2, 3), "c": (1, 2), "m": (2, 3)},
    ),
    (
        "diff_append",
        lambda x, y: torch.diff(x, dim=1, append=y),
        {"x": (("a", "n"), F32), "y": (("c", "m"), F32)},
        {"a": (2, 3), "n": (1, 3), "c": (2, 3), "m": (1, 2)},
    ),
    (
        "index_two",
        lambda x, i, j: x[i, j],
        {"x": (("a", "n", 3), F32), "y": (("c",), I64), "z": (("m",), I64)},
        {"a": (1, 2), "n": (2,), "c": (1, 2, 3), "m": (1, 2, 3)},
    ),
    (
        "index_outer",
        lambda x, i, j: x[i, j, :],
        {"x": (("a", "n", 3), F32), "y": (("c", 1), I64), "z": (("m",), I64)},
        {"a": (1, 2), "n": (2,), "c": (1, 3), "m": (2, 4)},
    ),
    (
        "index_arange",
        _index_arange,
        {"x": (("a", "n"), F32), "y": (("c",), I64), "z": (("m",), I64)},
        {"a": (2, 3), "n": (1, 3), "c": (1, 2, 3, 4), "m": (1, 2, 3, 4)},
    ),
    (
        "index_mask_pattern",
        _mask_pattern,
        {"x": (("a", "n", 2), F32), "y": (("c",), I64)},
        {"a": (1, 2), "n": (2, 4), "c": (1, 2, 4, 5)},
    ),
]


def _points(sizes: dict[str, tuple[int, ...]]) -> list[dict[str, int]]:
    names = sorted(sizes)
    return [dict(zip(names, combo)) for combo in itertools.product(*(sizes[n] for n in names))]


def _example(specs: dict[str, Spec], p: dict[str, int]) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(sum(p.values()))
    out: dict[str, torch.Tensor] = {}
    for name, (shape, dtype) in specs.items():
        concrete = tuple(p[d] if isinstance(d, str) else d for d in shape)
        if dtype == I64:
            out[name] = torch.zeros(concrete, dtype=torch.int64)  # indices: in range of any axis
        else:
            out[name] = torch.randn(concrete, generator=g)
    return out


def _runs(model: torch.nn.Module, example: dict[str, torch.Tensor]) -> bool:
    try:
        with torch.no_grad():
            model(**example)
    except Exception:
        return False
    return True


def _env(specs: dict[str, Spec], p: dict[str, int]) -> dict[ss.Dim, int]:
    return {ss.dim(k): v for k, v in p.items()}


def _output_shape(res: Any, graph: Any, p: dict[str, int]) -> tuple[int, ...]:
    out = next(n for n in graph.nodes if n.op == "output").args[0]
    node = out[0] if isinstance(out, (tuple, list)) else out
    t = res.type_of(node.name)
    return tuple(substitute(d, p) for d in t.dims)


def _eager_shape(model: torch.nn.Module, example: dict[str, torch.Tensor]) -> tuple[int, ...]:
    with torch.no_grad():
        return tuple(model(**example).shape)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_traced_verdicts_and_shapes_equal_eager_torch(case: Any) -> None:
    _, f, specs, sizes = case
    model = fn_module(f, len(specs))
    res = sst.infer(model, types_of(specs))
    assert res.errors == [] and res.unresolved == [], res.report()
    points = _points(sizes)
    truth = [_runs(model, _example(specs, p)) for p in points]
    assert any(truth)
    assert_verdicts(res, points, truth, lambda p: _env(specs, p))
    for p in [p for p, t in zip(points, truth) if t][:4]:
        assert check_model(res, model, _example(specs, p), p) == [], p


# exported at a valid size with distinct sizes, x[arange(c), arange(m)] has c == 1 or m == 1: torch
# specialises that size, so the program holds at those sizes only (not a question for symshape)
SPECIALISED_BY_EXPORT = {"index_arange"}


EXPORTED = [c for c in CASES if c[0] not in SPECIALISED_BY_EXPORT]


@pytest.mark.parametrize("case", EXPORTED, ids=[c[0] for c in EXPORTED])
def test_exported_verdicts_and_shapes_equal_eager_torch(case: Any) -> None:
    _, f, specs, sizes = case
    model = fn_module(f, len(specs))
    points = _points(sizes)
    truth = [_runs(model, _example(specs, p)) for p in points]
    # exported at the largest valid size whose sizes differ (torch specialises 1 and equal sizes)
    base = export_point(points, truth)
    dynamic = {
        k: {ax: Dim.DYNAMIC for ax, d in enumerate(shape) if isinstance(d, str)}
        for k, (shape, _) in specs.items()
    }
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ep = export(model, (), _example(specs, base), dynamic_shapes=dynamic)
    except Exception as e:
        raise AssertionError(f"torch.export fails at {base}") from e
    types = types_of(specs)
    res = sst.infer(ep, types)
    assert res.errors == [] and res.unresolved == [], res.report()
    for p in [p for p, t in zip(points, truth) if t]:
        assert _output_shape(res, ep.graph, p) == _eager_shape(model, _example(specs, p)), p
    assert_verdicts(res, points, truth, lambda p: _env(specs, p))


def test_ranged_indices_state_their_bounds() -> None:
    """``x[arange(c), arange(m)]`` reads row ``c - 1`` and column ``m - 1``, ``gather`` by
    ``arange(m)`` column ``m - 1``: the explanation names the ``take`` and where the indices come
    from."""
    specs: dict[str, Spec] = {"x": (("a", "n"), F32), "y": (("c",), I64), "z": (("m",), I64)}
    res = sst.infer(fn_module(_index_arange, 3), types_of(specs))
    a, n, c, m = ss.dims("a n c m")
    text = res.why_invalid({a: 2, n: 5, c: 3, m: 3})
    assert "take of indices in [0, c - 1]" in text and "false at" in text, text
    assert f"{__file__}:33:" in text and "arange(0, c, 1)" in text, text
    text = res.why_invalid({a: 4, n: 2, c: 3, m: 3})
    assert "take of indices in [0, m - 1]" in text, text
    assert bool(res.valid_at({a: 3, n: 3, c: 3, m: 3}))
    res = sst.infer(fn_module(_gather_arange, 2), types_of({"x": (("a", "n"), F32), "y": (("c", "m"), I64)}))
    assert str(res.valid_when()) == "m - 1 < n"  # (the display does not yet write it `m <= n`)
