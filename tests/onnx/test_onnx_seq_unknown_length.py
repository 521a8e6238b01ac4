"""Sequences of unknown length (``Sequence[E]``, symshape.onnx.ops.sequence_types) against
onnxruntime at several sizes (1 included) and sequence lengths, with the sizes symbolic.

Every element onnxruntime gives must fit the element type ``E`` with the sizes substituted: a
constant is that size, a ``?`` joined from alternatives (a chunk or what is left of a split) is one
of them, another ``?`` any size. Sequences of known length stay tuples (``SequenceMap`` over
``SequenceConstruct`` is element by element).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx_helpers import node

import symshape as ss
import symshape.onnx as sso
from symshape.encoding.dim_atoms import AnyDim

N = ss.dim("N")


def _fits_dim(d: ss.Dim, actual: int, env: dict[Any, int]) -> bool:
    s = d.subs(env)
    if s.is_constant:
        return int(s) == actual
    atom = s.atom
    if isinstance(atom, AnyDim) and atom.alts:
        return any(int(a.subs(env)) == actual for a in atom.alts)
    return True  # a size not known


def _fits(t: ss.Type, v: Any, env: dict[Any, int]) -> bool:
    """Whether onnxruntime's value ``v`` (an array, or a list for a sequence) fits type ``t``."""
    if isinstance(v, list):
        if isinstance(t, ss.TupleType):
            return len(t.fields) == len(v) and all(_fits(f, a, env) for f, a in zip(t.fields, v))
        assert isinstance(t, ss.TypeCall) and str(t.func) == "Sequence", t
        return all(_fits(t.args[0], a, env) for a in v)
    assert isinstance(t, ss.TensorType), t
    shape = np.asarray(v).shape
    if t.ndim is None:
        return True
    return t.ndim == len(shape) and all(_fits_dim(d, a, env) for d, a in zip(t.dims, shape))


def _seq_in(name: str, shape: list[Any] | None, et: int = TensorProto.FLOAT) -> onnx.ValueInfoProto:
    return helper.make_tensor_sequence_value_info(name, et, shape)


def _model(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: list[str],
    inits: dict[str, Any] | None = None,
    opset: int = 17,
) -> onnx.ModelProto:
    g = helper.make_graph(
        nodes,
        "seqs",
        inputs,
        [helper.make_empty_tensor_value_info(o) for o in outputs],
        [onnx.numpy_helper.from_array(np.asarray(v), k) for k, v in (inits or {}).items()],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _check(
    model: onnx.ModelProto, dims: dict[str, ss.Dim], runs: list[tuple[dict[Any, int], dict[str, Any]]]
) -> Any:
    """Infer once; at each run (the sizes, onnxruntime's feeds), every output fits its type."""
    import onnxruntime as ort

    res = sso.infer(model, dims=dims)
    assert res.status == "ok", res.report()
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in model.graph.output]
    for env, feeds in runs:
        for name, v in zip(names, sess.run(None, feeds)):
            t = res.type_of(name)
            got = [np.asarray(a).shape for a in v] if isinstance(v, list) else np.asarray(v).shape
            assert _fits(t, v, env), (name, str(t), env, got)
    return res


def _arrays(*shapes: tuple[int, ...]) -> list[np.ndarray[Any, Any]]:
    return [np.zeros(s, np.float32) for s in shapes]


def test_insert_at_length_and_concat_of_a_sequence_input() -> None:
    nodes = [
        node("SequenceInsert", ["s", "x"], ["s2"], name="ins"),
        node("SequenceInsert", ["s2", "x", "zero"], ["s3"], name="front"),
        node("SequenceAt", ["s3", "p"], ["e"], name="at"),
        node("SequenceLength", ["s3"], ["len"], name="len"),
        node("ConcatFromSequence", ["s3"], ["cat"], name="cat", axis=0),
        node("ConcatFromSequence", ["s3"], ["stk"], name="stk", axis=-1, new_axis=1),
        node("SequenceErase", ["s3", "p"], ["er"], name="erase"),
    ]
    ins = [
        _seq_in("s", ["N", 3]),
        helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3]),
        helper.make_tensor_value_info("p", TensorProto.INT64, []),
    ]
    model = _model(nodes, ins, ["s3", "e", "len", "cat", "stk", "er"], {"zero": np.array(0, np.int64)})
    runs = []
    for n in (1, 4):
        for k in (1, 3):
            feeds = {"s": _arrays(*[(n, 3)] * k), "x": np.zeros((n, 3), np.float32), "p": np.array(k - 1)}
            runs.append(({N: n}, feeds))
    res = _check(model, {"N": N}, runs)
    assert str(res.type_of("s3")) == "Sequence[Tensor[(N, 3), float32]]"
    assert str(res.type_of("e")) == "Tensor[(N, 3), float32]"
    assert str(res.type_of("len")) == "Tensor[(), int64]"
    stk = res.type_of("stk")
    assert isinstance(stk, ss.TensorType) and stk.dims[:2] == (N, 3) and not stk.dims[2].is_constant


