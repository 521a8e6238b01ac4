"""Axes of a tensor whose rank only inference knows: ``x.transpose(a, b)`` and
``x.movedim(source, destination)``.

symshape's ``transpose`` takes a full permutation, which needs the rank. So this module registers
two operators of the importer's own through the public custom-operator API (as
:mod:`symshape.torch.convert.promotion` registers ``torch.promote``): ``torch.swapaxes`` (the two
axes, normalized against the rank once it is known, trade places) and ``torch.movedim`` (the
source axes move to the destination positions, the others keep their order: torch's rule). When
the importer knows the rank (an input, a parameter, an exported node), ``movedim`` is a plain
``transpose``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

import symshape as ss
from symshape.relations.base import Context
from symshape.torch.context import Ctx
from symshape.torch.convert.elementwise import keys
from symshape.torch.registry import converts

__all__ = ["SWAPAXES", "MOVEDIM", "transpose", "movedim", "movedim_order"]


def _axes(ctx: Context, op: str, attrs: Any, name: str, r: int, x: ss.TensorType) -> list[int]:
    v = attrs.get(name)
    items = list(v) if isinstance(v, (list, tuple)) else [v]
    out = []
    for a in items:
        if not isinstance(a, int) or not -r <= a < r:
            ctx.fail("axis-out-of-range", f"{op}: axis {a} is out of range for `{x}` (rank {r})")
        out.append(a % r)
    return out


def _swapaxes_order(ctx: Context, attrs: Any, x: ss.TensorType) -> list[int]:
    """``swapaxes(x, axis1, axis2)``: the two axes (normalized against the rank) trade places."""
    r = len(x.dims)
    (a,), (b,) = (_axes(ctx, "swapaxes", attrs, name, r, x) for name in ("axis1", "axis2"))
    order = list(range(r))
    order[a], order[b] = b, a
    return order


def movedim_order(r: int, src: Sequence[int], dst: Sequence[int]) -> list[int] | None:
    """The permutation ``movedim`` makes of ``r`` axes (axes normalized), None when the source
    and destination differ in length or repeat an axis (torch's error)."""
    if len(src) != len(dst) or len(set(src)) != len(src) or len(set(dst)) != len(dst):
        return None
    order = [i for i in range(r) if i not in set(src)]
    for s, d in sorted(zip(src, dst), key=lambda p: p[1]):
        order.insert(d, s)
    return order


def _movedim_order(ctx: Context, attrs: Any, x: ss.TensorType) -> list[int]:
    """``movedim(x, source, destination)`` by torch's rule (see the module docstring)."""
    r = len(x.dims)
    src = _axes(ctx, "movedim", attrs, "source", r, x)
    dst = _axes(ctx, "movedim", attrs, "destination", r, x)
    order = movedim_order(r, src, dst)
    if order is None:
        ctx.fail("bad-attribute", f"movedim: invalid source {src} or destination {dst} for `{x}`")
    return order


def _permutation(name: str, order_of: Callable[[Context, Any, ss.TensorType], list[int]]) -> None:
    """Register relation ``name``: the input's axes in the order ``order_of`` gives, once the
    rank is known (of unknown rank if it never is)."""

    def rel(ctx: Context, args: Sequence[ss.Type], attrs: Any) -> bool:
        x, out = args[0], args[1]
        if not isinstance(x, ss.TensorType):
            return False
        if x.ndim is None:
            if not ctx.final:
                return False
            ctx.assign(out, ss.Tensor(None, x.dtype))
            return True
        order = order_of(ctx, attrs, x)
        ctx.assign(out, ss.Tensor(tuple(x.dims[i] for i in order), x.dtype))
        return True

    ss.relation(name)(rel)


_permutation("torch.swapaxes", _swapaxes_order)
_permutation("torch.movedim", _movedim_order)


def _check(op: str, types: dict[str, str]) -> Any:
    def check(attrs: Any, nargs: int) -> None:
        for name, kind in types.items():
            a = attrs.get(name)
            items = a if isinstance(a, (list, tuple)) and kind == "ints" else [a]
            if not items or not all(isinstance(i, int) and not isinstance(i, bool) for i in items):
                raise ss.SymshapeError("bad-attribute", f"{op}: {name} must be ints, got {a!r}")

    return check


_OPS = {
    "torch.swapaxes": (
        "swap two axes (negative axes count from the end)",
        {"axis1": "int", "axis2": "int"},
    ),
    "torch.movedim": (
        "move the source axes to the destination positions (negative axes count from the end)",
        {"source": "ints", "destination": "ints"},
    ),
}
#: ``torch.swapaxes(x, axis1=a, axis2=b)`` (``x.transpose(a, b)``) and ``torch.movedim(x,
#: source=(...), destination=(...))``, for a tensor of any rank
SWAPAXES, MOVEDIM = (
    ss.register_op(name, name, 1, check_attrs=_check(name, types), doc=doc, attr_types=types)
    for name, (doc, types) in _OPS.items()
)


@converts(*keys("transpose", torch.swapaxes, torch.swapdims, "swapaxes", "swapdims"))
def transpose(ctx: Ctx, input: Any, dim0: Any, dim1: Any) -> Any:
    """``x.transpose(a, b)``: the ``torch.swapaxes`` operator (any rank)."""
    return SWAPAXES(ctx.tensor(input), axis1=ctx.axis(dim0), axis2=ctx.axis(dim1))


@converts(*keys("movedim", torch.moveaxis, "moveaxis"))
def movedim(ctx: Ctx, input: Any, source: Any, destination: Any) -> Any:
    """``x.movedim(s, d)``: a ``transpose`` when the rank is known, else ``torch.movedim``."""
    x = ctx.tensor(input)
    src, dst = ctx.ints(source, "source"), ctx.ints(destination, "destination")
    r = ctx.rank(x)
    if r is None or not all(-r <= a < r for a in (*src, *dst)):
        # (an axis out of range: the operator's error, axis-out-of-range, as for other axes)
        return MOVEDIM(x, source=src, destination=dst)
    order = movedim_order(r, [s % r for s in src], [d % r for d in dst])
    if order is None:  # (a repeated axis, or lengths that differ: the operator's error)
        return MOVEDIM(x, source=src, destination=dst)
    return ss.ops.transpose(x, order)
