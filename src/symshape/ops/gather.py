"""Gathers composed of ``take``: ``gather_elements`` (torch's ``gather``, ONNX ``GatherElements``).

``gather_elements(x, indices, axis, rank, mode)`` of two tensors of rank ``rank``: the result has
``indices``' shape, whose sizes off ``axis`` must not exceed ``x``'s, and each index reads ``x``
along ``axis``. Composed as ``axis`` moved last, ``x`` sliced to ``indices``' sizes on the other
axes (a slice clamps, so the ``take`` that follows, with those axes as batch axes that must
agree, states exactly the ``<=``), ``take(.., axis=rank-1, batch_dims=rank-1, mode=mode)`` given
``indices``' shape (``reshape_like``), and ``axis`` moved back. The ``take``'s mode states the
index bounds (:mod:`symshape.ir.index_bounds`): ``fast`` (ONNX: ``-d <= i < d``) or
``nonnegative`` (torch: ``0 <= i < d``).
"""

from __future__ import annotations

from symshape.ir.expr import Expr
from symshape.ops.index import strided_slice, take
from symshape.ops.shape import reshape_like, transpose
from symshape.ops.values import shape_of

__all__ = ["gather_elements"]


def gather_elements(x: Expr, indices: Expr, axis: int, rank: int, mode: str = "fast") -> Expr:
    """``out[..., i, ...] = x[..., indices[..., i, ...], ...]`` along ``axis`` (``0 <= axis <
    rank``) of tensors of rank ``rank`` (see the module docstring)."""
    if rank == 1:
        return take(x, indices, axis=0, mode=mode)
    perm = [k for k in range(rank) if k != axis] + [axis]
    moved = perm != list(range(rank))
    xt = transpose(x, perm) if moved else x
    it = transpose(indices, perm) if moved else indices
    ends = strided_slice(shape_of(it), [0], [rank - 1])
    xs = strided_slice(xt, [0] * (rank - 1), ends, None, list(range(rank - 1)))
    # the batch axes agree (min(x.size(k), indices.size(k)) == indices.size(k)); the result has
    # indices' shape
    out = reshape_like(take(xs, it, axis=rank - 1, batch_dims=rank - 1, mode=mode), it)
    return transpose(out, [perm.index(k) for k in range(rank)]) if moved else out
