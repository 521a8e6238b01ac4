"""The solver's ``_open`` list (the instances ever made pending) holds every instance that is not
solved and clean once a solve ends: ``Solution`` looks for failed, erred, poisoned and pending
relations there only, so an operator call solved when added (never queued) must stay solved and
unmarked. Checked on the error gallery (failures, poisoned readers, unresolved holes) and on
the benchmark workloads (guards, an injected error, Z3 questions)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from benchmarks import workloads as wl

import symshape as ss
from symshape.solver.instance import RelationState

GALLERY = Path(__file__).resolve().parent / "gallery"
sys.path.insert(0, str(GALLERY))
import _render  # noqa: E402


def _check(res: Any) -> None:
    solver = res.solution.solver
    opened = {id(r) for r in solver._open}
    marked = [r for r in solver.rels if r.state != RelationState.SOLVED or r.erred]
    assert all(id(r) in opened for r in marked), [r.display for r in marked if id(r) not in opened]
    # in creation order, as the instances are numbered
    assert [r.id for r in solver._open] == sorted(r.id for r in solver._open)


@pytest.mark.parametrize("name", _render.cases())
def test_gallery(name: str) -> None:
    _check(_render.infer(name))


@pytest.mark.parametrize(
    "build",
    [
        lambda: wl.transformer_chain(24),
        lambda: wl.transformer_chain(24, inject_error=True),
        lambda: wl.transformer_chain(24, shape_values=True),
        lambda: wl.z3_program(16),
        lambda: wl.gpt2_program(layers=1)[0],
    ],
    ids=["chain", "chain-error", "chain-shape-values", "z3", "gpt2"],
)
def test_workloads(build: Any) -> None:
    res = ss.infer(build())
    _check(res)
    assert res.solution.solver._open or res.status == "ok"
