"""The one walk and the one rewrite over expressions (symshape.ir.visit), and the table-driven
operators of expressions (symshape.ir.sugar): issue 12."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pytest

import symshape as ss
from symshape.ir.visit import bound_values, children, operands, pattern_vars, rebuild, rewrite, walk

F = "float32"


def _chain(depth: int) -> tuple[ss.Var, ss.Expr]:
    x = ss.var("x", ss.Tensor((3,), F))
    e: ss.Expr = x
    for _ in range(depth):
        e = ss.ops.relu(e)
    return x, e


def test_walk_visits_each_node_once_parents_first_in_evaluation_order() -> None:
    x = ss.var("x")
    r = ss.ops.relu(x)
    t = ss.Tuple([x, r, r])
    got = list(walk(t))
    assert [type(e).__name__ for e in got] == ["Tuple", "Var", "Call"]
    assert got[1] is x and got[2] is r


def test_walk_into_stops_below_rejected_nodes() -> None:
    x = ss.var("x")
    inner = ss.Function([x], ss.ops.relu(x))
    y = ss.var("y")
    body = ss.Tuple([inner, ss.ops.exp(y)])
    calls = [e for e in walk(body, into=lambda e: not isinstance(e, ss.Function)) if isinstance(e, ss.Call)]
    assert [c.callee.name for c in calls] == ["exp"]  # type: ignore[union-attr]


def test_walk_and_rewrite_are_iterative() -> None:
    depth = sys.getrecursionlimit() * 3
    _, e = _chain(depth)
    assert sum(1 for _ in walk(e)) == depth + 1

    def to_exp(old: ss.Expr, new: ss.Expr, done: Mapping[int, ss.Expr]) -> ss.Expr:
        return ss.ops.exp(*new.args) if isinstance(new, ss.Call) else new

    out = rewrite(e, to_exp)
    names = {c.callee.name for c in walk(out) if isinstance(c, ss.Call)}  # type: ignore[union-attr]
    assert names == {"exp"}


def test_rewrite_keeps_unchanged_nodes_and_sharing() -> None:
    x = ss.var("x", ss.Tensor((3,), F))
    r = ss.ops.relu(x)
    t = ss.Tuple([r, r])
    assert rewrite(t, lambda old, new, done: new) is t  # nothing changed: the same object

    def swap(old: ss.Expr, new: ss.Expr, done: Mapping[int, ss.Expr]) -> ss.Expr:
        return ss.ops.exp(x) if old is r else new

    out = rewrite(t, swap)
    assert isinstance(out, ss.Tuple) and out is not t
    assert out.fields[0] is out.fields[1]  # shared before, shared after
    assert out.span == t.span


REBUILT: list[tuple[str, Callable[[ss.Var, ss.Var], ss.Expr]]] = [
    ("call", lambda x, v: ss.ops.add(x, x)),
    ("call_pure", lambda x, v: ss.call_pure(ss.Function([v], v), x)),
    ("tuple", lambda x, v: ss.Tuple([x, x])),
    ("getitem", lambda x, v: ss.TupleGetItem(ss.Tuple([x]), 0)),
    ("let", lambda x, v: ss.Let(v, x, v)),
    ("function", lambda x, v: ss.Function([v], v, pure=True)),
    ("if", lambda x, v: ss.If(x, x, x)),
    ("match_cast", lambda x, v: ss.MatchCast(v, x, ss.Tensor((3,), F), v)),
    ("dataflow", lambda x, v: ss.Dataflow([(v, x)], v)),
]


@pytest.mark.parametrize("name, build", REBUILT, ids=[n for n, _ in REBUILT])
def test_rebuild_with_the_same_operands_is_structurally_equal(
    name: str, build: Callable[[ss.Var, ss.Var], ss.Expr]
) -> None:
    x = ss.var("x", ss.Tensor((3,), F))
    v = ss.var("v")
    e = build(x, v)
    again = rebuild(e, operands(e))
    assert again is not e and again.span == e.span
    assert ss.structural_equal(again, e)


def test_bound_values_and_pattern_vars() -> None:
    x = ss.var("x", ss.Tensor((3,), F))
    a, b = ss.var("a"), ss.var("b")
    prog = ss.Let(a, ss.ops.relu(x), ss.Dataflow([(b, ss.ops.exp(a))], b))
    vals = bound_values(prog)
    assert set(vals) == {id(a), id(b)}
    assert isinstance(vals[id(b)], ss.Call)

    lst = ss.GlobalTypeVar("L")
    t = ss.TypeVar("t")
    cons = ss.Constructor("Cons", [t, ss.TypeCall(lst, [t])], lst)
    h, rest = ss.var("h"), ss.var("rest")
    inner = ss.PatternTuple([ss.PatternWildcard(), ss.PatternVar(rest)])
    p = ss.PatternConstructor(cons, [ss.PatternVar(h), inner])
    assert pattern_vars(p) == [h, rest]


def test_children_are_operands_and_binders() -> None:
    x = ss.var("x", ss.Tensor((3,), F))
    v = ss.var("v")
    let = ss.Let(v, x, v)
    assert children(let) == [v, x, v]
    assert operands(let) == [x, v]
    df = ss.Dataflow([(v, x)], v)
    assert children(df) == [v, x, v]


# -- the operators of expressions ------------------------------------------------------------

REFLECTED = [
    ("add", lambda a, b: a + b),
    ("subtract", lambda a, b: a - b),
    ("multiply", lambda a, b: a * b),
    ("divide", lambda a, b: a / b),
    ("floor_divide", lambda a, b: a // b),
    ("mod", lambda a, b: a % b),
    ("power", lambda a, b: a**b),
    ("matmul", lambda a, b: a @ b),
]


@pytest.mark.parametrize("name, fn", REFLECTED, ids=[n for n, _ in REFLECTED])
def test_reflected_operators_keep_the_operand_order(name: str, fn: Callable[[Any, Any], Any]) -> None:
    x = ss.var("x", ss.Tensor((3, 3), F))
    e = fn(2.0, x)  # a number on the left: x's reflected method
    assert isinstance(e, ss.Call) and e.callee.name == name  # type: ignore[union-attr]
    assert isinstance(e.args[0], ss.Constant) and e.args[1] is x


@pytest.mark.parametrize("name, fn", REFLECTED, ids=[n for n, _ in REFLECTED])
def test_numpy_array_on_the_left_defers_to_the_expression(name: str, fn: Callable[[Any, Any], Any]) -> None:
    """numpy would broadcast its own operator over the array's elements (an object array of
    calls); ``__array_ufunc__ = None`` makes it hand the operation to the expression instead."""
    x = ss.var("x", ss.Tensor((3, 3), F))
    a = np.full((3, 3), 2.0, dtype=np.float32)
    e = fn(a, x)
    assert isinstance(e, ss.Call) and e.callee.name == name  # type: ignore[union-attr]
    assert isinstance(e.args[0], ss.Constant) and e.args[1] is x
    assert np.array_equal(e.args[0].data, a)
    assert ss.infer(e).status == "ok"


def test_numpy_comparison_on_the_left_is_the_mirrored_call() -> None:
    x = ss.var("x", ss.Tensor((3,), F))
    e = np.zeros(3, dtype=np.float32) < x
    assert isinstance(e, ss.Call) and e.callee.name == "greater" and e.args[0] is x  # type: ignore[union-attr]


def test_logical_operators_and_methods() -> None:
    b = ss.var("b", ss.Tensor((3,), "bool"))
    for e, name in [(b & b, "logical_and"), (b | b, "logical_or"), (~b, "logical_not"), (abs(b), "abs")]:
        assert e.callee.name == name  # type: ignore[union-attr]
    assert +b is b
    x = ss.var("x", ss.Tensor((2, 3), F))
    s = x.sum(axis=[0, 1], keepdims=True)
    assert s.callee.name == "sum" and s.attrs["axis"] == (0, 1) and s.attrs["keepdims"] is True  # type: ignore[union-attr]
    assert ss.structural_equal(x.argmax(1), ss.Op.get("argmax")(x, axis=1, keepdims=False))
    assert ss.Expr.sum.__doc__ and "axis" in ss.Expr.sum.__doc__
