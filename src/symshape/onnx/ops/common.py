"""Compositions the converters share: ONNX semantics built from symshape operators.

Each helper is exact: the type it produces is the type ONNX gives, for every input ONNX accepts.

* :func:`set_dim` replaces the dimension at ``axis`` by the constant ``k``: ``take`` with ``k``
  indices (``take(x, arange(k), axis)`` has ``x``'s shape with ``k`` at ``axis``; the index values
  do not matter for the type).
* :func:`expand` is ONNX ``Expand`` (bidirectional broadcasting against a literal shape): ``x +
  zeros(shape)`` cast to ``x``'s dtype.
* :func:`unsqueeze` inserts size-1 axes at output positions (``Unsqueeze``), without knowing the
  input rank when the axes are all non-negative or all negative.
* :func:`same_as_input` is the converter of an operator whose output has its first input's type;
  :func:`of_inputs` makes the converter that applies a symshape function to the node's inputs.
* :func:`like_product` is input 0 times input 1 with input 0's type (a scale, a gate).
* :func:`like` gives ``x``'s type to a value computed from ``x`` that must have it (unidirectional
  broadcasting: ``reshape_like(x + b, x)`` also checks that ``b`` did not grow ``x``).
* :func:`stacked` stacks two tensors on a new first axis: an expression that needs their shapes
  equal (no broadcasting), for the conditions onnxruntime checks; :func:`checked` gives a value
  the type it has once such check expressions type-check.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final, Generic, TypeVar, cast

import symshape as ss
from symshape import Expr
from symshape.errors import AXIS_OUT_OF_RANGE, BAD_ATTRIBUTE
from symshape.ir.op import PreparedCall
from symshape.onnx.context import NodeContext
from symshape.source import SPAN_SCOPE_UNSET, span_scope_get

__all__ = [
    "PlanTable",
    "prepare",
    "prepared",
    "set_dim",
    "scale_axis",
    "expand",
    "unsqueeze",
    "like",
    "same_as_input",
    "of_inputs",
    "like_product",
    "norm_axes",
    "tuple_of",
    "item_of",
    "to_int64",
    "scalar_of",
    "chain",
    "value_slice",
    "stacked",
    "checked",
]


def same_as_input(ctx: NodeContext) -> Expr:
    """The converter of an operator whose output has its first input's type (a copy)."""
    return ss.ops.copy(ctx.input(0))


def of_inputs(fn: Callable[..., Expr], n: int) -> Callable[[NodeContext], Expr]:
    """The converter whose output is ``fn`` of the node's first ``n`` inputs (all required)."""

    def convert(ctx: NodeContext) -> Expr:
        return fn(*(ctx.input(i) for i in range(n)))

    return convert


def like_product(ctx: NodeContext) -> Expr:
    """Input 0 times input 1, of input 0's type (unidirectional broadcasting, see :func:`like`)."""
    x = ctx.input(0)
    with ctx.checking(f"input 1 '{ctx.input_name(1)}' broadcasts to input 0's shape, one way"):
        return like(ss.ops.multiply(x, ctx.input(1)), x)


def value_slice(
    x: Expr,
    begin: Expr | Sequence[int | None],
    end: Expr | Sequence[int | None],
    strides: Expr | Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
) -> Expr:
    """``strided_slice`` whose bounds may be 1-d int tensors (their shape values are read)."""
    return ss.ops.strided_slice(x, cast(Any, begin), cast(Any, end), strides=cast(Any, strides), axes=axes)


def set_dim(x: Expr, axis: int, k: int) -> Expr:
    """``x`` with the dimension at ``axis`` replaced by the constant ``k`` (type only)."""
    return ss.ops.take(x, ss.Constant(shape=(k,), dtype="int64"), axis=axis)


def scale_axis(x: Expr, axis: int, rank: int, s: int) -> Expr:
    """``x`` (of rank ``rank``) with the dimension at ``axis`` (non-negative) multiplied by the
    constant ``s``: a size-1 axis after it, broadcast to ``s``, the two merged."""
    if s == 1:
        return x
    y: Expr = ss.ops.expand_dims(x, axis + 1)
    target = [1] * (rank + 1)
    target[axis + 1] = s
    y = expand(y, target)
    return ss.ops.reshape(y, (0,) * axis + (-3,) + (0,) * (rank - axis - 1))


