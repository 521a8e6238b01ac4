"""The differential fuzzer's oracle (:func:`tests.onnx.test_onnx_differential_fuzz.check`) on
small graphs: the runtimes' own rules it excuses stay narrow (a pool's empty window, ``Squeeze``
without axes at a symbol of 1, onnxruntime's ``NonZero`` of a scalar), and a size only the run
decides is bound from the run.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from onnx import TensorProto, helper
from tests.onnx.fuzz_builder import Graph
from tests.onnx.test_onnx_differential_fuzz import (
    _empty_window_rule,
    _runtime_valid,
    _squeeze_rule,
    check,
    session,
)

import symshape as ss
import symshape.onnx as sso

Inputs = list[tuple[str, str, tuple[Any, ...]]]


def _graph(nodes: list[Any], inputs: Inputs, sizes: list[dict[str, int]]) -> Graph:
    elem = {"float32": TensorProto.FLOAT, "int64": TensorProto.INT64}
    ins = [helper.make_tensor_value_info(n, elem[d], list(s)) for n, d, s in inputs]
    outs = [helper.make_empty_tensor_value_info(o) for n in nodes for o in n.output]
    g = helper.make_graph(nodes, "g", ins, outs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 8
    syms = tuple(sorted({d for _, _, s in inputs for d in s if isinstance(d, str)}))
    return Graph(m, syms, tuple(sizes), (), tuple(inputs))


def _env(size: dict[str, int]) -> dict[Any, int]:
    return {ss.dim(k): v for k, v in size.items()}


def test_a_pool_window_longer_than_its_input_is_excused_only_there() -> None:
    pool = helper.make_node("AveragePool", ["x"], ["y"], name="p", kernel_shape=[1, 3])
    g = _graph([pool], [("x", "float32", (1, 1, 3, "b"))], [{"b": 2}, {"b": 3}])
    assert check(g) == []
    res = sso.infer(g.model, dims={"b": ss.dim("b")})
    got = session(g.model).run(None, {"x": np.zeros((1, 1, 3, 2), np.float32)})
    assert got[0].shape == (1, 1, 3, 0) and _empty_window_rule(g, res, _env({"b": 2}), got)
    add = helper.make_node("Add", ["x", "z"], ["y"], name="a")
    g2 = _graph([add], [("x", "float32", ("b",)), ("z", "float32", (3,))], [{"b": 2}])
    res2 = sso.infer(g2.model, dims={"b": ss.dim("b")})
    assert not _empty_window_rule(g2, res2, _env({"b": 2}), [np.zeros((0,), np.float32)])


def test_squeeze_without_axes_is_excused_where_its_symbol_is_1() -> None:
    g = _graph(
        [helper.make_node("Squeeze", ["x"], ["y"], name="s")],
        [("x", "float32", ("a", 2))],
        [{"a": 1}, {"a": 3}],
    )
    assert check(g) == []
    res = sso.infer(g.model, dims={"a": ss.dim("a")})
    assert _squeeze_rule(res, _env({"a": 1}), {"a": 1})
    assert not _squeeze_rule(res, _env({"a": 3}), {"a": 3})


def test_nonzero_of_a_scalar_takes_the_references_shape() -> None:
    """onnxruntime gives ``(1, n)``, ONNX (and symshape) ``(0, n)``."""
    g = _graph([helper.make_node("NonZero", ["x"], ["y"], name="n")], [("x", "float32", ())], [{}])
    assert sso.infer(g.model).type_of("y").dims[0] == 0
    assert check(g) == []


def test_a_size_the_run_decides_is_bound_from_the_run() -> None:
    """``TopK`` by a run-time ``k``, then ``Squeeze``: symshape keeps the axis under ``k != 1``,
    which ``valid_at`` cannot decide; bound to what the run gives, it is false at ``k = 1``."""
    nodes = [helper.make_node("TopK", ["x", "k"], ["v", "i"], name="t"),
             helper.make_node("Squeeze", ["v"], ["s"], name="q")]  # fmt: skip
    g = _graph(nodes, [("x", "float32", (4,)), ("k", "int64", (1,))], [{}])
    res = sso.infer(g.model)
    sess = session(g.model)
    x = np.arange(4, dtype=np.float32)
    verdicts = []
    for k in (1, 2):
        got = sess.run(None, {"x": x, "k": np.array([k], np.int64)})
        verdicts.append(_runtime_valid(res, g, {}, got))
    assert verdicts == [False, True]
