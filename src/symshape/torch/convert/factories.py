"""Tensor factories: ``zeros``, ``ones``, ``empty``, ``full``, ``rand*``, ``new_*``, ``arange``,
``torch.tensor``, ``eye``.

Sizes are literal ints, dimensions of annotations, or shape values (sizes of computed tensors,
:mod:`symshape.torch.shape_values`): a shape holding a run-time size is a valued 1-d int64
tensor that ``zeros`` reads. ``arange`` with a symbolic bound is the core ``arange`` (its length
``max(ceil((end - start) / step), 0)``; ``arange(t)`` is a ``(t,)`` tensor), its bounds literal
or valued 0-d tensors; with constant bounds it is a constant of the computed length.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

import symshape as ss
from symshape.ops.spec import size_arg
from symshape.torch.context import Ctx, dtype_name
from symshape.torch.convert.elementwise import cast
from symshape.torch.convert.shape import valued_shape
from symshape.torch.registry import converts
from symshape.torch.shape_values import has_value, is_int, scalar_value
from symshape.torch.values import NeedsShapeValues, Opaque, Unsupported

__all__ = ["factory", "full", "randint", "new_factory", "arange", "tensor", "eye"]

aten = torch.ops.aten
Size = int | ss.Dim


def _factory_shape(ctx: Ctx, args: Sequence[Any], kwargs: dict[str, Any]) -> tuple[Size, ...] | ss.Expr:
    if "size" in kwargs:
        args = (kwargs.pop("size"),)
    return _shape_arg(ctx, list(args))


def _shape_arg(ctx: Ctx, v: Any) -> tuple[Size, ...] | ss.Expr:
    """A factory's size: literal sizes, or the valued shape tensor of run-time sizes."""
    valued = valued_shape(ctx, v, "the size")
    return valued if valued is not None else ctx.sizes(v, "the size")


def _filled(shape: tuple[Size, ...] | ss.Expr, dtype: str) -> ss.Expr:
    """A tensor of ``shape`` whose values do not matter."""
    if isinstance(shape, ss.Expr):
        return ss.ops.zeros(shape, dtype)
    return ss.Constant(shape=shape, dtype=dtype)


def _fill(shape: tuple[Size, ...] | ss.Expr, fill_value: Any, dtype: str) -> ss.Expr:
    """``shape`` filled with ``fill_value``: a Python number is the entries (symshape's ``full``:
    a small int tensor's value, an integer tensor's range); a run-time number: unknown entries."""
    if isinstance(fill_value, (bool, int, float)):
        return ss.ops.full(fill_value, shape, dtype)
    return _filled(shape, dtype)


def _dtype(ctx: Ctx, dtype: Any, default: str) -> str:
    return default if dtype is None else dtype_name(ctx.static(dtype, "dtype"))


@converts(torch.zeros, torch.ones, torch.empty, torch.rand, torch.randn, aten.zeros, aten.ones, aten.empty)
def factory(ctx: Ctx, *args: Any, dtype: Any = None, **kwargs: Any) -> Any:
    """``torch.zeros(*size)`` and friends: a tensor of the given shape."""
    shape = _factory_shape(ctx, args, kwargs)
    dt = _dtype(ctx, dtype, "float32")
    target = ctx.node_target
    name = getattr(getattr(target, "overloadpacket", target), "__name__", "")
    if name == "zeros":
        return ss.ops.zeros(shape, dt)
    if name == "ones":
        return ss.ops.ones(shape, dt)
    return _filled(shape, dt)


@converts(torch.full, aten.full)
def full(ctx: Ctx, size: Any, fill_value: Any, *, dtype: Any = None, **kwargs: Any) -> Any:
    shape = _shape_arg(ctx, size)
    default = (
        "bool" if isinstance(fill_value, bool) else "int64" if isinstance(fill_value, int) else "float32"
    )
    return _fill(shape, fill_value, _dtype(ctx, dtype, default))


@converts(torch.randint)
def randint(ctx: Ctx, *args: Any, dtype: Any = None, **kwargs: Any) -> Any:
    """``torch.randint([low,] high, size)``."""
    size = kwargs.get("size", args[-1] if args else None)
    return _filled(_shape_arg(ctx, size), _dtype(ctx, dtype, "int64"))


@converts(
    "new_zeros",
    "new_ones",
    "new_empty",
    "new_full",
    aten.new_zeros,
    aten.new_ones,
    aten.new_empty,
    aten.new_full,
)
def new_factory(ctx: Ctx, input: Any, *size: Any, dtype: Any = None, **kwargs: Any) -> Any:
    """``x.new_zeros(*size)`` (``new_full(size, value)``): like ``x``'s dtype unless ``dtype`` is
    given; filled with 0, 1, the value (``new_empty``: unknown entries)."""
    x = ctx.tensor(input)
    target = ctx.node_target
    name = getattr(getattr(target, "overloadpacket", target), "__name__", str(target))
    if "size" in kwargs:
        size = (kwargs.pop("size"),)
    fill: Any = {"new_zeros": 0, "new_ones": 1}.get(name)
    if "full" in name:
        fill = size[1] if len(size) > 1 else kwargs.get("fill_value")
        size = size[:1]
    shape = _shape_arg(ctx, size)
    out = _fill(shape, fill, "float32" if isinstance(fill, float) else "int64")
    return cast(ctx, out, dtype) if dtype is not None else ss.ops.cast_like(out, x)