def expand(x: Expr, shape: Sequence[int]) -> Expr:
    """ONNX ``Expand``: ``x`` broadcast (both ways) against ``shape``, dtype of ``x``."""
    z = ss.ops.zeros(tuple(shape), "float32")
    return ss.ops.add(x, ss.ops.cast_like(z, x))


def like(y: Expr, x: Expr) -> Expr:
    """``y`` (computed from ``x`` and must have its shape) with ``x``'s shape: the element count is
    checked, so ``y`` cannot have grown."""
    return ss.ops.reshape_like(y, x)


def norm_axes(ctx: NodeContext, axes: Sequence[int], rank: int, what: str = "axes") -> list[int]:
    """Axes made non-negative for ``rank``; out of range or repeated is an error."""
    out: list[int] = []
    for a in axes:
        b = a + rank if a < 0 else a
        if not 0 <= b < rank:
            ctx.fail(AXIS_OUT_OF_RANGE, f"{what} {a} is out of range for rank {rank}")
        if b in out:
            ctx.fail(BAD_ATTRIBUTE, f"{what} {list(axes)} repeat an axis")
        out.append(b)
    return out


def unsqueeze(ctx: NodeContext, x: Expr, axes: Sequence[int], input_index: int = 0) -> Expr:
    """ONNX ``Unsqueeze``: size-1 axes at the output positions ``axes``.

    Non-negative axes are inserted in ascending order, negative ones (counted from the output's
    end) from ``-1`` down, so neither needs the input rank; mixing both signs does.
    """
    key = tuple(axes)
    plan = _UNSQUEEZE_PLANS.get(key)
    if plan is not None:  # (the calls below, their attributes checked once: a model has many)
        for p in plan:
            x = p.build(x)
        return x
    if len(set(axes)) != len(axes):
        ctx.fail(BAD_ATTRIBUTE, f"axes {list(axes)} repeat an axis")
    if min(axes, default=0) >= 0 or max(axes) < 0:
        runs = _runs(sorted(axes, reverse=min(axes, default=0) < 0))
        _UNSQUEEZE_PLANS.put(
            key, tuple(PreparedCall.of(ss.ops.expand_dims, 1, axis=a, num_newaxis=k) for a, k in runs)
        )
        for a, k in runs:
            x = ss.ops.expand_dims(x, a, k)
        return x
    r = ctx.need_rank(input_index, "Unsqueeze with axes of both signs")
    out_rank = r + len(axes)
    for a, k in _runs(sorted(norm_axes(ctx, axes, out_rank))):
        x = ss.ops.expand_dims(x, a, k)
    return x


def _runs(order: Sequence[int]) -> list[tuple[int, int]]:
    """The axes an ``Unsqueeze`` inserts in ``order`` (ascending non-negative or descending negative
    output positions) as ``(axis, count)`` runs of consecutive positions: each one ``expand_dims``
    of ``num_newaxis=count`` at its first position, which inserts what the run's one-axis calls
    would (``[1, 2]``: two axes at 1; ``[-1, -2]``: two at the end).

    >>> _runs([0, 1, 3]), _runs([-1, -2, -4])
    ([(0, 2), (3, 1)], [(-1, 2), (-4, 1)])
    """
    runs: list[tuple[int, int]] = []
    for a in order:
        if runs:
            first, k = runs[-1]
            if a == (first + k if first >= 0 else first - k):
                runs[-1] = (first, k + 1)
                continue
        runs.append((a, 1))
    return runs


K = TypeVar("K")
V = TypeVar("V")


class PlanTable(dict[K, V], Generic[K, V]):
    """A converter's table of plans (prepared calls, ...) by what they follow from, for the
    many nodes of a model that share them; bounded: full, it is emptied before the next entry.

    ``cache_clear()`` empties it, as a ``functools.lru_cache`` function's does, and ``__module__``
    names the module that holds it (``module``), as a function's does: what
    ``benchmarks.workloads.fresh_caches`` finds the process-wide caches of a module by."""

    def __init__(self, module: str, maxsize: int = 512) -> None:
        super().__init__()
        self.__module__ = module
        self.maxsize = maxsize

    def put(self, key: K, value: V) -> V:
        """``self[key] = value`` (after emptying the table if it is full); returns ``value``."""
        if len(self) >= self.maxsize:
            self.clear()
        self[key] = value
        return value

    def cache_clear(self) -> None:
        self.clear()


