"""Normalization (seed 003) and the well-formedness check."""

from __future__ import annotations

from collections.abc import Sequence

import symshape as ss
from symshape.ir.op import OPS

F32 = "float32"
T = ss.Tensor((2, 3), F32)


@ss.relation("test.first_rel")
def _first_rel(ctx, args, attrs):  # type: ignore[no-untyped-def]
    tup = ctx.resolve(args[0])
    if isinstance(tup, ss.IncompleteType):
        return False
    ctx.unify(args[1], tup.fields[0])
    return True


FIRST = ss.register_op("test.first", "test.first_rel", 1)


def _axis_normalize(call: ss.Call, types: Sequence[ss.Type]) -> ss.Expr | None:
    """Make a negative ``axis`` non-negative (like softmax's hook)."""
    axis = call.attrs.get("axis", -1)
    t = types[0]
    assert isinstance(t, ss.TensorType) and t.ndim is not None
    if axis >= 0:
        return None
    op = call.callee
    assert isinstance(op, ss.Op)
    return op(*call.args, axis=axis + t.ndim)


AXIS_OP = ss.register_op("test.axis_op", "identity", 1, normalize=_axis_normalize)


def test_tuple_through_variable_is_inlined() -> None:
    x = ss.var("x", T)
    t = ss.var("t")
    call = FIRST(t)
    f = ss.Function([x], ss.Let(t, ss.Tuple([x, x]), call))
    res = ss.infer(f)
    assert res.status == "ok", res.report()
    assert str(res.type_of(call)) == str(T)
    nf = ss.normalize(f)
    assert isinstance(nf, ss.Function)
    assert "test.first((%x, %x))" in repr(nf)
    assert ss.infer(nf).status == "ok"
    # the input is unchanged
    assert "test.first(%t)" in repr(f)


def test_operator_hook_applied() -> None:
    x = ss.var("x", T)
    f = ss.Function([x], ss.ops.relu(AXIS_OP(x, axis=-1)))
    nf = ss.normalize(f)
    assert "axis=1" in repr(nf) or "'axis': 1" in repr(nf), repr(nf)
    assert not ss.structural_equal(nf, f)


def test_normalize_is_idempotent() -> None:
    x = ss.var("x", T)
    t = ss.var("t")
    body = ss.Let(t, ss.Tuple([x, x]), ss.ops.add(FIRST(t), AXIS_OP(x, axis=-2)))
    f = ss.Function([x], body)
    once = ss.normalize(f)
    twice = ss.normalize(once)
    assert ss.structural_equal(twice, once)
    assert not ss.structural_equal(once, f)
    assert ss.well_formed(once) == []


def test_normalize_never_simplifies() -> None:
    x = ss.var("x", T)
    zero = ss.Constant(shape=(), dtype=F32)
    f = ss.Function([x], ss.ops.add(x, zero))
    assert ss.structural_equal(ss.normalize(f), f)


def test_normalize_module() -> None:
    mod = ss.Module()
    x = ss.var("x", T)
    mod["f"] = ss.Function([x], AXIS_OP(x, axis=-1))
    out = ss.normalize(mod)
    assert isinstance(out, ss.Module)
    assert "axis" in repr(out["f"])
    assert ss.well_formed(out) == []
    assert [d.code for d in ss.well_formed(mod)] == ["not-normalized"]


def test_normalize_deep_program() -> None:
    x = ss.var("x", T)
    e: ss.Expr = x
    for _ in range(3000):
        e = AXIS_OP(e, axis=-1)
    f = ss.Function([x], e)
    once = ss.normalize(f)
    assert ss.structural_equal(ss.normalize(once), once)


def test_well_formed_clean_program() -> None:
    x = ss.var("x", T)
    v = ss.var("v")
    f = ss.Function([x], ss.Let(v, ss.ops.relu(x), ss.ops.add(v, x)))
    assert ss.well_formed(f) == []


def test_well_formed_not_normalized() -> None:
    x = ss.var("x", T)
    t = ss.var("t")
    call = FIRST(t)
    f = ss.Function([x], ss.Let(t, ss.Tuple([x, x]), call))
    diags = ss.well_formed(f)
    assert [d.code for d in diags] == ["not-normalized"]
    assert diags[0].span == call.span


