"""TypeSolver.add_call's written-out fast path makes what the general constructors make: the
output hole, the instance and (when first read) its origin, numbered in call order; the eager
memo's identity index gives what the structural memo gives."""

from __future__ import annotations

import symshape as ss
from symshape.encoding.types import Attrs, IncompleteType
from symshape.relations.base import get_relation
from symshape.solver.diagnostics import Origin, OriginKind
from symshape.solver.instance import RelationState, new_hole
from symshape.solver.solve import TypeSolver
from symshape.source import Span


def test_call_instance_and_its_lazy_origin() -> None:
    n = ss.dim("n")
    x = ss.Tensor((n, 4), "float32")
    s = TypeSolver()
    sp = Span("model.py", 3, 5)
    before = Origin("unify", "before")
    h = s.add_call(get_relation("broadcast"), [x, x], Attrs(), "nn.bias_add", sp)
    after = Origin("unify", "after")
    assert type(h) is IncompleteType and h.kind == "type"
    rel = s.rels[-1]
    assert s.producer[h] is rel and rel.args == (x, x, h) and rel.num_inputs == 2
    assert rel.state == RelationState.SOLVED and rel.runs == 1 and not rel.erred and not rel.inq
    o = rel.origin
    assert o is rel.origin  # made once
    assert (o.kind, o.label, o.span, o.payload, o.expr) == (OriginKind.RELATION, "bias_add", sp, rel.id, None)
    assert before.seq < o.seq < after.seq  # numbered when the call was added, not when read
    assert str(s.solve().resolve(h)) == "Tensor[(n, 4), float32]"
    assert repr(rel).startswith(f"RelationInstance(id={rel.id}, ") and f"origin={o!r}" in repr(rel)


def test_pending_call_is_queued_and_reports_at_its_origin() -> None:
    s = TypeSolver()
    a = s.hole()
    sp = Span("model.py", 7, 1)
    out = s.add_call(get_relation("broadcast"), [a, ss.Tensor((3,), "float32")], Attrs(), "add", sp)
    rel = s.rels[-1]
    assert rel.state == RelationState.PENDING and rel.runs == 0
    s.unify(a, ss.Tensor((4,), "float32"))
    sol = s.solve()
    assert sol.status == "error"
    assert any(d.span == sp and d.origin is rel.origin for d in sol.errors)
    assert rel.origin.payload == rel.id and rel.origin.label == "add"
    del out


def test_new_hole_numbers_like_the_constructor() -> None:
    a, b, c = IncompleteType(), new_hole(), IncompleteType()
    assert a.id < b.id < c.id and b.kind == "type" and b != a


def test_identity_index_agrees_with_the_memo() -> None:
    n, m = ss.dims("n m")
    rd = get_relation("broadcast")
    x, y = ss.Tensor((n, 1), "float32"), ss.Tensor((1, m), "float32")
    y2 = ss.Tensor((1, m), "float32")  # equal, another object
    s = TypeSolver()
    outs = [s.add_call(rd, [x, t], Attrs(), "add", None) for t in (y, y, y2, y)]
    sol = s.solve()
    assert {str(sol.resolve(h)) for h in outs} == {"Tensor[(n, m), float32]"}
    assert s.memo.misses == 1 and s.memo.hits == 3
    # the identity index keeps the objects its keys name
    for key, (attrs, ins, _) in s.memo.by_id.items():
        assert key[1] == id(attrs) and list(key[2:]) == [id(t) for t in ins]
