"""Joins of ``If``/``Match`` branches never put ``?`` into a guard (issue 11).

A dimension on which the branches differ becomes a fresh ``?`` that remembers its alternatives (the
branches' dimensions). A condition over it must hold for every branch, so it is required for each
alternative: broadcasting the join of ``w`` and ``4`` against ``w`` needs ``w == 4 or w == 1``, a
guard an assignment decides.
"""

from __future__ import annotations

import pytest
import z3

import symshape as ss
from symshape.encoding.conds import any_of, eq, expand_joins
from symshape.encoding.dims import bounds, const, fresh_join
from symshape.encoding.z3 import Z3Encoder

F = "float32"
T = ss.Tensor


def _if(then_t: ss.Type, else_t: ss.Type) -> tuple[ss.Var, ss.Var, ss.Var, ss.If]:
    c = ss.var("c", T((), "bool"))
    a, b = ss.var("a", then_t), ss.var("b", else_t)
    return c, a, b, ss.If(c, a, b)


def _no_anonymous(res: ss.InferenceResult) -> None:
    for g in res.guards:
        assert "?" not in str(g), str(g)


def test_broadcast_against_a_join_guards_the_alternatives() -> None:
    w = ss.dim("w")
    c, a, b, j = _if(T((w, 3), F), T((4, 3), F))
    y = ss.ops.add(j, a)
    res = ss.infer(ss.Function([c, a, b], y))
    assert res.status == "guarded", res.report()
    _no_anonymous(res)
    assert [str(g) for g in res.guards] == ["w == 4 or w == 1"]
    g = res.guards[0]
    assert g.holds({w: 4}) and g.holds({w: 1}) and not g.holds({w: 2})
    assert str(res.type_of(j)) == "Tensor[(?, 3), float32]"


def test_a_join_both_branches_agree_with_is_proved() -> None:
    w = ss.dim("w")
    c, a, b, j = _if(T((w, 3), F), T((1, 3), F))
    y = ss.ops.add(j, a)  # w against w or 1: broadcasts for every w
    res = ss.infer(ss.Function([c, a, b], y))
    assert res.status == "ok", res.report()


def test_a_join_one_branch_cannot_meet_is_an_error() -> None:
    w = ss.dim("w")
    c, a, b, j = _if(T((w, 3), F), T((4, 3), F))
    k = ss.var("k", T((5, 3), F))
    y = ss.ops.add(j, k)  # the else branch gives 4 against 5
    res = ss.infer(ss.Function([c, a, b, k], y))
    assert res.status == "error", res.report()
    assert res.errors[0].code == "not-broadcastable"
    assert "needs `?" not in res.errors[0].message


def test_matmul_over_a_join() -> None:
    w, h = ss.dims("w h")
    c, a, b, j = _if(T((2, w), F), T((2, h), F))
    m = ss.var("m", T((8, 3), F))
    y = ss.ops.matmul(j, m)
    res = ss.infer(ss.Function([c, a, b, m], y))
    _no_anonymous(res)
    assert res.status == "guarded", res.report()
    parts = sorted(p for g in res.guards for p in str(g).split(" and "))
    assert parts == ["h == 8", "w == 8"]
    g = ss.conds.all_of(*(g.cond for g in res.guards))
    assert ss.conds.cond_holds(g, {w: 8, h: 8}) and not ss.conds.cond_holds(g, {w: 8, h: 7})


def test_nested_joins() -> None:
    w, v = ss.dims("w v")
    c = ss.var("c", T((), "bool"))
    a, b, d = ss.var("a", T((w,), F)), ss.var("b", T((4,), F)), ss.var("d", T((v,), F))
    j = ss.If(c, ss.If(c, a, b), d)
    y = ss.ops.add(j, ss.var("e", T((4,), F)))
    e = y.args[1]
    res = ss.infer(ss.Function([c, a, b, d, e], y))  # type: ignore[list-item]
    _no_anonymous(res)
    assert res.status == "guarded", res.report()
    conds = " and ".join(str(g) for g in res.guards)
    assert "w" in conds and "v" in conds
    g = ss.conds.all_of(*(g.cond for g in res.guards))
    assert ss.conds.cond_holds(g, {w: 4, v: 1})
    assert not ss.conds.cond_holds(g, {w: 4, v: 3})


def test_join_alternatives_bound_the_join() -> None:
    z = ss.dim("z", min=0)
    n = ss.dim("n")
    j = fresh_join([const(0), n])
    assert bounds(j) == (0, float("inf"))  # not >= 1: the join may be 0
    assert bounds(fresh_join([const(2), const(5)])) == (2, 5)
    # joins of joins are flattened
    jj = fresh_join([j, z])
    at = jj.atom
    assert isinstance(at, ss.encoding.dims.AnyDim) and len(at.alts) == 3  # type: ignore[attr-defined]
    assert str(jj) == "?"


def test_expand_joins_is_the_conjunction_over_branches() -> None:
    w = ss.dim("w")
    j = fresh_join([w, const(4)])
    # a disjunction over the join is not split per comparison: j == w or j == 4 always holds
    assert expand_joins(any_of(eq(j, w), eq(j, 4))) == ss.conds.TRUE
    assert str(expand_joins(eq(j, 3))) == "False"
    assert str(expand_joins(any_of(eq(j, w), eq(j, 1), eq(w, 1)))) == "w == 4 or w == 1"


def test_z3_knows_a_join_is_one_of_its_alternatives() -> None:
    w = ss.dim("w")
    j = fresh_join([w, const(4)])
    enc = Z3Encoder()
    goal = enc.cond(any_of(eq(j, w), eq(j, 4)))
    s = z3.Solver()
    s.add(*enc.take_axioms())
    s.add(z3.Not(goal))
    assert s.check() == z3.unsat


@pytest.mark.parametrize("strict", [False, True])
def test_strict_mode_reports_the_expanded_guard(strict: bool) -> None:
    w = ss.dim("w")
    c, a, b, j = _if(T((w, 3), F), T((4, 3), F))
    res = ss.infer(ss.Function([c, a, b], ss.ops.add(j, a)), strict=strict)
    text = res.report()
    assert "w == 4 or w == 1" in text
    assert "? ==" not in text and "== ?" not in text
