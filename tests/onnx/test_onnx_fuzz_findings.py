"""The findings of the ONNX differential fuzzer (:mod:`tests.onnx.test_onnx_differential_fuzz`)
fixed outside the index/pad converters, each a small graph checked against onnxruntime at several
sizes (:func:`size_oracle.disagreements`: the sizes it refuses must be excluded, the sizes it runs
accepted, every output's shape symshape's with the sizes substituted). Each case failed before
its fix; the hunt2 notes' scripts of the same names show them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import helper
from onnx_helpers import In, make_model
from size_oracle import disagreements, feeds_of

N = helper.make_node
I64 = np.int64


@dataclass(frozen=True)
class Finding:
    """A graph (every node output a graph output unless ``outputs``), its inputs and constants,
    and the sizes onnxruntime runs it at."""

    name: str
    nodes: Sequence[onnx.NodeProto]
    inputs: Sequence[In]
    sizes: Sequence[Mapping[str, int]]
    inits: Mapping[str, Any] = field(default_factory=dict)
    opset: int = 18
    fed: Mapping[str, Any] | None = None

    def model(self) -> onnx.ModelProto:
        outs = [o for n in self.nodes for o in n.output if o]
        return make_model(self.nodes, self.inputs, outs, self.opset, dict(self.inits), ir_version=8)


def _b(*ns: int) -> list[dict[str, int]]:
    return [{"b": n} for n in ns]


def _bc(*ns: tuple[int, int]) -> list[dict[str, int]]:
    return [{"b": b, "c": c} for b, c in ns]


XB = In("x", "float32", ["b"])
XBC = In("x", "float32", ["b", "c"])
BC_SIZES = _bc((1, 1), (2, 2), (1, 3), (3, 1), (2, 3))

FINDINGS = [
    # reduce_prod_value.py: a reduction of a shape value is the entries' product/sum/max/min
    Finding(
        "reduce-prod-shape-reshape",
        [
            N("Shape", ["x"], ["sh"]),
            N("ReduceProd", ["sh", "z"], ["rp"], keepdims=1),
            N("Concat", ["sh", "rp"], ["t"], axis=0),
            N("Reshape", ["x", "t"], ["y"]),
        ],
        [XB],
        _b(1, 2, 3),
        {"z": np.array([0], I64)},
    ),
    Finding(
        "reduce-sum-shape-reshape",
        [
            N("Shape", ["x"], ["sh"]),
            N("ReduceSum", ["sh"], ["rs"], keepdims=1),
            N("Concat", ["rs", "one"], ["t"], axis=0),
            N("Reshape", ["x", "t"], ["y"]),
        ],
        [XBC],
        BC_SIZES,
        {"one": np.array([1], I64)},
    ),
    Finding(
        "reduce-max-min-shape-reshape",
        [
            N("Shape", ["x"], ["sh"]),
            N("Cast", ["sh"], ["s32"], to=onnx.TensorProto.INT32),
            N("ReduceMax", ["s32"], ["mx"], keepdims=1),
            N("ReduceMin", ["sh"], ["mn"], keepdims=1),
            N("Cast", ["mx"], ["mx64"], to=onnx.TensorProto.INT64),
            N("Concat", ["mx64", "mn", "sh"], ["t"], axis=0),
            N("Reshape", ["x", "t"], ["y"]),
        ],
        [XBC],
        BC_SIZES,
    ),
    Finding(
        "reduce-prod-flatten-tail",  # TorchScript's flatten(1): Shape -> Slice -> ReduceProd
        [
            N("Shape", ["x"], ["sh"]),
            N("Slice", ["sh", "s1", "s2"], ["tail"]),
            N("ReduceProd", ["tail"], ["p"], keepdims=0, axes=[0]),
            N("Unsqueeze", ["p", "z"], ["p1"]),
            N("Concat", ["p1", "sh"], ["t"], axis=0),
            N("Reshape", ["x", "t"], ["y"]),
        ],
        [In("x", "float32", ["b", "c", 2])],
        [{"b": 1, "c": 1}, {"b": 2, "c": 1}, {"b": 1, "c": 3}],
        {"s1": np.array([1], I64), "s2": np.array([3], I64), "z": np.array([0], I64)},
        opset=17,
    ),
    # slice_negative_step_start.py: on a negative step a start below -d is clamped to 0 (ONNX)
    Finding(
        "slice-negative-step-start",
        [N("Slice", ["x", "s", "e", "a", "st"], ["y"])],
        [In("x", "float32", ["b", 4])],
        _b(1, 2, 3),
        {
            "s": np.array([-2], I64),
            "e": np.array([-2], I64),
            "a": np.array([0], I64),
            "st": np.array([-1], I64),
        },
    ),
    Finding(
        "slice-negative-step-start-two-axes",
        [N("Slice", ["x", "s", "e", "a", "st"], ["y"])],
        [XBC],
        BC_SIZES,
        {
            "s": np.array([-3, 1], I64),
            "e": np.array([-10, -(2**62)], I64),
            "a": np.array([-1, 0], I64),
            "st": np.array([-2, -1], I64),
        },
    ),
    Finding(
        "slice-negative-step-start-shape-value",
        [
            N("Shape", ["x"], ["sh"]),
            N("Slice", ["sh", "s", "e", "a", "st"], ["v"]),
            N("Reshape", ["x", "v"], ["y"]),
        ],
        [XB],
        _b(1, 2, 3),
        {
            "s": np.array([-3], I64),
            "e": np.array([-(2**62)], I64),
            "a": np.array([0], I64),
            "st": np.array([-1], I64),
        },
    ),
    # tile_runtime_repeats.py: repeats computed at run time must have the input's rank (no
    # numpy padding)
    Finding(
        "tile-input-repeats-short",
        [N("Tile", ["x", "k"], ["y"])],
        [In("x", "float32", ["b", 2]), In("k", "int64", [1])],
        _b(1, 2),
        fed={"k": np.array([2], I64)},
    ),
    Finding(
        "tile-reduce-prod-repeats",
        [N("Shape", ["x"], ["sh"]), N("ReduceProd", ["sh"], ["p"], keepdims=1), N("Tile", ["x", "p"], ["y"])],
        [XBC],
        BC_SIZES,
    ),
    Finding(
        "tile-shape-repeats-long",
        [N("Shape", ["x"], ["sh"]), N("Concat", ["sh", "sh"], ["k"], axis=0), N("Tile", ["x", "k"], ["y"])],
        [XB],
        _b(1, 2),
    ),
    Finding(
        "tile-shape-repeats",  # (runs: the same length)
        [N("Shape", ["x"], ["sh"]), N("Tile", ["x", "sh"], ["y"])],
        [XBC],
        BC_SIZES,
    ),
    # split_num_outputs_negative_last.py: the last part d - (n - 1)*ceil(d/n) must not be negative
    Finding(
        "split-3-symbolic",
        [N("Split", ["x"], ["p0", "p1", "p2"], axis=1, num_outputs=3)],
        [In("x", "float32", [2, "b"])],
        _b(1, 2, 3, 4, 5, 7),
    ),
    Finding(
        "split-4-symbolic",
        [N("Split", ["x"], ["p0", "p1", "p2", "p3"], axis=-1, num_outputs=4)],
        [In("x", "float32", ["b"])],
        _b(1, 2, 3, 4, 5, 6, 7, 9),
    ),
    Finding(
        "split-3-static",
        [N("Split", ["x"], ["p0", "p1", "p2"], axis=1, num_outputs=3)],
        [In("x", "float32", ["b", 1])],
        _b(1, 2),
    ),
    # layer_norm_empty.py: X.shape[axis:] must not be empty (its batch axes may)
    *(
        Finding(
            f"layer-norm-empty-{name}",
            [
                N("Slice", ["x", "s", "e", "a"], ["xs"]),
                N("LayerNormalization", ["xs", "scale"], outs, axis=axis),
            ],
            [In("x", "float32", ["b", "c", 3]), In("scale", "float32", [1])],
            [{"b": b, "c": c} for b in (1, 2, 3) for c in (1, 2, 3)],
            {"s": np.array([2], I64), "e": np.array([2**62], I64), "a": np.array([cut], I64)},
        )
        for name, cut, axis, outs in (
            ("last-two", 1, -2, ["y", "mean"]),
            ("all", 1, 0, ["y", "mean", "inv"]),
            ("middle", 1, 1, ["y"]),
            ("batch-empty", 0, 1, ["y", "mean"]),  # (runs: only the batch axis is empty)
            ("batch-empty-neg", 0, -2, ["y"]),
        )
    ),
    # folding_unchecked_indices.py: constant indices out of range are not folded (the converter
    # reports them; onnx's reference evaluator does not check GatherElements')
    *(
        Finding(
            f"folding-{op}-{name}",
            [N("Identity", ["x"], ["xi"]), N(op, ["data", "idx"], ["g"], **dict[str, Any](attrs))],
            [XB],
            _b(1, 2),
            {"data": np.array(data, I64), "idx": np.array(idx, I64)},
        )
        for op, name, data, idx, attrs in (
            ("GatherElements", "over", [5, 6], [2, 0], {}),
            ("GatherElements", "under", [[5, 6], [7, 8]], [[0, -3]], {"axis": 1}),
            ("GatherElements", "in-range", [[5, 6], [7, 8]], [[1, -2]], {"axis": 1}),
            ("Gather", "over", [5, 6], [0, 2], {}),
            ("Gather", "in-range", [[5, 6]], [-1, 1, 0], {"axis": 1}),
            ("GatherND", "over", [[5, 6], [7, 8]], [[0, 2]], {}),
            ("GatherND", "in-range", [[5, 6], [7, 8]], [[1, -1], [0, 0]], {}),
        )
    ),
    # pool_rank_and_same_pads.py: MaxPool/AveragePool SAME with a stride over the window fail
    # where onnxruntime's total pad is negative ((d - 1) % s >= K)
    *(
        Finding(
            f"pool-same-{op}-{pad}-k{k}-s{s}",
            [N(op, ["x"], ["y"], kernel_shape=[k, 1], strides=[s, 1], auto_pad=pad)],
            [In("x", "float32", [1, 2, "b", 3])],
            _b(1, 2, 3, 4, 5, 6, 7),
        )
        for op in ("MaxPool", "AveragePool", "LpPool")
        for pad in ("SAME_UPPER", "SAME_LOWER")
        for k, s in ((1, 2), (2, 3), (1, 3), (3, 2))
    ),
    *(
        Finding(
            f"pool-same-static-{d}",
            [N("MaxPool", ["x"], ["y"], kernel_shape=[1, 1], strides=[2, 1], auto_pad="SAME_UPPER")],
            [In("x", "float32", [1, "b", d, 3])],
            _b(1, 2),
        )
        for d in (3, 4)
    ),
]


@pytest.mark.parametrize("case", FINDINGS, ids=lambda c: c.name)
def test_finding_against_onnxruntime(case: Finding) -> None:
    names = sorted({d for i in case.inputs for d in i.shape or () if isinstance(d, str)})
    got = disagreements(case.model(), names, case.sizes, feeds_of(case.inputs, case.fed))
    assert got == [], "\n".join(got)
