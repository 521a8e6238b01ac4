"""Spans with a context (a place in a model file), span scopes for front-ends, and front-end
diagnostics added to a result (what the importers build on)."""

from __future__ import annotations

import json
import threading

import pytest
from tests.source_places import place

import symshape as ss
from symshape.source import Span, span_scope, user_span

F32 = "float32"
NODE = Span("model.onnx", 13, context="node 'Reshape_12' (Reshape)")


def test_a_span_with_a_context_prints_the_file_and_the_context() -> None:
    assert str(NODE) == "model.onnx: node 'Reshape_12' (Reshape)"
    assert str(Span("m.py", 3, 5)) == "m.py:3:5"
    assert NODE.to_json() == {
        "file": "model.onnx",
        "line": 13,
        "column": 1,
        "context": "node 'Reshape_12' (Reshape)",
    }
    assert Span("m.py", 3, 5).to_json() == {"file": "m.py", "line": 3, "column": 5}
    # the context describes a place; file, line and column tell places apart
    assert NODE == Span("model.onnx", 13) and hash(NODE) == hash(Span("model.onnx", 13))
    assert sorted([Span("b", 1), NODE, Span("a", 2)])[0] == Span("a", 2)


def test_a_report_quotes_no_source_for_a_span_with_a_context(tmp_path: object) -> None:
    d = ss.Diagnostic("unsupported-op", "not supported", NODE, (ss.Note("the input", NODE),))
    assert d.render().splitlines() == [
        "model.onnx: node 'Reshape_12' (Reshape): error: not supported  [unsupported-op]",
        "model.onnx: node 'Reshape_12' (Reshape): note: the input",
    ]
    assert json.loads(d.to_json_str())["span"]["context"] == "node 'Reshape_12' (Reshape)"
    assert "ss-source" not in d._repr_html_()


def test_expressions_built_in_a_span_scope_take_its_span() -> None:
    n = ss.dim("n")
    with span_scope(NODE) as at:
        x = ss.var("x", ss.Tensor((n, 6), F32))
        y = ss.ops.reshape(ss.ops.relu(x), (-1,))
        t = ss.Tuple([x, y])
        c = ss.Call(ss.Op.get("add"), [x, x])
        f = ss.Function([x], t[1])
        k = ss.const([1.0])
    assert at is NODE
    for e in (x, y, y.args[0], t, t.fields[0], c, f, f.body, k):
        assert e.span is NODE
    z = ss.var("z")  # OUTSIDE
    assert z.span == Span(__file__, *place(__file__, "# OUTSIDE", "ss.var"))


def test_span_scopes_nest_and_none_means_no_span() -> None:
    other = Span("model.onnx", 2, context="graph input 'x'")
    with span_scope(NODE):
        with span_scope(None):
            assert ss.var("a").span is None
            with span_scope(other):
                assert ss.var("b").span is other
            assert ss.var("c").span is None
        assert ss.var("d").span is NODE
    assert ss.var("e").span is not None and ss.var("e").span.file == __file__  # type: ignore[union-attr]


def test_a_span_scope_is_reusable_and_local_to_its_thread() -> None:
    scope = span_scope(NODE)
    with scope:
        with scope:
            assert ss.var("a").span is NODE
        assert ss.var("b").span is NODE
    assert user_span() != NODE
    seen: list[Span | None] = []
    with span_scope(NODE):
        t = threading.Thread(target=lambda: seen.append(ss.var("t").span))
        t.start()
        t.join()
    assert seen and seen[0] is not NODE


def test_span_scope_rejects_what_is_not_a_span() -> None:
    with pytest.raises(ss.SymshapeError) as e:
        span_scope("model.onnx:3")  # type: ignore[arg-type]
    assert e.value.code == "invalid-argument"


def test_errors_of_a_scoped_program_are_reported_at_the_scope() -> None:
    n = ss.dim("n")
    with span_scope(NODE):
        x = ss.var("x", ss.Tensor((n, 3, 4), F32))
        y = ss.var("y", ss.Tensor((n, 5), F32))
        body = ss.ops.add(ss.ops.flatten(x), y)
    res = ss.infer(ss.Function([x, y], body))
    assert res.status == "error"
    report = res.report()
    assert "model.onnx: node 'Reshape_12' (Reshape): error: cannot broadcast" in report
    assert "    ^" not in report  # no source excerpt for a model's node


def test_with_diagnostics_adds_a_front_ends_diagnostics_first() -> None:
    n = ss.dim("n")
    x = ss.var("x", ss.Tensor((n, 3), F32))
    y = ss.var("y", ss.Tensor((5, 3), F32))
    res = ss.infer(ss.Function([x, y], ss.ops.add(x, y)))
    assert res.status == "guarded"
    bad = ss.Diagnostic("unsupported-op", "node 'a' (Foo) is not supported", NODE)
    open_ = ss.Diagnostic("unresolved", "the output of node 'b' is unknown", NODE)
    out = res.with_diagnostics([bad, open_])
    assert (res.status, res.ok, len(res.errors), len(res.unresolved)) == ("guarded", True, 0, 0)
    assert (out.status, out.ok) == ("error", False)
    assert out.errors == [bad] and out.unresolved == [open_] and out.guards == res.guards
    assert out.type_of(x) == res.type_of(x)
    lines = out.report().splitlines()
    assert lines[0] == "status: error"
    assert lines[1].startswith("model.onnx: node 'Reshape_12' (Reshape): error: node 'a' (Foo)")
    assert any(ln.startswith("guards:") for ln in lines)
    assert res.with_diagnostics([open_]).status == "unresolved"
    assert res.with_diagnostics([]).status == "guarded"
    with pytest.raises(ss.SymshapeError):
        res.with_diagnostics(bad)  # type: ignore[arg-type]


def test_front_ends_build_notes_from_the_top_level() -> None:
    note = ss.Note("`x` is the input", Span("m.py", 1, 5))
    d = ss.Diagnostic("unsupported-op", "m", NODE, (note,))
    span = {"file": "m.py", "line": 1, "column": 5}
    assert d.notes[0].to_json() == {"message": "`x` is the input", "span": span}
