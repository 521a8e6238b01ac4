"""Findings of the differential fuzzer's run-time-value and zero-size steps
(:mod:`tests.onnx.fuzz_steps_rt`, symbols declared ``min=0``), each fixed in an index/reduce/image
converter and checked against onnxruntime at several sizes (:func:`size_oracle.disagreements`:
the sizes it refuses excluded, the sizes it runs accepted, every output's shape symshape's with
the sizes substituted):

* a reduction whose axes are a graph input (computed at run time) was ``unsupported``
  (``shape-values``): now each output size is computed on shape values (``d_i`` or 1 with
  ``keepdims``, one axis dropped without it), an empty axes input (static ``(0,)``) is no axes;
* ``Resize`` of an axis of size 0 to a size other than 0 was accepted, where onnxruntime and
  onnx's reference evaluator both refuse it (a scale from 0);
* ``ScatterElements`` of a scalar (no axis 0) took the data's type, where onnxruntime refuses it;
* com.microsoft ``MultiHeadAttention`` broadcast a key/value batch of 1 against the query's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import helper
from onnx_helpers import In, make_model
from size_oracle import disagreements, feeds_of

import symshape as ss
import symshape.onnx as sso

N = helper.make_node
I64 = np.int64


def _check(
    nodes: Sequence[onnx.NodeProto],
    inputs: Sequence[In],
    sizes: Sequence[Mapping[str, int]],
    fed: Mapping[str, Any] | None = None,
    inits: Mapping[str, Any] | None = None,
    zero: bool = False,
    runner: str = "onnxruntime",
) -> sso.OnnxInferenceResult:
    outs = [o for n in nodes for o in n.output if o]
    model = make_model(nodes, inputs, outs, 18, dict(inits or {}), ir_version=8)
    names = sorted({d for i in inputs for d in i.shape or () if isinstance(d, str)})
    syms = {n: ss.dim(n, min=0) if zero else ss.dim(n) for n in names}
    got = disagreements(model, syms, sizes, feeds_of(inputs, fed), runner)
    assert got == [], "\n".join(got)
    return sso.infer(model, dims=syms)


XAB = In("x", "float32", ["a", "b", 3])
AB_SIZES = [{"a": 1, "b": 1}, {"a": 2, "b": 3}, {"a": 4, "b": 2}]


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMin", "ReduceL2", "ReduceLogSumExp"])
@pytest.mark.parametrize("keepdims", [0, 1])
@pytest.mark.parametrize("axes", [[0], [1], [-1], [2], [-3]])
def test_reduce_over_axes_computed_at_run_time(op: str, keepdims: int, axes: list[int]) -> None:
    res = _check(
        [N(op, ["x", "ax"], ["y"], keepdims=keepdims)],
        [XAB, In("ax", "int64", [1])],
        AB_SIZES,
        {"ax": np.array(axes, I64)},
    )
    assert not res.unsupported and res.status == "ok", res.report()
    assert res.type_of("y").ndim == 3 - (1 - keepdims)


def test_reduce_over_two_axes_computed_at_run_time_keeps_the_rank() -> None:
    res = _check(
        [N("ReduceMax", ["x", "ax"], ["y"], keepdims=1)],
        [XAB, In("ax", "int64", [2])],
        AB_SIZES,
        {"ax": np.array([0, -1], I64)},
    )
    assert res.type_of("y").ndim == 3
    # several run-time axes without keepdims: the rank is the run's (repeats are reduced once)
    node = N("ReduceMax", ["x", "ax"], ["y"], keepdims=0)
    m = make_model([node], [XAB, In("ax", "int64", [2])], ["y"], 18, {}, ir_version=8)
    assert sso.infer(m, dims={"a": ss.dim("a"), "b": ss.dim("b")}).unsupported


@pytest.mark.parametrize("noop", [0, 1])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_reduce_over_an_empty_axes_input(noop: int, keepdims: int) -> None:
    """An axes input of static shape ``(0,)`` is no axes, whatever its (absent) values."""
    res = _check(
        [N("ReduceSum", ["x", "ax"], ["y"], keepdims=keepdims, noop_with_empty_axes=noop)],
        [XAB, In("ax", "int64", [0])],
        AB_SIZES,
    )
    a, b = ss.dim("a"), ss.dim("b")
    want = ss.Tensor((a, b, 3) if noop else (1, 1, 1) if keepdims else (), "float32")
    assert res.type_of("y") == want


ZERO_SIZES = [{"c": 0}, {"c": 1}, {"c": 3}]


@pytest.mark.parametrize("sizes", [[2, 3], [0, 3], [2, 0], [0, 0]])
def test_resize_of_an_empty_axis(sizes: list[int]) -> None:
    """An empty axis resizes to 0 only: to 2 from ``c = 0`` both runtimes refuse. (A size 0 of a
    non-empty axis, onnxruntime refuses, the reference evaluator runs: symshape its rule.)"""
    res = _check(
        [N("Resize", ["x", "", "", "s"], ["y"], mode="nearest")],
        [In("x", "float32", ["c", 2])],
        ZERO_SIZES,
        inits={"s": np.array(sizes, I64)},
        zero=True,
        runner="onnxruntime" if 0 not in sizes else "reference",
    )
    c = ss.dim("c", min=0)
    assert res.valid_at({c: 0}) == (sizes[0] == 0)


def test_resize_to_sizes_computed_at_run_time_of_an_empty_axis() -> None:
    """The sizes from the shape (``c + 1``): never 0, so ``c`` must not be."""
    res = _check(
        [N("Shape", ["x"], ["sh"]), N("Add", ["sh", "one"], ["s"]), N("Resize", ["x", "", "", "s"], ["y"])],
        [In("x", "float32", ["c", 2])],
        ZERO_SIZES,
        inits={"one": np.array([1, 0], I64)},
        zero=True,
    )
    assert res.valid_when() == "c >= 1"


def test_scatter_elements_of_a_scalar_is_an_error() -> None:
    m = make_model(
        [N("ScatterElements", ["x", "i", "u"], ["y"], axis=0)],
        [In("x", "float32", []), In("i", "int64", [2]), In("u", "float32", [2])],
        ["y"], 18, {}, ir_version=8,
    )  # fmt: skip
    res = sso.infer(m)
    assert res.status == "error" and "out of range for rank 0" in res.report()


def test_multi_head_attention_key_and_value_batch_is_the_querys() -> None:
    """com.microsoft ``MultiHeadAttention``: a value batch of 1 for a query batch of 2 broadcast
    in the attention's matmul; onnxruntime refuses it."""
    node = helper.make_node("MultiHeadAttention", ["q", "k", "v"], ["y"], num_heads=2, domain="com.microsoft")
    ins = [In("q", "float32", ["b", 2, 4]), In("k", "float32", ["b", 3, 4]), In("v", "float32", ["n", 3, 4])]
    model = make_model([node], ins, ["y"], 18, {}, ir_version=8, extra_opsets={"com.microsoft": 1})
    sizes = [{"b": b, "n": n} for b in (1, 2) for n in (1, 2)]
    got = disagreements(model, ["b", "n"], sizes, feeds_of(ins))
    assert got == [], "\n".join(got)
    assert sso.infer(model, dims={"b": ss.dim("b"), "n": ss.dim("n")}).valid_when() == "b == n"


