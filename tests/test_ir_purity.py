"""Purity (seed 002): dataflow blocks, declared-pure functions, force_pure, call_pure, inference."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import symshape as ss
from symshape.ir.op import OPS

F32 = "float32"
T = ss.Tensor((2, 3), F32)


@pytest.fixture(autouse=True, scope="module")
def _impure_op() -> Iterator[None]:
    """An impure test operator, registered only while this module's tests run."""
    ss.register_op("test.print", "identity", 1, pure=False)
    yield
    del OPS["test.print"]


def PRINT(x: ss.Expr) -> ss.Call:
    return ss.Op.get("test.print")(x)


def _codes(res: ss.InferenceResult) -> list[str]:
    return [d.code for d in res.errors]


def test_registered_op_is_impure() -> None:
    assert ss.Op.get("test.print").pure is False
    assert ss.Op.get("nn.relu").pure is True


def test_impure_op_outside_dataflow_in_unannotated_function_is_fine() -> None:
    x = ss.var("x", T)
    f = ss.Function([x], PRINT(x))
    res = ss.infer(f)
    assert res.status == "ok"
    ft = res.type_of(f)
    assert isinstance(ft, ss.FuncType)
    assert ft.pure is False  # inferred impure


def test_unannotated_pure_function_inferred_pure() -> None:
    x = ss.var("x", T)
    f = ss.Function([x], ss.ops.relu(x))
    res = ss.infer(f)
    assert res.status == "ok"
    assert res.type_of(f).pure is True  # type: ignore[union-attr]


def test_impure_call_inside_dataflow_is_an_error() -> None:
    x = ss.var("x", T)
    v = ss.var("v")
    call = PRINT(x)
    f = ss.Function([x], ss.Dataflow([(v, call)], v), pure=False)
    res = ss.infer(f)
    assert res.status == "error"
    assert _codes(res) == ["impure-call"]
    assert res.errors[0].span == call.span


def test_pure_calls_inside_dataflow_are_fine() -> None:
    x = ss.var("x", T)
    v, w = ss.var("v"), ss.var("w")
    body = ss.Dataflow([(v, ss.ops.relu(x)), (w, ss.ops.add(v, x))], w)
    f = ss.Function([x], body)
    res = ss.infer(f)
    assert res.status == "ok", res.report()
    assert str(res.type_of(w)) == str(T)
    assert str(res.type_of(body)) == str(T)


def test_impure_call_in_function_declared_pure_is_an_error() -> None:
    x = ss.var("x", T)
    f = ss.Function([x], PRINT(x), pure=True)
    res = ss.infer(f)
    assert res.status == "error"
    assert _codes(res) == ["impure-call"]


def test_impure_call_in_function_declared_impure_is_fine() -> None:
    x = ss.var("x", T)
    f = ss.Function([x], PRINT(x), pure=False)
    res = ss.infer(f)
    assert res.status == "ok"
    assert res.type_of(f).pure is False  # type: ignore[union-attr]


def test_force_pure_allows_impure_calls() -> None:
    x = ss.var("x", T)
    v = ss.var("v")
    f = ss.Function([x], ss.Dataflow([(v, PRINT(x))], v), pure=True, attrs={"force_pure": True})
    res = ss.infer(f)
    assert res.status == "ok", res.report()
    assert res.type_of(f).pure is True  # type: ignore[union-attr]


def test_call_pure_of_impure_function_inside_dataflow() -> None:
    p = ss.var("p", T)
    impure_fn = ss.Function([p], PRINT(p), pure=False)
    fv = ss.var("g")
    x = ss.var("x", T)
    v = ss.var("v")
    body = ss.Let(fv, impure_fn, ss.Dataflow([(v, ss.call_pure(fv, x))], v))
    f = ss.Function([x], body, pure=True)
    res = ss.infer(f)
    assert res.status == "ok", res.report()
    assert "call_pure" in repr(body)


