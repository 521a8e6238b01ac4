"""Memory under repeated use: what one inference makes dies with its result.

An explained error works in a Z3 context of its own (about 16 MB of native memory). The context
was kept by the error's evidence and by a reference cycle (the explainer and its encoder), which
only the cyclic collector frees; it does not see native memory, so a long run of erroneous models
(the malformed-model fuzz: 5 GB after 1 500 examples) grew by gigabytes. These tests hold the
cyclic collector off: what reference counting alone does not free would be kept.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import z3
from onnx import ModelProto
from onnx_helpers import In, make_model, node

import symshape.onnx as sso
from symshape import SymshapeError
from symshape.solver.evidence import Z3Evidence, evidence_context


def _softmax_model(axis: int) -> ModelProto:
    return make_model(
        [node("Softmax", ["x"], ["y"], name="sm", axis=axis)], [In("x", "float32", (2, 3, 4))], ["y"]
    )


def _add_model() -> ModelProto:
    """An Add of (N, 3) and (N, 4): a dimension conflict, explained with a core."""
    return make_model(
        [node("Add", ["a", "b"], ["c"], name="add")],
        [In("a", "float32", ("N", 3)), In("b", "float32", ("N", 4))],
        ["c"],
    )


@pytest.fixture
def contexts(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[weakref.ref[z3.Context]]]:
    """Weak references to the Z3 contexts made meanwhile, with the cyclic collector off."""
    made: list[weakref.ref[z3.Context]] = []
    init = z3.Context.__init__

    def recording(self: z3.Context, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        made.append(weakref.ref(self))

    evidence_context()  # this thread's, made before
    monkeypatch.setattr(z3.Context, "__init__", recording)
    gc.collect()
    gc.disable()
    try:
        yield made
    finally:
        gc.enable()


def _call(fn: Callable[[ModelProto], object], m: ModelProto) -> None:
    try:
        fn(m)
    except SymshapeError:
        pass


@pytest.mark.parametrize("entry", ["infer", "infer_shapes"])
@pytest.mark.parametrize("model", [_add_model, lambda: _softmax_model(-999)], ids=["add", "softmax"])
def test_an_explained_errors_z3_context_dies_with_the_call(
    contexts: list[weakref.ref[z3.Context]], entry: str, model: Callable[[], ModelProto]
) -> None:
    _call(getattr(sso, entry), model())
    assert contexts, "the error was explained (in a context of its own)"
    assert [r for r in contexts if r() is not None] == []


def test_the_evidence_lives_in_the_one_evidence_context(contexts: list[weakref.ref[z3.Context]]) -> None:
    res = sso.infer(_add_model())
    [d] = res.errors
    ev = d.evidence
    assert isinstance(ev, Z3Evidence) and ev.ctx is evidence_context()
    assert all(f.ctx is ev.ctx for f in (*ev.members, *ev.axioms))
    assert ev.check_minimal() == [] and len(ev.members) == len(d.core) >= 2
    assert contexts and [r for r in contexts if r() is not None] == []  # while the result lives


def test_repeated_errors_leave_nothing_in_z3(contexts: list[weakref.ref[z3.Context]]) -> None:
    """Many explained errors in a row: Z3's own count of what it holds does not grow with them
    (the evidence context's terms are freed with their evidence)."""
    m = _add_model()
    _call(sso.infer, m)
    first = z3.Z3_get_estimated_alloc_size()
    for _ in range(20):
        _call(sso.infer, m)
    assert len(contexts) == 21
    assert z3.Z3_get_estimated_alloc_size() - first < 2**20  # 16 MB per context kept before
