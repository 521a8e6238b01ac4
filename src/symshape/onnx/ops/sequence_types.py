"""Sequences of unknown length, and the type relations of sequences and ``Loop``.

A sequence whose length is known is a tuple (see :mod:`symshape.onnx.ops.sequence`). One whose
length is not known (a graph input, a sequence grown in a ``Loop``, a ``SequenceMap`` result) has
the type ``Sequence[E]`` (a :class:`~symshape.TypeCall` of :data:`SEQUENCE`): every element is a
tensor of type ``E``, where a ``?`` of ``E`` (a join of differing sizes, see
:func:`symshape.ir.program_rels.join_types`) is one of its alternatives *for each element on its
own*: :data:`SEQ_AT` gives each element read a fresh ``?`` of the same alternatives, so two
elements are never taken to have one size. A given symbol of ``E`` (``seq(float[N])`` declared
by the model) is the same in every element, as the model declares it.

* :func:`seq_type` builds ``Sequence[E]``; :func:`element_type` joins a sequence's (or a tuple's)
  element types (an empty tuple has none: the empty sequence adds nothing to a join).
* :data:`SEQ_INSERT` (``onnx.seq_insert(s, x)``): ``Sequence[E | type(x)]``.
* :data:`SEQ_AT` (``onnx.seq_at(s)``): an element at a position not known.
* :data:`SEQ_ELEMENT` (``onnx.seq_element(s)``): the join of the elements (a sequence's element
  type, a tuple's joined fields) and :data:`SEQ_OF` (``onnx.seq_of(e)``): ``Sequence[type(e)]``,
  so that an ``If`` joins the element types of its branches' sequences.
* :data:`LOOP_SEQ` (``onnx.loop_seq(prev, out)``): a loop-carried sequence as the body's next
  application sees it (``Sequence[E]`` of the elements before and those added; a size that
  changed again from one round to the next any size), to a fixpoint. The ``Loop``'s own
  relations are in :mod:`symshape.onnx.ops.loop_types`, which uses the helpers here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

import symshape as ss
from symshape import Type
from symshape.encoding import types as ty
from symshape.encoding.conds import eq
from symshape.encoding.dim_atoms import AnyDim
from symshape.encoding.dim_bounds import bounds
from symshape.encoding.dims import Dim, const, fresh_any, fresh_join
from symshape.errors import AXIS_OUT_OF_RANGE, RANK_MISMATCH, SHAPE_MISMATCH, TYPE_MISMATCH
from symshape.ir.op import Op
from symshape.ir.program_rels import join_types
from symshape.relations.base import Context, RelationFn
from symshape.relations.common import norm_axis

__all__ = [
    "AXIS_SIZE",
    "SEQUENCE",
    "seq_type",
    "is_sequence",
    "element_type",
    "SEQ_INSERT",
    "SEQ_AT",
    "SEQ_ELEMENT",
    "SEQ_OF",
    "SEQ_PICK",
    "LOOP_SEQ",
    "LOOP_STATE",
    "OF_TYPE",
    "SPLIT_SUM",
    "DECLARED",
]

#: the ADT name of a sequence of unknown length: ``Sequence[Tensor[(n,), float32]]``
SEQUENCE: Final = ss.GlobalTypeVar("Sequence")


def seq_type(elem: Type) -> ty.TypeCall:
    """``Sequence[elem]``."""
    return ty.TypeCall(SEQUENCE, (elem,))


def is_sequence(t: Type | None) -> bool:
    """Whether ``t`` is a sequence of unknown length."""
    return isinstance(t, ty.TypeCall) and t.func == SEQUENCE


class _Empty:
    """The element type of the empty sequence: none (a join leaves it out)."""


EMPTY: Final = _Empty()


def element_type(ctx: Context, t: Type) -> Type | _Empty | None:
    """The join of the element types of sequence ``t`` (a tuple: its fields), :data:`EMPTY` for
    the empty tuple; None to defer (a hole). Anything else is a ``type-mismatch``."""
    if isinstance(t, ty.IncompleteType):
        return None
    if is_sequence(t):
        assert isinstance(t, ty.TypeCall)
        return t.args[0]
    if not isinstance(t, ty.TupleType):
        ctx.fail(TYPE_MISMATCH, f"`{t}` is not a sequence")
    acc: Type | _Empty | None = EMPTY
    for f in t.fields:
        acc = _join(ctx, acc, f)
        if acc is None:
            return None
    return acc


def _join(ctx: Context, a: Type | _Empty | None, b: Type | _Empty | None) -> Type | _Empty | None:
    if a is None or b is None:
        return None
    if isinstance(a, _Empty):
        return b
    if isinstance(b, _Empty):
        return a
    return join_types(ctx, a, b)


def _seq_insert_rel(ctx: Context, args: Sequence[Type], attrs: ty.Attrs) -> bool:
    s, x, out = args
    e = element_type(ctx, s)
    if e is None or isinstance(x, ty.IncompleteType):
        return False
    j = _join(ctx, e, x)
    if j is None:
        return False
    assert not isinstance(j, _Empty)
    ctx.unify(out, seq_type(j))
    return True


def fresh_sizes(t: Type) -> Type:
    """``t`` with each ``?`` a new one of the same alternatives (one element's own sizes)."""

    def inst(d: Dim) -> Dim:
        sub: dict[Any, Dim] = {a: fresh_join(a.alts) if a.alts else fresh_any(a.least) for a in _any_atoms(d)}
        return d.subs(sub) if sub else d

    return ty.map_dims(t, inst)


def _any_atoms(d: Dim) -> list[AnyDim]:
    return sorted({a for a in d.atoms() if isinstance(a, AnyDim)}, key=lambda a: a.id)


def _seq_at_rel(ctx: Context, args: Sequence[Type], attrs: ty.Attrs) -> bool:
    s, out = args
    e = element_type(ctx, s)
    if e is None:
        return False
    if isinstance(e, _Empty):
        ctx.fail(AXIS_OUT_OF_RANGE, "SequenceAt of an empty sequence")
    ctx.unify(out, fresh_sizes(e))
    return True


def _seq_element_rel(ctx: Context, args: Sequence[Type], attrs: ty.Attrs) -> bool:
    s, out = args
    e = element_type(ctx, s)
    if e is None:
        return False
    if isinstance(e, _Empty):  # none: left a hole, which an If's join unifies with the other
        return ctx.final  # branch's element type (SEQ_PICK fills it when both are empty)
    ctx.unify(out, e)
    return True


def _seq_pick_rel(ctx: Context, args: Sequence[Type], attrs: ty.Attrs) -> bool:
    """An ``If``'s sequence output: the join of its branches' sequences when that is a tuple
    (tuples of one length), else a sequence of the join of their element types ``elem``."""
    joined, elem, out = args
    if isinstance(joined, ty.IncompleteType):
        return False
    if isinstance(elem, ty.IncompleteType):
        if not ctx.final:
            return False
        elem = ctx.unify(elem, ty.Tensor(None, None))  # (no element in either branch)
    ctx.unify(out, joined if isinstance(joined, ty.TupleType) else seq_type(elem))
    return True


def _type_map(f: Callable[[Type], Type]) -> RelationFn:
    """The relation ``out = f(type of the input)`` (deferred while the input is a hole)."""

    def rel(ctx: Context, args: Sequence[Type], attrs: ty.Attrs) -> bool:
        e, out = args
        if isinstance(e, ty.IncompleteType):
            return False
        ctx.unify(out, f(e))
        return True

    return rel


def _same(ctx: Context, a: Type, b: Type) -> bool:
    """Whether tensor types ``a`` and ``b`` have one dtype and provably equal shapes."""
    if not isinstance(a, ty.TensorType) or not isinstance(b, ty.TensorType):
        return a == b
    if a.dtype != b.dtype or a.ndim is None or a.ndim != b.ndim:
        return False
    return all(x == y or ctx.prove(eq(x, y)) is True for x, y in zip(a.dims, b.dims))


def _mentions(t: Type, it: Dim) -> bool:
    """Whether type ``t`` (its shape) mentions the iteration number ``it``."""
    found = False

    def look(d: Dim) -> Dim:
        nonlocal found
        found = found or it in d.symbols
        return d

    ty.map_dims(t, look)
    return found


def _forget(t: Type, it: Dim) -> Type:
    """``t`` with each size that mentions the iteration number ``it`` or a size computed at run
    time a new ``?`` (one of each element added)."""
    return ty.map_dims(t, lambda d: fresh_any(0) if d.has_unknowns or it in d.symbols else d)


def _has_unknowns(t: Type) -> bool:
    found = False

    def look(d: Dim) -> Dim:
        nonlocal found
        found = found or d.has_unknowns
        return d

    ty.map_dims(t, look)
    return found


def _grown(ctx: Context, init: Type, out: Type, it: Dim) -> tuple[ty.TupleType | ty.TypeCall, bool] | None:
    """A loop-carried sequence over every iteration (its type ``init`` before one, ``out`` after
    it): ``Sequence[E]`` of the join ``E`` of the elements before and those added (a size that
    the iteration number or a size computed at run time gives: a ``?``), the empty tuple when
    none is ever added; and whether the body saw its elements' type (``E`` is what it saw, or
    what it added, as before). None to defer."""
    ei, eo = element_type(ctx, init), element_type(ctx, out)
    if eo is not None and not isinstance(eo, _Empty):
        eo = _forget(eo, it)  # (an element added at iteration i: a size of i is its own)
    j = _join(ctx, ei, eo)
    if j is None or eo is None:
        return None
    if isinstance(j, _Empty):
        return ty.TupleType(()), True
    # the elements added have one type when the join with those before is theirs; a tuple
    # (a sequence of known length) that grows gave the body its first length
    if (
        isinstance(init, ty.TypeCall)
        and ei is not None
        and not isinstance(ei, _Empty)
        and _covers(ctx, ei, eo)
    ):
        return seq_type(ei), True  # (nothing new: a fixpoint, see LOOP_SEQ)
    stable = (isinstance(eo, _Empty) or _same(ctx, j, eo)) and not (
        isinstance(init, ty.TupleType) and init != out
    )
    return seq_type(j), stable


def _covers(ctx: Context, e: Type, t: Type | _Empty | None) -> bool:
    """Whether every tensor of type ``t`` has type ``e``: one dtype and rank, each size ``e``'s
    or any size (see :func:`_any_size`)."""
    if isinstance(t, _Empty):
        return True
    if (
        t is None
        or not isinstance(e, ty.TensorType)
        or not isinstance(t, ty.TensorType)
        or e.dtype != t.dtype
    ):
        return False
    if e.ndim is None:
        return True
    if t.ndim != e.ndim:
        return False
    # (a `?` of any size covers a size no smaller than its least: one that may be smaller, e.g.
    # 0 where the `?` is >= 1, needs another round)
    return all(
        x == y or (_any_size(x) and bounds(y)[0] >= bounds(x)[0]) or ctx.prove(eq(x, y)) is True
        for x, y in zip(e.dims, t.dims)
    )


def _any_size(d: Dim) -> bool:
    """Whether ``d`` is any size: a ``?`` of no alternatives, or one of which is."""
    at = d.atom
    return isinstance(at, AnyDim) and (not at.alts or any(_any_size(a) for a in at.alts))


def _loop_seq_rel(ctx: Context, args: Sequence[Type], attrs: ty.Attrs) -> bool:
    """What a ``Loop`` body sees of a loop-carried sequence in the next round of the fixpoint
    (:func:`symshape.onnx.ops.control._loop`): of type ``prev`` it became ``out`` in the round
    before; ``prev`` when the body passed it on, else ``Sequence[E]`` of the join of the
    elements before and those added (:func:`_grown`)."""
    prev, out, res = args
    it = attrs.get("iteration")
    assert isinstance(it, Dim)
    if isinstance(prev, ty.IncompleteType):
        return False
    if isinstance(out, ty.IncompleteType) or _has_unknowns(out):
        if not ctx.final:
            return False
        if isinstance(out, ty.IncompleteType):  # (the body's value stays unsolved)
            ctx.unify(res, _anything(ctx, prev))
            return True
    if prev == out and not _mentions(prev, it):
        ctx.unify(res, prev)
        return True
    if not isinstance(prev, (ty.TupleType, ty.TypeCall)) and not isinstance(out, (ty.TupleType, ty.TypeCall)):
        ctx.unify(res, _anything(ctx, prev))
        return True
    grown = _grown(ctx, prev, out, it)
    if grown is None:
        return False
    t = grown[0]
    if isinstance(prev, ty.TypeCall) and isinstance(t, ty.TypeCall) and not grown[1]:
        t = seq_type(_widen(t.args[0]))  # (a size that changed again: any size)
    ctx.unify(res, t)
    return True


def _widen(t: Type) -> Type:
    """``t`` with each join of differing sizes any size (a ``?`` of no alternatives): sizes
    that keep changing from one round to the next reach a fixpoint."""

    def widen(d: Dim) -> Dim:
        at = d.atom
        if isinstance(at, AnyDim) and at.alts and not _any_size(d):
            return fresh_any(0 if bounds(d)[0] < 1 else 1)  # (an empty size among the alternatives: 0)
        return d

    return ty.map_dims(t, widen)


def _anything(ctx: Context, t: Type) -> Type:
    """What a loop-carried value of type ``t`` may be at any iteration when the body's types
    change: a tensor of its dtype, a sequence of unknown length of such tensors."""
    if isinstance(t, ty.TensorType):
        return ty.Tensor(None, t.dtype)
    if isinstance(t, (ty.TupleType, ty.TypeCall)):
        e = element_type(ctx, t)
        return seq_type(_any_rank(e) if isinstance(e, ty.TensorType) else ty.Tensor(None, None))
    return t


def _any_rank(t: Type) -> Type:
    return ty.Tensor(None, t.dtype) if isinstance(t, ty.TensorType) else ty.ObjectType()


def _without_value(t: Type) -> Type:
    if isinstance(t, ty.TensorType) and (t.value is not None or t.range is not None):
        return ty.TensorType(t.shape, t.dtype)
    return t


def _of_type_rel(ctx: Context, args: Sequence[Type], attrs: ty.Attrs) -> bool:
    t = attrs.get("type")
    assert isinstance(t, (ty.TensorType, ty.TypeCall))
    ctx.unify(args[0], t)
    return True


def _split_sum_rel(ctx: Context, args: Sequence[Type], attrs: ty.Attrs) -> bool:
    """``x`` itself, whose axis must have the size the split sizes sum to."""
    x, out = args
    if isinstance(x, ty.IncompleteType):
        return False
    axis, total = attrs.get("axis", 0), attrs.get("total", 0)
    assert isinstance(axis, int) and isinstance(total, int)
    if isinstance(x, ty.TensorType) and x.ndim is not None:
        ax = axis + x.ndim if axis < 0 else axis
        if 0 <= ax < x.ndim:
            d = x.dims[ax]
            ctx.require(
                eq(d, total),
                SHAPE_MISMATCH,
                f"SplitToSequence: split sizes sum to {total} but axis {ax} has {d}",
            )
    ctx.unify(out, x)
    return True


def _axis_size_rel(ctx: Context, args: Sequence[Type], attrs: ty.Attrs) -> bool:
    """``x`` with the size of ``axis`` replaced by ``size`` (a type only: no element is read, so
    an empty axis is no failure, as a ``take`` from it would be)."""
    x, out = args
    if isinstance(x, ty.IncompleteType):
        return False
    axis, size = attrs.get("axis", 0), attrs.get("size")
    assert isinstance(axis, int) and isinstance(size, Dim)
    if not isinstance(x, ty.TensorType):
        ctx.fail(TYPE_MISMATCH, f"{ctx.name}: expected a tensor, got `{x}`")
    if x.ndim is None:
        ctx.unify(out, ty.Tensor(None, x.dtype))
        return True
    ax = norm_axis(ctx, axis, x.ndim, ctx.name)
    ctx.unify(out, ty.TensorType((*x.dims[:ax], size, *x.dims[ax + 1 :]), x.dtype))
    return True


def _declared_rel(ctx: Context, args: Sequence[Type], attrs: ty.Attrs) -> bool:
    """``x`` with the constant sizes a ``Scan`` body declares for it (onnxruntime allocates the
    body's values by them, and refuses another size): each must be ``x``'s."""
    x, out = args
    if isinstance(x, ty.IncompleteType):
        return False
    shape, what = attrs.get("shape", ()), attrs.get("what", "")
    assert isinstance(shape, tuple)
    if not isinstance(x, ty.TensorType) or x.ndim is None:
        ctx.unify(out, x)
        return True
    if x.ndim != len(shape):
        ctx.fail(RANK_MISMATCH, f"{what} is declared with rank {len(shape)}, gets `{x}`")
    dims: list[Dim] = []
    for ax, (d, k) in enumerate(zip(x.dims, shape)):
        if k is None:
            dims.append(d)
            continue
        ctx.require(eq(d, k), SHAPE_MISMATCH, f"{what} is declared with size {k} at axis {ax}, gets {d}")
        dims.append(const(k))
    ctx.unify(out, ty.TensorType(tuple(dims), x.dtype, x.value if x.value is not None else None))
    return True


def _op(name: str, relation: RelationFn, num_inputs: int, doc: str, **attr_types: str) -> Op:
    return ss.register_op(f"onnx.{name}", relation, num_inputs, doc=doc, attr_types=attr_types)


SEQ_INSERT: Final = _op("seq_insert", _seq_insert_rel, 2, "a sequence with one more element")
SEQ_AT: Final = _op("seq_at", _seq_at_rel, 1, "an element of a sequence at a position not known")
SEQ_ELEMENT: Final = _op("seq_element", _seq_element_rel, 1, "the join of a sequence's element types")
SEQ_PICK: Final = _op("seq_pick", _seq_pick_rel, 2, "an If's sequence output")
SEQ_OF: Final = _op(
    "seq_of", _type_map(seq_type), 1, "a sequence of unknown length of the given element type"
)
#: ``onnx.loop_state(x)``: what a ``Loop`` body sees of a loop-carried value, ``x``'s type without
#: its value (the first iteration's: a body computing with it would hold for that one only)
LOOP_STATE: Final = _op("loop_state", _type_map(_without_value), 1, "a loop-carried value without its value")
#: ``onnx.of_type(type=T)``: a value of type ``T`` (an empty optional's, typed by its attribute)
OF_TYPE: Final = _op("of_type", _of_type_rel, 0, "a value of the given type", type="any")
#: ``onnx.split_sum(x, axis=a, total=t)``: ``x``, whose axis ``a`` must be ``t`` (the sum of
#: ``SplitToSequence``'s split sizes)
SPLIT_SUM: Final = _op(
    "split_sum", _split_sum_rel, 1, "the input; its axis is the split sizes' sum", axis="int", total="int"
)
#: ``onnx.axis_size(x, axis=a, size=d)``: ``x``'s type with axis ``a`` of size ``d`` (a size the
#: run decides: ``ConcatFromSequence`` of a sequence of unknown length)
AXIS_SIZE: Final = _op(
    "axis_size", _axis_size_rel, 1, "the input with one axis of the given size", axis="int", size="any"
)
#: ``onnx.declared(x, shape=(k or None, ...), what=...)``: ``x`` with the constant sizes declared
#: for it, which must be its own
DECLARED: Final = _op(
    "declared", _declared_rel, 1, "the input with its declared sizes (checked)", shape="sizes", what="str"
)
#: ``onnx.loop_seq(prev, out, iteration=i)``: a loop-carried sequence as the next round of a
#: ``Loop`` body sees it (see :func:`_loop_seq_rel`)
LOOP_SEQ: Final = _op(
    "loop_seq", _loop_seq_rel, 2, "a loop-carried sequence over the iterations so far", iteration="any"
)
