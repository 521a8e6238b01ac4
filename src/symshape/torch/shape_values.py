"""Run-time sizes as symshape shape values.

A size the program computes from a tensor whose shape only inference knows (``x.size(0)`` of an
intermediate ``x``) is an :class:`~symshape.torch.values.Opaque` whose ``value`` is a small int64
tensor expression *carrying* the size (design.md section 8): ``x.size()`` is
``shape_of(x)``, ``x.size(i)`` is ``take(shape_of(x), i)``, ``b * t`` and ``c // h`` are
``multiply``/``floor_divide`` of those, each bound to a variable named after its fx node
(``size.value``). Where torch uses a size, the converter builds the operand the core operator
reads a value from:

* a shape (``view``, ``reshape``, ``expand``, ``zeros``, ...): :func:`shape_tensor` concatenates
  the entries into one 1-d int64 tensor (literal ints and dimensions as ``int_tensor``);
* a slice bound (``x[:, :t]``): :func:`bound_tensor` (an open bound is the sentinel past that end);
* an ``arange`` bound: :func:`scalar_value`.

Inference then resolves the values together with the types, so ``k.view(B, T, nh, C // nh)``
has the type ``(b, t, 4, 8)`` once ``C`` is known to be 32.

>>> from symshape.torch.shape_values import PY_VALUE_OPS
>>> import operator
>>> PY_VALUE_OPS[operator.floordiv].name
'floor_divide'
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Protocol

import symshape as ss
from symshape.torch.values import Opaque

__all__ = [
    "PY_VALUE_OPS",
    "is_int",
    "has_value",
    "scalar_value",
    "shape_tensor",
    "bound_tensor",
    "size_of",
    "sizes_of",
    "item_of",
    "arith",
    "SENTINEL",
    "index_entry",
    "is_size",
]

#: a slice bound past either end (``strided_slice``'s sentinel magnitude, Relay's ``2**31``)
SENTINEL = 2**31


class _Lets(Protocol):
    def let(self, e: ss.Expr, suffix: str) -> ss.Var: ...


#: Python arithmetic on sizes -> the operator that computes the value (entrywise on ints)
PY_VALUE_OPS: dict[Callable[..., Any], ss.Op] = {
    operator.add: ss.Op.get("add"),
    operator.iadd: ss.Op.get("add"),
    operator.sub: ss.Op.get("subtract"),
    operator.isub: ss.Op.get("subtract"),
    operator.mul: ss.Op.get("multiply"),
    operator.imul: ss.Op.get("multiply"),
    operator.floordiv: ss.Op.get("floor_divide"),
    operator.ifloordiv: ss.Op.get("floor_divide"),
    operator.mod: ss.Op.get("mod"),
}


def is_int(v: object) -> bool:
    """A literal size: an int (not a bool) or a dimension."""
    return (isinstance(v, int) and not isinstance(v, bool)) or isinstance(v, ss.Dim)


def is_size(v: object) -> bool:
    """A size that is not a literal number: a symbolic dimension, or a run-time size with a value
    (an int)."""
    return (isinstance(v, ss.Dim) and not v.is_constant) or (
        isinstance(v, Opaque) and has_value(v) and v.kind == "int"
    )


def has_value(v: object) -> bool:
    """An opaque size that carries a value."""
    return isinstance(v, Opaque) and not v.cascade and v.value is not None


def scalar_value(v: object) -> ss.Expr | None:
    """A 0-d int64 expression carrying the size ``v`` (an int, a dimension, or an opaque int with
    a value); None for anything else."""
    if is_int(v):
        return ss.ops.int_tensor(v)
    if isinstance(v, Opaque) and has_value(v) and v.kind == "int":
        return v.value
    return None


def _entries_tensor(entries: Sequence[Any], literal: Callable[[Any], Any]) -> ss.Expr | None:
    """One 1-d int64 tensor of ``entries`` (runs of literals grouped); None if an entry has no
    value."""
    pieces: list[ss.Expr] = []
    run: list[Any] = []

    def flush() -> None:
        if run:
            pieces.append(ss.ops.int_tensor(tuple(run)))
            run.clear()

    for e in entries:
        lit = literal(e)
        if lit is not None:
            run.append(lit)
            continue
        if not has_value(e):
            return None
        assert isinstance(e, Opaque) and e.value is not None
        flush()
        if e.kind == "sizes":
            pieces.append(e.value)
        elif e.kind == "int":
            pieces.append(ss.ops.expand_dims(e.value, axis=0))
        else:
            return None
    flush()
    if not pieces:
        return ss.ops.int_tensor(())
    return pieces[0] if len(pieces) == 1 else ss.ops.concatenate(pieces, axis=0)


def shape_tensor(entries: Sequence[Any]) -> ss.Expr | None:
    """A torch shape (ints, dimensions, opaque ints, whole opaque size tuples) as one valued 1-d
    int64 tensor; None when an entry carries no value."""
    return _entries_tensor(entries, lambda e: e if is_int(e) else None)


def bound_tensor(entries: Sequence[Any], begin: bool) -> ss.Expr | None:
    """Slice bounds (one per sliced axis, positive strides) as a valued 1-d int64 tensor; an open
    bound (None) is the sentinel before the start or past the end."""
    past = -SENTINEL if begin else SENTINEL
    return _entries_tensor(entries, lambda e: past if e is None else e if is_int(e) else None)


def index_entry(i: ss.Dim | Opaque) -> ss.Expr:
    """An integer index that is a symbolic dimension or a run-time size with a value (``x[:, -t]``,
    ``x.select(1, t)``) as a one-entry int64 tensor. Indexing takes by it (``take`` in mode
    ``raise``, which keeps the axis, of size 1, to be squeezed): the index's value range then
    states Python's bounds ``-n <= i < n`` along an axis of ``n`` (for ``-t``: ``t <= n``)."""
    if isinstance(i, ss.Dim):
        return ss.ops.int_tensor((i,))
    assert i.value is not None and i.kind == "int"
    return ss.ops.expand_dims(i.value, axis=0)


