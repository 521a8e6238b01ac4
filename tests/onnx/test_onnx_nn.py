"""Converters of symshape.onnx.ops.nn (convolution, pooling), against onnx's reference evaluator
and onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from onnx_helpers import Case, In, check_node, infer_node, make_model, node, run_ort

import symshape as ss

F = "float32"


def w(*shape: int) -> np.ndarray:
    return np.random.default_rng(0).standard_normal(shape).astype(np.float32)


CASES = [
    Case(
        "conv_pads_strides",
        node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1], strides=[2, 2]),
        [In("x", F, ("n", 3, "h", "w"))],
        ["Tensor[(n, 8, (h - 1)//2 + 1, (w - 1)//2 + 1), float32]"],
        [{"n": 1, "h": 5, "w": 6}, {"n": 2, "h": 8, "w": 3}],
        inits={"w": w(8, 3, 3, 3), "b": w(8)},
    ),
    Case(
        "conv_same_upper",
        node("Conv", ["x", "w"], ["y"], auto_pad="SAME_UPPER", strides=[3]),
        [In("x", F, ("n", 2, "l"))],
        ["Tensor[(n, 4, (l - 1)//3 + 1), float32]"],
        [{"n": 1, "l": 1}, {"n": 1, "l": 7}, {"n": 2, "l": 9}],
        inits={"w": w(4, 2, 5)},
        runner="onnxruntime",
    ),
    Case(
        "conv_same_lower_dilated",
        node("Conv", ["x", "w"], ["y"], auto_pad="SAME_LOWER", dilations=[2, 1]),
        [In("x", F, (1, 2, "h", 5))],
        ["Tensor[(1, 4, h, 5), float32]"],
        [{"h": 3}, {"h": 6}],
        inits={"w": w(4, 2, 3, 3)},
    ),
    Case(
        "conv_valid_group",
        node("Conv", ["x", "w"], ["y"], auto_pad="VALID", group=2),
        [In("x", F, ("n", 4, 6, 6))],
        ["Tensor[(n, 6, 4, 4), float32]"],
        [{"n": 1}],
        inits={"w": w(6, 2, 3, 3)},
    ),
    Case(
        "conv3d",
        node("Conv", ["x", "w"], ["y"], kernel_shape=[1, 2, 2]),
        [In("x", F, ("n", 1, "d", 4, 4))],
        ["Tensor[(n, 2, d, 3, 3), float32]"],
        [{"n": 1, "d": 2}],
        inits={"w": w(2, 1, 1, 2, 2)},
    ),
    Case(
        "conv_transpose_strided",
        node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], pads=[1, 0, 1, 0]),
        [In("x", F, ("n", 4, "h", "w"))],
        ["Tensor[(n, 3, 2*h - 1, 2*w + 1), float32]"],
        [{"n": 1, "h": 3, "w": 2}],
        inits={"w": w(4, 3, 3, 3)},
    ),
    Case(
        "conv_transpose_output_padding",
        node("ConvTranspose", ["x", "w", "b"], ["y"], strides=[3], output_padding=[1], group=2),
        [In("x", F, ("n", 4, "l"))],
        ["Tensor[(n, 6, 3*l + 1), float32]"],
        [{"n": 2, "l": 2}],
        inits={"w": w(4, 3, 3), "b": w(6)},
        runner="onnxruntime",
    ),
    Case(
        "conv_transpose_output_shape",
        node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], output_shape=[9, 10]),
        [In("x", F, ("n", 1, 4, 5))],
        ["Tensor[(n, 2, 9, 10), float32]"],
        [{"n": 1}],
        inits={"w": w(1, 2, 3, 3)},
        runner="onnxruntime",
    ),
    Case(
        "conv_transpose_same",
        node("ConvTranspose", ["x", "w"], ["y"], strides=[2], auto_pad="SAME_UPPER"),
        [In("x", F, ("n", 1, "l"))],
        ["Tensor[(n, 1, 2*l), float32]"],
        [{"n": 1, "l": 3}],
        inits={"w": w(1, 1, 3)},
        runner="onnxruntime",
    ),
    Case(
        "conv_transpose_shrinks",
        node("ConvTranspose", ["x", "w"], ["y"], pads=[2, 2]),
        [In("x", F, (1, 1, "l"))],
        ["Tensor[(1, 1, l - 2), float32]"],
        [{"l": 4}],
        inits={"w": w(1, 1, 3)},
    ),
    Case(
        "maxpool_indices",
        node("MaxPool", ["x"], ["y", "i"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        [In("x", F, ("n", 3, "h", "w"))],
        [
            "Tensor[(n, 3, (h - 1)//2 + 1, (w - 1)//2 + 1), float32]",
            "Tensor[(n, 3, (h - 1)//2 + 1, (w - 1)//2 + 1), int64]",
        ],
        [{"n": 1, "h": 4, "w": 7}],
    ),
    Case(
        "maxpool_ceil",
        node("MaxPool", ["x"], ["y"], kernel_shape=[3], strides=[2], ceil_mode=1),
        [In("x", F, (1, 1, "l"))],
        ["Tensor[(1, 1, l//2), float32]"],
        [{"l": 3}, {"l": 4}, {"l": 8}],
    ),
    Case(
        "maxpool_ceil_drops_last_window",
        node("MaxPool", ["x"], ["y"], kernel_shape=[2], strides=[3], pads=[0, 1], ceil_mode=1),
        [In("x", F, (1, 1, "l"))],
        ["Tensor[(1, 1, (l - 1)//3 + 1), float32]"],
        [{"l": 2}, {"l": 4}, {"l": 5}, {"l": 7}],
    ),
    Case(
        "maxpool_dilated",
        node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], dilations=[2, 2]),
        [In("x", F, (1, 1, "h", 5))],
        ["Tensor[(1, 1, h - 2, 3), float32]"],
        [{"h": 4}],
    ),
    Case(
        "maxpool_same",
        node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER"),
        [In("x", F, (1, 1, "h", "w"))],
        ["Tensor[(1, 1, (h - 1)//2 + 1, (w - 1)//2 + 1), float32]"],
        [{"h": 5, "w": 6}],
        runner="onnxruntime",
    ),
    Case(
        "avgpool",
        node("AveragePool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2]),
        [In("x", F, ("n", 3, "h", "w"))],
        ["Tensor[(n, 3, h//2, w//2), float32]"],
        [{"n": 1, "h": 5, "w": 4}],
    ),
    Case(
        "lppool",
        node("LpPool", ["x"], ["y"], kernel_shape=[2], p=2),
        [In("x", F, ("n", 3, "l"))],
        ["Tensor[(n, 3, l - 1), float32]"],
        [{"n": 1, "l": 5}],
    ),
    Case(
        "global_avg_4d",
        node("GlobalAveragePool", ["x"], ["y"]),
        [In("x", F, ("n", 3, "h", "w"))],
        ["Tensor[(n, 3, 1, 1), float32]"],
        [{"n": 2, "h": 3, "w": 4}],
    ),
    # onnxruntime: the reference evaluator's GlobalMaxPool reduces the wrong axes of a 3-d input
    Case(
        "global_max_3d",
        node("GlobalMaxPool", ["x"], ["y"]),
        [In("x", F, ("n", 3, "l"))],
        ["Tensor[(n, 3, 1), float32]"],
        [{"n": 2, "l": 3}],
        runner="onnxruntime",
    ),
    Case(
        "max_unpool",
        node("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[2, 2], strides=[2, 2]),
        [
            In("x", F, ("n", 1, "h", "w")),
            In("i", "int64", ("n", 1, "h", "w"), data=lambda s, r: np.zeros(s, np.int64)),
        ],
        ["Tensor[(n, 1, 2*h, 2*w), float32]"],
        [{"n": 1, "h": 2, "w": 3}],
    ),
    Case(
        "dropout_mask",
        node("Dropout", ["x"], ["y", "m"]),
        [In("x", F, ("n", 3))],
        ["Tensor[(n, 3), float32]", "Tensor[(n, 3), bool]"],
        [{"n": 2}],
    ),
    Case(
        "qlinear_conv",
        node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["y"]),
        [In("x", "uint8", ("n", 1, "h", "h"))],
        ["Tensor[(n, 2, h - 1, h - 1), uint8]"],
        [{"n": 1, "h": 3}],
        inits={
            "xs": np.float32(0.1),
            "xz": np.uint8(0),
            "w": np.ones((2, 1, 2, 2), np.uint8),
            "ws": np.float32(0.1),
            "wz": np.uint8(0),
            "ys": np.float32(0.1),
            "yz": np.uint8(0),
        },
        runner="onnxruntime",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_nn(case: Case) -> None:
    check_node(case)


def test_conv_channel_mismatch_is_an_error() -> None:
    res = infer_node(
        node("Conv", ["x", "w"], ["y"], name="c1"), [In("x", F, ("n", 3, 8, 8))], {"w": w(4, 2, 3, 3)}
    )
    assert res.status == "error"
    assert res.errors[0].code == "shape-mismatch"
    assert str(res.errors[0].span) == "test: node 'c1' (Conv)"


def test_conv_with_four_spatial_axes_is_unsupported() -> None:
    res = infer_node(
        node("Conv", ["x", "w"], ["y"]), [In("x", F, (1, 1, 2, 2, 2, 2))], {"w": w(1, 1, 1, 1, 1, 1)}
    )
    assert res.unsupported[0][0].key == "core-op"


@settings(max_examples=40)
@given(
    d=st.integers(1, 12),
    k=st.integers(1, 4),
    s=st.integers(1, 4),
    pb=st.integers(0, 2),
    pa=st.integers(0, 2),
    dil=st.integers(1, 2),
    ceil=st.booleans(),
)
def test_pool_window_matches_onnxruntime(
    d: int, k: int, s: int, pb: int, pa: int, dil: int, ceil: bool
) -> None:
    kk = dil * (k - 1) + 1
    assume(pb < k and pa < k)  # onnxruntime: pads smaller than the kernel
    assume(d + pb + pa >= kk)
    n = node(
        "MaxPool",
        ["x"],
        ["y"],
        kernel_shape=[k],
        strides=[s],
        pads=[pb, pa],
        dilations=[dil],
        ceil_mode=int(ceil),
    )
    res = infer_node(n, [In("x", F, (1, 1, "l"))])
    assert res.ok, res.report()
    t = res.type_of("y")
    sym = ss.dim("l")
    m = make_model([n], [In("x", F, (1, 1, d))], ["y"])
    (y,) = run_ort(m, {"x": np.zeros((1, 1, d), np.float32)})
    assert int(t.dims[2].subs({sym: d})) == y.shape[2]
    for g in res.guards:
        assert g.holds({sym: d})


def test_conv_transpose_with_a_symbolic_weight() -> None:
    """Kernel size and output channels symbolic (the weight is an input): the output shape on
    shape values, against the reference evaluator."""
    case = Case(
        "conv_transpose_symbolic_weight",
        node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 1], pads=[1, 0, 0, 1], dilations=[1, 2]),
        [In("x", "float32", ("n", 3, "h", 5)), In("w", "float32", (3, "m", "k", 2))],
        ["Tensor[(n, m, 2*h + k - 3, 6), float32]"],
        [{"n": 1, "h": 4, "m": 2, "k": 3}, {"n": 2, "h": 1, "m": 1, "k": 2}],
    )
    check_node(case)
    res = infer_node(case.node, [In("x", "float32", ("n", 4, "h", 5)), In("w", "float32", (3, "m", "k", 2))])
    assert res.status == "error"  # 4 input channels, a weight for 3