def test_well_formed_undefined_var() -> None:
    x = ss.var("x", T)
    v = ss.var("v")
    inner = ss.Let(v, ss.ops.relu(x), v)
    f = ss.Function([x], ss.ops.add(inner, v))  # v used outside its let
    assert "undefined-var" in [d.code for d in ss.well_formed(f)]


def test_well_formed_free_variable_in_function() -> None:
    x, y = ss.var("x", T), ss.var("y", T)
    f = ss.Function([x], ss.ops.add(x, y))
    assert [d.code for d in ss.well_formed(f)] == ["undefined-var"]


def test_well_formed_duplicate_binding() -> None:
    x = ss.var("x", T)
    v = ss.var("v")
    f = ss.Function([x], ss.Let(v, ss.ops.relu(x), ss.Let(v, ss.ops.exp(v), v)))
    assert "duplicate-binding" in [d.code for d in ss.well_formed(f)]


def test_well_formed_impure_call() -> None:
    pr = ss.register_op("test.print_wf", "identity", 1, pure=False)
    try:
        x, v = ss.var("x", T), ss.var("v")
        f = ss.Function([x], ss.Dataflow([(v, pr(x))], v))
        assert [d.code for d in ss.well_formed(f)] == ["impure-call"]
    finally:
        del OPS["test.print_wf"]


def test_well_formed_module_with_globals() -> None:
    mod = ss.Module()
    x, y = ss.var("x", T), ss.var("y", T)
    g = ss.GlobalVar("g")
    mod[g] = ss.Function([x], ss.ops.relu(x), ret_type=T)
    mod["main"] = ss.Function([y], g(y))
    assert ss.well_formed(mod) == []


def test_structural_equal() -> None:
    def build() -> ss.Function:
        x = ss.var("x", T)
        return ss.Function([x], ss.ops.relu(x))

    assert ss.structural_equal(build(), build())
    x = ss.var("x", T)
    assert not ss.structural_equal(build(), ss.Function([x], ss.ops.exp(x)))


# -- the built-in operators' hooks --------------------------------------------------------------


def _normalized_body(body_fn, shape=(2, 3, 4), status="ok"):  # type: ignore[no-untyped-def]
    x = ss.var("x", ss.Tensor(shape, F32))
    body = body_fn(x)
    f = ss.Function([x], body)
    res = ss.infer(f)
    assert res.status == status, res.report()
    nf = ss.normalize(f)
    assert isinstance(nf, ss.Function)
    assert ss.structural_equal(ss.normalize(nf), nf)  # idempotent
    assert ss.well_formed(nf) == []
    after = ss.infer(nf)
    assert after.ok, after.report()
    assert after.type_of(nf.body) == res.type_of(body)  # never changes the type
    return f, nf


def test_reshape_special_values_become_explicit() -> None:
    f, nf = _normalized_body(lambda x: ss.ops.reshape(x, (0, -1)))
    assert "newshape=(2, 12)" in repr(nf)
    assert [d.code for d in ss.well_formed(f)] == ["not-normalized"]
    _, nf = _normalized_body(lambda x: ss.ops.reshape(x, (-3, 4)))
    assert "newshape=(6, 4)" in repr(nf)


def test_reshape_already_explicit_is_unchanged() -> None:
    f, nf = _normalized_body(lambda x: ss.ops.reshape(x, (6, 4)))
    assert ss.structural_equal(nf, f)
    assert ss.well_formed(f) == []


def test_negative_axes_become_non_negative() -> None:
    f, nf = _normalized_body(lambda x: ss.ops.softmax(x, axis=-2))
    assert "axis=1" in repr(nf)
    assert [d.code for d in ss.well_formed(f)] == ["not-normalized"]
    _, nf = _normalized_body(lambda x: ss.ops.sum(x, axis=-1))
    assert "axis=2" in repr(nf)


def test_negative_axis_with_symbolic_shape() -> None:
    n = ss.dim("n")
    _, nf = _normalized_body(lambda x: ss.ops.concatenate([x, x], axis=-1), shape=(n, 3, 4))
    assert "axis=2" in repr(nf)


