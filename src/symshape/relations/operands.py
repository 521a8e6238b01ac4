"""How a relation reads its operands: the shared prologues.

A relation starts by taking its arguments as tensors (:func:`tensor_or_defer`, :func:`tensor_args`):
a hole defers, anything that can never be a tensor fails with ``type-mismatch``. Most relations
then need the rank (:func:`ranked_or_defer`); an input of unknown rank defers until the final run,
which gives the result of unknown rank (:func:`unknown_rank`) or what the attributes still fix.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from symshape.encoding.types import IncompleteType, Tensor, TensorType, Type, TypeVar
from symshape.errors import TYPE_MISMATCH
from symshape.relations.base import Context

__all__ = ["ranked_or_defer", "tensor_args", "tensor_or_defer", "unknown_rank"]


def tensor_or_defer(t: Type, ctx: Context | None = None, index: int = 0) -> TensorType | None:
    """The tensor type of a resolved argument, or None while it is still a hole (defer).

    With ``ctx``, an argument that can never become a tensor — a tuple, a function, an ADT value,
    ``Object``, a shape — fails the relation with ``type-mismatch`` (``index`` is its position
    among the arguments, counted from 0 and printed from 1), so that a wrong operand is an error
    and not an unresolved program. A hole, or a type parameter of an enclosing polymorphic
    function, defers.

    >>> import symshape as ss
    >>> tensor_or_defer(ss.IncompleteType()) is None
    True
    """
    if isinstance(t, TensorType):
        return t
    if ctx is not None and not isinstance(t, (IncompleteType, TypeVar)):
        ctx.fail(TYPE_MISMATCH, f"{ctx.name}: argument {index + 1} must be a tensor, found `{t}`")
    return None


def tensor_args(ctx: Context, args: Sequence[Type], count: int | None = None) -> list[TensorType] | None:
    """The first ``count`` arguments (default: every input) as tensors (see
    :func:`tensor_or_defer`): every one is checked before the relation defers on a hole, so a
    non-tensor operand fails even while another operand is still unknown."""
    n = ctx.num_inputs if count is None else count
    out: list[TensorType] = []
    ready = True
    for i in range(n):
        t = tensor_or_defer(args[i], ctx, i)
        if t is None:
            ready = False
        else:
            out.append(t)
    return out if ready else None


def unknown_rank(ctx: Context, out: Type, dtype: object) -> bool:
    """The answer of a relation whose input has unknown rank: defer; on the final run ``out`` is
    a tensor of unknown rank and ``dtype``."""
    if not ctx.final:
        return False
    ctx.assign(out, Tensor(None, dtype))
    return True


def ranked_or_defer(
    ctx: Context,
    args: Sequence[Type],
    out: Type,
    unranked: Callable[[TensorType], Type] | None = None,
    index: int = 0,
) -> TensorType | bool:
    """The shared prologue of a relation over one tensor: argument ``index`` as a tensor of known
    rank (see :func:`tensor_or_defer`), or the relation's answer without one. That is False (defer)
    while the argument is a hole, or has unknown rank before the final run; on the final run an
    argument of unknown rank makes ``out`` ``unranked(x)`` (default: a tensor of unknown rank and
    ``x``'s dtype), and the answer True. A relation starts::

        x = ranked_or_defer(ctx, args, out)
        if isinstance(x, bool):
            return x
    """
    x = tensor_or_defer(args[index], ctx, index)
    if x is None:
        return False
    if x.ndim is not None:
        return x
    if not ctx.final:
        return False
    ctx.assign(out, Tensor(None, x.dtype) if unranked is None else unranked(x))
    return True
