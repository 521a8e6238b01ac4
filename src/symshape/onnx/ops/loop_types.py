"""The type relations of ``Loop`` (see :func:`symshape.onnx.ops.control._loop`): its result, and
a loop-carried tensor whose type an iteration changes.

* :data:`LOOP_RESULT` (``onnx.loop_result(steps, *inits, *outs, *scans, *first_scans, n=N,
  first=K)``): the outputs of a ``Loop`` whose body was applied to the initial states, then to
  the states generalized (``first_scans``: the first application's scan outputs, when it was).
* :data:`LOOP_TENSOR` (``onnx.loop_tensor(prev, out)``): a loop-carried tensor as the body's next
  application sees it when one iteration changed its type: each size that changed a ``?``
  (:func:`covers_tensor` tells when that covers every iteration).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import symshape as ss
from symshape import Type
from symshape.encoding import types as ty
from symshape.encoding.conds import all_of, any_of, eq, le
from symshape.encoding.dim_atoms import AnyDim
from symshape.encoding.dim_bounds import bounds
from symshape.encoding.dims import Dim, fresh_any
from symshape.errors import SHAPE_MISMATCH, TYPE_MISMATCH
from symshape.onnx.ops.sequence_types import (
    _any_atoms,
    _any_rank,
    _anything,
    _grown,
    _has_unknowns,
    _mentions,
    _same,
    _without_value,
    seq_type,
)
from symshape.relations.base import Context, Lazy

__all__ = ["LOOP_RESULT", "LOOP_TENSOR", "covers_tensor"]


def _widened(ctx: Context, init: Type, out: Type, it: Dim) -> tuple[Type, bool] | None:
    """A loop-carried value's type over every iteration (its initial one ``init``, ``out`` after
    one iteration), and whether it stays the same (the body then sees one type every
    iteration); None to defer (until the sizes the iteration computes are solved)."""
    if (_has_unknowns(out) or isinstance(init, ty.IncompleteType)) and not ctx.final:
        return None  # (a sequence as a later round sees it: see LOOP_SEQ)
    if init == out and not isinstance(init, ty.IncompleteType) and not _mentions(init, it):
        return init, True  # (a value passed on: a tuple keeps its length)
    if isinstance(init, (ty.TupleType, ty.TypeCall)) and isinstance(out, ty.IncompleteType) and ctx.final:
        return _anything(ctx, init), False  # (the body's sequence stays unsolved)
    if isinstance(init, (ty.TupleType, ty.TypeCall)) or isinstance(out, (ty.TupleType, ty.TypeCall)):
        grown = _grown(ctx, init, out, it)
        if grown is None:
            return None
        t, stable = grown
        if stable:
            return t, True
        assert isinstance(t, ty.TypeCall)  # (a tuple: only the empty one, which is stable)
        return seq_type(_any_rank(t.args[0])), False
    if _same(ctx, init, out) and not _mentions(out, it):
        return _without_value(init), True  # (the body saw no value: LOOP_STATE)
    if covers_tensor(init, out) and not _mentions(init, it):
        return _without_value(init), True  # (a state generalized to a fixpoint: see LOOP_TENSOR)
    if isinstance(init, ty.TensorType) and isinstance(out, ty.TensorType):
        return ty.Tensor(None, init.dtype if init.dtype == out.dtype else None), False
    if isinstance(init, ty.TensorType) and isinstance(out, ty.IncompleteType):
        # the body's value stays unsolved (a size the iteration computes): a loop-carried
        # tensor stays a tensor of its dtype (the ONNX spec), of a rank not known
        return ty.Tensor(None, init.dtype), False
    return ty.ObjectType(), False


def covers_tensor(g: Type, t: Type) -> bool:
    """Whether every tensor of type ``t`` has type ``g``, a loop-carried tensor's type over the
    iterations (:data:`LOOP_TENSOR`): one dtype and rank, each size ``g``'s or under a ``?`` of
    ``g`` (any size no smaller than its least)."""
    if not isinstance(g, ty.TensorType) or not isinstance(t, ty.TensorType) or g.dtype != t.dtype:
        return False
    if g.ndim is None or t.ndim != g.ndim:
        return g.ndim is None
    return all(
        x == y or (isinstance(x.atom, AnyDim) and not x.atom.alts and bounds(y)[0] >= x.atom.least)
        for x, y in zip(g.dims, t.dims)
    )


def _moves(t: Type, moving: set[AnyDim]) -> bool:
    """Whether a size of ``t`` is made of one of the ``?`` sizes ``moving``."""
    return bool(moving) and isinstance(t, ty.TensorType) and any(
        a in moving for d in t.dims or () for a in d.atoms() if isinstance(a, AnyDim)
    )


def _loop_tensor_rel(ctx: Context, args: Sequence[Type], attrs: ty.Attrs) -> bool:
    """A loop-carried tensor as the next application of a ``Loop`` body sees it, when one
    iteration changed its type (``prev`` became ``out``): ``prev`` with each size that changed a
    new ``?`` (the run decides it; 0 or more unless both sizes are at least 1), of an unknown rank
    when the rank changed. The body applied to that covers every iteration once its own result
    is covered (:func:`covers_tensor`): see :func:`symshape.onnx.ops.control._loop`."""
    prev, out, res = args
    unsettled = any(isinstance(t, ty.IncompleteType) for t in (prev, out)) or _has_unknowns(out)
    if unsettled and not ctx.final:
        return False  # (on the last run: a size still unsolved changed)
    if not isinstance(prev, ty.TensorType) or not isinstance(out, ty.TensorType):
        ctx.unify(res, _anything(ctx, prev))
        return True
    dtype = prev.dtype if prev.dtype == out.dtype else None
    if prev.ndim is None or prev.ndim != out.ndim:
        ctx.unify(res, ty.Tensor(None, dtype))
        return True
    dims = tuple(
        x if x == y else fresh_any(1 if bounds(x)[0] >= 1 and bounds(y)[0] >= 1 else 0)
        for x, y in zip(prev.dims, out.dims)
    )
    ctx.unify(res, ty.TensorType(dims, dtype))
    return True


def _loop_result_rel(ctx: Context, args: Sequence[Type], attrs: ty.Attrs) -> bool:
    """``(*finals, *scan outputs)`` of a ``Loop``: ``steps`` is ``(L,)`` (the iteration count),
    then the ``n`` initial states, the ``n`` states after one iteration, the body's scan outputs,
    the ``first`` scan outputs of the body's first application (when a state was generalized:
    see :func:`_scan_type`), and the result. ``once``: one iteration runs (the final states are
    the tensors it gives)."""
    n, it, first = attrs.get("n", 0), attrs.get("iteration"), attrs.get("first", 0)
    assert isinstance(n, int) and isinstance(it, Dim) and isinstance(first, int)
    steps, rest, out = args[0], args[1:-1], args[-1]
    inits, outs = rest[:n], rest[n : 2 * n]
    ys, y1s = rest[2 * n : len(rest) - first], rest[len(rest) - first :]
    if any(isinstance(t, ty.IncompleteType) for t in (steps, *ys, *y1s)):
        return False
    finals: list[Type] = []
    stable = True
    moving: set[AnyDim] = set()  # the `?` sizes of states that change from one iteration to the next
    for a, b in zip(inits, outs):
        w = _widened(ctx, a, b, it)
        if w is None:
            return False
        finals.append(w[0])
        stable = stable and w[1]
        if isinstance(a, ty.TensorType) and isinstance(b, ty.TensorType) and a.ndim is not None:
            moving.update(x for d, e in zip(a.dims, b.dims or ()) if d != e for x in _any_atoms(d))
    if attrs.get("once"):  # one iteration: the tensors it gives (and its scan outputs)
        finals = [
            b if isinstance(b, ty.TensorType) and not _mentions(b, it) else f for f, b in zip(finals, outs)
        ]
        stable = True
    if not stable:  # the body saw the first iteration's states: what it gave any state from them
        finals = [_anything(ctx, f) for f in finals]  # may hold for that iteration only
    assert isinstance(steps, ty.TensorType) and steps.ndim == 1
    scans: list[Type] = []
    for j, y in enumerate(ys):
        if not isinstance(y, ty.TensorType):
            ctx.fail(TYPE_MISMATCH, f"a Loop's scan output must be a tensor, got `{y}`")
        if steps.dims[0] == 0:  # no iteration ran: onnxruntime gives `(0, *shape)` when its
            scans.append(ty.Tensor(None, y.dtype))  # inference knows the shape, else `(0,)`
        elif stable and y.ndim is not None and not _mentions(y, it) and not _moves(y, moving):
            scans.append(ty.TensorType((steps.dims[0], *y.dims), y.dtype))
        elif stable and j < len(y1s) and not _mentions(y, it):
            scans.append(_scan_type(ctx, j, steps.dims[0], y1s[j], y))
        else:  # the body's types may change from one iteration to the next
            scans.append(ty.Tensor(None, y.dtype))
    ctx.unify(out, ty.TupleType((*finals, *scans)))
    return True


def _scan_type(ctx: Context, j: int, steps: Dim, y1: Type, y: Type) -> Type:
    """Scan output ``j`` of a ``Loop`` whose states change: onnxruntime stacks the iterations'
    outputs, which must have one shape, the first's (``y1``); ``y`` is that output at any
    iteration (the body applied to the states generalized, a ``?`` for each size that changes).
    So one iteration runs, or ``y`` is ``y1`` (a guard over the sizes the run decides)."""
    if not isinstance(y1, ty.TensorType) or not isinstance(y, ty.TensorType) or y1.ndim is None:
        return ty.Tensor(None, y.dtype if isinstance(y, ty.TensorType) else None)
    same = y.ndim == y1.ndim and y.dtype == y1.dtype
    c = any_of(le(steps, 1), all_of(*(eq(a, b) for a, b in zip(y.dims, y1.dims)))) if same else le(steps, 1)
    ctx.require(c, SHAPE_MISMATCH, Lazy(
        "the Loop's scan output {} is `{}` at the first iteration and `{}` at a later one, which "
        "onnxruntime refuses to stack", j, y1, y))
    return ty.TensorType((steps, *y1.dims), y1.dtype)


#: ``onnx.loop_tensor(prev, out)``: a loop-carried tensor whose type an iteration changes, as the
#: next application of a ``Loop`` body sees it (see :func:`_loop_tensor_rel`)
LOOP_TENSOR: Final = ss.register_op(
    "onnx.loop_tensor", _loop_tensor_rel, 2, doc="a loop-carried tensor over the iterations", attr_types={}
)
LOOP_RESULT: Final = ss.register_op(
    "onnx.loop_result",
    _loop_result_rel,
    -1,
    doc="a Loop's final states and scan outputs",
    attr_types={"n": "int", "iteration": "any", "first": "int", "once": "bool"},
)
