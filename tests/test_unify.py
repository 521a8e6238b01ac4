"""Unification, re-expressing Relay's tests/python/relay/test_type_solver.py with symshape's API.

Relay raises on a failed unification; symshape records the conflict and ``solve()`` reports it with
``status == "error"`` and a catalogue code.
"""

from __future__ import annotations

import pytest

import symshape as ss

T = ss.Tensor
a, b, c = ss.TypeVar("a"), ss.TypeVar("b"), ss.TypeVar("c")
n, m = ss.dims("n m")


def error_codes(sol: ss.Solution) -> list[str]:
    return [d.code for d in sol.errors]


def gen_type(solver: ss.TypeSolver, name: str, args: list[ss.Type], out: ss.Type | None = None) -> ss.Type:
    """Relay's ``solver.gen_type``: add ``name(args..., out)`` with a fresh hole as ``out``."""
    out = out if out is not None else solver.hole()
    solver.add_relation(name, [*args, out])
    return out


# -- relations through holes ---------------------------------------------------------------------


def test_bcast() -> None:
    solver = ss.TypeSolver()
    t0 = T((10, 20), "float32")
    t1 = T((10, 1), "float32")
    tc = T((10, 1, 1), "float32")
    t2 = gen_type(solver, "broadcast", [t0, t1])
    t3 = gen_type(solver, "identity", [t2])
    t4 = gen_type(solver, "broadcast", [t3, tc])
    sol = solver.solve()
    assert sol.status == "ok" and sol.ok
    assert sol.resolve(t2) == T((10, 20), "float32")
    assert sol.resolve(t3) == T((10, 20), "float32")
    assert sol.resolve(t4) == T((10, 10, 20), "float32")
    assert sol.errors == [] and sol.guards == []


def test_backward_solving() -> None:
    solver = ss.TypeSolver()
    t0 = T((10, 20), "float32")
    tc = T((10, 1, 1), "float32")
    t1 = solver.hole()
    t3 = gen_type(solver, "broadcast", [t0, t1])
    gen_type(solver, "identity", [t1], out=tc)
    sol = solver.solve()
    assert sol.status == "ok"
    assert sol.resolve(t1) == tc
    assert sol.resolve(t3) == T((10, 10, 20), "float32")


def test_recursive_backward_solving() -> None:
    solver = ss.TypeSolver()
    tensor1 = T((10, 20), "float32")
    tensor2 = T((10, 1, 1), "float32")
    tensor3 = T((10,), "float32")
    t1, t2, t3 = solver.hole(), solver.hole(), solver.hole()
    tup1 = ss.TupleType([ss.TupleType([tensor1, tensor2]), tensor3])
    tup2 = ss.TupleType([ss.TupleType([t1, t2]), t3])
    gen_type(solver, "identity", [tup1], out=tup2)
    sol = solver.solve()
    assert sol.status == "ok"
    assert sol.resolve(tup2) == tup1
    assert sol.resolve(t2) == tensor2


def test_backward_solving_after_child_update() -> None:
    solver = ss.TypeSolver()
    tensor1 = T((10, 20), "float32")
    tensor2 = T((10, 1, 1), "float32")
    t1, t2, t3 = solver.hole(), solver.hole(), solver.hole()
    tup1 = ss.TupleType([t1, t2])
    tup2 = ss.TupleType([t1, t3])
    tup_concrete = ss.TupleType([tensor1, tensor2])

    t4 = gen_type(solver, "identity", [tup1])
    t5 = gen_type(solver, "identity", [tup2])
    gen_type(solver, "identity", [t4], out=t5)
    sol = solver.solve()
    # nothing determines t1 and t2 (= t3) yet: ``ok`` would claim every type is resolved
    assert sol.status == "unresolved"
    assert sorted(d.message.split("`")[1] for d in sol.unresolved) == sorted(
        str(sol.resolve(h)) for h in (t1, t2)
    )
    r3 = sol.resolve(t3)
    assert r3 is sol.resolve(t2)  # t2 and t3 were unified through the tuples
    assert sol.resolve(t4) in (sol.resolve(tup1), sol.resolve(tup2))
    assert sol.resolve(t4) == sol.resolve(t5)
    assert isinstance(r3, ss.IncompleteType)

    # refining the holes *inside* tup1 and tup2 refines t4 and t5
    gen_type(solver, "identity", [t1], out=tensor1)
    gen_type(solver, "identity", [t2], out=tensor2)
    sol2 = solver.solve()
    assert sol2.status == "ok"
    assert sol2.resolve(t4) == tup_concrete
    assert sol2.resolve(t5) == tup_concrete
    assert sol2.resolve(t3) == tensor2


