"""Unification keeps the value ranges of tensor types (issue 19): the unified tensor's range is what
both sides' ranges say (their meet), whichever side carries it; resolution keeps a range and
resolves the unknowns in it; a range met with a dtype that carries none is a conflict."""

from __future__ import annotations

import pytest

import symshape as ss
from symshape.encoding.dims import const

n, t = ss.dims("n t")
T = ss.Tensor


def _unified(a: ss.Type, b: ss.Type) -> tuple[str, ss.Solution]:
    solver = ss.TypeSolver()
    h = solver.hole()
    solver.unify(h, a)
    solver.unify(h, b)
    sol = solver.solve()
    return str(sol.resolve(h)), sol


PLAIN = T((n,), "int64")
CASES = [
    # (a, b, the unified type printed)
    (PLAIN, T((n,), "int64", values=(0, 9)), "Tensor[(n,), int64] in [0, 9]"),
    (T((n,), "int64", values=(0, 9)), PLAIN, "Tensor[(n,), int64] in [0, 9]"),
    (T((n,), None), T((n,), "int64", values=(0, t - 1)), "Tensor[(n,), int64] in [0, t - 1]"),
    (T((n,), "int64", values=(0, 9)), T((n,), "int64", values=(2, 20)), "Tensor[(n,), int64] in [2, 9]"),
    (T((n,), "int64", values=(None, 9)), T((n,), "int64", values=(0, None)), "Tensor[(n,), int64] in [0, 9]"),
    (T((n,), "int64", values=(0, 9)), T((n,), "int64", values=(0, 9)), "Tensor[(n,), int64] in [0, 9]"),
    (T(None, "int64"), T((n, 2), "int64", values=(1, 4)), "Tensor[(n, 2), int64] in [1, 4]"),
    (
        T((2,), "int64", value=(n, 3)),
        T((2,), "int64", values=(0, None)),
        "Tensor[(2,), int64] = (n, 3) in [0, ?]",
    ),
]


@pytest.mark.parametrize(("a", "b", "want"), CASES, ids=lambda x: str(x))
def test_unified_tensor_keeps_the_ranges(a: ss.Type, b: ss.Type, want: str) -> None:
    got, sol = _unified(a, b)
    assert sol.status == "ok"
    assert got == want
    # the same through one direct unification, both orders
    for x, y in ((a, b), (b, a)):
        solver = ss.TypeSolver()
        assert str(solver.unify(x, y)) == want


def test_nested_tensor_keeps_its_range() -> None:
    solver = ss.TypeSolver()
    h = solver.hole()
    out = solver.unify(ss.TupleType([PLAIN, h]), ss.TupleType([T((n,), "int64", values=(0, 5)), PLAIN]))
    assert str(out) == "(Tensor[(n,), int64] in [0, 5], Tensor[(n,), int64])"


def test_resolution_keeps_the_range_and_resolves_its_unknowns() -> None:
    solver = ss.TypeSolver()
    d = solver.fresh_dim()
    h = solver.hole()
    solver.unify(h, T((d,), "int64", values=(0, d - 1)))
    solver.unify(T((d,), "int64"), T((const(7),), "int64"))  # binds the unknown
    sol = solver.solve()
    assert str(sol.resolve(h)) == "Tensor[(7,), int64] in [0, 6]"


def test_a_range_met_with_a_float_dtype_is_a_conflict() -> None:
    _, sol = _unified(T((n,), None, values=(0, 9)), T((n,), "float32"))
    assert sol.status == "error"
    assert [e.code for e in sol.errors] == ["dtype-mismatch"]
    assert "integer range [0, 9]" in sol.errors[0].message
