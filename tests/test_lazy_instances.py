"""An operator call solved when added is kept as a record until something reads the solver's
instances (``TypeSolver.rels``, ``producer``): what is read then is what reading them after every
call gives (ids, origins numbered in call order, producers, the dependency graph)."""

from __future__ import annotations

from typing import Any

import pytest

import symshape as ss
from symshape.encoding.types import Attrs, IncompleteType, Type
from symshape.relations.base import get_relation
from symshape.solver.diagnostics import Origin
from symshape.solver.instance import RelationInstance, RelationState, op_display_name
from symshape.solver.solve import TypeSolver
from symshape.source import Span

_LABELS = ("add", "nn.bias_add", "multiply", "add", "subtract")


def _build(read_each: bool) -> tuple[TypeSolver, list[IncompleteType], list[Origin]]:
    """A solver with calls solved when added (ground inputs, a field given), one left pending,
    and origins made between them; ``read_each`` reads ``rels`` after every call."""
    n = ss.dim("n")
    s = TypeSolver()
    s.report_holes = False  # (as infer does: a hole the user made has its rows read at the end)
    bc = get_relation("broadcast")
    x = ss.Tensor((n, 4), "float32")
    y = ss.Tensor((1, 4), "float32")
    outs: list[IncompleteType] = []
    marks: list[Origin] = []
    free = s.hole()
    calls: list[tuple[list[Type], str, Type | None]] = [
        ([x, y], _LABELS[0], None),
        ([x, x], _LABELS[1], None),
        ([free, y], _LABELS[2], None),  # pending: an input not known yet
        ([x, y], _LABELS[3], None),  # the memo's identity hit
        ([x, y], _LABELS[4], ss.Tensor((n, 4), "float32")),  # the output given
    ]
    for i, (ins, label, solved) in enumerate(calls):
        marks.append(Origin("unify", f"mark {i}"))
        args = [outs[-1] if i == 1 else t for t in ins]
        outs.append(s.add_call(bc, args, Attrs(), label, Span("m.py", i + 1, 1), solved))
        if read_each:
            assert isinstance(s.rels[-1], RelationInstance)
    s.unify(free, ss.Tensor((n, 4), "float32"))
    return s, outs, marks


def _listing(s: TypeSolver, outs: list[IncompleteType]) -> list[str]:
    rows = []
    for r in s.rels:
        o = r.origin
        rows.append(
            f"{r.id} {r.display} {r.state} {r.runs} {r.inq} {r.erred} {list(map(str, r.args))} {r.attrs} "
            f"{r.num_inputs} {r.span} {o.kind} {o.label} {o.payload} {o.span}"
        )
    rows += [f"{h} {s.producer[h].id}" for h in outs]
    return rows


def _renamed(rows: list[str], outs: list[IncompleteType], delta: int) -> str:
    """``rows`` with every hole's number shifted by ``delta`` (two builds number them alike)."""
    text = "\n".join(rows)
    first = min(h.id for h in outs) - 1  # (the pending call's free input, made just before)
    for k in range(max(h.id for h in outs), first - 1, -1):
        text = text.replace(f"?t{k}", f"<{k + delta}>")
    return text


def test_records_become_the_instances_reading_each_gives() -> None:
    lazy, outs, marks = _build(read_each=False)
    assert any(type(r) is tuple for r in lazy._rels)  # kept as records until read
    eager, outs2, _ = _build(read_each=True)
    assert all(isinstance(r, RelationInstance) for r in eager._rels)
    delta = outs2[0].id - outs[0].id
    assert _renamed(_listing(lazy, outs), outs, delta) == _renamed(_listing(eager, outs2), outs2, 0)
    for i, r in enumerate(lazy.rels):
        out = r.args[-1]
        assert r.id == i and isinstance(out, IncompleteType) and lazy.producer[out] is r
        if i != 2:  # solved when added: what the constructor makes of a solved call
            made = RelationInstance(
                i, r.rdef, r.args, r.attrs, 2, None, RelationState.SOLVED, False, 1, False,
                op_display_name(_LABELS[i]), r.span, r.seq,
            )
            assert repr(r) == repr(made)
    # origins numbered when the call was added, not when first read
    seqs = [lazy.producer[h].origin.seq for h in outs]
    for i, q in enumerate(seqs):
        assert marks[i].seq < q
        if i + 1 < len(marks):
            assert q < marks[i + 1].seq
    assert str(lazy.solve().resolve(outs[2])) == "Tensor[(n, 4), float32]"


def test_graph_and_solving_see_the_records() -> None:
    lazy, outs, _ = _build(read_each=False)
    sol = lazy.solve()  # the pending call runs; the records stay records
    assert sol.status == "ok" and any(type(r) is tuple for r in lazy._rels)
    eager, outs2, _ = _build(read_each=True)
    eager.solve()
    delta = outs2[0].id - outs[0].id

    def edges(s: TypeSolver, d: int) -> list[str]:
        def node(n: tuple[str, int]) -> str:
            return f"{n[0]}{n[1] + d if n[0] == 'hole' else n[1]}"

        # (a unification's node is numbered by its origin: the two builds number them apart)
        return sorted(
            f"{node(a)}->{node(b)}" for a, b in s.graph.g.edges if min(a[1], b[1]) >= 0
        )

    got = edges(lazy, delta)
    assert got == edges(eager, 0)
    rels = {n for n in lazy.graph.g.nodes if n[0] == "rel" and n[1] >= 0}
    assert rels == {("rel", i) for i in range(len(outs))}
    assert f"hole{outs2[0].id}->rel1" in got  # the second call reads the first's output