#: the ``expand_dims`` calls of an ``Unsqueeze`` whose axes all have one sign (no rank needed), by
#: its axes (the first node of those axes makes them through ``ss.ops.expand_dims``)
_UNSQUEEZE_PLANS: PlanTable[tuple[int, ...], tuple[PreparedCall, ...]] = PlanTable(__name__)


def prepare(wrapper: Callable[..., Expr], nargs: int, **kwargs: Any) -> PreparedCall | None:
    """``PreparedCall.of(wrapper, nargs, **kwargs)`` (the calls ``wrapper(*args, **kwargs)`` makes,
    their attributes checked once), or None when the wrapper does not call one operator of its
    ``nargs`` arguments (the caller then calls it)."""
    try:
        return PreparedCall.of(cast(Callable[..., ss.Call], wrapper), nargs, **kwargs)
    except ValueError:
        return None


def prepared(
    key: tuple[object, ...], wrapper: Callable[..., Expr], nargs: int, **kwargs: Any
) -> PreparedCall | None:
    """:func:`prepare`, made once per ``key``: what ``kwargs`` follow from, values of exact types
    (a node's target shape as a tuple of ints, ...)."""
    p = _PREPARED.get(key, _NOT_YET)
    if p is _NOT_YET:
        p = _PREPARED.put(key, prepare(wrapper, nargs, **kwargs))
    return cast(PreparedCall | None, p)


_PREPARED: PlanTable[tuple[object, ...], object] = PlanTable(__name__)
_NOT_YET: Final = object()


def tuple_of(xs: Sequence[Expr]) -> Expr:
    """``ss.Tuple(xs)`` of expressions ``xs`` (a node's inputs), built in a converter's span scope
    without the constructor's checks of each field and its span lookup: the same fields."""
    span = span_scope_get()
    if span is SPAN_SCOPE_UNSET:  # (outside a scope: the constructor finds the caller's span)
        return ss.Tuple(xs)
    t: ss.Tuple = _new(ss.Tuple)
    t.fields, t.span = tuple(xs), span
    return t


def item_of(t: Expr, index: int) -> Expr:
    """``ss.TupleGetItem(t, index)`` of an expression ``t`` and an int ``index`` (a converter's),
    built in its span scope without the constructor's checks and span lookup: the same fields."""
    span = span_scope_get()
    if span is SPAN_SCOPE_UNSET:  # (outside a scope: the constructor finds the caller's span)
        return ss.TupleGetItem(t, index)
    g: ss.TupleGetItem = _new(ss.TupleGetItem)
    g.tuple_value, g.index, g.span = t, index, span
    return g


_new: Final[Any] = object.__new__


def to_int64(x: Expr) -> Expr:
    return ss.ops.cast(x, "int64")


def scalar_of(x: Expr, dtype: str) -> Expr:
    """A 0-d tensor of ``dtype`` (the sum over every axis of ``x`` cast)."""
    return ss.ops.sum(ss.ops.cast(x, dtype))


def chain(op: str, xs: Sequence[Expr]) -> Expr:
    """A variadic broadcasting operator as a chain of binary ones (one input: a copy)."""
    fn = getattr(ss.ops, op)
    if len(xs) == 1:
        return ss.ops.copy(xs[0])
    acc = xs[0]
    for x in xs[1:]:
        acc = fn(acc, x)
    return acc


def stacked(a: Expr, b: Expr) -> Expr:
    """``a`` and ``b`` (cast to ``a``'s dtype) stacked on a new first axis: needs their shapes
    equal, exactly (no broadcasting)."""
    both = [ss.ops.expand_dims(a, 0), ss.ops.expand_dims(ss.ops.cast_like(b, a), 0)]
    return ss.ops.concatenate(both, axis=0)


def checked(y: Expr, checks: Sequence[Expr]) -> Expr:
    """``y``'s type, once every expression of ``checks`` type-checks (each cast to ``y``'s dtype
    and made a dependency of the result: its conditions become the node's)."""
    for check in checks:
        y = ss.ops.cast_like(y, ss.ops.cast_like(check, y))
    return y