def test_call_of_impure_function_inside_dataflow_is_an_error() -> None:
    p = ss.var("p", T)
    impure_fn = ss.Function([p], PRINT(p), pure=False)
    fv = ss.var("g")
    x = ss.var("x", T)
    v = ss.var("v")
    body = ss.Let(fv, impure_fn, ss.Dataflow([(v, fv(x))], v))
    res = ss.infer(ss.Function([x], body, pure=False))
    assert res.status == "error"
    assert _codes(res) == ["impure-call"]


def test_call_pure_of_impure_op() -> None:
    x = ss.var("x", T)
    v = ss.var("v")
    f = ss.Function([x], ss.Dataflow([(v, ss.call_pure(ss.Op.get("test.print"), x))], v), pure=True)
    res = ss.infer(f)
    assert res.status == "ok", res.report()


def test_inferred_impure_global_makes_caller_impure() -> None:
    mod = ss.Module()
    p = ss.var("p", T)
    log = ss.GlobalVar("log")
    mod[log] = ss.Function([p], PRINT(p))
    x = ss.var("x", T)
    main = ss.GlobalVar("main")
    mod[main] = ss.Function([x], log(x))
    res = ss.infer(mod)
    assert res.status == "ok", res.report()
    assert res.type_of(log).pure is False  # type: ignore[union-attr]
    assert res.type_of(main).pure is False  # type: ignore[union-attr]


def test_impure_global_in_dataflow_is_an_error() -> None:
    mod = ss.Module()
    p = ss.var("p", T)
    log = ss.GlobalVar("log")
    mod[log] = ss.Function([p], PRINT(p), ret_type=T, pure=False)
    x, v = ss.var("x", T), ss.var("v")
    mod["main"] = ss.Function([x], ss.Dataflow([(v, log(x))], v))
    res = ss.infer(mod)
    assert res.status == "error"
    assert _codes(res) == ["impure-call"]


def _apply(expected_pure: bool) -> tuple[ss.Function, ss.Var]:
    fp = ss.var("f", ss.FuncType([T], T, pure=expected_pure))
    x = ss.var("x", T)
    return ss.Function([fp, x], fp(x), pure=None), x


def test_impure_function_where_pure_expected_is_an_error() -> None:
    apply, _ = _apply(True)
    p = ss.var("p", T)
    impure_fn = ss.Function([p], PRINT(p), pure=False)
    y = ss.var("y", T)
    res = ss.infer(ss.Function([y], apply(impure_fn, y), pure=False))
    assert res.status == "error"
    assert "impure-call" in _codes(res)


def test_pure_function_where_impure_expected_is_fine() -> None:
    apply, _ = _apply(False)
    p = ss.var("p", T)
    pure_fn = ss.Function([p], ss.ops.relu(p))
    y = ss.var("y", T)
    res = ss.infer(ss.Function([y], apply(pure_fn, y), pure=False))
    assert res.status == "ok", res.report()


def test_well_formed_reports_impure_call() -> None:
    x, v = ss.var("x", T), ss.var("v")
    f = ss.Function([x], ss.Dataflow([(v, PRINT(x))], v), pure=False)
    codes = [d.code for d in ss.well_formed(f)]
    assert codes == ["impure-call"]


def test_impure_printed() -> None:
    x = ss.var("x", T)
    f = ss.Function([x], PRINT(x), pure=False)
    assert "[impure]" in repr(f)
    assert "[impure]" in str(ss.FuncType([T], T, pure=False))


def test_impure_global_defined_after_its_caller_in_dataflow() -> None:
    """The callee's inferred purity does not depend on the order of definition."""
    mod = ss.Module()
    p, x, v = ss.var("p", T), ss.var("x", T), ss.var("v")
    log, main = ss.GlobalVar("log"), ss.GlobalVar("main")
    mod[main] = ss.Function([x], ss.Dataflow([(v, log(x))], v))
    mod[log] = ss.Function([p], PRINT(p))
    res = ss.infer(mod)
    assert res.status == "error"
    assert _codes(res) == ["impure-call"]
    assert res.type_of(log).pure is False  # type: ignore[union-attr]


