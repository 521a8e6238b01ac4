"""The dtypes of torch's reductions against eager torch: ``sum``/``prod``/``nansum``/``cumsum`` of
integers and bools are ``int64``; ``all``/``any`` are ``bool`` (``uint8`` stays); ``mean``,
``std``, ``var``, ``norm`` of integers are refused by torch and an error in symshape;
``logsumexp`` of integers is ``float32``; ``argmax``/``argmin`` of bools are refused (``max``'s
indices are not). Each case through an ``nn.Module`` (every node checked
against eager torch at three sizes) and, where torch runs, through ``torch.export``."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import symshape as ss
import symshape.torch as sst
from torch_zoo.oracle import check_fn, fn_module

DTYPES = ["int8", "int16", "int32", "int64", "bool", "uint8", "float16", "float32"]

FNS: list[tuple[str, Any]] = [
    ("sum", lambda x: x.sum()),
    ("sum-dim", lambda x: x.sum(1)),
    ("sum-keepdim", lambda x: torch.sum(x, dim=(0,), keepdim=True)),
    ("sum-dtype", lambda x: x.sum(1, dtype=torch.int32)),
    ("prod", lambda x: x.prod()),
    ("prod-dim", lambda x: torch.prod(x, 1)),
    ("nansum", lambda x: torch.nansum(x, 1)),
    ("cumsum", lambda x: x.cumsum(1)),
    ("cumprod", lambda x: torch.cumprod(x, 1)),
    ("mean", lambda x: x.mean()),
    ("mean-dim", lambda x: x.mean(1)),
    ("amax", lambda x: x.amax(1)),
    ("max-dim", lambda x: x.max(1)[0]),
    ("max-indices", lambda x: x.max(1)[1]),
    ("argmax", lambda x: x.argmax(1)),
    ("argmin", lambda x: torch.argmin(x, dim=0, keepdim=True)),
    ("all", lambda x: x.all(1)),
    ("any", lambda x: torch.any(x)),
    ("std", lambda x: x.std(1)),
    ("var", lambda x: torch.var(x, 1)),
    ("logsumexp", lambda x: torch.logsumexp(x, 1)),
    ("norm", lambda x: torch.linalg.vector_norm(x, dim=1)),
]

CASES = [(f"{name}-{dt}", f, dt) for name, f in FNS for dt in DTYPES]
N = ss.dim("n")
SIZES = [{"n": 2}, {"n": 3}, {"n": 7}]


def _eager(f: Any, dt: str) -> str | None:
    """torch's result dtype, or None where torch refuses the dtype."""
    try:
        return str(f(torch.ones(2, 3, dtype=getattr(torch, dt))).dtype).removeprefix("torch.")
    except RuntimeError:
        return None


@pytest.mark.parametrize(("name", "f", "dt"), CASES, ids=[c[0] for c in CASES])
def test_module_reduction_dtype_is_torchs(name: str, f: Any, dt: str) -> None:
    want = _eager(f, dt)
    model = fn_module(f, 1)
    if want is None:
        res = sst.infer(model, {"x": ss.Tensor((2, N), dt)})
        assert res.status == "error", res.report()
        assert [d.code for d in res.errors] == ["dtype-mismatch"], res.report()
        return
    res = check_fn(model, {"x": ((2, "n"), dt)}, SIZES)
    out = res.type_of("output")
    assert isinstance(out, ss.TensorType) and out.dtype == want, (out, want)


EXPORTED = [c for c in CASES if c[0].split("-")[0] in ("sum", "prod", "all") and c[2] != "float16"]


@pytest.mark.parametrize(("name", "f", "dt"), EXPORTED, ids=[c[0] for c in EXPORTED])
def test_exported_reduction_dtype_is_torchs(name: str, f: Any, dt: str) -> None:
    model = fn_module(f, 1)
    x = torch.ones(2, 5, dtype=getattr(torch, dt))
    ep = torch.export.export(model, (x,), dynamic_shapes={"x": {1: torch.export.Dim("n", min=2)}})
    res = sst.infer(ep)
    assert res.ok, res.report()
    (out,) = (n for n in ep.graph_module.graph.nodes if n.op == "output")
    node = out.args[0][0]
    t = res.type_of(node.name)
    assert isinstance(t, ss.TensorType) and t.dtype == str(model(x).dtype).removeprefix("torch."), t