MS_OPSETS = {"com.microsoft": 1}


@pytest.mark.parametrize("op", ["FastGelu", "BiasGelu"])
def test_gelu_bias_is_the_last_axis_exactly(op: str) -> None:
    """A bias of 1 for a last axis of 3 broadcast; onnxruntime refuses it."""
    node = helper.make_node(op, ["x", "bias"], ["y"], domain="com.microsoft")
    ins = [In("x", "float32", [2, "h"]), In("bias", "float32", ["n"])]
    model = make_model([node], ins, ["y"], 18, {}, ir_version=8, extra_opsets=MS_OPSETS)
    sizes = [{"h": h, "n": n} for h in (1, 3) for n in (1, 3)]
    got = disagreements(model, ["h", "n"], sizes, feeds_of(ins))
    assert got == [], "\n".join(got)


@pytest.mark.parametrize("op", ["SkipLayerNormalization", "SkipSimplifiedLayerNormalization"])
def test_skip_layer_norm_skip_and_gamma_are_exact(op: str) -> None:
    """``skip (1, s, 1)`` and ``gamma (g,)`` for an input ``(2, s, h)``: only a skip batch of 1
    broadcasts, and gamma is ``(h,)`` (onnxruntime's checks)."""
    node = helper.make_node(op, ["x", "skip", "gamma"], ["y"], domain="com.microsoft")
    ins = [In("x", "float32", [2, 3, "h"]), In("skip", "float32", [1, 3, "k"]), In("gamma", "float32", ["g"])]
    model = make_model([node], ins, ["y"], 18, {}, ir_version=8, extra_opsets=MS_OPSETS)
    sizes = [{"h": h, "k": k, "g": g} for h in (1, 4) for k in (1, 4) for g in (1, 4)]
    got = disagreements(model, ["h", "k", "g"], sizes, feeds_of(ins))
    assert got == [], "\n".join(got)


def test_grid_sample_of_an_empty_spatial_axis_is_refused() -> None:
    """onnxruntime refuses to sample an input with an empty spatial axis (``a = 0``)."""
    res = _check(
        [N("GridSample", ["x", "grid"], ["y"])],
        [In("x", "float32", [1, 2, "a", 3]), In("grid", "float32", [1, 2, 2, 2])],
        [{"a": 0}, {"a": 1}, {"a": 4}],
        zero=True,
    )
    assert res.valid_when() == "a >= 1"
