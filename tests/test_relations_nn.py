"""Convolution and pooling: tables + properties against an independent reference.

The reference builds the padded axis with ``np.pad`` and counts the windows of the dilated kernel
with ``numpy.lib.stride_tricks.sliding_window_view`` (strided by ``s``); ceil mode uses the
textbook ``ceil((L - dk) / s) + 1`` with ``math.ceil``. Channel/group rules follow Relay/PyTorch:
``C % groups == 0``, ``O % groups == 0``, ``I * groups == C``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.lib.stride_tricks import sliding_window_view

from test_relations_common import against_numpy, check_row, rows

TABLE: list[tuple[Any, ...]] = [
    # the brief's example: unannotated weight inferred from channels + kernel_size
    (
        "conv2d",
        ["Tensor[(n, 10, h, w), float32]", "?"],
        {"channels": 16, "kernel_size": 3, "padding": 1, "strides": 2},
        "Tensor[(n, 16, (h - 1)//2 + 1, (w - 1)//2 + 1), float32]",
        [],
        ["Tensor[(n, 10, h, w), float32]", "Tensor[(16, 10, 3, 3), float32]"],
    ),
    (
        "conv2d",
        ["Tensor[(n, 10, h, w), float32]", "Tensor[(16, 10, 3, 3), float32]"],
        {"padding": 1},
        "Tensor[(n, 16, h, w), float32]",
        [],
    ),
    (
        "conv2d",
        ["Tensor[(n, 10, h, w), float32]", "Tensor[(16, 5, 3, 3), float32]"],
        {"groups": 2},
        "Tensor[(n, 16, h - 2, w - 2), float32]",
        ["h >= 3", "w >= 3"],
    ),
    (
        "conv2d",
        ["Tensor[(n, 10, h, w), float32]", "Tensor[(16, 4, 3, 3), float32]"],
        {"groups": 2},
        "!shape-mismatch",
    ),
    (
        "conv2d",
        ["Tensor[(n, c, h, w), float32]", "Tensor[(16, 4, 3, 3), float32]"],
        {"padding": 1},
        "Tensor[(n, 16, h, w), float32]",
        ["c == 4"],
    ),
    (
        "conv2d",
        ["Tensor[(n, 9, 8, 8), float32]", "?"],
        {"channels": 6, "kernel_size": 3, "groups": 2},
        "!shape-mismatch",
    ),
    (
        "conv2d",
        ["Tensor[(n, 8, 8, 8), float32]", "?"],
        {"channels": 6, "kernel_size": (3, 1), "groups": 4},
        "!shape-mismatch",
    ),
    (
        "conv2d",
        ["Tensor[(n, 8, 8, 8), float32]", "?"],
        {"channels": 8, "kernel_size": (3, 1), "groups": 8},
        "Tensor[(n, 8, 6, 8), float32]",
        [],
        ["Tensor[(n, 8, 8, 8), float32]", "Tensor[(8, 1, 3, 1), float32]"],
    ),
    ("conv2d", ["Tensor[(n, 3, 2, 2), float32]", "Tensor[(4, 3, 3, 3), float32]"], {}, "!shape-mismatch"),
    (
        "conv2d",
        ["Tensor[(n, 3, 32, 32), float32]", "Tensor[(4, 3, 3, 3), float32]"],
        {"padding": (1, 2, 3, 4), "dilation": 2, "strides": (2, 1)},
        "Tensor[(n, 4, 16, 34), float32]",
    ),
    (
        "conv2d",
        ["Tensor[(n, h, w, c), float32]", "Tensor[(3, 3, c, 8), float32]"],
        {"data_layout": "NHWC", "kernel_layout": "HWIO"},
        "Tensor[(n, h - 2, w - 2, 8), float32]",
        ["h >= 3", "w >= 3"],
    ),
    (
        "conv2d",
        ["Tensor[(n, h, w, 3), float32]", "?"],
        {"data_layout": "NHWC", "kernel_layout": "HWIO", "channels": 8, "kernel_size": 1},
        "Tensor[(n, h, w, 8), float32]",
        [],
        ["Tensor[(n, h, w, 3), float32]", "Tensor[(1, 1, 3, 8), float32]"],
    ),
    (
        "conv2d",
        ["Tensor[(n, 3, h, w), float32]", "Tensor[(4, 3, 3, 3), float32]"],
        {"kernel_size": 5},
        "!shape-mismatch",
    ),
    (
        "conv2d",
        ["Tensor[(n, 3, h, w), float32]", "Tensor[(4, 3, 3, 3), float32]"],
        {"channels": 5},
        "!shape-mismatch",
    ),
    ("conv2d", ["Tensor[(n, 3, h), float32]", "Tensor[(4, 3, 3, 3), float32]"], {}, "!rank-mismatch"),
    (
        "conv2d",
        ["Tensor[(n, 3, h, w), float32]", "Tensor[(4, 3, 3, 3), float32]"],
        {"strides": 0},
        "!bad-attribute",
    ),
    (
        "conv2d",
        ["Tensor[(n, 3, h, w), float32]", "Tensor[(4, 3, 3, 3), float32]"],
        {"padding": (1, 1, 1)},
        "!bad-attribute",
    ),
    (
        "conv2d",
        ["Tensor[(n, 3, h, w), float32]", "Tensor[(4, 3, 3, 3), float32]"],
        {"data_layout": "NCHWc"},
        "!bad-attribute",
    ),
    (
        "conv2d",
        ["Tensor[(n, 3, 8, 8), float16]", "Tensor[(4, 3, 3, 3), float16]"],
        {"out_dtype": "float32"},
        "Tensor[(n, 4, 6, 6), float32]",
    ),
    (
        "conv1d",
        ["Tensor[(n, 3, t), float32]", "?"],
        {"channels": 4, "kernel_size": 3, "padding": (1, 1)},
        "Tensor[(n, 4, t), float32]",
        [],
    ),
    (
        "conv1d",
        ["Tensor[(n, t, 3), float32]", "Tensor[(5, 3, 4), float32]"],
        {"data_layout": "NWC", "strides": 2},
        "Tensor[(n, t//2 - 1, 5), float32]",
        ["t >= 4"],
    ),
    (
        "conv3d",
        ["Tensor[(n, 2, 8, h, w), float32]", "?"],
        {"channels": 4, "kernel_size": (3, 3, 3), "padding": 1},
        "Tensor[(n, 4, 8, h, w), float32]",
        [],
    ),
    (
        "conv3d",
        ["Tensor[(n, 8, h, w, 2), float32]", "Tensor[(3, 3, 3, 2, 4), float32]"],
        {"data_layout": "NDHWC", "kernel_layout": "DHWIO", "padding": (1, 1, 1, 1, 1, 1)},
        "Tensor[(n, 8, h, w, 4), float32]",
    ),
    # pooling
    (
        "pool2d",
        ["Tensor[(n, c, h, w), float32]"],
        {"pool_size": 2, "strides": 2},
        "Tensor[(n, c, h//2, w//2), float32]",
        ["h >= 2", "w >= 2"],
    ),
    (
        "pool2d",
        ["Tensor[(n, c, 7, 7), float32]"],
        {"pool_size": 2, "strides": 2, "ceil_mode": True},
        "Tensor[(n, c, 4, 4), float32]",
    ),
    (
        "pool2d",
        ["Tensor[(n, c, 7, 7), float32]"],
        {"pool_size": 3, "strides": 2, "padding": 1},
        "Tensor[(n, c, 4, 4), float32]",
    ),
    (
        "pool2d",
        ["Tensor[(n, h, w, c), float32]"],
        {"pool_size": 3, "padding": 1, "layout": "NHWC"},
        "Tensor[(n, h, w, c), float32]",
    ),
    ("pool2d", ["Tensor[(n, c, 1, 1), float32]"], {"pool_size": 2}, "!shape-mismatch"),
    ("pool2d", ["Tensor[(n, c, 8, 8), float32]"], {"pool_size": (2, 2, 2)}, "!bad-attribute"),
    (
        "pool1d",
        ["Tensor[(n, c, t), float32]"],
        {"pool_size": 2, "strides": 2},
        "Tensor[(n, c, t//2), float32]",
    ),
    (
        "pool3d",
        ["Tensor[(n, c, 4, 4, 4), float32]"],
        {"pool_size": 2, "strides": 2},
        "Tensor[(n, c, 2, 2, 2), float32]",
    ),
    ("global_pool2d", ["Tensor[(n, c, h, w), float32]"], {}, "Tensor[(n, c, 1, 1), float32]"),
    ("global_pool2d", ["Tensor[(n, h, w, c), float32]"], {"layout": "NHWC"}, "Tensor[(n, 1, 1, c), float32]"),
    ("global_pool2d", ["Tensor[(n, c, h), float32]"], {}, "!rank-mismatch"),
    (
        "adaptive_pool2d",
        ["Tensor[(n, c, h, w), float32]"],
        {"output_size": 7},
        "Tensor[(n, c, 7, 7), float32]",
    ),
    (
        "adaptive_pool2d",
        ["Tensor[(n, c, h, w), float32]"],
        {"output_size": (None, 3)},
        "Tensor[(n, c, h, 3), float32]",
    ),
    ("adaptive_pool2d", ["Tensor[(n, c, h, w), float32]"], {}, "Tensor[(n, c, h, w), float32]"),
    ("adaptive_pool2d", ["Tensor[(n, c, h, w), float32]"], {"output_size": 0}, "!bad-attribute"),
]


@rows(TABLE)
def test_nn_table(row: tuple[Any, ...]) -> None:
    check_row(*row)


def windows(length: int, before: int, after: int, k: int, dil: int, s: int, ceil: bool = False) -> int:
    """Independent reference: count the strided windows of a dilated kernel over a padded axis."""
    padded = np.pad(np.empty(length), (before, after))
    dk = dil * (k - 1) + 1
    if dk > padded.shape[0]:
        raise ValueError("window larger than the padded input")
    if ceil:
        return math.ceil((padded.shape[0] - dk) / s) + 1
    return int(sliding_window_view(padded, dk)[::s].shape[0])


SETTINGS = settings(max_examples=50, deadline=None)


@SETTINGS
@given(st.data())
def test_conv2d_matches_reference(data: st.DataObject) -> None:
    n, c, h, w = (data.draw(st.integers(1, 6)) for _ in range(4))
    groups = data.draw(st.sampled_from([1, 1, 2, 3]))
    o = data.draw(st.integers(1, 6))
    i = data.draw(st.sampled_from([c // groups or 1, data.draw(st.integers(1, 4))]))
    kh, kw = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    npad = data.draw(st.sampled_from([1, 2, 4]))
    padding = tuple(data.draw(st.integers(0, 2)) for _ in range(npad))
    strides = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    dilation = (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2)))
    if npad == 1:
        pb = pa = (padding[0], padding[0])
    elif npad == 2:
        pb = pa = padding
    else:
        pb, pa = padding[:2], padding[2:]

    def ref(x: np.ndarray, wt: np.ndarray) -> np.ndarray:
        if c % groups or o % groups or i * groups != c:
            raise ValueError("channels")
        oh = windows(h, pb[0], pa[0], kh, dilation[0], strides[0])
        ow = windows(w, pb[1], pa[1], kw, dilation[1], strides[1])
        return np.empty((n, o, oh, ow))

    attrs = {"padding": padding, "strides": strides, "dilation": dilation, "groups": groups}
    against_numpy(data, "conv2d", [(n, c, h, w), (o, i, kh, kw)], attrs, ref)


@SETTINGS
@given(st.data())
def test_pool2d_matches_reference(data: st.DataObject) -> None:
    n, c, h, w = (data.draw(st.integers(1, 6)) for _ in range(4))
    k = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    s = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    p = data.draw(st.integers(0, 1))
    ceil = data.draw(st.booleans())

    def ref(x: np.ndarray) -> np.ndarray:
        return np.empty((n, c, windows(h, p, p, k[0], 1, s[0], ceil), windows(w, p, p, k[1], 1, s[1], ceil)))

    against_numpy(
        data, "pool2d", [(n, c, h, w)], {"pool_size": k, "strides": s, "padding": p, "ceil_mode": ceil}, ref
    )


@SETTINGS
@given(st.data())
def test_conv1d_nwc_matches_reference(data: st.DataObject) -> None:
    n, c, t = (data.draw(st.integers(1, 6)) for _ in range(3))
    o, k = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    stride, dil = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 2))

    def ref(x: np.ndarray, wt: np.ndarray) -> np.ndarray:
        return np.empty((n, windows(t, 0, 0, k, dil, stride), o))

    attrs = {"data_layout": "NWC", "kernel_layout": "WIO", "strides": stride, "dilation": dil}
    against_numpy(data, "conv1d", [(n, t, c), (k, c, o)], attrs, ref)
