"""``Loop`` whose trip count is a size that may be 0 (``x.shape[0]`` with ``min=0``): onnxruntime
(with and without graph optimizations) and onnx's reference evaluator run none of the body and
give the initial states, so the body's checks hold only where the loop runs: ``a == 0 or ...``
(each was required outright: a false error at ``a == 0``). (onnx's reference evaluator runs no
iteration of a ``Loop`` without a condition input: judged with a true one.) Judged at every point of a grid
including 0 and 1: ``valid_at`` decides exactly where the runtime runs, and the output's shape is
the runtime's after substitution.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx_helpers import reference, run_ort, run_ort_plain

import symshape as ss
import symshape.onnx as sso

N = helper.make_node
F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def _ints(name: str, v: Sequence[int]) -> onnx.NodeProto:
    return N("Constant", [], [name], value=helper.make_tensor(name, I64, [len(v)], list(v)))


def _model(body_nodes: Sequence[onnx.NodeProto], cond: bool = False, state: str = "b") -> onnx.ModelProto:
    """``Loop(M = x.shape[0], [cond], s0)`` of ``x: (a, b)`` with ``s0`` zeros of shape
    ``(x.shape[1],)`` (``state == "b"``) or ``(2,)``; the body computes ``s2`` from ``s``, the
    iteration ``i`` and ``x``."""
    body = helper.make_graph(
        [*body_nodes, N("Identity", ["c"], ["c2"])],
        "body",
        [
            helper.make_tensor_value_info("i", I64, []),
            helper.make_tensor_value_info("c", B, []),
            helper.make_tensor_value_info("s", F, None),
        ],
        [helper.make_tensor_value_info("c2", B, []), helper.make_tensor_value_info("s2", F, None)],
    )
    shape = [N("Shape", ["x"], ["sh1"], start=1, end=2)] if state == "b" else [_ints("sh1", [2])]
    nodes = [
        N("Shape", ["x"], ["sh0"], start=0, end=1),
        N("Squeeze", ["sh0"], ["M"]),
        *shape,
        N("ConstantOfShape", ["sh1"], ["s0"], value=helper.make_tensor("v", F, [1], [0.0])),
        N("Constant", [], ["t"], value=helper.make_tensor("t", B, [], [True])),
        N("Loop", ["M", "t" if cond else "", "s0"], ["out"], body=body),
    ]
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", F, ["a", "b"])],
        [helper.make_tensor_value_info("out", F, None)],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 8
    return m


# each iteration adds row i of x
GATHER = [N("Gather", ["x", "i"], ["row"], axis=0), N("Add", ["s", "row"], ["s2"])]
# the state (b,) split in two rows and flattened again: b must be even where the loop runs
HALVES = [
    _ints("t2", [2, -1]),
    N("Reshape", ["s", "t2"], ["h"]),
    N("Shape", ["s"], ["ss"]),
    N("Reshape", ["h", "ss"], ["s2"]),
]
# the state (2,) plus the first 2 entries of row i (1 broadcasts): b >= 1 where the loop runs
PREFIX = [
    N("Gather", ["x", "i"], ["row"], axis=0),
    _ints("z", [0]),
    _ints("two", [2]),
    N("Slice", ["row", "z", "two"], ["p"]),
    N("Add", ["s", "p"], ["s2"]),
]
MODELS = {
    "gather": (GATHER, False, "b", "True"),
    "gather_cond": (GATHER, True, "b", "True"),
    # (b == 0 refused too: the (2, 0) halves reshaped to Shape(s) = [0] copy the 2)
    "halves": (HALVES, False, "b", "(a == 0 or b % 2 == 0) and (a == 0 or b >= 1)"),
    "prefix": (PREFIX, False, "2", "a == 0 or min(2, b) == 1 or b >= 2"),
}
GRID = [{"a": a, "b": b} for a, b in itertools.product((0, 1, 2, 3), (0, 1, 2, 3, 4))]


def _feeds(size: dict[str, int]) -> dict[str, np.ndarray[Any, Any]]:
    return {"x": np.ones((size["a"], size["b"]), np.float32)}


def _misses(m: onnx.ModelProto, runner: str) -> list[str]:
    syms = {"a": ss.dim("a", min=0), "b": ss.dim("b", min=0)}
    res = sso.infer(m, dims=syms)
    assert not res.errors and not res.unsupported, res.report()
    out: list[str] = []
    run = {"ort": run_ort, "ort-plain": run_ort_plain, "reference": reference}[runner]
    for size in GRID:
        env = {syms[k]: v for k, v in size.items()}
        try:
            got = run(m, _feeds(size))
        except Exception:
            got = None
        try:
            valid = res.valid_at(env)
        except ss.SymshapeError as e:
            out.append(f"{size}: valid_at raises {e}")
            continue
        if valid != (got is not None):
            out.append(f"{size}: {runner} {'runs' if got is not None else 'fails'}; valid_at {valid}")
        elif got is not None:
            t = res.type_of("out")
            assert isinstance(t, ss.TensorType)
            if t.ndim is not None:
                shape = tuple(d.subs(env) for d in t.dims)
                if tuple(int(d) if d.is_constant else -1 for d in shape) != got[0].shape:
                    out.append(f"{size}: out {t} -> {tuple(map(str, shape))}, {runner} {got[0].shape}")
    return out


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("runner", ["ort", "ort-plain", "reference"])
def test_body_checks_hold_where_the_loop_runs(name: str, runner: str) -> None:
    nodes, cond, state, _ = MODELS[name]
    # (the reference evaluator runs no iteration of a Loop without a condition input: onnx 1.x
    # reads the absent condition as false; with a true one it runs them)
    misses = _misses(_model(nodes, cond or runner == "reference", state), runner)
    assert misses == [], "\n".join(misses)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_guards_read_the_trip_count(name: str) -> None:
    nodes, cond, state, guard = MODELS[name]
    res = sso.infer(_model(nodes, cond, state), dims={"a": ss.dim("a", min=0), "b": ss.dim("b", min=0)})
    assert res.valid_when() == guard, res.report()


def test_a_trip_count_of_least_one_is_unchanged() -> None:
    """Declared ``min=1`` the trip count is not 0: the body's checks are required as they were."""
    res = sso.infer(_model(HALVES), dims={"a": ss.dim("a"), "b": ss.dim("b", min=0)})
    assert res.valid_when() == "b % 2 == 0 and b >= 1", res.report()
    a, b = ss.dim("a"), ss.dim("b", min=0)
    assert res.valid_at({a: 1, b: 3}) is False


