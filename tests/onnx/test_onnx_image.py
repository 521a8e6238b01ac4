"""Converters of symshape.onnx.ops.image, against onnx's reference evaluator and onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest
from onnx_helpers import Case, In, check_node, node

F = "float32"


def f32(*v: float) -> np.ndarray:
    return np.array(v, dtype=np.float32)


def i64(*v: int) -> np.ndarray:
    return np.array(v, dtype=np.int64)


CASES = [
    Case(
        "resize_scales_int",
        node("Resize", ["x", "", "s"], ["y"], mode="nearest"),
        [In("x", F, ("n", 3, "h", "w"))],
        ["Tensor[(n, 3, 2*h, 3*w), float32]"],
        [{"n": 1, "h": 2, "w": 3}],
        inits={"s": f32(1, 1, 2, 3)},
    ),
    Case(
        "resize_scales_half",
        node("Resize", ["x", "", "s"], ["y"], mode="nearest"),
        [In("x", F, (1, 1, "h", 4))],
        [None],
        [{"h": 1}, {"h": 5}, {"h": 6}],
        inits={"s": f32(1, 1, 0.5, 0.5)},
    ),
    Case(
        "resize_scales_static",
        node("Resize", ["x", "", "s"], ["y"], mode="linear"),
        [In("x", F, (1, 1, 5, 4))],
        ["Tensor[(1, 1, 3, 2), float32]"],
        [{}],
        inits={"s": f32(1, 1, 0.6, 0.6)},
    ),
    Case(
        "resize_sizes",
        node("Resize", ["x", "", "", "z"], ["y"]),
        [In("x", F, ("n", 3, "h", "w"))],
        ["Tensor[(2, 3, 7, 5), float32]"],
        [{"n": 2, "h": 2, "w": 9}],
        inits={"z": i64(2, 3, 7, 5)},
    ),
    Case(
        "resize_axes_not_larger",
        node("Resize", ["x", "", "", "z"], ["y"], axes=[2, 3], keep_aspect_ratio_policy="not_larger"),
        [In("x", F, (1, 1, 4, 8))],
        ["Tensor[(1, 1, 2, 4), float32]"],
        [{}],
        inits={"z": i64(2, 5)},
        opset=18,
    ),
    Case(
        "upsample_v9",
        node("Upsample", ["x", "s"], ["y"]),
        [In("x", F, ("n", 1, "h", 2))],
        ["Tensor[(n, 1, 2*h, 4), float32]"],
        [{"n": 1, "h": 3}],
        inits={"s": f32(1, 1, 2, 2)},
        opset=9,
    ),
    Case(
        "grid_sample",
        node("GridSample", ["x", "g"], ["y"]),
        [In("x", F, ("n", 3, 5, 5)), In("g", F, ("n", "h", "w", 2))],
        ["Tensor[(n, 3, h, w), float32]"],
        [{"n": 2, "h": 3, "w": 4}],
        opset=20,
    ),
    Case(
        "affine_grid",
        node("AffineGrid", ["t", "s"], ["y"]),
        [In("t", F, ("n", 2, 3))],
        ["Tensor[(2, 4, 5, 2), float32]"],  # the batch is size[0] (n == 2 is a guard)
        [{"n": 2}],
        inits={"s": i64(2, 3, 4, 5)},
        opset=20,
    ),
    Case(
        "col2im",
        node("Col2Im", ["x", "i", "b"], ["y"]),
        [In("x", F, ("n", 4, 9))],
        ["Tensor[(n, 1, 4, 4), float32]"],
        [{"n": 2}],
        inits={"i": i64(4, 4), "b": i64(2, 2)},
        opset=18,
    ),
    Case(
        "roi_align",
        node("RoiAlign", ["x", "r", "b"], ["y"], output_height=2, output_width=3),
        [
            In("x", F, ("n", 4, 8, 8)),
            In("r", F, ("k", 4)),
            In("b", "int64", ("k",), data=lambda s, r: np.zeros(s, np.int64)),
        ],
        ["Tensor[(k, 4, 2, 3), float32]"],
        [{"n": 1, "k": 3}],
        opset=16,
    ),
    Case(
        "dft_length",
        node("DFT", ["x", "l", "a"], ["y"]),
        [In("x", F, ("n", "s", 1))],
        ["Tensor[(n, 8, 2), float32]"],
        [{"n": 2, "s": 5}],
        inits={"l": np.array(8, np.int64), "a": np.array(1, np.int64)},
        opset=20,
    ),
    Case(
        "dft_onesided",
        node("DFT", ["x", "", "a"], ["y"], onesided=1),
        [In("x", F, ("n", "s", 1))],
        ["Tensor[(n, s//2 + 1, 2), float32]"],
        [{"n": 1, "s": 5}, {"n": 1, "s": 6}],
        inits={"a": np.array(1, np.int64)},
        opset=20,
    ),
    Case(
        "stft",
        node("STFT", ["x", "st", "", "fl"], ["y"]),
        [In("x", F, ("n", "l", 1))],
        ["Tensor[(n, l//2 - 3, 5, 2), float32]"],
        [{"n": 1, "l": 16}, {"n": 2, "l": 9}],
        inits={"st": np.array(2, np.int64), "fl": np.array(8, np.int64)},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_image(case: Case) -> None:
    check_node(case)


@pytest.mark.parametrize("scale", [1.5, 0.6, 2.3])
def test_resize_symbolic_by_non_integer_scale(scale: float) -> None:
    """``floor(h * scale)`` for the float32 scale's exact value, against the reference evaluator."""
    case = Case(
        "resize_scale",
        node("Resize", ["x", "", "s"], ["y"], mode="nearest"),
        [In("x", F, (1, 1, "h", 4))],
        [None],
        [{"h": h} for h in (1, 2, 3, 5, 10)],
        inits={"s": f32(1, 1, scale, 1)},
    )
    res = check_node(case)
    assert res.status == "ok" and not res.unsupported