# -- purity checked after solving: calls of function values (issue 4 follow-ups) ---------------


def _impure_fn() -> ss.Function:
    p = ss.var("p", T)
    return ss.Function([p], PRINT(p), pure=False)


def _pure_fn() -> ss.Function:
    p = ss.var("p", T)
    return ss.Function([p], ss.ops.relu(p))


def _apply_in_dataflow(**kw: object) -> ss.Function:
    """``fn(f, x) { dataflow { v = f(x) } v }`` with ``f`` unannotated."""
    f, x, v = ss.var("f"), ss.var("x", T), ss.var("v")
    return ss.Function([f, x], ss.Dataflow([(v, f(x))], v), **kw)  # type: ignore[arg-type]


def test_unannotated_parameter_called_in_dataflow_with_impure_argument_is_an_error() -> None:
    apply = _apply_in_dataflow()
    g, y = ss.var("g"), ss.var("y", T)
    res = ss.infer(ss.Function([y], ss.Let(g, apply, g(_impure_fn(), y)), pure=False))
    assert res.status == "error"
    assert _codes(res) == ["impure-call"]
    call = apply.body.bindings[0][1]  # type: ignore[attr-defined]
    assert res.errors[0].span == call.span
    assert "%f inside a dataflow block" in res.errors[0].message


def test_unannotated_parameter_called_in_dataflow_with_pure_argument_is_fine() -> None:
    apply = _apply_in_dataflow()
    g, y = ss.var("g"), ss.var("y", T)
    f = ss.Function([y], ss.Let(g, apply, g(_pure_fn(), y)))
    res = ss.infer(f)
    assert res.status == "ok", res.report()
    assert res.type_of(apply).pure is True  # type: ignore[union-attr]
    assert res.type_of(f).pure is True  # type: ignore[union-attr]


def test_function_literal_applied_to_impure_function_in_dataflow() -> None:
    apply = _apply_in_dataflow()
    y = ss.var("y", T)
    res = ss.infer(ss.Function([y], apply(_impure_fn(), y), pure=False))
    assert _codes(res) == ["impure-call"]


def test_call_pure_of_unannotated_parameter_is_fine() -> None:
    f, x, v = ss.var("f"), ss.var("x", T), ss.var("v")
    apply = ss.Function([f, x], ss.Dataflow([(v, ss.call_pure(f, x))], v))
    g, y = ss.var("g"), ss.var("y", T)
    res = ss.infer(ss.Function([y], ss.Let(g, apply, g(_impure_fn(), y))))
    assert res.status == "ok", res.report()
    assert res.type_of(apply).pure is True  # type: ignore[union-attr]


def test_higher_order_function_applied_to_impure_function_becomes_impure() -> None:
    """Outside a dataflow block the call is fine, and impurity propagates to a fixpoint: the
    parameter, the higher-order function and its caller are all impure."""
    f, x = ss.var("f"), ss.var("x", T)
    apply = ss.Function([f, x], f(x))
    g, y = ss.var("g"), ss.var("y", T)
    outer = ss.Function([y], ss.Let(g, apply, g(_impure_fn(), y)))
    res = ss.infer(outer)
    assert res.status == "ok", res.report()
    assert res.type_of(f).pure is False  # type: ignore[union-attr]
    assert res.type_of(apply).pure is False  # type: ignore[union-attr]
    assert res.type_of(g).pure is False  # type: ignore[union-attr]
    assert res.type_of(outer).pure is False  # type: ignore[union-attr]


def test_impurity_found_after_solving_reaches_a_declared_pure_caller() -> None:
    f, x = ss.var("f"), ss.var("x", T)
    apply = ss.Function([f, x], f(x))
    g, y = ss.var("g"), ss.var("y", T)
    call = g(_impure_fn(), y)
    res = ss.infer(ss.Function([y], ss.Let(g, apply, call), pure=True))
    assert _codes(res) == ["impure-call"]
    assert res.errors[0].span == call.span
    assert "function declared pure" in res.errors[0].message


