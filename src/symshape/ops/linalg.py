"""Linear algebra: ``dense`` (Relay's ``nn.dense``), numpy ``matmul``, ``batch_matmul``."""

from __future__ import annotations

from symshape.encoding.types import Attrs
from symshape.ir.expr import Call, Expr
from symshape.ir.op import OPS
from symshape.ops.spec import OpSpec, register_ops
from symshape.relations.common import (
    attr_bool,
    attr_dtype,
    attr_int,
)

__all__ = ["dense", "matmul", "batch_matmul"]


def _chk_dense(attrs: Attrs, op: str) -> None:
    if attrs.get("units") is not None:
        attr_int(attrs, "units", None, op, lo=1)
    attr_dtype(attrs, "out_dtype", op)


def _chk_bmm(attrs: Attrs, op: str) -> None:
    attr_bool(attrs, "transpose_a", False, op)
    attr_bool(attrs, "transpose_b", True, op)
    attr_dtype(attrs, "out_dtype", op)


def _chk_out_dtype(attrs: Attrs, op: str) -> None:
    attr_dtype(attrs, "out_dtype", op)


SPECS: tuple[OpSpec, ...] = (
    OpSpec("nn.dense", "dense", 2, {"units": "int", "out_dtype": "dtype"}, _chk_dense),
    OpSpec("matmul", "matmul", 2, {"out_dtype": "dtype"}, _chk_out_dtype),
    OpSpec(
        "nn.batch_matmul",
        "batch_matmul",
        2,
        {"transpose_a": "bool", "transpose_b": "bool", "out_dtype": "dtype"},
        _chk_bmm,
    ),
)


register_ops(SPECS)


def dense(x: Expr, w: Expr, units: int | None = None, out_dtype: str = "") -> Call:
    """``x @ w.T`` with ``w`` of shape ``(units, K)`` (``nn.dense``)."""
    return OPS["nn.dense"].wrapper_call(x, w, units=units, out_dtype=out_dtype)


def matmul(a: Expr, b: Expr, out_dtype: str | None = None) -> Call:
    """numpy ``matmul`` (1-d promotion, broadcast batch dimensions); ``out_dtype`` (Relax) sets the
    result's dtype."""
    if out_dtype is None:
        return OPS["matmul"].wrapper_call(a, b)
    return OPS["matmul"].wrapper_call(a, b, out_dtype=out_dtype)


def batch_matmul(
    x: Expr, y: Expr, transpose_a: bool = False, transpose_b: bool = True, out_dtype: str = ""
) -> Call:
    """Batched ``(B, I, K) x (B, J, K) -> (B, I, J)`` (``nn.batch_matmul``)."""
    return OPS["nn.batch_matmul"].wrapper_call(
        x, y, transpose_a=transpose_a, transpose_b=transpose_b, out_dtype=out_dtype
    )
