"""No cascades: a value whose relation failed poisons its dependents silently.

The one root error is reported; the dependents are neither errors nor ``unresolved`` (issue 11).
Independent errors are all still reported, and strict-mode guards (which do not make a value
wrong) do not poison.
"""

from __future__ import annotations

from typing import Any

import pytest

import symshape as ss

n = ss.dim("n")


def T(shape: Any, dtype: str = "float32") -> ss.TensorType:
    return ss.Tensor(shape, dtype)


def codes(res: Any) -> list[str]:
    return [d.code for d in res.diagnostics]


def _reshape_then_add() -> Any:
    x = ss.var("x", T((n, 2, 3)))
    b = ss.var("b", T((n, 8)))
    r = ss.ops.reshape(x, (n, 7))  # 6*n elements vs 7*n
    return ss.Function([x, b], ss.ops.relu(ss.ops.add(r, b)))


def _split_then_dense() -> Any:
    x = ss.var("x", T((n, 1024)))
    w = ss.var("w", T((10, 300)))
    parts = ss.ops.split(x, 3, axis=1)  # 1024 is not divisible by 3
    h = ss.ops.dense(ss.TupleGetItem(parts, 0), w)
    return ss.Function([x, w], ss.ops.add(h, ss.ops.dense(ss.TupleGetItem(parts, 1), w)))


def _tuple_index_then_users() -> Any:
    p = ss.var("p", ss.TupleType([T((2, 2)), T((2, 2))]))
    g = ss.TupleGetItem(p, 2)
    return ss.Function([p], ss.ops.add(ss.ops.relu(g), ss.ops.softmax(g)))


def _unannotated_tuple_index() -> Any:
    # the tuple's type is known only after solving: the tuple_get_item relation fails
    a = ss.var("a", T((n, 4)))
    q = ss.var("q")
    body = ss.Let(q, ss.Tuple([a, a]), ss.ops.relu(ss.ops.exp(ss.TupleGetItem(q, 3))))
    return ss.Function([a], body)


def _matmul_early_in_a_chain() -> Any:
    x = ss.var("x", T((n, 4)))
    w = ss.var("w", T((5, 3)))
    h = ss.ops.matmul(x, w)
    for _ in range(50):
        h = ss.ops.add(ss.ops.relu(h), h)
    return ss.Function([x, w], ss.ops.flatten(h))


@pytest.mark.parametrize(
    "build, code",
    [
        (_reshape_then_add, "reshape-size"),
        (_split_then_dense, "shape-mismatch"),
        (_tuple_index_then_users, "arity-mismatch"),
        (_unannotated_tuple_index, "arity-mismatch"),
        (_matmul_early_in_a_chain, "shape-mismatch"),
    ],
)
def test_one_root_error_no_cascade(build: Any, code: str) -> None:
    res = ss.infer(build())
    assert res.status == "error"
    assert codes(res) == [code], res.report()
    assert res.unresolved == []


def test_independent_errors_are_all_reported() -> None:
    x = ss.var("x", T((n, 4)))
    y = ss.var("y", T((n, 5)))
    w = ss.var("w", T((8, 3)))
    first = ss.ops.reshape(x, (n, 3))
    second = ss.ops.matmul(x, w)
    third = ss.ops.add(x, y)
    res = ss.infer(ss.Function([x, y, w], ss.Tuple([ss.ops.relu(first), second, third])))
    assert sorted(codes(res)) == ["not-broadcastable", "reshape-size", "shape-mismatch"]


def test_annotated_binding_stops_the_poison() -> None:
    """A let-bound variable with an annotation has a trustworthy type: its users still run."""
    x = ss.var("x", T((n, 2, 3)))
    z = ss.var("z", T((n, 7)))
    y = ss.var("y", T((n, 5)))
    body = ss.Let(z, ss.ops.reshape(x, (n, 7)), ss.ops.add(z, y))
    res = ss.infer(ss.Function([x, y], body))
    assert sorted(codes(res)) == ["not-broadcastable", "reshape-size"]


def test_strict_guards_do_not_poison() -> None:
    m = ss.dim("m")
    x = ss.var("x", T((n,)))
    y = ss.var("y", T((5,)))
    z = ss.var("z", T((m,)))
    first = ss.ops.add(x, y)  # guard n == 1 or n == 5: an error in strict mode
    res = ss.infer(ss.Function([x, y, z], ss.ops.add(first, z)), strict=True)
    assert codes(res) == ["unproven-guard", "unproven-guard"]


# -- the solver API ------------------------------------------------------------------------------


def test_solver_poisons_the_readers_of_a_failed_relation() -> None:
    s = ss.TypeSolver()
    a, b, c = s.hole(), s.hole(), s.hole()
    r1 = s.add_relation("broadcast", [T((2, 3)), T((2, 4)), a])  # fails
    r2 = s.add_relation("broadcast", [a, T((1, 3)), b])
    r3 = s.add_relation("identity", [b, c])
    sol = s.solve()
    assert sol.status == "error"
    assert [d.code for d in sol.diagnostics] == ["not-broadcastable"]
    assert (r1.state, r2.state, r3.state) == ("failed", "poisoned", "poisoned")


def test_solver_poison_through_a_tuple() -> None:
    s = ss.TypeSolver()
    a, out = s.hole(), s.hole()
    s.add_relation("reshape", [T((2, 3)), a], {"newshape": (7,)})  # reshape-size, a := (7,)
    s.add_relation("concatenate", [ss.TupleType([a, T((8, 1))]), out], {"axis": 0})
    sol = s.solve()
    assert [d.code for d in sol.diagnostics] == ["reshape-size"]


def test_poison_marks_a_value_from_outside() -> None:
    s = ss.TypeSolver()
    bad, out = s.hole(), s.hole()
    s.poison(bad)
    rel = s.add_relation("identity", [bad, out])
    sol = s.solve()
    assert rel.state == "poisoned"
    assert sol.unresolved == []  # neither the relation nor the holes it left open


def test_output_that_is_an_input_keeps_its_readers() -> None:
    """A failed relation whose output *is* its input (a hole they share) does not poison the
    input's other readers: an independent error there is still reported."""
    s = ss.TypeSolver()
    x = s.hole()
    s.unify(x, T((n, 4)))
    s.add_relation("test_cascades_fail_after_alias", [x, x])
    s.add_relation("broadcast", [x, T((n, 5)), s.hole()])
    sol = s.solve()
    assert sorted(d.code for d in sol.errors) == ["not-broadcastable", "shape-mismatch"]


@ss.relation("test_cascades_fail_after_alias")
def _fail_after_alias(ctx: Any, args: Any, attrs: Any) -> bool:
    ctx.fail("shape-mismatch", "always fails")
