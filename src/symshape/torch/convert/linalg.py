"""Matrix products: ``matmul``/``@``, ``mm``, ``bmm``, ``mv``, ``F.linear``, ``addmm``, ``baddbmm``.

``F.linear(x, w, b)`` is ``dense(x, w)`` (``w`` is ``(out, in)``, ``x`` any rank with ``in``
last) plus ``bias_add`` on the last axis, which checks ``b`` has ``out`` entries; ``bmm`` is
``batch_matmul`` without the transposed second operand (both 3-d, batch sizes equal).
"""

from __future__ import annotations

import operator
from typing import Any

import torch
import torch.nn.functional as F

import symshape as ss
from symshape.torch.context import Ctx
from symshape.torch.convert.elementwise import keys
from symshape.torch.registry import converts

__all__ = ["matmul", "linear", "bmm"]

aten = torch.ops.aten


@converts(
    operator.matmul,
    operator.imatmul,
    *keys("matmul", "mm", "mv", torch.mm, torch.mv, aten.mm, aten.mv, inplace=False),
)
def matmul(ctx: Ctx, input: Any, other: Any, *, out: Any = None) -> Any:
    return ss.ops.matmul(ctx.tensor(input), ctx.tensor(other, "other"))


@converts(*keys("bmm", inplace=False))
def bmm(ctx: Ctx, input: Any, mat2: Any, *, out: Any = None) -> Any:
    return ss.ops.batch_matmul(ctx.tensor(input), ctx.tensor(mat2, "mat2"), transpose_b=False)


def linear_expr(x: ss.Expr, weight: ss.Expr, bias: ss.Expr | None) -> ss.Expr:
    """``x @ weight.T + bias``."""
    y = ss.ops.dense(x, weight)
    return ss.ops.bias_add(y, bias, axis=-1) if bias is not None else y


@converts(F.linear, aten.linear)
def linear(ctx: Ctx, input: Any, weight: Any, bias: Any = None) -> Any:
    b = ctx.tensor(bias, "bias") if bias is not None else None
    return linear_expr(ctx.tensor(input), ctx.tensor(weight, "weight"), b)


@converts(*keys("addmm", inplace=False))
def addmm(ctx: Ctx, input: Any, mat1: Any, mat2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    """``input + mat1 @ mat2`` (``input`` broadcasts)."""
    prod = ss.ops.matmul(ctx.tensor(mat1, "mat1"), ctx.tensor(mat2, "mat2"))
    return ss.ops.add(ctx.operand(input, prod), prod)


@converts(*keys("baddbmm", inplace=False))
def baddbmm(ctx: Ctx, input: Any, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    prod = ss.ops.batch_matmul(ctx.tensor(batch1, "batch1"), ctx.tensor(batch2, "batch2"), transpose_b=False)
    return ss.ops.add(ctx.operand(input, prod), prod)
