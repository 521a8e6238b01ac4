"""``Loop`` (symshape.onnx.ops.control): its body applied once, against onnxruntime at several
sizes (1 included) with the sizes symbolic.

* a state the body gives back with its type keeps it; a scan output has the iteration count first:
  the trip count when the condition stays true (a symbolic one: ``Shape(x)[0]``), 0 for a false
  condition, a new symbol when the body computes the condition;
* the iteration number is a symbol from 0 to the trip count less one (``x[i:i+1]`` is one row);
* a state whose type changes from one iteration to the next (a ``Concat`` that grows it) gets an
  unknown rank, as do the scan outputs then: nothing is claimed that a later iteration breaks.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx_helpers import In, make_model, node, run_ort, symbols_of
from size_oracle import disagreements, feeds_of

import symshape as ss
import symshape.onnx as sso

F = "float32"
SIZES = [{"n": 1}, {"n": 2}, {"n": 5}]


def _vi(name: str, et: int, shape: list[Any] | None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, et, shape)


def _body(nodes: list[onnx.NodeProto], states: list[str], outs: list[str]) -> onnx.GraphProto:
    """A loop body: inputs ``i`` (int64), ``c`` (bool), the states; outputs ``c_out``, ``outs``."""
    ins = [_vi("i", TensorProto.INT64, []), _vi("c", TensorProto.BOOL, [])]
    ins += [_vi(s, TensorProto.FLOAT, None) for s in states]
    return helper.make_graph(
        nodes,
        "body",
        ins,
        [_vi("c_out", TensorProto.BOOL, [])] + [_vi(o, TensorProto.FLOAT, None) for o in outs],
    )


def _running_sum(cond_out: onnx.NodeProto, trip: list[onnx.NodeProto]) -> onnx.ModelProto:
    """``s`` (3,) plus row ``i`` of ``x (n, 3)`` per iteration; scan outputs the sum and the row."""
    body = _body(
        [
            cond_out,
            node("Gather", ["x", "i"], ["row"], name="row", axis=0),
            node("Add", ["s", "row"], ["s_out"], name="acc"),
            node("Identity", ["s_out"], ["y"], name="emit"),
        ],
        ["s"],
        ["s_out", "y", "row"],
    )
    ns = trip + [node("Loop", ["m", "cond", "s0"], ["s", "ys", "rows"], name="loop", body=body)]
    ins = [In("x", F, ("n", 3)), In("s0", F, (3,))]
    inits = {"cond": np.array(True)}
    return make_model(ns, ins, ["s", "ys", "rows"], opset=16, inits=inits)


_TRIP_IS_N = [
    node("Constant", [], ["zero"], name="zero", value=onnx.numpy_helper.from_array(np.array(0, np.int64))),
    node("Shape", ["x"], ["sh"], name="sh"),
    node("Gather", ["sh", "zero"], ["m"], name="m", axis=0),
]


def test_trip_count_from_a_shape_stacks_n_rows() -> None:
    model = _running_sum(node("Identity", ["c"], ["c_out"], name="keep"), _TRIP_IS_N)
    ins = [In("x", F, ("n", 3)), In("s0", F, (3,))]
    res = sso.infer(model, dims=symbols_of(ins))
    assert res.status == "ok", res.report()
    assert [str(res.type_of(o)) for o in ("s", "ys", "rows")] == [
        "Tensor[(3,), float32]",
        "Tensor[(n, 3), float32]",
        "Tensor[(n, 3), float32]",
    ]
    assert disagreements(model, ["n"], SIZES, feeds_of(ins)) == []


def test_a_condition_the_body_computes_leaves_the_count_open() -> None:
    cond_out = node("Less", ["i", "two"], ["c_out"], name="less")
    two = node("Constant", [], ["two"], name="two", value=onnx.numpy_helper.from_array(np.array(2, np.int64)))
    model = _running_sum(cond_out, _TRIP_IS_N + [two])
    ins = [In("x", F, ("n", 3)), In("s0", F, (3,))]
    res = sso.infer(model, dims=symbols_of(ins))
    assert res.status == "ok", res.report()
    t = res.type_of("ys")
    assert isinstance(t, ss.TensorType) and t.ndim == 2 and t.dims[1] == 3
    assert not t.dims[0].is_constant and ss.dim("n") not in t.dims[0].symbols
    assert disagreements(model, ["n"], SIZES, feeds_of(ins)) == []


@pytest.mark.parametrize("trip", [1, 3, 5])
def test_a_constant_trip_count_and_a_slice_at_the_iteration(trip: int) -> None:
    """onnx's test_loop11 at several trip counts: ``y + x[i:i+1]``, one row per iteration."""
    body = _body(
        [
            node("Identity", ["c"], ["c_out"], name="keep"),
            node("Add", ["i", "one"], ["end"], name="end"),
            node("Unsqueeze", ["i", "ax"], ["b"], name="b"),
            node("Unsqueeze", ["end", "ax"], ["e"], name="e"),
            node("Slice", ["x", "b", "e"], ["piece"], name="piece"),
            node("Add", ["y", "piece"], ["y_out"], name="acc"),
            node("Identity", ["y_out"], ["scan"], name="emit"),
        ],
        ["y"],
        ["y_out", "scan"],
    )
    inits = {
        "m": np.array(trip, np.int64),
        "cond": np.array(True),
        "one": np.array(1, np.int64),
        "ax": np.array([0], np.int64),
    }
    ns = [node("Loop", ["m", "cond", "y0"], ["y", "ys"], name="loop", body=body)]
    ins = [In("x", F, (5,)), In("y0", F, ("k",))]
    model = make_model(ns, ins, ["y", "ys"], opset=13, inits=inits)
    res = sso.infer(model, dims=symbols_of(ins))
    assert str(res.type_of("ys")).startswith(f"Tensor[({trip}, "), res.report()
    assert disagreements(model, ["k"], [{"k": 1}, {"k": 3}], feeds_of(ins)) == []


