"""The collector pause around solving (solver/solve.py ``gc_paused``): the collector is back on
after, the solve's objects do not wait in the youngest generation (where the first allocation
after would traverse them all), nothing stays frozen, and objects the caller froze stay frozen."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

import symshape as ss
from symshape.solver.solve import gc_paused


@pytest.fixture
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    try:
        yield
    finally:
        if not was:
            gc.disable()


def _program(blocks: int) -> ss.Function:
    n = ss.dim("n")
    x = ss.var("x", ss.Tensor((n, 8), "float32"))
    params, bindings = [x], []
    for i in range(blocks):  # each block broadcasts x against a fresh batch symbol
        b = ss.var(f"b{i}", ss.Tensor((ss.dim(f"m{i}"), 1), "float32"))
        params.append(b)
        bindings.append((ss.var(f"v{i}"), ss.ops.relu(ss.ops.add(x, b))))
    return ss.Function(params, ss.Dataflow(bindings, bindings[-1][0]))


@pytest.mark.usefixtures("collector_on")
def test_solve_objects_leave_the_young_generation() -> None:
    f = _program(40)
    gc.collect()
    collections: list[int] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.callbacks.append(note)
    try:
        res = ss.infer(f)
        after = gc.get_count()[0]
    finally:
        gc.callbacks.remove(note)
    assert res.status == "guarded" and len(res.guards) == 40
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0
    # thousands of objects were made while paused: none is counted as young after, and no
    # collection ran on the way out to traverse them
    assert collections == []
    assert after < 50


@pytest.mark.usefixtures("collector_on")
def test_paused_inside_and_enabled_after() -> None:
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():  # nested (the ONNX importer around inference): still paused
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


@pytest.mark.usefixtures("collector_on")
def test_caller_frozen_objects_stay_frozen() -> None:
    gc.collect()
    keep = [[i] for i in range(100)]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen >= len(keep)
        ss.infer(_program(5))
        assert gc.get_freeze_count() == frozen  # neither thawed nor grown
        assert gc.isenabled()
    finally:
        gc.unfreeze()


def test_disabled_collector_stays_disabled() -> None:
    was = gc.isenabled()
    gc.disable()
    try:
        ss.infer(_program(3))
        assert not gc.isenabled()
        assert gc.get_freeze_count() == 0
    finally:
        if was:
            gc.enable()