def size_of(ctx: _Lets, x: ss.Expr, i: int, base: Opaque) -> Opaque:
    """``x.size(i)``: ``base`` with the value ``take(shape_of(x), i)``."""
    sh = ctx.let(ss.ops.shape_of(x), "shape")
    v = ctx.let(ss.ops.take(sh, ss.ops.int_tensor(i), axis=0, mode="fast"), "value")
    return replace(base, value=v)


def sizes_of(ctx: _Lets, x: ss.Expr, base: Opaque) -> Opaque:
    """``x.size()``: ``base`` with the value ``shape_of(x)``."""
    return replace(base, value=ctx.let(ss.ops.shape_of(x), "value"))


def item_of(ctx: _Lets, sizes: Opaque, index: object, item: Opaque) -> Opaque:
    """``item = sizes[index]`` (an int or a slice of a size tuple) with its value."""
    if not has_value(sizes):
        return item
    assert sizes.value is not None
    if isinstance(index, slice):
        parts = (index.start, index.stop, index.step)
        if not all(p is None or (isinstance(p, int) and not isinstance(p, bool)) for p in parts):
            return item
        if index.step is not None and index.step <= 0:
            return item
        e = ss.ops.strided_slice(sizes.value, [index.start], [index.stop], strides=[index.step or 1])
        return replace(item, value=ctx.let(e, "value"))
    if isinstance(index, int) and not isinstance(index, bool):
        e = ss.ops.take(sizes.value, ss.ops.int_tensor(index), axis=0, mode="fast")
        return replace(item, value=ctx.let(e, "value"))
    return item


def arith(ctx: _Lets, py: Callable[..., Any], a: object, b: object, result: Opaque) -> Opaque:
    """``result = py(a, b)`` on sizes, with its value when both operands have one: ints entrywise
    (``c // h``), size tuples joined by ``+`` (``x.shape[:-1] + (n,)``)."""
    if py in (operator.add, operator.iadd) and result.kind == "sizes":
        parts: list[ss.Expr] = []
        for v in (a, b):
            if isinstance(v, (tuple, list)):
                t = shape_tensor(list(v))
            elif isinstance(v, Opaque) and v.kind == "sizes" and has_value(v):
                t = v.value
            else:
                t = None
            if t is None:
                return result
            parts.append(t)
        return replace(result, value=ctx.let(ss.ops.concatenate(parts, axis=0), "value"))
    op = PY_VALUE_OPS.get(py)
    if op is None or result.kind != "int":
        return result
    va, vb = scalar_value(a), scalar_value(b)
    if va is None or vb is None:
        return result
    return replace(result, value=ctx.let(op(va, vb), "value"))
