"""Convolutions, plain and transposed: ``nn.Conv{1,2,3}d``/``nn.ConvTranspose{1,2,3}d`` (from
their attributes), ``F.conv{1,2,3}d``/``F.conv_transpose{1,2,3}d``, ``aten.conv*`` and
``aten.convolution``. Every spelling goes through :func:`convolution`, which takes
``aten.convolution``'s arguments, so the arguments are read in one place.

A convolution is symshape's ``conv{1,2,3}d`` with torch's ``padding="same"``/``"valid"``
(``same`` needs the kernel size, known when the weight is a parameter), the bias a ``bias_add``
on the channel axis. A module with ``padding_mode`` ``reflect``/``replicate``/``circular`` pads
first, as torch does (:func:`symshape.torch.convert.padding.mode_pad`, which states torch's condition
on the sizes: ``reflect`` needs the padding smaller than the input), then convolves unpadded.

A transposed convolution is the importer's operator ``torch.conv_transpose``
(:mod:`symshape.torch.convert.transposed`: torch's size and conditions, the channels checked
against the weight, ``self.up1.weight`` in the notes), the bias a ``bias_add``. torch's rules for
empty axes are stated by :func:`symshape.torch.convert.empty.nonempty` (a plain convolution
refuses an empty spatial axis unless the batch or the channels are empty); a convolution without
input channels has no output channels in torch either.

Unbatched inputs: torch's convolutions and pools take an input without the batch axis too
(``Conv2d`` on ``(C, H, W)``), and run it as a batch of one (``unsqueeze(0)`` ... ``squeeze(0)``).
:func:`batched` states that per call: a rank the importer knows (an annotated input, an exported
node) picks the plain operator or the one with the batch axis added and removed; a rank only
inference knows goes through two operators of the importer's own, ``torch.batched`` (the input
with its batch axis, checking the ranks torch accepts with torch's message) and
``torch.unbatched`` (the result without the axis again when the input had none). An input whose
rank inference never learns is taken as it comes: the operator fixes the rank it needs inside, and
the result has unknown rank (no claim about a rank torch would decide at run time).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F

import symshape as ss
from symshape.relations.base import Context
from symshape.relations.common import product
from symshape.torch.context import Ctx, by_name
from symshape.torch.convert.empty import nonempty
from symshape.torch.convert.padding import mode_pad
from symshape.torch.convert.transposed import CONV_TRANSPOSE
from symshape.torch.registry import converts
from symshape.torch.values import Unsupported, static_shape

__all__ = [
    "ConvSpec",
    "conv_spec",
    "conv",
    "conv_transpose",
    "convolution",
    "per_axis",
    "BATCHED",
    "UNBATCHED",
    "batched",
    "nonempty_batch",
]

aten = torch.ops.aten

_CONV = {1: ss.ops.conv1d, 2: ss.ops.conv2d, 3: ss.ops.conv3d}


def per_axis(ctx: Ctx, v: Any, nd: int, what: str) -> tuple[int, ...]:
    """An argument with one value per spatial axis (``kernel_size=3`` or ``(3, 3)``)."""
    vals = ctx.ints(v, what)
    if len(vals) == 1:
        return vals * nd
    if len(vals) != nd:
        raise Unsupported(f"{what}: {len(vals)} values for {nd} spatial axes")
    return vals


# -- the batch axis -----------------------------------------------------------------------------


def _accepted(low: int, high: int) -> str:
    if high < 0:
        return f"{low}D or more"
    return " or ".join(f"{r}D" for r in range(low, high + 1))


def _ranks(ctx: Context, x: ss.TensorType, attrs: Any) -> tuple[int, int] | None:
    """``(r, R)``: ``x``'s rank and the batched rank, after torch's rank check (None: ``x``'s
    rank is not known yet)."""
    if x.ndim is None:
        return None
    r, big = len(x.dims), int(attrs.get("rank"))
    low, high = int(attrs.get("low")), int(attrs.get("high"))
    if r < low or (high >= 0 and r > high):
        what = attrs.get("what")
        ctx.fail(
            "rank-mismatch",
            f"{what}: expected a {_accepted(low, high)} input, got `{x}` of rank {r} (torch refuses it)",
        )
    return r, big


def _batched_rel(ctx: Context, args: Sequence[ss.Type], attrs: Any) -> bool:
    x, out = args[0], args[1]
    if not isinstance(x, ss.TensorType):
        return False
    got = _ranks(ctx, x, attrs)
    if got is None:
        if not ctx.final:
            return False
        ctx.assign(out, ss.Tensor(None, x.dtype))
        return True
    r, big = got
    dims: tuple[ss.Dim | int, ...] = tuple(x.dims)
    axis = int(attrs.get("axis"))
    if r <= big:
        dims = dims[:axis] + (1,) * (big - r) + dims[axis:]
    else:  # (the leading axes merged into one batch axis)
        dims = (product(x.dims[: r - big + 1]), *dims[r - big + 1 :])
    ctx.assign(out, ss.Tensor(dims, x.dtype))
    return True


def _unbatched_rel(ctx: Context, args: Sequence[ss.Type], attrs: Any) -> bool:
    y, x, out = args[0], args[1], args[2]
    if not isinstance(y, ss.TensorType) or not isinstance(x, ss.TensorType):
        return False
    got = _ranks(ctx, x, attrs) if y.ndim is not None else None
    if got is None:
        if not ctx.final:
            return False
        ctx.assign(out, ss.Tensor(None, y.dtype))
        return True
    r, big = got
    dims, axis = tuple(y.dims), int(attrs.get("axis"))
    if r <= big:
        dims = dims[:axis] + dims[axis + big - r :]
    else:
        dims = (*x.dims[: r - big + 1], *dims[1:])
    ctx.assign(out, ss.Tensor(dims, y.dtype))
    return True


ss.relation("torch.batched")(_batched_rel)
ss.relation("torch.unbatched")(_unbatched_rel)
_BATCH_ATTRS = {"rank": "int", "axis": "int", "low": "int", "high": "int", "what": "str"}
#: ``torch.batched(x, rank=R, axis=a, low=l, high=h, what=...)``: ``x`` (of a rank torch accepts,
#: ``l <= rank <= h``, ``h < 0``: no bound) with ``R - rank`` axes of 1 inserted at ``a``, or its
#: leading axes merged into one when it has more than ``R``
BATCHED = ss.register_op(
    "torch.batched",
    "torch.batched",
    1,
    doc="x with the batch axis torch adds to an unbatched input (rank checked against torch's)",
    attr_types=_BATCH_ATTRS,
)
#: ``torch.unbatched(y, x, ...)`` (the same attributes): ``y``, computed from ``torch.batched(x)``,
#: without the axes ``torch.batched`` added (or with ``x``'s leading axes again)
UNBATCHED = ss.register_op(
    "torch.unbatched",
    "torch.unbatched",
    2,
    doc="y without the batch axis torch.batched added to x",
    attr_types=_BATCH_ATTRS,
)


def _same(y: ss.Expr) -> ss.Expr:
    return y


def nonempty_batch(ctx: Ctx, x: ss.Expr) -> None:
    """torch's instance norm with a weight refuses a batch of 0 (it repeats the weight per sample
    and reads the first): ``x``'s axis 0 must have an entry 0."""
    ctx.let(ss.ops.take(x, ss.ops.int_tensor(0), axis=0, mode="raise"), "check_batch")


