"""Inference over programs: each construct of the expression language (issue 4)."""

from __future__ import annotations

import pytest
from tests.source_places import place

import symshape as ss

F32 = "float32"


# -- the contract example ----------------------------------------------------------------------


def test_contract_example() -> None:
    n = ss.dim("n")
    x = ss.var("x", ss.Tensor((n, 3, 4), F32))
    y = ss.var("y", ss.Tensor((1, 4), F32))
    body = ss.ops.flatten(ss.ops.add(x, y))
    f = ss.Function([x, y], body)
    res = ss.infer(f)
    assert res.status == "ok"
    assert res.ok
    assert str(res.type_of(body)) == "Tensor[(n, 12), float32]"
    ft = res.type_of(f)
    assert isinstance(ft, ss.FuncType)
    assert str(ft.ret) == "Tensor[(n, 12), float32]"


def test_contract_error_has_code_message_span() -> None:
    n = ss.dim("n")
    x = ss.var("x", ss.Tensor((n, 3, 4), F32))
    y = ss.var("y", ss.Tensor((n, 5), F32))
    body = ss.ops.add(ss.ops.flatten(x), y)  # CALL-SITE
    res = ss.infer(ss.Function([x, y], body))
    assert res.status == "error"
    assert not res.ok
    d = res.errors[0]
    assert d.code and isinstance(d.code, str)
    assert d.message
    assert d.span is not None
    assert d.span.file == __file__
    assert d.span.line == place(__file__, "# CALL-SITE")[0]
    assert d.code in ss.ERROR_CODES
    assert "status: error" in res.report()


# -- type_of for every kind of sub-expression ---------------------------------------------------


def test_type_of_every_subexpression_kind() -> None:
    n = ss.dim("n")
    x = ss.var("x", ss.Tensor((n, 2), F32))
    c = ss.Constant(shape=(n, 2), dtype=F32)
    add = ss.ops.add(x, c)
    tup = ss.Tuple([add, x])
    item = tup[0]
    v = ss.var("v")
    let = ss.Let(v, item, ss.ops.relu(v))
    inner_p = ss.var("p", ss.Tensor((n, 2), F32))
    inner = ss.Function([inner_p], ss.ops.exp(inner_p))
    call_fn = inner(let)
    cond = ss.var("c", ss.Tensor((), "bool"))
    iff = ss.If(cond, call_fn, x)
    f = ss.Function([x, cond], iff)
    res = ss.infer(f)
    assert res.status == "ok", res.report()
    t = "Tensor[(n, 2), float32]"
    for e in (x, c, add, item, v, let, inner_p, call_fn, iff):
        assert str(res.type_of(e)) == t, e
    assert str(res.type_of(tup)) == f"({t}, {t})"
    assert str(res.type_of(inner)) == f"fn({t}) -> {t}"
    assert str(res.type_of(cond)) == "Tensor[(), bool]"
    assert isinstance(res.type_of(f), ss.FuncType)
    with pytest.raises(ss.SymshapeError):
        res.type_of(ss.var("stranger"))


def test_constant_from_array() -> None:
    np = pytest.importorskip("numpy")
    c = ss.const(np.zeros((2, 3), dtype="float32"))
    res = ss.infer(ss.ops.relu(c))
    assert res.status == "ok"
    assert str(res.type_of(c)) == "Tensor[(2, 3), float32]"


def test_unannotated_let_is_inferred() -> None:
    x = ss.var("x", ss.Tensor((4,), F32))
    v = ss.var("v")
    body = ss.Let(v, ss.ops.relu(x), ss.ops.add(v, x))
    res = ss.infer(ss.Function([x], body))
    assert res.status == "ok"
    assert str(res.type_of(v)) == "Tensor[(4,), float32]"


def test_unannotated_parameter_is_unresolved() -> None:
    x = ss.var("x")
    res = ss.infer(ss.Function([x], x))
    assert res.status == "unresolved"
    assert any("x" in d.message for d in res.unresolved)


def test_tuple_get_item_through_unknown_tuple() -> None:
    x = ss.var("x", ss.Tensor((3,), F32))
    t = ss.var("t")
    body = ss.Let(t, ss.Tuple([x, ss.ops.relu(x)]), t[1])
    res = ss.infer(ss.Function([x], body))
    assert res.status == "ok"
    assert str(res.type_of(body)) == "Tensor[(3,), float32]"


