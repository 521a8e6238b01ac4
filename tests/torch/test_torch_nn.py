"""symshape.torch.convert.nn against torch: functional convolution, pooling, normalization,
embedding, attention, padding."""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torch.nn.functional as F

import symshape as ss
import symshape.torch as sst
from torch_zoo.oracle import check_fn, fn_module, types_of

IMG = {"x": (("b", 4, "h", "w"), "float32"), "y": ((8, 4, 3, 3), "float32")}
IMG_SIZES = [{"b": 2, "h": 9, "w": 12}, {"b": 1, "h": 5, "w": 7}]

CONVS = [
    lambda x, w: F.conv2d(x, w),
    lambda x, w: F.conv2d(x, w, stride=2, padding=1),
    lambda x, w: F.conv2d(x, w, padding=(2, 1), dilation=2),
    lambda x, w: F.conv2d(x, w, padding="same"),
    lambda x, w: F.conv2d(x, w, padding="valid"),
    lambda x, w: F.conv2d(x, w[:, :2], groups=2),
    lambda x, w: F.conv2d(x, w, w[:, 0, 0, 0]),
]


@pytest.mark.parametrize("fn", CONVS, ids=[f"conv{i}" for i in range(len(CONVS))])
def test_conv2d(fn: Any) -> None:
    check_fn(fn_module(fn, 2), IMG, IMG_SIZES)


def test_conv1d_and_conv3d() -> None:
    check_fn(
        fn_module(lambda x, w: F.conv1d(x, w, stride=2), 2),
        {"x": (("b", 4, "t"), "float32"), "y": ((6, 4, 3), "float32")},
        [{"b": 2, "t": 9}, {"b": 1, "t": 3}],
    )
    check_fn(
        fn_module(lambda x, w: F.conv3d(x, w, padding=1), 2),
        {"x": (("b", 2, "d", 5, 6), "float32"), "y": ((3, 2, 3, 3, 3), "float32")},
        [{"b": 1, "d": 4}],
    )


POOLS = [
    lambda x: F.max_pool2d(x, 2),
    lambda x: F.max_pool2d(x, 3, stride=2, padding=1),
    lambda x: F.max_pool2d(x, 3, 2, ceil_mode=True),
    lambda x: F.avg_pool2d(x, 2, stride=1),
    lambda x: F.avg_pool2d(x, (2, 3), ceil_mode=True),
    lambda x: F.adaptive_avg_pool2d(x, 1),
    lambda x: F.adaptive_avg_pool2d(x, (2, None)),
    lambda x: F.adaptive_max_pool2d(x, (3, 2)),
    lambda x: F.max_pool2d(x, 2, return_indices=True)[1],
    lambda x: F.max_pool1d(x.flatten(2), 2),
]


@pytest.mark.parametrize("fn", POOLS, ids=[f"pool{i}" for i in range(len(POOLS))])
def test_pooling(fn: Any) -> None:
    check_fn(fn_module(fn, 1), {"x": IMG["x"]}, IMG_SIZES)


NORMS = [
    lambda x, w: F.batch_norm(x, w[:, 0, 0, 0], w[:, 0, 0, 1], w[:, 0, 0, 2], w[:, 0, 1, 0]),
    lambda x, w: F.batch_norm(x, w[:, 0, 0, 0], w[:, 0, 0, 1]),
    lambda x, w: F.layer_norm(x, (x.shape[3],)),
    lambda x, w: F.layer_norm(x, (4, x.shape[2], x.shape[3])),
    lambda x, w: F.group_norm(x, 2, w[:, 0, 0, 0], w[:, 0, 0, 1]),
    lambda x, w: F.group_norm(x, 4),
    lambda x, w: F.instance_norm(x, weight=w[:, 0, 0, 0], bias=w[:, 0, 0, 1]),
]