# -- plain unification ---------------------------------------------------------------------------


def test_unify_tuple() -> None:
    solver = ss.TypeSolver()
    t1, t2 = solver.hole(), solver.hole()
    t3 = T((10, 20), "float32")
    tup1 = ss.TupleType([t1, t2])
    tup2 = ss.TupleType([t3, t3])
    unified = solver.unify(tup1, tup2)
    assert unified == tup2
    sol = solver.solve()
    assert sol.status == "ok"
    assert sol.resolve(tup1) == tup2


def test_unify_global_type_var() -> None:
    solver = ss.TypeSolver()
    gtv = ss.GlobalTypeVar("gtv")
    assert solver.unify(gtv, gtv) == gtv
    assert solver.solve().status == "ok"


def test_unify_typecall() -> None:
    solver = ss.TypeSolver()
    gtv = ss.GlobalTypeVar("gtv")
    t1, t2 = solver.hole(), solver.hole()
    t3 = T((10, 20), "float32")
    tc1 = ss.TypeCall(gtv, [t1, t2])
    tc2 = ss.TypeCall(gtv, [t3, t3])
    assert solver.unify(tc1, tc2) == tc2
    sol = solver.solve()
    assert sol.status == "ok"
    assert sol.resolve(tc1) == tc2


def test_unify_functype() -> None:
    solver = ss.TypeSolver()
    t1, t2, t3 = solver.hole(), solver.hole(), solver.hole()
    unit = ss.TupleType([])
    tensor1 = T((10, 20), "float32")
    tensor2 = T((10,), "float32")
    ft1 = ss.FuncType([t1, t2], t3)
    ft2 = ss.FuncType([tensor1, tensor2], unit)
    assert solver.unify(ft1, ft2) == ft2
    sol = solver.solve()
    assert sol.status == "ok"
    assert sol.resolve(ft1) == ft2


def test_recursive_unify() -> None:
    solver = ss.TypeSolver()
    t1, t2, t3 = solver.hole(), solver.hole(), solver.hole()
    tensor1 = T((10, 10, 20), "float32")
    tensor2 = T((10, 20), "float32")
    tensor3 = T((10,), "float32")
    tup1 = ss.TupleType([ss.TupleType([t1, t2]), t2])
    tup2 = ss.TupleType([ss.TupleType([tensor1, tensor2]), tensor2])
    ft1 = ss.FuncType([tup1, t3], t3)
    ft2 = ss.FuncType([tup2, tensor3], tensor3)
    assert solver.unify(ft1, ft2) == ft2
    sol = solver.solve()
    assert sol.status == "ok"
    assert sol.resolve(ft1) == ft2


def test_unify_vars_under_tuples() -> None:
    solver = ss.TypeSolver()
    t1 = solver.hole()
    tup1 = ss.TupleType([t1, t1])
    assert solver.unify(tup1, tup1) == tup1

    t2 = solver.hole()
    tup2 = ss.TupleType([t2, t2])
    tup3 = ss.TupleType([t1, t2])
    tup4 = ss.TupleType([t2, t1])
    unified = solver.unify(tup3, tup4)
    assert unified in (tup1, tup2)
    sol = solver.solve()
    assert sol.status == "unresolved"  # one class of holes, which nothing determines
    assert len(sol.unresolved) == 1
    assert sol.resolve(t1) is sol.resolve(t2)


