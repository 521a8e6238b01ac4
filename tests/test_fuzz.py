"""The differential fuzzer against numpy (``tests/fuzz``), run small here: a few hundred seeded
programs (DAGs of broadcasting, reshape with 0/-1/-2/-3/-4, transpose, concatenate/stack/split,
matmul/dense/batch_matmul, reductions, strided slices, take, where, conv and pooling; concrete
shapes and symbolic ones with ``min=0`` symbols), each checked at several values of its symbols.
Zero wrong shapes and zero wrong verdicts.

A large run on demand: ``SYMSHAPE_FUZZ=5000 SYMSHAPE_FUZZ_SEED=7 python -m pytest tests/test_fuzz.py``,
or ``python -m tests.fuzz --count 5000 --seed 7``.
"""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

import symshape as ss
from fuzz import OP_KINDS, Stats, check_program, generate, run_fuzz
from fuzz import numpy_ref as ref

COUNT = int(os.environ.get("SYMSHAPE_FUZZ", "300"))
SEED = int(os.environ.get("SYMSHAPE_FUZZ_SEED", "0"))


@pytest.fixture(scope="module")
def stats() -> Stats:
    return run_fuzz(COUNT, SEED)


def test_no_wrong_shapes_or_verdicts(stats: Stats) -> None:
    shown = "\n\n".join(str(f) for f in stats.findings[:5])
    assert not stats.findings, f"{stats.summary()}\n\n{shown}"


def test_the_run_covers_what_it_claims(stats: Stats) -> None:
    # the fuzzer must not degenerate: every operator family, symbolic and concrete programs,
    # zero sizes, valuations where numpy runs and where it raises, all three verdicts
    assert stats.programs == COUNT
    if COUNT < 200:
        pytest.skip("coverage is judged on runs of at least 200 programs")
    assert set(stats.ops) == set(OP_KINDS), set(OP_KINDS) - set(stats.ops)
    assert 0.5 * COUNT < stats.symbolic_programs < COUNT
    assert stats.zero_valuations > stats.valuations // 5
    assert stats.numpy_ran > stats.valuations // 5 and stats.numpy_raised > stats.valuations // 5
    assert {"ok", "guarded", "error"} <= set(stats.statuses)
    assert len(stats.inconclusive) <= max(2, COUNT // 500), stats.inconclusive


def test_programs_are_deterministic() -> None:
    a, b = generate(12345), generate(12345)
    assert a.listing() == b.listing()
    assert str(ss.infer(a.function).report()) == str(ss.infer(b.function).report())
    assert generate(12346).listing() != a.listing()


def test_the_checker_finds_a_wrong_shape() -> None:
    # a relation that gets broadcasting wrong (max instead of numpy's rule) is caught
    prog = generate(5)
    node = next(i for i, n in enumerate(prog.nodes) if n.kind == "input")
    real = prog.nodes[node].ref
    prog.nodes[node].ref = lambda v, env: np.zeros((*np.shape(real(v, env)), 1))  # a wrong shape
    st = Stats()
    check_program(prog, random.Random(0), 1, st)
    assert any(f.kind in ("wrong-shape", "wrong-verdict") for f in st.findings)


def test_relay_newshape_reference() -> None:
    assert ref.relay_newshape((2, 3, 4), (0, -1), False) == [2, -1]
    assert ref.relay_newshape((2, 3, 4), (-3, -2), False) == [6, 4]
    assert ref.relay_newshape((6, 4), (-4, 2, -1, -2), False) == [2, 3, 4]
    assert ref.relay_newshape((2, 3), (0, 3), True) == [0, 3]
    assert ref.relay_newshape((2, 3), (0, 3), False, [True, False]) == [0, 3]
    with pytest.raises(ValueError):
        ref.relay_newshape((2,), (0, 0), False)


def test_conv_and_pool_references_compute() -> None:
    x = np.ones((1, 2, 5, 5), np.float32)
    w = np.ones((4, 1, 3, 3), np.float32)
    y = ref.conv(x, w, (2, 2), (1, 1), (1, 1), (1, 1), 2)
    assert y.shape == (1, 4, 3, 3) and y[0, 0, 1, 1] == 9
    p = ref.pool(x, (2, 2), (2, 2), (0, 0), (0, 0), (1, 1), True, "max")
    assert p.shape == (1, 2, 3, 3)  # Relay's ceil mode: (5 - 2 + 1)//2 + 1
    with pytest.raises(ValueError):
        ref.conv(x, np.ones((4, 2, 6, 6), np.float32), (1, 1), (0, 0), (0, 0), (1, 1), 1)
