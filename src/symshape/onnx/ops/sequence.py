"""Sequence and optional operators.

A sequence of known length is a symshape tuple: ``SequenceConstruct`` builds one, ``SequenceAt``,
``SequenceInsert`` and ``SequenceErase`` at constant positions read and rebuild it,
``SequenceLength`` is its length (a constant), ``ConcatFromSequence`` concatenates (or stacks) its
fields, ``SplitToSequence`` splits a tensor into as many parts as the split sizes (which must sum
to the axis: an error in ONNX terms) or a constant axis length give.

A sequence whose length is not known (a graph input ``seq(...)``, a split of a symbolic axis into
chunks, a sequence grown in a ``Loop``) is ``Sequence[E]`` (:mod:`symshape.onnx.ops.sequence_types`):
``SequenceInsert`` joins the element type, ``SequenceAt`` reads an element (its ``?`` sizes its
own), ``SequenceLength`` is an int64 scalar not known, ``ConcatFromSequence`` an element whose axis
has a new size. A tuple read or changed at a position not known is treated the same way.

An optional is its value's type when present (``Optional``, ``OptionalGetElement``; an empty
``Optional`` is a value of its ``type`` attribute); ``OptionalHasElement`` is a bool scalar.
"""

from __future__ import annotations

import numpy as np
import onnx

import symshape as ss
from symshape import Expr
from symshape.encoding.dims import const, fresh_join
from symshape.errors import AXIS_OUT_OF_RANGE, BAD_ATTRIBUTE
from symshape.onnx.context import DTYPE, SEQUENCE, NodeContext
from symshape.onnx.dtypes import to_dtype
from symshape.onnx.ops.common import set_dim
from symshape.onnx.ops.sequence_types import (
    AXIS_SIZE,
    OF_TYPE,
    SEQ_AT,
    SEQ_ELEMENT,
    SEQ_INSERT,
    SEQ_OF,
    SPLIT_SUM,
    is_sequence,
    seq_type,
)
from symshape.onnx.registry import Outputs, register

__all__: list[str] = []


def _fields(ctx: NodeContext, i: int) -> list[Expr] | None:
    """The fields of the sequence at input ``i`` (a tuple of known length); None for a sequence
    of unknown length (or of a type not known before inference)."""
    t = ctx.type_of(i)
    if t is None or is_sequence(t):
        return None
    if not isinstance(t, ss.TupleType):
        ctx.unsupported(SEQUENCE, f"input {i} ('{ctx.input_name(i)}') is not a sequence of tensors")
    x = ctx.input(i)
    return [ss.TupleGetItem(x, k) for k in range(len(t.fields))]


def _known_position(ctx: NodeContext, i: int) -> bool:
    """Whether the position at input ``i`` is absent or a constant."""
    return not ctx.has_input(i) or ctx.value_of(i) is not None


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
    fs = _fields(ctx, 0)
    if fs is None:
        return ss.Constant(shape=(), dtype="int64")
    return ss.const(np.array(len(fs), dtype=np.int64))


@register("SequenceAt", since=11, value_inputs=(1,))
def _at(ctx: NodeContext) -> Outputs:
    fs = _fields(ctx, 0)
    if fs == []:
        ctx.fail(AXIS_OUT_OF_RANGE, "SequenceAt of an empty sequence")
    if fs is None or not _known_position(ctx, 1):  # (an element, its sizes its own)
        return SEQ_AT(ctx.input(0))
    return fs[_position(ctx, 1, len(fs), -1)]


@register("SequenceInsert", since=11, value_inputs=(2,))
def _insert(ctx: NodeContext) -> Outputs:
    fs = _fields(ctx, 0)
    if fs is None or not _known_position(ctx, 2):
        return SEQ_INSERT(ctx.input(0), ctx.input(1))
    p = _position(ctx, 2, len(fs), len(fs))
    return ss.Tuple(fs[:p] + [ctx.input(1)] + fs[p:])


@register("SequenceErase", since=11, value_inputs=(1,))
def _erase(ctx: NodeContext) -> Outputs:
    fs = _fields(ctx, 0)
    if fs == []:
        ctx.fail(AXIS_OUT_OF_RANGE, "SequenceErase of an empty sequence")
    if fs is None:
        return ctx.input(0)
    if not _known_position(ctx, 1):  # one field fewer, which one not known
        return SEQ_OF(SEQ_ELEMENT(ctx.input(0)))
    p = _position(ctx, 1, len(fs), len(fs) - 1)
    return ss.Tuple(fs[:p] + fs[p + 1 :])


