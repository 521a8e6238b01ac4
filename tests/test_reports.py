"""Trustworthy reports (issue 11): guards decide what an assignment decides, one indexing
convention and the user's operator names in messages and notes, explanations that never vanish,
minimal cores without duplicate notes, recursive functions whose shape grows."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symshape as ss

n, m = ss.dims("n m")
T = ss.Tensor


def _guard(a: Any, b: Any) -> ss.Guard:
    solver = ss.TypeSolver()
    out = solver.hole()
    solver.add_relation("broadcast", [T(a), T(b), out])
    sol = solver.solve()
    assert sol.status == "guarded", sol
    [g] = sol.guards
    return g


# -- Guard.holds -----------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6))
def test_holds_agrees_with_numpy_broadcasting(a: int, b: int) -> None:
    import numpy as np

    g = _guard((n,), (m,))
    try:
        np.broadcast_shapes((a,), (b,))
        expect = True
    except ValueError:
        expect = False
    assert g.holds({n: a, m: b}) is expect
    assert g.holds({"n": a, "m": b}) is expect  # symbols by name


def test_holds_decides_what_a_partial_assignment_decides() -> None:
    g = _guard((n,), (m,))  # n == m or n == 1 or m == 1
    assert g.holds({n: 1}) is True  # whatever m is
    assert g.holds({m: 1}) is True
    with pytest.raises(ss.SymshapeError) as e:
        g.holds({n: 3})
    assert e.value.code == "invalid-argument"
    assert "depends on m, which has no value" in e.value.message
    with pytest.raises(ss.SymshapeError) as e:
        g.holds({})
    assert "depends on m, n, which have no value" in e.value.message


@pytest.mark.parametrize("env", [5, None, "n=1", [(n, 1)], {n: "a"}, {n: 1.5}, {n: True}, {3: 1}])
def test_holds_rejects_what_is_not_an_assignment(env: Any) -> None:
    g = _guard((n,), (5,))
    with pytest.raises(ss.SymshapeError) as e:
        g.holds(env)
    assert e.value.code == "invalid-argument"


def test_holds_names_an_anonymous_dimension_it_needs() -> None:
    g = _guard((n,), ss.parse_type("Tensor[(?,), float32]").shape)
    assert g.holds({n: 1}) is True
    with pytest.raises(ss.SymshapeError, match=r"depends on \?"):
        g.holds({n: 4})