def batched(
    ctx: Ctx, x: ss.Expr, what: str, rank: int, low: int, high: int, axis: int = 0
) -> tuple[ss.Expr, Callable[[ss.Expr], ss.Expr]]:
    """``x`` as the operator's batched input (rank ``rank``), and the function that takes the
    operator's result back to torch's (see the module docstring). torch accepts the ranks
    ``low..high`` (``high < 0``: any from ``low``)."""
    r = ctx.rank(x)
    if r is not None and not (low <= r and (high < 0 or r <= high)):
        r = None  # (refused: the operator says so, with torch's message)
    if r == rank:
        return x, _same
    if r is not None and r < rank:
        n = rank - r
        axes = list(range(axis, axis + n))
        return ss.ops.expand_dims(x, axis=axis, num_newaxis=n), lambda y: ss.ops.squeeze(y, axis=axes)
    x = x if isinstance(x, ss.Var) else ctx.let(x, "input")
    attrs = {"rank": rank, "axis": axis, "low": low, "high": high, "what": what}
    return BATCHED(x, **attrs), lambda y: UNBATCHED(y, x, **attrs)


@dataclass(frozen=True)
class ConvSpec:
    """A convolution's attributes as torch gives them, one value per spatial axis (``padding``
    may be ``"same"``/``"valid"`` for a plain one)."""

    nd: int
    stride: tuple[int, ...]
    padding: tuple[int, ...] | str
    dilation: tuple[int, ...]
    groups: int
    transposed: bool
    output_padding: tuple[int, ...]


