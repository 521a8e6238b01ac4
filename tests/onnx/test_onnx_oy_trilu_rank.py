"""``Trilu`` of a tensor of rank below 2: onnxruntime refuses it ("Input tensor should have a rank
of at least 2"), with and without graph optimizations, at every size; onnx's reference evaluator
(numpy's ``tril``) makes a 1-d input a square. symshape follows onnxruntime: a ``rank-mismatch``
error (the differential fuzzer's finding: ``Squeeze`` of ``(a, 1)`` then ``Trilu`` was accepted as
``(a,)``)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from onnx_helpers import In, make_model, run_ort, run_ort_plain

import symshape as ss
import symshape.onnx as sso

N = helper.make_node


@pytest.mark.parametrize("shape", [["a"], [], ["a", 1]])
def test_trilu_needs_rank_two(shape: list[object]) -> None:
    nodes = [N("Trilu", ["x"], ["y"], upper=0)]
    if shape == ["a", 1]:  # (squeezed to (a,))
        nodes = [N("Squeeze", ["x"], ["s"]), N("Trilu", ["s"], ["y"], upper=0)]
    m = make_model(nodes, [In("x", "float32", shape)], ["y"], 17, ir_version=8)
    a = ss.dim("a", min=0)
    res = sso.infer(m, dims={"a": a} if shape else {})
    assert res.status == "error" and "rank 2 or more" in res.report(), res.report()
    for n in (0, 1, 3):
        x = np.zeros([n if d == "a" else d for d in shape], np.float32)
        for run in (run_ort, run_ort_plain):
            try:
                ran = run(m, {"x": x}) is not None
            except Exception:
                ran = False
            assert not ran, (n, run.__name__)
        if shape:
            assert res.valid_at({a: n}) is False


def test_trilu_of_a_matrix_keeps_its_type() -> None:
    m = make_model(
        [N("Trilu", ["x"], ["y"], upper=1)], [In("x", "float32", ["a", "b"])], ["y"], 17, ir_version=8
    )
    a, b = ss.dim("a", min=0), ss.dim("b", min=0)
    res = sso.infer(m, dims={"a": a, "b": b})
    assert res.status == "ok" and str(res.type_of("y")) == "Tensor[(a, b), float32]"
    for n, k in ((0, 2), (3, 0), (2, 3)):
        assert run_ort(m, {"x": np.zeros((n, k), np.float32)})[0].shape == (n, k)
        assert res.valid_at({a: n, b: k}) is True
