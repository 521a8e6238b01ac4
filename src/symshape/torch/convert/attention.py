"""Attention: ``F.scaled_dot_product_attention`` (``softmax(q @ k^T + mask) @ v``) and the parts
``nn.MultiheadAttention`` (:mod:`symshape.torch.convert.modules`) is made of: :func:`attention`,
and ``torch.attn_mask``, an operator of the importer's own that checks an ``attn_mask`` against
torch's shapes, ``(L, S)`` or ``(N * heads, L, S)``, whether or not its rank is known at import
(a mask computed as ``x.new_zeros((n * heads, l, s))`` or ``mask > 0``), and gives it as
``(1, 1, L, S)`` or ``(N, heads, L, S)`` to add to the scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

import symshape as ss
from symshape.relations.base import Context
from symshape.relations.common import Checks
from symshape.torch.context import Ctx
from symshape.torch.convert.axes import SWAPAXES
from symshape.torch.registry import converts
from symshape.torch.values import Unsupported

__all__ = ["ATTN_MASK", "attention", "sdpa"]

aten = torch.ops.aten


@ss.relation("torch.attn_mask")
def _attn_mask_rel(ctx: Context, args: Sequence[ss.Type], attrs: Any) -> bool:
    """``nn.MultiheadAttention``'s ``attn_mask`` against ``q (N, heads, L, hd)`` and
    ``k (N, heads, S, hd)``: torch's ``(L, S)`` or ``(N * heads, L, S)``, as ``(1, 1, L, S)`` or
    ``(N, heads, L, S)``."""
    mask, q, k, out = args
    if not all(isinstance(t, ss.TensorType) for t in (mask, q, k)):
        return False
    assert isinstance(mask, ss.TensorType) and isinstance(q, ss.TensorType) and isinstance(k, ss.TensorType)
    if mask.ndim is None or q.ndim != 4 or k.ndim != 4:
        if not ctx.final:
            return False
        ctx.assign(out, ss.Tensor(None, mask.dtype))
        return True
    n, h, ls = q.dims[0], q.dims[1], (q.dims[2], k.dims[2])
    if mask.ndim not in (2, 3):
        ctx.fail(ss.errors.RANK_MISMATCH, f"attn_mask `{mask}` must be 2-D or 3-D (torch)")
    want = ls if mask.ndim == 2 else (n * h, *ls)
    shown = ", ".join(str(d) for d in want)
    msg = f"the {mask.ndim}D attn_mask `{mask}` should be ({shown}) (torch)"
    chk = Checks()  # (an unknown on either side is bound, other dimensions are a condition)
    for a, b in zip(mask.dims, want):
        chk.equal(a, b, ss.errors.SHAPE_MISMATCH, msg)
    chk.commit(ctx)
    ctx.assign(out, ss.Tensor((1, 1, *ls) if mask.ndim == 2 else (n, h, *ls), mask.dtype))
    return True


#: ``torch.attn_mask(mask, q, k)`` (see :func:`_attn_mask_rel`)
ATTN_MASK = ss.register_op(
    "torch.attn_mask",
    "torch.attn_mask",
    3,
    doc="nn.MultiheadAttention's attn_mask (L, S) or (N*heads, L, S), checked, as (1|N, 1|heads, L, S)",
    attr_types={},
)


def attention(ctx: Ctx, q: ss.Expr, k: ss.Expr, v: ss.Expr, mask: ss.Expr | None) -> tuple[ss.Expr, ss.Expr]:
    """``softmax(q @ k^T + mask) @ v`` and the attention weights (bound once)."""
    scores = ss.ops.matmul(q, SWAPAXES(k, axis1=-2, axis2=-1))
    if mask is not None:
        scores = ss.ops.add(scores, ss.ops.cast_like(mask, scores))
    weights = ctx.let(ss.ops.softmax(scores, axis=-1), "weights")
    return ss.ops.matmul(weights, v), weights


@converts(F.scaled_dot_product_attention, aten.scaled_dot_product_attention)
def sdpa(
    ctx: Ctx,
    query: Any,
    key: Any,
    value: Any,
    attn_mask: Any = None,
    dropout_p: Any = 0.0,
    is_causal: Any = False,
    scale: Any = None,
    enable_gqa: Any = False,
) -> Any:
    """``F.scaled_dot_product_attention`` (without grouped-query broadcasting)."""
    if enable_gqa:
        raise Unsupported("enable_gqa=True (grouped-query attention) is not supported")
    mask = ctx.tensor(attn_mask, "attn_mask") if attn_mask is not None else None
    out, _ = attention(ctx, ctx.tensor(query), ctx.tensor(key, "key"), ctx.tensor(value, "value"), mask)
    return out
