"""Claims the review of this session's change found unsound, each checked against onnxruntime:
a symshape type with its sizes substituted must be the run shape wherever symshape states a size.

* A ``Loop`` body saw the first iteration's state values (``s_in * 2`` each iteration, a
  ``ConstantOfShape(s_in)`` claimed ``(1, 2)`` for every iteration) and a sequence's first length
  (a body reading ``SequenceLength`` gave every element the size 0).
* A ``Loop`` without a condition input claimed the trip count of iterations where the body's
  condition output stops it (onnxruntime stops on it).
* ``Cast`` of an int computed in float took ``h / 7 * 7`` for ``h`` (float rounds twice: 30 for
  31), and casts to float16/bfloat16, which hold integers exactly only to 2048 and 256.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto as T  # noqa: E402
from onnx import helper as h  # noqa: E402

import symshape as ss  # noqa: E402
import symshape.onnx as sso  # noqa: E402

Model = Callable[[], "onnx.ModelProto"]


def _model(nodes: list[object], inputs: list[object], outputs: list[object], inits: list[object]) -> object:
    g = h.make_graph(nodes, "g", inputs, outputs, inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def loop_state_value() -> object:
    body = h.make_graph(
        [
            h.make_node("ConstantOfShape", ["s_in"], ["z_out"], value=h.make_tensor("v", T.FLOAT, [1], [0])),
            h.make_node("Constant", [], ["two"], value=h.make_tensor("t2", T.INT64, [1], [2])),
            h.make_node("Mul", ["s_in", "two"], ["s_out"]),
            h.make_node("Identity", ["c_in"], ["c_out"]),
        ],
        "body",
        [
            h.make_tensor_value_info("i", T.INT64, []),
            h.make_tensor_value_info("c_in", T.BOOL, []),
            h.make_tensor_value_info("s_in", T.INT64, [2]),
            h.make_tensor_value_info("z_in", T.FLOAT, ["a", "b"]),
        ],
        [
            h.make_tensor_value_info("c_out", T.BOOL, []),
            h.make_tensor_value_info("s_out", T.INT64, [2]),
            h.make_tensor_value_info("z_out", T.FLOAT, ["p", "q"]),
        ],
    )
    return _model(
        [h.make_node("Loop", ["M", "c", "s0", "z0"], ["s", "z"], body=body)],
        [h.make_tensor_value_info("z0", T.FLOAT, [1, 2])],
        [h.make_tensor_value_info("s", T.INT64, [2]), h.make_tensor_value_info("z", T.FLOAT, None)],
        [
            h.make_tensor("M", T.INT64, [], [2]),
            h.make_tensor("c", T.BOOL, [], [True]),
            h.make_tensor("s0", T.INT64, [2], [1, 2]),
        ],
    )


def loop_sequence_length() -> object:
    seqf = h.make_tensor_sequence_value_info
    body = h.make_graph(
        [
            h.make_node("Identity", ["c_in"], ["c_out"]),
            h.make_node("SequenceLength", ["s_in"], ["L"]),
            h.make_node("Unsqueeze", ["L", "ax"], ["L1"]),
            h.make_node("ConstantOfShape", ["L1"], ["t"], value=h.make_tensor("v", T.FLOAT, [1], [1.0])),
            h.make_node("SequenceInsert", ["s_in", "t"], ["s_out"]),
        ],
        "body",
        [
            h.make_tensor_value_info("i", T.INT64, []),
            h.make_tensor_value_info("c_in", T.BOOL, []),
            seqf("s_in", T.FLOAT, None),
        ],
        [h.make_tensor_value_info("c_out", T.BOOL, []), seqf("s_out", T.FLOAT, None)],
    )
    return _model(
        [
            h.make_node("Constant", [], ["ax"], value=h.make_tensor("a", T.INT64, [1], [0])),
            h.make_node("SequenceEmpty", [], ["s0"], dtype=T.FLOAT),
            h.make_node("Loop", ["M", "c", "s0"], ["s"], body=body),
            h.make_node("SequenceAt", ["s", "two"], ["y"]),
        ],
        [],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
        [
            h.make_tensor("M", T.INT64, [], [3]),
            h.make_tensor("c", T.BOOL, [], [True]),
            h.make_tensor("two", T.INT64, [], [2]),
        ],
    )


def loop_without_condition() -> object:
    body = h.make_graph(
        [
            h.make_node("Constant", [], ["c_out"], value=h.make_tensor("f", T.BOOL, [], [False])),
            h.make_node("Identity", ["x"], ["y"]),
        ],
        "body",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("c_in", T.BOOL, [])],
        [h.make_tensor_value_info("c_out", T.BOOL, []), h.make_tensor_value_info("y", T.FLOAT, [2])],
    )
    return _model(
        [h.make_node("Loop", ["M", ""], ["ys"], body=body)],
        [h.make_tensor_value_info("x", T.FLOAT, [2])],
        [h.make_tensor_value_info("ys", T.FLOAT, None)],
        [h.make_tensor("M", T.INT64, [], [5])],
    )


def _cast_chain(mid: list[object], inits: list[object]) -> object:
    nodes = [h.make_node("Shape", ["x"], ["s"]), *mid, h.make_node("Cast", ["p"], ["i"], to=T.INT64)]
    nodes.append(h.make_node("ConstantOfShape", ["i"], ["y"]))
    return _model(
        nodes,
        [h.make_tensor_value_info("x", T.FLOAT, ["n"])],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
        inits,
    )


def cast_divide_multiply() -> object:
    k = [h.make_tensor("k", T.FLOAT, [], [7.0])]
    mid = [
        h.make_node("Cast", ["s"], ["f"], to=T.FLOAT),
        h.make_node("Div", ["f", "k"], ["d"]),
        h.make_node("Mul", ["d", "k"], ["p"]),
    ]
    return _cast_chain(mid, k)


def cast_through(float_type: int) -> Model:
    return lambda: _cast_chain([h.make_node("Cast", ["s"], ["p"], to=float_type)], [])


CASES: Mapping[str, tuple[Model, tuple[Mapping[str, int], ...]]] = {
    "loop_state_value": (loop_state_value, ({},)),
    "loop_sequence_length": (loop_sequence_length, ({},)),
    "loop_without_condition": (loop_without_condition, ({},)),
    "cast_divide_multiply": (cast_divide_multiply, ({"n": 31}, {"n": 28}, {"n": 1})),
    "cast_bfloat16": (cast_through(T.BFLOAT16), ({"n": 257}, {"n": 3})),
    "cast_float16": (cast_through(T.FLOAT16), ({"n": 2049}, {"n": 5})),
}


def _feeds(m: object, sizes: Mapping[str, int]) -> dict[str, np.ndarray]:
    out = {}
    for vi in m.graph.input:  # type: ignore[attr-defined]
        dims = vi.type.tensor_type.shape.dim
        shape = [d.dim_value if d.HasField("dim_value") else sizes[d.dim_param] for d in dims]
        out[vi.name] = np.zeros(shape, np.float32)
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_stated_size_is_the_run_size(name: str) -> None:
    make, runs = CASES[name]
    m = make()
    res = sso.infer(m, dims={"n": ss.dim("n")})
    assert not res.errors, res.report()
    sess = ort.InferenceSession(m.SerializeToString())
    names = [o.name for o in m.graph.output]
    for sizes in runs:
        for value, got in zip(names, sess.run(None, _feeds(m, sizes))):
            t = res.type_of(value)
            if isinstance(t, ss.TupleType) or not isinstance(t, ss.TensorType) or t.ndim is None:
                continue
            assert t.ndim == got.ndim, (value, str(t), got.shape)
            for d, g in zip(t.dims, got.shape):
                if d.has_unknowns or not {str(x) for x in d.symbols} <= set(sizes):
                    continue  # (a size the run decides: a fresh symbol such as the iterations)
                claimed = d.evaluate(dict(sizes)) if d.symbols else d.constant_value
                assert claimed == g, (name, value, str(t), sizes, got.shape)
