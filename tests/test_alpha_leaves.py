"""AlphaMemo reads a condition's leaves and divisors off the walk that makes its key up to
renaming (the session uses them instead of walking the condition twice more): they must be
exactly :func:`cond_leaves` and :func:`cond_divisors`, divisors in the same order (the order
numbers the divisor axioms)."""

from __future__ import annotations

import random

import pytest

from symshape.encoding.conds import Cond, any_of, eq, le, lt, ne, negate
from symshape.encoding.dims import Dim, const, dim, dmax, dmin, floordiv, fresh_join, mod
from symshape.solver.alpha import AlphaMemo
from symshape.solver.relevance import cond_divisors, cond_leaves

n, s, m, k = dim("n"), dim("s"), dim("m", min=1), dim("k", max=9)
SYMS = [n, s, m, k]


def _random_dim(rng: random.Random, depth: int = 0) -> Dim:
    a, b = rng.choice(SYMS), rng.choice(SYMS)
    r = rng.randrange(9 if depth < 2 else 3)
    if r == 0:
        return a + rng.randrange(0, 3)
    if r == 1:
        return rng.randrange(1, 5) * a * b
    if r == 2:
        return a
    if r == 3:
        return dmax(_random_dim(rng, depth + 1), _random_dim(rng, depth + 1))
    if r == 4:
        return dmin(a, _random_dim(rng, depth + 1))
    if r == 5:
        return floordiv(_random_dim(rng, depth + 1), b + rng.randrange(0, 2))
    if r == 6:
        return mod(_random_dim(rng, depth + 1), _random_dim(rng, depth + 1) + 1)
    if r == 7:
        return floordiv(64 * s * dmax(a, n), n) + mod(a * s, 3)
    return const(rng.randrange(1, 7))


def _random_cond(rng: random.Random) -> Cond:
    op = rng.choice([eq, ne, le, lt])
    c = op(_random_dim(rng), _random_dim(rng))
    if rng.random() < 0.4:
        c = any_of(c, eq(rng.choice(SYMS), _random_dim(rng)), negate(le(_random_dim(rng), 2)))
    return c


@pytest.mark.parametrize("seed", range(12))
def test_leaves_and_divisors_match_the_direct_walks(seed: int) -> None:
    rng = random.Random(seed)
    memo = AlphaMemo()
    checked = 0
    for _ in range(60):
        c = _random_cond(rng)
        got = memo.leaves_divisors(c)
        assert got is not None  # no joins here: every condition has a key
        assert got[0] == cond_leaves(c)
        assert list(got[1]) == cond_divisors(c)
        assert memo.leaves_divisors(c) == got  # remembered
        checked += bool(got[1])
    assert checked > 5  # the table has divisors to compare


def test_no_key_for_a_join() -> None:
    j = fresh_join([n, const(4)])
    assert AlphaMemo().leaves_divisors(eq(j, n)) is None


def test_divisor_order_first_appearance() -> None:
    c = eq(floordiv(mod(n, s + 1), m) + floordiv(k, s + 1), 3)
    got = AlphaMemo().leaves_divisors(c)
    assert got is not None
    assert [str(d) for d in got[1]] == [str(d) for d in cond_divisors(c)]
    assert len(got[1]) == 2  # s + 1 once, m once


@pytest.mark.parametrize("seed", range(6))
def test_stand_ins_compare_like_the_keys(seed: int) -> None:
    """Two conditions get the same key stand-in iff their flat keys are equal, which for these
    is iff alpha_key (the nested reference) says they are the same up to renaming."""
    from symshape.solver.alpha import alpha_key

    rng = random.Random(100 + seed)
    memo = AlphaMemo()
    conds = [_random_cond(rng) for _ in range(40)]
    # renamings of some of them: m -> a fresh symbol of the same range (same key), and one of
    # another range (another key unless m does not occur)
    fresh, other = dim(f"m{seed}", min=1), dim(f"q{seed}", min=2)
    conds += [c for c in conds[:10] for c in (_rename(c, m, fresh), _rename(c, m, other))]
    for a in conds:
        for b in conds:
            ka, kb = memo.cond(a), memo.cond(b)
            assert ka is not None and kb is not None
            same = alpha_key("q", [a]) == alpha_key("q", [b])
            if same:  # the nested key is coarser in no case here: equal nested, equal flat
                assert ka[0] == kb[0]
            else:
                assert ka[0] != kb[0]
            assert memo.joint([a, b]) == memo.joint([a, b])


def _rename(c: Cond, old: Dim, new: Dim) -> Cond:
    from symshape.encoding.conds import map_cond

    return map_cond(c, lambda d: d.subs({old: new}))