@register("ConcatFromSequence", since=11)
def _concat_from_sequence(ctx: NodeContext) -> Outputs:
    fs = _fields(ctx, 0)
    if fs == []:
        ctx.fail(BAD_ATTRIBUTE, "ConcatFromSequence of an empty sequence")
    axis = ctx.attr_int("axis")
    new_axis = ctx.attr_int("new_axis", 0)
    if fs is None:  # an element with the axis of a size not known (the elements' sum, or count)
        e = SEQ_AT(ctx.input(0))
        if new_axis:
            e = ss.ops.expand_dims(e, axis)
        return AXIS_SIZE(e, axis=axis, size=ctx.fresh_dim("concatenated"))
    if new_axis:
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
        chunk = 1 if split is None else split[0]
        if chunk < 1:
            ctx.fail(BAD_ATTRIBUTE, f"the split {chunk} must be positive")
        d = t.dims[ax]
        length = d.constant_value
        if length is None:  # an unknown count of chunks of `chunk`, the last what is left
            size = fresh_join((const(chunk), (d - 1) % chunk + 1)) if chunk > 1 else 1
            part = ss.ops.take(x, ss.Constant(shape=(size,), dtype="int64"), axis=ax, mode="clip")
            if split is None and not ctx.attr_int("keepdims", 1):
                part = ss.ops.squeeze(part, axis=[ax])
            return SEQ_OF(part)
        sizes = [min(chunk, length - s) for s in range(0, length, chunk)]
    else:
        sizes = list(split)
        # (the sizes must sum to the axis: onnxruntime's "split_size_sum (3) != split_dim_size (1)")
        x = SPLIT_SUM(x, axis=axis, total=int(sum(sizes)))
    out: list[Expr] = [x]
    if len(sizes) > 1:  # as Split: the last part is what the others leave
        parts = ss.ops.split(x, [int(c) for c in np.cumsum(sizes[:-1])], axis=axis)
        out = [ss.TupleGetItem(parts, k) for k in range(len(sizes))]
    if split is not None and not scalar and sizes:  # ... which is the last size (the sum: the axis)
        out[-1] = set_dim(out[-1], axis, int(sizes[-1]))
    if split is None and not ctx.attr_int("keepdims", 1):
        out = [ss.ops.squeeze(p, axis=[axis]) for p in out]
    return ss.Tuple(out)


@register("Optional", since=15)
def _optional(ctx: NodeContext) -> Outputs:
    if not ctx.has_input(0):  # a value of the type its attribute gives (its value when present)
        tp = ctx.attr("type")
        if not isinstance(tp, onnx.TypeProto):
            ctx.fail(BAD_ATTRIBUTE, "an empty Optional needs its 'type' attribute")
        return OF_TYPE(type=_declared(ctx, tp))
    return ctx.input(0)


def _declared(ctx: NodeContext, tp: onnx.TypeProto) -> ss.TensorType | ss.TypeCall:
    """The type of an ``Optional``'s ``type`` attribute: a tensor or a sequence of tensors (a
    size not given as a constant is a new symbol)."""
    if tp.HasField("sequence_type"):
        return seq_type(_declared(ctx, tp.sequence_type.elem_type))
    if not tp.HasField("tensor_type"):
        ctx.unsupported(SEQUENCE, f"an empty optional of type {tp.WhichOneof('value')}")
    tt = tp.tensor_type
    dtype = to_dtype(tt.elem_type)
    if dtype is None:
        ctx.unsupported(DTYPE, f"an empty optional of element type {tt.elem_type}")
    if not tt.HasField("shape"):
        return ss.Tensor(None, dtype)
    dims = [
        d.dim_value if d.HasField("dim_value") and d.dim_value >= 0 else ctx.fresh_dim("optional")
        for d in tt.shape.dim
    ]
    return ss.Tensor(tuple(dims), dtype)


@register("OptionalGetElement", since=15)
def _optional_get(ctx: NodeContext) -> Outputs:
    return ctx.input(0)


@register("OptionalHasElement", since=15)
def _optional_has(ctx: NodeContext) -> Outputs:
    if not ctx.has_input(0):
        return ss.const(np.array(False))
    return ss.Constant(shape=(), dtype="bool")
