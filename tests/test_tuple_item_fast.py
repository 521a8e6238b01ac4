"""A field of a tuple of constant-shape tensors is taken without the eager memo
(``add_call(..., solved=field)``): the instance, its output and the whole inference are what the
general path (the memo's eager run) gives, for random tuples and for programs indexing the tuples
operators return (constant shapes take the fast path, symbolic ones do not)."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symshape as ss
from symshape.encoding.types import Attrs, TensorType, TupleType
from symshape.ir.program_rels import TUPLE_GET_ITEM
from symshape.solver import instance
from symshape.solver.solve import TypeSolver

_DTYPES = ("float32", "int64", "bool")
_tensor = st.builds(
    lambda shape, dtype: ss.Tensor(shape, dtype),
    st.lists(st.integers(0, 5), max_size=3).map(tuple),
    st.sampled_from(_DTYPES),
)


def _state(s: TypeSolver, h: Any) -> tuple[Any, ...]:
    rel = s.rels[-1]
    return (
        s.unifier.resolve(h),
        rel.state,
        rel.runs,
        rel.args[:-1],
        rel.attrs,
        rel.op,
        s.producer[h] is rel,
        s.steps,
        len(s._open),
    )


@settings(max_examples=60, deadline=None)
@given(fields=st.lists(_tensor, min_size=1, max_size=3), data=st.data())
def test_solved_field_is_the_eager_runs(fields: list[TensorType], data: st.DataObject) -> None:
    i = data.draw(st.integers(0, len(fields) - 1))
    tup = TupleType(tuple(fields))
    attrs = Attrs({"index": i})
    fast, slow = TypeSolver(), TypeSolver()
    h_fast = fast.add_call(TUPLE_GET_ITEM, [tup], attrs, "tuple index", None, fields[i])
    h_slow = slow.add_call(TUPLE_GET_ITEM, [tup], attrs, "tuple index", None)
    assert _state(fast, h_fast) == _state(slow, h_slow)
    assert fast.solve().resolve(h_fast) == slow.solve().resolve(h_slow) == fields[i]


def _programs() -> list[tuple[str, Any]]:
    n = ss.dim("n")
    out: list[tuple[str, Any]] = []
    for name, shape in (("constant", (2, 3, 4, 4)), ("symbolic", (n, 3, 4, 4))):
        x = ss.var("x", ss.Tensor(shape, "float32"))
        ps = [ss.const(np.ones(3, "float32")) for _ in range(4)]
        bn = ss.ops.batch_norm(x, ps[0], ps[1], ps[2], ps[3], axis=1)
        parts = ss.ops.split(ss.TupleGetItem(bn, 0), 3, axis=1)
        body = ss.Tuple([ss.TupleGetItem(bn, 1), ss.TupleGetItem(parts, 2), ss.TupleGetItem(bn, 0)])
        out.append((name, ss.Function([x], body)))
    return out


def _general(self: TypeSolver, *args: Any) -> Any:
    return _ADD_CALL(self, *args[:5])


_ADD_CALL = instance.add_call


@pytest.mark.parametrize(("name", "fn"), _programs(), ids=lambda v: v if isinstance(v, str) else "")
def test_programs_infer_as_on_the_general_path(name: str, fn: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    def run() -> tuple[str, list[str], str]:
        res = ss.infer(fn)
        rels = " ".join(f"{r.id} {r.state} {r.runs} {r.args}" for r in res.solution.solver.rels)
        holes: dict[str, str] = {}  # (numbered by a process-wide counter: renamed in order)
        rels = re.sub(r"id=(\d+)", lambda m: "h" + holes.setdefault(m[1], str(len(holes))), rels)
        return res.report(program=True), [str(res.type_of(c)) for c in res.calls], rels

    fast = run()
    monkeypatch.setattr(TypeSolver, "add_call", _general)
    assert run() == fast
