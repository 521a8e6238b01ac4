"""Converters of symshape.onnx.ops.sequence: sequences of known length as tuples, optionals of
tensors, against onnx's reference evaluator at several sizes."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx_helpers import In, make_model, symbols_of

import symshape as ss
import symshape.onnx as sso

F = "float32"
I64 = "int64"


def _const(name: str, value: Any) -> onnx.NodeProto:
    return helper.make_node(
        "Constant", [], [name], value=onnx.numpy_helper.from_array(np.asarray(value), name)
    )


def _shapes(t: ss.Type, env: dict[ss.Dim, int]) -> Any:
    """A tensor type's shape at ``env``, or a tuple type's list of them."""
    if isinstance(t, ss.TupleType):
        return [_shapes(f, env) for f in t.fields]
    assert isinstance(t, ss.TensorType) and t.ndim is not None
    return tuple(int(d.subs(env)) for d in t.dims)


def _actual(v: Any) -> Any:
    return [tuple(np.asarray(a).shape) for a in v] if isinstance(v, list) else tuple(np.asarray(v).shape)


def _check(nodes: list[onnx.NodeProto], ins: list[In], outs: list[str], sizes: list[dict[str, int]]) -> Any:
    """Infer symbolically, then compare every output with the reference evaluator at ``sizes``."""
    from onnx.reference import ReferenceEvaluator

    m = make_model(nodes, ins, outs, opset=21)
    syms = symbols_of(ins)
    res = sso.infer(m, dims=syms)
    assert res.status == "ok", res.report()
    rng = np.random.default_rng(0)
    for size in sizes:
        feeds = {
            i.name: rng.standard_normal(
                tuple(size[d] if isinstance(d, str) else d for d in i.shape or ())
            ).astype(i.dtype)
            for i in ins
        }
        got = ReferenceEvaluator(m).run(None, feeds)
        env = {syms[k]: v for k, v in size.items()}
        for name, v in zip(outs, got):
            assert _shapes(res.type_of(name), env) == _actual(v), name
    return res


def test_construct_insert_erase_at_length_concat() -> None:
    ins = [In("a", F, ("n", 4)), In("b", F, ("n", 4)), In("c", F, (2, 4))]
    nodes = [
        helper.make_node("SequenceConstruct", ["a", "b"], ["s"]),
        _const("one", np.array(1, np.int64)),
        _const("minus1", np.array(-1, np.int64)),
        helper.make_node("SequenceInsert", ["s", "c", "one"], ["s2"]),
        helper.make_node("SequenceInsert", ["s2", "a"], ["s3"]),
        helper.make_node("SequenceErase", ["s3", "minus1"], ["s4"]),
        helper.make_node("SequenceErase", ["s4"], ["s5"]),
        helper.make_node("SequenceLength", ["s4"], ["len"]),
        helper.make_node("SequenceAt", ["s4", "one"], ["at"]),
        helper.make_node("SequenceAt", ["s4", "minus1"], ["last"]),
        helper.make_node("ConcatFromSequence", ["s4"], ["cat"], axis=0),
        helper.make_node("ConcatFromSequence", ["s"], ["stk"], axis=1, new_axis=1),
    ]
    outs = ["s4", "s5", "len", "at", "last", "cat", "stk"]
    res = _check(nodes, ins, outs, [{"n": 3}, {"n": 5}])
    assert str(res.type_of("cat")) == "Tensor[(2*n + 2, 4), float32]"
    assert str(res.type_of("stk")) == "Tensor[(n, 2, 4), float32]"
    len_t = res.type_of("len")
    assert isinstance(len_t, ss.TensorType) and str(len_t.value) == "3"


@pytest.mark.parametrize(
    ("split", "attrs", "want"),
    [
        (np.array([1, 2], np.int64), {"axis": 0}, ["(1, m)", "(2, m)"]),
        (np.array(2, np.int64), {"axis": 0}, ["(2, m)", "(1, m)"]),
        (None, {"axis": 0, "keepdims": 0}, ["(m,)", "(m,)", "(m,)"]),
        (None, {"axis": -2}, ["(1, m)", "(1, m)", "(1, m)"]),
    ],
)
def test_split_to_sequence(split: Any, attrs: dict[str, int], want: list[str]) -> None:
    ins = [In("x", F, (3, "m"))]
    nodes = [] if split is None else [_const("split", split)]
    nodes.append(
        helper.make_node("SplitToSequence", ["x"] + ([] if split is None else ["split"]), ["s"], **attrs)
    )
    nodes.append(helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0))
    res = _check(nodes, ins, ["s", "y"], [{"m": 2}, {"m": 5}])
    t = res.type_of("s")
    assert isinstance(t, ss.TupleType)
    assert [str(f).split("[")[1].split(", float32")[0] for f in t.fields] == want


def test_a_sequence_of_unknown_length() -> None:
    """A split of a symbolic axis into chunks: a sequence of unknown length whose elements are
    the chunk or what is left (test_onnx_seq_unknown_length checks it against the real run)."""
    ins = [In("x", F, ("n", 4))]
    nodes = [_const("two", np.array(2, np.int64)), helper.make_node("SplitToSequence", ["x", "two"], ["s"])]
    nodes.append(helper.make_node("SequenceLength", ["s"], ["len"]))
    res = sso.infer(make_model(nodes, ins, ["len", "s"], opset=21), dims=symbols_of(ins))
    assert res.status == "ok", res.report()
    assert str(res.type_of("s")) == "Sequence[Tensor[(?, 4), float32]]"
    assert str(res.type_of("len")) == "Tensor[(), int64]"


def test_optional_tensor_input() -> None:
    tp = helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, ["n", 4]))
    g = helper.make_graph(
        [
            helper.make_node("OptionalGetElement", ["x"], ["y"]),
            helper.make_node("OptionalHasElement", ["x"], ["has"]),
            helper.make_node("OptionalHasElement", [], ["none"]),
        ],
        "opt",
        [helper.make_value_info("x", tp)],
        [helper.make_empty_tensor_value_info(o) for o in ("y", "has", "none")],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    n = ss.dim("n")
    res = sso.infer(m, dims={"n": n})
    assert res.status == "ok", res.report()
    assert str(res.type_of("y")) == "Tensor[(n, 4), float32]"
    assert str(res.type_of("has")) == "Tensor[(), bool]"
    none = res.type_of("none")
    assert isinstance(none, ss.TensorType) and str(none.value) == "0"
