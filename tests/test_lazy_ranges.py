"""The on-demand value ranges of :class:`symshape.ir.ranges.Ranges` against the whole forward pass.

``Ranges`` computes its facts forward in program order only up to the last call asked about, and
the variables' bound values only when it first follows one. Whatever order the questions come in,
every answer must be what the pass over all calls gives (the reference below: that pass, as the
class made it before). :func:`symshape.ir.visit.bound_values` (its own walk) against the one walk.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symshape as ss
from symshape.encoding.dims import as_dim
from symshape.ir.index_bounds import index_checks
from symshape.ir.module import program_roots
from symshape.ir.nodes import Dataflow, Let
from symshape.ir.op import Op
from symshape.ir.ranges import Ranges
from symshape.ir.visit import bound_values, walk
from test_ranges_rules import RULES, Rule

b, n, t = ss.dims("b n t")


def _program(rule: Rule) -> tuple[ss.InferenceResult, list[Any]]:
    """``rule``'s program over ranged ``x`` (and a take of ``x``'s entries by its own values), and
    the expressions to ask about: every call, every bound variable, the parameters."""
    x = ss.var("x", ss.Tensor((b, n), "int64", values=(-2, 5)))
    z = ss.var("z", ss.Tensor((2, t), "float32"))
    y = ss.var("y")
    out = rule.build(x, z)
    table = ss.var("table", ss.Tensor((8, 3), "float32"))
    picked = ss.ops.take(table, y, axis=0)
    body = ss.Let(y, ss.ops.add(x, ss.const(np.array(2, "int64"))), ss.Tuple([out, z, picked]))
    res = ss.infer(ss.Function([x, z, table], body))
    exprs: list[Any] = [*res.calls, x, z, table, y]
    return res, exprs


def _reference(res: ss.InferenceResult) -> Ranges:
    """The facts of every call, forward in program order (the pass without laziness)."""
    rs = Ranges(res)
    calls = res.calls
    rs._done = len(calls)  # (nothing left to compute on demand)
    rs._lets = bound_values(program_roots(res.program))  # (every variable looked up)
    for c in calls:
        if isinstance(c.callee, Op):
            f = rs._call(c, c.callee.name)
            if f is not None:
                rs.facts[id(c)] = f
    return rs


def _answer(rs: Ranges, e: Any) -> tuple[Any, ...] | None:
    f = rs.of(e)
    return None if f is None else (f.range, id(f.source), f.how)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_answers_in_any_order_are_the_whole_pass(rule: Rule, data: st.DataObject) -> None:
    res, exprs = _program(rule)
    ref = _reference(res)
    want = {id(e): _answer(ref, e) for e in exprs}
    order = data.draw(st.permutations(exprs))
    lazy = Ranges(res)
    assert {id(e): _answer(lazy, e) for e in order} == want
    assert lazy.lets == ref.lets


def test_only_the_prefix_asked_about_is_computed() -> None:
    x = ss.var("x", ss.Tensor((n,), "int64", values=(0, 3)))
    first = ss.ops.take(x, ss.const(np.array([0], "int64")), axis=0)
    rest = ss.ops.add(ss.ops.arange(n), ss.const(np.array(1, "int64")))
    res = ss.infer(ss.Function([x], ss.Tuple([first, rest])))
    rs = Ranges(res)
    assert rs.of(x) is not None and rs.facts == {}  # a parameter: no call computed
    assert rs._lets is None  # ... and no bound value collected
    assert rs.of(first) is not None and rs._done == res.calls.index(first) + 1
    f = rs.of(rest)
    assert f is not None and rs._done == len(res.calls)
    assert f.range == (as_dim(1), n)


def _walk_bound_values(roots: Any) -> dict[int, Any]:
    out: dict[int, Any] = {}
    for e in walk(roots):
        if isinstance(e, Let):
            out[id(e.var)] = e.value
        elif isinstance(e, Dataflow):
            for v, x in e.bindings:
                out[id(v)] = x
    return out


def _nested_program() -> Any:
    x = ss.var("x", ss.Tensor((n,), "float32"))
    a, c, d = ss.var("a"), ss.var("c"), ss.var("d")
    inner_p = ss.var("p", ss.Tensor((n,), "float32"))
    inner = ss.Function([inner_p], ss.Let(d, ss.ops.relu(inner_p), d))
    g = ss.var("g")
    df = ss.Dataflow([(a, ss.ops.add(x, x)), (c, ss.Call(g, [a]))], ss.Tuple([a, c]))
    return ss.Function([x], ss.Let(g, inner, ss.TupleGetItem(ss.Let(ss.var("t"), df, df), 0)))


@pytest.mark.parametrize("build", ["nested", *[r.name for r in RULES]])
def test_bound_values_is_the_walks(build: str) -> None:
    if build == "nested":
        prog = _nested_program()
    else:
        prog = _program(next(r for r in RULES if r.name == build))[0].program
    roots = program_roots(prog)
    got = bound_values(roots)
    assert got == _walk_bound_values(roots) and got


def _index_checks_reference(res: ss.InferenceResult) -> list[Any]:
    """Every call filtered (what :func:`index_checks` did before looking at the callees first)."""
    from symshape.ir.index_bounds import INDEX_MODES, _take_check

    takes = [
        c
        for c in res.calls
        if isinstance(c.callee, Op) and c.callee.name == "take" and c.attrs.get("mode") in INDEX_MODES
    ]
    rs = res._ranges()
    return [chk for c in takes if (chk := _take_check(res, rs, c)) is not None]


@pytest.mark.parametrize("mode", ["fast", "clip", "raise", "nonnegative", None])
def test_index_checks_are_those_of_every_call(mode: str | None) -> None:
    x = ss.var("x", ss.Tensor((n,), "int64", values=(0, 9)))
    table = ss.var("table", ss.Tensor((t, 2), "float32"))
    body: Any = ss.ops.relu(table)
    if mode is not None:
        body = ss.Tuple([body, ss.ops.take(table, x, axis=0, mode=mode)])
    res = ss.infer(ss.Function([x, table], body))
    got = [(c.cond, c.call, c.message, c.text) for c in index_checks(res)]
    want = [(c.cond, c.call, c.message, c.text) for c in _index_checks_reference(res)]
    assert got == want
    assert bool(got) == (mode in ("fast", "raise", "nonnegative"))
