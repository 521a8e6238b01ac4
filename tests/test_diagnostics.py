"""Diagnostics: the message builder, rendering (text, JSON, HTML), id renumbering, explained cores."""

from __future__ import annotations

import json

import symshape as ss
from symshape.solver.diagnostics import (
    Diagnostic,
    Note,
    conflict_message,
    render_all,
    renumber_ids,
)
from symshape.source import Span

F32 = "float32"


def test_conflict_message_prints_both_sides_and_the_difference() -> None:
    msg = conflict_message(
        "cannot unify", "Tensor[(n, 4), float32]", "Tensor[(n, 5), float32]", "dimension 1: 4 vs 5"
    )
    assert msg == (
        "cannot unify `Tensor[(n, 4), float32]` and `Tensor[(n, 5), float32]`: dimension 1: 4 vs 5"
    )
    same = conflict_message("cannot unify", "T", "T")
    assert "(left)" in same and "(right)" in same


def test_renumber_ids_by_first_appearance() -> None:
    assert renumber_ids("`?t12` and `?d7` vs `?t3`, again ?t12") == (
        "`?t1` and `?d1` vs `?t2`, again ?t1"
    )


def test_text_json_and_html_renderings() -> None:
    d = Diagnostic(
        "shape-mismatch",
        "cannot unify `A` and `B` (`?t40`)",
        Span(__file__, 1, 1),
        (Note("`x` is annotated `A`", Span("model.py", 3, 5)), Note("flows through f", None)),
    )
    text = d.render().splitlines()
    assert text[0] == f"{__file__}:1:1: error: cannot unify `A` and `B` (`?t1`)  [shape-mismatch]"
    assert text[1].startswith("    ") and text[2] == "    ^"
    assert text[3] == "model.py:3:5: note: `x` is annotated `A`"
    assert text[4] == "note: flows through f"
    j = d.to_json()
    assert set(j) == {"code", "severity", "message", "span", "notes"}
    assert j["notes"][1] == {"message": "flows through f", "span": None}
    assert json.loads(d.to_json_str()) == j
    html = d._repr_html_()
    assert "data-code='shape-mismatch'" in html and "&lt;" not in d.message
    assert render_all([d, d]).count("[shape-mismatch]") == 2


def test_unification_conflict_gets_an_explained_core() -> None:
    n = ss.dim("n")
    x = ss.var("x", ss.Tensor((n, 4), F32))
    z = ss.var("z", ss.Tensor((n, 5), F32))
    res = ss.infer(ss.Function([x], ss.Let(z, ss.ops.relu(x), z)))
    (d,) = res.errors
    assert d.code == "shape-mismatch"
    assert [n.message for n in d.notes if n.span is not None] == [
        "`x` is annotated `Tensor[(n, 4), float32]`",
        "`z` is annotated `Tensor[(n, 5), float32]`",
    ]
    # the binding is the primary site; the operator that carried x's type there is the chain
    assert d.message.startswith("cannot unify `Tensor[(n, 5), float32]` and `Tensor[(n, 4), float32]`")
    assert d.notes[-1].message.startswith("the conflict flows through relu at ")
    assert d.evidence is not None and d.evidence.check_minimal() == []


def test_unrelated_annotations_are_not_in_the_core() -> None:
    n, m = ss.dims("n m")
    x = ss.var("x", ss.Tensor((n, 4), F32))
    y = ss.var("y", ss.Tensor((n, 5), F32))
    u = ss.var("u", ss.Tensor((m, 7), F32))
    body = ss.Tuple([ss.ops.relu(u), ss.ops.add(x, y)])
    (d,) = ss.infer(ss.Function([x, y, u], body)).errors
    assert all("`u`" not in note.message for note in d.notes)
    assert len(d.core) == 3


def test_guard_note_names_the_operator_and_the_condition() -> None:
    n = ss.dim("n")
    x = ss.var("x", ss.Tensor((n,), F32))
    y = ss.var("y", ss.Tensor((5,), F32))
    res = ss.infer(ss.Function([x, y], ss.ops.add(x, y)))
    assert res.status == "guarded"
    assert res.guards[0].describe().startswith("add at ")
    assert res.guards[0].describe().endswith("needs `n == 1 or n == 5`")


def test_solver_level_notes_are_kept_for_guards_of_concrete_types() -> None:
    n = ss.dim("n")
    solver = ss.TypeSolver()
    o1, o2 = solver.hole(), solver.hole()
    r1 = solver.add_relation("broadcast", [ss.Tensor((n + 1,)), ss.Tensor((5,)), o1])
    r2 = solver.add_relation("broadcast", [ss.Tensor((n + 1,)), ss.Tensor((4,)), o2])
    (d,) = solver.solve().errors
    assert [o.seq for o in d.core] == [r2.origin.seq, r1.origin.seq]
    assert d.notes[0].message == "broadcast requires `n == 4`"
    assert d.evidence is not None and d.evidence.check_minimal() == []
