"""Python values computed from tensors: ``x.shape``, ``x.size(i)``, ``x.dim()``, ``x.dtype``, and
``math`` on sizes.

The importer knows a tensor's shape without inference only for model inputs and parameters (their
annotations): there ``x.shape`` is a tuple of dimensions and arithmetic on it is symshape
dimension arithmetic (``b * t``, ``c // 4``). For a computed tensor the sizes are run-time shape
values: they become :class:`~symshape.torch.values.Opaque` values carrying ``shape_of(x)``
(see :mod:`symshape.torch.shape_values`).
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import torch

import symshape as ss
from symshape.torch.context import Ctx
from symshape.torch.registry import converts
from symshape.torch.shape_values import size_of, sizes_of
from symshape.torch.values import DtypeOf, Opaque, static_shape

__all__ = ["size", "dim", "numel", "attribute", "math_fn", "promote_types"]

aten = torch.ops.aten


def _norm(i: int, rank: int, what: str) -> int:
    if not -rank <= i < rank:
        from symshape.torch.values import Unsupported

        raise Unsupported(f"{what}: dimension {i} is out of range for rank {rank}")
    return i % rank


@converts("size", aten.sym_size.int, aten.sym_size)
def size(ctx: Ctx, input: Any, dim: Any = None) -> Any:
    """``x.size()`` / ``x.size(i)`` (also ``aten.sym_size.int``)."""
    x = ctx.tensor(input, "size()")
    shape = static_shape(x)
    if dim is None:
        if shape is not None:
            return tuple(_static(d) for d in shape)
        base = Opaque(ctx.node_name, f"{_label(x)}.size()", ctx.span, "sizes", of=x, index=0)
        return sizes_of(ctx, x, base)
    i = ctx.axis(dim)
    if shape is not None:
        return _static(shape[_norm(i, len(shape), "size")])
    one = Opaque(
        ctx.node_name,
        f"{_label(x)}.size({i})",
        ctx.span,
        "int",
        of=x if i >= 0 else None,
        index=i if i >= 0 else None,
    )
    return size_of(ctx, x, i, one)


def _label(x: ss.Expr) -> str:
    return x.name if isinstance(x, ss.Var) else "x"


def _static(d: ss.Dim) -> int | ss.Dim:
    c = d.constant_value if d.is_constant else None
    return int(c) if c is not None else d


@converts("dim", "ndimension")
def dim(ctx: Ctx, input: Any) -> Any:
    """``x.dim()``: the rank."""
    x = ctx.tensor(input, "dim()")
    shape = static_shape(x)
    if shape is not None:
        return len(shape)
    return Opaque(ctx.node_name, f"{_label(x)}.dim()", ctx.span, "int")


@converts("numel", torch.numel)
def numel(ctx: Ctx, input: Any) -> Any:
    """``x.numel()``: the product of the sizes."""
    x = ctx.tensor(input, "numel()")
    shape = static_shape(x)
    if shape is not None:
        out: Any = 1
        for d in shape:
            out = out * _static(d)
        return out
    return Opaque(ctx.node_name, f"{_label(x)}.numel()", ctx.span, "int")


@converts(builtins.getattr)
def attribute(ctx: Ctx, obj: Any, name: Any, default: Any = None) -> Any:
    """``x.shape``, ``x.ndim``, ``x.dtype``, ``x.device``, ``x.T``, ``x.mT``."""
    from symshape.torch.convert import axes
    from symshape.torch.convert import shape as shape_ops

    if isinstance(obj, ss.Expr) or (isinstance(obj, Opaque) and obj.cascade):
        match name:
            case "shape":
                return size(ctx, obj)
            case "ndim":
                return dim(ctx, obj)
            case "dtype":
                return DtypeOf(ctx.tensor(obj))
            case "device":
                return "cpu"
            case "T":
                return shape_ops.reverse_dims(ctx, obj)
            case "mT":
                return axes.transpose(ctx, obj, -2, -1)
            case "is_cuda" | "requires_grad":
                return False
    if isinstance(obj, Opaque):
        return obj.derived("any")
    if isinstance(obj, tuple) and name in ("values", "indices"):  # torch.max(x, dim) and friends
        return obj[0 if name == "values" else 1]
    return getattr(obj, name, default) if not isinstance(name, Opaque) else obj


def _opaque_of(args: tuple[Any, ...]) -> Opaque | None:
    for a in args:
        if isinstance(a, Opaque):
            return a
    return None


@converts(math.sqrt, math.floor, math.ceil, math.log, math.exp, math.log2, builtins.int, builtins.float)
def math_fn(ctx: Ctx, *args: Any) -> Any:
    """``math.sqrt(d)`` etc. on sizes: evaluated when the sizes are constants, opaque otherwise."""
    o = _opaque_of(args)
    fn = ctx.node_target
    if o is not None:
        return o.derived("int" if fn in (math.floor, math.ceil, builtins.int) else "float")
    try:
        vals = [_static(a) if isinstance(a, ss.Dim) else a for a in args]
        if any(isinstance(v, ss.Dim) for v in vals):
            raise TypeError
        return fn(*vals)
    except (TypeError, ValueError):
        return Opaque(
            ctx.node_name,
            f"{getattr(fn, '__name__', fn)}(...)",
            ctx.span,
            "int" if fn in (math.floor, math.ceil, builtins.int) else "float",
        )


@converts(aten.promote_types, torch.promote_types)
def promote_types(ctx: Ctx, a: Any, b: Any) -> Any:
    """``torch.promote_types(a, b)`` of two dtypes (an exported ``torch.tensor(x.shape)``)."""
    return torch.promote_types(ctx.static(a, "a dtype"), ctx.static(b, "a dtype"))
