"""ONNX type constraints (symshape.onnx.type_constraints), each case against onnxruntime's verdict.

Every row is a small model; onnxruntime either loads and runs it or refuses it. symshape must
report a ``dtype-mismatch`` error at the offending node exactly when onnxruntime refuses (the
message naming the input or output, its type and the allowed types), and nothing when it runs.
The rows cover a type variable's allowed set changing with the opset (``Min``/``Max`` on integers
from 12, ``Relu`` from 14, ``Cast`` to ``bfloat16`` from 13), float-only operators (``Sum``,
``Mean``), literal types (``Reshape``'s ``shape``, ``Where``'s condition), one type variable across
inputs (``Add``, a variadic ``Concat``), element types known only after inference (a ``Cast``
before the node), and nodes that are fine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import helper
from onnx_helpers import In, make_model, node, run_ort

import symshape.onnx as sso
from symshape import SymshapeError
from symshape.onnx.spans import OnnxSpan
from symshape.onnx.type_constraints import CHECKED_DOMAINS, schema_rule, violations

ort = pytest.importorskip("onnxruntime")


@dataclass(frozen=True)
class Row:
    """A model: nodes, graph inputs (concrete shapes), outputs, opset; ``says``: text the error
    must contain when there is one (the node name is always required)."""

    id: str
    nodes: list[onnx.NodeProto]
    inputs: list[In]
    outputs: list[str]
    opset: int
    says: tuple[str, ...] = ()
    inits: dict[str, Any] = field(default_factory=dict)


def _via_bfloat16() -> list[onnx.NodeProto]:
    """float32 to bfloat16 and back (onnxruntime's outputs cannot be bfloat16: numpy has none)."""
    bf16, f32 = onnx.TensorProto.BFLOAT16, onnx.TensorProto.FLOAT
    return [node("Cast", ["a"], ["h"], name="c", to=bf16), node("Cast", ["h"], ["y"], name="back", to=f32)]


def _x(name: str, dtype: str, shape: tuple[int, ...] = (3,)) -> In:
    return In(name, dtype, shape)


ROWS = [
    Row("min-int64-opset11", [node("Min", ["a", "b"], ["y"], name="m")], [_x("a", "int64"), _x("b", "int64")],
        ["y"], 11, ("input 0 'a'", "int64", "Min-8", "float16, float32, float64")),
    Row("min-int64-opset12", [node("Min", ["a", "b"], ["y"], name="m")], [_x("a", "int64"), _x("b", "int64")],
        ["y"], 12),
    Row("max-int32-opset8", [node("Max", ["a"], ["y"], name="m")], [_x("a", "int32")], ["y"], 8,
        ("input 0 'a'", "int32", "Max-8")),
    Row("sum-int64", [node("Sum", ["a", "b"], ["y"], name="s")], [_x("a", "int64"), _x("b", "int64")],
        ["y"], 13, ("input 0 'a'", "Sum-13")),
    Row("mean-int32", [node("Mean", ["a"], ["y"], name="s")], [_x("a", "int32")], ["y"], 17,
        ("input 0 'a'", "int32")),
    Row("sum-float", [node("Sum", ["a", "b"], ["y"], name="s")], [_x("a", "float32"), _x("b", "float32")],
        ["y"], 13),
    Row("relu-int32-opset13", [node("Relu", ["a"], ["y"], name="r")], [_x("a", "int32")], ["y"], 13,
        ("input 0 'a'", "Relu-13")),
    Row("relu-int32-opset14", [node("Relu", ["a"], ["y"], name="r")], [_x("a", "int32")], ["y"], 14),
    Row("add-float-int64", [node("Add", ["a", "b"], ["y"], name="add")],
        [_x("a", "float32"), _x("b", "int64")], ["y"], 17),  # (symshape's add reports it: its own message)
    Row("concat-float-int64", [node("Concat", ["a", "b"], ["y"], name="cat", axis=0)],
        [_x("a", "float32"), _x("b", "int64")], ["y"], 13),  # (as Add)
    Row("concat-int64", [node("Concat", ["a", "b"], ["y"], name="cat", axis=0)],
        [_x("a", "int64"), _x("b", "int64")], ["y"], 13),
    Row("where-float-condition", [node("Where", ["c", "a", "b"], ["y"], name="w")],
        [_x("c", "float32"), _x("a", "float32"), _x("b", "float32")], ["y"], 16),  # (as Add)
    Row("where-bool-condition", [node("Where", ["c", "a", "b"], ["y"], name="w")],
        [_x("c", "bool"), _x("a", "float32"), _x("b", "float32")], ["y"], 16),
    Row("reshape-int32-shape", [node("Reshape", ["a", "s"], ["y"], name="rs")], [_x("a", "float32", (2, 3))],
        ["y"], 14, ("input 1 's'", "int32", "int64"), {"s": np.array([3, 2], np.int32)}),
    Row("gather-int32-indices", [node("Gather", ["a", "i"], ["y"], name="g")],
        [_x("a", "float32", (4, 2)), In("i", "int32", (3,), lambda s, r: r.integers(0, 4, s))], ["y"], 13),
    Row("cast-bfloat16-opset9", _via_bfloat16(), [_x("a", "float32")], ["y"], 9,
        ("node 'c' (Cast): output 0 'h'", "bfloat16", "Cast-9")),
    Row("cast-bfloat16-opset13", _via_bfloat16(), [_x("a", "float32")], ["y"], 13),
    # the T5 opset-11 export: the int64 reaches Min through a Cast and a Neg (known after inference)
    Row("min-after-cast-opset11",
        [node("Cast", ["a"], ["t"], name="c", to=onnx.TensorProto.INT64), node("Neg", ["t"], ["u"], name="n"),
         node("Min", ["u", "b"], ["y"], name="m")],
        [_x("a", "float32"), _x("b", "int64")], ["y"], 11, ("node 'm' (Min)", "input 0 'u'", "int64")),
    Row("min-after-cast-opset13",
        [node("Cast", ["a"], ["t"], name="c", to=onnx.TensorProto.INT64), node("Neg", ["t"], ["u"], name="n"),
         node("Min", ["u", "b"], ["y"], name="m")],
        [_x("a", "float32"), _x("b", "int64")], ["y"], 13),
    Row("matmul-int64-opset9", [node("MatMul", ["a", "b"], ["y"], name="mm")],
        [_x("a", "int64", (2, 3)), _x("b", "int64", (3, 2))], ["y"], 9),
    Row("shape-of-bool", [node("Shape", ["a"], ["y"], name="sh")], [_x("a", "bool")], ["y"], 15),
]  # fmt: skip


def _model(row: Row) -> onnx.ModelProto:
    m = make_model(row.nodes, row.inputs, row.outputs, row.opset, row.inits)
    m.ir_version = min(m.ir_version, 8)  # (what the installed onnxruntime reads at these opsets)
    return m


def _feeds(row: Row) -> dict[str, np.ndarray[Any, Any]]:
    rng = np.random.default_rng(0)
    out: dict[str, np.ndarray[Any, Any]] = {}
    for i in row.inputs:
        shape = tuple(int(d) for d in i.shape or ())
        if i.data is not None:
            out[i.name] = np.asarray(i.data(shape, rng)).astype(i.dtype)
        elif i.dtype == "bool":
            out[i.name] = rng.integers(0, 2, shape).astype(bool)
        else:
            out[i.name] = rng.integers(0, 3, shape).astype(i.dtype)
    return out


def _ort_runs(row: Row) -> bool:
    """onnxruntime's verdict: False when it refuses the model at load; a model it loads must run."""
    try:
        ort.InferenceSession(_model(row).SerializeToString(), providers=["CPUExecutionProvider"])
    except Exception as e:  # onnxruntime's refusal (its exception types vary by version)
        assert "Type" in str(e), str(e)[:300]
        return False
    run_ort(_model(row), _feeds(row))
    return True


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_type_constraints_agree_with_onnxruntime(row: Row) -> None:
    runs = _ort_runs(row)
    res = sso.infer(_model(row))
    mismatches = [d for d in res.errors if d.code == "dtype-mismatch"]
    assert res.valid_at({}) is runs  # (concrete sizes: the verdict at them is onnxruntime's)
    if runs:
        assert res.status != "error", res.report()
        return
    assert mismatches, f"onnxruntime refuses {row.id}; symshape says {res.status}:\n{res.report()}"
    d = mismatches[0]
    assert isinstance(d.span, OnnxSpan)
    assert any(f"node '{n.name}'" in d.span.what for n in row.nodes), (d.message, d.span)
    for text in row.says:
        assert text in d.message, (text, d.message)
    with pytest.raises(SymshapeError):
        sso.infer_shapes(_model(row))


def test_one_error_per_type_variable_and_deterministic() -> None:
    row = ROWS[0]  # Min(int64, int64) -> int64 at opset 11: T refused once, not per input/output
    reports = {sso.infer(_model(row)).report() for _ in range(2)}
    assert len(reports) == 1
    (text,) = reports
    assert text.count("[dtype-mismatch]") == 1, text


def test_unknown_element_types_are_not_checked() -> None:
    # x's element type is not declared: Min at opset 11 cannot be judged, no error
    g = helper.make_graph(
        [helper.make_node("Min", ["a", "b"], ["y"], name="m")],
        "g",
        [helper.make_tensor_value_info("a", onnx.TensorProto.UNDEFINED, [3]),
         helper.make_tensor_value_info("b", onnx.TensorProto.UNDEFINED, [3])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.UNDEFINED, None)],
    )  # fmt: skip
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)])
    res = sso.infer(m)
    assert not [d for d in res.errors if d.code == "dtype-mismatch"], res.report()


@pytest.mark.parametrize(
    ("domain", "op", "opset", "ins", "broken"),
    [
        ("", "Min", 11, (7, 7), 1),
        ("", "Min", 12, (7, 7), 0),
        ("", "Add", 14, (1, 7), 1),
        ("", "Add", 14, (1, 0), 0),  # (unknown: not checked)
        ("", "Loop", 16, (7, 9, 1, 7), 0),  # heterogeneous variadic V: no common type
        ("ai.onnx.ml", "Binarizer", 1, (1,), 0),
        ("ai.onnx.ml", "Binarizer", 1, (3,), 1),  # int8: not of T
    ],
)
def test_rules(domain: str, op: str, opset: int, ins: tuple[int, ...], broken: int) -> None:
    assert domain in CHECKED_DOMAINS
    rule = schema_rule(domain, op, opset)
    assert rule is not None
    assert len(violations(rule, ins).broken) == broken


def test_no_schema_no_rule() -> None:
    assert schema_rule("", "NoSuchOp", 17) is None
    assert schema_rule("", "Min", 11) is schema_rule("", "Min", 11)  # (cached)
