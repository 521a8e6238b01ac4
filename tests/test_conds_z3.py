"""Conditions (smart constructors, the no-Z3 fast path) and their lowering to Z3; the Z3 session."""

from __future__ import annotations

import pytest
import z3

import symshape as ss
from symshape.encoding.conds import (
    FALSE,
    TRUE,
    Not,
    all_of,
    any_of,
    cond_holds,
    decide,
    eq,
    ge,
    gt,
    le,
    lt,
    ne,
    negate,
)
from symshape.encoding.dims import dmax, dmin, floordiv, fresh_dimvar, mod
from symshape.encoding.z3 import Z3Encoder
from symshape.solver.diagnostics import Origin
from symshape.solver.session import Session

n, m = ss.dims("n m")
b0 = ss.dim("b0", min=0)
c5 = ss.dim("c5", min=2, max=5)


# -- smart constructors decide what the canonical forms decide ---------------------------------


@pytest.mark.parametrize(
    ("cond", "value"),
    [
        (eq(12 * n, n * 3 * 4), True),
        (eq(n, n + 1), False),
        (eq(2 * n, 5), False),  # parity
        (eq(2 * n - 2 * m, 1), False),
        (ne(2 * n, 5), True),
        (le(n, 0), False),
        (lt(0, n), True),
        (ge(n, 1), True),
        (ge(b0, 0), True),
        (gt(b0, 0), None),
        (le(c5, 5), True),
        (lt(c5, 2), False),
        (eq(n % 1, 0), True),
        (le(n % 4, 3), True),
        (eq(n - n, 0), True),
        (eq(dmax(n, m), dmax(m, n)), True),
        (eq(n, 1), None),
        (eq(n, m), None),
        (le(n, m), None),
        (eq(n * m, 12), None),
    ],
    ids=str,
)
def test_decide_fast_path(cond: ss.Cond, value: bool | None) -> None:
    assert decide(cond) is value


@pytest.mark.parametrize(
    ("cond", "printed"),
    [
        (eq(n, 1), "n == 1"),
        (eq(1, n), "n == 1"),
        (any_of(eq(n, 1), eq(n, 5)), "n == 1 or n == 5"),
        (any_of(eq(n, m), eq(n, 1), eq(m, 1)), "n == m or n == 1 or m == 1"),
        (ge(n - 7, 0), "n - 7 >= 0"),
        (gt(n, 1), "n > 1"),
        (le(n, 3), "n <= 3"),
        (lt(n, m), "n < m"),
        (ne(n, 2), "n != 2"),
        (eq((2 * n) % 4, 0), "n % 2 == 0"),
        (all_of(eq(n, 1), any_of(eq(m, 2), eq(m, 3))), "n == 1 and (m == 2 or m == 3)"),
        (negate(any_of(eq(n, 1), eq(n, 5))), "n != 1 and n != 5"),
        (negate(lt(n, m)), "m <= n"),
        (Not(eq(n, m)), "not (n == m)"),
        (TRUE, "True"),
        (FALSE, "False"),
    ],
    ids=str,
)
def test_condition_printing(cond: ss.Cond, printed: str) -> None:
    assert str(cond) == printed


def test_junctions_simplify() -> None:
    x = eq(n, 1)
    assert any_of() == FALSE
    assert all_of() == TRUE
    assert any_of(x) == x
    assert any_of(x, x) == x
    assert any_of(x, TRUE) == TRUE
    assert all_of(x, FALSE) == FALSE
    assert all_of(x, TRUE) == x
    y = eq(m, 2)
    assert any_of(any_of(x, y), x) == any_of(x, y)
    assert negate(negate(x)) == x
    assert negate(TRUE) == FALSE