def test_elements_of_differing_sizes_are_each_their_own() -> None:
    """``seq(float[?])``: two elements read are not taken to have one size (their sum is guarded
    by a size symshape leaves open, never proved)."""
    nodes = [
        node("SequenceAt", ["s", "zero"], ["a"], name="a"),
        node("SequenceAt", ["s", "one"], ["b"], name="b"),
        node("Add", ["a", "b"], ["y"], name="add"),
    ]
    inits = {"zero": np.array(0, np.int64), "one": np.array(1, np.int64)}
    model = _model(nodes, [_seq_in("s", [None])], ["y"], inits)
    res = sso.infer(model)
    assert res.status == "guarded", res.report()


@pytest.mark.parametrize(("chunk", "keepdims"), [(None, 0), (None, 1), (2, 1), (3, 1)])
def test_split_to_sequence_of_a_symbolic_axis(chunk: int | None, keepdims: int) -> None:
    nodes = [
        node(
            "SplitToSequence",
            ["x"] + ([] if chunk is None else ["c"]),
            ["s"],
            name="split",
            axis=0,
            keepdims=keepdims,
        )
    ]
    nodes.append(node("ConcatFromSequence", ["s"], ["back"], name="back", axis=0, new_axis=1 - keepdims))
    inits = {} if chunk is None else {"c": np.array(chunk, np.int64)}
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])
    model = _model(nodes, [x], ["s", "back"], inits)
    runs = [({N: n}, {"x": np.zeros((n, 4), np.float32)}) for n in (1, 2, 3, 5, 7)]
    res = _check(model, {"N": N}, runs)
    t = res.type_of("s")
    assert isinstance(t, ss.TypeCall), t


def test_sequence_map_over_a_sequence_input_and_a_tensor() -> None:
    body = helper.make_graph(
        [
            node("Add", ["a", "t"], ["sum"], name="add"),
            node("Shape", ["a"], ["sh"], name="sh"),
        ],
        "body",
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("t", TensorProto.FLOAT, None),
        ],
        [
            helper.make_tensor_value_info("sum", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("sh", TensorProto.INT64, None),
        ],
    )
    nodes = [node("SequenceMap", ["s", "t"], ["sums", "shapes"], name="map", body=body)]
    ins = [_seq_in("s", [None, "N"]), helper.make_tensor_value_info("t", TensorProto.FLOAT, ["N"])]
    model = _model(nodes, ins, ["sums", "shapes"])
    runs = [({N: n}, {"s": _arrays((1, n), (3, n)), "t": np.zeros(n, np.float32)}) for n in (1, 5)]
    res = _check(model, {"N": N}, runs)
    assert str(res.type_of("shapes")).startswith("Sequence[Tensor[(2,), int64]")


def test_sequence_map_over_sequences_of_known_length_is_element_by_element() -> None:
    body = helper.make_graph(
        [node("Shape", ["a"], ["sh"], name="sh")],
        "body",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("sh", TensorProto.INT64, None)],
    )
    nodes = [
        node("Concat", ["x", "x"], ["xx"], name="xx", axis=0),
        node("SequenceConstruct", ["x", "xx"], ["s"], name="mk"),
        node("SequenceMap", ["s"], ["shapes"], name="map", body=body),
        node("SequenceAt", ["shapes", "one"], ["second"], name="second"),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2])
    model = _model(nodes, [x], ["shapes", "second"], {"one": np.array(1, np.int64)})
    res = _check(model, {"N": N}, [({N: n}, {"x": np.zeros((n, 2), np.float32)}) for n in (1, 3)])
    assert str(res.type_of("second")) == "Tensor[(2,), int64] = (2*N, 2)"