def test_impurity_found_after_solving_reaches_a_dataflow_caller() -> None:
    f, x = ss.var("f"), ss.var("x", T)
    apply = ss.Function([f, x], f(x))
    g, y, v = ss.var("g"), ss.var("y", T), ss.var("v")
    call = g(_impure_fn(), y)
    res = ss.infer(ss.Function([y], ss.Let(g, apply, ss.Dataflow([(v, call)], v)), pure=False))
    assert _codes(res) == ["impure-call"]
    assert res.errors[0].span == call.span


def test_declared_pure_higher_order_function_with_impure_argument() -> None:
    f, x = ss.var("f"), ss.var("x", T)
    inner = f(x)
    apply = ss.Function([f, x], inner, pure=True)
    g, y = ss.var("g"), ss.var("y", T)
    res = ss.infer(ss.Function([y], ss.Let(g, apply, g(_impure_fn(), y)), pure=False))
    assert _codes(res) == ["impure-call"]
    assert res.errors[0].span == inner.span


def test_force_pure_higher_order_function_with_impure_argument() -> None:
    apply = _apply_in_dataflow(pure=True, attrs={"force_pure": True})
    g, y = ss.var("g"), ss.var("y", T)
    res = ss.infer(ss.Function([y], ss.Let(g, apply, g(_impure_fn(), y)), pure=False))
    assert res.status == "ok", res.report()
    assert res.type_of(apply).pure is True  # type: ignore[union-attr]


def test_module_higher_order_global_applied_to_impure_global() -> None:
    mod = ss.Module()
    f, x, v = ss.var("f"), ss.var("x", T), ss.var("v")
    inner = f(x)
    mod["apply"] = ss.Function([f, x], ss.Dataflow([(v, inner)], v))
    p = ss.var("p", T)
    mod["log"] = ss.Function([p], PRINT(p))
    y = ss.var("y", T)
    mod["main"] = ss.Function([y], ss.GlobalVar("apply")(ss.GlobalVar("log"), y))
    res = ss.infer(mod)
    assert _codes(res) == ["impure-call"]
    assert res.errors[0].span == inner.span
    assert [d.code for d in ss.well_formed(mod)] == ["impure-call"]


def test_module_higher_order_global_outside_dataflow_propagates() -> None:
    mod = ss.Module()
    f, x = ss.var("f"), ss.var("x", T)
    mod["apply"] = ss.Function([f, x], f(x))
    p = ss.var("p", T)
    mod["log"] = ss.Function([p], PRINT(p))
    y = ss.var("y", T)
    mod["mid"] = ss.Function([y], ss.GlobalVar("apply")(ss.GlobalVar("log"), y))
    z, v = ss.var("z", T), ss.var("v")
    call = ss.GlobalVar("mid")(z)
    mod["main"] = ss.Function([z], ss.Dataflow([(v, call)], v))
    res = ss.infer(mod)
    assert _codes(res) == ["impure-call"]
    assert res.errors[0].span == call.span
    for name in ("apply", "log", "mid", "main"):
        assert res.type_of(name).pure is False, name  # type: ignore[union-attr]


def test_impure_call_reported_once() -> None:
    """A call found impure during generation is not reported again after solving."""
    mod = ss.Module()
    p = ss.var("p", T)
    log = ss.GlobalVar("log")
    mod[log] = ss.Function([p], PRINT(p), pure=False)
    x, v = ss.var("x", T), ss.var("v")
    mod["main"] = ss.Function([x], ss.Dataflow([(v, log(x))], v))
    res = ss.infer(mod)
    assert _codes(res) == ["impure-call"]
    assert len(ss.well_formed(mod)) == 1


