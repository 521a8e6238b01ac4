"""A ``Loop``'s iteration number when every iteration runs and the trip count ``M`` is not a
constant: ``j mod max(M, 1)`` for a new symbol ``j`` (below ``M``), so that torch's
``for i in range(x.shape[1]): y = y + x[:, i:i+1]`` has a slice exactly 1 long (checked against
onnxruntime's run of every body value); a guard over ``j`` would be read as one value, not as
every iteration's: then the iteration numbers are left unknown and no guard mentions them."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx_helpers import run_ort
from test_onnx_infer_shapes_subgraph_oracle import accepted_by_onnx, check_against_runs, subgraph_written

import symshape.onnx as sso
from symshape.onnx.importer import Importer

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def _const(name: str, v: list[int] | int) -> onnx.NodeProto:
    shape = [] if isinstance(v, int) else [len(v)]
    vals = [v] if isinstance(v, int) else v
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(name, I64, shape, vals))


def _model(kind: str, outer_cond: bool = False) -> onnx.ModelProto:
    """``y`` (b, w) plus, each iteration ``i`` of ``Loop(M = s.shape[0])`` (s is (n,)):
    ``x[:, i:i+1]`` (``one``), ``x[:, :i+1]`` (``prefix``) or ``x[:, i]`` (``gather``, y of shape
    (b,)); x is (b, w), w is n, or 5 for ``x5`` kinds. ``outer_cond``: the body's condition is the
    Loop's own condition input (an outer value, as torch exports a for loop), else its input."""
    w: Any = 5 if kind.endswith("x5") else "n"
    base = kind.removesuffix("_x5")
    nodes = [_const(n, v) for n, v in (("ax0", [0]), ("ax1", [1]), ("zero1", [0]), ("one", 1))]
    nodes += [
        helper.make_node("Add", ["i", "one"], ["ip"]),
        helper.make_node("Unsqueeze", ["i", "ax0"], ["i1"]),
        helper.make_node("Unsqueeze", ["ip", "ax0"], ["ip1"]),
    ]
    if base == "gather":
        nodes.append(helper.make_node("Gather", ["x", "i"], ["r"], axis=1))
    else:
        start = "i1" if base == "one" else "zero1"
        nodes.append(helper.make_node("Slice", ["x", start, "ip1", "ax1"], ["r"]))
    nodes += [
        helper.make_node("Add", ["y", "r"], ["y2"]),
        helper.make_node("Identity", ["t" if outer_cond else "cond"], ["c2"]),
    ]
    ys = ["b"] if base == "gather" else ["b", w]
    body = helper.make_graph(
        nodes,
        "body",
        [
            helper.make_tensor_value_info("i", I64, []),
            helper.make_tensor_value_info("cond", B, []),
            helper.make_tensor_value_info("y", F, ["yb"] if base == "gather" else ["yb", "yn"]),
        ],
        [
            helper.make_tensor_value_info("c2", B, []),
            helper.make_tensor_value_info("y2", F, ["yb"] if base == "gather" else ["yb", "yn"]),
        ],
    )
    g = helper.make_graph(
        [
            helper.make_node("Shape", ["s"], ["sh"]),
            helper.make_node("Gather", ["sh", "k0"], ["M"], axis=0),
            helper.make_node("Loop", ["M", "t", "y0"], ["out"], body=body),
        ],
        "g",
        [
            helper.make_tensor_value_info("x", F, ["b", w]),
            helper.make_tensor_value_info("y0", F, ys),
            helper.make_tensor_value_info("s", F, ["n"]),
        ],
        [helper.make_tensor_value_info("out", F, ["ob"] if base == "gather" else ["ob", "on"])],
        [helper.make_tensor("k0", I64, [], [0]), helper.make_tensor("t", B, [], [True])],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def _feeds(m: onnx.ModelProto, b: int, n: int) -> dict[str, np.ndarray[Any, Any]]:
    rng = np.random.default_rng(b * 10 + n)
    y0 = [d.dim_param or d.dim_value for d in m.graph.input[1].type.tensor_type.shape.dim]
    y_shape = [b if d == "b" else n if d == "n" else int(d) for d in y0]
    return {
        "x": rng.standard_normal((b, n)).astype(np.float32),
        "y0": rng.standard_normal(y_shape).astype(np.float32),
        "s": np.zeros(n, np.float32),
    }


@pytest.mark.parametrize("outer_cond", [False, True])
def test_a_slice_at_the_iteration_is_one_long_and_every_body_value_is_its_run_shape(outer_cond: bool) -> None:
    m = _model("one", outer_cond)
    res = sso.infer(m)
    assert res.status == "ok", res.report()
    assert str(res.type_of("out")) == "Tensor[(b, n), float32]"
    assert str(res.type_of("y2")) == "Tensor[(b, n), float32]"
    m2 = sso.infer_shapes(m)
    written = subgraph_written(m2)
    body = {k[0]: v for k, v in written.items()}["body"]
    assert body["r"] == ["b", 1] and body["y2"] == ["b", "n"]
    accepted_by_onnx(m2)
    total = 0
    for b, n in ((1, 1), (2, 3), (3, 6)):
        feeds = _feeds(m, b, n)
        for got, want in zip(run_ort(m2, feeds), run_ort(m, feeds)):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        checked, bad, _ = check_against_runs(m2, written, feeds, {"b": b, "n": n})
        assert not bad, "\n".join(bad)
        total += checked
    assert total > 0


def _first_guards(m: onnx.ModelProto) -> tuple[list[str], list[str]]:
    """The iteration symbols of a conversion with bounded iterations, and its guards' texts."""
    imp = Importer(m, "g")
    res = sso._infer_imported(imp, imp.run())
    return list(imp.iteration_symbols), [str(g.cond) for g in res.guards]


@pytest.mark.parametrize("kind", ["gather_x5", "prefix_x5", "one_x5"])
def test_a_guard_over_the_iteration_leaves_the_iteration_numbers_unknown(kind: str) -> None:
    m = _model(kind)
    names, first = _first_guards(m)
    # bounded, the guard is over j (`j % n < 5`: read as one value, not as every iteration's)
    assert len(names) == 1 and any(names[0] in g for g in first), first
    res = sso.infer(m)
    assert not any(names[0] in str(g.cond) for g in res.guards), res.report()
    assert "iteration" not in res.report()
    assert not res.errors, res.report()


def test_without_a_guard_over_the_iteration_one_conversion() -> None:
    names, first = _first_guards(_model("one"))
    assert len(names) == 1 and first == []


def test_only_the_loop_a_guard_mentions_has_its_iteration_left_unknown() -> None:
    from onnx.compose import add_prefix

    a, b = add_prefix(_model("prefix_x5"), "a_"), add_prefix(_model("one"), "b_")
    g = helper.make_graph(
        [*a.graph.node, *b.graph.node],
        "two",
        [*a.graph.input, *b.graph.input],
        [*a.graph.output, *b.graph.output],
        [*a.graph.initializer, *b.graph.initializer],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    names, first = _first_guards(m)
    assert len(names) == 2 and any(names[0] in t for t in first) and not any(names[1] in t for t in first)
    res = sso.infer(m)
    assert "iteration" not in res.report()
    # the second loop's slice is still exactly one long, its final state exact
    assert "iteration_" in str(res.type_of("b_r")) and str(res.type_of("b_out")) == "Tensor[(b, n), float32]"
    written = {n: d for v in subgraph_written(sso.infer_shapes(m)).values() for n, d in v.items()}
    assert written["a_r"] == ["b", None] and written["b_r"] == ["b", 1]
    assert str(res.type_of("a_r")) == "Tensor[(b, ?), float32]"
