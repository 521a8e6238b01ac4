"""Sequence and optional operators.

A sequence of known length is a symshape tuple: ``SequenceConstruct`` builds one, ``SequenceAt``,
``SequenceInsert`` and ``SequenceErase`` at constant positions read and rebuild it,
``SequenceLength`` is its length (a constant), ``ConcatFromSequence`` concatenates (or stacks) its
fields, ``SplitToSequence`` splits a tensor into as many parts as the split sizes (which must sum
to the axis) or a constant axis length give. A sequence whose length is not known (a graph input,
a split of a symbolic axis into chunks) is not converted: a tuple type has a fixed length.

An optional holding a tensor is that tensor's value when present (``Optional``,
``OptionalGetElement``); ``OptionalHasElement`` is a bool scalar.
"""

from __future__ import annotations

import numpy as np

import symshape as ss
from symshape import Expr
from symshape.errors import AXIS_OUT_OF_RANGE, BAD_ATTRIBUTE
from symshape.onnx.context import SEQUENCE, NodeContext
from symshape.onnx.ops.common import set_dim
from symshape.onnx.registry import Outputs, register

__all__: list[str] = []


def _fields(ctx: NodeContext, i: int) -> list[Expr]:
    """The fields of the sequence at input ``i`` (a tuple of known length)."""
    t = ctx.type_of(i)
    if not isinstance(t, ss.TupleType):
        ctx.unsupported(SEQUENCE, f"input {i} ('{ctx.input_name(i)}') is a sequence of unknown length")
    x = ctx.input(i)
    return [ss.TupleGetItem(x, k) for k in range(len(t.fields))]


def _position(ctx: NodeContext, i: int, n: int, default: int) -> int:
    """The constant position at input ``i`` in a sequence of ``n`` (``default`` when absent);
    negative counts from the end; ``-n <= p <= n - 1`` (``n`` too when ``default`` is ``n``)."""
    if not ctx.has_input(i):
        return default
    vals = ctx.ints(i, "the position")
    if len(vals) != 1:
        ctx.fail(BAD_ATTRIBUTE, f"the position must be a scalar, got {len(vals)} values")
    p = vals[0]
    top = n if default == n else n - 1
    if not -n <= p <= top:
        ctx.fail(AXIS_OUT_OF_RANGE, f"position {p} is out of range for a sequence of {n}")
    return p + n if p < 0 else p


@register("SequenceConstruct", since=11)
def _construct(ctx: NodeContext) -> Outputs:
    return ss.Tuple(ctx.inputs())


@register("SequenceEmpty", since=11)
def _empty(ctx: NodeContext) -> Outputs:
    return ss.Tuple([])


@register("SequenceLength", since=11)
def _length(ctx: NodeContext) -> Outputs:
    return ss.const(np.array(len(_fields(ctx, 0)), dtype=np.int64))


@register("SequenceAt", since=11, value_inputs=(1,))
def _at(ctx: NodeContext) -> Outputs:
    fs = _fields(ctx, 0)
    if not fs:
        ctx.fail(AXIS_OUT_OF_RANGE, "SequenceAt of an empty sequence")
    return fs[_position(ctx, 1, len(fs), -1)]


@register("SequenceInsert", since=11, value_inputs=(2,))
def _insert(ctx: NodeContext) -> Outputs:
    fs = _fields(ctx, 0)
    p = _position(ctx, 2, len(fs), len(fs))
    return ss.Tuple(fs[:p] + [ctx.input(1)] + fs[p:])


@register("SequenceErase", since=11, value_inputs=(1,))
def _erase(ctx: NodeContext) -> Outputs:
    fs = _fields(ctx, 0)
    if not fs:
        ctx.fail(AXIS_OUT_OF_RANGE, "SequenceErase of an empty sequence")
    p = _position(ctx, 1, len(fs), len(fs) - 1)
    return ss.Tuple(fs[:p] + fs[p + 1 :])


@register("ConcatFromSequence", since=11)
def _concat_from_sequence(ctx: NodeContext) -> Outputs:
    fs = _fields(ctx, 0)
    if not fs:
        ctx.fail(BAD_ATTRIBUTE, "ConcatFromSequence of an empty sequence")
    axis = ctx.attr_int("axis")
    if ctx.attr_int("new_axis", 0):
        return ss.ops.stack(fs, axis=axis)
    return ss.ops.concatenate(fs, axis=axis)


@register("SplitToSequence", since=11, value_inputs=(1,))
def _split_to_sequence(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    axis = ctx.attr_int("axis", 0)
    split = ctx.sizes(1, "the split") if ctx.has_input(1) else None
    scalar = split is not None and ctx.rank(1) == 0
    if split is None or scalar:
        t = ctx.tensor_type(0)
        r = t.ndim if t is not None else None
        if t is None or r is None:
            ctx.unsupported(SEQUENCE, "a split into chunks of an input of unknown rank")
        ax = axis + r if axis < 0 else axis
        if not 0 <= ax < r:
            ctx.fail(AXIS_OUT_OF_RANGE, f"axis {axis} is out of range for rank {r}")
        length = t.dims[ax].constant_value
        if length is None:
            ctx.unsupported(
                SEQUENCE, f"a split of the axis of size {t.dims[ax]} into chunks (an unknown count)"
            )
        chunk = 1 if split is None else split[0]
        if chunk < 1:
            ctx.fail(BAD_ATTRIBUTE, f"the split {chunk} must be positive")
        sizes = [min(chunk, length - s) for s in range(0, length, chunk)]
    else:
        sizes = list(split)
    out: list[Expr] = [x]
    if len(sizes) > 1:  # as Split: the last part is what the others leave
        parts = ss.ops.split(x, [int(c) for c in np.cumsum(sizes[:-1])], axis=axis)
        out = [ss.TupleGetItem(parts, k) for k in range(len(sizes))]
    if split is not None and not scalar and sizes:  # ... which must be the last size (the sum: the axis)
        last = out[-1]
        pinned = ss.ops.stack([set_dim(last, axis, int(sizes[-1])), last], axis=0)
        out[-1] = ss.ops.take(pinned, ss.const(np.array(0, dtype=np.int64)), axis=0)
    if split is None and not ctx.attr_int("keepdims", 1):
        out = [ss.ops.squeeze(p, axis=[axis]) for p in out]
    return ss.Tuple(out)


@register("Optional", since=15)
def _optional(ctx: NodeContext) -> Outputs:
    if not ctx.has_input(0):
        ctx.unsupported(SEQUENCE, "an empty optional")
    return ctx.input(0)


@register("OptionalGetElement", since=15)
def _optional_get(ctx: NodeContext) -> Outputs:
    return ctx.input(0)


@register("OptionalHasElement", since=15)
def _optional_has(ctx: NodeContext) -> Outputs:
    if not ctx.has_input(0):
        return ss.const(np.array(False))
    return ss.Constant(shape=(), dtype="bool")
