"""Building programs is cheap (spans and checked attributes are cached) without changing what is
built: spans point at the caller's line and column, attributes are normalised and typed exactly as
written, and a checker that rejects attributes raises at every call."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping

import pytest
from tests.source_places import place

import symshape as ss
from symshape.encoding.types import Attrs
from symshape.errors import BAD_ATTRIBUTE, INVALID_ARGUMENT, UNKNOWN_RELATION
from symshape.ir.op import OPS
from symshape.source import Span

F32 = "float32"


@pytest.fixture
def x() -> ss.Var:
    n = ss.dim("n")
    return ss.var("x", ss.Tensor((n, 6), F32))


@pytest.fixture
def user_ops() -> Iterator[list[str]]:
    names: list[str] = []
    yield names
    for name in names:
        OPS.pop(name, None)


# -- spans -------------------------------------------------------------------------------------


def test_ops_calls_point_at_the_caller_line_and_column(x: ss.Var) -> None:
    a, b = ss.ops.add(x, x), ss.ops.reshape(x, (-1,))  # SPAN-1
    line, col_a = place(__file__, "# SPAN-1", "ss.ops.add")
    _, col_b = place(__file__, "# SPAN-1", "ss.ops.reshape")
    assert a.span == Span(__file__, line, col_a)
    assert b.span == Span(__file__, line, col_b)


def test_direct_op_call_var_and_call_spans(x: ss.Var) -> None:
    add = ss.Op.get("add")
    c, v, d = add(x, x), ss.var("v"), ss.Call(add, [x, x])  # SPAN-2
    line, col_c = place(__file__, "# SPAN-2", "add(x, x)")
    assert c.span == Span(__file__, line, col_c)
    assert v.span == Span(__file__, line, place(__file__, "# SPAN-2", "ss.var")[1])
    assert d.span == Span(__file__, line, place(__file__, "# SPAN-2", "ss.Call")[1])
    f = ss.Function([x], c)  # SPAN-3
    assert f.span == Span(__file__, *place(__file__, "# SPAN-3", "ss.Function"))


def test_spans_at_one_site_are_equal_and_sites_differ(x: ss.Var) -> None:
    spans = [ss.ops.softmax(x, axis=-1).span for _ in range(3)]  # SPAN-4
    assert spans[0] == spans[1] == spans[2] == Span(__file__, *place(__file__, "# SPAN-4", "ss.ops.softmax"))
    other = ss.ops.softmax(x, axis=-1)  # SPAN-5
    assert other.span == Span(__file__, *place(__file__, "# SPAN-5", "ss.ops.softmax"))
    assert other.span != spans[0]


def test_tuple_argument_spans(x: ss.Var) -> None:
    c = ss.ops.concatenate([x, x], axis=0)  # SPAN-6
    where = Span(__file__, *place(__file__, "# SPAN-6", "ss.ops.concatenate"))
    assert c.span == where
    tup = c.args[0]
    assert isinstance(tup, ss.Tuple) and tup.fields == (x, x) and tup.span == where


def test_error_span_is_the_call_site() -> None:
    n = ss.dim("n")
    x = ss.var("x", ss.Tensor((n, 3, 4), F32))
    y = ss.var("y", ss.Tensor((n, 5), F32))
    body = ss.ops.add(ss.ops.flatten(x), y)  # SPAN-7
    res = ss.infer(ss.Function([x, y], body))
    assert res.status == "error"
    d = res.errors[0]
    line = place(__file__, "# SPAN-7", "ss")[0]
    assert d.span is not None and (d.span.file, d.span.line) == (__file__, line)


# -- attributes --------------------------------------------------------------------------------


def test_attributes_are_normalised(x: ss.Var) -> None:
    c = ss.ops.reshape(x, [3, -1])
    assert c.attrs == {"newshape": (3, -1), "allowzero": False}
    assert isinstance(c.attrs, Attrs) and list(c.attrs) == ["allowzero", "newshape"]
    assert str(c.attrs) == "allowzero=False, newshape=(3, -1)"
    c2 = ss.ops.reshape(x, (3, -1))
    assert c2.attrs == c.attrs and hash(c2.attrs) == hash(c.attrs)
    e = ss.ops.add(x, x)
    assert e.attrs == {} and len(e.attrs) == 0 and isinstance(e.attrs, Attrs)
    assert ss.Call(ss.Op.get("add"), [x, x], Attrs({"a": [1, [2]]})).attrs == {"a": (1, (2,))}


def test_attribute_values_keep_their_exact_type(x: ss.Var, user_ops: list[str]) -> None:
    user_ops.append("test.fast_any")
    op = ss.register_op("test.fast_any", "identity", 1)
    for v in (1, True, 1.0, 0.0, -0.0, "1", None, (1, True), (1.0, 1), (True,)):
        got = op(x, flag=v).attrs["flag"]
        assert got == v and type(got) is type(v) and repr(got) == repr(v)
    assert math.copysign(1.0, op(x, flag=-0.0).attrs["flag"]) == -1.0  # type: ignore[arg-type]
    six = ss.parse_dim("6")
    a = ss.ops.reshape(x, (six, -1)).attrs["newshape"]
    b = ss.ops.reshape(x, (6, -1)).attrs["newshape"]
    assert isinstance(a, tuple) and isinstance(a[0], ss.Dim)
    assert isinstance(b, tuple) and type(b[0]) is int
    nan = op(x, flag=float("nan")).attrs["flag"]
    assert isinstance(nan, float) and math.isnan(nan)
    nested = op(x, cfg={"b": [1, 2], "a": 1}).attrs["cfg"]
    assert isinstance(nested, Attrs) and nested == {"a": 1, "b": (1, 2)}


def test_rejected_attributes_raise_at_every_call(x: ss.Var) -> None:
    for _ in range(3):
        assert ss.ops.softmax(x, axis=1).attrs == {"axis": 1}
        with pytest.raises(ss.SymshapeError) as e:
            ss.ops.softmax(x, axis=True)
        assert e.value.code == BAD_ATTRIBUTE.code
        with pytest.raises(ss.SymshapeError) as e:
            ss.ops.softmax(x, axis=1.0)  # type: ignore[arg-type]
        assert e.value.code == BAD_ATTRIBUTE.code
        with pytest.raises(ss.SymshapeError) as e:
            ss.ops.reshape(x, (-1, -1))
        assert e.value.code == BAD_ATTRIBUTE.code
        with pytest.raises(ss.SymshapeError) as e:
            ss.ops.cast(x, "float33")
        assert e.value.code == BAD_ATTRIBUTE.code


def test_user_checker_raises_every_time_and_fixes_attributes(x: ss.Var, user_ops: list[str]) -> None:
    calls: list[object] = []

    def check(attrs: Attrs, nargs: int) -> Mapping[str, object] | None:
        calls.append(attrs.get("size"))
        size = attrs.get("size", 2)
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            raise ss.SymshapeError(BAD_ATTRIBUTE, f"size must be a positive int, got {size!r}")
        return {"size": size}

    user_ops.append("test.fast_checked")
    op = ss.register_op("test.fast_checked", "identity", 1, check_attrs=check)
    for _ in range(3):
        assert op(x).attrs == {"size": 2}
        assert op(x, size=3).attrs == {"size": 3}
        before = len(calls)
        with pytest.raises(ss.SymshapeError) as e:
            op(x, size=0)
        assert e.value.code == BAD_ATTRIBUTE.code and len(calls) == before + 1
        with pytest.raises(ss.SymshapeError):
            op(x, size=True)
        assert len(calls) == before + 2

    def reject(attrs: Attrs, nargs: int) -> None:
        raise ss.SymshapeError(BAD_ATTRIBUTE, "no attributes accepted")

    op.check_attrs = reject  # a new checker applies at once
    assert op.check_attrs is reject
    with pytest.raises(ss.SymshapeError):
        op(x, size=3)
    with pytest.raises(ss.SymshapeError):
        op(x)


def test_bad_input_codes(x: ss.Var) -> None:
    cases: list[Callable[[], object]] = [
        lambda: ss.Op.get("add")(x),
        lambda: ss.ops.add(x, 3),  # type: ignore[arg-type]
        lambda: ss.Op.get("add")(x, x, x),
        lambda: ss.Call(ss.Op.get("add"), [x, 3]),  # type: ignore[list-item]
        lambda: ss.Call(3, [x]),
        lambda: ss.var(3),  # type: ignore[arg-type]
        lambda: ss.var("v", 3),  # type: ignore[arg-type]
        lambda: ss.Var(3),  # type: ignore[arg-type]
    ]
    for case in cases:
        for _ in range(2):
            with pytest.raises(ss.SymshapeError) as e:
                case()
            assert e.value.code == INVALID_ARGUMENT.code
    with pytest.raises(ss.SymshapeError) as e:
        ss.Op.get("add")(x, x, bad={1, 2})
    assert e.value.code == BAD_ATTRIBUTE.code
    with pytest.raises(ss.SymshapeError) as e:  # attributes are checked before arguments
        ss.ops.softmax(3, axis=True)  # type: ignore[arg-type]
    assert e.value.code == BAD_ATTRIBUTE.code
    with pytest.raises(ss.SymshapeError) as e:
        ss.Op.get("no.such.op")
    assert e.value.code == UNKNOWN_RELATION.code


def test_reregistered_operator_is_used_by_ops(x: ss.Var) -> None:
    old = OPS["nn.relu"]
    try:
        new = ss.register_op("nn.relu", "identity", 1, doc="replacement")
        assert ss.ops.relu(x).callee is new
    finally:
        OPS["nn.relu"] = old
    assert ss.ops.relu(x).callee is old
