"""Writes into slices in exported programs (``x[:, :3] = y``: ``aten.copy_`` into a slice view, or
after ``run_decompositions`` ``aten.copy`` and ``aten.slice_scatter``) against eager torch and the
exported program running (they agree on the grid): at every point ``valid_at`` equals whether
they run, and where they run the output's shape equals torch's.
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
from torch_zoo.oracle import fn_module


def _assign_head(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x = x.clone()
    x[:, :3] = y
    return x * 2


def _assign_strided(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x = x.clone()
    x[1:, ::2] = y
    return x.relu()


def _assign_tail(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x = x.clone()
    x[:, -2:] = y
    return x


def _copy_whole(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x = x.clone()
    x.copy_(y)
    return x + 1


# (id, function, y's shape: names of sizes or literals, valid example sizes to export at)
CASES: list[tuple[str, Callable[..., torch.Tensor], tuple[Any, ...], dict[str, int]]] = [
    ("assign_head", _assign_head, ("m", 3), {"n": 3, "k": 5, "m": 3}),
    ("assign_head_broadcast_row", _assign_head, (1, "j"), {"n": 3, "k": 5, "j": 3}),
    ("assign_strided", _assign_strided, ("m", "j"), {"n": 3, "k": 5, "m": 2, "j": 3}),
    ("assign_tail", _assign_tail, ("m", "j"), {"n": 3, "k": 5, "m": 3, "j": 2}),
    ("copy_whole", _copy_whole, ("m", "j"), {"n": 3, "k": 5, "m": 3, "j": 5}),
]
# x's sizes from 2 (torch.export specializes 0 and 1) and its width from 3 (the slices' bounds)
SIZES = {"n": (2, 3, 4), "k": (3, 4, 5, 7), "m": (1, 2, 3), "j": (1, 2, 3)}


def _types(y_shape: tuple[Any, ...]) -> dict[str, ss.Type]:
    dims = {name: ss.dim(name) for name in SIZES}
    y = tuple(dims[d] if isinstance(d, str) else d for d in y_shape)
    return {"x": ss.Tensor((dims["n"], dims["k"]), "float32"), "y": ss.Tensor(y, "float32")}


_OUTSIDE = object()  # the exported program's own input guard failed: a size torch specialized


def _run(f: Callable[..., torch.Tensor], y_shape: tuple[Any, ...], p: dict[str, int]) -> Any:
    """The output's shape when ``f`` runs at sizes ``p``; None when an operator raises;
    ``_OUTSIDE`` when an exported program refuses the sizes (torch's "Guard failed")."""
    x = torch.randn(p["n"], p["k"])
    y = torch.randn(*(p[d] if isinstance(d, str) else d for d in y_shape))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return tuple(f(x, y).shape)
    except RuntimeError:
        return None
    except AssertionError as e:
        assert "Guard failed" in str(e), e
        return _OUTSIDE


def _programs(f: Callable[..., torch.Tensor], y_shape: tuple[Any, ...], at: dict[str, int]) -> list[Any]:
    """The exported program (every size dynamic; torch may specialize some) and its decomposition."""
    auto = Dim.AUTO
    y_dyn = {i: auto for i, d in enumerate(y_shape) if isinstance(d, str)}
    y = torch.zeros(*(at[d] if isinstance(d, str) else d for d in y_shape))
    example = (torch.zeros(at["n"], at["k"]), y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ep = export(fn_module(f, 2), example, dynamic_shapes={"x": {0: auto, 1: auto}, "y": y_dyn})
        return [ep, ep.run_decompositions()]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_slice_writes_equal_eager_torch(case: Any) -> None:
    name, f, y_shape, at = case
    used = {"n", "k", *(d for d in y_shape if isinstance(d, str))}
    points = [dict(zip(sorted(used), c)) for c in itertools.product(*(SIZES[d] for d in sorted(used)))]
    compared = 0
    for prog in _programs(f, y_shape, at):
        # the exported program running, where torch did not specialize the sizes away (there it
        # runs exactly where eager torch does)
        module = prog.module()
        res = sst.infer(prog, _types(y_shape))
        assert not res.import_errors and res.status != "error", res.report()
        out = next(n for n in prog.graph.nodes if n.op == "output").args[0][0]
        got = res.type_of(out.name)
        assert isinstance(got, ss.TensorType) and isinstance(got.shape, tuple)
        for p in points:
            want = _run(module, y_shape, p)
            if want is _OUTSIDE:
                continue
            assert want == _run(f, y_shape, p), (name, p)
            compared += 1
            env = {ss.dim(k): v for k, v in p.items()}
            assert bool(res.valid_at(p)) == (want is not None), (name, p, res.valid_when())
            if want is not None:
                assert tuple(int(d.subs(env)) for d in got.shape) == want, (name, p)
    assert compared >= 4, compared  # (torch specializes sizes the example ties together)


class _Assign(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        x = x.clone()
        x[:, :3] = y
        return x


def test_wrong_source_names_the_assignment() -> None:
    """A source of the wrong width is an error at the assignment's line, before any run."""
    with pytest.raises(RuntimeError):
        _Assign()(torch.zeros(2, 5), torch.zeros(2, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ep = export(_Assign(), (torch.zeros(2, 5), torch.zeros(2, 3)))
    res = sst.infer(ep, {"x": ss.Tensor((2, 5), "float32"), "y": ss.Tensor((2, 4), "float32")})
    assert res.status == "error" and res.errors[0].code == "not-broadcastable", res.report()
    assert "x[:, :3] = y" in res.report(), res.report()
