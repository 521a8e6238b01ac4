"""Writes into a tensor: ``x.copy_(src)`` and ``aten.slice_scatter``, what ``x[:, :3] = y`` becomes
in an exported program (``aten.copy_`` into an ``aten.slice`` view; after ``run_decompositions``,
``aten.copy`` then ``aten.slice_scatter``). The written tensor keeps its type; the write states
torch's condition on the source:

* ``copy``/``copy_``: ``src`` broadcasts one way to the destination's shape (each of its axes 1 or
  the destination's), by ``broadcast_to``;
* ``slice_scatter(x, src, dim, start, end, step)``: ``src`` has the shape of that slice of ``x``
  (the slice as :func:`symshape.torch.convert.indexing.aten_slice` makes it), by ``stack``-ing the
  two (equal shapes).

Each check is an operator the result's type reads (its dtype comes through ``cast_like``), so it
is part of the program: a wrong source is an error naming the assignment's line, or a guard.
"""

from __future__ import annotations

from typing import Any

import torch

import symshape as ss
from symshape.torch.context import Ctx
from symshape.torch.convert.entry_ops import NEW_ENTRIES
from symshape.torch.convert.indexing import aten_slice
from symshape.torch.registry import converts

__all__ = ["copy", "slice_scatter"]

aten = torch.ops.aten


@converts(aten.copy_, aten.copy, "copy_")
def copy(ctx: Ctx, input: Any, src: Any, non_blocking: Any = False, **kwargs: Any) -> Any:
    """``x.copy_(src)``: ``x``, once ``src`` broadcasts to its shape."""
    x = ctx.tensor(input)
    written = ss.ops.broadcast_to(ctx.operand(src, x), ss.ops.shape_of(x))
    return ss.ops.cast_like(written, x)


@converts(aten.slice_scatter)
def slice_scatter(
    ctx: Ctx, input: Any, src: Any, dim: Any = 0, start: Any = None, end: Any = None, step: Any = 1
) -> Any:
    """``x`` with ``src`` written into ``x[start:end:step]`` along ``dim``: ``src`` has that
    slice's shape; the result has ``x``'s type but new entries (no value: ``x``'s is stale)."""
    x = ctx.tensor(input)
    part = aten_slice(ctx, x, dim, start, end, step)
    same = ss.ops.stack([part, ss.ops.cast_like(ctx.tensor(src, "src"), x)], axis=0)
    return NEW_ENTRIES(ss.ops.cast_like(x, same))
