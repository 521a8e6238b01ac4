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

from symshape.encoding.dims import Dim, as_dim, dmax, dmin
from symshape.errors import INVALID_ARGUMENT, SymshapeError

__all__ = [
    "Value",
    "VALUE_DTYPES",
    "SIZE_DTYPES",
    "MAX_VALUE_LEN",
    "normalize_value",
    "value_str",
    "value_dims",
    "map_value",
    "join_values",
    "value_entries",
    "value_from_entries",
    "Range",
    "RANGE_DTYPES",
    "normalize_range",
    "range_str",
    "range_dims",
    "map_range",
    "value_range",
    "hull_ranges",
    "meet_ranges",
]

Value = Union[tuple[Union[Dim, None], ...], Dim]
"""A known value: the entries of a 1-d tensor (``None`` = unknown entry) or a 0-d tensor's Dim."""

VALUE_DTYPES: frozenset[str] = frozenset({"int32", "int64", "bool"})
"""The dtypes whose tensors may carry a value (a bool entry is the dimension 0 or 1: comparisons
of shape values, as exporters write ``expand(b, -1, -1)``, are decided entrywise)."""

SIZE_DTYPES: frozenset[str] = frozenset({"int32", "int64"})
"""The dtypes of tensors that give sizes (a shape, begin/end bounds, repeats)."""

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
            INVALID_ARGUMENT, f"only int32, int64 and bool tensors carry a value, not dtype {dtype}"
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
    out = tuple(_entry(x, "a value entry") for x in value)
    return out if any(x is not None for x in out) else None


def _entry(x: object, what: str) -> Dim | None:
    """An entry of a value or a bound of a range as a dimension (None stays None)."""
    if x is None:
        return None
    try:
        return x if type(x) is Dim else as_dim(x)
    except SymshapeError:
        raise SymshapeError(INVALID_ARGUMENT, f"{what} must be a dimension, got {x!r}") from None


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


# ----------------------------------------------------------------------------------------------
# value ranges (issue 19)

Range = tuple[Union[Dim, None], Union[Dim, None]]
"""What an int tensor's entries are known to lie in: ``(lo, hi)``, both inclusive, ``None`` for a
side that is not known. Printed after the type (and its value): ``Tensor[(b, t), int64] in [0,
50256]``; an unknown side prints ``?``."""

RANGE_DTYPES: frozenset[str] = frozenset(
    {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}
)
"""The dtypes whose tensors may carry a range."""


def normalize_range(rng: object, dtype: object) -> Range | None:
    """``rng`` (a pair of dimensions or ints, either None) in its one form for a tensor of
    ``dtype``: None when neither side is known; a ``SymshapeError`` (``invalid-argument``) when it
    cannot be a range (not a pair, not dimensions, constant ``lo > hi``, not an integer dtype).

    >>> from symshape.encoding.dims import dim
    >>> t = dim("t")
    >>> range_str(normalize_range((0, t - 1), "int64"))
    '[0, t - 1]'
    """
    if rng is None:
        return None
    if isinstance(dtype, str) and dtype not in RANGE_DTYPES:
        raise SymshapeError(INVALID_ARGUMENT, f"only integer tensors carry a range, not dtype {dtype}")
    if not isinstance(rng, (tuple, list)) or len(rng) != 2:
        raise SymshapeError(INVALID_ARGUMENT, f"a range is a pair (lo, hi), got {rng!r}")
    lo, hi = (_entry(x, "a range's bound") for x in rng)
    if lo is None and hi is None:
        return None
    if lo is not None and hi is not None:
        a, b = lo.constant_value, hi.constant_value
        if a is not None and b is not None and a > b:
            raise SymshapeError(INVALID_ARGUMENT, f"an empty range [{a}, {b}]")
    return (lo, hi)


def range_str(r: Range) -> str:
    """The printed form of a range (what follows ``in`` after a type)."""
    return f"[{_entry_str(r[0])}, {_entry_str(r[1])}]"


def range_dims(r: Range | None) -> Iterator[Dim]:
    """The known bounds of a range."""
    return value_dims(r)


def map_range(r: Range | None, f: Callable[[Dim], Dim]) -> Range | None:
    """``f`` applied to the known bounds (the same object when nothing changed)."""
    if r is None:
        return None
    lo = None if r[0] is None else f(r[0])
    hi = None if r[1] is None else f(r[1])
    if lo is r[0] and hi is r[1]:
        return r
    return (lo, hi)


def value_range(v: Value | None) -> Range | None:
    """The hull of a value's entries (None when some entry is unknown)."""
    if v is None:
        return None
    if isinstance(v, Dim):
        return (v, v)
    if not v or any(d is None for d in v):
        return None
    es = [d for d in v if d is not None]
    return (dmin(*es) if len(es) > 1 else es[0], dmax(*es) if len(es) > 1 else es[0])


def hull_ranges(rs: Iterable[Range | None]) -> Range | None:
    """The smallest range containing all of ``rs`` (a side unknown in one is unknown)."""
    los: list[Dim] = []
    his: list[Dim] = []
    lo_known = hi_known = True
    count = 0
    for r in rs:
        count += 1
        if r is None:
            return None
        if r[0] is None:
            lo_known = False
        else:
            los.append(r[0])
        if r[1] is None:
            hi_known = False
        else:
            his.append(r[1])
    if count == 0:
        return None
    lo = (dmin(*los) if len(los) > 1 else los[0]) if lo_known and los else None
    hi = (dmax(*his) if len(his) > 1 else his[0]) if hi_known and his else None
    return None if lo is None and hi is None else (lo, hi)


def meet_ranges(a: Range | None, b: Range | None) -> Range | None:
    """The intersection of two ranges of one tensor (what both facts say)."""
    if a is None:
        return b
    if b is None:
        return a

    def pick(x: Dim | None, y: Dim | None, f: Callable[..., Dim]) -> Dim | None:
        if x is None:
            return y
        if y is None or x == y:
            return x
        return f(x, y)

    return (pick(a[0], b[0], dmax), pick(a[1], b[1], dmin))