def test_tuple_index_out_of_range() -> None:
    x = ss.var("x", ss.Tensor((3,), F32))
    res = ss.infer(ss.Function([x], ss.Tuple([x])[2]))
    assert res.status == "error"
    assert res.errors[0].code == "arity-mismatch"


# -- modules and global functions ---------------------------------------------------------------


def test_module_type_of_global() -> None:
    n = ss.dim("n")
    mod = ss.Module()
    g = ss.GlobalVar("f")
    x = ss.var("x", ss.Tensor((n, 4), F32))
    mod[g] = ss.Function([x], ss.ops.relu(x))
    res = ss.infer(mod)
    assert res.status == "ok"
    assert str(res.type_of(g)) == "fn<n: dim>(Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32]" or (
        str(res.type_of(g).ret) == "Tensor[(n, 4), float32]"
    )
    assert res.type_of("f") == res.type_of(g)
    assert mod["f"] is mod[g]


def test_parameter_symbols_belong_to_the_function() -> None:
    n, m = ss.dims("n m")
    mod = ss.Module()
    f = ss.GlobalVar("f")
    x = ss.var("x", ss.Tensor((n, m), F32))
    mod[f] = ss.Function([x], ss.Constant(shape=(m + 1, n), dtype=F32), ret_type=ss.Tensor((m + 1, n), F32))
    a = ss.var("a", ss.Tensor((10, 11), F32))
    b = ss.var("b", ss.Tensor((3, 5), F32))
    ca, cb = f(a), f(b)
    main = ss.GlobalVar("main")
    mod[main] = ss.Function([a, b], ss.Tuple([ca, cb]))
    res = ss.infer(mod)
    assert res.status == "ok", res.report()
    assert str(res.type_of(ca)) == "Tensor[(12, 10), float32]"
    assert str(res.type_of(cb)) == "Tensor[(6, 3), float32]"


def test_parameter_symbols_of_local_function() -> None:
    n, m = ss.dims("n m")
    x = ss.var("x", ss.Tensor((n, m), F32))
    fn = ss.Function([x], ss.Constant(shape=(m + 1, n), dtype=F32))
    fv = ss.var("f")
    a = ss.var("a", ss.Tensor((10, 11), F32))
    b = ss.var("b", ss.Tensor((2, 7), F32))
    ca, cb = fv(a), fv(b)
    prog = ss.Function([a, b], ss.Let(fv, fn, ss.Tuple([ca, cb])))
    res = ss.infer(prog)
    assert res.status == "ok", res.report()
    assert str(res.type_of(ca)) == "Tensor[(12, 10), float32]"
    assert str(res.type_of(cb)) == "Tensor[(8, 2), float32]"


def test_parameter_symbols_call_with_symbolic_argument() -> None:
    n, m, k = ss.dims("n m k")
    mod = ss.Module()
    f = ss.GlobalVar("f")
    x = ss.var("x", ss.Tensor((n, m), F32))
    mod[f] = ss.Function([x], ss.ops.relu(x), ret_type=ss.Tensor((n, m), F32))
    a = ss.var("a", ss.Tensor((k, 3), F32))
    c = f(a)
    mod["main"] = ss.Function([a], c)
    res = ss.infer(mod)
    assert res.status == "ok", res.report()
    assert str(res.type_of(c)) == "Tensor[(k, 3), float32]"


def test_recursion_with_return_annotation() -> None:
    n = ss.dim("n")
    t = ss.Tensor((n, 4), F32)
    mod = ss.Module()
    g = ss.GlobalVar("loop")
    x = ss.var("x", t)
    c = ss.var("c", ss.Tensor((), "bool"))
    rec = g(ss.ops.relu(x), c)
    mod[g] = ss.Function([x, c], ss.If(c, rec, x), ret_type=t)
    res = ss.infer(mod)
    assert res.status == "ok", res.report()
    assert str(res.type_of(rec)) == "Tensor[(n, 4), float32]"
    assert str(res.type_of(g).ret) == "Tensor[(n, 4), float32]"