def test_binding_over_typevars() -> None:
    solver = ss.TypeSolver()
    t1, t2 = solver.hole(), solver.hole()
    d = ss.TypeVar("d")
    ft1 = ss.FuncType([t1], t2, [c, d])
    ft2 = ss.FuncType([a], b, [a, b])
    unified = solver.unify(ft1, ft2)
    sol = solver.solve()
    assert sol.status == "unresolved"  # t1 and t2 are bound to fresh holes only
    assert unified == sol.resolve(ft1)


def test_unify_quantified_funcs() -> None:
    solver = ss.TypeSolver()
    ft1 = ss.FuncType([a, b], c, [a, b, c])
    ft2 = ss.FuncType([a, a], a, [a])
    assert solver.unify(ft1, ft2) == ft2

    ft3 = ss.FuncType([a], a, [a])
    ft4 = ss.FuncType([b], c, [b, c])
    assert solver.unify(ft3, ft4) == ft3
    assert solver.solve().status == "ok"


def test_unify_quantified_func_and_concrete() -> None:
    solver = ss.TypeSolver()
    ft1 = ss.FuncType([a], b, [a, b])
    ft2 = ss.FuncType([b], ss.TupleType([]), [b])
    assert solver.unify(ft1, ft2) == ft2
    ft3 = ss.FuncType([T((n,))], T((n,)))
    assert solver.unify(ss.FuncType([a], a, [a]), ft3) == ft3
    assert solver.solve().status == "ok"


def test_unify_quantified_funcs_nesting() -> None:
    solver = ss.TypeSolver()
    ft1 = ss.FuncType([a, ss.TupleType([b, c])], ss.TupleType([a, b, c]), [a, b, c])
    ft2 = ss.FuncType([a, ss.TupleType([a, a])], ss.TupleType([a, a, a]), [a])
    assert solver.unify(ft1, ft2) == ft2
    assert solver.solve().status == "ok"


@pytest.mark.parametrize("flip", [False, True])
def test_unify_quantified_funcs_var_order(flip: bool) -> None:
    # Relay crashes on this one; type parameters pair by use, not by position
    solver = ss.TypeSolver()
    ft1 = ss.FuncType([a, ss.TupleType([b, c])], ss.TupleType([a, b, c]), [a, b, c])
    ft2 = ss.FuncType([a, ss.TupleType([a, c])], ss.TupleType([a, a, c]), [a, c])
    unified = solver.unify(ft2, ft1) if flip else solver.unify(ft1, ft2)
    assert unified == ft2
    assert str(unified) == "fn<a, c>(a, (a, c)) -> (a, a, c)"
    assert solver.solve().status == "ok"


def test_unify_alpha_equivalent_funcs() -> None:
    solver = ss.TypeSolver()
    f = ss.FuncType([a, b], a, [a, b])
    g = ss.FuncType([c, a], c, [c, a])
    assert solver.unify(f, g) == f
    assert solver.solve().status == "ok"


# -- failures: recorded, then reported by solve() ----------------------------------------------


def _fails(left: ss.Type, right: ss.Type, code: str, solver: ss.TypeSolver | None = None) -> ss.Solution:
    solver = solver or ss.TypeSolver()
    solver.unify(left, right)  # does not raise
    sol = solver.solve()
    assert sol.status == "error"
    assert not sol.ok
    assert error_codes(sol) == [code]
    return sol


def test_incompatible_tuple_unification() -> None:
    solver = ss.TypeSolver()
    t1, t2 = solver.hole(), solver.hole()
    tensor1 = T((1, 2, 3), "float32")
    tensor2 = T((2, 3), "float32")
    tensor3 = T((3,), "float32")
    tup1 = ss.TupleType([ss.TupleType([t1, t1]), t2])
    tup2 = ss.TupleType([ss.TupleType([tensor1, tensor2]), tensor3])
    sol = _fails(tup1, tup2, "rank-mismatch", solver)
    assert "field 1" in sol.errors[0].message


def test_tuple_arity_mismatch() -> None:
    _fails(ss.TupleType([T((2,))]), ss.TupleType([T((2,)), T((2,))]), "arity-mismatch")


