"""The solver's smaller parts after the restructuring of issue 12: the text enums (statuses, origin
kinds, relation states), the status judgement, the deep type walk, an error's notes, and the Z3
side of the evidence (the diagnostics layer holds no Z3)."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import pytest
import z3
from hypothesis import given
from hypothesis import strategies as st

import symshape as ss
from symshape.encoding.conds import ge
from symshape.encoding.types import IncompleteType, TupleType, Type, iter_types
from symshape.solver.diagnostics import Evidence, Origin, OriginKind, TextEnum
from symshape.solver.evidence import Z3Evidence
from symshape.solver.holes import holes_deep, types_deep
from symshape.solver.instance import RelationState
from symshape.solver.outcome import STATUSES, Status, judge
from symshape.solver.provenance import core_notes
from symshape.solver.session import Fact
from symshape.solver.unify import Unifier

n = ss.dim("n")

ENUMS: list[type[TextEnum]] = [Status, OriginKind, RelationState]


@pytest.mark.parametrize("member", [m for e in ENUMS for m in e], ids=str)
def test_a_text_enum_member_reads_as_its_string(member: TextEnum) -> None:
    value = member.value
    assert member == value and hash(member) == hash(value) and {value: 1}[member] == 1
    assert (str(member), f"{member}", format(member, ""), repr(member)) == (value, value, value, repr(value))
    assert json.dumps({"s": member}) == json.dumps({"s": value})
    assert pickle.loads(pickle.dumps(member)) is member and copy.deepcopy(member) is member
    assert type(member)(value) is member


def test_statuses_lists_every_status_in_order() -> None:
    assert STATUSES == ("ok", "guarded", "error", "unresolved", "inconclusive")
    assert [s.ok for s in Status] == [True, True, False, False, False]


@given(st.lists(st.booleans(), min_size=4, max_size=4))
def test_judge_takes_the_first_nonempty_list(present: list[bool]) -> None:
    lists = [["x"] if p else [] for p in present]
    got = judge(*lists)
    order = [Status.ERROR, Status.INCONCLUSIVE, Status.UNRESOLVED, Status.GUARDED]
    expected = next((s for s, p in zip(order, present) if p), Status.OK)
    assert got is expected and type(got) is Status


@pytest.mark.parametrize(
    ("build", "status"),
    [
        (lambda: [ss.Tensor((n, 1)), ss.Tensor((1, 4))], "ok"),
        (lambda: [ss.Tensor((n,)), ss.Tensor((5,))], "guarded"),
        (lambda: [ss.Tensor((3,)), ss.Tensor((5,))], "error"),
    ],
)
def test_a_solution_status_is_a_status(build: Any, status: str) -> None:
    solver = ss.TypeSolver()
    out = solver.hole()
    rel = solver.add_relation("broadcast", [*build(), out])
    sol = solver.solve()
    assert sol.status == status and type(sol.status) is Status and sol.ok == (status != "error")
    assert repr(sol).startswith(f"Solution(status='{status}'")
    assert rel.state == ("failed" if status == "error" else "solved")
    assert type(rel.state) is RelationState


def test_origins_made_by_the_solver_carry_an_origin_kind() -> None:
    solver = ss.TypeSolver()
    a = solver.hole()
    solver.unify(a, ss.Tensor((n,)))
    rel = solver.add_relation("identity", [a, solver.hole()])
    assert rel.origin.kind is OriginKind.RELATION
    assert solver.unify_log[0][2].kind is OriginKind.UNIFY
    # an origin made with the plain word is the same kind
    assert Origin("annotation", "x").kind == OriginKind.ANNOTATION


def _reference_nodes(u: Unifier, t: Type) -> list[int]:
    """Every node reachable from ``t`` through its parts and resolved holes (recursive)."""
    out: list[int] = []
    followed: set[IncompleteType] = set()

    def go(x: Type) -> None:
        for y in iter_types(x):
            out.append(id(y))
            if isinstance(y, IncompleteType):
                r = u.find(y)
                if r not in followed:
                    followed.add(r)
                    rt = u.resolved.get(r)
                    if rt is not None:
                        go(rt)

    go(t)
    return out


def _chain(depth: int, width: int) -> tuple[Unifier, Type, list[IncompleteType]]:
    """Holes resolved to tuples of further holes, ``depth`` levels deep; the last are open."""
    u = Unifier()
    o = Origin(OriginKind.UNIFY, "test")
    holes = [IncompleteType()]
    level = list(holes)
    for _ in range(depth):
        nxt: list[IncompleteType] = []
        for h in level:
            kids = [IncompleteType() for _ in range(width)]
            u.unify(h, TupleType([*kids, ss.Tensor((n,))]), o)
            nxt.extend(kids)
        holes.extend(nxt)
        level = nxt
    return u, TupleType([holes[0], holes[0]]), holes


@given(st.integers(0, 3), st.integers(1, 3))
def test_types_deep_reaches_every_resolved_hole(depth: int, width: int) -> None:
    u, t, holes = _chain(depth, width)
    assert sorted(id(x) for x in types_deep(u, t)) == sorted(_reference_nodes(u, t))
    got = list(holes_deep(u, t))
    assert len(got) == len({h.id for h in got})  # each hole once
    assert {h.id for h in got} == {h.id for h in holes}


def test_core_notes_are_in_program_order_and_name_each_member_once() -> None:
    here = ss.Span("m.py", 10, 1)
    at = [ss.Span("m.py", line, 1) for line in (1, 2, 3)]
    first, second, third = (Origin(OriginKind.RELATION, k, span) for k, span in zip("abc", at))
    err = Origin(OriginKind.RELATION, "err", here)
    core = [Fact(ge(n, 3), third, 0), Fact(ge(n, 2), first, 1), Fact(ge(n, 4), err, 2)]
    notes, members = core_notes(err, core, [(second, "b gives `x`"), (first, "a again")])
    assert [x.message for x in notes] == ["a requires `n >= 2`", "c requires `n >= 3`", "b gives `x`"]
    assert members == (err, first, third, second)


def test_evidence_checks_minimality_with_z3() -> None:
    ctx = z3.Context()
    x = z3.Int("x", ctx)
    ev = Z3Evidence((x < 0, x > 5), (x >= 0,), ctx)
    assert isinstance(ev, Evidence)
    assert ev.check_minimal() == ["member 1 is not needed"]
    assert ev.check_minimal((x < 0,)) == []
    assert ev.check_minimal((x > 5,)) == ["the members together are satisfiable"]
    with pytest.raises(TypeError):
        Evidence((), ())  # type: ignore[abstract]


def test_an_explained_error_carries_z3_evidence() -> None:
    x = ss.var("x", ss.Tensor((n, 3)))
    y = ss.var("y", ss.Tensor((n, 4)))
    res = ss.infer(ss.Function([x, y], ss.ops.add(x, y)))
    (d,) = res.errors
    assert isinstance(d.evidence, Z3Evidence) and d.evidence.check_minimal() == []
