"""Calls that keep their input's shape but not its entries, converted so that a small integer
tensor's value (a shape value) is torch's, or unknown (:mod:`.entry_ops` holds the operators):

=======================  ========================================================================
call                     value and range of the result
=======================  ========================================================================
``flip``/``fliplr``/...  ``strided_slice`` with stride -1: the entries reversed, the same range
``roll``                 ``take(x, arange(n) - s, mode="wrap")`` along the axis: rotated, the
                         same range
``sort``/``argsort``     ``take`` by ``torch.sort_indices``: sorted where the entries are
                         distinct constants (a 1-d tensor), the same range; a tensor of another
                         rank: a ``copy`` (its range)
``cumsum``               ``cumsum`` (in ``int64`` for an integer ``x``): the running sums (of a
                         value), the range of running sums
``cumprod``              ``torch.cumprod``: the running products; no range
``topk``                 ``take`` of ``arange(k)`` along the axis (``k`` at most its size)
``cummax``/``cummin``    ``x`` (its dim checked by ``torch.axis``) and its int64 indices
``fill_``/``full_like``  the fill broadcast to the input's shape (its value where it has one)
``zero_``                ``fill_(0)``
random fills, ``tril``,  ``torch.new_entries``: unknown entries (no value, no range)
``empty_like``
``&``/``|``/``^``/``~``  ``torch.bitwise`` of the promoted operands: bool as the logical
                         operators, integers entrywise where the entries are constants
``fmod``                 ``torch.fmod``: the same (C's remainder; ``remainder`` is ``mod``)
=======================  ========================================================================
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

import symshape as ss
from symshape.torch.context import Ctx
from symshape.torch.convert.elementwise import binary, cast, keys
from symshape.torch.convert.entry_ops import AXIS, BITWISE, CUMPROD, FMOD, NEW_ENTRIES, SORT_INDICES, fmod_int
from symshape.torch.convert.promotion import accumulated
from symshape.torch.registry import converts
from symshape.torch.shape_values import has_value, scalar_value
from symshape.torch.values import Opaque

__all__ = ["flip", "roll", "sort", "argsort", "cumulative", "fill", "full_like", "new_entries", "bitwise"]

aten = torch.ops.aten


def _axes(ctx: Ctx, dims: Sequence[Any], what: str) -> tuple[int, ...]:
    """``dims`` given as ``f(x, 0, 1)`` or ``f(x, (0, 1))``."""
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = dims[0]
    return tuple(ctx.axis(d, what) for d in dims)


def _flipped(x: ss.Expr, axes: Sequence[int]) -> ss.Expr:
    if not axes:
        return x
    n = len(axes)
    return ss.ops.strided_slice(x, [None] * n, [None] * n, strides=[-1] * n, axes=list(axes))


@converts(*keys("flip", inplace=False))
def flip(ctx: Ctx, input: Any, *dims: Any, **kwargs: Any) -> Any:
    """``x.flip(dims)``: each axis of ``dims`` reversed."""
    if "dims" in kwargs:
        dims = (kwargs["dims"],)
    return _flipped(ctx.tensor(input), _axes(ctx, dims, "dims"))


converts(*keys("fliplr", inplace=False))(lambda ctx, input: _flipped(ctx.tensor(input), [1]))
converts(*keys("flipud", inplace=False))(lambda ctx, input: _flipped(ctx.tensor(input), [0]))


def _rolled(x: ss.Expr, shift: int, axis: int) -> ss.Expr:
    """``x`` rotated by ``shift`` along ``axis``: entry ``i`` is ``x[(i - shift) mod n]``."""
    n = ss.ops.take(ss.ops.shape_of(x), ss.ops.int_tensor(axis), axis=0, mode="fast")
    index = ss.ops.subtract(ss.ops.arange(n), ss.ops.int_tensor(shift))
    return ss.ops.take(x, index, axis=axis, mode="wrap")


@converts(*keys("roll", inplace=False))
def roll(ctx: Ctx, input: Any, shifts: Any, dims: Any = None) -> Any:
    """``torch.roll(x, shifts, dims)``; without ``dims``, of the flattened tensor, reshaped back."""
    x = ctx.tensor(input)
    s = ctx.ints(shifts, "shifts")
    if dims is None or (isinstance(dims, (list, tuple)) and not dims):
        if len(s) != 1:
            ctx.unsupported("roll without dims takes one shift")
        if ctx.rank(x) == 1:
            return _rolled(x, s[0], 0)
        return ss.ops.reshape(_rolled(ss.ops.reshape(x, (-1,)), s[0], 0), ss.ops.shape_of(x))
    axes = _axes(ctx, (dims,), "dims")
    if len(axes) != len(s):
        ctx.unsupported(f"roll: {len(s)} shifts for {len(axes)} dims")
    for shift, axis in zip(s, axes):
        x = _rolled(x, shift, axis)
    return x


def _sorted(ctx: Ctx, x: ss.Expr, axis: int, descending: bool) -> tuple[ss.Expr, ss.Expr]:
    indices = SORT_INDICES(x, axis=axis, descending=descending)
    r = ctx.rank(x)
    if r == 0:
        return x, indices
    if r == 1:
        return ss.ops.take(x, indices, axis=0, mode="fast"), indices
    return ss.ops.copy(x), indices


@converts(*keys("sort", inplace=False), aten.sort.stable)
def sort(
    ctx: Ctx, input: Any, dim: Any = -1, descending: Any = False, *, stable: Any = False, **kwargs: Any
) -> Any:
    """``x.sort(dim, descending)``: ``(values, indices)``."""
    return _sorted(ctx, ctx.tensor(input), ctx.axis(dim), bool(ctx.static(descending, "descending")))


@converts(*keys("argsort", inplace=False))
def argsort(ctx: Ctx, input: Any, dim: Any = -1, descending: Any = False, **kwargs: Any) -> Any:
    return _sorted(ctx, ctx.tensor(input), ctx.axis(dim), bool(ctx.static(descending, "descending")))[1]


@converts(*keys("msort", inplace=False))
def msort(ctx: Ctx, input: Any) -> Any:
    return _sorted(ctx, ctx.tensor(input), 0, False)[0]


@converts(*keys("topk", inplace=False))
def topk(
    ctx: Ctx, input: Any, k: Any, dim: Any = -1, largest: Any = True, sorted: Any = True, **kwargs: Any
) -> Any:
    """``x.topk(k, dim)``: ``(values, indices)`` with ``k`` entries along ``dim`` (a ``take`` of
    ``arange(k)``, so ``k`` must be at most the axis' size, as torch requires; ``k`` may be a size
    computed from a shape)."""
    x = ctx.tensor(input)
    if isinstance(k, Opaque) and has_value(k) and k.kind == "int":
        count: Any = scalar_value(k)
    elif isinstance(k, ss.Dim) and not k.is_constant:
        count = ss.ops.int_tensor(k)
    else:
        n = ctx.integer(k, "k")
        if n < 0:
            raise ss.SymshapeError("invalid-argument", f"topk: k must be non-negative, got {n}")
        count = ss.const(np.array(n, dtype=np.int64))
    r = ctx.rank(x)
    axis = ctx.axis(dim)
    if r == 0:  # a 0-d tensor: k is 0 or 1, the tensor itself
        return x, ss.ops.cast(x, "int64")
    values = ctx.let(ss.ops.take(x, ss.ops.arange(count), axis=axis, mode="nonnegative"), "topk")
    return values, ss.ops.cast(values, "int64")


def _cumulative_extreme(ctx: Ctx, input: Any, dim: Any) -> Any:
    """``x.cummax(dim)``/``cummin``: ``(values, indices)`` of ``x``'s shape."""
    x = ctx.tensor(input)
    axis = ctx.axis(dim)
    checked = ctx.let(AXIS(x, axis=axis, what="cummax"), "cummax")
    return checked, ss.ops.cast(checked, "int64")