def test_a_false_condition_runs_no_iteration() -> None:
    model = _running_sum(node("Identity", ["c"], ["c_out"], name="keep"), _TRIP_IS_N)
    model.graph.initializer[0].CopyFrom(onnx.numpy_helper.from_array(np.array(False), "cond"))
    ins = [In("x", F, ("n", 3)), In("s0", F, (3,))]
    res = sso.infer(model, dims=symbols_of(ins))
    # the final state is the initial one; onnxruntime gives a scan output (0, 3) when its
    # inference knows the body's output shape, else (0,): symshape claims no rank
    assert [str(res.type_of(o)) for o in ("s", "ys", "rows")] == [
        "Tensor[(3,), float32]",
        "Tensor[?, float32]",
        "Tensor[?, float32]",
    ]
    for n in (1, 4):
        got = run_ort(model, {"x": np.zeros((n, 3), np.float32), "s0": np.zeros(3, np.float32)})
        assert got[0].shape == (3,) and got[1].shape[0] == got[2].shape[0] == 0


def test_a_state_that_grows_has_a_size_the_run_decides() -> None:
    """``s = concat(s, x)`` every iteration: after one it is ``(k + 3,)``, after two ``(k + 6,)``;
    the body is applied again to ``(?,)`` (the size that changed any size), which covers what it
    gives: the final state is ``(?,)``; the scan output (``x``, the same every iteration) is
    ``(3, 3)``."""
    body = _body(
        [
            node("Identity", ["c"], ["c_out"], name="keep"),
            node("Concat", ["s", "x"], ["s_out"], name="grow", axis=0),
            node("Identity", ["x"], ["same"], name="same"),
        ],
        ["s"],
        ["s_out", "same"],
    )
    inits = {"m": np.array(3, np.int64), "cond": np.array(True)}
    ns = [node("Loop", ["m", "cond", "s0"], ["s", "xs"], name="loop", body=body)]
    ins = [In("x", F, (3,)), In("s0", F, ("k",))]
    model = make_model(ns, ins, ["s", "xs"], opset=16, inits=inits)
    res = sso.infer(model, dims=symbols_of(ins))
    assert res.status == "ok", res.report()
    assert str(res.type_of("s")) == "Tensor[(?,), float32]"
    assert str(res.type_of("xs")) == "Tensor[(3, 3), float32]"
    got = run_ort(model, {"x": np.zeros(3, np.float32), "s0": np.zeros(2, np.float32)})
    assert got[0].shape == (11,) and got[1].shape == (3, 3)


