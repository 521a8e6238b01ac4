"""Neural-network operators: convolution and pooling (1-d to 3-d, layouts), global and adaptive
pooling, softmax/log_softmax, bias_add, layer_norm, batch_norm (Relay's ``nn.`` names)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from symshape.encoding.types import Attrs
from symshape.ir.expr import Call, Expr
from symshape.ir.op import OPS
from symshape.ops.spec import (
    Axes,
    IntOrInts,
    OpSpec,
    axis_normalizer,
    chk_axis,
    register_ops,
    specialize,
)
from symshape.relations.common import attr_axes
from symshape.relations.nn import (
    DATA_LAYOUTS,
    KERNEL_LAYOUTS,
    parse_conv_attrs,
    parse_layout,
    parse_output_size,
    parse_pool_attrs,
)

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


_AVG_POOL_ATTRS = {**_POOL_ATTRS, "count_include_pad": "bool"}


_LAYOUT_ATTRS = {"layout": "str", "out_layout": "str"}


_ADAPTIVE_ATTRS = {"output_size": "sizes", **_LAYOUT_ATTRS}


_NORM_ATTRS = {"epsilon": "float", "center": "bool", "scale": "bool"}


_axis = axis_normalizer("axis")


SPECS: tuple[OpSpec, ...] = (
    *(
        spec
        for nd in (1, 2, 3)
        for spec in (
            OpSpec(f"nn.conv{nd}d", f"conv{nd}d", 2, _CONV_ATTRS, _chk_conv(nd)),
            OpSpec(f"nn.max_pool{nd}d", f"pool{nd}d", 1, _POOL_ATTRS, _chk_pool(nd)),
            OpSpec(f"nn.avg_pool{nd}d", f"pool{nd}d", 1, _AVG_POOL_ATTRS, _chk_pool(nd)),
        )
    ),
    *(
        OpSpec(n, "softmax", 1, {"axis": "int"}, chk_axis, axis_normalizer("axis", default=-1))
        for n in ("nn.softmax", "nn.log_softmax")
    ),
    OpSpec("nn.bias_add", "bias_add", 2, {"axis": "int"}, chk_axis, _axis),
    OpSpec("nn.layer_norm", "layer_norm", 3, {"axis": "ints", **_NORM_ATTRS}, _chk_norm_axes, _axis),
    OpSpec("nn.batch_norm", "batch_norm", 5, {"axis": "int", **_NORM_ATTRS}, chk_axis, _axis),
    *(
        spec
        for kind in ("avg", "max")
        for spec in (
            OpSpec(f"nn.global_{kind}_pool2d", "global_pool2d", 1, _LAYOUT_ATTRS, _chk_layout2d),
            OpSpec(f"nn.adaptive_{kind}_pool2d", "adaptive_pool2d", 1, _ADAPTIVE_ATTRS, _chk_adaptive),
        )
    ),
)


register_ops(SPECS)


def _window(strides: IntOrInts, padding: IntOrInts, dilation: IntOrInts) -> dict[str, IntOrInts]:
    """The sliding-window attributes of convolution and pooling (see
    :class:`symshape.relations.nn.WindowAttrs`)."""
    return {"strides": strides, "padding": padding, "dilation": dilation}


def _out_layout(out_layout: str) -> dict[str, str]:
    """``out_layout`` as an attribute only when given (absent: the data's layout)."""
    return {"out_layout": out_layout} if out_layout else {}


def _conv(
    nd: int,
    x: Expr,
    w: Expr,
    strides: IntOrInts = 1,
    padding: IntOrInts = 0,
    dilation: IntOrInts = 1,
    groups: int = 1,
    channels: int | None = None,
    kernel_size: IntOrInts | None = None,
    data_layout: str = "",
    kernel_layout: str = "",
    out_dtype: str = "",
    out_layout: str = "",
) -> Call:
    """The wrapper of ``nn.conv{nd}d`` (an empty layout is the default one)."""
    return OPS[f"nn.conv{nd}d"].wrapper_call(
        x,
        w,
        **_window(strides, padding, dilation),
        groups=groups,
        channels=channels,
        kernel_size=kernel_size,
        data_layout=data_layout or DATA_LAYOUTS[nd],
        kernel_layout=kernel_layout or KERNEL_LAYOUTS[nd],
        out_dtype=out_dtype,
        **_out_layout(out_layout),
    )


conv1d = specialize(
    _conv, 1, "conv1d", "1-d convolution (``nn.conv1d``).", data_layout="NCW", kernel_layout="OIW"
)
conv2d = specialize(
    _conv, 2, "conv2d", "2-d convolution (``nn.conv2d``).", data_layout="NCHW", kernel_layout="OIHW"
)
conv3d = specialize(
    _conv, 3, "conv3d", "3-d convolution (``nn.conv3d``).", data_layout="NCDHW", kernel_layout="OIDHW"
)


def _pool(
    op: str, x: Expr, pool_size: IntOrInts = 1, strides: IntOrInts = 1, padding: IntOrInts = 0,
    dilation: IntOrInts = 1, ceil_mode: bool = False, layout: str = "NCHW", out_layout: str = "",
) -> Call:  # fmt: skip
    """The wrapper of a max or average pooling ``op``."""
    return OPS[op].wrapper_call(
        x,
        pool_size=pool_size,
        **_window(strides, padding, dilation),
        ceil_mode=ceil_mode,
        layout=layout,
        **_out_layout(out_layout),
    )


def _pool_doc(what: str, op: str) -> str:
    return f"""{what} pooling (``{op}``); ``out_layout`` (Relax) is the result's
    layout (default: ``layout``)."""


max_pool1d = specialize(
    _pool, "nn.max_pool1d", "max_pool1d", _pool_doc("1-d max", "nn.max_pool1d"), layout="NCW"
)
max_pool2d = specialize(_pool, "nn.max_pool2d", "max_pool2d", _pool_doc("2-d max", "nn.max_pool2d"))
max_pool3d = specialize(
    _pool, "nn.max_pool3d", "max_pool3d", _pool_doc("3-d max", "nn.max_pool3d"), layout="NCDHW"
)
avg_pool1d = specialize(
    _pool, "nn.avg_pool1d", "avg_pool1d", _pool_doc("1-d average", "nn.avg_pool1d"), layout="NCW"
)
avg_pool2d = specialize(_pool, "nn.avg_pool2d", "avg_pool2d", _pool_doc("2-d average", "nn.avg_pool2d"))
avg_pool3d = specialize(
    _pool, "nn.avg_pool3d", "avg_pool3d", _pool_doc("3-d average", "nn.avg_pool3d"), layout="NCDHW"
)


def _global_pool(op: str, x: Expr, layout: str = "NCHW", out_layout: str = "") -> Call:
    return OPS[op].wrapper_call(x, layout=layout, **_out_layout(out_layout))


global_avg_pool2d = specialize(
    _global_pool,
    "nn.global_avg_pool2d",
    "global_avg_pool2d",
    "Average over the spatial axes, which become 1 (``nn.global_avg_pool2d``).",
)
global_max_pool2d = specialize(
    _global_pool,
    "nn.global_max_pool2d",
    "global_max_pool2d",
    "Maximum over the spatial axes, which become 1 (``nn.global_max_pool2d``).",
)


def _adaptive_pool(
    op: str, x: Expr, output_size: Any = None, layout: str = "NCHW", out_layout: str = ""
) -> Call:
    return OPS[op].wrapper_call(x, output_size=output_size, layout=layout, **_out_layout(out_layout))


adaptive_avg_pool2d = specialize(
    _adaptive_pool,
    "nn.adaptive_avg_pool2d",
    "adaptive_avg_pool2d",
    "Average pooling to a fixed spatial ``output_size`` (``nn.adaptive_avg_pool2d``).",
)
adaptive_max_pool2d = specialize(
    _adaptive_pool,
    "nn.adaptive_max_pool2d",
    "adaptive_max_pool2d",
    "Max pooling to a fixed spatial ``output_size`` (``nn.adaptive_max_pool2d``).",
)


def softmax(x: Expr, axis: int = -1) -> Call:
    """Softmax along ``axis`` (``nn.softmax``)."""
    return OPS["nn.softmax"].wrapper_call(x, axis=axis)


def log_softmax(x: Expr, axis: int = -1) -> Call:
    """Log-softmax along ``axis`` (``nn.log_softmax``)."""
    return OPS["nn.log_softmax"].wrapper_call(x, axis=axis)


def bias_add(x: Expr, b: Expr, axis: int = 1) -> Call:
    """``x + b`` with the vector ``b`` along ``axis`` (``nn.bias_add``)."""
    return OPS["nn.bias_add"].wrapper_call(x, b, axis=axis)


def layer_norm(x: Expr, gamma: Expr, beta: Expr, axis: Axes = -1, epsilon: float = 1e-5) -> Call:
    """Layer normalization over ``axis``, an axis or a sequence of axes (Relax's ``axes``);
    ``gamma`` and ``beta`` have the shape of those axes (``nn.layer_norm``)."""
    return OPS["nn.layer_norm"].wrapper_call(x, gamma, beta, axis=axis, epsilon=epsilon)


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
    return OPS["nn.batch_norm"].wrapper_call(
        x, gamma, beta, moving_mean, moving_var, axis=axis, epsilon=epsilon
    )