converts(*keys("cummax", inplace=False), *keys("cummin", inplace=False))(_cumulative_extreme)


def cumulative(prod: bool, inplace: bool) -> Callable[..., Any]:
    """``cumsum``/``cumprod`` (``inplace``: ``cumsum_``, which keeps ``x``'s dtype). ``cumsum`` is
    symshape's ``cumsum`` of ``x`` in the dtype torch sums in: ``dtype`` if given, else ``int64``
    for an integer or bool ``x`` (``x`` promoted with an ``int64`` tensor: floats stay)."""

    def conv(ctx: Ctx, input: Any, dim: Any, *args: Any, dtype: Any = None, **kwargs: Any) -> Any:
        x = ctx.tensor(input)
        if dtype is None and args and isinstance(args[0], torch.dtype):
            dtype = args[0]
        axis = ctx.axis(dim)
        out: ss.Expr
        if prod:
            out = CUMPROD(x, axis=axis)
            out = cast(ctx, out, dtype) if dtype is not None and not inplace else out
        else:
            src = cast(ctx, x, dtype) if dtype is not None else accumulated(x) if not inplace else x
            r = ctx.rank(x)
            if r is None:  # (symshape's cumsum takes any axis: torch's check, beside src)
                src = ctx.let(src, "input") if not isinstance(src, ss.Var) else src
                ctx.let(AXIS(src, axis=axis, what="cumsum"), "check_dim")
            elif not -max(r, 1) <= axis < max(r, 1):
                msg = f"cumsum: dim {axis} is out of range for rank {r}"
                raise ss.SymshapeError("axis-out-of-range", msg)
            out = ss.ops.cumsum(src, axis)
        return ss.ops.cast_like(out, x) if inplace else out

    return conv


for _name, _prod in (("cumsum", False), ("cumprod", True)):
    converts(*keys(_name, inplace=False))(cumulative(_prod, False))
    converts(f"{_name}_", getattr(aten, f"{_name}_"))(cumulative(_prod, True))


