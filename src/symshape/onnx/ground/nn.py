"""Ground rules of convolutions, pools, batch and layer normalization.

A window's output size is ``(x + pad_begin + pad_end - (dilation*(k - 1) + 1)) // stride + 1``
over a constant size (a symbolic one: the full path, which states the window fits), with explicit
pads only (``auto_pad`` ``NOTSET``), floor mode (``ceil_mode`` 0), every window
inside the padded input (else: the full path, which knows onnxruntime's short windows), a pad
below its window (onnxruntime's pools) and 1 to 3 spatial axes. ``MaxPool`` with ``Indices``,
batch normalization before opset 9, in training or with its statistics outputs: the full path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from symshape.onnx.ground.elementwise import broadcast
from symshape.onnx.ground.node import Entry, Fallback, Node, Size, rule

__all__ = ["windows"]


_ONES: Final = {nd: (1,) * nd for nd in (1, 2, 3)}
_ZEROS: Final = {nd: (0,) * 2 * nd for nd in (1, 2, 3)}


def _ints(v: object, count: int) -> tuple[int, ...]:
    """An INTS attribute's value of ``count`` entries (else :class:`Fallback`)."""
    if type(v) is not tuple or len(v) != count:
        raise Fallback
    return v


def windows(n: Node, x: tuple[Size, ...], kernel: Sequence[int], pool: bool) -> tuple[int, ...]:
    """The output sizes of the spatial axes of ``x`` (``N, C, spatial...``) under ``kernel``."""
    nd = len(x) - 2
    if not 1 <= nd <= 3 or len(kernel) != nd:
        raise Fallback
    strides = dil = _ONES[nd]
    pads = _ZEROS[nd]
    a = n.attrs
    if a:  # (read here, not through Node's readers: a model has many windows)
        ap = a.get("auto_pad")
        ceil = a.get("ceil_mode", 0)
        if (ap is not None and ap != b"NOTSET") or type(ceil) is not int or ceil:
            raise Fallback
        if "strides" in a:
            strides = _ints(a["strides"], nd)
        if "dilations" in a:
            dil = _ints(a["dilations"], nd)
        if "pads" in a:
            pads = _ints(a["pads"], 2 * nd)
    out = []
    for i in range(nd):
        k, s, d, lo, hi, size = kernel[i], strides[i], dil[i], pads[i], pads[i + nd], x[2 + i]
        if k < 1 or s < 1 or d < 1 or lo < 0 or hi < 0 or type(size) is not int:
            raise Fallback
        eff = d * (k - 1) + 1
        if pool and (lo >= eff or hi >= eff):
            raise Fallback
        num = size + lo + hi - eff
        if num < 0:
            raise Fallback
        out.append(num // s + 1)
    return tuple(out)


@rule("Conv")
def _conv(n: Node) -> list[Entry]:
    n.only("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides")
    if n.outputs != 1 or not 2 <= len(n.inputs) <= 3:
        raise Fallback
    et, x = n.float_input(0)
    wt, shape = n.float_input(1)
    w = n.ints(shape)
    group = n.int_attr("group", 1)
    if wt != et or len(w) != len(x) or group < 1:
        raise Fallback
    if x[1] != w[1] * group or w[0] % group:
        raise Fallback
    kernel = w[2:]
    if "kernel_shape" in n.attrs and n.ints_attr("kernel_shape") != kernel:
        raise Fallback
    if len(n.inputs) == 3 and n.inputs[2] is not None:
        bt, b = n.float_input(2)
        if bt != et or b != (w[0],):
            raise Fallback
    return [(et, (x[0], w[0]) + windows(n, x, kernel, False))]


@rule("MaxPool", "AveragePool")
def _pool(n: Node) -> list[Entry]:
    if n.op == "MaxPool":
        n.only("auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides")
    else:
        n.only("auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides")
    if n.outputs != 1 or len(n.inputs) != 1:
        raise Fallback
    et, x = n.float_input(0)
    kernel = n.ints_attr("kernel_shape")
    if "dilations" in n.attrs and n.opset < 10:
        raise Fallback
    return [(et, x[:2] + windows(n, x, kernel, True))]


@rule("GlobalAveragePool", "GlobalMaxPool")
def _global_pool(n: Node) -> list[Entry]:
    if n.attrs or n.outputs != 1 or len(n.inputs) != 1:
        raise Fallback
    et, x = n.float_input(0)
    if len(x) < 3:
        raise Fallback
    return [(et, x[:2] + (1,) * (len(x) - 2))]


@rule("BatchNormalization", since=9)
def _batch_norm(n: Node) -> list[Entry]:
    n.only("epsilon", "momentum", "training_mode")
    if n.outputs != 1 or len(n.inputs) != 5 or n.int_attr("training_mode", 0) != 0:
        raise Fallback
    et, x = n.float_input(0)
    if len(x) < 2:
        raise Fallback
    for i in range(1, 5):
        if n.float_input(i) != (et, (x[1],)):
            raise Fallback
    return [(et, x)]


@rule("LayerNormalization", since=17)
def _layer_norm(n: Node) -> list[Entry]:
    n.only("axis", "epsilon", "stash_type")
    if n.outputs != 1 or not 2 <= len(n.inputs) <= 3:
        raise Fallback
    et, x = n.float_input(0)
    r = len(x)
    axis = n.int_attr("axis", -1)
    if not -r <= axis < r:
        raise Fallback
    for i in range(1, len(n.inputs)):
        if n.inputs[i] is None and i == 2:
            continue
        t, s = n.float_input(i)  # Scale and B broadcast to X's shape, one way
        if t != et or broadcast(x, s) != x:
            raise Fallback
    return [(et, x)]
