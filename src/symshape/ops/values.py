"""Shape values and data-dependent sizes: ``shape_of``, ``int_tensor``, ``arange``,
``constant_of_shape``, and ``nonzero``/``unique``/``boolean_mask`` whose result size only the data
decides (an unbacked symbol).
"""

from __future__ import annotations

from typing import Any

from symshape.encoding.dims import Dim
from symshape.encoding.types import Attrs
from symshape.encoding.values import SIZE_DTYPES
from symshape.ir.expr import Call, Expr
from symshape.ir.op import OPS
from symshape.ops.spec import OpSpec, register_ops, size_arg
from symshape.relations.common import (
    attr_dtype,
    bad,
)
from symshape.relations.dynamic import parse_int_value

__all__ = ["constant_of_shape", "shape_of", "int_tensor", "arange", "nonzero", "unique", "boolean_mask"]


def _chk_int_tensor(attrs: Attrs, op: str) -> None:
    parse_int_value(attrs, op)
    dt = attr_dtype(attrs, "dtype", op)
    if dt is not None and dt not in SIZE_DTYPES:
        raise bad(op, f"dtype must be int32 or int64, got {dt}")


def _chk_size(attrs: Attrs, op: str) -> None:
    v = attrs.get("size")
    if v is not None and not (isinstance(v, Dim) and v.is_symbol):
        raise bad(op, f"size must be a symbol (ss.dim('u', min=0)), got {v!r}")


def _chk_dtype(attrs: Attrs, op: str) -> None:
    attr_dtype(attrs, "dtype", op)


_SIZED = "an operator whose result has a data-dependent size"


SPECS: tuple[OpSpec, ...] = (
    OpSpec(
        "constant_of_shape",
        "init_tensor",
        1,
        {"dtype": "dtype", "value": "float"},
        _chk_dtype,
        doc="ONNX ConstantOfShape: a tensor of the shape its input holds",
    ),
    OpSpec(
        "shape_of",
        "shape_of",
        1,
        {"dtype": "dtype"},
        _chk_dtype,
        doc="the shape of a tensor as a 1-d int tensor carrying it as its value",
    ),
    OpSpec(
        "int_tensor",
        "int_tensor",
        0,
        {"value": "indices", "dtype": "dtype"},
        _chk_int_tensor,
        doc="a 0-d or 1-d int tensor with a known value of ints and dimensions",
    ),
    OpSpec(
        "arange",
        "arange",
        3,
        {"dtype": "dtype"},
        _chk_dtype,
        doc="numpy arange / ONNX Range over 0-d tensors start, stop, step",
    ),
    OpSpec("nonzero", "nonzero", 1, {"size": "shape"}, _chk_size, doc=_SIZED),
    OpSpec("unique", "unique", 1, {"size": "shape", "axis": "int"}, _chk_size, doc=_SIZED),
    OpSpec("boolean_mask", "boolean_mask", 2, {"size": "shape"}, _chk_size, doc=_SIZED),
)


register_ops(SPECS)


def constant_of_shape(shape: Expr, value: float = 0.0, dtype: str = "float32") -> Call:
    """ONNX ``ConstantOfShape``: a tensor of the shape the 1-d int tensor ``shape`` holds."""
    return OPS["constant_of_shape"].wrapper_call(shape, dtype=dtype, value=value)


def shape_of(x: Expr, dtype: str = "int64") -> Call:
    """``x``'s shape as a 1-d int tensor whose value is the shape: ``x: (n, s, 64)`` gives
    ``Tensor[(3,), int64] = (n, s, 64)``."""
    return OPS["shape_of"].wrapper_call(x, dtype=dtype)


def int_tensor(value: Any, dtype: str = "int64") -> Call:
    """A literal int tensor whose entries may be dimensions: ``int_tensor((n, -1, 64))`` is
    ``Tensor[(3,), int64] = (n, -1, 64)``, ``int_tensor(n)`` is ``Tensor[(), int64] = n``."""
    return OPS["int_tensor"].wrapper_call(value=value, dtype=dtype)


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: str | None = None) -> Call:
    """numpy ``arange`` / ONNX ``Range``: ``arange(stop)`` or ``arange(start, stop, step)``; each
    bound an int, a dimension or a 0-d tensor expression. The length is
    ``max(ceil((stop - start)/step), 0)`` (exact when ``step`` is a constant)."""
    if stop is None:
        start, stop = 0, start
    dt = dtype if dtype in SIZE_DTYPES else "int64"
    args = [size_arg(v, dt) for v in (start, stop, step)]
    return OPS["arange"].wrapper_call(*args, dtype=dtype)


def nonzero(x: Expr, size: Dim | None = None) -> Call:
    """The indices of the non-zero elements, ``(rank(x), u)`` int64 (ONNX ``NonZero``); ``u`` is a
    fresh size (``size``, or named ``u0, u1, ...`` by :func:`symshape.infer`)."""
    return OPS["nonzero"].wrapper_call(x, size=size)


def unique(x: Expr, axis: int | None = None, size: Dim | None = None) -> Call:
    """The distinct elements of ``x`` (flattened; or slices along ``axis``): a fresh size ``u``."""
    return OPS["unique"].wrapper_call(x, axis=axis, size=size)


def boolean_mask(x: Expr, mask: Expr, size: Dim | None = None) -> Call:
    """``x[mask]`` for a bool ``mask`` of ``x``'s leading shape: ``(u, *x.shape[mask.ndim:])``."""
    return OPS["boolean_mask"].wrapper_call(x, mask, size=size)