def test_a_sequence_grown_in_the_loop() -> None:
    """A sequence that starts empty and gets ``x[:i+1]`` each iteration: its elements are 1-d."""
    body = _body(
        [
            node("Identity", ["c"], ["c_out"], name="keep"),
            node("Add", ["i", "one"], ["end"], name="end"),
            node("Unsqueeze", ["end", "ax"], ["e"], name="e"),
            node("Slice", ["x", "start", "e"], ["piece"], name="piece"),
            node("SequenceInsert", ["s", "piece"], ["s_out"], name="grow"),
        ],
        ["s"],
        ["s_out"],
    )
    body.input[2].CopyFrom(helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None))
    body.output[1].CopyFrom(helper.make_tensor_sequence_value_info("s_out", TensorProto.FLOAT, None))
    inits = {
        "cond": np.array(True),
        "one": np.array(1, np.int64),
        "ax": np.array([0], np.int64),
        "start": np.array([0], np.int64),
    }
    ns = _TRIP_IS_N + [
        node("SequenceEmpty", [], ["empty"], name="empty", dtype=TensorProto.FLOAT),
        node("Loop", ["m", "cond", "empty"], ["seq"], name="loop", body=body),
        node("ConcatFromSequence", ["seq"], ["flat"], name="flat", axis=0),
    ]
    model = make_model(ns, [In("x", F, ("n",))], ["seq", "flat"], opset=16, inits=inits)
    res = sso.infer(model, dims={"n": ss.dim("n")})
    assert res.status == "ok", res.report()
    t = res.type_of("seq")
    # the body sees the sequence before the first iteration (empty), then a sequence of unknown
    # length of what it added (1-d of a size the iteration number gives: a `?`), which it grows
    # by elements of that type (a fixpoint): 1-d elements (found by review: a body reading the
    # length gave wrong sizes when it saw the empty sequence only)
    assert str(t) == "Sequence[Tensor[(?,), float32]]", t
    flat = res.type_of("flat")
    assert isinstance(flat, ss.TensorType) and flat.ndim == 1 and flat.dtype == "float32"
    for n in (1, 4):
        seq, flat_arr = _ort_raw(model, {"x": np.zeros(n, np.float32)})
        assert [np.asarray(a).shape for a in seq] == [(k + 1,) for k in range(n)]
        assert flat_arr.shape == (n * (n + 1) // 2,)


def _ort_raw(model: onnx.ModelProto, feeds: dict[str, Any]) -> list[Any]:
    """onnxruntime's outputs as it gives them (a sequence: a list of arrays)."""
    import onnxruntime as ort

    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return list(sess.run(None, feeds))


def test_a_row_per_iteration_needs_as_many_rows_as_iterations() -> None:
    """A constant trip count of 5 reading row ``i`` of ``x (n, 3)``: the iteration number is one of
    0 to 4, and the index check is required of each (onnxruntime refuses ``n < 5``)."""
    five = node("Constant", [], ["m"], name="m", value=onnx.numpy_helper.from_array(np.array(5, np.int64)))
    model = _running_sum(node("Identity", ["c"], ["c_out"], name="keep"), [five])
    ins = [In("x", F, ("n", 3)), In("s0", F, (3,))]
    res = sso.infer(model, dims=symbols_of(ins))
    assert res.status == "guarded", res.report()
    n = ss.dim("n")
    assert [res.valid_at({n: k}) for k in (1, 4, 5, 6)] == [False, False, True, True]
    assert str(res.type_of("ys")) == "Tensor[(5, 3), float32]"
    assert disagreements(model, ["n"], [{"n": 1}, {"n": 4}, {"n": 5}, {"n": 6}], feeds_of(ins)) == []


def test_a_loop_that_may_stop_early_requires_no_row_it_may_not_read() -> None:
    """A trip count of 5 whose body stops the loop after ``i == 2``: rows 0 to 2 of ``x (3, 3)``
    are read (onnxruntime runs it); the count is a new symbol and row ``i`` is not required for
    ``i`` up to 4."""
    five = node("Constant", [], ["m"], name="m", value=onnx.numpy_helper.from_array(np.array(5, np.int64)))
    two = node("Constant", [], ["two"], name="two", value=onnx.numpy_helper.from_array(np.array(2, np.int64)))
    model = _running_sum(node("Less", ["i", "two"], ["c_out"], name="less"), [five, two])
    model.graph.input[0].type.tensor_type.shape.dim[0].Clear()
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 3
    res = sso.infer(model)
    assert res.status == "ok", res.report()
    t = res.type_of("ys")
    assert isinstance(t, ss.TensorType) and t.ndim == 2 and not t.dims[0].is_constant and t.dims[1] == 3
    got = run_ort(model, {"x": np.zeros((3, 3), np.float32), "s0": np.zeros(3, np.float32)})
    assert got[1].shape == (3, 3)


def test_zero_iterations_apply_no_body() -> None:
    """A trip count of 0: the body (which would read row 7 of ``x (3, 3)``) never runs."""
    zero = node("Constant", [], ["m"], name="m", value=onnx.numpy_helper.from_array(np.array(0, np.int64)))
    model = _running_sum(node("Identity", ["c"], ["c_out"], name="keep"), [zero])
    seven = onnx.numpy_helper.from_array(np.array(7, np.int64), "i7")
    body = model.graph.node[-1].attribute[0].g
    body.node[1].input[1] = "i7"
    body.initializer.append(seven)
    model.graph.input[0].type.tensor_type.shape.dim[0].Clear()
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 3
    res = sso.infer(model)
    assert res.status == "ok", res.report()
    assert str(res.type_of("s")) == "Tensor[(3,), float32]"
    got = run_ort(model, {"x": np.zeros((3, 3), np.float32), "s0": np.zeros(3, np.float32)})
    assert got[0].shape == (3,) and got[1].shape[0] == 0