def test_bad_recursive_unification() -> None:
    solver = ss.TypeSolver()
    t1 = solver.hole()
    sol = _fails(t1, ss.TupleType([t1, t1]), "occurs-check", solver)
    assert sol.errors[0].span is not None
    assert sol.errors[0].span.file == __file__


def test_occurs_check_through_a_class() -> None:
    solver = ss.TypeSolver()
    t1, t2 = solver.hole(), solver.hole()
    solver.unify(t1, t2)
    _fails(t2, ss.FuncType([t1], T((2,))), "occurs-check", solver)


def test_unify_invalid_global_typevars() -> None:
    _fails(ss.GlobalTypeVar("gtv1"), ss.GlobalTypeVar("gtv2"), "type-mismatch")


def test_incompatible_typecall_var_unification() -> None:
    solver = ss.TypeSolver()
    tc1 = ss.TypeCall(ss.GlobalTypeVar("gtv1"), [solver.hole()])
    tc2 = ss.TypeCall(ss.GlobalTypeVar("gtv2"), [solver.hole()])
    _fails(tc1, tc2, "type-mismatch", solver)


def test_incompatible_typecall_args_unification() -> None:
    solver = ss.TypeSolver()
    gtv = ss.GlobalTypeVar("gtv1")
    t1, t2 = solver.hole(), solver.hole()
    tc1 = ss.TypeCall(gtv, [ss.TupleType([t1, t1]), t2])
    tc2 = ss.TypeCall(gtv, [ss.TupleType([T((1, 2, 3)), T((2, 3))]), T((3,))])
    _fails(tc1, tc2, "rank-mismatch", solver)


def test_incompatible_quantified_func_unification() -> None:
    ft1 = ss.FuncType([a, b], c, [a, b, c])
    ft2 = ss.FuncType([b, c], ss.TupleType([a]), [a, b, c])
    _fails(ft1, ft2, "type-mismatch")


@pytest.mark.parametrize(
    ("left", "right", "code"),
    [
        (T((n, 3), "float32"), T((n, 3), "int32"), "dtype-mismatch"),
        (T((n, 3)), T((n,)), "rank-mismatch"),
        (T((2, 3)), T((2, 4)), "shape-mismatch"),
        (T((n,)), T((n + 1,)), "shape-mismatch"),
        (T((2 * n,)), T((5,)), "shape-mismatch"),
        (T((2,)), ss.TupleType([T((2,))]), "type-mismatch"),
        (a, b, "type-mismatch"),
        (ss.TypeVar("x", "shape"), ss.TypeVar("x", "dtype"), "kind-mismatch"),
        (ss.FuncType([T((2,))], T((2,))), ss.FuncType([], T((2,))), "arity-mismatch"),
        (ss.TypeCall(ss.GlobalTypeVar("L"), [a]), ss.TypeCall(ss.GlobalTypeVar("L"), [a, a]),
         "arity-mismatch"),
        (ss.ShapeType(2), ss.ShapeType(3), "rank-mismatch"),
        (ss.ObjectType(), T((2,)), "type-mismatch"),
    ],
    ids=str,
)
def test_structural_conflicts(left: ss.Type, right: ss.Type, code: str) -> None:
    sol = _fails(left, right, code)
    msg = sol.errors[0].message
    assert str(left) in msg and str(right) in msg


def test_hole_kind_mismatch() -> None:
    solver = ss.TypeSolver()
    solver.unify(solver.hole("shape"), solver.hole("type"))
    sol = solver.solve()
    assert error_codes(sol) == ["kind-mismatch"]


def test_unify_is_recorded_not_raised_and_returns_left() -> None:
    solver = ss.TypeSolver()
    t = T((2,), "float32")
    assert solver.unify(t, T((3,), "float32")) == t
    sol = solver.solve()
    assert error_codes(sol) == ["shape-mismatch"]
    assert "2 vs 3" in sol.errors[0].message


def test_several_errors_each_reported_once() -> None:
    solver = ss.TypeSolver()
    solver.unify(T((2,)), T((3,)))
    solver.unify(T((2,), "int32"), T((2,), "float32"))
    sol = solver.solve()
    assert error_codes(sol) == ["shape-mismatch", "dtype-mismatch"]
    assert solver.solve().errors == sol.errors


