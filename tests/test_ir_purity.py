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
