"""Dtype rules (session 14, "tz"): the element-wise calls whose dtype rule torch's kernels decide,
against eager torch. torch refuses a bool input to ``abs``, ``-x``, ``+x``, ``round``/``floor``/
``ceil``/``trunc``, ``relu``/``relu6``/``hardtanh``/``threshold``, ``-`` with a bool operand,
``//``/``%``/``fmod``/``div(rounding_mode=...)`` of two bools, and a floating input to ``&``/``|``/
``^``/``~``; ``bool.square()`` is int64 and ``logical_not`` of any dtype is bool. Each call is
inferred on an input ``(n, 2)`` of each dtype (``n >= 0``): where torch raises, symshape's result
is an error with code ``dtype-mismatch``; where it runs, ``valid_at`` holds at ``n`` = 0, 1, 2 and
the result's shape and dtype are torch's. Also: ``movedim`` with an axis out of range is
``axis-out-of-range``, as every other axis error."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F

import symshape as ss
import symshape.torch as sst
from torch_zoo.oracle import fn_module

DTYPES = ("bool", "float32", "int64", "uint8")

CALLS: dict[str, Callable[..., Any]] = {
    "abs": lambda x: x.abs(),
    "torch.abs": lambda x: torch.abs(x),
    "neg": lambda x: -x,
    "torch.neg": lambda x: torch.neg(x),
    "negative": lambda x: torch.negative(x),
    "positive": lambda x: +x,
    "round": lambda x: x.round(),
    "floor": lambda x: x.floor(),
    "ceil": lambda x: torch.ceil(x),
    "trunc": lambda x: x.trunc(),
    "relu": lambda x: torch.relu(x),
    "F.relu": lambda x: F.relu(x),
    "relu6": lambda x: F.relu6(x),
    "hardtanh": lambda x: F.hardtanh(x),
    "threshold": lambda x: F.threshold(x, 0, 0),
    "square": lambda x: x.square(),
    "pow 2": lambda x: x**2,
    "sub": lambda x: x - x,
    "torch.sub": lambda x: torch.sub(x, x),
    "sub int": lambda x: x - 1,
    "rsub int": lambda x: 1 - x,
    "sub True": lambda x: x.float() - True,
    "sub bool tensor": lambda x: x.float() - (x > 0),
    "add": lambda x: x + x,
    "mul": lambda x: x * x,
    "floordiv": lambda x: x // x,
    "floordiv int": lambda x: x // 2,
    "floordiv True": lambda x: x // True,
    "mod": lambda x: x % x,
    "mod int": lambda x: x % 2,
    "remainder": lambda x: torch.remainder(x, x),
    "fmod": lambda x: torch.fmod(x, x),
    "fmod int": lambda x: torch.fmod(x, 2),
    "div floor": lambda x: torch.div(x, x, rounding_mode="floor"),
    "div trunc": lambda x: torch.div(x, x, rounding_mode="trunc"),
    "or": lambda x: x | x,
    "and": lambda x: x & x,
    "xor": lambda x: x ^ x,
    "bitwise_or": lambda x: torch.bitwise_or(x, x),
    "invert": lambda x: ~x,
    "or int": lambda x: x | 1,
    "or True": lambda x: x & True,
    "or float": lambda x: x | x.float(),
    "logical_not": lambda x: x.logical_not(),
    "torch.logical_not": lambda x: torch.logical_not(x),
    "sign": lambda x: x.sign(),
    "sqrt": lambda x: x.sqrt(),
    "clamp": lambda x: x.clamp(0, 1),
}

CASES = [(name, dt) for name in CALLS for dt in DTYPES]


def _torch(fn: Callable[..., Any], dtype: str, n: int) -> torch.Tensor | None:
    x = (torch.arange(n * 2).reshape(n, 2) % 3 + 1).to(getattr(torch, dtype))  # (no division by 0)
    try:
        return fn(x)  # type: ignore[no-any-return]
    except (RuntimeError, TypeError):
        return None


@pytest.mark.parametrize("name, dtype", CASES, ids=[f"{n}-{d}" for n, d in CASES])
def test_dtype_rule_as_torch(name: str, dtype: str) -> None:
    fn = CALLS[name]
    n = ss.dim("n", min=0)
    res = sst.infer(fn_module(fn, 1), {"x": ss.Tensor((n, 2), dtype)})
    want = [_torch(fn, dtype, k) for k in (0, 1, 2)]
    if all(w is None for w in want):
        assert res.status == "error", f"torch refuses {name} of {dtype}; symshape: {res.report()}"
        assert {e.code for e in res.errors} == {"dtype-mismatch"}, res.report()
        return
    assert res.status in ("ok", "guarded"), res.report()
    out = next(x for x in res.fx_graph.nodes if x.op == "output").args[0]
    t = res.type_of(out.name)
    assert isinstance(t, ss.TensorType) and t.ndim is not None
    for k, w in zip((0, 1, 2), want):
        assert w is not None, f"{name} of {dtype} at n = {k}: torch raises"
        assert res.valid_at({n: k})
        assert tuple(int(d.subs({n: k})) for d in t.dims) == tuple(w.shape)
        assert t.dtype == str(w.dtype).removeprefix("torch."), f"{name} of {dtype}: {t} vs {w.dtype}"


def test_a_bool_known_only_to_inference() -> None:
    """A comparison's result (bool, known at import only through the operators) and a cast whose
    dtype inference learns: the checks are made on the inferred dtype."""
    x = ss.Tensor((ss.dim("n"), 2), "float32")
    res = sst.infer(fn_module(lambda x: (x > 0).float().bool().abs(), 1), {"x": x})
    assert [e.code for e in res.errors] == ["dtype-mismatch"], res.report()
    res = sst.infer(fn_module(lambda x: x.to(torch.int64).relu() - 1, 1), {"x": x})
    assert res.ok, res.report()


def test_checks_keep_ranges() -> None:
    """The dtype checks sit beside the data flow: ``relu`` and ``-`` keep their ranges (an index
    made by them is still bounded)."""
    emb = torch.nn.Embedding(10, 4)

    class M(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = emb

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            return self.emb((ids - 1).relu())

    t = ss.dim("t")
    res = sst.infer(M(), {"ids": ss.Tensor((t,), "int64", values=(0, 12))})
    assert res.valid_when() == "False" or not res.valid_at({t: 1}), res.report()
    res = sst.infer(M(), {"ids": ss.Tensor((t,), "int64", values=(0, 10))})
    assert res.ok, res.report()


@pytest.mark.parametrize(
    "call",
    [lambda x: x.movedim(3, 0), lambda x: x.movedim(0, -4), lambda x: x.relu().movedim(5, 0)],
    ids=["source", "negative destination", "rank known only to inference"],
)
def test_movedim_axis_out_of_range(call: Callable[..., Any]) -> None:
    with pytest.raises(IndexError):
        call(torch.randn(2, 3, 4))
    res = sst.infer(fn_module(call, 1), {"x": ss.Tensor((2, 3, 4), "float32")})
    assert [e.code for e in res.errors] == ["axis-out-of-range"], res.report()
