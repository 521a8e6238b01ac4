"""Variables, symbols and global functions in ``infer`` (issue 11).

* a variable used outside its scope is ``undefined-var`` and a variable bound twice is
  ``duplicate-binding``, reported by ``infer`` itself (status ``error``, at the use or binding);
* one name is one symbol in a program: two symbols of one name with different ranges are an error
  instead of guards that read ``k == k``;
* an unannotated recursive global function is generalized over its own symbols once generated:
  each call binds them (design: symbols in parameter annotations belong to the function).
"""

from __future__ import annotations

import pytest

import symshape as ss

F = "float32"
T = ss.Tensor


def _codes(res: ss.InferenceResult) -> list[str]:
    return [d.code for d in res.errors]


# -- scope of variables ----------------------------------------------------------------------------


def test_duplicate_parameter() -> None:
    p = ss.var("p", T((2,), F))
    res = ss.infer(ss.Function([p, p], p))
    assert res.status == "error"
    assert _codes(res) == ["duplicate-binding"]
    d = res.errors[0]
    assert "`p` is bound twice" in d.message and "parameter" in d.message
    assert d.span is not None and d.span.file == __file__


def test_let_rebinding_a_parameter() -> None:
    p = ss.var("p", T((2,), F))
    res = ss.infer(ss.Function([p], ss.Let(p, ss.ops.relu(p), p)))
    assert res.status == "error"
    assert _codes(res) == ["duplicate-binding"]
    assert "by a parameter and again by a let" in res.errors[0].message


def test_variable_bound_by_two_lets() -> None:
    x = ss.var("x", T((2,), F))
    v = ss.var("v")
    inner = ss.Let(v, ss.ops.exp(x), v)
    res = ss.infer(ss.Function([x], ss.Let(v, ss.ops.relu(x), inner)))
    assert _codes(res) == ["duplicate-binding"]


def test_free_variable() -> None:
    p = ss.var("p", T((2,), F))
    q = ss.var("q", T((2,), F))
    body = ss.ops.add(p, q)
    res = ss.infer(ss.Function([p], body))
    assert res.status == "error"
    assert _codes(res) == ["undefined-var"]
    d = res.errors[0]
    assert "`q` is unbound" in d.message
    assert d.span == body.span  # the use, not the declaration
    # the annotated free variable still has its type, so nothing cascades
    assert str(res.type_of(body)) == "Tensor[(2,), float32]"
    assert not res.unresolved


def test_unbound_variable_named_like_a_parameter() -> None:
    a = ss.var("a", T((2,), F))
    res = ss.infer(ss.Function([a], ss.ops.add(a, ss.var("a"))))
    assert res.status == "error"
    assert _codes(res) == ["undefined-var"]
    msg = res.errors[0].message
    assert "unbound" in msg and "another variable named `a` is in scope" in msg
    report = res.report()
    assert "add an annotation" not in report
    assert "cannot infer" not in report


def test_variable_used_after_its_let() -> None:
    x = ss.var("x", T((2,), F))
    v = ss.var("v")
    scoped = ss.Let(v, ss.ops.relu(x), v)
    res = ss.infer(ss.Function([x], ss.Tuple([scoped, v])))
    assert _codes(res) == ["undefined-var"]


def test_parameter_of_another_function() -> None:
    x = ss.var("x", T((2,), F))
    y = ss.var("y", T((2,), F))
    inner = ss.Function([y], ss.ops.relu(y))
    res = ss.infer(ss.Function([x], ss.Tuple([inner, ss.ops.exp(y)])))
    assert _codes(res) == ["undefined-var"]
    assert "`y` is unbound" in res.errors[0].message


def test_free_variables_of_a_bare_expression_are_its_inputs() -> None:
    # Relay's IRModule.from_expr: a bare expression is a function of its free variables; inside
    # a Function, a free variable is an error (above)
    z = ss.var("z", T((2,), F))
    res = ss.infer(ss.ops.relu(z))
    assert res.status == "ok" and str(res.type_of(z)) == "Tensor[(2,), float32]"
    a = ss.var("a", T((2,), F))
    res = ss.infer(ss.Let(a, z, ss.Tuple([a, ss.Function([], ss.ops.exp(z))])))
    assert res.status == "ok", res.report()
    b = ss.var("b", T((2,), F))
    res = ss.infer(ss.Tuple([ss.Let(b, z, b), b]))  # `b` is an input and let-bound: an error
    assert res.status == "error"


