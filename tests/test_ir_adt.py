"""Algebraic data types, constructors and ``Match`` (issue 4)."""

from __future__ import annotations

import symshape as ss

F32 = "float32"


def _list_module() -> tuple[ss.Module, ss.GlobalTypeVar, ss.Constructor, ss.Constructor]:
    lst = ss.GlobalTypeVar("List")
    a = ss.TypeVar("a")
    nil = ss.Constructor("Nil", [], lst)
    cons = ss.Constructor("Cons", [a, ss.TypeCall(lst, [a])], lst)
    mod = ss.Module()
    mod.add_type(ss.TypeData(lst, [a], [nil, cons]))
    return mod, lst, nil, cons


def test_constructors_build_a_list() -> None:
    mod, lst, nil, cons = _list_module()  # noqa: RUF059
    x = ss.var("x", ss.Tensor((2,), "int32"))
    value = cons(x, cons(x, nil()))
    mod["main"] = ss.Function([x], value)
    res = ss.infer(mod)
    assert res.status == "ok", res.report()
    assert str(res.type_of(value)) == "List[Tensor[(2,), int32]]"


def test_constructor_arguments_must_agree() -> None:
    mod, lst, nil, cons = _list_module()  # noqa: RUF059
    x = ss.var("x", ss.Tensor((2,), "int32"))
    y = ss.var("y", ss.Tensor((3,), "int32"))
    mod["main"] = ss.Function([x, y], cons(x, cons(y, nil())))
    res = ss.infer(mod)
    assert res.status == "error"


def test_constructor_arity() -> None:
    mod, lst, nil, cons = _list_module()  # noqa: RUF059
    x = ss.var("x", ss.Tensor((2,), "int32"))
    mod["main"] = ss.Function([x], cons(x))
    res = ss.infer(mod)
    assert res.status == "error"
    assert res.errors[0].code == "arity-mismatch"


def test_match_without_annotations_is_unresolved_and_names_the_variables() -> None:
    """Broadcasting cannot determine the head's type, so the report asks for annotations."""
    mod, lst, nil, cons = _list_module()  # noqa: RUF059
    n = ss.dim("n")
    xs = ss.var("xs")
    h = ss.var("h")
    y = ss.var("y", ss.Tensor((n, 3), F32))
    body = ss.Match(
        xs,
        [
            ss.Clause(
                ss.PatternConstructor(cons, [ss.PatternVar(h), ss.PatternWildcard()]), ss.ops.add(h, y)
            ),
            ss.Clause(ss.PatternConstructor(nil, []), y),
        ],
    )
    mod["head_plus"] = ss.Function([xs, y], body)
    res = ss.infer(mod)
    assert res.status == "unresolved"
    text = " ".join(d.message for d in res.unresolved)
    assert "`xs`" in text and "`h`" in text
    assert str(res.type_of(xs)).startswith("List[")


def test_match_pattern_annotation_flows_back_to_parameter() -> None:
    mod, lst, nil, cons = _list_module()  # noqa: RUF059
    xs = ss.var("xs")
    h = ss.var("h", ss.Tensor((4, 2), F32))
    body = ss.Match(
        xs,
        [
            ss.Clause(ss.PatternConstructor(cons, [ss.PatternVar(h), ss.PatternWildcard()]), ss.ops.relu(h)),
            ss.Clause(ss.PatternWildcard(), ss.Constant(shape=(4, 2), dtype=F32)),
        ],
    )
    g = ss.GlobalVar("head")
    mod[g] = ss.Function([xs], body)
    res = ss.infer(mod)
    assert res.status == "ok", res.report()
    assert str(res.type_of(xs)) == "List[Tensor[(4, 2), float32]]"
    assert str(res.type_of(body)) == "Tensor[(4, 2), float32]"
    assert str(res.type_of(g)) == "fn(List[Tensor[(4, 2), float32]]) -> Tensor[(4, 2), float32]"


def test_match_join_of_clause_bodies() -> None:
    mod, lst, nil, cons = _list_module()
    xs = ss.var("xs", ss.TypeCall(lst, [ss.Tensor((4, 2), F32)]))
    h = ss.var("h")
    body = ss.Match(
        xs,
        [
            ss.Clause(ss.PatternConstructor(cons, [ss.PatternVar(h), ss.PatternWildcard()]), h),
            ss.Clause(ss.PatternConstructor(nil, []), ss.Constant(shape=(4, 5), dtype=F32)),
        ],
    )
    mod["f"] = ss.Function([xs], body)
    res = ss.infer(mod)
    assert res.status == "ok", res.report()
    assert str(res.type_of(h)) == "Tensor[(4, 2), float32]"
    assert str(res.type_of(body)) == "Tensor[(4, ?), float32]"


def test_recursive_list_length_style_function() -> None:
    """A recursive function over a list (map relu), annotated."""
    mod, lst, nil, cons = _list_module()
    t = ss.Tensor((3,), F32)
    lt = ss.TypeCall(lst, [t])
    g = ss.GlobalVar("map_relu")
    xs = ss.var("xs", lt)
    h, rest = ss.var("h"), ss.var("rest")
    body = ss.Match(
        xs,
        [
            ss.Clause(
                ss.PatternConstructor(cons, [ss.PatternVar(h), ss.PatternVar(rest)]),
                cons(ss.ops.relu(h), g(rest)),
            ),
            ss.Clause(ss.PatternConstructor(nil, []), nil()),
        ],
    )
    mod[g] = ss.Function([xs], body, ret_type=lt)
    res = ss.infer(mod)
    assert res.status == "ok", res.report()
    assert str(res.type_of(rest)) == "List[Tensor[(3,), float32]]"
    assert str(res.type_of(body)) == "List[Tensor[(3,), float32]]"


def test_pattern_arity_mismatch() -> None:
    mod, lst, nil, cons = _list_module()  # noqa: RUF059
    xs = ss.var("xs", ss.TypeCall(lst, [ss.Tensor((3,), F32)]))
    h = ss.var("h")
    body = ss.Match(xs, [ss.Clause(ss.PatternConstructor(cons, [ss.PatternVar(h)]), xs)])
    mod["f"] = ss.Function([xs], body)
    res = ss.infer(mod)
    assert res.status == "error"
    assert res.errors[0].code == "arity-mismatch"


def test_tuple_pattern() -> None:
    t = ss.Tensor((3,), F32)
    p = ss.var("p", ss.TupleType([t, ss.Tensor((2,), "int32")]))
    a, b = ss.var("a"), ss.var("b")
    body = ss.Match(p, [ss.Clause(ss.PatternTuple([ss.PatternVar(a), ss.PatternVar(b)]), a)])
    res = ss.infer(ss.Function([p], body))
    assert res.status == "ok", res.report()
    assert str(res.type_of(b)) == "Tensor[(2,), int32]"
    assert str(res.type_of(body)) == "Tensor[(3,), float32]"


def test_module_repr_lists_types_and_functions() -> None:
    mod, lst, nil, cons = _list_module()  # noqa: RUF059
    x = ss.var("x", ss.Tensor((2,), F32))
    mod["f"] = ss.Function([x], x)
    text = repr(mod)
    assert "List" in text and "@f" in text
