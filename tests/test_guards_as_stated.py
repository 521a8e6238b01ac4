"""``guards_as_stated()``: solutions made inside keep the guards as stated (no Z3 simplification);
the types, the status and the stated guards are those of a normal inference."""

from __future__ import annotations

import symshape as ss
from symshape.solver.outcome import guards_as_stated


def _program() -> ss.Function:
    n, s = ss.dims("n s")
    x = ss.var("x", ss.Tensor((n, s), "float32"))
    y = ss.ops.reshape(x, (2, -1))
    z = ss.ops.reshape(y, (n, s))
    return ss.Function([x], ss.Tuple([y, z, ss.ops.reshape(x, (4, -1))]))


def test_same_types_and_stated_guards() -> None:
    full = ss.infer(_program())
    with guards_as_stated():
        raw = ss.infer(_program())
    assert raw.status == full.status == "guarded"
    assert [str(g.cond) for g in full.guards] == ["n*s % 4 == 0"]  # (simplified: 2 | n*s is implied)
    assert str(raw.type_of(raw.program.body)) == str(full.type_of(full.program.body))
    assert [str(g.cond) for g in raw.stated_guards] == [str(g.cond) for g in full.stated_guards]
    assert [str(g.cond) for g in raw.guards] == [str(g.cond) for g in full.stated_guards]
    # outside the block, solutions simplify again
    assert [str(g.cond) for g in ss.infer(_program()).guards] == [str(g.cond) for g in full.guards]