def test_fully_annotated_unannotated_purity_global_is_inferred_impure() -> None:
    """Annotated parameters and result but no purity annotation: purity is inferred."""
    mod = ss.Module()
    p = ss.var("p", T)
    log = ss.GlobalVar("log")
    mod[log] = ss.Function([p], PRINT(p), ret_type=T)
    x, v = ss.var("x", T), ss.var("v")
    mod["main"] = ss.Function([x], ss.Dataflow([(v, log(x))], v))
    res = ss.infer(mod)
    assert _codes(res) == ["impure-call"]
    assert res.type_of(log).pure is False  # type: ignore[union-attr]


# -- mutually recursive unannotated functions ----------------------------------------------------


def _cycle(annotated: bool, print_in: str = "a", a_pure: bool | None = None) -> ss.Module:
    """``a`` and ``b`` call each other; ``c`` calls ``b``; ``main`` calls ``c`` in a dataflow
    block. ``b`` is defined first, so it is generated before ``a``'s purity is known."""
    mod = ss.Module()
    ga, gb, gc = ss.GlobalVar("a"), ss.GlobalVar("b"), ss.GlobalVar("c")
    x, y, z = ss.var("x", T), ss.var("y", T), ss.var("z", T)
    kw: dict[str, object] = {"ret_type": T} if annotated else {}
    cond = ss.Constant(shape=(), dtype="bool")
    b_arg: ss.Expr = PRINT(y) if print_in == "b" else y
    mod[gb] = ss.Function([y], ss.If(cond, ga(b_arg), y), **kw)  # type: ignore[arg-type]
    a_arg: ss.Expr = PRINT(x) if print_in == "a" else x
    mod[ga] = ss.Function([x], gb(a_arg), pure=a_pure, **kw)  # type: ignore[arg-type]
    mod[gc] = ss.Function([z], gb(z), **kw)  # type: ignore[arg-type]
    w, v = ss.var("w", T), ss.var("v")
    mod["main"] = ss.Function([w], ss.Dataflow([(v, gc(w))], v))
    return mod


def test_mutual_recursion_impure_cycle() -> None:
    for annotated in (False, True):
        for where in ("a", "b"):
            res = ss.infer(_cycle(annotated, where))
            assert _codes(res) == ["impure-call"], (annotated, where, res.report())
            assert "@c inside a dataflow block" in res.errors[0].message
            for name in ("a", "b", "c", "main"):
                assert res.type_of(name).pure is False, (annotated, where, name)  # type: ignore[union-attr]


def test_mutual_recursion_pure_cycle() -> None:
    for annotated in (False, True):
        res = ss.infer(_cycle(annotated, "none"))
        assert res.status == "ok", res.report()
        for name in ("a", "b", "c", "main"):
            assert res.type_of(name).pure is True, name  # type: ignore[union-attr]


def test_declared_pure_member_stops_cycle_propagation() -> None:
    """``a`` is declared pure (an error for its own impure call) so its callers stay pure."""
    res = ss.infer(_cycle(True, "a", a_pure=True))
    assert _codes(res) == ["impure-call"]
    assert "function declared pure" in res.errors[0].message
    assert res.type_of("a").pure is True  # type: ignore[union-attr]
    assert res.type_of("b").pure is True  # type: ignore[union-attr]
    assert res.type_of("c").pure is True  # type: ignore[union-attr]


def test_self_recursive_impure_function() -> None:
    mod = ss.Module()
    loop = ss.GlobalVar("loop")
    x = ss.var("x", T)
    cond = ss.Constant(shape=(), dtype="bool")
    mod[loop] = ss.Function([x], ss.If(cond, loop(PRINT(x)), x))
    y, v = ss.var("y", T), ss.var("v")
    mod["main"] = ss.Function([y], ss.Dataflow([(v, loop(y))], v))
    res = ss.infer(mod)
    assert _codes(res) == ["impure-call"]
    assert res.type_of(loop).pure is False  # type: ignore[union-attr]