def test_recursion_without_return_annotation() -> None:
    mod = ss.Module()
    g = ss.GlobalVar("loop")
    x = ss.var("x", ss.Tensor((5, 4), F32))
    c = ss.var("c", ss.Tensor((), "bool"))
    rec = g(ss.ops.relu(x), c)
    body = ss.If(c, rec, x)
    mod[g] = ss.Function([x, c], body)
    res = ss.infer(mod)
    assert res.status == "ok", res.report()
    assert str(res.type_of(rec)) == "Tensor[(5, 4), float32]"
    assert str(res.type_of(g)) == "fn(Tensor[(5, 4), float32], Tensor[(), bool]) -> Tensor[(5, 4), float32]"


def test_mutual_recursion() -> None:
    n = ss.dim("n")
    t = ss.Tensor((n, 4), F32)
    b = ss.Tensor((), "bool")
    mod = ss.Module()
    even, odd = ss.GlobalVar("even"), ss.GlobalVar("odd")
    x1, c1 = ss.var("x", t), ss.var("c", b)
    x2, c2 = ss.var("x", t), ss.var("c", b)
    call_odd = odd(ss.ops.relu(x1), c1)
    call_even = even(ss.ops.exp(x2), c2)
    mod[even] = ss.Function([x1, c1], ss.If(c1, call_odd, x1), ret_type=t)
    mod[odd] = ss.Function([x2, c2], ss.If(c2, call_even, x2), ret_type=t)
    res = ss.infer(mod)
    assert res.status == "ok", res.report()
    assert str(res.type_of(call_odd)) == "Tensor[(n, 4), float32]"
    assert str(res.type_of(call_even)) == "Tensor[(n, 4), float32]"


def test_mutual_recursion_unannotated() -> None:
    t = ss.Tensor((2, 4), F32)
    b = ss.Tensor((), "bool")
    mod = ss.Module()
    even, odd = ss.GlobalVar("even"), ss.GlobalVar("odd")
    x1, c1 = ss.var("x", t), ss.var("c", b)
    x2, c2 = ss.var("x", t), ss.var("c", b)
    call_odd = odd(x1, c1)
    call_even = even(x2, c2)
    mod[even] = ss.Function([x1, c1], ss.If(c1, call_odd, x1))
    mod[odd] = ss.Function([x2, c2], ss.If(c2, call_even, x2))
    res = ss.infer(mod)
    assert res.status == "ok", res.report()
    assert str(res.type_of(odd).ret) == "Tensor[(2, 4), float32]"


def test_recursion_return_annotation_mismatch() -> None:
    mod = ss.Module()
    g = ss.GlobalVar("f")
    x = ss.var("x", ss.Tensor((5, 4), F32))
    mod[g] = ss.Function([x], ss.ops.relu(x), ret_type=ss.Tensor((5, 3), F32))
    res = ss.infer(mod)
    assert res.status == "error"


def test_undefined_global() -> None:
    mod = ss.Module()
    x = ss.var("x", ss.Tensor((5, 4), F32))
    mod["f"] = ss.Function([x], ss.GlobalVar("nope")(x))
    res = ss.infer(mod)
    assert res.status == "error"
    assert res.errors[0].code == "undefined-var"


# -- higher-order and polymorphic functions -----------------------------------------------------


def test_higher_order_function() -> None:
    n = ss.dim("n")
    t = ss.Tensor((n, 3), F32)
    fp = ss.var("f", ss.FuncType([t], t))
    x = ss.var("x", t)
    apply2 = ss.Function([fp, x], fp(fp(x)))
    y = ss.var("y", t)
    relu_fn = ss.Function([y], ss.ops.relu(y))
    z = ss.var("z", t)
    call = apply2(relu_fn, z)
    res = ss.infer(ss.Function([z], call))
    assert res.status == "ok", res.report()
    assert str(res.type_of(call)) == "Tensor[(n, 3), float32]"


def test_higher_order_unannotated_parameter_inferred_from_use() -> None:
    t = ss.Tensor((2, 3), F32)
    fp = ss.var("f")
    x = ss.var("x", t)
    inner = fp(x)
    apply1 = ss.Function([fp, x], ss.ops.relu(inner))
    y = ss.var("y", t)
    res = ss.infer(ss.Function([y], apply1(ss.Function([ss.var("p", t)], y), y)))
    assert res.status == "ok", res.report()
    assert str(res.type_of(fp)) == "fn(Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32]"