@pytest.mark.parametrize("fn", NORMS, ids=[f"norm{i}" for i in range(len(NORMS))])
def test_normalization(fn: Any) -> None:
    check_fn(fn_module(fn, 2), {"x": IMG["x"], "y": ((4, 3, 3, 3), "float32")}, IMG_SIZES)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x, w: F.batch_norm(x, w[:, 0, 0, 0], w[:, 0, 0, 1]),
        lambda x, w: F.layer_norm(x, (3,)),
        lambda x, w: F.group_norm(x, 3),
    ],
)
def test_normalization_errors(fn: Any) -> None:
    res = sst.infer(
        fn_module(fn, 2), types_of({"x": (("b", 4, 5, 6), "float32"), "y": ((5, 3, 3, 3), "float32")})
    )
    assert res.status == "error", res.report()
    assert res.errors[0].span is not None and res.errors[0].span.file == __file__


def test_embedding_and_one_hot() -> None:
    specs = {"x": (("b", "t"), "int64"), "y": ((10, 6), "float32")}
    check_fn(fn_module(lambda i, w: F.embedding(i, w), 2), specs, [{"b": 2, "t": 5}])
    check_fn(fn_module(lambda i, w: F.one_hot(i, 7) + w.sum().long(), 2), specs, [{"b": 2, "t": 3}])


def test_scaled_dot_product_attention() -> None:
    specs = {
        "x": (("b", 2, "l", 8), "float32"),
        "y": (("b", 2, "s", 8), "float32"),
        "z": (("b", 2, "s", 5), "float32"),
    }
    sizes = [{"b": 2, "l": 3, "s": 4}, {"b": 1, "l": 1, "s": 2}]
    check_fn(fn_module(lambda q, k, v: F.scaled_dot_product_attention(q, k, v), 3), specs, sizes)
    check_fn(
        fn_module(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=q[0, 0, :, :1] > 0), 3),
        specs,
        sizes,
    )


def test_pad_on_an_input() -> None:
    check_fn(fn_module(lambda x: F.pad(x, (1, 2)), 1), {"x": IMG["x"]}, IMG_SIZES)
    check_fn(fn_module(lambda x: F.pad(x, (1, 2, 0, 3), value=1.0), 1), {"x": IMG["x"]}, IMG_SIZES)


def _unet_pad(x: torch.Tensor) -> torch.Tensor:
    """milesial's Pytorch-UNet: pad the upsampled map to the skip's size, computed from sizes."""
    x1 = F.max_pool2d(x.relu(), 2)
    x2 = x.relu()
    diff_y = x2.size()[2] - x1.size()[2]
    diff_x = x2.size()[3] - x1.size()[3]
    x1 = F.pad(x1, [diff_x // 2, diff_x - diff_x // 2, diff_y // 2, diff_y - diff_y // 2])
    return torch.cat([x2, x1], dim=1)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: F.pad(x.relu(), (1, 1)),
        lambda x: F.pad(x.relu(), (1, 2, 3, 4, 5, 6)),
        lambda x: F.pad(x, (-1, 0, 1, 2)),
        lambda x: F.pad(x, (x.shape[2], 0)),
        _unet_pad,
    ],
)
def test_pad_by_shape_values(fn: Any) -> None:
    """Padding a computed tensor, by computed or negative amounts: the shape as a shape value."""
    res = check_fn(fn_module(fn, 1), {"x": IMG["x"]}, [{"b": 2, "h": 9, "w": 12}, {"b": 1, "h": 5, "w": 7}])
    out = next(n for n in res.fx_graph.nodes if n.op == "output").args[0]
    t = res.type_of(out.name)
    assert isinstance(t, ss.TensorType) and all(not d.has_unknowns for d in t.dims)


@pytest.mark.parametrize(
    "fn, words",
    [
        (lambda x: F.unfold(x, 2), "unfold"),
        (lambda x: F.fold(x.flatten(2), (4, 4), 2), "fold"),
        (lambda x: torch.nonzero(x, as_tuple=True), "nonzero(as_tuple=True)"),
    ],
)
def test_unsupported(fn: Any, words: str) -> None:
    res = sst.infer(fn_module(fn, 1), types_of({"x": IMG["x"]}))
    assert [d.code for d in res.errors] == ["unsupported-op"]
    assert words in res.errors[0].message
    assert res.errors[0].span is not None and res.errors[0].span.file == __file__
