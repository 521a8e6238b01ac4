"""Gathers that transformers' models trace into: indexing by several integer tensors,
``torch.gather`` and ``torch.diff``; each composed exactly of existing operators.

* ``x[i, j]`` (``aten.index.Tensor(x, [i, j])``, the tensors on the leading axes; after ``k``
  full slices, ``x[:, :, i, j]``, the same of ``x`` with those axes moved first, the gathered
  axis moved back to ``k``: bicubic upsampling in core ATen): the indices
  broadcast to one shape ``S`` (``broadcast_to`` their sum's shape) and flattened to ``N``
  entries (no rank needed), then ``take(x, i, axis=0)`` (``(N,) + x.shape[1:]``) and for each
  further index ``take(y, j, axis=1, batch_dims=1)`` (``(N,) + x.shape[k+1:]``), reshaped to
  ``S + x.shape[n:]``. Each ``take`` is ``mode="raise"``: an index whose value range is known
  must be in its axis.
* ``torch.gather(x, d, index)``: ``index``'s shape; torch requires the same rank and
  ``index.size(k) <= x.size(k)`` for ``k != d``: :func:`symshape.ops.gather.gather_elements` in
  mode ``nonnegative`` (torch refuses negative indices here, so an index's range must lie in
  ``[0, size)``). Of tensors whose rank only inference knows (both computed in a traced module),
  the same with ``torch.movedim`` and axes counted from the end.
* ``torch.diff(x, n, dim, prepend, append)``: ``cat([prepend, x, append], dim)``, then ``n``
  times ``a[1:] - a[:-1]`` along ``dim``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

import symshape as ss
from symshape.ops.gather import gather_elements
from symshape.torch.context import Ctx
from symshape.torch.convert.axes import MOVEDIM
from symshape.torch.registry import converts
from symshape.torch.values import Unsupported

__all__ = ["index_by_tensors", "gather", "diff"]

aten = torch.ops.aten


def _full(it: Any) -> bool:
    return isinstance(it, slice) and it == slice(None)


def index_by_tensors(ctx: Ctx, x: ss.Expr, items: Sequence[Any]) -> ss.Expr:
    """``x[..., i, j, ...]`` with adjacent integer tensors after ``k`` full slices (full slices
    after them too; ``k > 0`` needs ``x``'s rank): ``x.shape[:k] + S + x.shape[k+m:]``."""
    k = 0
    while k < len(items) and _full(items[k]):
        k += 1
    n = k
    while n < len(items) and isinstance(items[n], ss.Expr):
        n += 1
    r = ctx.rank(x) if k else None
    if n == k or any(not _full(it) for it in items[n:]) or (k and r is None):
        raise Unsupported(
            "advanced indexing is supported with adjacent index tensors after full slices only"
            + (" (and of a tensor of known rank after slices)" if k and r is None else "")
        )
    if r is not None:  # the indexed axes first
        x = ss.ops.transpose(x, (*range(k, n), *range(k), *range(n, r)))
    idx = [ss.ops.cast(it, "int64") for it in items[k:n]]
    total: ss.Expr = idx[0]
    for it in idx[1:]:
        total = ss.ops.add(total, it)
    shape = ctx.let(ss.ops.shape_of(total), "index_shape")
    flat = [ss.ops.reshape(ss.ops.broadcast_to(it, shape), (-1,)) for it in idx]
    y: ss.Expr = ss.ops.take(x, flat[0], axis=0, mode="raise")  # (N,) + the other axes
    for it in flat[1:]:
        y = ss.ops.take(y, it, axis=1, batch_dims=1, mode="raise")
    if r is not None:  # (N,) back after the k sliced axes
        y = ss.ops.transpose(y, (*range(1, k + 1), 0, *range(k + 1, r - (n - k) + 1)))
    y = ctx.let(y, "gathered")
    dims = ss.ops.shape_of(y)
    before = ss.ops.strided_slice(dims, [0], [k])  # x.shape[:k]
    after = ss.ops.strided_slice(dims, [k + 1], [None])  # x.shape[n:]
    return ss.ops.reshape(y, ss.ops.concatenate([before, shape, after], axis=0))


@converts(torch.gather, "gather", aten.gather)
def gather(ctx: Ctx, input: Any, dim: Any, index: Any, sparse_grad: Any = False, **kw: Any) -> Any:
    """``torch.gather(x, dim, index)`` (see the module docstring)."""
    x, ind = ctx.tensor(input), ctx.tensor(index, "index")
    r, ri = ctx.rank(x), ctx.rank(ind)
    if r is None:  # the ranks must be equal: a different one fails the transposes below
        r = ri
    d = ctx.integer(dim, "dim")
    if r is None:  # (`gather(logits.log_softmax(-1), 2, labels.unsqueeze(2))` in a traced module)
        return _gather_any_rank(ctx, x, ind, d)
    if ri is not None and r != ri:
        raise Unsupported(f"torch.gather: index has rank {ri}, the input {r} (torch requires them equal)")
    d = d + r if d < 0 else d
    if not 0 <= d < r:
        raise Unsupported(f"torch.gather: dim {d} is out of range for rank {r}")
    return gather_elements(x, ind, d, r, mode="nonnegative")


@converts(torch.diff, "diff", aten.diff)
def diff(ctx: Ctx, input: Any, n: Any = 1, dim: Any = -1, prepend: Any = None, append: Any = None) -> Any:
    """``torch.diff`` (see the module docstring)."""
    x = ctx.tensor(input)
    axis = ctx.integer(dim, "dim")
    times = ctx.integer(n, "n")
    parts = [ctx.tensor(p) for p in (prepend,) if p is not None]
    parts += [x] + [ctx.tensor(a) for a in (append,) if a is not None]
    a = ss.ops.concatenate(parts, axis=axis) if len(parts) > 1 else x
    for k in range(times):
        a = ctx.let(a, f"diff{k}")
        hi = ss.ops.strided_slice(a, [1], [None], axes=[axis])
        lo = ss.ops.strided_slice(a, [0], [-1], axes=[axis])
        a = ss.ops.subtract(hi, lo)
    return a


def _gather_any_rank(ctx: Ctx, x: ss.Expr, ind: ss.Expr, d: int) -> ss.Expr:
    """``torch.gather`` of tensors whose rank only inference knows: the composition above with
    ``d`` moved last by ``torch.movedim`` (normalized against the rank once it is known), the
    leading axes sliced to ``index``'s sizes by bounds computed from its shape, and the ``take``'s
    axis and batch axes counted from the end."""
    xt = MOVEDIM(x, source=[d], destination=[-1])
    it = ctx.let(MOVEDIM(ind, source=[d], destination=[-1]), "index")
    ends = ctx.let(ss.ops.strided_slice(ss.ops.shape_of(it), [0], [-1]), "sizes")
    xs = ss.ops.strided_slice(xt, ss.ops.multiply(ends, ss.ops.int_tensor(0)), ends)
    out = ss.ops.reshape_like(ss.ops.take(xs, it, axis=-1, batch_dims=-1, mode="nonnegative"), it)
    return MOVEDIM(out, source=[-1], destination=[d])