def test_polymorphic_identity_at_two_types() -> None:
    a = ss.TypeVar("a")
    x = ss.var("x", a)
    ident = ss.Function([x], x, type_params=[a])
    idv = ss.var("id")
    c1 = ss.Constant(shape=(2, 3), dtype=F32)
    u, v = idv(c1), idv(ss.Tuple([]))
    prog = ss.Let(idv, ident, ss.Tuple([u, v]))
    res = ss.infer(prog)
    assert res.status == "ok", res.report()
    assert str(res.type_of(u)) == "Tensor[(2, 3), float32]"
    assert str(res.type_of(v)) == "()"
    assert str(res.type_of(prog)) == "(Tensor[(2, 3), float32], ())"


def test_polymorphic_global_identity_at_two_types() -> None:
    a = ss.TypeVar("a")
    x = ss.var("x", a)
    mod = ss.Module()
    g = ss.GlobalVar("id")
    mod[g] = ss.Function([x], x, ret_type=a, type_params=[a])
    c1 = ss.Constant(shape=(2, 3), dtype=F32)
    u, v = g(c1), g(ss.Tuple([]))
    mod["main"] = ss.Function([], ss.Tuple([u, v]))
    res = ss.infer(mod)
    assert res.status == "ok", res.report()
    assert str(res.type_of(u)) == "Tensor[(2, 3), float32]"
    assert str(res.type_of(v)) == "()"


def test_call_of_non_function() -> None:
    x = ss.var("x", ss.Tensor((2,), F32))
    res = ss.infer(ss.Function([x], ss.Call(x, [x])))
    assert res.status == "error"


def test_function_arity_mismatch() -> None:
    t = ss.Tensor((2,), F32)
    p = ss.var("p", t)
    f = ss.Function([p], p)
    x = ss.var("x", t)
    res = ss.infer(ss.Function([x], f(x, x)))
    assert res.status == "error"
    assert res.errors[0].code == "arity-mismatch"


# -- If: join of branches -----------------------------------------------------------------------


def _if(then_t: ss.Type, else_t: ss.Type) -> tuple[ss.InferenceResult, ss.Expr]:
    c = ss.var("c", ss.Tensor((), "bool"))
    a, b = ss.var("a", then_t), ss.var("b", else_t)
    e = ss.If(c, a, b)
    return ss.infer(ss.Function([c, a, b], e)), e


def test_if_equal_branches() -> None:
    n = ss.dim("n")
    res, e = _if(ss.Tensor((n, 3), F32), ss.Tensor((n, 3), F32))
    assert res.status == "ok"
    assert str(res.type_of(e)) == "Tensor[(n, 3), float32]"


def test_if_branches_differ_in_a_dimension() -> None:
    n = ss.dim("n")
    res, e = _if(ss.Tensor((n, 3), F32), ss.Tensor((n, 4), F32))
    assert res.status == "ok", res.report()
    assert str(res.type_of(e)) == "Tensor[(n, ?), float32]"


def test_if_branches_differ_in_rank() -> None:
    res, e = _if(ss.Tensor((2, 3), F32), ss.Tensor((2,), F32))
    assert res.status == "ok", res.report()
    assert str(res.type_of(e)) == "Tensor[?, float32]"


def test_if_branches_differ_in_dtype() -> None:
    res, e = _if(ss.Tensor((2, 3), F32), ss.Tensor((2, 3), "int32"))
    assert res.status == "ok", res.report()
    t = res.type_of(e)
    assert isinstance(t, ss.TensorType)
    assert t.dtype is None
    assert str(t) == "Tensor[(2, 3), ?]"


def test_if_branches_differ_in_tuple_arity() -> None:
    t = ss.Tensor((2,), F32)
    res, e = _if(ss.TupleType([t]), ss.TupleType([t, t]))
    assert res.status == "ok", res.report()
    assert isinstance(res.type_of(e), ss.ObjectType)


def test_if_branches_provably_equal_dimension_stays() -> None:
    n = ss.dim("n")
    res, e = _if(ss.Tensor((2 * n, 3), F32), ss.Tensor((n + n, 3), F32))
    assert res.status == "ok"
    assert str(res.type_of(e)) == "Tensor[(2*n, 3), float32]"