@converts(torch.arange, aten.arange)
def arange(ctx: Ctx, *args: Any, dtype: Any = None, **kwargs: Any) -> Any:
    """``torch.arange([start,] end[, step])``: ``(n,)`` with ``n`` from static bounds (``arange(t)``
    of an annotated size ``t`` is ``(t,)``)."""
    vals = list(args) + [kwargs[k] for k in ("start", "end", "step") if k in kwargs]
    if len(vals) == 1:
        start, end, step = 0, vals[0], 1
    elif len(vals) == 2:
        start, end, step = vals[0], vals[1], 1
    else:
        start, end, step = vals[0], vals[1], vals[2]
    bounds = (start, end, step)
    for v in bounds:
        if isinstance(v, Opaque) and not (has_value(v) and v.kind == "int"):
            if v.cascade:
                ctx.static(v, "a bound")
            raise NeedsShapeValues("arange", v)
    symbolic = any(isinstance(v, (Opaque, ss.Dim)) for v in bounds)
    if symbolic and not any(isinstance(v, float) for v in bounds):
        # the core operator: its length is max(ceil((end - start) / step), 0), read from values
        if not all(isinstance(v, Opaque) or is_int(v) for v in bounds):
            raise Unsupported("arange bounds must be integers or sizes")
        vals = [scalar_value(v) if isinstance(v, Opaque) else v for v in bounds]
        step_v = vals[2]
        if isinstance(step_v, int) and step_v != 0:
            # torch refuses bounds the wrong way round for the step's sign (ONNX's Range, and
            # symshape's arange, give an empty range): the distance must be non-negative
            lo, hi = (vals[0], vals[1]) if step_v > 0 else (vals[1], vals[0])
            gap = ss.ops.subtract(size_arg(hi), size_arg(lo))
            ctx.let(ss.ops.zeros(ss.ops.expand_dims(gap, 0)), "check_bounds")
        return ss.ops.arange(vals[0], vals[1], vals[2], dtype=_dtype(ctx, dtype, "int64"))
    start, end, step = (ctx.static(v, "a bound") for v in bounds)
    floats = any(isinstance(v, float) for v in (start, end, step))
    if floats:
        if any(isinstance(v, ss.Dim) for v in (start, end, step)):
            raise Unsupported("arange with float bounds and a symbolic size")
        n: Size = max(0, math.ceil((end - start) / step))
    elif step == 1:
        n = end - start
    elif isinstance(step, int) and step > 0:
        n = (end - start + step - 1) // step
    elif isinstance(step, int) and step < 0:
        n = (start - end - step - 1) // (-step)
    else:
        raise Unsupported(f"arange step {step}")
    if isinstance(n, ss.Dim) and n.is_constant:
        n = int(n.constant_value)  # type: ignore[arg-type]
    if isinstance(n, int) and n < 0:
        raise Unsupported("arange with end < start")
    if not floats and all(isinstance(v, int) for v in (start, end, step)):
        # integer bounds (literal, or sizes the importer knows: `arange(x.shape[0])` of an input
        # `(4, n)`): the core operator, whose entries have a range an index into a table needs
        return ss.ops.arange(start, end, step, dtype=_dtype(ctx, dtype, "int64"))
    return ss.Constant(shape=(n,), dtype=_dtype(ctx, dtype, "float32" if floats else "int64"))


def _nested_shape(v: Any) -> tuple[tuple[int, ...], str]:
    if isinstance(v, (list, tuple)):
        if not v:
            return (0,), "float32"
        inner = [_nested_shape(x) for x in v]
        shapes = {s for s, _ in inner}
        if len(shapes) != 1:
            raise Unsupported("a ragged nested list")
        dts = {d for _, d in inner}
        dt = "float32" if "float32" in dts else "int64" if "int64" in dts else "bool"
        return (len(v), *inner[0][0]), dt
    if isinstance(v, bool):
        return (), "bool"
    if isinstance(v, int):
        return (), "int64"
    if isinstance(v, float):
        return (), "float32"
    raise Unsupported(f"torch.tensor of {type(v).__name__}")


@converts(torch.tensor, torch.as_tensor, torch.scalar_tensor, aten.scalar_tensor)
def tensor(ctx: Ctx, data: Any, *args: Any, dtype: Any = None, **kwargs: Any) -> Any:
    """``torch.tensor(data)``: the shape of the nested lists; of a size (``aten.scalar_tensor`` of a
    symbolic size in an exported program), the 0-d int64 tensor carrying it."""
    if isinstance(data, ss.Expr):
        return cast(ctx, data, dtype) if dtype is not None else data
    if (is_int(data) and not isinstance(data, int)) or (has_value(data) and data.kind == "int"):
        v = scalar_value(data)
        assert v is not None
        return cast(ctx, v, dtype) if dtype is not None else v
    if isinstance(data, Opaque):
        return ss.Constant(shape=(), dtype=_dtype(ctx, dtype, "int64" if data.kind == "int" else "float32"))
    data = ctx.static(data, "the data")
    shape, dt = _nested_shape(data)
    if dt == "int64" and len(shape) <= 1 and all(-(2**63) <= v < 2**63 for v in np.ravel(data).tolist()):
        lit = ss.const(np.array(data, dtype=np.int64))  # a literal int or list of ints: its value
        return cast(ctx, lit, dtype) if dtype is not None else lit
    return ss.Constant(shape=shape, dtype=_dtype(ctx, dtype, dt))


@converts(torch.eye)
def eye(ctx: Ctx, n: Any, m: Any = None, *, dtype: Any = None, **kwargs: Any) -> Any:
    rows = ctx.size(n, "n")
    cols = ctx.size(m, "m") if m is not None else rows
    return ss.Constant(shape=(rows, cols), dtype=_dtype(ctx, dtype, "float32"))