# -- unknown rank, unknown dtype, shapes --------------------------------------------------------


def test_unknown_rank_and_dtype_unify_with_known() -> None:
    solver = ss.TypeSolver()
    assert solver.unify(T(None, "float32"), T((n, 3), "float32")) == T((n, 3), "float32")
    assert solver.unify(T((n, 3), None), T((n, 3), "int8")) == T((n, 3), "int8")
    assert solver.unify(ss.ShapeType(), ss.ShapeType(2)) == ss.ShapeType(2)
    assert solver.unify(ss.ObjectType(), ss.ObjectType()) == ss.ObjectType()
    assert solver.solve().status == "ok"


# -- dimensions -----------------------------------------------------------------------------------


def test_unknown_dimension_binds() -> None:
    solver = ss.TypeSolver()
    d = solver.fresh_dim()
    solver.unify(T((d,)), T((n * 3,)))
    sol = solver.solve()
    assert sol.status == "ok"
    assert sol.resolve(T((d, d + 1))) == T((3 * n, 3 * n + 1))


def test_unknown_dimension_binds_linearly() -> None:
    solver = ss.TypeSolver()
    d = solver.fresh_dim()
    assert solver.unify(T((d + 1,)), T((n,))) == T((n,))
    sol = solver.solve()
    assert sol.status == "ok"
    assert sol.resolve(T((d,))) == T((n - 1,))
    assert sol.z3_calls == 0


def test_unknown_dimension_binding_conflict() -> None:
    solver = ss.TypeSolver()
    d = solver.fresh_dim()
    solver.unify(T((d, 4)), T((3, 4)))
    solver.unify(T((d,)), T((4,)))
    sol = solver.solve()
    assert error_codes(sol) == ["shape-mismatch"]
    assert "3 vs 4" in sol.errors[0].message


def test_unknown_dimensions_unify_with_each_other() -> None:
    solver = ss.TypeSolver()
    d1, d2 = solver.fresh_dim(), solver.fresh_dim()
    solver.unify(T((d1,)), T((d2,)))
    solver.unify(T((d2,)), T((7,)))
    sol = solver.solve()
    assert sol.status == "ok"
    assert sol.resolve(T((d1,))) == T((7,))


def test_symbolic_dimension_equation_is_a_guard() -> None:
    solver = ss.TypeSolver()
    solver.unify(T((n,)), T((m,)))
    sol = solver.solve()
    assert sol.status == "guarded"
    assert [str(g) for g in sol.guards] == ["n == m"]
    assert sol.guards[0].holds({n: 3, m: 3})
    assert not sol.guards[0].holds({n: 3, m: 4})


# -- shape- and dtype-kind type parameters ------------------------------------------------------

S, D = ss.TypeVar("s", "shape"), ss.TypeVar("d", "dtype")
S2, D2 = ss.TypeVar("t", "shape"), ss.TypeVar("e", "dtype")
POLY = ss.FuncType([T(S, D)], T(S, D), [S, D])


@pytest.mark.parametrize("flip", [False, True])
@pytest.mark.parametrize(
    ("other", "ok"),
    [
        (ss.FuncType([T((2, n), "int32")], T((2, n), "int32")), True),
        (ss.FuncType([T(S2, D2)], T(S2, D2), [S2, D2]), True),
        (ss.FuncType([T((2, 3), "int32")], T((2, 4), "int32")), False),
        (ss.FuncType([T((2, 3), "int32")], T((2, 3), "int64")), False),
        (ss.FuncType([T((2, 3), "int32")], T((3,), "int32")), False),
    ],
    ids=str,
)
def test_unify_shape_and_dtype_parameters(other: ss.FuncType, ok: bool, flip: bool) -> None:
    solver = ss.TypeSolver()
    unified = solver.unify(other, POLY) if flip else solver.unify(POLY, other)
    sol = solver.solve()
    assert sol.ok is ok
    if ok:
        # the less general side wins; alpha-equivalent types give the left one
        expected = other if other.type_params == () else (other if flip else POLY)
        assert unified == expected