def test_each_unbound_variable_is_reported_once() -> None:
    x = ss.var("x", T((2,), F))
    q = ss.var("q", T((2,), F))
    res = ss.infer(ss.Function([x], ss.Tuple([ss.ops.add(x, q), ss.ops.multiply(q, x), q])))
    assert _codes(res) == ["undefined-var"]


def test_scopes_of_match_dataflow_and_match_cast() -> None:
    lst = ss.GlobalTypeVar("List")
    a = ss.TypeVar("a")
    nil = ss.Constructor("Nil", [], lst)
    cons = ss.Constructor("Cons", [a, ss.TypeCall(lst, [a])], lst)
    mod = ss.Module()
    mod.add_type(ss.TypeData(lst, [a], [nil, cons]))
    xs = ss.var("xs", ss.TypeCall(lst, [T((2,), F)]))
    h, h2 = ss.var("h"), ss.var("h2")
    # h belongs to the first clause only
    m = ss.Match(
        xs,
        [
            ss.Clause(ss.PatternConstructor(cons, [ss.PatternVar(h), ss.PatternWildcard()]), h),
            ss.Clause(ss.PatternConstructor(cons, [ss.PatternVar(h2), ss.PatternWildcard()]), h2),
        ],
        complete=False,
    )
    mod["ok"] = ss.Function([xs], m)
    res = ss.infer(mod)
    assert res.status == "ok", res.report()
    ys = ss.var("ys", ss.TypeCall(lst, [T((2,), F)]))
    bad = ss.Match(ys, [ss.Clause(ss.PatternWildcard(), h)], complete=False)
    mod2 = ss.Module()
    mod2.add_type(ss.TypeData(lst, [a], [nil, cons]))
    mod2["bad"] = ss.Function([ys], bad)
    assert _codes(ss.infer(mod2)) == ["undefined-var"]

    # dataflow bindings are in scope in the block; a match_cast's variable in its body
    x = ss.var("x", T((2, 3), F))
    v1, v2 = ss.var("v1"), ss.var("v2")
    df = ss.Dataflow([(v1, ss.ops.relu(x)), (v2, ss.ops.exp(v1))], v2)
    assert ss.infer(ss.Function([x], df)).status == "ok"
    n = ss.dim("n")
    w = ss.var("w")
    mc = ss.MatchCast(w, x, T((n, 3), F), ss.ops.relu(w))
    assert ss.infer(ss.Function([x], mc)).status == "ok"
    assert _codes(ss.infer(ss.Function([x], ss.Tuple([mc, w])))) == ["undefined-var"]


def test_infer_agrees_with_well_formed() -> None:
    p = ss.var("p", T((2,), F))
    q = ss.var("q", T((2,), F))
    for prog in (
        ss.Function([p, p], p),
        ss.Function([p], ss.Let(p, p, p)),
        ss.Function([p], ss.ops.add(p, q)),
    ):
        wf = {d.code for d in ss.well_formed(prog)}
        inf = set(_codes(ss.infer(prog)))
        assert inf and inf <= wf


# -- one symbol per name -----------------------------------------------------------------------------


def test_two_symbols_of_one_name_are_an_error() -> None:
    k1, k2 = ss.dim("k"), ss.dim("k", min=0)
    assert k1 != k2 and str(k1) == str(k2)
    x = ss.var("x", T((k1,), F))
    y = ss.var("y", T((k2,), F))
    body = ss.ops.add(x, y)
    res = ss.infer(ss.Function([x, y], body))
    assert res.status == "error"
    assert _codes(res) == ["duplicate-binding"]
    msg = res.errors[0].message
    assert "two different symbols are named `k`" in msg
    assert "k >= 1" in msg and "k >= 0" in msg
    # no guard reading `k == k`
    assert not res.guards
    assert "k == k" not in res.report()


def test_symbol_clash_through_attributes_and_constants() -> None:
    n, n8 = ss.dim("n"), ss.dim("n", max=8)
    x = ss.var("x", T((n, 4), F))
    res = ss.infer(ss.Function([x], ss.ops.reshape(x, (n8, 4))))
    assert _codes(res) == ["duplicate-binding"]
    res2 = ss.infer(ss.Function([x], ss.ops.add(x, ss.Constant(shape=(n8, 4)))))
    assert _codes(res2) == ["duplicate-binding"]
    assert "0 <= n" not in res2.errors[0].message and "1 <= n <= 8" in res2.errors[0].message