def test_transpose_gets_explicit_axes() -> None:
    f, nf = _normalized_body(lambda x: ss.ops.transpose(x))
    assert "axes=(2, 1, 0)" in repr(nf)
    assert [d.code for d in ss.well_formed(f)] == ["not-normalized"]


def test_squeeze_gets_explicit_axes() -> None:
    f, nf = _normalized_body(lambda x: ss.ops.squeeze(x), shape=(2, 1, 4, 1))
    assert "axis=(1, 3)" in repr(nf)
    assert [d.code for d in ss.well_formed(f)] == ["not-normalized"]


def test_builtin_tuple_argument_through_variable_is_inlined() -> None:
    x = ss.var("x", ss.Tensor((2, 3), F32))
    t = ss.var("t")
    f = ss.Function([x], ss.Let(t, ss.Tuple([x, x]), ss.ops.concatenate(t, axis=1)))
    assert [d.code for d in ss.well_formed(f)] == ["not-normalized"]
    nf = ss.normalize(f)
    assert "concatenate((%x, %x), axis=1)" in repr(nf)
    assert ss.well_formed(nf) == []



# -- symbolic shapes (issue 4 follow-ups) --------------------------------------------------------


def _attr(nf: ss.Function, name: str) -> object:
    body = nf.body
    assert isinstance(body, ss.Call)
    return body.attrs[name]


def test_reshape_special_values_with_symbolic_shape() -> None:
    n = ss.dim("n")
    cases = [
        ((0, -1), (n, 12)),
        ((-1,), (12 * n,)),
        ((-2,), (n, 3, 4)),
        ((-3, 4), (3 * n, 4)),
        ((0, -3), (n, 12)),
        ((-1, 0), (4 * n, 3)),
        ((-4, -1, 1, 3, 4), (n, 1, 3, 4)),
    ]
    for spec, want in cases:
        f, nf = _normalized_body(lambda x, spec=spec: ss.ops.reshape(x, spec), shape=(n, 3, 4))
        assert _attr(nf, "newshape") == want, spec
        assert [d.code for d in ss.well_formed(f)] == ["not-normalized"], spec


def test_reshape_symbolic_explicit_is_unchanged() -> None:
    n = ss.dim("n")
    f, nf = _normalized_body(lambda x: ss.ops.reshape(x, (n, 12)), shape=(n, 3, 4))
    assert ss.structural_equal(nf, f)
    assert ss.well_formed(f) == []


def test_reshape_symbolic_with_divisibility_guard() -> None:
    """The output is determined only under a guard (``5`` must divide ``12*n``): the special
    value says it more plainly than ``12*n//5``, so the call is already normal and stays."""
    n = ss.dim("n")
    x = ss.var("x", ss.Tensor((n, 3, 4), F32))
    body = ss.ops.reshape(x, (-1, 5))
    f = ss.Function([x], body)
    res = ss.infer(f)
    assert res.status == "guarded"
    nf = ss.normalize(f)
    assert isinstance(nf, ss.Function)
    assert _attr(nf, "newshape") == (-1, 5)
    assert ss.structural_equal(nf, f)
    assert ss.well_formed(f) == []


def test_reshape_with_unknown_dimension_stays() -> None:
    """An input dimension written ``?`` names nothing: the special values stay."""
    x = ss.var("x", ss.parse_type("Tensor[(?, 3, 4), float32]"))
    f = ss.Function([x], ss.ops.reshape(x, (0, -1)))
    assert ss.infer(f).status == "ok"
    assert ss.structural_equal(ss.normalize(f), f)
    assert ss.well_formed(f) == []


def test_reshape_of_joined_dimension_stays() -> None:
    """A dimension from the join of two branches is a fresh unknown: not written out."""
    n, m = ss.dims("n m")
    c = ss.var("c", ss.Tensor((), "bool"))
    a, b = ss.var("a", ss.Tensor((n, 4), F32)), ss.var("b", ss.Tensor((m, 4), F32))
    j = ss.var("j")
    f = ss.Function([c, a, b], ss.Let(j, ss.If(c, a, b), ss.ops.reshape(j, (-1,))))
    assert ss.infer(f).ok
    assert ss.structural_equal(ss.normalize(f), f)
    assert ss.well_formed(f) == []