def conv_spec(
    ctx: Ctx,
    nd: int,
    stride: Any,
    padding: Any,
    dilation: Any,
    transposed: Any,
    output_padding: Any,
    groups: Any,
) -> ConvSpec:
    """The attributes of a convolution call (``aten.convolution``'s order), checked."""
    t = bool(ctx.static(transposed, "transposed"))
    if isinstance(padding, str) and (t or padding not in ("same", "valid")):
        by = " by transposed convolutions" if t else ""
        raise Unsupported(f"padding={padding!r} is not supported{by}")
    spec = ConvSpec(
        nd,
        per_axis(ctx, stride, nd, "stride"),
        padding if isinstance(padding, str) else per_axis(ctx, padding, nd, "padding"),
        per_axis(ctx, dilation, nd, "dilation"),
        ctx.integer(groups, "groups"),
        t,
        per_axis(ctx, output_padding, nd, "output_padding"),
    )
    for s, d, o in zip(spec.stride, spec.dilation, spec.output_padding):
        if s < 1 or d < 1:
            raise Unsupported("strides and dilations must be positive")
        if t and (o >= max(s, d) or o < 0):
            raise Unsupported(f"output_padding {o} must be smaller than the stride or the dilation")
    return spec


def _kernel(w: ss.Expr, nd: int, why: str) -> tuple[int, ...]:
    """The kernel size of a weight whose shape is known (a parameter's)."""
    shape = static_shape(w)
    if shape is None or len(shape) != nd + 2 or not all(d.is_constant for d in shape[2:]):
        raise Unsupported(f"{why} needs the kernel size, known only for a parameter weight")
    return tuple(int(d.constant_value) for d in shape[2:])  # type: ignore[arg-type]


