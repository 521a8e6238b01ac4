"""The fast paths of building a program give the spans and attributes the general paths give.

* :func:`~symshape.source.user_span` keeps one cache entry per code object (outside the package
  or not, its call sites' spans, the columns read so far) and reads the span-scope context
  variable only once a scope was ever entered; the spans equal the source's own places (line and
  column of the call on a marked line of this file), whichever path computed them: the caches
  warm or emptied, the context variable read or skipped, the sites met in either order.
* The wrappers of :mod:`symshape.ops` call ``op.wrapper_call``, whose span search starts above the
  wrapper: the span is the user's line also when a wrapper calls another wrapper or a helper.
* ``Op.__call__`` keys the checked attributes of one or two values by unpacking them: the
  attributes equal those of an operator that has remembered nothing (hypothesis, exact types).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.source_places import place

import symshape as ss
from symshape import source
from symshape.encoding.types import Attrs
from symshape.ir.op import OPS
from symshape.ops.spec import get_op
from symshape.source import Span, user_span

F32 = "float32"


def _build() -> list[tuple[Any, str, str]]:
    """Expressions built on marked lines: (expression, marker, the text its span points at)."""
    n = ss.dim("n")
    a = ss.var("a", ss.Tensor((n, 4), F32))  # S1
    g = ss.var("g", ss.Tensor((4,), F32))  # S2
    b = ss.ops.add(a, a)  # S3
    c = ss.ops.reshape(ss.ops.relu(b), (-1,))  # S4
    d = ss.Op.get("nn.softmax")(a, axis=-1)  # S5
    e = ss.ops.layer_norm(d, g, g, axis=-1, epsilon=1e-5)  # S6
    f = a + b  # S7
    k = ss.ops.arange(n)  # S8
    s = ss.ops.strided_slice(a, [0, 1], [2, 3], [1, 1])  # S9
    m = ss.ops.multiply(  # S10
        a, b
    )
    v = ss.var("v")  # S11
    df = ss.Dataflow([(v, e)], v)  # S12
    fn = ss.Function([a, g], df)  # S13
    return [
        (a, "# S1", "ss.var"),
        (g, "# S2", "ss.var"),
        (b, "# S3", "ss.ops.add"),
        (c, "# S4", "ss.ops.reshape"),
        (c.args[0], "# S4", "ss.ops.relu"),
        (d, "# S5", "ss.Op.get"),
        (e, "# S6", "ss.ops.layer_norm"),
        (f, "# S7", "a + b"),
        (k, "# S8", "ss.ops.arange"),
        (k.args[1], "# S8", "ss.ops.arange"),  # built by a helper the wrapper calls
        (s, "# S9", "ss.ops.strided_slice"),
        (m, "# S10", "ss.ops.multiply"),
        (v, "# S11", "ss.var"),
        (df, "# S12", "ss.Dataflow"),
        (fn, "# S13", "ss.Function"),
    ]


@pytest.fixture
def cold_caches() -> Iterator[None]:
    source._SITE_SPANS.clear()
    yield
    source._SITE_SPANS.clear()


def _check(built: list[tuple[Any, str, str]]) -> None:
    for expr, marker, text in built:
        assert expr.span == Span(__file__, *place(__file__, marker, text)), (marker, text, expr.span)
        assert str(expr.span) == f"{__file__}:{expr.span.line}:{expr.span.column}"


@pytest.mark.parametrize("scoped", [False, True])
def test_spans_are_the_source_places_on_every_path(
    cold_caches: None, monkeypatch: pytest.MonkeyPatch, scoped: bool
) -> None:
    # scoped: the context variable is read (as once a scope was entered anywhere)
    monkeypatch.setattr(source, "_scoped", scoped)
    first = _build()  # the caches are filled here
    _check(first)
    second = _build()  # ... and read here
    _check(second)
    for (x, _, _), (y, _, _) in zip(first, second):
        assert x.span is y.span  # a site's span is made once
    source._SITE_SPANS.clear()
    _check(_build())


def test_a_scope_entered_before_still_wins(cold_caches: None) -> None:
    at = Span("model.onnx", 7, context="node 'n' (Relu)")
    with ss.span_scope(at):
        inside = ss.ops.relu(ss.var("x"))
    assert source._scoped and inside.span is at and inside.args[0].span is at
    after = ss.var("y")  # S14
    assert after.span == Span(__file__, *place(__file__, "# S14", "ss.var"))


def _two_sites(order: int) -> tuple[ss.Var, ss.Var]:
    for i in (order, 1 - order):
        if i == 0:
            p = ss.var("p")  # S15
        else:
            q = ss.var("q")  # S16
    return p, q


@pytest.mark.parametrize("order", [0, 1])
def test_columns_read_in_either_order(cold_caches: None, order: int) -> None:
    """The columns of one code object are read once, up to the furthest site asked for; a site
    before it reads the list, one after it reads on."""
    for _ in range(2):
        p, q = _two_sites(order)
        assert p.span == Span(__file__, *place(__file__, "# S15", "ss.var"))
        assert q.span == Span(__file__, *place(__file__, "# S16", "ss.var"))


def test_columns_without_the_cache(cold_caches: None) -> None:
    """A site's column equals the position ``co_positions`` gives for its instruction."""
    import itertools
    import sys

    frame = sys._getframe()
    lasti = frame.f_lasti
    positions = getattr(frame.f_code, "co_positions", None)
    if positions is None:  # Python 3.10: no columns
        assert source._code_sites(frame.f_code).column(lasti) == 1
        return
    pos = next(itertools.islice(positions(), lasti // 2, None))
    site = source._code_sites(frame.f_code)
    assert site.column(lasti) == pos[2] + 1
    assert site.column(0) == next(positions())[2] + 1  # read before: from the list
    assert site.column(-1) == 1
    assert site.column(10**9) == 1  # past the last instruction


def test_too_few_frames_give_no_span() -> None:
    assert user_span(10**6) is None


def test_wrappers_see_a_reregistered_operator_and_unknown_names_raise() -> None:
    x = ss.var("x", ss.Tensor((2,), F32))
    old = OPS["nn.relu"]
    try:
        new = ss.register_op("nn.relu", "identity", 1)
        assert ss.ops.relu(x).callee is new
    finally:
        OPS["nn.relu"] = old
    lookups: list[Callable[[], object]] = [
        lambda: OPS["no.such.op"],
        lambda: get_op("no.such.op"),
        lambda: ss.Op.get("no.such"),
    ]
    for lookup in lookups:
        with pytest.raises(ss.SymshapeError) as e:
            lookup()
        assert e.value.code == "unknown-relation"
    assert OPS.get("no.such.op") is None and "no.such.op" not in OPS


_VALUES = st.one_of(
    st.integers(-3, 3),
    st.booleans(),
    st.sampled_from([0.0, -0.0, 1.0, 1e-5]),
    st.sampled_from(["a", "float32", ""]),
    st.none(),
    st.tuples(st.integers(-2, 2), st.booleans()),
    st.lists(st.integers(0, 3), max_size=3),
)


def _fresh_op(name: str) -> Any:
    return ss.register_op(name, "identity", 1, check_attrs=lambda a, nargs: None)


def _typed(attrs: Attrs) -> list[tuple[str, Any, str]]:
    def deep(v: Any) -> str:
        if isinstance(v, (tuple, list)):
            return f"{type(v).__name__}({', '.join(map(deep, v))})"
        return f"{type(v).__name__}:{v!r}"

    return [(k, v, deep(v)) for k, v in attrs.items()]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcd"), _VALUES), min_size=1, max_size=4))
def test_attribute_keys_give_the_attributes_of_an_operator_that_remembers_nothing(
    items: list[tuple[str, Any]],
) -> None:
    attrs = dict(items)
    x = ss.var("x")
    warm = OPS.get("test.speed.warm") or _fresh_op("test.speed.warm")
    try:
        cold = _fresh_op("test.speed.cold")
        build: Callable[[Any], Any] = lambda op: op(x, **attrs)  # noqa: E731
        want = build(cold).attrs
        first, second = build(warm), build(warm)  # the second reads what the first remembered
        assert _typed(first.attrs) == _typed(want) == _typed(second.attrs)
        assert list(first.attrs) == list(Attrs(attrs))
    finally:
        del OPS["test.speed.cold"]


def test_one_two_and_three_attributes_share_the_memo_layout() -> None:
    op = _fresh_op("test.speed.layout")
    try:
        x = ss.var("x")
        one, two, three = (1,), (1, "s"), (1, "s", 2.0)
        for vals in (one, two, three):
            kw = dict(zip("abc", vals))
            first, second = op(x, **kw), op(x, **kw)
            assert second.attrs is first.attrs and dict(first.attrs.items()) == kw
        # the same values under other names, or the same names in another order, differ
        assert dict(op(x, b=1).attrs.items()) == {"b": 1}
        swapped = op(x, b="s", a=1)
        assert list(swapped.attrs) == list(Attrs({"b": "s", "a": 1}))
    finally:
        del OPS["test.speed.layout"]


@pytest.mark.parametrize(
    "build, code",
    [
        (lambda x: ss.ops.add(x, 3), "invalid-argument"),  # type: ignore[arg-type]  # a non-expression argument
        (lambda x: ss.ops.softmax(3, axis=True), "bad-attribute"),  # type: ignore[arg-type]  # attributes before arguments
        (lambda x: ss.Op.get("nn.softmax")(3, x, axis=-1), "invalid-argument"),  # the count first
        (lambda x: ss.ops.relu([x, 3]), "invalid-argument"),  # type: ignore[arg-type]  # a list with a non-expression
        (lambda x: ss.Op.get("add")(x, x, x), "invalid-argument"),
    ],
)
def test_argument_errors_keep_their_order(build: Callable[[Any], Any], code: str) -> None:
    x = ss.var("x", ss.Tensor((2,), F32))
    for _ in range(2):  # the second call meets what the first remembered
        with pytest.raises(ss.SymshapeError) as e:
            build(x)
        assert e.value.code == code


def test_a_list_of_expressions_is_a_tuple_argument() -> None:
    x = ss.var("x", ss.Tensor((2,), F32))
    c = ss.ops.concatenate([x, x], axis=0)  # S17
    (t,) = c.args
    assert isinstance(t, ss.Tuple) and t.fields == (x, x)
    assert c.span == t.span == Span(__file__, *place(__file__, "# S17", "ss.ops.concatenate"))


def _site_a() -> ss.Var:
    return ss.var("a")  # S18


def _site_b() -> ss.Var:
    return ss.var("b")  # S19


def test_two_codes_with_a_site_at_the_same_instruction(cold_caches: None) -> None:
    """The site met last at an instruction is remembered with its code: another code's site at
    the same instruction (these two functions compile alike) is not taken for it."""
    assert _site_a.__code__.co_code == _site_b.__code__.co_code
    want_a = Span(__file__, *place(__file__, "# S18", "ss.var"))
    want_b = Span(__file__, *place(__file__, "# S19", "ss.var"))
    for _ in range(3):
        assert _site_a().span == want_a
        assert _site_b().span == want_b
