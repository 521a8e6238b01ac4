"""The session's cheap procedures before Z3 (candidate models, case splits, the dead-atom cone,
verdicts up to renaming of leaves) answer only what Z3 would answer: checked against Z3 on every
fact at once, on tables and on random problems."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

import pytest
from tests.z3_reference import z3_verdict as reference

import symshape as ss
from symshape.encoding.conds import Cond, any_of, eq, le, lt, ne
from symshape.encoding.dims import Dim, const, dmax, floordiv, fresh_join, mod
from symshape.solver.alpha import alpha_key
from symshape.solver.diagnostics import Origin
from symshape.solver.models import implied, search
from symshape.solver.relevance import Leaf, cond_leaves
from symshape.solver.session import Session

n, m, s, k = ss.dims("n m s k")


def o(label: str) -> Origin:
    return Origin("relation", label)



def _leaf_list(*cs: Cond) -> list[Leaf]:
    out: set[Leaf] = set()
    for c in cs:
        out |= cond_leaves(c)
    return sorted(out, key=lambda a: a._key)


GUARD = any_of(eq(n, m), eq(n, 1), eq(m, 1))

# (condition, facts, expected (a model where it holds, one where it fails))
SEARCH_CASES = [
    (GUARD, [], (True, True)),
    (eq(n, m), [], (True, True)),
    (eq(floordiv(64 * s * dmax(m, n), n), 64 * s), [GUARD], (True, True)),
    (le(n, 8), [le(n, 5)], (True, False)),  # no candidate breaks it: it is implied
]


@pytest.mark.parametrize("c, facts, want", SEARCH_CASES, ids=[str(x[0]) for x in SEARCH_CASES])
def test_search_table(c: Cond, facts: list[Cond], want: tuple[bool, bool]) -> None:
    got = search(c, facts, [], _leaf_list(c, *facts), (True, True))
    assert got == want


IMPLIED_CASES = [
    (eq(mod(64 * s * dmax(m, n), n), 0), [GUARD], True),  # the reshape's divisibility
    (eq(floordiv(64 * s * dmax(m, n), n), 64 * s), [GUARD], False),  # n = 1, m = 2 breaks it
    (eq(n + 1, m + 1), [eq(n, m)], True),
    (le(n, 8), [le(n, 5)], False),  # true, but not by cases on equations (Z3 proves it)
]


@pytest.mark.parametrize("c, facts, want", IMPLIED_CASES, ids=[str(x[0]) for x in IMPLIED_CASES])
def test_implied_table(c: Cond, facts: list[Cond], want: bool) -> None:
    assert implied(c, facts) is want
    if want:
        assert reference(facts, c) == "proved"


def _random_cond(rng: random.Random, syms: Sequence[Dim]) -> Cond:
    def dimx() -> Dim:
        a, b = rng.choice(syms), rng.choice(syms)
        r = rng.randrange(6)
        if r == 0:
            return a + rng.randrange(0, 3)
        if r == 1:
            return 2 * a
        if r == 2:
            return a * b
        if r == 3:
            return dmax(a, b)
        if r == 4:
            return floordiv(a * b, b)
        return a

    op: Callable[[Dim, Dim], Cond] = rng.choice([eq, eq, ne, le, lt])
    c = op(dimx(), dimx() if rng.random() < 0.6 else rng.choice(syms) * 0 + rng.randrange(1, 6))
    if rng.random() < 0.4:
        c = any_of(c, eq(rng.choice(syms), rng.choice(syms)), eq(rng.choice(syms), 1))
    return c


@pytest.mark.parametrize("seed", range(8))
def test_cheap_answers_agree_with_z3(seed: int) -> None:
    rng = random.Random(seed)
    syms = [ss.dim(f"y{i}", max=rng.choice([None, 7])) for i in range(4)]
    answered = 0
    for _ in range(25):
        fact = _random_cond(rng, syms)
        c = _random_cond(rng, syms)
        if reference([], fact) != "guard":
            continue  # the solver only assumes guards
        ref = reference([fact], c)
        if ref == "unknown":
            continue
        t, f = search(c, [fact], [], _leaf_list(c, fact), (True, True))
        if t:
            assert ref != "refuted", (str(fact), str(c))
        if f:
            assert ref != "proved", (str(fact), str(c))
        if implied(c, [fact]):
            assert ref == "proved", (str(fact), str(c))
        answered += t + f
    assert answered >= 5  # the candidates do answer most of these


def test_dead_atoms_keep_each_cone_to_its_block() -> None:
    sess = Session()
    blocks = 60
    for i in range(blocks):
        mi = ss.dim(f"mm{i}")
        g = any_of(eq(n, mi), eq(n, 1), eq(mi, 1))
        assert sess.check(g).kind == "guard"
        sess.assume(g, o(f"broadcast{i}"))
        back = eq(floordiv(64 * s * dmax(mi, n), n), 64 * s)
        assert sess.check(eq(mod(64 * s * dmax(mi, n), n), 0)).kind == "proved"
        assert sess.last_assumptions == (2 * i,)  # this block's guard only
        assert sess.check(back).kind == "guard"
        sess.assume(back, o(f"reshape{i}"))
        # the walk visits this block's members and the divisor axiom, not the earlier blocks
        assert len(sess._index.cone(cond_leaves(back))) <= 3
    assert sess.z3_calls == 0
    assert sess.alpha_hits > 0  # later blocks ask the first block's questions, renamed


def test_alpha_keys() -> None:
    m2 = ss.dim("m2")
    r = ss.dim("r", max=9)
    assert alpha_key("q", [GUARD]) == alpha_key("q", [any_of(eq(n, m2), eq(n, 1), eq(m2, 1))])
    assert alpha_key("q", [GUARD]) != alpha_key("q", [any_of(eq(n, r), eq(n, 1), eq(r, 1))])  # range
    assert alpha_key("q", [GUARD]) != alpha_key("p", [GUARD])
    j = fresh_join([n, const(4)])
    assert alpha_key("q", [eq(j, m)]) is None  # a join has an axiom over its alternatives


def test_models_off_uses_z3_and_agrees() -> None:
    for models in (True, False):
        sess = Session(models=models)
        sess.assume(GUARD, o("g"))
        c = eq(floordiv(64 * s * dmax(m, n), n), 64 * s)
        assert sess.check(c).kind == "guard"
        assert sess.check(eq(mod(64 * s * dmax(m, n), n), 0)).kind == "proved"
        assert (sess.z3_calls == 0) is models