@pytest.mark.parametrize(
    ("cond", "env", "value"),
    [
        (any_of(eq(n, 1), eq(n, 5)), {n: 5}, True),
        (any_of(eq(n, 1), eq(n, 5)), {n: 3}, False),
        (ge(n - 7, 0), {"n": 7}, True),
        (ge(n - 7, 0), {"n": 6}, False),
        (all_of(le(n, m), ne(n, 2)), {n: 1, m: 4}, True),
        (Not(eq(n, m)), {n: 2, m: 2}, False),
        (eq((n * m) // 3, 4), {n: 3, m: 4}, True),
    ],
    ids=str,
)
def test_cond_holds(cond: ss.Cond, env: dict[object, int], value: bool) -> None:
    assert cond_holds(cond, env) is value


def test_cond_holds_needs_every_symbol() -> None:
    with pytest.raises(ss.SymshapeError) as e:
        cond_holds(eq(n, m), {n: 1})
    assert e.value.code == "invalid-argument"
    assert "give a value for m" in e.value.message


# -- lowering to Z3 -------------------------------------------------------------------------------


def _z3_value(d: ss.Dim, env: dict[ss.Dim, int]) -> int:
    enc = Z3Encoder()
    term = enc.dim(d)
    s = z3.Solver()
    s.add(*enc.take_axioms())
    for sym, v in env.items():
        s.add(enc.dim(sym) == v)
    s.add(*enc.take_axioms())
    assert s.check() == z3.sat
    return s.model().eval(term, model_completion=True).as_long()


@pytest.mark.parametrize(
    "expr",
    [
        (n - 9) // 4,
        (n - 9) % 4,
        (2 * n - 3 * m) // 5,
        (n * m - 7) % 3,
        dmax(n - 4, m) - dmin(n, 2 * m),
        (n * m) // (m + 1),
        (n - 10) % (m + 2),
        floordiv(mod(n, 7) - 3, 2),
        n**2 - 3 * n * m,
    ],
    ids=str,
)
@pytest.mark.parametrize(("nv", "mv"), [(1, 1), (3, 7), (10, 2), (13, 5)])
def test_z3_lowering_agrees_with_python(expr: ss.Dim, nv: int, mv: int) -> None:
    expected = expr.subs({n: nv, m: mv})
    assert expected.is_constant
    assert _z3_value(expr, {n: nv, m: mv}) == int(expected)


def test_z3_axioms_state_declared_ranges() -> None:
    enc = Z3Encoder()
    enc.dim(n + c5 + b0 + fresh_dimvar())
    axioms = {str(a) for a in enc.take_axioms()}
    assert "n >= 1" in axioms
    assert "c5 >= 2" in axioms and "c5 <= 5" in axioms
    assert "b0 >= 0" in axioms
    assert any(a.startswith("?d") and a.endswith(">= 0") for a in axioms)
    assert enc.take_axioms() == []


def test_z3_lowering_is_memoized() -> None:
    enc = Z3Encoder()
    assert enc.dim(12 * n).eq(enc.dim(n * 3 * 4))
    assert enc.cond(eq(n, m)).eq(enc.cond(eq(n, m)))


# -- the session ----------------------------------------------------------------------------------


def test_session_verdicts_and_z3_calls() -> None:
    s = Session()
    assert s.check(eq(n, n)).kind == "proved"
    assert s.check(eq(2 * n, 5)).kind == "refuted"
    assert s.z3_calls == 0  # decided by canonical forms
    assert s.check(eq(n, 1)).kind == "guard"
    assert s.z3_calls == 0  # a model where it holds (n = 1), one where it fails (n = 2)
    assert s.check(ge(n * n, n)).kind == "proved"  # needs reasoning
    assert s.z3_calls > 0
    z3_free = Session(models=False)
    assert z3_free.check(eq(n, 1)).kind == "guard"
    assert z3_free.z3_calls > 0


def test_session_facts_and_minimal_core() -> None:
    s = Session()
    o1, o2, o3 = Origin("relation", "first"), Origin("relation", "second"), Origin("relation", "third")
    s.assume(eq(n + 1, 5), o1)
    s.assume(le(m, 10), o2)
    s.assume(eq(m, n * 2), o3)
    assert s.check(eq(n, 4)).kind == "proved"
    assert s.check(eq(m, 8)).kind == "proved"
    v = s.check(eq(n + 1, 4))
    assert v.kind == "refuted"
    assert [f.origin for f in v.core] == [o1]  # the facts about m are not needed
    v2 = s.check(gt(m, 9))
    assert v2.kind == "refuted"
    assert {f.origin.label for f in v2.core} == {"first", "third"}
    assert s.prove(le(m, 10)) is True
    assert s.satisfiable() is True


def test_session_assume_true_is_not_a_fact() -> None:
    s = Session()
    s.assume(eq(n, n), Origin("relation", "x"))
    assert s.facts == []
