"""Converters of symshape.onnx.ops.strings: symbolic shapes (string tensors have an unknown
dtype), against onnx's reference evaluator at concrete sizes."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper
from onnx_helpers import In, make_model, node, reference

import symshape as ss
import symshape.onnx as sso


def _model(n: object, ins: list[tuple[str, int, tuple[object, ...]]], outs: list[str]) -> object:
    vis = [helper.make_tensor_value_info(name, et, list(shape)) for name, et, shape in ins]
    g = helper.make_graph([n], "test", vis, [helper.make_empty_tensor_value_info(o) for o in outs])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])


def test_string_concat_broadcasts_and_stays_a_string() -> None:
    m = _model(
        node("StringConcat", ["a", "b"], ["y"]),
        [("a", TensorProto.STRING, ("n",)), ("b", TensorProto.STRING, (1,))],
        ["y"],
    )
    n = ss.dim("n")
    res = sso.infer(m, dims={"n": n})
    assert res.status == "ok" and str(res.type_of("y")) == "Tensor[(n,), ?]"
    assert sso.infer_shapes(m).graph.output[0].type.tensor_type.elem_type == TensorProto.STRING
    (y,) = reference(m, {"a": np.array(["x", "y", "z"], dtype=object), "b": np.array(["!"], dtype=object)})
    assert y.shape == (3,)


def test_regex_full_match_is_bool() -> None:
    m = _model(
        node("RegexFullMatch", ["a"], ["y"], pattern="a+"), [("a", TensorProto.STRING, ("n", 2))], ["y"]
    )
    res = sso.infer(m, dims={"n": ss.dim("n")})
    assert str(res.type_of("y")) == "Tensor[(n, 2), bool]"


def test_tfidf_vectorizer_width_is_the_largest_index_plus_one() -> None:
    n = node(
        "TfIdfVectorizer", ["x"], ["y"], mode="TF", min_gram_length=2, max_gram_length=2, max_skip_count=0,
        ngram_counts=[0, 4], ngram_indexes=[0, 1, 2, 3, 4, 5, 6], pool_int64s=[2, 3, 5, 4, 5, 6, 7, 8, 6, 7],
    )  # fmt: skip
    m = make_model([n], [In("x", "int32", ("b", 6))], ["y"], opset=9)
    res = sso.infer(m, dims={"b": ss.dim("b")})
    assert str(res.type_of("y")) == "Tensor[(b, 7), float32]"
    (y,) = reference(m, {"x": np.array([[1, 1, 3, 3, 3, 7], [8, 6, 7, 5, 6, 8]], np.int32)})
    assert y.shape == (2, 7)
