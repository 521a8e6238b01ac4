"""A loop-carried sequence whose elements shrink by a row each iteration (``Slice(last, 1:)``
appended): the fixpoint of the body's rounds stopped when the size became a ``?``, which it took
as at least 1 (the sizes seen, 3 and 2), and the body's next round adds an empty element; the
sequence was claimed ``Sequence[Tensor[(?, k)]]`` with ``? >= 1`` where onnxruntime's third
iteration appends a ``(0, k)`` element (found by review). A ``?`` covers a size in the fixpoint
only when that size is no smaller than its least."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper
from onnx_helpers import In, make_model, node

import symshape as ss
import symshape.onnx as sso
from symshape.encoding.dim_bounds import bounds


def _model() -> object:
    vi, seq = helper.make_tensor_value_info, helper.make_tensor_sequence_value_info
    body = helper.make_graph(
        [
            node("Identity", ["c"], ["c_out"], name="keep"),
            node("SequenceAt", ["s", "minus"], ["last"], name="last"),
            node("Slice", ["last", "one1", "big1", "zero1"], ["t"], name="drop"),
            node("SequenceInsert", ["s", "t"], ["s_out"], name="grow"),
        ],
        "body",
        [vi("i", TensorProto.INT64, []), vi("c", TensorProto.BOOL, []), seq("s", TensorProto.FLOAT, None)],
        [vi("c_out", TensorProto.BOOL, []), seq("s_out", TensorProto.FLOAT, None)],
    )
    inits = {
        "cond": np.array(True),
        "minus": np.array(-1, np.int64),
        "one1": np.array([1], np.int64),
        "big1": np.array([1 << 40], np.int64),
        "zero1": np.array([0], np.int64),
    }
    ns = [
        node("SequenceConstruct", ["x"], ["s0"], name="s0"),
        node("Loop", ["trip", "cond", "s0"], ["seq"], name="loop", body=body),
    ]
    m = make_model(ns, [In("x", "float32", [3, "k"]), In("trip", "int64", [])], [], opset=16, inits=inits)
    m.graph.output.append(seq("seq", TensorProto.FLOAT, None))
    return m


def test_the_elements_of_a_shrinking_sequence_may_be_empty() -> None:
    m = _model()
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])  # type: ignore[attr-defined]
    (got,) = sess.run(None, {"x": np.zeros((3, 2), np.float32), "trip": np.array(3, np.int64)})
    assert [a.shape for a in got] == [(3, 2), (2, 2), (1, 2), (0, 2)]
    res = sso.infer(m, dims={"k": ss.dim("k")})
    t = res.type_of("seq")
    assert isinstance(t, ss.TypeCall) and isinstance(t.args[0], ss.TensorType), t
    e = t.args[0]
    # what the type says of an element holds of the empty one: its rank unknown, or its first
    # size possibly 0
    assert e.ndim is None or bounds(e.dims[0])[0] == 0, (str(t), [bounds(d) for d in e.dims])
