"""Linear algebra: ``MatMul``, ``Gemm``, ``MatMulInteger``, ``QLinearMatMul``, ``Det``, ``Einsum``.

* ``MatMul`` is numpy's ``matmul`` (1-d operands promoted, batch axes broadcast): symshape's
  ``matmul``.
* ``Gemm``: ``A'`` (``M x K``, transposed if ``transA``) times ``B'`` (``K x N``), plus ``C``
  broadcast one way to ``(M, N)``.
* ``MatMulInteger``/``QLinearMatMul``: ``matmul`` shapes, ``int32`` or the output zero point's type.
* ``Det``: the batch axes, ``x.shape[:-2]``.
* ``Einsum`` has no converter: it needs an ``einsum`` operator in symshape.
"""

from __future__ import annotations

import symshape as ss
from symshape import Expr
from symshape.onnx.context import NodeContext
from symshape.onnx.ops.common import like
from symshape.onnx.registry import Outputs, register

__all__: list[str] = []


@register("MatMul", since=1)
def _matmul(ctx: NodeContext) -> Outputs:
    return ss.ops.matmul(ctx.input(0), ctx.input(1))


@register("Gemm", since=1)
def _gemm(ctx: NodeContext) -> Outputs:
    a, b = ctx.input(0), ctx.input(1)
    if ctx.attr_int("transA", 0):
        a = ss.ops.transpose(a, [1, 0])
    if ctx.attr_int("transB", 0):
        b = ss.ops.transpose(b, [1, 0])
    y: Expr = ss.ops.matmul(a, b)
    if ctx.has_input(2):
        y = like(ss.ops.add(y, ctx.input(2)), y)
    return y


@register("MatMulInteger", since=10)
def _matmul_integer(ctx: NodeContext) -> Outputs:
    return ss.ops.matmul(ss.ops.cast(ctx.input(0), "int32"), ss.ops.cast(ctx.input(1), "int32"))


@register("QLinearMatMul", since=10)
def _qlinear_matmul(ctx: NodeContext) -> Outputs:
    y = ss.ops.matmul(ss.ops.cast(ctx.input(0), "int32"), ss.ops.cast(ctx.input(3), "int32"))
    return ss.ops.cast_like(y, ctx.input(7))


@register("Det", since=11)
def _det(ctx: NodeContext) -> Outputs:
    return ss.ops.sum(ctx.input(0), axis=(-2, -1))
