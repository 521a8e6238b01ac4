"""A user-registered operator behaves like a built-in one: it defers on holes, states conditions
with ``ctx.require`` (guards and unsat-core errors), and validates literal attributes."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

import symshape as ss
from symshape.encoding.conds import eq, mod
from symshape.encoding.types import Attrs
from symshape.errors import BAD_ATTRIBUTE, SHAPE_MISMATCH
from symshape.relations.base import Context


@ss.relation("test_pairs")
def pairs_rel(ctx: Context, args: Sequence[ss.Type], attrs: Attrs) -> bool:
    """``pairs(x, size=2)``: ``(n, d) -> (n, d // size, size)``; ``size`` must divide ``d``."""
    x, out = args[0], args[1]
    if not isinstance(x, ss.TensorType) or x.ndim is None:
        return False  # defer until the input is known
    if x.ndim != 2:
        ctx.fail("rank-mismatch", f"pairs: expected a matrix, got `{x}`")
    size = attrs.get("size", 2)
    assert isinstance(size, int)
    n, d = x.dims
    ctx.require(eq(mod(d, size), 0), SHAPE_MISMATCH, f"pairs: {size} must divide {d}")
    ctx.assign(out, ss.Tensor((n, d // size, size), x.dtype))  # type: ignore[arg-type]
    return True


def _check_size(attrs: Attrs, nargs: int) -> None:
    size = attrs.get("size", 2)
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        raise ss.SymshapeError(BAD_ATTRIBUTE, f"pairs: size must be a positive int, got {size!r}")


PAIRS = ss.register_op("test.pairs", "test_pairs", 1, check_attrs=_check_size)


def test_relation_guard_and_error_through_the_solver() -> None:
    n, d = ss.dims("n d")
    solver = ss.TypeSolver()
    out = solver.hole()
    solver.add_relation("test_pairs", [ss.Tensor((n, d)), out], {"size": 4})
    sol = solver.solve()
    assert sol.status == "guarded"
    assert [str(g) for g in sol.guards] == ["d % 4 == 0"]
    assert str(sol.resolve(out)) == "Tensor[(n, d//4, 4), float32]"
    assert sol.guards[0].holds({d: 8}) and not sol.guards[0].holds({d: 6})

    solver = ss.TypeSolver()
    out = solver.hole()
    solver.add_relation("test_pairs", [ss.Tensor((n, 6)), out], {"size": 4})
    sol = solver.solve()
    assert sol.status == "error" and sol.errors[0].code == "shape-mismatch"


def test_relation_defers_on_a_hole_until_it_is_refined() -> None:
    solver = ss.TypeSolver()
    x, out = solver.hole(), solver.hole()
    solver.add_relation("test_pairs", [x, out], {"size": 2})
    assert solver.solve().status == "unresolved"
    solver = ss.TypeSolver()
    x, out = solver.hole(), solver.hole()
    solver.add_relation("test_pairs", [x, out], {"size": 2})
    solver.unify(x, ss.Tensor((3, 8)))
    sol = solver.solve()
    assert sol.status == "ok" and str(sol.resolve(out)) == "Tensor[(3, 4, 2), float32]"


def test_unsat_core_names_the_conflicting_conditions() -> None:
    # a guard from one call (d % 4 == 0) and a condition of another (d == 6) cannot both hold
    n, d = ss.dims("n d")
    solver = ss.TypeSolver()
    o1, o2 = solver.hole(), solver.hole()
    first = solver.add_relation("test_pairs", [ss.Tensor((n, d)), o1], {"size": 4})
    second = solver.add_relation("broadcast", [ss.Tensor((n, d)), ss.Tensor((n, 6)), o2])
    sol = solver.solve()
    assert sol.status == "error"
    err = sol.errors[0]
    assert err.code == "not-broadcastable"  # reported at the broadcast, d == 1 or d == 6 ...
    assert {m.payload for m in err.core} == {first.id, second.id}
    assert [n.message for n in err.notes] == ["test_pairs requires `d % 4 == 0`"]  # ... because of the guard


def test_registered_op_builds_calls_and_checks_literal_attributes() -> None:
    x = ss.var("x", ss.Tensor((5, 8)))
    call = PAIRS(x, size=4)
    assert isinstance(call, ss.Call) and call.callee is ss.Op.get("test.pairs")
    with pytest.raises(ss.SymshapeError) as e:
        PAIRS(x, size=0)
    assert e.value.code == "bad-attribute"


def test_registered_op_in_a_program() -> None:
    n = ss.dim("n")
    x = ss.var("x", ss.Tensor((n, 8)))
    body = ss.ops.relu(PAIRS(x, size=4))
    res = ss.infer(ss.Function([x], body))
    assert res.ok
    assert str(res.type_of(body)) == "Tensor[(n, 2, 4), float32]"
    x2 = ss.var("x", ss.Tensor((n, 6)))
    res = ss.infer(ss.Function([x2], PAIRS(x2, size=4)))
    assert res.status == "error" and res.errors[0].code == "shape-mismatch"


def test_a_table_row_registers_an_operator() -> None:
    """An :class:`~symshape.ops.spec.OpSpec` row is all an operator needs: the relation, the
    attributes it takes, their checker; with ``as_input`` the shape may be an input instead."""
    from symshape.ir.op import OPS
    from symshape.ops.spec import OpSpec, specialize
    from symshape.relations.common import attr_shape

    def chk(attrs: Attrs, op: str) -> None:
        attr_shape(attrs, "shape", op)

    row = OpSpec("test.bcast", "broadcast_to", 1, {"shape": "shape"}, chk, as_input=("shape",))
    try:
        op = row.register()
        n = ss.dim("n")
        x = ss.var("x", ss.Tensor((1, 4), "float32"))
        lit = op(x, shape=(n, 4))
        assert str(ss.infer(ss.Function([x], lit)).type_of(lit)) == "Tensor[(n, 4), float32]"
        dyn = op(x, ss.ops.int_tensor((n, 4)))  # the shape as one more input
        assert str(ss.infer(ss.Function([x], dyn)).type_of(dyn)) == "Tensor[(n, 4), float32]"
        with pytest.raises(ss.SymshapeError) as e:
            op(x, shape=(-2, 4))  # the checker runs on literal attributes
        assert e.value.code == "bad-attribute"
        with pytest.raises(ss.SymshapeError) as e:
            op(x, ss.ops.int_tensor((n, 4)), shape=(n, 4))  # both ways at once
        assert e.value.code == "bad-attribute"
        with pytest.raises(ss.SymshapeError) as e:
            op(x, shape=(4,), shap=(4,))  # an undeclared attribute
        assert e.value.code == "bad-attribute"

        def _wrap(name: str, x: ss.Expr, shape: object = (1,)) -> ss.Call:
            return ss.Op.get(name)(x, shape=shape)

        bcast = specialize(_wrap, "test.bcast", "bcast", "Broadcast ``x``.", shape=(n, 4))
        y = bcast(x)
        assert str(ss.infer(ss.Function([x], y)).type_of(y)) == "Tensor[(n, 4), float32]"
    finally:
        del OPS["test.bcast"]
