"""Oracle: ONNX ``Loop`` whose loop-carried tensor changes type from one iteration to the next (it
grows, doubles, is transposed or reshaped by the iteration number), against onnxruntime (graph
optimizations off) at trip counts 0, 1 and 3.

The body is first applied to the initial states; a state whose type that changes is generalized
(``onnx.loop_tensor``: each size that changed a ``?``) and the body applied again, so the body's
checks hold at every iteration and the final state is a type that covers them all. At every size:
where onnxruntime runs, each output's shape is symshape's type with the sizes substituted (a ``?``
matches any size) and the guards over the given sizes hold; where it refuses, a guard fails or a
guard is over a size the run decides. A loop whose state keeps its type is applied once, as before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_helpers import run_ort_plain

import symshape as ss
import symshape.onnx as sso

ort = pytest.importorskip("onnxruntime")

F = TensorProto.FLOAT
ONE_ROW = np.ones((1, 2), np.float32)


def loop_model(
    nodes: Sequence[onnx.NodeProto],
    inits: Mapping[str, Any],
    scans: Sequence[str] = (),
    trip: int | None = None,
) -> onnx.ModelProto:
    """``y, *scans = Loop(M, true, x)`` with ``x`` ``(N, 2)``; the body ``(i, c, s) -> (c, s_out,
    *scans)`` (``nodes``, its constants ``inits``); the trip count ``M`` an input, or ``trip``."""
    b_in = [
        helper.make_tensor_value_info("i", TensorProto.INT64, []),
        helper.make_tensor_value_info("c", TensorProto.BOOL, []),
        helper.make_tensor_value_info("s", F, None),
    ]
    b_out = [
        helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
        helper.make_tensor_value_info("s_out", F, None),
    ]
    b_out += [helper.make_tensor_value_info(n, F, None) for n in scans]
    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c_out"]), *nodes], "body", b_in, b_out,
        [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()],
    )  # fmt: skip
    ins = [helper.make_tensor_value_info("x", F, ["N", 2])]
    ts = [numpy_helper.from_array(np.array(True), "cond")]
    if trip is None:
        ins.append(helper.make_tensor_value_info("M", TensorProto.INT64, []))
    else:
        ts.append(numpy_helper.from_array(np.array(trip, np.int64), "M"))
    outs = ["y", *(f"all_{n}" for n in scans)]
    g = helper.make_graph(
        [helper.make_node("Loop", ["M", "cond", "x"], outs, body=body)], "g", ins,
        [helper.make_empty_tensor_value_info(o) for o in outs], ts,
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def disagreements(model: onnx.ModelProto, trips: Sequence[int] = (0, 1, 3)) -> list[str]:
    """Each ``(N, M)`` (``N`` in 1..3, ``M`` in ``trips``) where onnxruntime and symshape disagree
    (see the module docstring)."""
    n_sym = ss.dim("N")
    res = sso.infer(model, dims={"N": n_sym})
    assert not res.unsupported and not res.errors, res.report()
    has_input_trip = any(i.name == "M" for i in model.graph.input)
    out: list[str] = []
    for n in (1, 2, 3):
        for m in trips if has_input_trip else (None,):
            feeds: dict[str, np.ndarray[Any, Any]] = {"x": np.ones((n, 2), np.float32)}
            if m is not None:
                feeds["M"] = np.array(m, np.int64)
            got = run_ort_plain(model, feeds)
            try:
                valid: bool | None = res.valid_at({n_sym: n})
            except ss.SymshapeError:  # (a guard over a size the run decides)
                valid = None
            where = f"N={n} M={m}"
            if got is None:
                if valid:
                    out.append(f"{where}: onnxruntime refuses; symshape accepts: {res.report()}")
                elif valid is None and not any("?" in str(g.cond) or "u" in str(g.cond) for g in res.guards):
                    out.append(f"{where}: onnxruntime refuses; no guard says why")
                continue
            if valid is False:
                out.append(f"{where}: onnxruntime runs; symshape excludes it: {res.report()}")
            for o, arr in zip(model.graph.output, got):
                t = res.type_of(o.name)
                assert isinstance(t, ss.TensorType)
                if t.ndim is None:
                    continue
                shape = [int(d) if d.is_constant else None for d in t.subs({n_sym: n}).dims]
                if arr.shape == (0,) and shape and shape[0] in (0, None):
                    continue  # (no iteration: onnxruntime's scan output is (0,) unless it knows more)
                if len(shape) != arr.ndim or any(d is not None and d != a for d, a in zip(shape, arr.shape)):
                    out.append(f"{where}: {o.name}: symshape {t} -> {shape}, onnxruntime {arr.shape}")
    return out


def concat(*ins: str, out: str = "s_out", axis: int = 0) -> onnx.NodeProto:
    return helper.make_node("Concat", list(ins), [out], axis=axis)


def test_a_state_that_grows_by_a_row() -> None:
    """``s = concat(s, row)``: ``(N + i, 2)`` at iteration ``i``; the final state is ``(?, 2)``."""
    m = loop_model([concat("s", "row")], {"row": ONE_ROW})
    res = sso.infer(m, dims={"N": ss.dim("N")})
    assert res.status == "ok" and str(res.type_of("y")) == "Tensor[(?, 2), float32]", res.report()
    assert disagreements(m) == []


def test_a_state_that_doubles() -> None:
    m = loop_model([concat("s", "s")], {})
    res = sso.infer(m, dims={"N": ss.dim("N")})
    assert res.status == "ok" and str(res.type_of("y")) == "Tensor[(?, 2), float32]", res.report()
    assert disagreements(m) == []


def test_a_check_on_the_grown_state_at_later_iterations() -> None:
    """The body adds the state to a ``(2, 2)`` constant: the first iteration needs ``N`` 1 or 2,
    the later ones the grown size 1 or 2 (a guard over the size the run decides): onnxruntime
    refuses ``M == 3`` at every ``N``, which the first iteration's types alone would accept at
    ``N == 1``. (At ``M == 0`` no iteration runs, and onnxruntime runs at ``N == 3`` too: the
    body's checks are required whether an iteration runs or not, as before.)"""
    m = loop_model([concat("s", "row"), helper.make_node("Add", ["s", "two"], ["t"])],
                   {"row": ONE_ROW, "two": np.ones((2, 2), np.float32)})  # fmt: skip
    res = sso.infer(m, dims={"N": ss.dim("N")})
    conds = [str(g.cond) for g in res.guards]
    assert conds == ["N == 1 or N == 2", "? == 1 or ? == 2"], res.report()
    assert "onnx.loop_tensor" in res.report()
    assert run_ort_plain(m, {"x": np.ones((1, 2), np.float32), "M": np.array(3, np.int64)}) is None
    assert disagreements(m, trips=(1, 3)) == []
    assert run_ort_plain(m, {"x": np.ones((3, 2), np.float32), "M": np.array(0, np.int64)}) is not None


def test_a_state_reshaped_by_the_iteration_number() -> None:
    """``s = reshape(concat(s, row), [i + 1, -1])``: ``(1, 2N + 2)`` after the first iteration,
    whose concatenation with a ``(1, 2)`` row then fails: the later iterations need the state's
    (run-decided) width to be 2, which it is not."""
    m = loop_model(
        [concat("s", "row", out="g"),
         helper.make_node("Add", ["i", "one"], ["i1"]),
         helper.make_node("Unsqueeze", ["i1", "zero"], ["i1v"]),
         helper.make_node("Concat", ["i1v", "minus1"], ["target"], axis=0),
         helper.make_node("Reshape", ["g", "target"], ["s_out"])],
        {"row": ONE_ROW, "one": np.array(1, np.int64), "zero": np.array([0], np.int64),
         "minus1": np.array([-1], np.int64)},
    )  # fmt: skip
    res = sso.infer(m, dims={"N": ss.dim("N")})
    assert [str(g.cond) for g in res.guards] == ["? == 2"], res.report()
    assert str(res.type_of("y")) == "Tensor[(?, ?), float32]"
    assert disagreements(m) == []


def test_a_state_transposed_every_iteration() -> None:
    m = loop_model([helper.make_node("Transpose", ["s"], ["s_out"], perm=[1, 0])], {})
    res = sso.infer(m, dims={"N": ss.dim("N")})
    assert res.status == "ok" and str(res.type_of("y")) == "Tensor[(?, ?), float32]", res.report()
    assert disagreements(m) == []


def test_a_scan_output_of_the_grown_state() -> None:
    """The scan output is the grown state: onnxruntime refuses to stack iterations of different
    shapes, so it runs ``M <= 1`` only (``(M, N + 1, 2)``); symshape requires one iteration or the
    later shape equal to the first (a guard over the run's sizes)."""
    m = loop_model([concat("s", "row"), helper.make_node("Identity", ["s_out"], ["seen"])],
                   {"row": ONE_ROW}, scans=["seen"])  # fmt: skip
    res = sso.infer(m, dims={"N": ss.dim("N")})
    assert str(res.type_of("all_seen")).endswith(", N + 1, 2), float32]"), res.type_of("all_seen")
    assert len(res.guards) == 1 and "<= 1" in str(res.guards[0].cond), res.report()
    assert "scan" in res.report() or "loop_result" in res.report()
    assert disagreements(m) == []


def test_a_constant_trip_count() -> None:
    """Three iterations (a constant trip count): the grown state with a check on it."""
    m = loop_model([concat("s", "row"), helper.make_node("Add", ["s", "two"], ["t"])],
                   {"row": ONE_ROW, "two": np.ones((2, 2), np.float32)}, trip=3)  # fmt: skip
    assert disagreements(m) == []
    assert sso.infer(m, dims={"N": ss.dim("N")}).status == "guarded"
    one = loop_model([concat("s", "row")], {"row": ONE_ROW}, trip=1)  # (one iteration: exact)
    res = sso.infer(one, dims={"N": ss.dim("N")})
    assert str(res.type_of("y")) in ("Tensor[(N + 1, 2), float32]", "Tensor[?, float32]"), res.type_of("y")
    assert disagreements(one) == []


def test_a_state_of_one_type_is_applied_once() -> None:
    """``s = s + row`` keeps its type: the body is applied once (no ``loop_tensor``), the final
    state is ``(N, 2)``."""
    m = loop_model([helper.make_node("Add", ["s", "row"], ["s_out"])], {"row": ONE_ROW})
    res = sso.infer(m, dims={"N": ss.dim("N")})
    assert res.status == "ok" and str(res.type_of("y")) == "Tensor[(N, 2), float32]", res.report()
    assert "loop_tensor" not in str(sso.from_onnx(m, dims={"N": ss.dim("N")}))
    assert disagreements(m) == []
