"""numpy basic indexing (``x[..., 1:, ::2]``, ``x[:, 0]``, ``x[None]``, ``x[idx]``) as a plan of
operator steps, without building anything.

:func:`index_plan` reads an index the way numpy does and answers the steps that give the same
shape: one ``strided_slice`` for every slice and integer (an integer ``i`` is the slice
``i:i+1``), one ``squeeze`` of the integer axes, one ``expand_dims`` per ``None`` and at most one
``take`` for an index that is a tensor. Axes left of an ``Ellipsis`` (or of the implicit one at
the end) count from the start, axes right of it from the end (negative), so the plan needs no
rank. The module builds no expressions: :meth:`symshape.ir.sugar.ExprSugar.__getitem__` turns the
steps into calls.

>>> index_plan((Ellipsis, slice(1, None), slice(None, None, 2)), lambda v: False)
[SliceStep(begin=(1, None), end=(None, None), strides=(1, 2), axes=(-2, -1))]
>>> index_plan((slice(None), 0), lambda v: False)
[SliceStep(begin=(0,), end=(1,), strides=(1,), axes=(1,)), SqueezeStep(axes=(1,))]
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Union

from symshape.encoding.dims import Dim
from symshape.errors import INVALID_ARGUMENT, SymshapeError

__all__ = ["Index", "SliceStep", "SqueezeStep", "ExpandStep", "TakeStep", "Step", "index_plan"]

Index = Union[int, Dim]
"""A literal index or slice bound: an int, or a symbolic dimension (``x[:, n - 1]``)."""


@dataclass(frozen=True)
class SliceStep:
    """``strided_slice(x, begin, end, strides, axes)``."""

    begin: tuple[Index | None, ...]
    end: tuple[Index | None, ...]
    strides: tuple[int, ...]
    axes: tuple[int, ...]


@dataclass(frozen=True)
class SqueezeStep:
    """``squeeze(x, axes)``: the axes the integers indexed."""

    axes: tuple[int, ...]


@dataclass(frozen=True)
class ExpandStep:
    """``expand_dims(x, axis)``: a ``None``."""

    axis: int


@dataclass(frozen=True)
class TakeStep:
    """``take(x, index, axis)``: the position (in the index tuple) of a tensor index."""

    item: int
    axis: int


Step = Union[SliceStep, SqueezeStep, ExpandStep, TakeStep]



def _as_int(v: object) -> Index | None:
    """``v`` as an index: an int (``int``, numpy ints: anything with ``__index__``; not bool) or
    a symbolic dimension (``x[:, n - 1]``, ``x[:n]``); None for anything else."""
    if isinstance(v, bool):
        return None
    if isinstance(v, Dim):
        c = v.constant_value
        return v if c is None else c
    try:
        return operator.index(v)  # type: ignore[arg-type]
    except TypeError:
        return None


def _slice_part(v: object, what: str) -> Index | None:
    if v is None:
        return None
    i = _as_int(v)
    if i is None:
        raise SymshapeError(
            INVALID_ARGUMENT,
            f"a slice's {what} must be an int, a dimension or None, got {type(v).__name__} {v!r}",
        )
    return i


def index_plan(index: object, is_tensor: Callable[[object], bool]) -> list[Step]:
    """The steps that index like numpy's ``x[index]``; ``is_tensor(v)`` tells a tensor index (an
    expression) from the rest. Raises ``invalid-argument`` for what numpy rejects or this
    front-end does not express (two ``...``, two tensor indices, a tensor index apart from
    integer ones, a zero step, floats, strings)."""
    items = index if isinstance(index, tuple) else (index,)
    kinds: list[str] = []
    for it in items:
        if it is None:
            kinds.append("new")
        elif it is Ellipsis:
            kinds.append("ellipsis")
        elif isinstance(it, slice):
            kinds.append("slice")
        elif is_tensor(it):
            kinds.append("tensor")
        elif _as_int(it) is not None:
            kinds.append("int")
        else:
            raise SymshapeError(
                INVALID_ARGUMENT,
                f"cannot index a tensor with {type(it).__name__} {it!r}: use ints, slices, None, "
                "... or an int tensor",
            )
    if kinds.count("ellipsis") > 1:
        raise SymshapeError(INVALID_ARGUMENT, "an index can only have a single ellipsis ('...')")
    if kinds.count("tensor") > 1:
        raise SymshapeError(
            INVALID_ARGUMENT,
            "only one tensor index is supported (numpy's advanced indexing with several arrays "
            "broadcasts them); index one axis at a time with ss.ops.take",
        )
    if "tensor" in kinds and "int" in kinds:
        adv = [i for i, k in enumerate(kinds) if k in ("tensor", "int")]
        if adv != list(range(adv[0], adv[-1] + 1)):
            raise SymshapeError(
                INVALID_ARGUMENT,
                "a tensor index apart from integer indices moves its axes first in numpy; "
                "index in two steps instead",
            )
    split = kinds.index("ellipsis") if "ellipsis" in kinds else len(kinds)
    # input axes (before squeezing) and output axes (after squeeze and expand_dims) of each item
    in_axis: dict[int, int] = {}
    out_axis: dict[int, int] = {}
    pos_in = pos_out = 0
    for i in range(split):
        k = kinds[i]
        if k == "new":
            out_axis[i] = pos_out
            pos_out += 1
            continue
        in_axis[i] = pos_in
        pos_in += 1
        if k != "int":
            out_axis[i] = pos_out
            pos_out += 1
    neg_in = neg_out = -1
    for i in range(len(kinds) - 1, split, -1):
        k = kinds[i]
        if k == "new":
            out_axis[i] = neg_out
            neg_out -= 1
            continue
        in_axis[i] = neg_in
        neg_in -= 1
        if k != "int":
            out_axis[i] = neg_out
            neg_out -= 1
    steps: list[Step] = []
    begin: list[Index | None] = []
    end: list[Index | None] = []
    strides: list[int] = []
    axes: list[int] = []
    squeeze: list[int] = []
    for i, k in enumerate(kinds):
        it = items[i]
        if k == "slice":
            assert isinstance(it, slice)
            b, e = _slice_part(it.start, "start"), _slice_part(it.stop, "stop")
            s = _slice_part(it.step, "step")
            if isinstance(s, Dim):
                raise SymshapeError(INVALID_ARGUMENT, f"a slice step must be an int, got {s}")
            if s == 0:
                raise SymshapeError(INVALID_ARGUMENT, "a slice step cannot be zero")
            if b is None and e is None and s in (None, 1):
                continue  # ``:`` keeps the axis as it is
            begin.append(b)
            end.append(e)
            strides.append(1 if s is None else s)
            axes.append(in_axis[i])
        elif k == "int":
            v = _as_int(it)
            assert v is not None
            begin.append(v)
            end.append(None if isinstance(v, int) and v == -1 else v + 1)
            strides.append(1)
            axes.append(in_axis[i])
            squeeze.append(in_axis[i])
    if axes:
        steps.append(SliceStep(tuple(begin), tuple(end), tuple(strides), tuple(axes)))
    if squeeze:
        steps.append(SqueezeStep(tuple(squeeze)))
    # ``None``s: those left of the ellipsis left to right, those right of it right to left, each
    # at its final position (the ones already inserted are then where they belong)
    for i in range(split):
        if kinds[i] == "new":
            steps.append(ExpandStep(out_axis[i]))
    for i in range(len(kinds) - 1, split, -1):
        if kinds[i] == "new":
            steps.append(ExpandStep(out_axis[i]))
    for i, k in enumerate(kinds):
        if k == "tensor":
            steps.append(TakeStep(i, out_axis[i]))
    return steps
