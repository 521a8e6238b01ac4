"""The older forms of operators whose inputs or attributes changed across opsets, which onnx's
version converter cannot reach from the node cases (it has no adapter down from Slice-13, Pad-18,
Resize-19, Clip-13, TopK-11, ...; see ``opset_sweep``): one hand-written node per form, batch
``N``, against onnxruntime at ``N`` = 1, 2, 3 (``size_oracle.disagreements``: every output's type
with the size substituted is the run shape and dtype, the guards hold)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx_helpers import In, make_model, node
from size_oracle import disagreements, feeds_of

import symshape as ss
import symshape.onnx as sso

X = In("x", "float32", ("N", 3, 8, 8))
X2 = In("x", "float32", ("N", 6))
X3 = In("x", "float32", ("N", 1, 4))
I64 = np.int64
F32 = np.float32
BN_W = {k: np.ones(3, F32) for k in ("s", "b", "m", "v")}

# (id, opset, nodes, inputs, initializers, outputs)
CASES: list[tuple[str, int, list[Any], list[In], dict[str, Any], list[str]]] = [
    ("reshape5", 7, [node("Reshape", ["x", "sh"], ["y"])], [X], {"sh": np.array([0, -1], I64)}, ["y"]),
    ("squeeze1", 7, [node("Squeeze", ["x"], ["y"], axes=[1])], [X3], {}, ["y"]),
    ("unsqueeze1", 7, [node("Unsqueeze", ["x"], ["y"], axes=[0, 3])], [X3], {}, ["y"]),
    ("squeeze11", 11, [node("Squeeze", ["x"], ["y"], axes=[-2])], [X3], {}, ["y"]),
    ("split2", 7, [node("Split", ["x"], ["a", "b"], axis=1, split=[2, 4])], [X2], {}, ["a", "b"]),
    ("split2_equal", 7, [node("Split", ["x"], ["a", "b", "c"], axis=1)], [X2], {}, ["a", "b", "c"]),
    (
        "split13",
        13,
        [node("Split", ["x", "sp"], ["a", "b"], axis=1)],
        [X2],
        {"sp": np.array([5, 1], I64)},
        ["a", "b"],
    ),
    (
        "split18_num",
        18,
        [node("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3)],
        [X2],
        {},
        ["a", "b", "c"],
    ),
    ("reducemean1", 7, [node("ReduceMean", ["x"], ["y"], axes=[1], keepdims=0)], [X], {}, ["y"]),
    ("reducesum11", 11, [node("ReduceSum", ["x"], ["y"], axes=[-1, 0])], [X], {}, ["y"]),
    ("reducemax13", 13, [node("ReduceMax", ["x"], ["y"], axes=[2], keepdims=0)], [X], {}, ["y"]),
    (
        "reducesum13",
        13,
        [node("ReduceSum", ["x", "ax"], ["y"], keepdims=0)],
        [X],
        {"ax": np.array([0], I64)},
        ["y"],
    ),
    ("reducemax18", 18, [node("ReduceMax", ["x", "ax"], ["y"])], [X], {"ax": np.array([1, 3], I64)}, ["y"]),
    ("reducel2_18_noaxes", 18, [node("ReduceL2", ["x"], ["y"], keepdims=0)], [X], {}, ["y"]),
    (
        "slice1",
        7,
        [node("Slice", ["x"], ["y"], starts=[1, 0], ends=[1000, -2], axes=[0, 3])],
        [X],
        {},
        ["y"],
    ),
    (
        "slice10",
        10,
        [node("Slice", ["x", "st", "en", "ax", "sp"], ["y"])],
        [X],
        {
            "st": np.array([-1, 7], I64),
            "en": np.array([-1000, 0], I64),
            "ax": np.array([0, 2], I64),
            "sp": np.array([-1, -3], I64),
        },
        ["y"],
    ),
    ("pad2", 7, [node("Pad", ["x"], ["y"], pads=[1, 0, 2, 1, 0, 0, 0, 3], mode="constant")], [X], {}, ["y"]),
    (
        "pad2_reflect",
        7,
        [node("Pad", ["x"], ["y"], pads=[0, 0, 2, 1, 0, 0, 1, 3], mode="reflect")],
        [X],
        {},
        ["y"],
    ),
    (
        "pad11",
        11,
        [node("Pad", ["x", "p"], ["y"], mode="edge")],
        [X],
        {"p": np.array([0, 1, 0, 2, 0, 0, 3, 0], I64)},
        ["y"],
    ),
    (
        "pad18_axes",
        18,
        [node("Pad", ["x", "p", "", "ax"], ["y"])],
        [X],
        {"p": np.array([1, 2, 3, 4], I64), "ax": np.array([0, -1], I64)},
        ["y"],
    ),
    ("upsample7", 7, [node("Upsample", ["x"], ["y"], scales=[1.0, 1.0, 2.0, 3.0])], [X], {}, ["y"]),
    (
        "upsample9",
        9,
        [node("Upsample", ["x", "s"], ["y"])],
        [X],
        {"s": np.array([1, 1, 1.5, 2], F32)},
        ["y"],
    ),
    ("resize10", 10, [node("Resize", ["x", "s"], ["y"])], [X], {"s": np.array([1, 1, 0.5, 2.5], F32)}, ["y"]),
    (
        "resize11_scales",
        11,
        [node("Resize", ["x", "r", "s"], ["y"])],
        [X],
        {"r": np.zeros(0, F32), "s": np.array([1, 1, 1.5, 0.75], F32)},
        ["y"],
    ),
    (
        "resize11_sizes",
        11,
        [node("Resize", ["x", "r", "s", "z"], ["y"], mode="nearest")],
        [X],
        {"r": np.zeros(0, F32), "s": np.zeros(0, F32), "z": np.array([1, 3, 5, 9], I64)},
        ["y"],
    ),
    (
        "resize13_sizes",
        13,
        [node("Resize", ["x", "", "", "z"], ["y"])],
        [X],
        {"z": np.array([2, 3, 4, 16], I64)},
        ["y"],
    ),
    (
        "resize18_axes",
        18,
        [node("Resize", ["x", "", "s"], ["y"], axes=[3, 2])],
        [X],
        {"s": np.array([2, 0.5], F32)},
        ["y"],
    ),
    (
        "resize19_policy",
        19,
        [node("Resize", ["x", "", "", "z"], ["y"], axes=[2, 3], keep_aspect_ratio_policy="not_larger")],
        [X],
        {"z": np.array([5, 20], I64)},
        ["y"],
    ),
    ("topk1", 7, [node("TopK", ["x"], ["v", "i"], k=2, axis=1)], [X], {}, ["v", "i"]),
    ("topk10", 10, [node("TopK", ["x", "k"], ["v", "i"])], [X], {"k": np.array([3], I64)}, ["v", "i"]),
    ("clip6", 7, [node("Clip", ["x"], ["y"], min=-1.0, max=1.0)], [X], {}, ["y"]),
    ("clip11", 11, [node("Clip", ["x", "", "hi"], ["y"])], [X], {"hi": np.array(0.5, F32)}, ["y"]),
    ("bn7", 7, [node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], spatial=1)], [X], BN_W, ["y"]),
    ("bn9", 9, [node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"])], [X], BN_W, ["y"]),
    ("bn14", 14, [node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"])], [X], BN_W, ["y"]),
    (
        "bn15_training",
        15,
        [node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"], training_mode=1)],
        [X],
        BN_W,
        ["y", "rm", "rv"],
    ),
    ("dropout7", 7, [node("Dropout", ["x"], ["y", "mask"], ratio=0.5)], [X], {}, ["y", "mask"]),
    ("dropout10", 10, [node("Dropout", ["x"], ["y", "mask"])], [X], {}, ["y", "mask"]),
    (
        "dropout12",
        12,
        [node("Dropout", ["x", "r"], ["y", "mask"])],
        [X],
        {"r": np.array(0.3, F32)},
        ["y", "mask"],
    ),
    (
        "constantofshape9",
        9,
        [node("Shape", ["x"], ["s"]), node("ConstantOfShape", ["s"], ["y"])],
        [X],
        {},
        ["y"],
    ),
    ("expand8", 8, [node("Expand", ["x", "sh"], ["y"])], [X3], {"sh": np.array([2, 1, 5, 1], I64)}, ["y"]),
    ("maxpool7", 7, [node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2])], [X], {}, ["y"]),
    ("maxpool8_indices", 8, [node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2])], [X], {}, ["y", "i"]),
    (
        "maxpool10_ceil",
        10,
        [node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)],
        [X],
        {},
        ["y"],
    ),
    (
        "maxpool12_dil",
        12,
        [node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2], dilations=[2, 2], pads=[1, 1, 1, 1])],
        [X],
        {},
        ["y", "i"],
    ),
    (
        "gemm7",
        7,
        [node("Gemm", ["x", "w", "c"], ["y"], transB=1)],
        [X2],
        {"w": np.ones((5, 6), F32), "c": np.ones((1, 5), F32)},
        ["y"],
    ),
    ("gemm11_no_c", 11, [node("Gemm", ["x", "w"], ["y"])], [X2], {"w": np.ones((6, 4), F32)}, ["y"]),
    (
        "reshape14_allowzero",
        14,
        [node("Reshape", ["x", "sh"], ["y"], allowzero=1)],
        [X2],
        {"sh": np.array([-1, 3, 2], I64)},
        ["y"],
    ),
    ("pad2_negative", 7, [node("Pad", ["x"], ["y"], pads=[0, 0, -1, 2, 0, 0, 1, -3])], [X], {}, ["y"]),
    ("slice1_no_axes", 7, [node("Slice", ["x"], ["y"], starts=[0, 1], ends=[1, -1])], [X], {}, ["y"]),
    (
        "upsample7_linear",
        7,
        [node("Upsample", ["x"], ["y"], scales=[1.0, 1.0, 1.5, 2.0], mode="linear")],
        [X],
        {},
        ["y"],
    ),
    (
        "topk11_smallest",
        11,
        [node("TopK", ["x", "k"], ["v", "i"], axis=-1, largest=0)],
        [X],
        {"k": np.array([8], I64)},
        ["v", "i"],
    ),
    ("clip11_min_only", 11, [node("Clip", ["x", "lo"], ["y"])], [X], {"lo": np.array(0, F32)}, ["y"]),
    ("unsqueeze11_neg", 11, [node("Unsqueeze", ["x"], ["y"], axes=[-1, 1])], [X3], {}, ["y"]),
    ("unsqueeze13", 13, [node("Unsqueeze", ["x", "ax"], ["y"])], [X3], {"ax": np.array([-1, 0], I64)}, ["y"]),
    (
        "maxpool7_same",
        7,
        [node("MaxPool", ["x"], ["y"], kernel_shape=[3, 2], strides=[2, 3], auto_pad="SAME_UPPER")],
        [X],
        {},
        ["y"],
    ),
    (
        "maxpool8_storage",
        8,
        [node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 3], storage_order=1)],
        [X],
        {},
        ["y", "i"],
    ),
    (
        "avgpool7_pad",
        7,
        [node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1)],
        [X],
        {},
        ["y"],
    ),
    (
        "avgpool10_ceil",
        10,
        [node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)],
        [X],
        {},
        ["y"],
    ),
    ("split11_neg", 11, [node("Split", ["x"], ["a", "b"], axis=-1)], [X2], {}, ["a", "b"]),
    (
        "reducesum13_noop",
        13,
        [node("ReduceSum", ["x", "ax"], ["y"], noop_with_empty_axes=1)],
        [X],
        {"ax": np.zeros(0, I64)},
        ["y"],
    ),
    ("reducesum13_all", 13, [node("ReduceSum", ["x"], ["y"], keepdims=0)], [X], {}, ["y"]),
    (
        "constantofshape9_scalar",
        9,
        [node("ConstantOfShape", ["s"], ["y"])],
        [X],
        {"s": np.zeros(0, I64)},
        ["y", "x2"][:1],
    ),
    (
        "gemm9_c_col",
        9,
        [node("Gemm", ["x", "w", "c"], ["y"], transB=1)],
        [X2],
        {"w": np.ones((5, 6), F32), "c": np.ones((1, 1), F32)},
        ["y"],
    ),
    (
        "dropout12_training",
        12,
        [node("Dropout", ["x", "r", "t"], ["y", "mask"])],
        [X],
        {"r": np.array(0.5, F32), "t": np.array(False)},
        ["y", "mask"],
    ),
    (
        "bn7_spatial0",
        7,
        [node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], spatial=0)],
        [X],
        {k: np.ones((3, 8, 8), F32) for k in "sbmv"},
        ["y"],
    ),
]


@pytest.mark.parametrize("case_id,opset,nodes,inputs,inits,outs", CASES, ids=[c[0] for c in CASES])
def test_old_form_matches_onnxruntime(
    case_id: str, opset: int, nodes: list[Any], inputs: list[In], inits: dict[str, Any], outs: list[str]
) -> None:
    m = make_model(nodes, inputs, outs, opset, inits)
    res = sso.infer(m, dims={"N": ss.dim("N")})
    assert res.status in ("ok", "guarded"), res.report()
    for o in outs:  # every size known (a size left open would match any run shape)
        t = res.type_of(o)
        assert isinstance(t, ss.TensorType) and t.ndim is not None, (o, t)
        assert not any(d.has_unknowns for d in t.dims), (o, t)
    bad = disagreements(m, ["N"], [{"N": 1}, {"N": 2}, {"N": 3}], feeds_of(inputs))
    assert not bad, "\n".join(bad)


def test_squeeze_without_axes_guards_the_rank() -> None:
    """Squeeze without axes over ``(1, N, 1)``: the result's rank depends on ``N``, so symshape
    gives ``(N,)`` under the guard ``N != 1`` (onnxruntime squeezes ``N`` = 1 too: rank 0), and
    agrees with onnxruntime at the sizes the guard admits."""
    x = In("x", "float32", (1, "N", 1))
    m = make_model([node("Squeeze", ["x"], ["y"])], [x], ["y"], 13)
    res = sso.infer(m, dims={"N": ss.dim("N")})
    assert res.status == "guarded" and [g.holds({ss.dim("N"): 1}) for g in res.guards] == [False]
    assert disagreements(m, ["N"], [{"N": 2}, {"N": 3}], feeds_of([x])) == []