def test_an_erroring_program_reports_alike() -> None:
    # explanations read the instances (the chain through calls solved when added)
    n = ss.dim("n")
    x = ss.var("x", ss.Tensor((n, 4), "float32"))
    w = ss.var("w", ss.Tensor((5, 3), "float32"))
    body = ss.ops.dense(ss.ops.relu(ss.ops.add(x, x)), w)
    res = ss.infer(ss.Function([x, w], body))
    assert res.status == "error"
    solver = res.solution.solver
    assert all(isinstance(r, RelationInstance) for r in solver.rels)
    assert "relu" in res.report() or "add" in res.report()


def test_weight_origins_numbered_when_admitted() -> None:
    """A weight's origin is made when ``sources`` is read, numbered when it was admitted; a type
    object annotating a second weight is copied (what ``admit_settled`` does)."""
    s = TypeSolver()
    w = ss.Tensor((4, 3), "float32")
    span = Span("m.onnx", 1, 1)
    a = s.admit_weight(w, "a", span, None)
    mid = Origin("unify", "mid")
    b = s.admit_weight(w, "b", span, None)
    assert a is w and b is not w and b == w
    (ta, oa), (tb, ob) = s.sources[id(a)], s.sources[id(b)]
    assert (ta, tb) == (a, b) and oa.seq < mid.seq < ob.seq
    ann = "is annotated `Tensor[(4, 3), float32]`"
    assert (oa.label, ob.label) == (f"`a` {ann}", f"`b` {ann}")
    assert list(s.sources) == [id(a), id(b)]  # admission order


def test_report_naming_weights_is_the_eager_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """An ONNX model whose error names its initializers: the same report whether the weights'
    origins are made when read (recorded inline by the generator, the fast path) or at once (each
    through ``admit_weight``, ``sources`` read after each)."""
    onnx = pytest.importorskip("onnx")
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    import symshape.onnx as sso

    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 4])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)
    inits = [
        numpy_helper.from_array(np.zeros(shape, np.float32), name)
        for name, shape in (("W0", (4, 6)), ("B0", (6,)), ("W1", (5, 3)))
    ]
    nodes = [
        helper.make_node("MatMul", ["X", "W0"], ["h"], name="mm0"),
        helper.make_node("Add", ["h", "B0"], ["h2"], name="add0"),
        helper.make_node("Relu", ["h2"], ["h3"], name="relu0"),
        helper.make_node("MatMul", ["h3", "W1"], ["Y"], name="mm1"),
    ]
    graph = helper.make_graph(nodes, "g", [x], [y], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    assert isinstance(model, onnx.ModelProto)
    lazy = sso.infer(model).report()
    assert "`W1` is annotated `Tensor[(5, 3), float32]`" in lazy
    fast = TypeSolver.admit_weight

    def eager(self: TypeSolver, t: ss.TensorType, name: str, span: Span | None, expr: object) -> Type:
        out = fast(self, t, name, span, expr)
        assert len(self.sources[id(out)]) == 2
        return out

    class _Every(dict[int, Any]):  # (every annotation "admitted before": no inline recording)
        def __contains__(self, k: object) -> bool:
            return True

    def tables(self: TypeSolver) -> tuple[dict[int, Any], dict[int, Type]]:
        return _Every(), self._admitted

    monkeypatch.setattr(TypeSolver, "admit_weight", eager)
    monkeypatch.setattr(TypeSolver, "weight_tables", tables)
    assert sso.infer(model).report() == lazy


def test_producer_of_makes_only_the_instance_asked_for() -> None:
    lazy, outs, _ = _build(read_each=False)
    eager, outs2, _ = _build(read_each=True)
    first = lazy.producer_of(outs[3])
    assert first is not None and first is lazy.producer_of(outs[3])
    assert sum(type(r) is tuple for r in lazy._rels) == sum(h is not outs[2] for h in outs) - 1
    assert lazy.producer_of(IncompleteType()) is None
    got = [lazy.producer_of(h) for h in outs]
    assert got[3] is first and all(r is not None for r in got)
    assert [lazy.producer[h] for h in outs] == got  # the same objects once all are made
    delta = outs2[0].id - outs[0].id
    assert _renamed(_listing(lazy, outs), outs, delta) == _renamed(_listing(eager, outs2), outs2, 0)


def test_relation_of_is_the_producer() -> None:
    n = ss.dim("n")
    x = ss.var("x", ss.Tensor((n, 4), "float32"))
    body = ss.ops.relu(ss.ops.add(x, x))
    res = ss.infer(ss.Function([x], body))
    some = [res.relation_of(c) for c in res.calls]
    assert all(r is not None for r in some)
    solver = res.solution.solver
    holes = [res._gen.types[id(c)] for c in res.calls]
    assert some == [solver.producer[h] for h in holes if isinstance(h, IncompleteType)]
    assert [r.display for r in some if r is not None] == ["add", "relu"]
    assert all(r in solver.rels for r in some)