def test_if_join_of_derived_types() -> None:
    c = ss.var("c", ss.Tensor((), "bool"))
    x = ss.var("x", ss.Tensor((2, 3, 4), F32))
    e = ss.If(c, ss.ops.flatten(x), ss.ops.relu(x))
    res = ss.infer(ss.Function([c, x], e))
    assert res.status == "ok", res.report()
    assert str(res.type_of(e)) == "Tensor[?, float32]"


def test_if_condition_must_be_bool_scalar() -> None:
    c = ss.var("c", ss.Tensor((2,), F32))
    x = ss.var("x", ss.Tensor((2,), F32))
    res = ss.infer(ss.Function([c, x], ss.If(c, x, x)))
    assert res.status == "error"


# -- MatchCast ----------------------------------------------------------------------------------


def test_match_cast_introduces_a_symbol() -> None:
    m = ss.dim("m")
    x = ss.var("x", ss.Tensor(None, F32))
    v = ss.var("v")
    y = ss.var("y", ss.Tensor((1, 4), F32))
    body = ss.ops.add(v, y)
    e = ss.MatchCast(v, x, ss.Tensor((m, 4), F32), body)
    res = ss.infer(ss.Function([x, y], e))
    assert res.status == "ok", res.report()
    assert str(res.type_of(v)) == "Tensor[(m, 4), float32]"
    assert str(res.type_of(body)) == "Tensor[(m, 4), float32]"


def test_match_cast_rank_mismatch_is_error() -> None:
    m = ss.dim("m")
    x = ss.var("x", ss.Tensor((2, 3, 4), F32))
    v = ss.var("v")
    res = ss.infer(ss.Function([x], ss.MatchCast(v, x, ss.Tensor((m, 4), F32), v)))
    assert res.status == "error"
    assert res.errors[0].code == "rank-mismatch"


def test_match_cast_binds_from_known_shape() -> None:
    n, m = ss.dims("n m")
    x = ss.var("x", ss.Tensor((n, 4), F32))
    v = ss.var("v")
    body = ss.ops.flatten(v)
    res = ss.infer(ss.Function([x], ss.MatchCast(v, x, ss.Tensor((m, 4), F32), body)))
    assert res.status == "ok", res.report()
    assert str(res.type_of(body)) == "Tensor[(m, 4), float32]"


# -- scale --------------------------------------------------------------------------------------


def test_ten_thousand_nested_calls() -> None:
    n = ss.dim("n")
    x = ss.var("x", ss.Tensor((n, 8), F32))
    e: ss.Expr = x
    for _ in range(10_000):
        e = ss.ops.relu(e)
    res = ss.infer(ss.Function([x], e))
    assert res.status == "ok"
    assert str(res.type_of(e)) == "Tensor[(n, 8), float32]"
    assert "relu" in repr(e)[:50]


def test_ten_thousand_nested_lets() -> None:
    x = ss.var("x", ss.Tensor((4, 8), F32))
    vs = [ss.var(f"v{i}") for i in range(10_000)]
    body: ss.Expr = vs[-1]
    for i in reversed(range(10_000)):
        prev = vs[i - 1] if i else x
        body = ss.Let(vs[i], ss.ops.exp(prev), body)
    res = ss.infer(ss.Function([x], body))
    assert res.status == "ok"
    assert str(res.type_of(body)) == "Tensor[(4, 8), float32]"


def test_type_of_binding_constructs_and_global_reference() -> None:
    m = ss.dim("m")
    t = ss.Tensor((4, 2), F32)
    x = ss.var("x", t)
    v, w = ss.var("v"), ss.var("w")
    df = ss.Dataflow([(w, ss.ops.relu(v))], w)
    mc = ss.MatchCast(v, x, ss.Tensor((m, 2), F32), df)
    mod = ss.Module()
    g = ss.GlobalVar("g")
    mod[g] = ss.Function([x], mc)
    y = ss.var("y", t)
    ref = ss.GlobalVar("g")
    call = ss.Call(ref, [y])
    mod["main"] = ss.Function([y], call)
    res = ss.infer(mod)
    assert res.status == "ok", res.report()
    assert str(res.type_of(mc)) == "Tensor[(m, 2), float32]"
    assert str(res.type_of(df)) == "Tensor[(m, 2), float32]"
    assert isinstance(res.type_of(ref), ss.FuncType)
    assert isinstance(res.type_of(call), ss.TensorType)
    assert res.type_of(call).ndim == 2  # type: ignore[union-attr]
