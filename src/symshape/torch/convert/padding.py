"""Padding: ``F.pad`` (``aten.pad``, ``aten.constant_pad_nd``) in every mode, and :func:`mode_pad`,
which the padding modules and the convolutions with a ``padding_mode`` share.

``constant`` padding of a tensor of known rank by non-negative ints is ``nn.pad``; by amounts
computed from sizes (UNet's ``F.pad(x1, [dx // 2, dx - dx // 2, ...])``, negative ones crop) the
result's shape is a shape value. ``reflect``, ``replicate`` and ``circular`` copy entries of the
input, and torch checks that those entries exist: ``reflect`` reads ``x[p]`` (so ``p < n``),
``circular`` ``x[-p]`` (``p <= n``: it wraps at most once), ``replicate`` ``x[0]`` (``n >= 1``).
Each read is a ``take`` in mode ``raise`` whose indices' range states the condition (see
:mod:`symshape.ir.ranges`): by literal amounts the pads are those takes, concatenated around the
input; by amounts computed at run time (``F.pad(x, (t, t), mode="reflect")``; negative ones
crop) the shape is the shape value above, typed by those takes over an ``arange`` of each amount.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

import symshape as ss
from symshape.torch.context import Ctx
from symshape.torch.convert.entry_ops import RANK_IN
from symshape.torch.registry import converts
from symshape.torch.shape_values import has_value, scalar_value, shape_tensor
from symshape.torch.values import Opaque, Unsupported

__all__ = ["pad", "mode_pad"]

aten = torch.ops.aten


@converts(F.pad, aten.pad)
def pad(ctx: Ctx, input: Any, pad: Any, mode: Any = "constant", value: Any = None) -> Any:
    """``F.pad(x, (left, right, top, bottom, ...))`` pads the last axes: ``nn.pad`` when the rank
    is known (inputs, parameters, exported nodes) and the amounts are non-negative ints;
    otherwise (a computed tensor, amounts computed from sizes as in UNet's
    ``F.pad(x1, [dx // 2, dx - dx // 2, ...])``, cropping) the result's shape as a shape value:
    ``x.shape[:-k]`` then ``x.shape[-k:] + before + after``, typed (in the modes that copy
    entries) by :func:`mode_pad`'s reads, which state torch's conditions."""
    x = ctx.tensor(input)
    entries = list(pad) if isinstance(pad, (list, tuple)) else [pad]
    if len(entries) % 2:
        raise Unsupported(f"F.pad: an odd number ({len(entries)}) of padding values")
    rank = ctx.rank(x)
    literal = all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in entries)
    mode = ctx.static(mode, "mode")
    if mode in _READS and literal:
        return mode_pad(ctx, x, ctx.ints(entries, "pad"), mode)
    if mode not in ("constant", *_READS):
        raise Unsupported(f"F.pad: mode {mode!r} is not supported")
    if rank is None or not literal:
        x = _crop_checked(ctx, x, entries) if mode == "constant" else x
        out = _valued_pad(ctx, x, entries)
        if mode in _READS:  # the zeros of the right shape take their dtype from the reads
            out = ss.ops.cast_like(out, mode_pad(ctx, x, [_amount(ctx, v) for v in entries], mode))
        return out
    p = ctx.ints(entries, "pad")
    if len(p) // 2 > rank:
        raise Unsupported(f"F.pad: {len(p)} padding values for rank {rank}")
    pairs = [(0, 0)] * rank
    for i in range(len(p) // 2):
        pairs[rank - 1 - i] = (p[2 * i], p[2 * i + 1])
    return ss.ops.pad(x, tuple(pairs))


def _crop_checked(ctx: Ctx, x: ss.Expr, entries: list[Any]) -> ss.Expr:
    """``x``, after a check per axis that both crops and pads (``F.pad(x, (-1, 1))``): torch crops
    first (``narrow``), so the axis must hold what is cropped, ``size >= c`` (torch: "narrow():
    length must be non-negative"); the result's size alone allows ``size + 1 - 1 >= 0``."""
    for i in range(len(entries) // 2):
        a, b = entries[2 * i], entries[2 * i + 1]
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (a, b)):
            continue
        crop = -min(a, 0) - min(b, 0)
        if crop > 0 and max(a, b) > 0:
            x = x if isinstance(x, ss.Var) else ctx.let(x, "input")
            at = ss.ops.int_tensor(crop - 1)
            ctx.let(ss.ops.take(x, at, axis=-1 - i, mode="raise"), f"check_crop{i}")
    return x


#: padding modes that copy entries of the input (F.pad's names)
_READS = ("reflect", "circular", "replicate")

Amount = int | ss.Expr
"""A padding amount: an int, or a 0-d int64 expression carrying a size computed at run time."""


def constant_pad_nd(ctx: Ctx, input: Any, amounts: Any, value: Any = 0) -> Any:
    """``aten.constant_pad_nd(x, pad, value)``: core ATen's constant ``F.pad`` (the fill value is
    its third argument, where ``F.pad`` has the mode)."""
    return pad(ctx, input, amounts, "constant", value)


converts(aten.constant_pad_nd)(constant_pad_nd)


def _literal_reads(mode: str, p: int, before: bool) -> list[int]:
    """The entries of an axis a padding mode copies into a pad of ``p`` (``before`` or after the
    input), counted from the start (``>= 0``) or from the end (``< 0``), in order."""
    match mode:
        case "reflect":  # x[p], ..., x[1] | x | x[-2], ..., x[-1 - p]
            return list(range(p, 0, -1)) if before else list(range(-2, -2 - p, -1))
        case "circular":  # x[-p], ..., x[-1] | x | x[0], ..., x[p - 1]
            return list(range(-p, 0)) if before else list(range(p))
        case "replicate":  # x[0] ... | x | x[-1] ...
            return [0 if before else -1] * max(p, 0)
    raise AssertionError(mode)


def _reads(mode: str, p: Amount, before: bool) -> ss.Expr | None:
    """The indices of the entries a pad of ``p`` reads (None when it reads none): a constant array
    for a literal amount; for a run-time one the same entries as an ``arange`` (empty when
    ``p <= 0``), whose range states the condition."""
    if isinstance(p, int):
        idx = _literal_reads(mode, p, before)
        return ss.const(np.array(idx, dtype="int64")) if idx else None
    match mode:
        case "reflect":
            return ss.ops.arange(p, 0, -1) if before else ss.ops.arange(-2, _minus(-2, p), -1)
        case "circular":
            return ss.ops.arange(_minus(0, p), 0) if before else ss.ops.arange(0, p)
        case "replicate":
            end = 0 if before else -1  # x[0] (or x[-1]) p times
            return ss.ops.clip(ss.ops.arange(0, p), end, end)
    raise AssertionError(mode)


def _minus(a: int, p: ss.Expr) -> ss.Expr:
    return ss.ops.subtract(ss.ops.int_tensor(a), p)


def _amount(ctx: Ctx, v: Any) -> Amount:
    """A padding amount of ``F.pad`` as an int or a 0-d int64 expression carrying it."""
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    e = scalar_value(v)
    if e is None:
        ctx.static(v, "the padding")
        raise Unsupported("F.pad: padding amounts of this kind are not supported")
    return e


def mode_pad(ctx: Ctx, x: ss.Expr, amounts: Sequence[Amount], mode: str) -> ss.Expr:
    """``F.pad(x, amounts, mode)`` for the modes that copy entries of ``x``: along each padded axis
    (the last ones, ``amounts`` as F.pad orders them) the pads are ``take`` of the entries the
    mode reads (mode ``raise``), concatenated around ``x``. The indices' ranges state torch's
    conditions: ``reflect`` reads ``x[p]`` (``p < n``), ``circular`` ``x[-p]`` (``p <= n``: it
    wraps at most once), ``replicate`` ``x[0]`` (``n >= 1``); ``reflect`` and ``replicate`` also
    need the channel axis (the one before the padded ones) non-empty. With non-negative literal amounts
    this is the padded tensor; :func:`pad` types run-time (or negative) amounts by it."""
    k = len(amounts) // 2
    rank = ctx.rank(x)
    what = f"F.pad in mode {mode!r} by {2 * k} values"
    if rank is not None and rank not in (k + 1, k + 2):
        # torch's NotImplementedError: a rank error (the check's value stands for the result)
        return RANK_IN(x, lo=k + 1, hi=k + 2, what=what)
    # (a rank only inference knows: checked once it is known)
    if rank is None:  # (a check beside x, which keeps its entry range)
        x = ctx.let(x, "input") if not isinstance(x, ss.Var) else x
        ctx.let(RANK_IN(x, lo=k + 1, hi=k + 2, what=what), "check_rank")
    if mode != "circular":  # torch's kernels also need the channel axis (before the padded ones)
        x = ctx.let(x, "input") if not isinstance(x, ss.Var) else x
        first = ss.const(np.array([0], dtype=np.int64))
        ctx.let(ss.ops.take(x, first, axis=-(k + 1), mode="raise"), "check_channels")
    out = x
    for i in range(k):
        left, right = _reads(mode, amounts[2 * i], True), _reads(mode, amounts[2 * i + 1], False)
        if left is None and right is None:
            continue
        axis = -1 - i
        v = ctx.let(out, f"{mode}_axis{axis}")
        parts: list[ss.Expr] = []
        if left is not None:
            parts.append(ss.ops.take(v, left, axis=axis, mode="raise"))
        parts.append(v)
        if right is not None:
            parts.append(ss.ops.take(v, right, axis=axis, mode="raise"))
        out = ss.ops.concatenate(parts, axis=axis)
    return out


def _valued_pad(ctx: Ctx, x: ss.Expr, entries: list[Any]) -> ss.Expr:
    k = len(entries) // 2
    for v in entries:
        if isinstance(v, Opaque):
            if not has_value(v) or v.kind != "int":
                ctx.static(v, "the padding")
        else:
            ctx.size(v, "the padding")
    before = shape_tensor([entries[2 * (k - 1 - i)] for i in range(k)])
    after = shape_tensor([entries[2 * (k - 1 - i) + 1] for i in range(k)])
    if before is None or after is None:
        raise Unsupported("F.pad: padding amounts of this kind are not supported")
    sh = ctx.let(ss.ops.shape_of(x), "shape")
    last = ss.ops.add(ss.ops.add(ss.ops.strided_slice(sh, [-k], [None]), before), after)
    shape = ss.ops.concatenate([ss.ops.strided_slice(sh, [0], [-k]), last], axis=0)
    return ss.ops.cast_like(ss.ops.zeros(shape, "float32"), x)
