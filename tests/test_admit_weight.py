"""``TypeSolver.admit_weight`` (a weight's annotation, its recording inline) makes what
``admit_settled(t, annotation_origin(...))`` makes: the same type (the annotation itself, or a
copy where the object annotates another place already), the same source record and origin, for
plain, repeated and valued annotations."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import symshape as ss
from symshape.relations.values import constant_type
from symshape.solver.origins import annotation_origin
from symshape.solver.solve import TypeSolver
from symshape.source import Span


def _record(s: TypeSolver, got: list[Any]) -> list[Any]:
    out = []
    for t, given in got:
        src_t, o = s.sources[id(t)]
        out.append(
            (
                t is given,
                t == given,
                src_t is t,
                s._admitted[id(t)] is t,
                (o.kind, o.label, o.span, o.expr is not None),
            )
        )
    return out


@pytest.mark.parametrize("kind", ["plain", "shared", "valued"])
def test_admit_weight_is_admit_settled(kind: str) -> None:
    w = ss.Tensor((4, 3), "float32")
    v = constant_type(ss.Tensor((2,), "int64"), np.array([1, 2]))
    anns = {"plain": [w, ss.Tensor((4, 3), "float32")], "shared": [w, w, w], "valued": [v, v]}[kind]
    names = [ss.var(f"w{i}", a) for i, a in enumerate(anns)]
    span = Span("model.onnx", 1, 1)
    fast, slow = TypeSolver(), TypeSolver()
    got_fast = [(fast.admit_weight(a, x.name, span, x), a) for a, x in zip(anns, names)]
    got_slow = [
        (slow.admit_settled(a, annotation_origin(x.name, a, span, x)), a) for a, x in zip(anns, names)
    ]
    assert _record(fast, got_fast) == _record(slow, got_slow)
    seqs_fast = [fast.sources[id(t)][1].seq for t, _ in got_fast]
    assert seqs_fast == sorted(seqs_fast)  # numbered in admission order
    if kind == "shared":
        assert [t is w for t, _ in got_fast] == [True, False, False]


def test_binding_origin_is_the_constructors() -> None:
    """The origin of a weight's binding (``make_origin``, without the dataclass ``__init__``) has
    the fields ``Origin(...)`` gives it, numbered in creation order."""
    from dataclasses import fields

    from symshape.solver.diagnostics import Origin
    from symshape.solver.origins import make_origin

    span = Span("model.onnx", 3, 7)
    a = Origin("unify", "binding `w`", span)
    b = make_origin("unify", "binding `w`", span)
    c = Origin("unify", "binding `w`", span)
    assert type(a) is type(b) is Origin
    assert [getattr(b, f.name) for f in fields(Origin) if f.name != "seq"] == [
        getattr(a, f.name) for f in fields(Origin) if f.name != "seq"
    ]
    assert a.seq < b.seq < c.seq
