"""Shape values: what a small integer tensor is known to hold.

A 0-d or 1-d ``int32``/``int64`` tensor may carry a known **value** beside its type (Relax keeps
it in ``ShapeStructInfo(values=...)`` and ``PrimStructInfo(value=...)``):

* a 1-d tensor: a tuple with one entry per element, each a :class:`~symshape.encoding.dims.Dim`
  or ``None`` for an entry that is not known (``shape_of(x)`` of ``x: (n, s, 64)`` holds
  ``(n, s, 64)``; concatenating it with a computed, unknown entry gives ``(n, s, 64, None)``);
* a 0-d tensor: one :class:`Dim` (``n*s``).

Printed after the type: ``Tensor[(3,), int64] = (n, s, 64)``, ``Tensor[(), int64] = n*s``; an
unknown entry prints ``?`` (``= (n, ?)``). Entries are dimensions in the dimension language, but
unlike dimensions of a shape they may be negative (``-1`` in a reshape target).

A value is a **refinement** of its type: unknown meets known (entry by entry), and two known
entries must be equal (:mod:`symshape.solver.unify` equates them as it equates dimensions, so a
disagreement is a conflict explained like any other). The **join** of two values (``If`` branches)
keeps the entries that are equal and makes the others unknown; a value none of whose entries are
known is no value (``None``), so every value has one form.

A value is at most :data:`MAX_VALUE_LEN` entries long (longer constants carry none).

Design note (value ranges, issue 19): an integer *range* for the entries (``arange(t)`` holds
entries in ``[0, t - 1]``) is a second, independent refinement: a ``TensorType`` field beside
``value``, printed after it (``... = (...) in [0, t - 1]``), met by intersection and joined by the
hull, with the helpers for it here beside the ones for exact values. An exact value implies a
range (the hull of its entries), so readers ask a range first of the value and then of the range.

>>> from symshape.encoding.dims import dims
>>> n, s = dims("n s")
>>> value_str((n, s, None))
'(n, s, ?)'
>>> value_str(n * s)
'n*s'
>>> join_values((n, s), (n, n)) == (n, None)
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Union

from symshape.encoding.dims import Dim, as_dim
from symshape.errors import INVALID_ARGUMENT, SymshapeError

__all__ = [
    "Value",
    "VALUE_DTYPES",
    "MAX_VALUE_LEN",
    "normalize_value",
    "value_str",
    "value_dims",
    "map_value",
    "join_values",
    "value_entries",
    "value_from_entries",
]

Value = Union[tuple[Union[Dim, None], ...], Dim]
"""A known value: the entries of a 1-d tensor (``None`` = unknown entry) or a 0-d tensor's Dim."""

VALUE_DTYPES: frozenset[str] = frozenset({"int32", "int64"})
"""The dtypes whose tensors may carry a value."""

MAX_VALUE_LEN = 256
"""The most entries a value has (a longer constant carries no value)."""


def normalize_value(value: object, shape: object, dtype: object) -> Value | None:
    """``value`` in its one form for a tensor of ``shape`` and ``dtype`` (see the module
    docstring), or a ``SymshapeError`` (``invalid-argument``) when it cannot belong to it: a value
    needs an ``int32``/``int64`` dtype and a rank of 0 (one dimension) or 1 (as many entries as
    the constant length). Ints become dimensions; a tuple without a known entry becomes None."""
    if value is None:
        return None
    if dtype not in VALUE_DTYPES:
        raise SymshapeError(
            INVALID_ARGUMENT, f"only int32 and int64 tensors carry a value, not dtype {dtype}"
        )
    if type(shape) is not tuple or len(shape) > 1:
        raise SymshapeError(
            INVALID_ARGUMENT, f"only 0-d and 1-d tensors carry a value, not shape {shape!r}"
        )
    if len(shape) == 0:
        if isinstance(value, (tuple, list)):
            raise SymshapeError(INVALID_ARGUMENT, f"a 0-d tensor's value is one dimension, got {value!r}")
        try:
            return as_dim(value)
        except SymshapeError:
            raise SymshapeError(INVALID_ARGUMENT, f"a value must be a dimension, got {value!r}") from None
    if not isinstance(value, (tuple, list)):
        raise SymshapeError(
            INVALID_ARGUMENT, f"a 1-d tensor's value is a tuple of dimensions, got {value!r}"
        )
    length = shape[0].constant_value
    if length is None or length != len(value):
        raise SymshapeError(
            INVALID_ARGUMENT,
            f"a value of {len(value)} entries does not fit a tensor of shape ({shape[0]},)",
        )
    if len(value) > MAX_VALUE_LEN:
        return None
    out: list[Dim | None] = []
    known = False
    for x in value:
        if x is None:
            out.append(None)
            continue
        try:
            out.append(x if type(x) is Dim else as_dim(x))
        except SymshapeError:
            raise SymshapeError(INVALID_ARGUMENT, f"a value entry must be a dimension, got {x!r}") from None
        known = True
    return tuple(out) if known else None


def _entry_str(d: Dim | None) -> str:
    return "?" if d is None else str(d)


def value_str(v: Value) -> str:
    """The printed form of a value (what follows ``=`` after a type)."""
    if isinstance(v, Dim):
        return str(v)
    if len(v) == 1:
        return f"({_entry_str(v[0])},)"
    return "(" + ", ".join(_entry_str(d) for d in v) + ")"


def value_dims(v: Value | None) -> Iterator[Dim]:
    """The known entries of a value."""
    if v is None:
        return
    if isinstance(v, Dim):
        yield v
        return
    for d in v:
        if d is not None:
            yield d


def map_value(v: Value | None, f: Callable[[Dim], Dim]) -> Value | None:
    """``f`` applied to every known entry (the same object when nothing changed)."""
    if v is None:
        return None
    if isinstance(v, Dim):
        return f(v)
    new = tuple(None if d is None else f(d) for d in v)
    if all(a is b for a, b in zip(new, v)):
        return v
    return new


def value_entries(v: Value | None, length: int | None) -> tuple[Dim | None, ...] | None:
    """The entries of a 1-d value as a tuple (all ``None`` for an unknown value of a known
    ``length``); None when neither tells the length."""
    if v is None:
        return None if length is None else (None,) * length
    if isinstance(v, Dim):
        return (v,)
    return v


def value_from_entries(entries: Iterable[Dim | None]) -> Value | None:
    """A 1-d value from entries: None when none is known (or there are too many)."""
    t = tuple(entries)
    if len(t) > MAX_VALUE_LEN or all(d is None for d in t):
        return None
    return t


def join_values(
    a: Value | None, b: Value | None, equal: Callable[[Dim, Dim], bool] | None = None
) -> Value | None:
    """The join of two values of one shape: entries that are equal (structurally, or by
    ``equal``) stay, the others become unknown."""
    if a is None or b is None:
        return None

    def same(x: Dim | None, y: Dim | None) -> bool:
        if x is None or y is None:
            return False
        return x == y or (equal is not None and equal(x, y))

    if isinstance(a, Dim) or isinstance(b, Dim):
        if isinstance(a, Dim) and isinstance(b, Dim) and same(a, b):
            return a
        return None
    if len(a) != len(b):
        return None
    return value_from_entries(x if same(x, y) else None for x, y in zip(a, b))
