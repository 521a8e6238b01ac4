"""Running sums and products of shape values: the ``cumsum`` relation, and the entries that the
importers' cumulative operators share.

``cumsum(x, axis, exclusive, reverse)`` has ``x``'s type (the ``unary`` rule); where ``x`` is a
0-d or 1-d tensor with a value (split offsets from sizes: ``cumsum((n, m)) = (n, n + m)``), the
result's value is its running sums, each entry known while the entries it sums are:

* ``exclusive``: each entry is the sum of the entries before it (the first is 0);
* ``reverse``: the sums run from the end (``numpy.cumsum(x[::-1])[::-1]``).

The range of a result without a value is :mod:`symshape.ir.ranges`'s rule for running sums.

>>> import symshape as ss
>>> n, m = ss.dims("n m")
>>> x = ss.Tensor((3,), "int64", value=(n, m, 2))
>>> [str(d) for d in cumsum_value(x, exclusive=True, reverse=False)]
['0', 'n', 'm + n']
"""

from __future__ import annotations

from collections.abc import Sequence

from symshape.encoding.dims import Dim, as_dim
from symshape.encoding.types import Attrs, TensorType, Type
from symshape.encoding.values import Value, value_from_entries
from symshape.relations.base import Context, get_relation, relation
from symshape.relations.values import entries_of

__all__ = ["running_entries", "cumsum_value", "cumsum_rel", "CUMSUM"]

CUMSUM = "cumsum"
"""The relation's name (``ss.ops.cumsum``'s)."""


def running_entries(
    entries: Sequence[Dim | None], *, prod: bool = False, exclusive: bool = False, reverse: bool = False
) -> tuple[Dim | None, ...]:
    """The running sums (``prod``: products) of ``entries``; an entry is None (unknown) from the
    first unknown one it combines on. ``exclusive``: of the entries before (the first is the
    identity); ``reverse``: from the end."""
    seq = list(entries)[::-1] if reverse else list(entries)
    acc: Dim | None = as_dim(1 if prod else 0)
    out: list[Dim | None] = []
    for e in seq:
        nxt = None if acc is None or e is None else acc * e if prod else acc + e
        out.append(acc if exclusive else nxt)
        acc = nxt
    return tuple(out[::-1] if reverse else out)


def cumsum_value(x: TensorType, *, exclusive: bool, reverse: bool) -> Value | None:
    """The value of ``cumsum`` of a 0-d or 1-d ``x`` with a value (None where ``x`` has none)."""
    if not isinstance(x.shape, tuple) or x.value is None:
        return None
    if len(x.shape) == 0:
        return running_entries([x.value] if isinstance(x.value, Dim) else [None], exclusive=exclusive)[0]
    es = entries_of(x)
    if es is None:
        return None
    return value_from_entries(running_entries(es, exclusive=exclusive, reverse=reverse))


@relation(CUMSUM)
def cumsum_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out = x`` (the ``unary`` rule); a 0-d or 1-d valued ``x``: the value is its running sums
    (``exclusive``: of the entries before; ``reverse``: from the end)."""
    x = ctx.resolve(args[0])
    if isinstance(x, TensorType) and x.value is not None:
        axis = attrs.get("axis")
        if x.ndim == 0 or axis in (0, -1):  # a 1-d tensor's only axis
            v = cumsum_value(x, exclusive=bool(attrs.get("exclusive")), reverse=bool(attrs.get("reverse")))
            if v is not None:
                ctx.assign(args[1], TensorType(x.shape, x.dtype, v))
                return True
    return get_relation("unary").fn(ctx, args, attrs)
