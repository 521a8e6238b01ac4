"""A size that only the run's values decide (bounds, shapes, reps read from tensors whose values
are not known) is a given ``?``, not an unknown the solver may bind: when it meets the symbol ``s``
in a broadcast, the result states the run-time condition as a guard, and the size itself is never
claimed to be ``s`` (before, the broadcast bound the unknown to ``s`` silently: a slice
``x[:, i:i+1]`` with ``i`` unknown was claimed ``(b, s, 8)``; the run gave ``(b, 1, 8)``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import symshape as ss

s = ss.dim("s")
x = ss.var("x", ss.Tensor((s,), "float32"))
v = ss.var("v", ss.Tensor((1,), "int64"))  # a value not known: one run-time size
k = ss.var("k", ss.Tensor((), "int64"))
one = ss.var("one", ss.Tensor((1,), "float32"))

CASES: dict[str, Callable[[], ss.Expr]] = {
    "strided_slice": lambda: ss.ops.strided_slice(x, v, ss.ops.add(v, ss.ops.int_tensor(1)), axes=(0,)),
    "arange": lambda: ss.ops.cast(ss.ops.arange(ss.ops.int_tensor(0), k), "float32"),
    "constant_of_shape": lambda: ss.ops.constant_of_shape(v),
    "full": lambda: ss.ops.full(1.0, v, "float32"),
    "tile": lambda: ss.ops.tile(one, v),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_run_time_size_meeting_a_symbol_is_a_guard(name: str) -> None:
    sized = CASES[name]()
    res = ss.infer(ss.Function([x, v, k, one], ss.Tuple([sized, ss.ops.add(x, sized)])))
    assert res.status == "guarded" and len(res.guards) == 1, res.report()
    assert "s == ?" in str(res.guards[0]), res.report()  # (s == ? or s == 1 or ? == 1)
    t = res.type_of(sized)
    assert isinstance(t, ss.TensorType) and t.ndim == 1, t
    assert str(t.dims[0]) == "?", t  # never claimed to be s
