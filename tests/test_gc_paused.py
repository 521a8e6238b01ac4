"""gc_paused: the collector is paused while solving and resumes after, in the state it was in;
what was allocated meanwhile moves to the oldest generation, and objects the program froze stay
frozen."""

from __future__ import annotations

import gc
import weakref

import pytest

import symshape as ss
from symshape.solver.gc_pause import MIN_PROMOTED, _Promotions
from symshape.solver.solve import gc_paused


def _program() -> ss.Expr:
    n = ss.dim("n")
    x = ss.var("x", ss.Tensor((n, 4), "float32"))
    return ss.Function([x], ss.ops.relu(ss.ops.add(x, x)))


def test_resumes_enabled_and_promotes() -> None:
    assert gc.isenabled()
    gc.collect()
    with gc_paused():
        assert not gc.isenabled()
        kept = [[i] for i in range(20_000)]  # young container objects
        assert gc.get_count()[0] >= 20_000
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0
    # in the oldest generation already (a young collection would only have moved them one up)
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert all(id(x) in oldest for x in kept)
    assert str(ss.infer(_program()).status) == "ok"
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_small_program_is_left_to_the_collector() -> None:
    gc.collect()
    with gc_paused():
        kept = [[i] for i in range(100)]
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert not any(id(x) in oldest for x in kept)
    assert gc.isenabled() and gc.get_freeze_count() == 0


@pytest.mark.parametrize("young", [-50, 0, 50])
def test_promotes_from_the_first_threshold(young: int) -> None:
    """Promoted exactly when the young collection is due at the next allocation (the young count
    has reached the collector's first threshold): it would traverse them all, to promote them."""
    saved = gc.get_threshold()
    gc.set_threshold(2_000, *saved[1:])
    try:
        gc.collect()
        with gc_paused():
            kept = [[i] for i in range(2_000 + young - gc.get_count()[0])]
            assert gc.get_count()[0] == 2_000 + young
        oldest = {id(o) for o in gc.get_objects(generation=2)}
        promoted = [id(x) in oldest for x in kept]
        assert all(promoted) if young >= 0 else not any(promoted)
    finally:
        gc.set_threshold(*saved)


def test_nothing_is_due_when_automatic_collection_is_off() -> None:
    saved = gc.get_threshold()
    gc.set_threshold(0, *saved[1:])
    try:
        gc.collect()
        with gc_paused():
            kept = [[i] for i in range(20_000)]
        oldest = {id(o) for o in gc.get_objects(generation=2)}
        assert not any(id(x) in oldest for x in kept)
    finally:
        gc.set_threshold(*saved)


def test_stays_disabled_when_disabled() -> None:
    gc.disable()
    try:
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_frozen_objects_stay_frozen() -> None:
    gc.collect()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        res = ss.infer(_program())
        assert str(res.status) == "ok"
        with gc_paused():
            kept = [[i] for i in range(20_000)]
        assert gc.get_freeze_count() == frozen
        assert gc.isenabled()
        oldest = {id(o) for o in gc.get_objects(generation=2)}
        assert not any(id(x) in oldest for x in kept)  # left to the collector
    finally:
        gc.unfreeze()


def test_resumes_after_an_exception() -> None:
    with pytest.raises(RuntimeError):
        with gc_paused():
            raise RuntimeError("boom")
    assert gc.isenabled() and gc.get_freeze_count() == 0


class _Cycle:
    """The head of a reference cycle (weakly referenceable)."""

    junk: list[object]


def test_promoted_cyclic_garbage_is_collected() -> None:
    """Cycles that ``gc_paused`` promoted and that then became garbage are collected once the
    promotions reach a quarter of the heap (or MIN_PROMOTED), with no ``gc.collect`` of ours.
    The collector does not count objects moved by freeze/unfreeze: before, a process inferring
    model after model never collected its oldest generation (the malformed-model fuzz: 5 GB)."""
    gc.collect()
    bound = max(MIN_PROMOTED, max(_Promotions.live, len(gc.get_objects())) // 4)
    head: weakref.ref[_Cycle] | None = None
    for _ in range(2 * bound // 20_000 + 2):
        with gc_paused():
            c = _Cycle()
            c.junk = [[i] for i in range(20_000)]
            c.junk.append(c)
            head = head or weakref.ref(c)
        del c
        if head() is None:
            break
    assert head is not None and head() is None
