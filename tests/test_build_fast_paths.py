"""The fast paths of building and inferring a program give what the general paths give.

* ``Op.__call__`` remembers the last call's attributes when every value is immutable (ints,
  strings, floats, dimensions, tuples of those) and reuses them for a call with the very same
  values; a list value is never remembered (it may change between calls), and changing an
  operator's checker or declaration forgets it.
* ``user_span`` reads the call-site cache directly: the span equals ``frame_span``'s.
* ``graph.order`` of no pending relation is empty.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest

import symshape as ss
from symshape.ir.op import OPS
from symshape.solver.graph import DependencyGraph
from symshape.source import frame_span, user_span


@pytest.fixture
def op() -> Iterator[Any]:
    o = ss.register_op("test.memo", "identity", 1, check_attrs=lambda a, nargs: None)
    yield o
    del OPS["test.memo"]


def _attrs(call: Any) -> dict[str, Any]:
    return dict(call.attrs.items())


def test_same_tuple_reuses_attrs(op: Any) -> None:
    x = ss.var("x")
    shape = (ss.dims("n"), 3)
    first, second = op(x, shape=shape, flag=True), op(x, shape=shape, flag=True)
    assert second.attrs is first.attrs
    assert _attrs(second) == {"shape": shape, "flag": True}


@pytest.mark.parametrize(
    "a, b",
    [((1,), (True,)), (1.0, 1), (0.0, -0.0), ((1, 2), (1, 2, 3)), ("a", "b")],
)
def test_different_values_differ(op: Any, a: Any, b: Any) -> None:
    x = ss.var("x")
    ca, cb = op(x, v=a), op(x, v=b)
    assert type(_attrs(ca)["v"]) is type(a) and _attrs(ca)["v"] == a
    assert type(_attrs(cb)["v"]) is type(b) and _attrs(cb)["v"] == b
    assert str(_attrs(cb)["v"]) == str(b)


def test_key_order_kept(op: Any) -> None:
    x = ss.var("x")
    p, q = 1, "s"
    first, second = op(x, a=p, b=q), op(x, b=q, a=p)
    assert list(_attrs(first)) == list(ss.Attrs(dict(a=p, b=q)).keys())
    assert list(_attrs(second)) == list(ss.Attrs(dict(b=q, a=p)).keys())


def test_list_value_is_read_each_time(op: Any) -> None:
    x = ss.var("x")
    shape = [2, 3]
    first = op(x, shape=shape)
    shape.append(4)
    second = op(x, shape=shape)
    assert tuple(_attrs(first)["shape"]) == (2, 3)
    assert tuple(_attrs(second)["shape"]) == (2, 3, 4)


def test_changing_the_checker_forgets(op: Any) -> None:
    x = ss.var("x")
    shape = (2, 3)
    op(x, shape=shape)
    calls: list[int] = []
    op.check_attrs = lambda a, nargs: calls.append(nargs)
    op(x, shape=shape)
    assert calls == [1]


def test_user_span_matches_frame_span() -> None:
    def here() -> tuple[ss.Span | None, ss.Span]:
        return user_span(), frame_span(sys._getframe(1))

    for _ in range(3):  # the first computes the span, the later ones read the cache
        got, want = here()
        assert got == want and got is not None and got.file == __file__


def test_order_of_nothing_pending() -> None:
    g = DependencyGraph()
    g.add_unification(-1, (ss.Tensor((3,)),))
    assert g.order([]) == {}


def test_op_call_method_is_calling_the_op() -> None:
    """``op.call`` (what the wrappers use) builds what ``op(...)`` builds, span included."""
    import symshape as ss
    from symshape.ir.op import OPS

    x = ss.var("x", ss.Tensor((2, 3), "float32"))
    op = OPS["nn.softmax"]
    a, b = op(x, axis=-1), op.call(x, axis=-1)  # (one line: the same span)
    assert (a.callee, a.args, a.attrs) == (b.callee, b.args, b.attrs)
    assert a.span is not None and b.span is not None
    assert a.span.file == b.span.file == __file__ and b.span.line == a.span.line
    c = ss.ops.softmax(x, axis=-1)
    assert c.span is not None and c.span.file == __file__


def test_dataflow_checks_every_binding() -> None:
    import pytest

    import symshape as ss

    x = ss.var("x", ss.Tensor((2,), "float32"))
    v = ss.var("v")
    good = ss.Dataflow([(v, ss.ops.relu(x))], v)
    assert len(good.bindings) == 1
    for bad in ([(v, 1)], [(x,)], [[v, x]], [(1, x)], [(v, x, x)]):
        with pytest.raises(ss.SymshapeError) as e:
            ss.Dataflow(bad, v)  # type: ignore[arg-type]
        assert e.value.code == "invalid-argument"