def test_one_symbol_declared_twice_alike_is_one_symbol() -> None:
    x = ss.var("x", T((ss.dim("n"), 4), F))
    y = ss.var("y", T((ss.dim("n"), 4), F))
    res = ss.infer(ss.Function([x, y], ss.ops.add(x, y)))
    assert res.status == "ok", res.report()


def test_dims_rejects_a_repeated_name() -> None:
    with pytest.raises(ss.SymshapeError) as e:
        ss.dims("n s n")
    assert e.value.code == "invalid-argument"


# -- recursion without a return annotation ----------------------------------------------------------


def _loop_module(sizes: list[int]) -> tuple[ss.Module, ss.GlobalVar, list[ss.Expr]]:
    n = ss.dim("n")
    mod = ss.Module()
    loop = ss.GlobalVar("loop")
    x = ss.var("x", T((n, 256), F))
    c = ss.var("c", T((), "bool"))
    rec = loop(ss.ops.relu(x), c)
    mod[loop] = ss.Function([x, c], ss.If(c, rec, x))  # no ret_type
    cc = ss.var("cc", T((), "bool"))
    args = [ss.var(f"a{i}", T((k, 256), F)) for i, k in enumerate(sizes)]
    calls = [loop(a, cc) for a in args]
    mod["main"] = ss.Function([*args, cc], ss.Tuple(calls))
    return mod, loop, calls


def test_recursive_global_without_return_type_generalizes() -> None:
    mod, loop, calls = _loop_module([3])
    res = ss.infer(mod)
    assert res.status == "ok", res.report()
    assert not res.guards
    assert str(res.type_of(calls[0])) == "Tensor[(3, 256), float32]"
    assert str(res.type_of(loop)) == (
        "fn<n: dim>(Tensor[(n, 256), float32], Tensor[(), bool]) -> Tensor[(n, 256), float32]"
    )


def test_recursive_global_called_at_two_sizes() -> None:
    mod, _, calls = _loop_module([3, 5])
    res = ss.infer(mod)
    assert res.status == "ok", res.report()
    assert [str(res.type_of(c)) for c in calls] == [
        "Tensor[(3, 256), float32]",
        "Tensor[(5, 256), float32]",
    ]


def test_recursive_global_called_with_a_symbol_and_a_wrong_size() -> None:
    m = ss.dim("m")
    n = ss.dim("n")
    mod = ss.Module()
    loop = ss.GlobalVar("loop")
    x = ss.var("x", T((n, 256), F))
    c = ss.var("c", T((), "bool"))
    mod[loop] = ss.Function([x, c], ss.If(c, loop(ss.ops.relu(x), c), x))
    a = ss.var("a", T((m, 256), F))
    b = ss.var("b", T((2, 255), F))
    cc = ss.var("cc", T((), "bool"))
    ca, cb = loop(a, cc), loop(b, cc)
    mod["main"] = ss.Function([a, b, cc], ss.Tuple([ca, cb]))
    res = ss.infer(mod)
    assert res.status == "error"
    assert str(res.type_of(ca)) == "Tensor[(m, 256), float32]"
    assert any("255" in d.message for d in res.errors)


def test_recursive_global_whose_type_is_known_when_called() -> None:
    # the callee's type is complete at the call (no recursion through the return type): it is
    # instantiated directly
    n = ss.dim("n")
    mod = ss.Module()
    f = ss.GlobalVar("f")
    x = ss.var("x", T((n, 4), F))
    mod[f] = ss.Function([x], ss.ops.relu(x))
    a, b = ss.var("a", T((2, 4), F)), ss.var("b", T((7, 4), F))
    ca, cb = f(a), f(b)
    mod["main"] = ss.Function([a, b], ss.Tuple([ca, cb]))
    res = ss.infer(mod)
    assert res.status == "ok", res.report()
    assert str(res.type_of(ca)) == "Tensor[(2, 4), float32]"
    assert str(res.type_of(cb)) == "Tensor[(7, 4), float32]"