@pytest.mark.parametrize("cond", [True, False])
def test_if_joins_the_element_types_of_its_sequence_branches(cond: bool) -> None:
    seq_out = _seq_in("out", None)
    then_g = helper.make_graph(
        [
            node("SequenceConstruct", ["x", "x"], ["two"], name="two"),
            node("Identity", ["two"], ["out"], name="o1"),
        ],
        "then",
        [],
        [seq_out],
    )
    else_g = helper.make_graph(
        [
            node("SplitToSequence", ["x"], ["rows"], name="rows", axis=0),
            node("Identity", ["rows"], ["out"], name="o2"),
        ],
        "else",
        [],
        [seq_out],
    )
    nodes = [node("If", ["c"], ["seq"], name="if", then_branch=then_g, else_branch=else_g)]
    ins = [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2]),
        helper.make_tensor_value_info("c", TensorProto.BOOL, []),
    ]
    model = _model(nodes, ins, ["seq"])
    runs = [({N: n}, {"x": np.zeros((n, 2), np.float32), "c": np.array(cond)}) for n in (1, 3)]
    res = _check(model, {"N": N}, runs)
    t = res.type_of("seq")
    assert isinstance(t, ss.TypeCall) and str(t.args[0]).endswith(", 2), float32]"), t


def test_an_empty_optional_of_a_sequence_type() -> None:
    """onnx's test_if_opt: one branch an empty optional typed ``seq(float[5])``."""
    opt_t = helper.make_optional_type_proto(
        helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [5]))
    )
    then_g = helper.make_graph(
        [helper.make_node("Optional", [], ["none"], type=opt_t.optional_type.elem_type)],
        "then",
        [],
        [helper.make_value_info("none", opt_t)],
    )
    else_g = helper.make_graph(
        [
            node("SequenceConstruct", ["x"], ["sq"], name="sq"),
            helper.make_node("Optional", ["sq"], ["some"]),
        ],
        "else",
        [],
        [helper.make_value_info("some", opt_t)],
    )
    nodes = [
        node("If", ["c"], ["o"], name="if", then_branch=then_g, else_branch=else_g),
        helper.make_node("OptionalHasElement", ["o"], ["has"]),
    ]
    ins = [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [5]),
        helper.make_tensor_value_info("c", TensorProto.BOOL, []),
    ]
    g = helper.make_graph(
        nodes,
        "opt",
        ins,
        [helper.make_value_info("o", opt_t), helper.make_tensor_value_info("has", TensorProto.BOOL, [])],
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    res = sso.infer(model)
    assert res.status == "ok", res.report()
    assert str(res.type_of("o")) == "Sequence[Tensor[(5,), float32]]"
    assert str(res.type_of("has")) == "Tensor[(), bool]"


def _if_of(then_nodes: list[onnx.NodeProto], else_nodes: list[onnx.NodeProto]) -> onnx.ModelProto:
    def branch(nodes: list[onnx.NodeProto], name: str) -> onnx.GraphProto:
        out = [_seq_in(nodes[-1].output[0], None)]
        return helper.make_graph(nodes, name, [], out)

    n = node(
        "If",
        ["c"],
        ["s"],
        name="if",
        then_branch=branch(then_nodes, "then"),
        else_branch=branch(else_nodes, "else"),
    )
    ins = [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"]),
        helper.make_tensor_value_info("c", TensorProto.BOOL, []),
    ]
    return _model([n, node("SequenceLength", ["s"], ["l"], name="len")], ins, ["s", "l"])


_EMPTY = [node("SequenceEmpty", [], ["e"], name="e")]
_ONE = [node("SequenceConstruct", ["x"], ["one"], name="one")]
_TWO = [node("SequenceConstruct", ["x", "x"], ["two"], name="two")]
_SPLIT = [node("SplitToSequence", ["x"], ["parts"], name="parts", keepdims=0)]


@pytest.mark.parametrize(
    ("then_nodes", "else_nodes", "want", "length"),
    [
        (_EMPTY, _EMPTY, "()", "Tensor[(), int64] = 0"),
        (_TWO, _TWO, "(Tensor[(N,), float32], Tensor[(N,), float32])", "Tensor[(), int64] = 2"),
        (_EMPTY, _ONE, "Sequence[Tensor[(N,), float32]]", "Tensor[(), int64]"),
        (_ONE, _TWO, "Sequence[Tensor[(N,), float32]]", "Tensor[(), int64]"),
        (_ONE, _SPLIT, "Sequence[Tensor[?, float32]]", "Tensor[(), int64]"),
    ],
)
def test_if_keeps_tuples_of_one_length_and_joins_the_rest(
    then_nodes: list[onnx.NodeProto], else_nodes: list[onnx.NodeProto], want: str, length: str
) -> None:
    model = _if_of(then_nodes, else_nodes)
    runs = [({N: n}, {"x": np.zeros(n, np.float32), "c": np.array(c)}) for n in (1, 3) for c in (True, False)]
    res = _check(model, {"N": N}, runs)
    assert (str(res.type_of("s")), str(res.type_of("l"))) == (want, length)