def _nested() -> onnx.ModelProto:
    """``for i in range(x.shape[0]): for j in range(x.shape[1]): s = halves(s)`` of ``x: (a, b, c)``
    with ``s`` of shape ``(c,)``: the inner body runs where both trip counts are ``>= 1``."""
    inner = helper.make_graph(
        [
            _ints("t2", [2, -1]),
            N("Reshape", ["u", "t2"], ["h"]),
            N("Shape", ["u"], ["us"]),
            N("Reshape", ["h", "us"], ["u2"]),
            N("Identity", ["c"], ["cc2"]),
        ],
        "inner",
        [
            helper.make_tensor_value_info("j", I64, []),
            helper.make_tensor_value_info("c", B, []),
            helper.make_tensor_value_info("u", F, None),
        ],
        [helper.make_tensor_value_info("cc2", B, []), helper.make_tensor_value_info("u2", F, None)],
    )
    outer = helper.make_graph(
        [
            N("Shape", ["x"], ["s1"], start=1, end=2),
            N("Squeeze", ["s1"], ["M2"]),
            N("Loop", ["M2", "", "s"], ["s2"], body=inner),
            N("Identity", ["c"], ["c2"]),
        ],
        "outer",
        [
            helper.make_tensor_value_info("i", I64, []),
            helper.make_tensor_value_info("c", B, []),
            helper.make_tensor_value_info("s", F, None),
        ],
        [helper.make_tensor_value_info("c2", B, []), helper.make_tensor_value_info("s2", F, None)],
    )
    nodes = [
        N("Shape", ["x"], ["s0"], start=0, end=1),
        N("Squeeze", ["s0"], ["M"]),
        N("Shape", ["x"], ["sz"], start=2, end=3),
        N("ConstantOfShape", ["sz"], ["st"], value=helper.make_tensor("v", F, [1], [0.0])),
        N("Loop", ["M", "", "st"], ["out"], body=outer),
    ]
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", F, ["a", "b", "c"])],
        [helper.make_tensor_value_info("out", F, None)],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 8
    return m


@pytest.mark.parametrize("runner", ["ort", "ort-plain"])
def test_a_nested_loop_body_runs_where_both_trip_counts_are_positive(runner: str) -> None:
    m = _nested()
    syms = {k: ss.dim(k, min=0) for k in "abc"}
    res = sso.infer(m, dims=syms)
    assert res.valid_when() == "(min(a, b) == 0 or c % 2 == 0) and (min(a, b) == 0 or c >= 1)", res.report()
    run = run_ort if runner == "ort" else run_ort_plain
    misses = []
    for a, b, c in itertools.product((0, 1, 2), (0, 1, 2), (0, 1, 2, 3, 4)):
        try:
            got = run(m, {"x": np.zeros((a, b, c), np.float32)})
        except Exception:
            got = None
        valid = res.valid_at({syms["a"]: a, syms["b"]: b, syms["c"]: c})
        if valid != (got is not None):
            misses.append(f"{(a, b, c)}: {runner} {'runs' if got is not None else 'fails'}; valid_at {valid}")
        elif got is not None:
            t = res.type_of("out")
            assert isinstance(t, ss.TensorType) and t.ndim == 1 and got[0].shape == (c,), t
    assert misses == [], "\n".join(misses)
