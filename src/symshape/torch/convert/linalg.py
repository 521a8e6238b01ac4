"""Matrix products: ``matmul``/``@``, ``mm``, ``bmm``, ``mv``, ``F.linear``, ``addmm``, ``baddbmm``,
``einsum``.

``F.linear(x, w, b)`` is ``dense(x, w)`` (``w`` is ``(out, in)``, ``x`` any rank with ``in``
last) plus ``bias_add`` on the last axis, which checks ``b`` has ``out`` entries; ``bmm`` is
``batch_matmul`` without the transposed second operand (both 3-d, batch sizes equal).

``torch.einsum(eq, *xs)`` (no ``...``, no label twice in one operand) is composed so that its
type is exact: each operand is transposed to one order of all the labels (the output's, then the
summed ones) with a size-1 axis for each label it lacks, the operands are multiplied
(broadcasting: the sizes of one label must agree, or be 1), and the summed labels are reduced.
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
from symshape.torch.values import Unsupported

__all__ = ["matmul", "mm", "mv", "linear", "bmm", "einsum"]

aten = torch.ops.aten


@converts(operator.matmul, operator.imatmul, *keys("matmul", inplace=False))
def matmul(ctx: Ctx, input: Any, other: Any, *, out: Any = None) -> Any:
    return ss.ops.matmul(ctx.tensor(input), ctx.tensor(other, "other"))


def ranked(x: ss.Expr, rank: int) -> ss.Expr:
    """``x``, required to have rank ``rank`` (an identity ``transpose`` states the rank)."""
    return ss.ops.transpose(x, list(range(rank)))


@converts(*keys("mm", torch.mm, aten.mm, inplace=False))
def mm(ctx: Ctx, input: Any, mat2: Any, *, out: Any = None) -> Any:
    """``torch.mm``: two matrices (no batch, no vectors: torch refuses other ranks)."""
    return ss.ops.matmul(ranked(ctx.tensor(input), 2), ranked(ctx.tensor(mat2, "mat2"), 2))


@converts(*keys("mv", torch.mv, aten.mv, inplace=False))
def mv(ctx: Ctx, input: Any, vec: Any, *, out: Any = None) -> Any:
    """``torch.mv``: a matrix and a vector."""
    return ss.ops.matmul(ranked(ctx.tensor(input), 2), ranked(ctx.tensor(vec, "vec"), 1))


def batch_product(ctx: Ctx, a: ss.Expr, b: ss.Expr) -> ss.Expr:
    """``bmm(a, b)``: both 3-d with equal batch sizes (torch does not broadcast a batch of 1; the
    batch axes are stated equal by stacking the two tensors' sums over their other axes)."""
    a = ctx.let(ranked(a, 3), "batch1")
    b = ctx.let(ranked(b, 3), "batch2")
    ctx.let(ss.ops.stack([ss.ops.sum(a, axis=[1, 2]), ss.ops.sum(b, axis=[1, 2])], axis=0), "check_batch")
    return ss.ops.batch_matmul(a, b, transpose_b=False)


@converts(*keys("bmm", inplace=False))
def bmm(ctx: Ctx, input: Any, mat2: Any, *, out: Any = None) -> Any:
    return batch_product(ctx, ctx.tensor(input), ctx.tensor(mat2, "mat2"))


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
    """``input + mat1 @ mat2`` (``input`` broadcasts; ``mat1`` and ``mat2`` are matrices)."""
    prod = ss.ops.matmul(ranked(ctx.tensor(mat1, "mat1"), 2), ranked(ctx.tensor(mat2, "mat2"), 2))
    return ss.ops.add(ctx.operand(input, prod), prod)


@converts(*keys("baddbmm", inplace=False))
def baddbmm(ctx: Ctx, input: Any, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    prod = batch_product(ctx, ctx.tensor(batch1, "batch1"), ctx.tensor(batch2, "batch2"))
    return ss.ops.add(ctx.operand(input, prod), prod)


@converts(torch.einsum, aten.einsum)
def einsum(ctx: Ctx, equation: Any, *operands: Any, path: Any = None) -> Any:
    """``torch.einsum("bhqd,bhkd->bhqk", q, k)`` (see the module docstring)."""
    eq = ctx.static(equation, "the equation")
    if not isinstance(eq, str):
        raise Unsupported("einsum needs its equation as a string")
    one_list = len(operands) == 1 and isinstance(operands[0], (list, tuple))
    ops = list(operands[0]) if one_list else list(operands)
    xs = [ctx.tensor(t, "each operand") for t in ops]
    eq = eq.replace(" ", "")
    if "." in eq:
        raise Unsupported("einsum with `...` is not supported")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(xs):
        raise Unsupported(f"einsum: {len(terms)} operands in {eq!r}, {len(xs)} given")
    if any(len(set(t)) != len(t) for t in terms) or not all(t.isalpha() or t == "" for t in terms):
        raise Unsupported(f"einsum {eq!r}: a label twice in one operand (a diagonal) is not supported")
    counts = {c: sum(t.count(c) for t in terms) for c in "".join(terms)}
    out = rhs if arrow else "".join(sorted(c for c, k in counts.items() if k == 1))
    if len(set(out)) != len(out) or any(c not in counts for c in out):
        raise Unsupported(f"einsum {eq!r}: bad output labels")
    labels = list(out) + [c for c in dict.fromkeys("".join(terms)) if c not in out]
    aligned: list[ss.Expr] = []
    for x, t in zip(xs, terms):
        order = [c for c in labels if c in t]
        perm = [t.index(c) for c in order]
        y: ss.Expr = ss.ops.transpose(x, perm)  # also states the rank: one axis per label
        for j, c in enumerate(labels):
            if c not in t:
                y = ss.ops.expand_dims(y, axis=j)
        aligned.append(y)
    prod = aligned[0]
    for y in aligned[1:]:
        prod = ss.ops.multiply(prod, y)
    summed = list(range(len(out), len(labels)))
    return ss.ops.sum(prod, axis=summed) if summed else prod
