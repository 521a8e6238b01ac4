"""Shape values (issue 13): the value field of tensor types, and the operators that make and use
values. Table-driven cases per operator (inputs, attributes, expected type or error code), the
oracle program, printing/parsing, unification and joins, unknown-value fallbacks, data-dependent
sizes and determinism. Properties against numpy are in ``test_shape_values_props.py``."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import symshape as ss
from symshape.encoding.values import join_values

n, s, m = ss.dims("n s m")
ENV = {"n": n, "s": s, "m": m}


def i64(v: Any) -> ss.Constant:
    return ss.const(np.array(v, "int64"))


def infer(*outs: Any, params: list[Any]) -> ss.InferenceResult:
    body = outs[0] if len(outs) == 1 else ss.Tuple(list(outs))
    return ss.infer(ss.Function(params, body))


# ----------------------------------------------------------------------------------------------
# the oracle program of the issue


def test_oracle_program() -> None:
    x = ss.var("x", ss.Tensor((n, s, 64), "float32"))
    sh = ss.ops.shape_of(x)
    ns = ss.ops.multiply(ss.ops.take(sh, i64(0)), ss.ops.take(sh, i64(1)))
    r = ss.ops.reshape(x, ss.ops.concatenate([ss.ops.expand_dims(ns, 0), i64([64])], axis=0))
    res = ss.infer(ss.Function([x], r))
    assert res.status == "ok"
    assert str(res.type_of(r)) == "Tensor[(n*s, 64), float32]"
    assert res.value_of(sh) == (n, s, 64)
    assert res.value_of(ns) == n * s
    assert str(res.type_of(sh)) == "Tensor[(3,), int64] = (n, s, 64)"
    assert res.z3_calls == 0


def test_value_of_unknown_and_non_tensor() -> None:
    x = ss.var("x", ss.Tensor((n, 3), "float32"))
    p = ss.var("p", ss.Tensor((2,), "int64"))
    a = ss.ops.argmax(x, axis=1)
    res = infer(a, p, x, params=[x, p])
    assert res.value_of(a) is None  # data, not a shape
    assert res.value_of(p) is None  # an input without a value
    assert res.value_of(x) is None  # a float tensor
    t = ss.Tuple([x])
    res = ss.infer(ss.Function([x], t))
    assert res.value_of(t) is None


# ----------------------------------------------------------------------------------------------
# the term language: construction, printing, parsing, equality


@pytest.mark.parametrize(
    "text",
    [
        "Tensor[(3,), int64] = (n, s, 64)",
        "Tensor[(), int64] = n*s",
        "Tensor[(2,), int32] = (?, -1)",
        "Tensor[(1,), int64] = (n//2,)",
        "Tensor[(2,), int64] = (max(n, s), n % 3)",
        "(Tensor[(), int64] = n, Tensor[(2,), int64] = (n, m))",
        "fn(Tensor[(2,), int64] = (n, 4)) -> Tensor[(), int64] = 4*n",
        "fn<a>(a, Tensor[(), int32] = s) -> Tensor[(), int32] = s where broadcast(a, a, a)",
    ],
)
def test_print_parse_round_trip(text: str) -> None:
    t = ss.parse_type(text, ENV)
    assert str(t) == text
    assert ss.parse_type(str(t), ENV) == t


def test_values_change_equality_and_hash_consistently() -> None:
    a = ss.Tensor((3,), "int64", value=(n, s, 64))
    b = ss.parse_type("Tensor[(3,), int64] = (n, s, 64)", ENV)
    plain = ss.Tensor((3,), "int64")
    assert a == b and hash(a) == hash(b)
    assert a != plain
    assert ss.Tensor((3,), "int64", value=(None, None, None)) == plain  # no known entry: no value
    assert str(plain) == "Tensor[(3,), int64]"
    assert repr(plain) == "TensorType(shape=(Dim(3),), dtype='int64')"
    assert a.subs({n: 2}).value == (2, s, 64)
    assert ss.Tensor((), "int64", value=n * 4).value == 4 * n


@pytest.mark.parametrize(
    "shape, dtype, value",
    [
        ((3,), "float32", (1, 2, 3)),  # only int32/int64 carry values
        ((2, 2), "int64", (1, 2, 3, 4)),  # only rank 0 and 1
        ((n,), "int64", (1, 2)),  # the length must be the constant number of entries
        ((3,), "int64", (1, 2)),
        ((), "int64", (1,)),  # a 0-d value is one dimension
        ((2,), "int64", 5),
        ((1,), "int64", ("a",)),
    ],
)
def test_bad_values_are_rejected(shape: Any, dtype: str, value: Any) -> None:
    with pytest.raises(ss.SymshapeError) as e:
        ss.Tensor(shape, dtype, value=value)
    assert e.value.code == "invalid-argument"


@pytest.mark.parametrize(
    "text",
    [
        "Tensor[(3,), int64] = (1, 2)",
        "Tensor[(2,), float32] = (1, 2)",
        "Tensor[(), int64] = ",
        "Tensor[(1,), int64] = ()",
    ],
)
def test_bad_value_text(text: str) -> None:
    with pytest.raises(ss.SymshapeError) as e:
        ss.parse_type(text, ENV)
    assert e.value.code == "parse-error"


def test_display_shows_values() -> None:
    t = ss.Tensor((3,), "int64", value=(n, s, 64))
    assert "= (n, s, 64)" in t._repr_html_()
    x = ss.var("x", ss.Tensor((n, s, 64), "float32"))
    sh = ss.ops.shape_of(x)
    res = ss.infer(ss.Function([x], sh))
    assert "= (n, s, 64)" in res._repr_html_()
    assert "Tensor[(3,), int64] = (n, s, 64)" in res.report(program=True)


# ----------------------------------------------------------------------------------------------
# unification (a value refines its type) and joins


def _unify(a: Any, b: Any) -> tuple[ss.Solution, Any]:
    solver = ss.TypeSolver()
    u = solver.unify(a, b)
    return solver.solve(), u


UNIFY_OK = [
    # unknown meets known, either side
    ("Tensor[(3,), int64]", "Tensor[(3,), int64] = (n, s, 64)", "Tensor[(3,), int64] = (n, s, 64)"),
    ("Tensor[(3,), int64] = (n, s, 64)", "Tensor[(3,), int64]", "Tensor[(3,), int64] = (n, s, 64)"),
    # entry by entry
    (
        "Tensor[(3,), int64] = (n, ?, 64)",
        "Tensor[(3,), int64] = (?, s, ?)",
        "Tensor[(3,), int64] = (n, s, 64)",
    ),
    ("Tensor[(), int64] = 2*n", "Tensor[(), int64] = n*2", "Tensor[(), int64] = 2*n"),
]


@pytest.mark.parametrize("a, b, want", UNIFY_OK)
def test_unify_refines(a: str, b: str, want: str) -> None:
    sol, u = _unify(ss.parse_type(a, ENV), ss.parse_type(b, ENV))
    assert sol.status == "ok"
    assert str(sol.resolve(u)) == want


def test_unify_hole_takes_the_value() -> None:
    solver = ss.TypeSolver()
    h = solver.hole()
    solver.unify(h, ss.Tensor((2,), "int64", value=(n, 3)))
    solver.unify(h, ss.Tensor((2,), "int64"))
    sol = solver.solve()
    assert str(sol.resolve(h)) == "Tensor[(2,), int64] = (n, 3)"


@pytest.mark.parametrize(
    "a, b, code, status, detail",
    [
        (
            "Tensor[(2,), int64] = (n, 3)",
            "Tensor[(2,), int64] = (n, 4)",
            "shape-mismatch",
            "error",
            "value entry 1: 3 vs 4",
        ),
        ("Tensor[(), int64] = 3", "Tensor[(), int64] = 5", "shape-mismatch", "error", "value: 3 vs 5"),
        ("Tensor[(2,), int64] = (n, 3)", "Tensor[(2,), int64] = (s, 3)", None, "guarded", "n == s"),
        ("Tensor[(2,), int64] = (n, 3)", "Tensor[(2,), int64] = (n + 1, 3)", "shape-mismatch", "error", ""),
    ],
)
def test_unify_conflicts(a: str, b: str, code: str | None, status: str, detail: str) -> None:
    sol, _ = _unify(ss.parse_type(a, ENV), ss.parse_type(b, ENV))
    assert sol.status == status
    if code is not None:
        assert [e.code for e in sol.errors] == [code]
        assert detail in sol.errors[0].message
    else:
        assert [str(g) for g in sol.guards] == [detail]


def test_value_conflict_in_a_program_is_explained() -> None:
    x = ss.var("x", ss.Tensor((n, 3), "float32"))
    sh = ss.ops.shape_of(x)
    v = ss.var("v", ss.Tensor((2,), "int64", value=(n, 4)))
    res = ss.infer(ss.Function([x], ss.Let(v, sh, v)))
    assert res.status == "error"
    (e,) = res.errors
    assert e.code == "shape-mismatch"
    assert e.message == (
        "cannot unify `Tensor[(2,), int64] = (n, 4)` and `Tensor[(2,), int64] = (n, 3)`: "
        "value entry 1: 4 vs 3"
    )
    assert e.span is not None and e.span.file == __file__


JOINS = [
    ((n, s, 64), (n, m, 64), (n, None, 64)),
    ((n, 4), (n, 4), (n, 4)),
    ((1, 2), (3, 4), None),  # no entry in common: no value
    (n, n, n),
    (n, s, None),
]


@pytest.mark.parametrize("a, b, want", JOINS)
def test_join_values(a: Any, b: Any, want: Any) -> None:
    def dims(v: Any) -> Any:
        if isinstance(v, tuple):
            return tuple(None if x is None else ss.parse_dim(str(x), ENV) for x in v)
        return ss.parse_dim(str(v), ENV)

    assert join_values(dims(a), dims(b)) == (None if want is None else dims(want))


def test_if_joins_values() -> None:
    x = ss.var("x", ss.Tensor((n, s, 64), "float32"))
    y = ss.var("y", ss.Tensor((n, m, 64), "float32"))
    c = ss.var("c", ss.Tensor((), "bool"))
    j = ss.If(c, ss.ops.shape_of(x), ss.ops.shape_of(y))
    res = ss.infer(ss.Function([c, x, y], j))
    assert res.status == "ok"
    assert res.value_of(j) == (n, None, 64)
    assert str(res.type_of(j)) == "Tensor[(3,), int64] = (n, ?, 64)"


def test_if_join_of_unequal_lengths_has_no_value() -> None:
    x = ss.var("x", ss.Tensor((n, s, 64), "float32"))
    y = ss.var("y", ss.Tensor((n, 64), "float32"))
    c = ss.var("c", ss.Tensor((), "bool"))
    j = ss.If(c, ss.ops.shape_of(x), ss.ops.shape_of(y))
    res = ss.infer(ss.Function([c, x, y], j))
    assert res.value_of(j) is None


# ----------------------------------------------------------------------------------------------
# value-making operators: a table (expression builder -> expected printed type)

X = ss.var("x", ss.Tensor((n, s, 64), "float32"))
SH = ss.ops.shape_of(X)


def _t(e: Any) -> str:
    res = ss.infer(ss.Function([X], e))
    assert res.ok, res.report()
    return str(res.type_of(e))


MAKE = [
    ("shape_of", lambda: ss.ops.shape_of(X), "Tensor[(3,), int64] = (n, s, 64)"),
    ("shape_of int32", lambda: ss.ops.shape_of(X, dtype="int32"), "Tensor[(3,), int32] = (n, s, 64)"),
    ("const 1-d", lambda: i64([2, -1, 0]), "Tensor[(3,), int64] = (2, -1, 0)"),
    ("const 0-d", lambda: ss.const(np.array(7, "int32")), "Tensor[(), int32] = 7"),
    ("const float", lambda: ss.const(np.array([1.0, 2.0], "float32")), "Tensor[(2,), float32]"),
    ("const int8", lambda: ss.const(np.array([1, 2], "int8")), "Tensor[(2,), int8]"),
    ("const 2-d", lambda: i64([[1, 2]]), "Tensor[(1, 2), int64]"),
    ("int_tensor", lambda: ss.ops.int_tensor((n, -1, 64)), "Tensor[(3,), int64] = (n, -1, 64)"),
    ("int_tensor 0-d", lambda: ss.ops.int_tensor(n - 1), "Tensor[(), int64] = n - 1"),
    ("take 0-d", lambda: ss.ops.take(SH, i64(1)), "Tensor[(), int64] = s"),
    ("take 1-d", lambda: ss.ops.take(SH, i64([2, 0])), "Tensor[(2,), int64] = (64, n)"),
    ("take axis 0", lambda: ss.ops.take(SH, i64([1]), axis=0), "Tensor[(1,), int64] = (s,)"),
    ("take -1 raise", lambda: ss.ops.take(SH, i64(-1), mode="raise"), "Tensor[(), int64] = 64"),
    ("take -1 clip", lambda: ss.ops.take(SH, i64(-1)), "Tensor[(), int64] = n"),
    ("take 5 wrap", lambda: ss.ops.take(SH, i64(5), mode="wrap"), "Tensor[(), int64] = 64"),
    ("slice", lambda: ss.ops.strided_slice(SH, [1], [3]), "Tensor[(2,), int64] = (s, 64)"),
    ("slice :-1", lambda: ss.ops.strided_slice(SH, [0], [-1]), "Tensor[(2,), int64] = (n, s)"),
    (
        "slice ::-1",
        lambda: ss.ops.strided_slice(SH, [None], [None], [-1]),
        "Tensor[(3,), int64] = (64, s, n)",
    ),
    (
        "slice size",
        lambda: ss.ops.strided_slice(SH, [1], [1], slice_mode="size"),
        "Tensor[(1,), int64] = (s,)",
    ),
    (
        "concatenate",
        lambda: ss.ops.concatenate([ss.ops.strided_slice(SH, [0], [2]), i64([4, 16])]),
        "Tensor[(4,), int64] = (n, s, 4, 16)",
    ),
    (
        "concatenate with unknown",
        lambda: ss.ops.concatenate([SH, ss.ops.cast(ss.ops.reshape(ss.ops.argmax(X), (1,)), "int64")]),
        "Tensor[(4,), int64] = (n, s, 64, ?)",
    ),
    ("expand_dims", lambda: ss.ops.expand_dims(ss.ops.take(SH, i64(0)), 0), "Tensor[(1,), int64] = (n,)"),
    ("squeeze", lambda: ss.ops.squeeze(ss.ops.take(SH, i64([2]))), "Tensor[(), int64] = 64"),
    ("reshape to 0-d", lambda: ss.ops.reshape(ss.ops.take(SH, i64([2])), ()), "Tensor[(), int64] = 64"),
    ("reshape 1-d", lambda: ss.ops.reshape(SH, (-1,)), "Tensor[(3,), int64] = (n, s, 64)"),
    ("reshape 2-d", lambda: ss.ops.reshape(SH, (3, 1)), "Tensor[(3, 1), int64]"),
    ("cast", lambda: ss.ops.cast(SH, "int32"), "Tensor[(3,), int32] = (n, s, 64)"),
    ("cast float", lambda: ss.ops.cast(SH, "float32"), "Tensor[(3,), float32]"),
    ("add scalar", lambda: ss.ops.add(SH, i64(1)), "Tensor[(3,), int64] = (n + 1, s + 1, 65)"),
    ("subtract", lambda: ss.ops.subtract(SH, SH), "Tensor[(3,), int64] = (0, 0, 0)"),
    ("multiply", lambda: ss.ops.multiply(SH, i64([2, 1, 1])), "Tensor[(3,), int64] = (2*n, s, 64)"),
    ("floor_divide", lambda: ss.ops.floor_divide(SH, i64(8)), "Tensor[(3,), int64] = (n//8, s//8, 8)"),
    ("floor_divide neg", lambda: ss.ops.floor_divide(i64(7), i64(-2)), "Tensor[(), int64] = -4"),
    (
        "floor_divide sym",
        lambda: ss.ops.floor_divide(ss.ops.int_tensor(n * s), ss.ops.int_tensor(s)),
        "Tensor[(), int64] = n",
    ),
    (
        "floor_divide unknown sign",
        lambda: ss.ops.floor_divide(i64(7), ss.ops.int_tensor(n - 2)),
        "Tensor[(), int64]",
    ),
    ("mod", lambda: ss.ops.mod(SH, i64(64)), "Tensor[(3,), int64] = (n % 64, s % 64, 0)"),
    ("mod neg", lambda: ss.ops.mod(i64(7), i64(-2)), "Tensor[(), int64] = -1"),
    ("maximum", lambda: ss.ops.maximum(SH, i64(1)), "Tensor[(3,), int64] = (n, s, 64)"),
    ("minimum", lambda: ss.ops.minimum(SH, i64(2)), "Tensor[(3,), int64] = (min(2, n), min(2, s), 2)"),
    ("negative", lambda: ss.ops.negative(SH), "Tensor[(3,), int64] = (-n, -s, -64)"),
    ("negative float", lambda: ss.ops.negative(ss.ops.cast(SH, "float32")), "Tensor[(3,), float32]"),
    ("divide", lambda: ss.ops.divide(SH, SH), "Tensor[(3,), int64] = (1, 1, 1)"),
    ("divide truncates", lambda: ss.ops.divide(i64(-7), i64(2)), "Tensor[(), int64] = -3"),
    (
        "divide unknown sign",
        lambda: ss.ops.divide(ss.ops.int_tensor(n - 2), i64(2)),
        "Tensor[(), int64] = max(0, n - 2)//2",  # n >= 1: -1 // 2 truncates to 0
    ),
    ("arange", lambda: ss.ops.arange(3), "Tensor[(3,), int64] = (0, 1, 2)"),
]


@pytest.mark.parametrize("name, build, want", MAKE, ids=[m[0] for m in MAKE])
def test_value_making_operators(name: str, build: Any, want: str) -> None:
    assert _t(build()) == want


# ----------------------------------------------------------------------------------------------
# value-using operators: literal and valued arguments agree


def _vt(v: tuple[Any, ...]) -> Any:
    return ss.ops.int_tensor(v)


USE = [
    # reshape: 0 copies, -1 infers, symbols are sizes
    ("reshape -1", lambda x: ss.ops.reshape(x, _vt((0, -1))), "Tensor[(n, 64*s), float32]"),
    ("reshape shape_of", lambda x: ss.ops.reshape(x, ss.ops.shape_of(x)), "Tensor[(n, s, 64), float32]"),
    ("reshape sym", lambda x: ss.ops.reshape(x, _vt((n * s, 8, 8))), "Tensor[(n*s, 8, 8), float32]"),
    (
        "reshape 0-d target",
        lambda x: ss.ops.reshape(ss.ops.sum(x), ss.ops.int_tensor(1)),
        "Tensor[(1,), float32]",
    ),
    (
        "broadcast_to",
        lambda x: ss.ops.broadcast_to(ss.ops.sum(x, axis=2, keepdims=True), ss.ops.shape_of(x)),
        "Tensor[(n, s, 64), float32]",
    ),
    ("zeros", lambda x: ss.ops.zeros(ss.ops.shape_of(x), "int32"), "Tensor[(n, s, 64), int32]"),
    ("ones", lambda x: ss.ops.ones(_vt((n, 3))), "Tensor[(n, 3), float32]"),
    ("full", lambda x: ss.ops.full(1.5, ss.ops.shape_of(x)), "Tensor[(n, s, 64), float32]"),
    ("full literal", lambda x: ss.ops.full(2, (n, 2)), "Tensor[(n, 2), int64]"),
    (
        "constant_of_shape",
        lambda x: ss.ops.constant_of_shape(ss.ops.shape_of(x)),
        "Tensor[(n, s, 64), float32]",
    ),
    (
        "strided_slice end from shape",
        lambda x: ss.ops.strided_slice(x, [0], ss.ops.take(ss.ops.shape_of(x), i64([1]))),
        "Tensor[(min(n, s), s, 64), float32]",
    ),
    (
        "strided_slice all valued",
        lambda x: ss.ops.strided_slice(x, _vt((1,)), _vt((-1,)), _vt((2,)), axes=[2]),
        "Tensor[(n, s, 31), float32]",
    ),
    (
        "strided_slice open end",
        lambda x: ss.ops.strided_slice(x, _vt((1,)), [None]),
        "Tensor[(n - 1, s, 64), float32]",
    ),
    ("tile", lambda x: ss.ops.tile(x, (2, 1)), "Tensor[(n, 2*s, 64), float32]"),
    ("tile valued", lambda x: ss.ops.tile(x, _vt((2, 1, 1, n))), "Tensor[(2, n, s, 64*n), float32]"),
    (
        "expand",
        lambda x: ss.ops.expand(ss.ops.sum(x, axis=2, keepdims=True), (-1, -1, 64)),
        "Tensor[(n, s, 64), float32]",
    ),
    ("expand new axis", lambda x: ss.ops.expand(x, (2, n, s, 1)), "Tensor[(2, n, s, 64), float32]"),
    (
        "expand valued",
        lambda x: ss.ops.expand(ss.ops.sum(x, axis=2, keepdims=True), ss.ops.shape_of(x)),
        "Tensor[(n, s, 64), float32]",
    ),
    ("arange t", lambda x: ss.ops.arange(ss.ops.take(ss.ops.shape_of(x), i64(1))), "Tensor[(s,), int64]"),
    ("arange start", lambda x: ss.ops.arange(2, s), "Tensor[(max(0, s - 2),), int64]"),
    ("arange step", lambda x: ss.ops.arange(0, n, 4), "Tensor[((n + 3)//4,), int64]"),
    ("arange negative step", lambda x: ss.ops.arange(n, 0, -1), "Tensor[(n,), int64]"),
    ("arange symbolic step", lambda x: ss.ops.arange(0, n * s, s), "Tensor[(n,), int64]"),
]


@pytest.mark.parametrize("name, build, want", USE, ids=[u[0] for u in USE])
def test_value_using_operators(name: str, build: Any, want: str) -> None:
    x = ss.var("x", ss.Tensor((n, s, 64), "float32"))
    e = build(x)
    res = ss.infer(ss.Function([x], e))
    assert res.status == "ok", res.report()
    assert str(res.type_of(e)) == want


# the same operators with values that are not known: fresh dimensions of the known rank
UNKNOWN = [
    (
        "reshape one unknown entry",
        lambda x, p: ss.ops.reshape(x, ss.ops.concatenate([ss.ops.take(p, i64([0])), _vt((64,))])),
        r"Tensor\[\(n\*s, 64\), float32\]",
    ),
    ("reshape unknown", lambda x, p: ss.ops.reshape(x, p), r"Tensor\[\(\?, \?\), float32\]"),
    (
        "broadcast_to unknown",
        lambda x, p: ss.ops.broadcast_to(ss.ops.sum(x, axis=(0, 1)), ss.ops.concatenate([p, _vt((64,))])),
        r"Tensor\[\(\?, \?, 64\), float32\]",
    ),
    ("zeros unknown", lambda x, p: ss.ops.zeros(p), r"Tensor\[\(\?, \?\), float32\]"),
    (
        "strided_slice unknown end",
        lambda x, p: ss.ops.strided_slice(x, [0], ss.ops.take(p, i64([0]))),
        r"Tensor\[\(\?, s, 64\), float32\]",
    ),
    (
        "tile unknown",
        lambda x, p: ss.ops.tile(x, ss.ops.concatenate([_vt((1,)), p])),
        r"Tensor\[\(n, \?, \?\), float32\]",
    ),
    (
        "expand unknown",
        lambda x, p: ss.ops.expand(x, ss.ops.concatenate([_vt((n,)), p])),
        r"Tensor\[\(n, \?, 64\), float32\]",
    ),
    (
        "expand unknown on 1",
        lambda x, p: ss.ops.expand(
            ss.ops.sum(x, axis=2, keepdims=True), ss.ops.concatenate([_vt((n, s)), ss.ops.take(p, i64([0]))])
        ),
        r"Tensor\[\(n, s, \?\), float32\]",
    ),
    ("arange unknown", lambda x, p: ss.ops.arange(ss.ops.take(p, i64(0))), r"Tensor\[\(\?,\), int64\]"),
]


@pytest.mark.parametrize("name, build, pattern", UNKNOWN, ids=[u[0] for u in UNKNOWN])
def test_unknown_values_give_fresh_dimensions(name: str, build: Any, pattern: str) -> None:
    import re

    x = ss.var("x", ss.Tensor((n, s, 64), "float32"))
    p = ss.var("p", ss.Tensor((2,), "int64"))  # a size from the data: its value is unknown
    e = build(x, p)
    res = ss.infer(ss.Function([x, p], e))
    assert res.ok, res.report()
    got = str(res.type_of(e))
    assert re.fullmatch(pattern, re.sub(r"\?d\d+", "?", got)), got


def test_size_tensor_of_unknown_length_gives_unknown_rank() -> None:
    x = ss.var("x", ss.Tensor((n, s, 64), "float32"))
    p = ss.var("p", ss.Tensor(None, "int64"))
    e = ss.ops.reshape(x, p)
    res = ss.infer(ss.Function([x, p], e))
    assert str(res.type_of(e)) == "Tensor[?, float32]"


ERRORS = [
    # the element count differs: reshape-size, as for a literal target
    (
        "reshape count",
        lambda x: ss.ops.reshape(
            x, ss.ops.concatenate([ss.ops.take(ss.ops.shape_of(x), i64([0])), _vt((32,))])
        ),
        "reshape-size",
    ),
    ("reshape count const", lambda x: ss.ops.reshape(x, _vt((n, s, 65))), "reshape-size"),
    ("reshape special < -1", lambda x: ss.ops.reshape(x, _vt((n, -2))), "bad-attribute"),
    ("reshape two -1", lambda x: ss.ops.reshape(x, _vt((-1, -1))), "bad-attribute"),
    (
        "reshape float target",
        lambda x: ss.ops.reshape(x, ss.const(np.array([1.0], "float32"))),
        "dtype-mismatch",
    ),
    ("reshape 2-d target", lambda x: ss.ops.reshape(x, i64([[1, 2]])), "rank-mismatch"),
    ("broadcast_to negative", lambda x: ss.ops.broadcast_to(x, _vt((n, s, -64))), "bad-attribute"),
    ("broadcast_to mismatch", lambda x: ss.ops.broadcast_to(x, _vt((n, s, 32))), "not-broadcastable"),
    ("zeros negative", lambda x: ss.ops.zeros(i64([3, -1])), "bad-attribute"),
    ("tile negative", lambda x: ss.ops.tile(x, _vt((1, 1, -2))), "bad-attribute"),
    ("expand mismatch", lambda x: ss.ops.expand(x, _vt((n, s, 32))), "not-broadcastable"),
    ("expand -1 without dim", lambda x: ss.ops.expand(x, _vt((-1, n, s, 64))), "bad-attribute"),
    ("arange step 0", lambda x: ss.ops.arange(0, n, ss.ops.int_tensor(0)), "bad-attribute"),
    (
        "strided_slice stride 0",
        lambda x: ss.ops.strided_slice(x, _vt((0,)), _vt((1,)), _vt((0,))),
        "bad-attribute",
    ),
]


@pytest.mark.parametrize("name, build, code", ERRORS, ids=[e[0] for e in ERRORS])
def test_value_using_errors(name: str, build: Any, code: str) -> None:
    x = ss.var("x", ss.Tensor((n, s, 64), "float32"))
    e = build(x)
    res = ss.infer(ss.Function([x], e))
    assert res.status == "error", res.report()
    assert [d.code for d in res.errors] == [code]


def test_symbolic_entry_that_may_be_zero_needs_a_guard() -> None:
    x = ss.var("x", ss.Tensor((n, 4), "float32"))
    e = ss.ops.reshape(x, ss.ops.int_tensor((n - 1, -1)))
    res = ss.infer(ss.Function([x], e))
    assert res.status == "guarded"
    assert any("n - 1 >= 1" in str(g) or "n >= 2" in str(g) for g in res.guards), [str(g) for g in res.guards]


def test_symbolic_size_that_may_be_negative_needs_a_guard() -> None:
    e = ss.ops.zeros(ss.ops.int_tensor((n - 3, 2)))
    res = ss.infer(ss.Function([], e))
    assert res.status == "guarded"
    assert [g.origin.label for g in res.guards] == ["zeros"]


def test_bad_calls_raise_at_build_time() -> None:
    x = ss.var("x", ss.Tensor((n, 3), "float32"))
    p = ss.var("p", ss.Tensor((2,), "int64"))
    with pytest.raises(ss.SymshapeError) as e:
        ss.Op.get("reshape")(x, p, newshape=(1, 2))
    assert e.value.code == "bad-attribute"
    with pytest.raises(ss.SymshapeError) as e:
        ss.Op.get("reshape")(x, p, p)
    assert e.value.code == "invalid-argument"
    with pytest.raises(ss.SymshapeError) as e:
        ss.ops.int_tensor((1, "a"))
    assert e.value.code == "bad-attribute"
    with pytest.raises(ss.SymshapeError) as e:
        ss.ops.strided_slice(x, [None], p, ss.ops.int_tensor((1,)))
    assert e.value.code == "bad-attribute"


# ----------------------------------------------------------------------------------------------
# an explained error through a chain of shape values


def test_error_through_a_shape_of_chain_is_explained() -> None:
    x = ss.var("x", ss.Tensor((n, s, 64), "float32"))
    y = ss.var("y", ss.Tensor((n, s, 32), "float32"))
    sh = ss.ops.shape_of(x)
    head = ss.ops.strided_slice(sh, [0], [2])
    target = ss.ops.concatenate([head, i64([16, 4])])
    r = ss.ops.reshape(y, target)
    res = ss.infer(ss.Function([x, y], r))
    assert res.status == "error"
    (e,) = res.errors
    assert e.code == "reshape-size"
    text = res.report()
    assert "`x` is annotated `Tensor[(n, s, 64), float32]`" in text
    assert "`y` is annotated `Tensor[(n, s, 32), float32]`" in text
    assert "shape_of" in text


# ----------------------------------------------------------------------------------------------
# data-dependent sizes


def test_data_dependent_sizes_are_fresh_symbols_born_at_their_call() -> None:
    x = ss.var("x", ss.Tensor((n, 3), "float32"))
    nz = ss.ops.nonzero(x)
    u = ss.ops.unique(x)
    mk = ss.ops.boolean_mask(x, ss.ops.greater(x, ss.const(np.array(0.0, "float32"))))
    res = infer(nz, u, mk, params=[x])
    assert res.status == "ok"
    assert [str(res.type_of(e)) for e in (nz, u, mk)] == [
        "Tensor[(2, u0), int64]",
        "Tensor[(u1,), float32]",
        "Tensor[(u2,), float32]",
    ]
    text = res.report()
    assert "data-dependent sizes:" in text
    here = Path(__file__).name
    for line in text.splitlines()[2:]:
        assert here in line
    assert [u.op for u in res.unbacked] == ["nonzero", "unique", "boolean_mask"]
    assert "u0: the number of non-zero elements (nonzero at" in text


def test_data_dependent_size_mask_rows_and_given_symbol() -> None:
    x = ss.var("x", ss.Tensor((n, 3), "float32"))
    mask = ss.var("mask", ss.Tensor((n,), "bool"))
    k = ss.dim("k", min=0)
    e = ss.ops.boolean_mask(x, mask, size=k)
    res = ss.infer(ss.Function([x, mask], e))
    assert str(res.type_of(e)) == "Tensor[(k, 3), float32]"
    bad_mask = ss.var("bad_mask", ss.Tensor((5,), "bool"))
    res = ss.infer(ss.Function([x, bad_mask], ss.ops.boolean_mask(x, bad_mask)))
    assert res.status == "guarded"  # n == 5


def test_data_dependent_size_used_as_a_size_is_a_guard() -> None:
    x = ss.var("x", ss.Tensor((n,), "float32"))
    y = ss.var("y", ss.Tensor((4,), "float32"))
    e = ss.ops.add(ss.ops.unique(x), y)
    res = ss.infer(ss.Function([x, y], e))
    assert res.status == "guarded"
    assert [str(g) for g in res.guards] == ["u0 == 1 or u0 == 4"]


def test_unbacked_names_skip_user_symbols() -> None:
    u0 = ss.dim("u0")
    x = ss.var("x", ss.Tensor((u0,), "float32"))
    e = ss.ops.nonzero(x)
    res = ss.infer(ss.Function([x], e))
    assert res.status == "ok"
    assert str(res.type_of(e)) == "Tensor[(1, u1), int64]"


# ----------------------------------------------------------------------------------------------
# determinism across hash seeds

PROGRAM = textwrap.dedent(
    """
    import numpy as np
    import symshape as ss
    n, s = ss.dims("n s")
    x = ss.var("x", ss.Tensor((n, s, 64), "float32"))
    y = ss.var("y", ss.Tensor((n, s, 32), "float32"))
    sh = ss.ops.shape_of(x)
    i0, i1 = ss.const(np.array(0, "int64")), ss.const(np.array(1, "int64"))
    ns = ss.ops.multiply(ss.ops.take(sh, i0), ss.ops.take(sh, i1))
    t = ss.ops.concatenate([ss.ops.expand_dims(ns, 0), ss.const(np.array([64], "int64"))])
    a = ss.ops.reshape(x, t)
    b = ss.ops.reshape(y, t)
    c = ss.ops.nonzero(a)
    res = ss.infer(ss.Function([x, y], ss.Tuple([a, b, c])))
    print(res.report(program=True))
    """
)


def test_reports_are_deterministic_across_hash_seeds() -> None:
    outs = []
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        r = subprocess.run(
            [sys.executable, "-c", PROGRAM], capture_output=True, text=True, env=env, timeout=120
        )
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout)
    assert outs[0] == outs[1] == outs[2]
    assert "reshape-size" in outs[0] and "u0" in outs[0]


def test_readme_shape_values_example() -> None:
    """The README's shape-values example runs and prints what its comments say."""
    text = (Path(__file__).parent.parent / "README.md").read_text()
    block = text.split("## Shape values", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    env: dict[str, Any] = {"ss": ss, "np": np, "n": n, "s": s}
    exec(compile(block, "README.md", "exec"), env)
    res = env["res"]
    assert str(res.type_of(env["r"])) == "Tensor[(n*s, 64), float32]"
    assert res.value_of(env["sh"]) == (n, s, 64)
    assert res.value_of(env["ns"]) == n * s
    assert "Tensor[(n*s, 64), float32], (n, s, 64), n*s" in block
