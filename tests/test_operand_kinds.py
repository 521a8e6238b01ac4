"""A tensor operator given a non-tensor operand (a function, a tuple, an ADT value, ``Object``) is
an ``error`` with a kind code, never ``unresolved`` ("add an annotation") and never ``ok``
(issue 11). The check lives in one prologue (``relations.base.tensor_or_defer``/``tensor_args``);
the table runs every operator family through it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import symshape as ss
from symshape.relations.operands import tensor_or_defer

F32 = "float32"
FN = ss.FuncType([ss.Tensor((2,), F32)], ss.Tensor((2,), F32))
TUP = ss.TupleType([ss.Tensor((2,), F32)])
KIND_CODES = {"type-mismatch", "kind-mismatch"}


def _t(shape: tuple[int, ...] = (1, 3, 8, 8), dtype: str = F32) -> ss.Var:
    return ss.var("t", ss.Tensor(shape, dtype))


# (operator, builder taking the bad operand): the bad operand is placed where a tensor belongs
OPS: list[tuple[str, Callable[[ss.Expr], ss.Expr]]] = [
    ("add", lambda v: ss.ops.add(v, v)),
    ("add-second", lambda v: ss.ops.add(_t(), v)),
    ("less", lambda v: ss.ops.less(v, _t())),
    ("exp", ss.ops.exp),
    ("relu", ss.ops.relu),
    ("sigmoid", ss.ops.sigmoid),
    ("zeros_like", ss.ops.zeros_like),
    ("isnan", ss.ops.isnan),
    ("cast", lambda v: ss.ops.cast(v, "int32")),
    ("cast_like", lambda v: ss.ops.cast_like(_t(), v)),
    ("where", lambda v: ss.ops.where(v, _t(), _t())),
    ("where-third", lambda v: ss.ops.where(_t(dtype="bool"), _t(), v)),
    ("reshape", lambda v: ss.ops.reshape(v, (-1,))),
    ("reshape_like", lambda v: ss.ops.reshape_like(_t(), v)),
    ("flatten", ss.ops.flatten),
    ("transpose", ss.ops.transpose),
    ("squeeze", ss.ops.squeeze),
    ("expand_dims", lambda v: ss.ops.expand_dims(v, 0)),
    ("split", lambda v: ss.ops.split(v, 2)),
    ("broadcast_to", lambda v: ss.ops.broadcast_to(v, (2, 2))),
    ("pad", lambda v: ss.ops.pad(v, 1)),
    ("concatenate-field", lambda v: ss.ops.concatenate([_t(), v], axis=0)),
    ("stack-field", lambda v: ss.ops.stack([v, _t()], axis=0)),
    ("sum", ss.ops.sum),
    ("max", ss.ops.max),
    ("argmax", ss.ops.argmax),
    ("take", lambda v: ss.ops.take(v, ss.var("i", ss.Tensor((2,), "int32")), axis=0)),
    ("take-indices", lambda v: ss.ops.take(_t(), v, axis=0)),
    ("strided_slice", lambda v: ss.ops.strided_slice(v, (0,), (1,))),
    ("dense", lambda v: ss.ops.dense(v, _t((4, 8)))),
    ("dense-weight", lambda v: ss.ops.dense(_t((2, 8)), v)),
    ("dense-weight-units", lambda v: ss.ops.dense(_t((2, 8)), v, units=4)),
    ("matmul", lambda v: ss.ops.matmul(v, _t((8, 4)))),
    ("batch_matmul", lambda v: ss.ops.batch_matmul(_t((2, 3, 4)), v)),
    ("conv1d", lambda v: ss.ops.conv1d(v, _t((4, 3, 3)))),
    ("conv2d", lambda v: ss.ops.conv2d(v, _t((4, 3, 3, 3)))),
    ("conv2d-weight", lambda v: ss.ops.conv2d(_t(), v)),
    ("conv2d-weight-given", lambda v: ss.ops.conv2d(_t(), v, channels=4, kernel_size=3)),
    ("max_pool2d", lambda v: ss.ops.max_pool2d(v, 2)),
    ("global_avg_pool2d", ss.ops.global_avg_pool2d),
    ("adaptive_avg_pool2d", lambda v: ss.ops.adaptive_avg_pool2d(v, 1)),
    ("softmax", ss.ops.softmax),
    ("bias_add", lambda v: ss.ops.bias_add(v, _t((3,)))),
    ("bias_add-bias", lambda v: ss.ops.bias_add(_t(), v)),
    ("layer_norm", lambda v: ss.ops.layer_norm(v, _t((8,)), _t((8,)))),
    ("layer_norm-gamma", lambda v: ss.ops.layer_norm(_t(), v, _t((8,)))),
    ("batch_norm", lambda v: ss.ops.batch_norm(v, _t((3,)), _t((3,)), _t((3,)), _t((3,)))),
    ("batch_norm-var", lambda v: ss.ops.batch_norm(_t(), _t((3,)), _t((3,)), _t((3,)), v)),
]

BAD: list[tuple[str, ss.Type]] = [
    ("function", FN),
    ("tuple", TUP),
    ("object", ss.ObjectType()),
]


@pytest.mark.parametrize(("kind", "bad"), BAD, ids=[k for k, _ in BAD])
@pytest.mark.parametrize(("op", "build"), OPS, ids=[o for o, _ in OPS])
def test_non_tensor_operand_is_a_kind_error(
    op: str, build: Callable[[ss.Expr], ss.Expr], kind: str, bad: ss.Type
) -> None:
    v = ss.var("v", bad)
    call = build(v)
    res = ss.infer(ss.Function([v], call))
    assert res.status == "error", (op, kind, res.report())
    codes = {e.code for e in res.errors}
    assert codes & KIND_CODES, (op, kind, res.report())
    assert "add an annotation" not in res.report()


def test_the_message_names_the_operand_and_its_type() -> None:
    f = ss.var("f", FN)
    x = ss.var("x", ss.Tensor((2,), F32))
    res = ss.infer(ss.Function([x, f], ss.ops.add(x, f)))
    [err] = res.errors
    assert err.code == "type-mismatch"
    assert "argument 2 must be a tensor" in err.message
    assert "fn(Tensor[(2,), float32]) -> Tensor[(2,), float32]" in err.message


def test_a_hole_operand_still_defers_and_resolves() -> None:
    # the prologue only rejects what can never become a tensor: a hole waits for its type
    solver = ss.TypeSolver()
    a, out = solver.hole(), solver.hole()
    solver.add_relation("broadcast", [a, ss.Tensor((3,), F32), out])
    solver.unify(a, ss.Tensor((2, 1), F32))
    sol = solver.solve()
    assert sol.status == "ok"
    assert str(sol.resolve(out)) == "Tensor[(2, 3), float32]"


def test_a_hole_becoming_a_function_is_an_error() -> None:
    solver = ss.TypeSolver()
    a, out = solver.hole(), solver.hole()
    solver.add_relation("unary_float", [a, out])
    solver.unify(a, FN)
    sol = solver.solve()
    assert sol.status == "error"
    assert [e.code for e in sol.errors] == ["type-mismatch"]


def test_a_non_tensor_operand_fails_even_while_another_is_a_hole() -> None:
    solver = ss.TypeSolver()
    out = solver.hole()
    solver.add_relation("broadcast", [solver.hole(), TUP, out])
    sol = solver.solve()
    assert sol.status == "error"
    assert [e.code for e in sol.errors] == ["type-mismatch"]


def test_unary_result_annotation_flows_back_into_a_hole_operand() -> None:
    solver = ss.TypeSolver()
    a = solver.hole()
    solver.add_relation("unary", [a, ss.Tensor((4, 2), "int8")])
    sol = solver.solve()
    assert sol.status == "ok"
    assert str(sol.resolve(a)) == "Tensor[(4, 2), int8]"


def test_identity_stays_generic() -> None:
    # ``identity`` (Relay's IdentityRel, used by user operators such as a print) takes any type
    solver = ss.TypeSolver()
    out = solver.hole()
    solver.add_relation("identity", [TUP, out])
    sol = solver.solve()
    assert sol.status == "ok" and sol.resolve(out) == TUP


def test_tensor_or_defer_without_context_never_fails() -> None:
    assert tensor_or_defer(FN) is None
    t = ss.Tensor((2,), F32)
    assert tensor_or_defer(t) is t


def test_user_relation_over_a_tuple_is_untouched() -> None:
    # the check belongs to the built-in tensor relations, not to the solver
    seen: list[Any] = []

    @ss.relation("test.kinds_first_field")
    def first_field(ctx: Any, args: Any, attrs: Any) -> bool:
        seen.append(args[0])
        ctx.assign(args[1], args[0].fields[0])
        return True

    solver = ss.TypeSolver()
    out = solver.hole()
    solver.add_relation("test.kinds_first_field", [TUP, out])
    sol = solver.solve()
    assert sol.status == "ok" and str(sol.resolve(out)) == "Tensor[(2,), float32]"
    assert seen == [TUP]
