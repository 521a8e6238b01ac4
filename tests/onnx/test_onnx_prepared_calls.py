"""Prepared calls (``PreparedCall``: an operator's attributes checked once) give what the plain
call gives, and the ONNX converters that use them (``Unsqueeze``, ``Conv``) convert a node as
they do without them.

* ``PreparedCall(op, n, **attrs).build(*args)`` and ``op.wrapper_call(*args, **attrs)`` make the
  same call (callee, arguments, attributes, span), for a table of operators; bad attributes raise
  the same error, and arguments the prepared path does not take (a list, another number) go the
  call's own way.
* An ``Unsqueeze`` of the axes of an earlier one is built from the plan the first made: the same
  program (text and spans) and types as with no plan, for every table row; the rows whose axes
  need the rank or are wrong are never planned.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import onnx
import pytest
from benchmarks.workloads import fresh_caches
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import helper
from onnx_helpers import In, make_model

import symshape as ss
import symshape.onnx as sso
from symshape.ir.op import OPS, PreparedCall
from symshape.onnx import _infer_full
from symshape.onnx.importer import Importer
from symshape.onnx.ops import common
from symshape.onnx.ops import elementwise as onnx_elementwise
from symshape.onnx.ops import nn as onnx_nn
from symshape.onnx.ops import norm as onnx_norm

X = ss.var("x", ss.Tensor((2, 3, 8, 8), "float32"))
W = ss.var("w", ss.Tensor((4, 3, 3, 3), "float32"))
C = ss.var("c", ss.Tensor((3,), "float32"))
D = ss.var("d", ss.Tensor((8,), "float32"))
SPAN = ss.Span("model.onnx", 7, context="node 'n' (Op)")

CASES: list[tuple[str, tuple[ss.Expr, ...], dict[str, Any]]] = [
    ("expand_dims", (C,), {"axis": 1, "num_newaxis": 1}),
    ("expand_dims", (C,), {"axis": -1, "num_newaxis": 2}),
    ("add", (X, D), {}),
    ("nn.relu", (X,), {}),
    ("nn.conv2d", (X, W), {"strides": (1, 1), "padding": (1, 1, 1, 1), "kernel_size": (3, 3)}),
    ("nn.batch_norm", (X, C, C, C, C), {"axis": 1}),
]


@pytest.mark.parametrize(("name", "args", "attrs"), CASES)
def test_a_prepared_call_is_the_call(name: str, args: tuple[ss.Expr, ...], attrs: dict[str, Any]) -> None:
    op = OPS[name]
    p = PreparedCall(op, len(args), **attrs)
    with ss.span_scope(SPAN):
        fast, plain = p.build(*args), op.wrapper_call(*args, **attrs)
        again = p.build(*args)
    for c in (fast, again):
        assert c.callee is plain.callee and tuple(c.args) == tuple(plain.args)
        assert c.attrs == plain.attrs and repr(c) == repr(plain) and c.span == plain.span == SPAN
    typed = [(ss.infer(ss.Function([X, W, C, D], c)), c) for c in (fast, plain)]
    (r1, c1), (r2, c2) = typed
    assert r1.status == r2.status == "ok" and str(r1.type_of(c1)) == str(r2.type_of(c2))


WRAPPED: list[tuple[Callable[..., ss.Call], tuple[ss.Expr, ...], dict[str, Any]]] = [
    (ss.ops.conv2d, (X, W), {"strides": (2, 2), "padding": (1, 1), "kernel_size": (3, 3), "out_dtype": ""}),
    (ss.ops.conv2d, (X, W), {"groups": 1}),
    (ss.ops.batch_norm, (X, C, C, C, C), {"axis": 1}),
    (ss.ops.expand_dims, (C,), {"axis": 0}),
    (ss.ops.multiply, (X, D), {}),
    (ss.ops.relu, (X,), {}),
    (ss.ops.max_pool2d, (X,), {"pool_size": (2, 2), "strides": (2, 2)}),
]


@pytest.mark.parametrize(("wrapper", "args", "kwargs"), WRAPPED)
def test_a_prepared_wrapper_call_is_the_wrappers_call(
    wrapper: Callable[..., ss.Call], args: tuple[ss.Expr, ...], kwargs: dict[str, Any]
) -> None:
    p = PreparedCall.of(wrapper, len(args), **kwargs)
    with ss.span_scope(SPAN):
        fast, plain = p.build(*args), wrapper(*args, **kwargs)
    assert (
        isinstance(plain, ss.Call) and fast.callee is plain.callee and tuple(fast.args) == tuple(plain.args)
    )
    assert fast.attrs == plain.attrs and repr(fast) == repr(plain) and fast.span == plain.span == SPAN


def test_a_wrapper_that_does_not_pass_its_arguments_on_is_not_prepared() -> None:
    with pytest.raises(ValueError):
        PreparedCall.of(lambda a, b: ss.ops.add(b, a), 2)
    with pytest.raises(ValueError):
        PreparedCall.of(lambda a: ss.ops.add(a, a), 1)


@pytest.mark.parametrize(
    ("name", "nargs", "attrs"),
    [("expand_dims", 1, {"axis": "one"}), ("expand_dims", 1, {"axes": 1}), ("nn.relu", 1, {"alpha": 2})],
)
def test_bad_attributes_raise_as_the_call_does(name: str, nargs: int, attrs: dict[str, Any]) -> None:
    op = OPS[name]
    with pytest.raises(ss.SymshapeError) as plain:
        op.wrapper_call(*[C] * nargs, **attrs)
    with pytest.raises(ss.SymshapeError) as fast:
        PreparedCall(op, nargs, **attrs)
    assert (fast.value.code, str(fast.value)) == (plain.value.code, str(plain.value))


def test_other_arguments_take_the_calls_path() -> None:
    concat = PreparedCall(OPS["concatenate"], 1, axis=0)
    with ss.span_scope(SPAN):
        listed = concat.build([C, C])  # (a list of expressions: the call makes it a tuple)
        assert repr(listed) == repr(OPS["concatenate"].wrapper_call([C, C], axis=0))
        with pytest.raises(ss.SymshapeError) as fast:
            PreparedCall(OPS["add"], 2).build(X)
        with pytest.raises(ss.SymshapeError) as plain:
            OPS["add"].wrapper_call(X)
    assert str(fast.value) == str(plain.value)


AXES: list[tuple[int, ...]] = [
    (0,),
    (1, 2),
    (2, 1),
    (-1,),
    (-1, -3),
    (0, -1),
    (),
    (3, 0, 1),
    (1, 1),
    (5,),
    (-9,),
]


SHAPES = [(2, 3), (4, 5)]


def _unsqueezes(axes: tuple[int, ...]) -> onnx.ModelProto:
    nodes = [
        helper.make_node("Unsqueeze", [i], [o], name=n)
        for i, o, n in [("x", "a", "first"), ("y", "b", "second")]
    ]
    for n in nodes:  # (make_node cannot type an empty list)
        n.attribute.append(helper.make_attribute("axes", list(axes), attr_type=onnx.AttributeProto.INTS))
    return make_model(nodes, [In(n, "float32", s) for n, s in zip("xy", SHAPES)], ["a", "b"], opset=11)


def _converted(m: onnx.ModelProto) -> list[str]:
    fn = Importer(m, "m").run()
    res = sso.infer(m, label="m")
    exprs = [e for e in (fn.body.fields if isinstance(fn.body, ss.Tuple) else [fn.body])]
    spans = [str(e.span) for e in exprs]
    out = [str(fn), *spans, res.status, res.report(), str(res.type_of("a")), str(res.type_of("b"))]
    return [re.sub(r"\?t\d+", "?t", x) for x in out]  # (fresh type holes are numbered per process)


@pytest.mark.parametrize("axes", AXES, ids=str)
def test_an_unsqueeze_from_a_plan_is_the_unsqueeze_without(axes: tuple[int, ...]) -> None:
    common._UNSQUEEZE_PLANS.clear()
    fast = _converted(_unsqueezes(axes))
    planned = axes in common._UNSQUEEZE_PLANS
    one_sign = min(axes, default=0) >= 0 or max(axes) < 0
    assert planned == (one_sign and len(set(axes)) == len(axes))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(common, "_UNSQUEEZE_PLANS", _NeverPlanned(__name__))
        plain = _converted(_unsqueezes(axes))
    assert fast == plain
    # the oracle: numpy's expand_dims (axes are the output's positions, as in ONNX)
    try:
        want = [np.expand_dims(np.zeros(s), axes).shape for s in SHAPES]
    except (ValueError, np.exceptions.AxisError):
        assert fast[-4] == "error"
        return
    assert fast[-4] == "ok" and fast[-2:] == [str(ss.Tensor(w, "float32")) for w in want]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-4, 3), max_size=3))
def test_unsqueeze_plans_against_the_plain_path(axes: list[int]) -> None:
    test_an_unsqueeze_from_a_plan_is_the_unsqueeze_without(tuple(axes))


class _NeverPlanned(common.PlanTable[tuple[int, ...], Any]):
    """A plan table that forgets what it is given (every node takes the plain path)."""

    def __setitem__(self, key: tuple[int, ...], value: Any) -> None:
        pass


def _plan_tables() -> dict[str, common.PlanTable[Any, Any]]:
    """Every plan table of the ONNX converters, by module and name."""
    return {
        f"{mod.__name__}.{name}": obj
        for mod in (common, onnx_nn, onnx_norm, onnx_elementwise)
        for name, obj in vars(mod).items()
        if isinstance(obj, common.PlanTable)
    }


def test_fresh_caches_empties_the_plan_tables() -> None:
    """A benchmark's import starts cold: the plans an earlier import made are gone."""
    conv = helper.make_node("Conv", ["x", "w"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    bn = helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["n"], name="bn")
    nodes = [
        conv,
        bn,
        helper.make_node("Relu", ["n"], ["r"], name="relu"),
        helper.make_node("Unsqueeze", ["r"], ["u"], name="unsq", axes=[0]),
        helper.make_node("Reshape", ["u", "shape"], ["y"], name="reshape"),
    ]
    inits: dict[str, np.ndarray[Any, Any]] = {
        "w": np.zeros((4, 3, 3, 3), np.float32),
        **{k: np.zeros(4, np.float32) for k in "sbmv"},
        "shape": np.array([1, 2, -1], np.int64),
    }
    m = make_model(nodes, [In("x", "float32", (2, 3, 8, 8))], ["y"], opset=11, inits=inits)
    # (the full path: the ground walk, which answers this model, makes no plans)
    assert _infer_full(m, "m", None, None, False, 2000).status == "ok"
    tables = _plan_tables()
    assert set(tables) >= {f"symshape.onnx.ops.{n}" for n in ("common._UNSQUEEZE_PLANS", "nn._PLANS")}
    assert all(tables.values()), {k: len(t) for k, t in tables.items()}  # (the import made plans)
    names = fresh_caches()
    assert {k for k, t in tables.items() if t} == set()
    assert set(tables) <= set(names)
