"""The guard simplifier on programs of repeated blocks (benchmark workload (e)): each implication
is asked of the guard's relevance cone only, and the simplified list is still equivalent to the
original (checked by Z3 and by evaluation at random sizes), with no Z3 check where a candidate
counter-model settles it."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence

import pytest
from benchmarks.workloads import z3_program
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.z3_reference import equivalent_by_z3

import symshape as ss
from symshape.encoding.conds import Cond, any_of, cond_value, eq, ge, le
from symshape.encoding.dims import Dim, dmax, floordiv
from symshape.solver.relevance import Leaf, cond_leaves
from symshape.solver.simplify import MAX_IMPLICATION_GUARDS, _index, _Prover, simplify_guards

n, s = ss.dims("n s")

#: Guards a block over its own symbols ``m`` (a batch) and ``h`` and the shared ``n``, ``s`` can
#: state; the first two are (e)'s (broadcast ``(n, s, 64)`` against ``(m, 1, 64)``, reshape
#: through ``(n, -1)``), the others imply some of them or are implied.
TEMPLATES: dict[str, Callable[[Dim, Dim], Cond]] = {
    "broadcast": lambda m, h: any_of(eq(n, m), eq(n, 1), eq(m, 1)),
    "reshape": lambda m, h: eq(floordiv(64 * s * dmax(m, n), n), 64 * s),
    "h>=2": lambda m, h: ge(h, 2),
    "h//2>=2": lambda m, h: ge(floordiv(h, 2), 2),
    "m==n": lambda m, h: eq(m, n),
    "m<=n": lambda m, h: le(m, n),
    "m==1|m==n": lambda m, h: any_of(eq(m, 1), eq(m, n)),
}


def program(blocks: Sequence[Sequence[str]]) -> list[Cond]:
    """The guards of ``blocks`` (template names per block), block ``i`` over ``m{i}``, ``h{i}``."""
    out: list[Cond] = []
    for i, names in enumerate(blocks):
        m, h = ss.dims(f"m{i} h{i}")
        out.extend(TEMPLATES[t](m, h) for t in names)
    return out


def envs(conds: Sequence[Cond], count: int, seed: int) -> Iterator[dict[Leaf, int]]:
    """Random sizes for every symbol of ``conds`` (small, with 1 and equal values common)."""
    rng = random.Random(seed)
    leaves = sorted({y for c in conds for y in cond_leaves(c)}, key=str)
    for _ in range(count):
        yield {y: rng.choice((1, 1, 2, 3, 4, 5, 8, rng.randint(1, 40))) for y in leaves}


def assert_equivalent_by_evaluation(before: Sequence[Cond], after: Sequence[Cond], seed: int) -> None:
    for env in envs(before, 300, seed):
        want = all(cond_value(c, env) for c in before)
        got = all(cond_value(c, env) for c in after)
        assert want == got, ({str(k): v for k, v in env.items()}, [str(c) for c in after])


# -- tables ------------------------------------------------------------------------------------

E_BLOCK = ["broadcast", "reshape"]

CASES: list[tuple[str, list[list[str]], list[str]]] = [
    ("(e), 1 block", [E_BLOCK], ["n == m0 or n == 1 or m0 == 1", "64*s*max(m0, n)//n == 64*s"]),
    (
        "(e), 3 blocks",
        [E_BLOCK] * 3,
        [
            f"n == m{i} or n == 1 or m{i} == 1" if k == 0 else f"64*s*max(m{i}, n)//n == 64*s"
            for i in range(3)
            for k in range(2)
        ],
    ),
    ("halvings per block", [["h>=2", "h//2>=2"]] * 2, ["h0 >= 4", "h1 >= 4"]),
    (
        "an equation implies the block's guards",
        [E_BLOCK + ["m==n"], E_BLOCK],
        [
            "m0 == n",
            "n == m1 or n == 1 or m1 == 1",
            "64*s*max(m1, n)//n == 64*s",
        ],
    ),
    ("m <= n implies the reshape guard", [["reshape", "m<=n"]], ["m0 <= n"]),
    ("a narrower disjunction implies the broadcast", [["broadcast", "m==1|m==n"]], ["m0 == 1 or m0 == n"]),
]


@pytest.mark.parametrize("name, blocks, want", CASES, ids=[c[0] for c in CASES])
def test_block_programs_simplify_to_an_equivalent_list(
    name: str, blocks: list[list[str]], want: list[str]
) -> None:
    before = program(blocks)
    after = simplify_guards(before)
    assert [str(c) for c in after] == want
    assert equivalent_by_z3(before, after)
    assert_equivalent_by_evaluation(before, after, seed=len(before))


@pytest.mark.parametrize("blocks", [1, 10, 60])
def test_the_e_program_needs_no_z3_check_to_keep_its_guards(blocks: int, z3_checks: list[int]) -> None:
    """Each guard's cone is its own block (``m_i = 1`` makes every other block's guards true),
    and a candidate counter-model shows that neither guard of a block implies the other."""
    before = program([E_BLOCK] * blocks)
    start = z3_checks[0]
    after = simplify_guards(before)
    assert after == before
    assert z3_checks[0] == start


def test_the_e_program_reports_its_guards_as_stated() -> None:
    res = ss.infer(z3_program(40))
    want = [str(c) for c in program([E_BLOCK] * 10)]
    assert [str(g.cond) for g in res.guards] == want


def test_redundant_guards_are_dropped_beyond_the_cap_on_the_whole_list() -> None:
    """More guards than :data:`MAX_IMPLICATION_GUARDS` in all, each with a small cone: the
    implied ones still go (the cap bounds a guard's cone, not the list)."""
    blocks = MAX_IMPLICATION_GUARDS // 2 + 10
    before = program([E_BLOCK + ["h>=2", "h//2>=2"]] * blocks)
    assert len(before) > MAX_IMPLICATION_GUARDS
    after = simplify_guards(before)
    assert len(after) == 3 * blocks
    assert [str(c) for c in after[:3]] == [str(before[0]), str(before[1]), "h0 >= 4"]
    assert_equivalent_by_evaluation(before, after, seed=blocks)


def test_a_cone_reaches_through_shared_live_symbols_and_stops_at_dead_ones() -> None:
    m0, m1, a, b = ss.dims("m0 m1 a b")
    conds = [
        any_of(eq(n, m0), eq(n, 1), eq(m0, 1)),  # killed by m0 = 1
        any_of(eq(n, m1), eq(n, 1), eq(m1, 1)),  # killed by m1 = 1
        eq(a, b),  # no constant for a or b makes it true
        le(b, n),
    ]
    index, leaves = _index(conds, _Prover())  # the index the simplifier builds
    assert index.cone(leaves[0]) == {0, 2, 3}  # not the m1 block
    assert index.cone(leaves[2]) == {2, 3}  # neither broadcast block: m0, m1 are not asked about
    assert index.bounded_cone(leaves[0], 2) is None
    assert index.bounded_cone(leaves[0], 3) == {0, 2, 3}


# -- property: random block programs ---------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(sorted(TEMPLATES)), min_size=1, max_size=4, unique=True),
        min_size=1,
        max_size=5,
    ),
    st.integers(0, 2**16),
)
def test_random_block_programs_simplify_to_an_equivalent_list(blocks: list[list[str]], seed: int) -> None:
    before = program(blocks)
    after = simplify_guards(before)
    assert len(after) <= len(before)
    assert equivalent_by_z3(before, after), ([str(c) for c in before], [str(c) for c in after])
    assert_equivalent_by_evaluation(before, after, seed)
