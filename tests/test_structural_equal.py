"""``structural_equal`` is structural comparison, as Relay's ``StructuralEqual`` (issue 11):
constants by value and dtype, bound variables by binding position, free variables by identity,
sub-expression sharing included; iterative."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import symshape as ss

F = "float32"
T = ss.Tensor


def test_constants_compare_by_value_and_dtype() -> None:
    assert not ss.structural_equal(ss.const([1.0, 2.0]), ss.const([3.0, 4.0]))
    assert ss.structural_equal(ss.const([1.0, 2.0]), ss.const([1.0, 2.0]))
    assert not ss.structural_equal(ss.const([1, 2], "int32"), ss.const([1, 2], "int64"))
    assert not ss.structural_equal(ss.const([1.0, 2.0]), ss.const([[1.0, 2.0]]))
    assert not ss.structural_equal(ss.const(np.array([0.0], F)), ss.const(np.array([-0.0], F)))
    nan = np.array([np.nan], F)
    assert ss.structural_equal(ss.const(nan), ss.const(nan.copy()))
    assert ss.structural_equal(ss.Constant((2, 3), F), ss.Constant((2, 3), F))
    assert not ss.structural_equal(ss.Constant((2, 3), F), ss.Constant((3, 2), F))
    assert not ss.structural_equal(ss.Constant((2,), F), ss.const([1.0, 2.0]))


def _fn_exp() -> ss.Function:
    x = ss.var("x", T((2,), F))
    return ss.Function([x], ss.ops.exp(x))


def test_bound_variables_by_position() -> None:
    assert ss.structural_equal(_fn_exp(), _fn_exp())
    x = ss.var("renamed", T((2,), F))
    assert ss.structural_equal(_fn_exp(), ss.Function([x], ss.ops.exp(x)))
    y = ss.var("x", T((3,), F))
    assert not ss.structural_equal(_fn_exp(), ss.Function([y], ss.ops.exp(y)))  # annotation
    a, b = ss.var("a", T((2,), F)), ss.var("b", T((2,), F))
    swapped_l = ss.Function([a, b], ss.ops.subtract(a, b))
    c, d = ss.var("a", T((2,), F)), ss.var("b", T((2,), F))
    swapped_r = ss.Function([c, d], ss.ops.subtract(d, c))
    assert not ss.structural_equal(swapped_l, swapped_r)


def test_let_and_match_cast_binders() -> None:
    def let_prog() -> ss.Function:
        x = ss.var("x", T((2,), F))
        v = ss.var("v")
        return ss.Function([x], ss.Let(v, ss.ops.relu(x), ss.ops.add(v, x)))

    assert ss.structural_equal(let_prog(), let_prog())

    def cast_prog(k: int) -> ss.Function:
        x = ss.var("x", T((2,), F))
        v = ss.var("v")
        return ss.Function([x], ss.MatchCast(v, x, T((k,), F), v))

    assert ss.structural_equal(cast_prog(2), cast_prog(2))
    assert not ss.structural_equal(cast_prog(2), cast_prog(3))


def test_free_variables_by_identity() -> None:
    x = ss.var("x", T((2,), F))
    y = ss.var("x", T((2,), F))
    assert ss.structural_equal(ss.ops.relu(x), ss.ops.relu(x))
    assert not ss.structural_equal(ss.ops.relu(x), ss.ops.relu(y))
    assert ss.structural_equal(ss.ops.relu(x), ss.ops.relu(y), map_free_vars=True)


def test_sharing_counts() -> None:
    x = ss.var("x", T((2,), F))
    c = ss.const([1.0, 2.0])
    shared = ss.Function([x], ss.ops.add(c, c))
    x2 = ss.var("x", T((2,), F))
    unshared = ss.Function([x2], ss.ops.add(ss.const([1.0, 2.0]), ss.const([1.0, 2.0])))
    assert not ss.structural_equal(shared, unshared)
    assert not ss.structural_equal(unshared, shared)
    a = ss.var("a", T((2,), F))
    b = ss.var("b", T((2,), F))
    assert not ss.structural_equal(ss.Function([a], ss.ops.add(a, a)), ss.Function([a, b], ss.ops.add(a, b)))


def _c2() -> ss.Constant:
    return ss.Constant((2,))


DIFFERENT: list[tuple[str, Callable[[], ss.Expr], Callable[[], ss.Expr]]] = [
    ("op", lambda: ss.ops.relu(ss.Constant((2,))), lambda: ss.ops.exp(ss.Constant((2,)))),
    (
        "attrs",
        lambda: ss.ops.softmax(ss.Constant((2, 3)), axis=0),
        lambda: ss.ops.softmax(ss.Constant((2, 3)), axis=1),
    ),
    ("index", lambda: ss.Tuple([ss.Constant((2,))])[0], lambda: ss.Tuple([_c2(), _c2()])[1]),
    ("arity", lambda: ss.Tuple([_c2()]), lambda: ss.Tuple([_c2(), _c2()])),
    ("global", lambda: ss.GlobalVar("f"), lambda: ss.GlobalVar("g")),
    (
        "if",
        lambda: ss.If(ss.Constant((), "bool"), ss.Constant((2,)), ss.Constant((3,))),
        lambda: ss.If(ss.Constant((), "bool"), ss.Constant((3,)), ss.Constant((2,))),
    ),
    (
        "purity",
        lambda: ss.Function([], ss.Constant((2,)), pure=True),
        lambda: ss.Function([], ss.Constant((2,)), pure=False),
    ),
    (
        "ret_type",
        lambda: ss.Function([], ss.Constant((2,)), ret_type=T((2,), F)),
        lambda: ss.Function([], ss.Constant((2,))),
    ),
    (
        "call_pure",
        lambda: ss.call_pure(ss.GlobalVar("f"), ss.Constant((2,))),
        lambda: ss.Call(ss.GlobalVar("f"), [ss.Constant((2,))]),
    ),
    ("kind", lambda: ss.Tuple([]), lambda: ss.Constant(())),
]


@pytest.mark.parametrize(("name", "left", "right"), DIFFERENT, ids=[d[0] for d in DIFFERENT])
def test_differences_are_found(
    name: str, left: Callable[[], ss.Expr], right: Callable[[], ss.Expr]
) -> None:
    assert ss.structural_equal(left(), left())
    assert not ss.structural_equal(left(), right())
    assert not ss.structural_equal(right(), left())


def test_match_patterns() -> None:
    lst = ss.GlobalTypeVar("List")
    a = ss.TypeVar("a")
    nil = ss.Constructor("Nil", [], lst)
    cons = ss.Constructor("Cons", [a, ss.TypeCall(lst, [a])], lst)

    def prog(first: bool) -> ss.Function:
        xs = ss.var("xs", ss.TypeCall(lst, [T((2,), F)]))
        h, t = ss.var("h"), ss.var("t")
        body = h if first else t
        clause = ss.Clause(ss.PatternConstructor(cons, [ss.PatternVar(h), ss.PatternVar(t)]), body)
        return ss.Function([xs], ss.Match(xs, [clause, ss.Clause(ss.PatternConstructor(nil), xs)]))

    assert ss.structural_equal(prog(True), prog(True))
    assert not ss.structural_equal(prog(True), prog(False))


def test_deep_programs_compare_without_recursion() -> None:
    import sys
    import threading

    def chain(k: float) -> ss.Function:
        x = ss.var("x", T((2,), F))
        e: ss.Expr = x
        for i in range(5_000):
            e = ss.ops.add(e, ss.const([k if i == 2_500 else 1.0, 1.0]))
        return ss.Function([x], e)

    a, b, c = chain(1.0), chain(1.0), chain(2.0)
    out: list[bool] = []

    def run() -> None:
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(200)
        try:
            out.extend([ss.structural_equal(a, b), ss.structural_equal(a, c)])
        finally:
            sys.setrecursionlimit(old)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert out == [True, False]
