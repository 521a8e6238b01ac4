"""``check_type_constraints``' fast loop (rules by operator, one and two inputs without a list, the
verdict tables) gives the diagnostics of the general computation, node by node.

The reference here is the plain reading of the module's rules: for every converted node of a
checked domain, its schema's rule at the model's opset, its inputs' element types (declared, else
taken from the producing node's verdict, else the inferred type), its free outputs' inferred types,
and :func:`violations` computed afresh (empty verdict tables). Both run on the rows of
``test_onnx_type_constraints`` (dtype violations and fine nodes, as onnxruntime judges them), on
models with violations of three inputs, of a free output, of a node reported already and of a
multi-output node, and on the light models; the messages, spans and their order must be equal.
"""

from __future__ import annotations

import os
from typing import Any

import onnx
import pytest
from onnx import TensorProto
from onnx_helpers import In, make_model, node
from test_onnx_type_constraints import ROWS
from test_onnx_type_constraints import _model as row_model

import symshape as ss
from symshape.onnx import type_constraints as tc
from symshape.onnx.importer import Importer
from symshape.onnx.loading import load_model
from symshape.onnx.spans import OnnxSpan

LIGHT = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


def _reference(imp: Importer, core: Any, reported: list[ss.Diagnostic]) -> list[tuple[str, str, Any]]:
    spans = {d.span.what for d in reported if isinstance(d.span, OnnxSpan)}
    dtypes = tc._Dtypes(core)
    memo = dtypes.memo

    def dtype(v: Any) -> int:
        return 0 if v is None else int(v.elem_type or memo.get(v.name) or dtypes.of(v))

    out: list[tuple[str, str, Any]] = []
    for info, span, inputs in imp.converted:
        if info.domain not in tc.CHECKED_DOMAINS:
            continue
        rule = tc.schema_rule(info.domain, info.op_type, imp.opsets.get(info.domain, 1))
        if rule is None:
            continue
        ins = tuple(dtype(v) for v in inputs)
        outs: tuple[int, ...] = ()
        if rule.free:
            free = [
                imp.named.get(o) if o and rule.free_output(i) else None for i, o in enumerate(info.outputs)
            ]
            outs = tuple(0 if v is None else dtypes.of(v) for v in free)  # (its own type, inferred)
        broken, derived = tc.violations(rule, ins, outs)
        for i, o in enumerate(info.outputs):
            if derived:
                memo[o] = derived[min(i, len(derived) - 1)]
        if info.what in spans:
            continue
        for side, i, message in broken:
            name = (info.inputs if side == "input" else info.outputs)[i]
            out.append(("dtype-mismatch", f"{info.what}: {side} {i} '{name}' {message}", span))
    return out


def _both(model: onnx.ModelProto, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, Any]]:
    m, label, base_dir = load_model(model)
    imp = Importer(m, label, None, 2000, base_dir)
    fn = imp.run()
    core = ss.infer(fn)
    reported = [i.diagnostic for i in imp.issues] + list(core.errors)
    fast = [
        (i.diagnostic.code, i.diagnostic.message, i.diagnostic.span)
        for i in tc.check_type_constraints(imp.converted, imp.named, imp.opsets, core, reported)
    ]
    with monkeypatch.context() as mp:
        mp.setattr(tc, "_VERDICTS", {})  # (computed afresh)
        general = _reference(imp, core, reported)
    assert fast == general
    return fast


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_rows_agree(row: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    found = _both(row_model(row), monkeypatch)
    assert bool(found) == bool(row.says)  # (the rows' own verdicts: a violation exactly where said)


def _x(name: str, dtype: str) -> In:
    return In(name, dtype, ("n", 3))


MODELS = {
    # three inputs breaking Sum's float-only T at opset 13 (one error per type variable)
    "sum-three": (
        [node("Sum", ["a", "b", "c"], ["y"], name="s")],
        [_x("a", "int64"), _x("b", "int64"), _x("c", "int64")],
        13,
        1,
    ),
    # three inputs of two types: symshape's sum reports it, so the schema check skips the node
    "sum-mixed-reported": (
        [node("Sum", ["a", "b", "c"], ["y"], name="s")],
        [_x("a", "int64"), _x("b", "float32"), _x("c", "int32")],
        13,
        0,
    ),
    # a free output (Cast's T2) refused at opset 9, and the Relu of it (Relu-6: no bfloat16)
    "cast-free-output": (
        [node("Cast", ["a"], ["h"], name="c", to=TensorProto.BFLOAT16), node("Relu", ["h"], ["y"], name="r")],
        [_x("a", "float32")],
        9,
        2,
    ),
    # Split's outputs take T from the input; Min at opset 11 refuses their int64 (both inputs one T)
    "split-then-min": (
        [
            node("Split", ["a"], ["p", "q"], name="sp", axis=1, split=[1, 2]),
            node("Neg", ["p"], ["u"], name="ng"),
            node("Min", ["u", "q"], ["y"], name="mn"),
        ],
        [_x("a", "int64")],
        11,
        1,
    ),
    # symshape's add reports Add(float32, int64) itself: the node is not reported twice
    "add-reported": (
        [node("Add", ["a", "b"], ["s"], name="ad"), node("Relu", ["s"], ["y"], name="r")],
        [_x("a", "float32"), _x("b", "int64")],
        17,
        0,
    ),
    # a Where with a float condition (reported by symshape's where), then int32 through a Mul
    # (fine) into Relu-13 (refused)
    "where-chain": (
        [
            node("Where", ["c", "a", "b"], ["w"], name="wh"),
            node("Mul", ["w", "a"], ["m"], name="mu"),
            node("Relu", ["m"], ["y"], name="re"),
        ],
        [_x("c", "float32"), _x("a", "int32"), _x("b", "int32")],
        13,
        1,
    ),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_models_with_violations_agree(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    nodes, inputs, opset, count = MODELS[name]
    found = _both(make_model(nodes, inputs, ["y"], opset), monkeypatch)
    assert len(found) == count, found


@pytest.mark.parametrize("name", sorted(f for f in os.listdir(LIGHT) if f.endswith(".onnx")))
def test_light_models_agree(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _both(onnx.load(os.path.join(LIGHT, name)), monkeypatch) == []
