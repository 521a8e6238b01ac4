"""The Z3 session assumes only the facts relevant to a query: the cone of influence (facts joined
to the query's atoms through shared atoms), less the groups of facts that constants for their
private atoms make true. Verdicts and unsat cores are those of a check against every fact."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from tests.z3_reference import z3_verdict as reference

import symshape as ss
from symshape.encoding.conds import Cond, any_of, eq, ge, le, lt, ne, negate
from symshape.encoding.dims import Dim, dmax, floordiv, mod
from symshape.solver import session as session_mod
from symshape.solver.diagnostics import Origin
from symshape.solver.session import Session

n, m, k, p, q = ss.dims("n m k p q")
T = ss.Tensor


def o(label: str) -> Origin:
    return Origin("relation", label)


def spy(s: Session) -> list[tuple[int, ...]]:
    """Record the fact indices of every Z3 check ``s`` makes."""
    seen: list[tuple[int, ...]] = []
    inner = s._check

    def check(facts: Sequence[int], *args: Any, **kw: Any) -> Any:
        seen.append(tuple(facts))
        return inner(facts, *args, **kw)

    s._check = check  # type: ignore[method-assign]
    return seen



# -- the cone of influence ---------------------------------------------------------------------


def test_unrelated_facts_do_not_enter_a_query() -> None:
    s = Session()
    s.assume(eq(p, q + 1), o("p"))
    s.assume(le(q, 7), o("q"))
    seen = spy(s)
    assert s.check(eq(n, 3)).kind == "guard"
    assert seen and all(a == () for a in seen)
    s.assume(le(n, 5), o("n"))
    seen.clear()
    assert s.check(eq(n, 3)).kind == "guard"
    assert seen and all(a == (2,) for a in seen)
    assert s.last_assumptions == (2,)
    assert s.check(le(n, 6)).kind == "proved"
    assert s.last_assumptions == (2,)
    assert s.check(le(p, 8)).kind == "proved"  # p = q + 1 <= 8
    assert s.last_assumptions == (0, 1)


def test_transitivity_through_a_chain_of_facts() -> None:
    s = Session()
    s.assume(eq(n, m), o("n=m"))
    s.assume(eq(p, 4), o("unrelated"))
    s.assume(eq(m, k), o("m=k"))
    assert s.check(eq(n, k)).kind == "proved"
    assert s.last_assumptions == (0, 2)
    assert s.prove(eq(n, k)) is True
    v = s.check(ne(n, k))
    assert v.kind == "refuted"
    assert [f.origin.label for f in v.core] == ["n=m", "m=k"]


def test_chain_joined_later_merges_components() -> None:
    s = Session()
    s.assume(eq(n, m + 1), o("a"))
    s.assume(eq(k, p + 1), o("b"))
    assert s.check(eq(n, p + 2)).kind == "guard"  # not yet connected
    s.assume(eq(m, k), o("join"))
    assert s.check(eq(n, p + 2)).kind == "proved"
    assert s.last_assumptions == (0, 1, 2)


def test_core_is_minimal_and_leaves_out_unrelated_facts() -> None:
    s = Session()
    s.assume(eq(n + 1, 5), o("first"))
    s.assume(le(p, 10), o("unrelated"))
    s.assume(le(m, 10), o("second"))
    s.assume(eq(m, n * 2), o("third"))
    v = s.check(eq(n + 1, 4))
    assert v.kind == "refuted"
    assert [f.origin.label for f in v.core] == ["first"]
    v2 = s.check(gt_(m, 9))
    assert v2.kind == "refuted"
    assert [f.origin.label for f in v2.core] == ["first", "third"]
    assert s.satisfiable() is True


def gt_(a: Dim, b: int) -> Cond:
    return lt(b, a)


def test_contradictory_facts_stay_in_their_component() -> None:
    # the solver never assumes a refuted condition; a session used directly can, and then only
    # conditions connected to the contradiction follow vacuously
    s = Session()
    s.assume(le(p, 2), o("a"))
    s.assume(ge(p, 5), o("b"))
    assert s.satisfiable() is False
    assert s.check(eq(p, 3)).kind == "proved"
    assert s.check(eq(n, 3)).kind == "guard"


# -- groups made true by constants for their private atoms -----------------------------------------


def test_broadcast_guard_over_a_private_symbol_is_dropped() -> None:
    s = Session()
    s.assume(any_of(eq(n, m), eq(n, 1), eq(m, 1)), o("broadcast"))  # m = 1 makes it true
    s.assume(le(n, 8), o("bound"))
    seen = spy(s)
    assert s.check(eq(n, 3)).kind == "guard"
    assert seen and all(a == (1,) for a in seen)
    # a query that mentions m needs the guard
    seen.clear()
    assert s.check(any_of(le(m, 8), eq(n, 1))).kind == "proved"  # n == m <= 8, or m == 1
    assert seen[-1] == (0, 1)


def test_group_that_constrains_the_query_is_kept() -> None:
    s = Session()
    s.assume(eq(n, 2 * m), o("even"))  # no constant for m makes `n == 2*m` true for every n
    assert s.check(eq(mod(n, 2), 0)).kind == "proved"
    assert s.last_assumptions == (0,)
    s2 = Session()
    s2.assume(le(n, m), o("le"))  # m = 1 gives n <= 1: kept
    s2.assume(le(m, 3), o("m"))
    assert s2.check(le(n, 3)).kind == "proved"
    assert s2.last_assumptions == (0, 1)


def test_witness_respects_declared_ranges() -> None:
    r = ss.dim("r", min=4, max=9)
    s = Session()
    s.assume(any_of(eq(n, r), eq(n, 1), eq(r, 1)), o("g"))  # r = 1 is out of range: kept
    assert s.check(any_of(eq(n, 1), ge(n, 4))).kind == "proved"
    assert s.last_assumptions == (0,)


def test_divisor_axioms_link_atoms() -> None:
    s = Session()
    s.assume(le(p, q), o("pq"))
    # the divisor q - p gets the axiom `q - p > 0`, which joins p and q for good
    v = s.check(eq(floordiv(n, q - p), 1))
    assert v.kind == "guard"
    assert s.check(lt(p, q)).kind == "proved"  # from the divisor axiom; the fact is in the cone
    assert s.last_assumptions == (0,)


@pytest.mark.parametrize("length", [3, 12])
def test_long_chain_proves_and_refutes(length: int) -> None:
    # a long chain goes to the main solver (more than _SCOPED_MAX facts), a short one is scoped
    xs = [ss.dim(f"c{i}") for i in range(length + 1)]
    s = Session()
    for i in range(length):
        s.assume(eq(xs[i], xs[i + 1]), o(f"link{i}"))
        s.assume(eq(ss.dim(f"u{i}"), ss.dim(f"w{i}")), o(f"noise{i}"))
    assert s.check(eq(xs[0], xs[-1])).kind == "proved"
    assert s.last_assumptions == tuple(range(0, 2 * length, 2))
    v = s.check(ne(xs[0], xs[-1]))
    assert v.kind == "refuted"
    assert [f.origin.label for f in v.core] == [f"link{i}" for i in range(length)]
    assert s.check(eq(xs[0], 3)).kind == "guard"
    s.assume(eq(xs[-1], 3), o("pin"))
    assert s.check(eq(xs[0], 3)).kind == "proved"
    assert s.check(eq(xs[1], 4)).kind == "refuted"


def test_cache_skips_repeated_checks() -> None:
    s = Session()
    s.assume(le(n, 8), o("bound"))
    assert s.check(le(n, 9)).kind == "proved"
    calls = s.z3_calls
    assert s.check(le(n, 9)).kind == "proved"
    assert s.z3_calls == calls
    s.assume(ge(n, 3), o("other"))  # a new fact in the cone: checked again
    assert s.check(le(n, 9)).kind == "proved"
    assert s.z3_calls > calls


# -- agreement with a check against every fact ---------------------------------------------------


def _random_cond(rng: random.Random, syms: Sequence[Dim]) -> Cond:
    def dimx() -> Dim:
        a, b = rng.choice(syms), rng.choice(syms)
        r = rng.randrange(6)
        if r == 0:
            return a + rng.randrange(0, 3)
        if r == 1:
            return 2 * a
        if r == 2:
            return a + b
        if r == 3:
            return dmax(a, b)
        if r == 4:
            return floordiv(a, b)
        return a

    op: Callable[[Dim, Dim], Cond] = rng.choice([eq, eq, ne, le, lt])
    c = op(dimx(), dimx() if rng.random() < 0.6 else rng.choice(syms) * 0 + rng.randrange(1, 6))
    if rng.random() < 0.3:
        c = any_of(c, eq(rng.choice(syms), rng.randrange(1, 4)))
    return c


@pytest.mark.parametrize("scoped_max", [0, 8, 1000], ids=["main", "mixed", "scratch"])
@pytest.mark.parametrize("seed", range(6))
def test_verdicts_and_cores_match_all_facts(
    seed: int, scoped_max: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(session_mod, "_SCOPED_MAX", scoped_max)
    rng = random.Random(seed)
    syms = [ss.dim(f"x{i}", max=rng.choice([None, 6, 9])) for i in range(7)]
    s = Session(timeout_ms=10000)
    facts: list[Cond] = []
    for step in range(28):
        c = _random_cond(rng, syms)
        v = s.check(c)
        ref = reference(facts, c)
        if "unknown" in (v.kind, ref):
            continue
        assert v.kind == ref, (seed, step, str(c), [str(f) for f in facts])
        if v.kind == "refuted" and v.core:
            core = [f.cond for f in v.core]
            assert reference(core, negate(c)) == "proved"  # core and c: unsat
            for i in range(len(core)):
                assert reference(core[:i] + core[i + 1 :], negate(c)) != "proved"  # minimal
        if v.kind == "guard":
            s.assume(c, o(f"g{step}"))
            facts.append(c)


# -- programs: guards and errors unchanged -----------------------------------------------------------


def test_z3_program_guards_and_relevant_assumptions() -> None:
    sizes: list[int] = []
    inner = session_mod.Session._relevant

    def relevant(self: Session, c: Cond) -> tuple[int, ...]:
        rel = inner(self, c)
        sizes.append(len(rel))
        return rel

    x = ss.var("x", T((n, k, 8), "float32"))
    params = [x]
    bindings: list[tuple[Any, Any]] = []
    y: Any = x
    blocks = 6
    for i in range(blocks):
        mi = ss.dim(f"m{i}")
        bi = ss.var(f"b{i}", T((mi, 1, 8), "float32"))
        params.append(bi)
        for e in (ss.ops.add(y, bi), None, None):
            if e is None:
                e = ss.ops.reshape(y, (n, -1)) if len(bindings) % 3 == 1 else ss.ops.reshape(y, (n, k, 8))
            v = ss.var(f"v{len(bindings)}")
            bindings.append((v, e))
            y = v
    f = ss.Function(params, ss.Dataflow(bindings, y))
    mp = pytest.MonkeyPatch()
    mp.setattr(session_mod.Session, "_relevant", relevant)
    try:
        res = ss.infer(f)
    finally:
        mp.undo()
    assert str(res.status) == "guarded"
    gs = [str(g) for g in res.guards]
    assert gs[:2] == ["n == m0 or n == 1 or m0 == 1", "8*k*max(m0, n)//n == 8*k"]
    assert len(gs) == 2 * blocks
    # each block's queries assume at most that block's own guards, however many blocks came before
    assert sizes and max(sizes) <= 2
    # and candidate models and case splits decide them all: guards shown by a model where they
    # hold and one where they fail, the reshape's divisibility by cases on the broadcast guard
    assert res.z3_calls == 0


def test_refutation_core_in_a_program_is_unchanged() -> None:
    solver = ss.TypeSolver()
    outs = [solver.hole() for _ in range(4)]
    solver.add_relation("broadcast", [T((m,)), T((7,)), outs[0]])  # unrelated guard on m
    r1 = solver.add_relation("broadcast", [T((n + 1,)), T((5,)), outs[1]])
    solver.add_relation("broadcast", [T((p,)), T((q,)), outs[2]])  # unrelated, two symbols
    r2 = solver.add_relation("broadcast", [T((n + 1,)), T((4,)), outs[3]])
    sol = solver.solve()
    assert [d.code for d in sol.errors] == ["not-broadcastable"]
    assert {o.seq for o in sol.errors[0].core} == {r1.origin.seq, r2.origin.seq}
    assert [str(g) for g in sol.guards] == ["m == 1 or m == 7", "n == 4", "p == q or p == 1 or q == 1"]
