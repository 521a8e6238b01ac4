"""``Concat`` converts through a prepared call (``concatenate`` of the tuple of its inputs, its
attributes checked once per axis) and ``common.tuple_of`` (that tuple without the constructor's
checks): the same program, report and types as ``ss.ops.concatenate`` of the input list, for a
table of models (axes of both signs, one input, mismatched shapes, an axis out of range, the
opset-1 default axis, a missing axis) and the light models that have ``Concat`` nodes (as shipped
and with a symbolic batch); and ``tuple_of`` is ``ss.Tuple`` inside and outside a span scope."""

from __future__ import annotations

import re
from typing import Any

import onnx
import pytest
from benchmarks.workloads import fresh_caches
from onnx import helper
from onnx_helpers import In, light_model, make_model

import symshape as ss
import symshape.onnx as sso
from symshape.onnx.importer import Importer
from symshape.onnx.ops import common
from symshape.onnx.ops import shape as shape_mod


def _concat_model(axes: list[int | None], n: int = 2, opset: int = 17, same: bool = True) -> onnx.ModelProto:
    ins = [In(f"x{i}", "float32", ("b", 3 if same or i == 0 else 4, "h")) for i in range(n)]
    nodes = []
    for k, axis in enumerate(axes):
        attrs: dict[str, Any] = {} if axis is None else {"axis": axis}
        nodes.append(helper.make_node("Concat", [i.name for i in ins], [f"y{k}"], **attrs))
    return make_model(nodes, ins, [f"y{k}" for k in range(len(axes))], opset=opset)


CASES: dict[str, onnx.ModelProto] = {
    "axes": _concat_model([0, 1, -1, 1, -3]),
    "one-input": _concat_model([1, 1], n=1),
    "three": _concat_model([2, 2], n=3),
    "mismatch": _concat_model([0, 1], same=False),
    "out-of-range": _concat_model([3, -4]),
    "opset1-default": _concat_model([None, 1], opset=1),
    "missing-axis": _concat_model([None]),
}


def _conversion(m: onnx.ModelProto) -> list[str]:
    fresh_caches()
    fn = Importer(m, "m").run()
    res = sso.infer(m, label="m")
    out = [str(fn), res.status, res.report(), *(f"{k}: {t}" for k, t in res.types().items())]
    # (the unknown types' variables are numbered by a counter of the process: not compared)
    return [re.sub(r"\?t\d+", "?t", x) for x in out]


def _both(m: onnx.ModelProto) -> tuple[list[str], list[str]]:
    fast = _conversion(m)
    with pytest.MonkeyPatch.context() as mp:  # the plain call of the input list
        mp.setattr(shape_mod, "prepared", lambda key, wrapper, nargs, **kw: None)
        plain = _conversion(m)
    return fast, plain


@pytest.mark.parametrize("case", list(CASES))
def test_concat_through_its_prepared_call_is_the_plain_call(case: str) -> None:
    fast, plain = _both(CASES[case])
    assert fast == plain


@pytest.mark.parametrize("batch", [False, True], ids=["shipped", "batch-N"])
@pytest.mark.parametrize("name", ["squeezenet", "inception_v1", "densenet121"])
def test_light_models_with_concat_are_the_same_with_the_plain_call(name: str, batch: bool) -> None:
    fast, plain = _both(light_model(name, batch))
    assert fast == plain


def test_tuple_of_is_the_tuple_constructor() -> None:
    xs = [ss.var("a", ss.Tensor((2,), "float32")), ss.ops.relu(ss.var("b", ss.Tensor((2,), "float32")))]
    at = ss.Span("m.onnx", 3, context="node 'c' (Concat)")
    with ss.span_scope(at):
        fast, plain = common.tuple_of(xs), ss.Tuple(xs)
    assert type(fast) is ss.Tuple and fast.fields == plain.fields and fast.span == plain.span == at
    outside = common.tuple_of(xs)  # (no scope: the constructor, the caller's span)
    assert type(outside) is ss.Tuple and outside.fields == tuple(xs) and outside.span is not None
    assert outside.span.file == __file__
