"""A ``PreparedCall`` prepared inside a span scope (the ONNX importer's, per node) is the one
prepared outside every scope: the same operator and attributes, and its calls the calls of the
wrapper, with the span of the scope they are built in; its probe variables (made once, shared by
every preparation) are never an argument of a built call.
"""

from __future__ import annotations

from typing import Any

import pytest

import symshape as ss
from symshape.ir.op import OPS, PreparedCall

X = ss.var("x", ss.Tensor((2, 3, 8, 8), "float32"))
W = ss.var("w", ss.Tensor((4, 3, 3, 3), "float32"))
C = ss.var("c", ss.Tensor((3,), "float32"))
NODE = ss.Span("<m.onnx>", 4, 1)
OTHER = ss.Span("<m.onnx>", 9, 1)

CASES: list[tuple[str, tuple[ss.Expr, ...], dict[str, Any]]] = [
    ("expand_dims", (C,), {"axis": 1, "num_newaxis": 1}),
    ("nn.relu", (X,), {}),
    ("nn.conv2d", (X, W), {"strides": (1, 1), "padding": (1, 1, 1, 1), "kernel_size": (3, 3)}),
    ("nn.batch_norm", (X, C, C, C, C), {"axis": 1}),
    ("concatenate", (ss.Tuple([C, C]),), {"axis": 0}),
]


def _fields(c: ss.Call) -> tuple[Any, ...]:
    return (c.callee, tuple(c.args), c.attrs, c.span)


@pytest.mark.parametrize(("name", "args", "attrs"), CASES)
def test_a_call_prepared_in_a_scope_is_the_one_prepared_outside(
    name: str, args: tuple[ss.Expr, ...], attrs: dict[str, Any]
) -> None:
    op = OPS[name]
    outside = PreparedCall(op, len(args), **attrs)
    with ss.span_scope(NODE):
        inside = PreparedCall(op, len(args), **attrs)
    assert (inside.op, inside.nargs, inside.attrs) == (outside.op, outside.nargs, outside.attrs)
    with ss.span_scope(OTHER):
        a, b, plain = inside.build(*args), outside.build(*args), op.wrapper_call(*args, **attrs)
    assert _fields(a) == _fields(b) == _fields(plain)
    assert a.span == OTHER and not any(isinstance(x, ss.Var) and x.name.startswith("probe") for x in a.args)


def test_probes_are_shared_and_never_built_into_a_call() -> None:
    with ss.span_scope(NODE):
        five = PreparedCall(OPS["nn.batch_norm"], 5, axis=1)
        one = PreparedCall(OPS["nn.relu"], 1)
    with ss.span_scope(OTHER):
        bn, r = five.build(X, C, C, C, C), one.build(X)
    assert tuple(bn.args) == (X, C, C, C, C) and tuple(r.args) == (X,)
    fn = ss.Function([X, C], ss.Tuple([ss.TupleGetItem(bn, 0), r]))
    assert str(ss.infer(fn).type_of(fn.body)) == (
        "(Tensor[(2, 3, 8, 8), float32], Tensor[(2, 3, 8, 8), float32])"
    )


def test_a_wrapper_that_is_not_one_call_is_refused_in_a_scope_too() -> None:
    def two_calls(x: ss.Expr) -> ss.Call:
        return ss.ops.relu(ss.ops.relu(x))

    with ss.span_scope(NODE), pytest.raises(ValueError):
        PreparedCall.of(two_calls, 1)
    with pytest.raises(ValueError):
        PreparedCall.of(two_calls, 1)