def conv(x: ss.Expr, w: ss.Expr, b: ss.Expr | None, spec: ConvSpec) -> ss.Expr:
    """A plain convolution."""
    pad: tuple[int, ...]
    if spec.padding == "valid":
        pad = (0,)
    elif spec.padding == "same":
        ks = _kernel(w, spec.nd, "padding='same'")
        total = [dl * (k - 1) for dl, k in zip(spec.dilation, ks)]
        pad = tuple(t // 2 for t in total) + tuple(t - t // 2 for t in total)
    else:
        assert not isinstance(spec.padding, str)
        pad = spec.padding
    op = _CONV[spec.nd]
    y = op(x, w, strides=spec.stride, padding=pad, dilation=spec.dilation, groups=spec.groups)
    return ss.ops.bias_add(y, b, axis=1) if b is not None else y


def conv_transpose(x: ss.Expr, w: ss.Expr, b: ss.Expr | None, spec: ConvSpec) -> ss.Expr:
    """A transposed convolution: :data:`symshape.torch.convert.transposed.CONV_TRANSPOSE`."""
    assert not isinstance(spec.padding, str)
    _kernel(w, spec.nd, "a transposed convolution")
    y = CONV_TRANSPOSE(
        x,
        w,
        nd=spec.nd,
        stride=list(spec.stride),
        padding=list(spec.padding),
        dilation=list(spec.dilation),
        output_padding=list(spec.output_padding),
        groups=spec.groups,
    )
    return ss.ops.bias_add(y, b, axis=1) if b is not None else y


def convolution(
    ctx: Ctx, input: Any, weight: Any, bias: Any, spec: ConvSpec, unbatched: bool = True
) -> ss.Expr:
    """Any convolution: the converter's tensor arguments as they come, and its attributes; the
    input may be unbatched (not so for ``aten.convolution``: ``unbatched=False``)."""
    x, w = ctx.tensor(input), ctx.tensor(weight, "weight")
    b = ctx.tensor(bias, "bias") if bias is not None else None
    nd = spec.nd
    what = f"conv_transpose{nd}d" if spec.transposed else f"conv{nd}d"
    xb, back = batched(ctx, x, what, nd + 2, nd + 1 if unbatched else nd + 2, nd + 2)
    if spec.transposed:
        return back(conv_transpose(xb, w, b, spec))
    y = conv(nonempty(xb, what, first=2, unless=(0, 1)), w, b, spec)
    ws = static_shape(w)
    if ws is not None and len(ws) > 1 and ws[1] == 0:  # torch: no input channels, no output ones
        y = ss.ops.strided_slice(y, [0], [0], axes=[1])
    return back(y)


#: a convolution module's attributes -> their spec (modules of one configuration share it)
_MODULE_SPECS: dict[tuple[Any, ...], ConvSpec] = {}


def _module_spec(ctx: Ctx, m: Any) -> ConvSpec:
    """A convolution module's spec (``transposed`` and ``output_padding`` included: a plain one
    has zeros), remembered per configuration."""
    attrs = (len(m.kernel_size), m.stride, m.padding, m.dilation, m.transposed, m.output_padding, m.groups)
    try:
        spec = _MODULE_SPECS.get(attrs)
    except TypeError:  # an attribute set to a list: not remembered
        return conv_spec(ctx, *attrs)
    if spec is None:
        spec = _MODULE_SPECS[attrs] = conv_spec(ctx, *attrs)
    return spec


@converts(nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
def conv_module(ctx: Ctx, input: Any, output_size: Any = None) -> Any:
    """A convolution module: its parameters and attributes."""
    if output_size is not None:
        raise Unsupported("a transposed convolution with output_size is not supported")
    m = ctx.module
    spec = _module_spec(ctx, m)
    mode = getattr(m, "padding_mode", "zeros")
    if mode != "zeros" and not spec.transposed:
        # torch pads first (F.pad with the mode), then convolves without padding
        w = ctx.need_param("weight")
        padded = mode_pad(ctx, ctx.tensor(input), _pad_amounts(spec, w), mode)
        return convolution(ctx, padded, w, ctx.param("bias"), replace(spec, padding=(0,) * spec.nd))
    return convolution(ctx, input, ctx.need_param("weight"), ctx.param("bias"), spec)


def _pad_amounts(spec: ConvSpec, w: ss.Expr) -> tuple[int, ...]:
    """A convolution's padding as F.pad's amounts (last axis first, before and after each): torch's
    ``_reversed_padding_repeated_twice``; ``"same"`` puts the odd one after."""
    if spec.padding == "valid":
        return (0, 0) * spec.nd
    if spec.padding == "same":
        ks = _kernel(w, spec.nd, "padding='same'")
        total = [dl * (k - 1) for dl, k in zip(spec.dilation, ks)]
        return tuple(a for t in reversed(total) for a in (t // 2, t - t // 2))
    assert not isinstance(spec.padding, str)
    return tuple(a for p in reversed(spec.padding) for a in (p, p))


#: the arguments of ``F.conv{nd}d`` / ``F.conv_transpose{nd}d`` after ``(input, weight)``
_ARGS = {
    False: ("bias", "stride", "padding", "dilation", "groups"),
    True: ("bias", "stride", "padding", "output_padding", "groups", "dilation"),
}


def _function(nd: int, transposed: bool) -> Any:
    """``F.conv{nd}d`` / ``F.conv_transpose{nd}d`` (torch orders their arguments differently)."""

    def convert(ctx: Ctx, input: Any, weight: Any, *args: Any, **kwargs: Any) -> Any:
        a = by_name(_ARGS[transposed], args, kwargs)
        spec = conv_spec(
            ctx,
            nd,
            a.get("stride", 1),
            a.get("padding", 0),
            a.get("dilation", 1),
            transposed,
            a.get("output_padding", 0),
            a.get("groups", 1),
        )
        return convolution(ctx, input, weight, a.get("bias"), spec)

    return convert


for _nd_ in (1, 2, 3):
    converts(getattr(F, f"conv{_nd_}d"), getattr(aten, f"conv{_nd_}d"))(_function(_nd_, False))
    converts(getattr(F, f"conv_transpose{_nd_}d"), getattr(aten, f"conv_transpose{_nd_}d"))(
        _function(_nd_, True)
    )


@converts(aten.convolution)
def aten_convolution(ctx: Ctx, input: Any, weight: Any, bias: Any, *attrs: Any) -> Any:
    """``aten.convolution(input, weight, bias, stride, padding, dilation, transposed,
    output_padding, groups)`` of exported programs: the number of strides gives the
    dimensionality."""
    nd = len(ctx.ints(attrs[0], "stride"))
    return convolution(ctx, input, weight, bias, conv_spec(ctx, nd, *attrs), unbatched=False)
