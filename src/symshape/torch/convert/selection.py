"""Selection: ``where``, ``masked_fill``, ``clamp`` (with ``clamp_min``/``clamp_max``) and
``nonzero``.

``clamp`` by numbers is ``clip``; by tensors, run-time sizes or symbolic dimensions it is
``maximum``/``minimum`` with them (a size as a 0-d tensor carrying its value), so an index range
passes through (``pos.clamp(max=t - 1)`` into an embedding needs no guard; see
:mod:`symshape.ir.ranges`).
"""

from __future__ import annotations

from typing import Any

import torch

import symshape as ss
from symshape.torch.context import Ctx, scalar_dtype
from symshape.torch.convert.elementwise import keys, promoted
from symshape.torch.registry import converts
from symshape.torch.shape_values import is_size, scalar_value
from symshape.torch.values import Unsupported

__all__ = ["where", "masked_fill", "clamp", "nonzero"]

aten = torch.ops.aten


@converts(*keys("where", inplace=False))
def where(ctx: Ctx, condition: Any, input: Any = None, other: Any = None) -> Any:
    """``torch.where(cond, x, y)`` broadcasts the three; the one-argument form has a
    data-dependent size."""
    if input is None and other is None:
        raise Unsupported("the one-argument form (nonzero) has a data-dependent size")
    c = ctx.tensor(condition, "the condition")
    if isinstance(input, ss.Expr) and isinstance(other, ss.Expr):
        # torch promotes the two (int32 and int64 give int64), as a binary operator does
        x, y = promoted(ctx, input, other, False)
    elif isinstance(input, ss.Expr) != isinstance(other, ss.Expr) and isinstance(
        other if isinstance(input, ss.Expr) else input, (float, int)
    ):  # a tensor and a number: torch's promotion (an integer tensor with a float is float32, a
        # bool tensor with an int is int64; the number's dtype counts only when of a higher kind)
        x, y = promoted(ctx, input, other, False)
    elif isinstance(input, ss.Expr):
        x = input
        y = ctx.operand(other, x)
    elif isinstance(other, ss.Expr):
        y = other
        x = ctx.operand(input, y)
    else:  # two numbers: torch's promotion of Python scalars
        kinds = {scalar_dtype(v) for v in (input, other)}
        dt = "float32" if "float32" in kinds else "int64" if "int64" in kinds else "bool"
        x = ss.Constant(shape=(), dtype=dt)
        y = ss.Constant(shape=(), dtype=dt)
    return ss.ops.where(c, x, y)


@converts(*keys("nonzero", inplace=False))
def nonzero(ctx: Ctx, input: Any, *, as_tuple: Any = False, out: Any = None) -> Any:
    """``torch.nonzero(x)``: ``(u, x.ndim)`` int64, ``u`` a size only the run decides (symshape's
    ``nonzero`` is ONNX's ``(x.ndim, u)``, transposed)."""
    if ctx.static(as_tuple, "as_tuple"):
        raise Unsupported("nonzero(as_tuple=True): one tensor per axis needs the rank")
    return ss.ops.transpose(ss.ops.nonzero(ctx.tensor(input)), (1, 0))


@converts(*keys("masked_fill"))
def masked_fill(ctx: Ctx, input: Any, mask: Any, value: Any) -> Any:
    """``x`` with ``value`` where ``mask``: a ``where`` (the mask broadcasts against ``x``)."""
    x = ctx.tensor(input)
    return ss.ops.where(ctx.tensor(mask, "mask"), ctx.operand(value, x), x)


_CLAMP_MAX = keys("clamp_max")


@converts(*keys("clamp", torch.clip, "clip", aten.clip), *keys("clamp_min"), *_CLAMP_MAX)
def clamp(ctx: Ctx, input: Any, min: Any = None, max: Any = None, **kwargs: Any) -> Any:
    """``clamp`` with numbers is ``clip``; with tensors ``maximum``/``minimum`` (broadcasting), and
    so with a run-time size or a symbolic dimension (``ids.clamp(max=t - 1)``), as a 0-d tensor
    carrying its value (of ``x``'s dtype, as torch's result): an index range passes through."""
    x = ctx.tensor(input)
    target = ctx.node_target
    if target in _CLAMP_MAX or getattr(target, "overloadpacket", None) in _CLAMP_MAX:
        min, max = None, min
    numbers = [v for v in (min, max) if isinstance(v, (float, int)) and not isinstance(v, bool)]
    floats = [v for v in numbers if isinstance(v, float)]
    if numbers:  # (an integer tensor clamped by a float is float32, a bool one by an int int64)
        x = promoted(ctx, x, (floats or numbers)[0], False)[0]

    def tensor_bound(v: Any) -> bool:
        return isinstance(v, ss.Expr) or (v is not None and is_size(v))

    def operand(v: Any) -> ss.Expr:
        size = scalar_value(v) if is_size(v) else None
        return ss.ops.cast_like(size, x) if size is not None else ctx.operand(v, x)

    # numbers clip (their range is known), then tensors and sizes bound by maximum/minimum
    lo = float(ctx.static(min, "min")) if min is not None and not tensor_bound(min) else float("-inf")
    hi = float(ctx.static(max, "max")) if max is not None and not tensor_bound(max) else float("inf")
    out = ss.ops.clip(x, lo, hi) if (lo, hi) != (float("-inf"), float("inf")) else x
    if tensor_bound(min):
        out = ss.ops.maximum(out, operand(min))
    if tensor_bound(max):
        out = ss.ops.minimum(out, operand(max))
    return out