def _filler(ctx: Ctx, v: Any, like: ss.Expr | None) -> ss.Expr:
    """A fill value as a 0-d tensor (an int or a size keeps its value) of ``like``'s dtype (of
    torch's dtype for it when ``like`` is None)."""
    if isinstance(v, ss.Expr):
        t = v
    elif isinstance(v, int) and not isinstance(v, bool) and -(2**63) <= v < 2**63:
        t = ss.const(np.array(v, dtype=np.int64))
    elif isinstance(v, bool):
        t = ss.const(np.array(v, dtype=np.bool_))
    elif isinstance(v, Opaque) and has_value(v) and v.kind == "int" and v.value is not None:
        t = v.value
    else:
        t = ctx.scalar_tensor(v)
    return t if like is None else ss.ops.cast_like(t, like)


@converts(*keys("fill"), aten.fill.Scalar, aten.fill.Tensor)
def fill(ctx: Ctx, input: Any, value: Any) -> Any:
    """``x.fill_(v)``: ``v`` (cast to ``x``'s dtype) at every position of ``x``."""
    x = ctx.tensor(input)
    return ss.ops.broadcast_to(_filler(ctx, value, x), ss.ops.shape_of(x))


@converts(*keys("zero"), aten.zero)
def zero(ctx: Ctx, input: Any) -> Any:
    """``x.zero_()``: ``x.fill_(0)``."""
    return fill(ctx, input, 0)


@converts(*keys("full_like", inplace=False))
def full_like(ctx: Ctx, input: Any, fill_value: Any, *args: Any, dtype: Any = None, **kwargs: Any) -> Any:
    """``torch.full_like(x, v, dtype=...)``: ``v`` broadcast to ``x``'s shape, of ``x``'s dtype
    (or ``dtype``)."""
    x = ctx.tensor(input)
    v = _filler(ctx, fill_value, x if dtype is None else None)
    if dtype is not None:
        v = cast(ctx, v, dtype)
    return ss.ops.broadcast_to(v, ss.ops.shape_of(x))


@converts(
    *keys(
        "empty_like",
        torch.rand_like,
        torch.randn_like,
        torch.randint_like,
        aten.rand_like,
        aten.randn_like,
        inplace=False,
    )
)
def empty_like(ctx: Ctx, input: Any, *args: Any, dtype: Any = None, **kwargs: Any) -> Any:
    """Fresh entries of ``x``'s shape (and dtype, or ``dtype``)."""
    out = NEW_ENTRIES(ctx.tensor(input))
    return cast(ctx, out, dtype) if dtype is not None else out


@converts("tril", "triu", torch.tril, torch.triu, aten.tril, aten.triu, aten.tril_, aten.triu_)
def triangle(ctx: Ctx, input: Any, *args: Any, **kwargs: Any) -> Any:
    """``x.triu(k)``/``x.tril(k)``: ``x``'s shape and dtype; torch needs at least 2 dimensions
    (stated by a reduction over axis -2, which must exist)."""
    x = ctx.let(ctx.tensor(input), "input")
    ctx.let(ss.ops.sum(x, axis=[-2]), "check_rank")
    return NEW_ENTRIES(x)


@converts(
    "uniform_",
    "normal_",
    "bernoulli_",
    "random_",
    "exponential_",
    aten.uniform_,
    aten.normal_,
    aten.bernoulli_,
    aten.random_,
    aten.exponential_,
)
def new_entries(ctx: Ctx, input: Any, *args: Any, **kwargs: Any) -> Any:
    """Calls that write new entries into a tensor of the input's shape and dtype."""
    return NEW_ENTRIES(ctx.tensor(input))


def _py_kind(a: object, b: object) -> str:
    both_bool = all(isinstance(v, bool) or (isinstance(v, Opaque) and v.kind == "bool") for v in (a, b))
    return "bool" if both_bool else "int"


def bitwise(op: str, py: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    def conv(ctx: Ctx, input: Any, other: Any) -> Any:
        return binary(ctx, input, other, lambda a, b: BITWISE(a, b, op=op), py, _py_kind(input, other))

    return conv


for _op, _py in (("and", operator.and_), ("or", operator.or_), ("xor", operator.xor)):
    _name = f"bitwise_{_op}"
    converts(_py, f"__{_op}__", *keys(_name, getattr(aten, f"__{_op}__")))(bitwise(_op, _py))


def _py_fmod(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        r = fmod_int(a, b)
        if r is None:
            raise ZeroDivisionError("fmod by zero")
        return r
    return math.fmod(a, b)


converts(*keys("fmod"))(lambda ctx, input, other: binary(ctx, input, other, FMOD, _py_fmod))


@converts(operator.invert, *keys("bitwise_not"))
def bitwise_not(ctx: Ctx, input: Any) -> Any:
    """``~x``: logical not of a bool tensor, ``-x - 1`` of an integer one."""
    if isinstance(input, ss.Expr):
        return BITWISE(input, input, op="not")
    if isinstance(input, Opaque):
        return input.derived(input.kind)
    return ~input
