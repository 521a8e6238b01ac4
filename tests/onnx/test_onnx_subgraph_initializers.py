"""A subgraph's own initializers are its constants (they were not converted: a Loop body or If
branch holding one was ``undefined-var``), and one shadows an outer value of its name, as in
onnxruntime; each case is compared with onnxruntime's run."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto as T  # noqa: E402
from onnx import helper as h  # noqa: E402

import symshape as ss  # noqa: E402
import symshape.onnx as sso  # noqa: E402


def _if_model(shadow: bool) -> object:
    """``If(c)``: the then branch reshapes x (n, 6) to its own initializer ``shape`` (-1, 3) (an
    outer ``shape`` of (-1, 2) is shadowed when ``shadow``), the else branch to (-1, 6)."""
    then = h.make_graph(
        [h.make_node("Reshape", ["x", "shape"], ["y1"])],
        "then",
        [],
        [h.make_tensor_value_info("y1", T.FLOAT, None)],
        [h.make_tensor("shape", T.INT64, [2], [-1, 3])],
    )
    other = h.make_graph(
        [h.make_node("Reshape", ["x", "six"], ["y2"])],
        "else",
        [],
        [h.make_tensor_value_info("y2", T.FLOAT, None)],
        [h.make_tensor("six", T.INT64, [2], [-1, 6])],
    )
    inits = [h.make_tensor("shape", T.INT64, [2], [-1, 2])] if shadow else []
    g = h.make_graph(
        [h.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, ["n", 6]), h.make_tensor_value_info("c", T.BOOL, [])],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
        inits,
    )
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _loop_model() -> object:
    """A Loop body multiplying its state by its own initializer ``two`` (shape (1,))."""
    body = h.make_graph(
        [h.make_node("Mul", ["s_in", "two"], ["s_out"]), h.make_node("Identity", ["c_in"], ["c_out"])],
        "body",
        [
            h.make_tensor_value_info("i", T.INT64, []),
            h.make_tensor_value_info("c_in", T.BOOL, []),
            h.make_tensor_value_info("s_in", T.FLOAT, ["n"]),
        ],
        [h.make_tensor_value_info("c_out", T.BOOL, []), h.make_tensor_value_info("s_out", T.FLOAT, ["n"])],
        [h.make_tensor("two", T.FLOAT, [1], [2.0])],
    )
    g = h.make_graph(
        [h.make_node("Loop", ["M", "c", "x"], ["s"], body=body)],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, ["n"])],
        [h.make_tensor_value_info("s", T.FLOAT, None)],
        [h.make_tensor("M", T.INT64, [], [3]), h.make_tensor("c", T.BOOL, [], [True])],
    )
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _claims(t: ss.Type, sizes: dict[str, int]) -> tuple[int, ...]:
    assert isinstance(t, ss.TensorType) and t.ndim is not None, t
    return tuple(int(d.evaluate(sizes)) if d.symbols else int(d.constant_value) for d in t.dims)  # type: ignore[arg-type]


@pytest.mark.parametrize("shadow", [False, True])
def test_an_if_branch_reads_its_own_initializer(shadow: bool) -> None:
    m = _if_model(shadow)
    res = sso.infer(m, dims={"n": ss.dim("n")})
    assert not res.errors, res.report()
    sess = ort.InferenceSession(m.SerializeToString())  # type: ignore[attr-defined]
    for n in (1, 2, 5):
        for c in (True, False):
            (y,) = sess.run(None, {"x": np.zeros((n, 6), np.float32), "c": np.array(c)})
            t = res.type_of("y1" if c else "y2")
            assert _claims(t, {"n": n}) == y.shape, (shadow, n, c, str(t))


def test_a_loop_body_reads_its_own_initializer() -> None:
    m = _loop_model()
    res = sso.infer(m, dims={"n": ss.dim("n")})
    assert not res.errors, res.report()
    sess = ort.InferenceSession(m.SerializeToString())  # type: ignore[attr-defined]
    for n in (1, 4):
        (s,) = sess.run(None, {"x": np.ones(n, np.float32)})
        assert _claims(res.type_of("s"), {"n": n}) == s.shape
