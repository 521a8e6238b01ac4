"""Neural-network operators: convolution and pooling (1-d to 3-d, layouts), global and adaptive
pooling, softmax/log_softmax, bias_add, layer_norm, batch_norm (Relay's ``nn.`` names)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from symshape.encoding.types import Attrs
from symshape.ir.expr import Call, Expr
from symshape.ir.op import register_op
from symshape.ops.spec import (
    Axes,
    IntOrInts,
    axis_normalizer,
    checked,
    chk_axis,
    get_op,
)
from symshape.relations.common import (
    attr_axes,
)
from symshape.relations.nn import parse_conv_attrs, parse_layout, parse_output_size, parse_pool_attrs

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "global_avg_pool2d",
    "global_max_pool2d",
    "adaptive_avg_pool2d",
    "adaptive_max_pool2d",
    "softmax",
    "log_softmax",
    "bias_add",
    "layer_norm",
    "batch_norm",
]


def _chk_conv(nd: int) -> Callable[[Attrs, str], None]:
    def chk(attrs: Attrs, op: str) -> None:
        parse_conv_attrs(attrs, nd, op)

    return chk


def _chk_pool(nd: int) -> Callable[[Attrs, str], None]:
    def chk(attrs: Attrs, op: str) -> None:
        parse_pool_attrs(attrs, nd, op)

    return chk


def _chk_layout2d(attrs: Attrs, op: str) -> None:
    parse_layout(attrs.get("layout", "NCHW"), "NCHW", op, "layout")


def _chk_adaptive(attrs: Attrs, op: str) -> None:
    _chk_layout2d(attrs, op)
    parse_output_size(attrs, 2, op)


def _chk_norm_axes(attrs: Attrs, op: str) -> None:
    attr_axes(attrs, "axis", op, default=-1)


_CONV_ATTRS = {
    "strides": "ints",
    "padding": "ints",
    "dilation": "ints",
    "groups": "int",
    "channels": "int",
    "kernel_size": "ints",
    "data_layout": "str",
    "kernel_layout": "str",
    "out_layout": "str",
    "out_dtype": "dtype",
}


_POOL_ATTRS = {
    "pool_size": "ints",
    "strides": "ints",
    "padding": "ints",
    "dilation": "ints",
    "ceil_mode": "bool",
    "layout": "str",
    "out_layout": "str",
}


for _nd in (1, 2, 3):
    register_op(
        f"nn.conv{_nd}d",
        f"conv{_nd}d",
        2,
        check_attrs=checked(_chk_conv(_nd), f"nn.conv{_nd}d"),
        attr_types=_CONV_ATTRS,
    )
    for _kind in ("max", "avg"):
        _name = f"nn.{_kind}_pool{_nd}d"
        register_op(
            _name,
            f"pool{_nd}d",
            1,
            check_attrs=checked(_chk_pool(_nd), _name),
            attr_types=_POOL_ATTRS if _kind == "max" else {**_POOL_ATTRS, "count_include_pad": "bool"},
        )


for _n in ("nn.softmax", "nn.log_softmax"):
    register_op(
        _n,
        "softmax",
        1,
        check_attrs=checked(chk_axis, _n),
        normalize=axis_normalizer("axis", default=-1),
        attr_types={"axis": "int"},
    )


register_op(
    "nn.bias_add",
    "bias_add",
    2,
    check_attrs=checked(chk_axis, "nn.bias_add"),
    normalize=axis_normalizer("axis"),
    attr_types={"axis": "int"},
)


register_op(
    "nn.layer_norm",
    "layer_norm",
    3,
    check_attrs=checked(_chk_norm_axes, "nn.layer_norm"),
    normalize=axis_normalizer("axis"),
    attr_types={"axis": "ints", "epsilon": "float", "center": "bool", "scale": "bool"},
)


register_op(
    "nn.batch_norm",
    "batch_norm",
    5,
    check_attrs=checked(chk_axis, "nn.batch_norm"),
    normalize=axis_normalizer("axis"),
    attr_types={"axis": "int", "epsilon": "float", "center": "bool", "scale": "bool"},
)


def _conv(
    nd: int,
    x: Expr,
    w: Expr,
    strides: IntOrInts,
    padding: IntOrInts,
    dilation: IntOrInts,
    groups: int,
    channels: int | None,
    kernel_size: IntOrInts | None,
    data_layout: str | None,
    kernel_layout: str | None,
    out_dtype: str,
    out_layout: str,
) -> Call:
    dl = data_layout or {1: "NCW", 2: "NCHW", 3: "NCDHW"}[nd]
    kl = kernel_layout or {1: "OIW", 2: "OIHW", 3: "OIDHW"}[nd]
    extra = {"out_layout": out_layout} if out_layout else {}
    return get_op(f"nn.conv{nd}d")(
        x,
        w,
        strides=strides,
        padding=padding,
        dilation=dilation,
        groups=groups,
        channels=channels,
        kernel_size=kernel_size,
        data_layout=dl,
        kernel_layout=kl,
        out_dtype=out_dtype,
        **extra,
    )


def conv1d(
    x: Expr,
    w: Expr,
    strides: IntOrInts = 1,
    padding: IntOrInts = 0,
    dilation: IntOrInts = 1,
    groups: int = 1,
    channels: int | None = None,
    kernel_size: IntOrInts | None = None,
    data_layout: str = "NCW",
    kernel_layout: str = "OIW",
    out_dtype: str = "",
    out_layout: str = "",
) -> Call:
    """1-d convolution (``nn.conv1d``)."""
    return _conv(
        1,
        x,
        w,
        strides,
        padding,
        dilation,
        groups,
        channels,
        kernel_size,
        data_layout,
        kernel_layout,
        out_dtype,
        out_layout,
    )


def conv2d(
    x: Expr,
    w: Expr,
    strides: IntOrInts = 1,
    padding: IntOrInts = 0,
    dilation: IntOrInts = 1,
    groups: int = 1,
    channels: int | None = None,
    kernel_size: IntOrInts | None = None,
    data_layout: str = "NCHW",
    kernel_layout: str = "OIHW",
    out_dtype: str = "",
    out_layout: str = "",
) -> Call:
    """2-d convolution (``nn.conv2d``)."""
    return _conv(
        2,
        x,
        w,
        strides,
        padding,
        dilation,
        groups,
        channels,
        kernel_size,
        data_layout,
        kernel_layout,
        out_dtype,
        out_layout,
    )


def conv3d(
    x: Expr,
    w: Expr,
    strides: IntOrInts = 1,
    padding: IntOrInts = 0,
    dilation: IntOrInts = 1,
    groups: int = 1,
    channels: int | None = None,
    kernel_size: IntOrInts | None = None,
    data_layout: str = "NCDHW",
    kernel_layout: str = "OIDHW",
    out_dtype: str = "",
    out_layout: str = "",
) -> Call:
    """3-d convolution (``nn.conv3d``)."""
    return _conv(
        3,
        x,
        w,
        strides,
        padding,
        dilation,
        groups,
        channels,
        kernel_size,
        data_layout,
        kernel_layout,
        out_dtype,
        out_layout,
    )


def _pool(
    name: str,
    x: Expr,
    pool_size: IntOrInts,
    strides: IntOrInts,
    padding: IntOrInts,
    dilation: IntOrInts,
    ceil_mode: bool,
    layout: str,
    out_layout: str = "",
) -> Call:
    extra = {"out_layout": out_layout} if out_layout else {}
    return get_op(name)(
        x,
        pool_size=pool_size,
        strides=strides,
        padding=padding,
        dilation=dilation,
        ceil_mode=ceil_mode,
        layout=layout,
        **extra,
    )


def max_pool1d(
    x: Expr, pool_size: IntOrInts = 1, strides: IntOrInts = 1, padding: IntOrInts = 0,
    dilation: IntOrInts = 1, ceil_mode: bool = False, layout: str = "NCW", out_layout: str = "",
) -> Call:  # fmt: skip
    """1-d max pooling (``nn.max_pool1d``); ``out_layout`` (Relax) is the result's
    layout (default: ``layout``)."""
    return _pool("nn.max_pool1d", x, pool_size, strides, padding, dilation, ceil_mode, layout, out_layout)


def max_pool2d(
    x: Expr, pool_size: IntOrInts = 1, strides: IntOrInts = 1, padding: IntOrInts = 0,
    dilation: IntOrInts = 1, ceil_mode: bool = False, layout: str = "NCHW", out_layout: str = "",
) -> Call:  # fmt: skip
    """2-d max pooling (``nn.max_pool2d``); ``out_layout`` (Relax) is the result's
    layout (default: ``layout``)."""
    return _pool("nn.max_pool2d", x, pool_size, strides, padding, dilation, ceil_mode, layout, out_layout)


def max_pool3d(
    x: Expr, pool_size: IntOrInts = 1, strides: IntOrInts = 1, padding: IntOrInts = 0,
    dilation: IntOrInts = 1, ceil_mode: bool = False, layout: str = "NCDHW", out_layout: str = "",
) -> Call:  # fmt: skip
    """3-d max pooling (``nn.max_pool3d``); ``out_layout`` (Relax) is the result's
    layout (default: ``layout``)."""
    return _pool("nn.max_pool3d", x, pool_size, strides, padding, dilation, ceil_mode, layout, out_layout)


def avg_pool1d(
    x: Expr, pool_size: IntOrInts = 1, strides: IntOrInts = 1, padding: IntOrInts = 0,
    dilation: IntOrInts = 1, ceil_mode: bool = False, layout: str = "NCW", out_layout: str = "",
) -> Call:  # fmt: skip
    """1-d average pooling (``nn.avg_pool1d``); ``out_layout`` (Relax) is the result's
    layout (default: ``layout``)."""
    return _pool("nn.avg_pool1d", x, pool_size, strides, padding, dilation, ceil_mode, layout, out_layout)


def avg_pool2d(
    x: Expr, pool_size: IntOrInts = 1, strides: IntOrInts = 1, padding: IntOrInts = 0,
    dilation: IntOrInts = 1, ceil_mode: bool = False, layout: str = "NCHW", out_layout: str = "",
) -> Call:  # fmt: skip
    """2-d average pooling (``nn.avg_pool2d``); ``out_layout`` (Relax) is the result's
    layout (default: ``layout``)."""
    return _pool("nn.avg_pool2d", x, pool_size, strides, padding, dilation, ceil_mode, layout, out_layout)


def avg_pool3d(
    x: Expr, pool_size: IntOrInts = 1, strides: IntOrInts = 1, padding: IntOrInts = 0,
    dilation: IntOrInts = 1, ceil_mode: bool = False, layout: str = "NCDHW", out_layout: str = "",
) -> Call:  # fmt: skip
    """3-d average pooling (``nn.avg_pool3d``); ``out_layout`` (Relax) is the result's
    layout (default: ``layout``)."""
    return _pool("nn.avg_pool3d", x, pool_size, strides, padding, dilation, ceil_mode, layout, out_layout)


def global_avg_pool2d(x: Expr, layout: str = "NCHW", out_layout: str = "") -> Call:
    """Average over the spatial axes, which become 1 (``nn.global_avg_pool2d``)."""
    extra = {"out_layout": out_layout} if out_layout else {}
    return get_op("nn.global_avg_pool2d")(x, layout=layout, **extra)


def global_max_pool2d(x: Expr, layout: str = "NCHW", out_layout: str = "") -> Call:
    """Maximum over the spatial axes, which become 1 (``nn.global_max_pool2d``)."""
    extra = {"out_layout": out_layout} if out_layout else {}
    return get_op("nn.global_max_pool2d")(x, layout=layout, **extra)


def adaptive_avg_pool2d(x: Expr, output_size: Any = None, layout: str = "NCHW", out_layout: str = "") -> Call:
    """Average pooling to a fixed spatial ``output_size`` (``nn.adaptive_avg_pool2d``)."""
    extra = {"out_layout": out_layout} if out_layout else {}
    return get_op("nn.adaptive_avg_pool2d")(x, output_size=output_size, layout=layout, **extra)


def adaptive_max_pool2d(x: Expr, output_size: Any = None, layout: str = "NCHW", out_layout: str = "") -> Call:
    """Max pooling to a fixed spatial ``output_size`` (``nn.adaptive_max_pool2d``)."""
    extra = {"out_layout": out_layout} if out_layout else {}
    return get_op("nn.adaptive_max_pool2d")(x, output_size=output_size, layout=layout, **extra)


def softmax(x: Expr, axis: int = -1) -> Call:
    """Softmax along ``axis`` (``nn.softmax``)."""
    return get_op("nn.softmax")(x, axis=axis)


def log_softmax(x: Expr, axis: int = -1) -> Call:
    """Log-softmax along ``axis`` (``nn.log_softmax``)."""
    return get_op("nn.log_softmax")(x, axis=axis)


def bias_add(x: Expr, b: Expr, axis: int = 1) -> Call:
    """``x + b`` with the vector ``b`` along ``axis`` (``nn.bias_add``)."""
    return get_op("nn.bias_add")(x, b, axis=axis)


def layer_norm(x: Expr, gamma: Expr, beta: Expr, axis: Axes = -1, epsilon: float = 1e-5) -> Call:
    """Layer normalization over ``axis``, an axis or a sequence of axes (Relax's ``axes``);
    ``gamma`` and ``beta`` have the shape of those axes (``nn.layer_norm``)."""
    return get_op("nn.layer_norm")(x, gamma, beta, axis=axis, epsilon=epsilon)


def batch_norm(
    x: Expr,
    gamma: Expr,
    beta: Expr,
    moving_mean: Expr,
    moving_var: Expr,
    axis: int = 1,
    epsilon: float = 1e-5,
) -> Call:
    """Batch normalization over ``axis``; a tuple ``(out, mean, var)`` (``nn.batch_norm``)."""
    return get_op("nn.batch_norm")(x, gamma, beta, moving_mean, moving_var, axis=axis, epsilon=epsilon)


for _kind in ("avg", "max"):
    register_op(
        f"nn.global_{_kind}_pool2d",
        "global_pool2d",
        1,
        check_attrs=checked(_chk_layout2d, f"nn.global_{_kind}_pool2d"),
        attr_types={"layout": "str", "out_layout": "str"},
    )
    register_op(
        f"nn.adaptive_{_kind}_pool2d",
        "adaptive_pool2d",
        1,
        check_attrs=checked(_chk_adaptive, f"nn.adaptive_{_kind}_pool2d"),
        attr_types={"output_size": "sizes", "layout": "str", "out_layout": "str"},
    )