def test_reshape_invalid_is_left_alone() -> None:
    x = ss.var("x", T)
    f = ss.Function([x], ss.ops.reshape(x, (-1, 4)))  # 6 elements
    assert ss.infer(f).status == "error"
    assert ss.structural_equal(ss.normalize(f), f)


def test_reshape_allowzero_explicit_zero_is_normal() -> None:
    x = ss.var("x", ss.Tensor((0, 3), F32))
    f = ss.Function([x], ss.ops.reshape(x, (0, 3), allowzero=True))
    assert ss.infer(f).status == "ok"
    assert ss.well_formed(f) == []
    assert ss.structural_equal(ss.normalize(f), f)


def test_squeeze_symbolic_keeps_unprovable_symbol() -> None:
    """``n`` is not provably 1: the relation keeps it (guard ``n != 1``); only the 1 is dropped."""
    n = ss.dim("n")
    x = ss.var("x", ss.Tensor((n, 1, 4), F32))
    body = ss.ops.squeeze(x)
    f = ss.Function([x], body)
    res = ss.infer(f)
    assert res.status == "guarded"
    nf = ss.normalize(f)
    assert isinstance(nf, ss.Function)
    assert _attr(nf, "axis") == (1,)
    after = ss.infer(nf)
    assert after.type_of(nf.body) == res.type_of(body)
    assert ss.structural_equal(ss.normalize(nf), nf)
    assert ss.well_formed(nf) == []
    assert [d.code for d in ss.well_formed(f)] == ["not-normalized"]


def test_squeeze_symbolic_drops_provable_one() -> None:
    """``m`` has max 1, so it is provably 1 and dropped: its axis is listed."""
    n = ss.dim("n")
    m = ss.dim("m", max=1)
    f, nf = _normalized_body(lambda x: ss.ops.squeeze(x), shape=(n, m, 4, 1), status="guarded")
    assert _attr(nf, "axis") == (1, 3)
    assert [d.code for d in ss.well_formed(f)] == ["not-normalized"]


def test_squeeze_symbol_bound_by_match_cast() -> None:
    """Whatever the relation decides for a symbol ``k`` that ``match_cast`` binds to a dimension
    of size 1, the explicit axes agree with the inferred result (read off it)."""
    n = ss.dim("n")
    k = ss.dim("k")
    x = ss.var("x", ss.Tensor((n, 1), F32))
    y = ss.var("y")
    body = ss.ops.squeeze(y)
    f = ss.Function([x], ss.MatchCast(y, x, ss.Tensor((n, k), F32), body))
    res = ss.infer(f)
    assert res.ok, res.report()
    nf = ss.normalize(f)
    assert isinstance(nf, ss.Function)
    got = nf.body.body  # type: ignore[attr-defined]
    assert isinstance(got, ss.Call)
    want = tuple(i for i, d in enumerate((n, k)) if d not in res.type_of(body).shape)  # type: ignore[union-attr]
    assert got.attrs["axis"] == want
    assert ss.infer(nf).type_of(got) == res.type_of(body)
    assert ss.structural_equal(ss.normalize(nf), nf)
    assert ss.well_formed(nf) == []


def test_squeeze_symbolic_nothing_to_drop() -> None:
    n = ss.dim("n")
    f, nf = _normalized_body(lambda x: ss.ops.squeeze(x), shape=(n, 3), status="guarded")
    assert _attr(nf, "axis") == ()
    assert [d.code for d in ss.well_formed(f)] == ["not-normalized"]


def test_squeeze_explicit_axis_is_unchanged() -> None:
    n = ss.dim("n")
    f, nf = _normalized_body(lambda x: ss.ops.squeeze(x, axis=(1,)), shape=(n, 1, 4))
    assert ss.structural_equal(nf, f)
    assert ss.well_formed(f) == []


def test_symbolic_normalization_never_simplifies() -> None:
    n = ss.dim("n")
    x = ss.var("x", ss.Tensor((n, 3, 4), F32))
    zero = ss.Constant(shape=(), dtype=F32)
    f = ss.Function([x], ss.ops.add(ss.ops.reshape(x, (n, 12)), zero))
    assert ss.structural_equal(ss.normalize(f), f)
    assert ss.well_formed(f) == []
