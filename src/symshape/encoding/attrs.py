"""Attributes of operator calls and type relations: an immutable, hashable mapping."""

from __future__ import annotations

from collections.abc import ItemsView, Iterable, Iterator, Mapping, ValuesView

from symshape.encoding.dims import Dim
from symshape.errors import (
    BAD_ATTRIBUTE,
    SymshapeError,
)

__all__ = [
    "Attrs",
]


class Attrs(Mapping[str, object]):
    """An immutable, hashable attribute mapping (lists become tuples)."""

    __slots__ = ("_items", "_hash")

    def __init__(self, items: Mapping[str, object] | Iterable[tuple[str, object]] | None = None):
        if isinstance(items, Attrs):  # already frozen, sorted and hashed
            self._items: tuple[tuple[str, object], ...] = items._items
            self._hash: int = items._hash
            return
        try:
            pairs = dict(items or {})
        except (TypeError, ValueError):
            raise SymshapeError(
                BAD_ATTRIBUTE, f"attributes are a mapping or (name, value) pairs, got {items!r}"
            ) from None
        for k in pairs:
            if not isinstance(k, str):
                raise SymshapeError(BAD_ATTRIBUTE, f"attribute names must be strings, got {k!r}")
        frozen = tuple([(k, _freeze(pairs[k])) for k in sorted(pairs)])
        self._items = frozen
        try:
            self._hash = hash(frozen)
        except TypeError:
            raise SymshapeError(BAD_ATTRIBUTE, f"attribute values must be hashable: {pairs!r}") from None

    def __getitem__(self, key: str) -> object:
        for k, v in self._items:
            if k == key:
                return v
        raise KeyError(key)

    def get(self, key: str, default: object = None) -> object:
        for k, v in self._items:
            if k == key:
                return v
        return default

    def __iter__(self) -> Iterator[str]:
        return (k for k, _ in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def items(self) -> ItemsView[str, object]:
        """The ``(name, value)`` pairs, in name order (iterated as stored, not looked up again)."""
        return _Items(self)

    def values(self) -> ValuesView[object]:
        return _Values(self)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Attrs):
            return self._items == other._items
        if isinstance(other, Mapping):
            return dict(self._items) == dict(other)
        return False

    def __repr__(self) -> str:
        return f"Attrs({dict(self._items)!r})"

    def __str__(self) -> str:
        return ", ".join(f"{k}={_attr_str(v)}" for k, v in self._items)


class _Items(ItemsView[str, object]):
    __slots__ = ()
    _mapping: Attrs

    def __iter__(self) -> Iterator[tuple[str, object]]:
        return iter(self._mapping._items)


class _Values(ValuesView[object]):
    __slots__ = ()
    _mapping: Attrs

    def __iter__(self) -> Iterator[object]:
        return (v for _, v in self._mapping._items)


_ATOMIC = frozenset({int, float, str, bool, type(None)})


def _freeze(v: object) -> object:
    if type(v) in _ATOMIC:
        return v
    if isinstance(v, (list, tuple)):
        return tuple(_freeze(x) for x in v)
    if isinstance(v, dict):
        return Attrs(v)
    return v


def _attr_str(v: object) -> str:
    if isinstance(v, tuple):
        inner = ", ".join(_attr_str(x) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    if isinstance(v, Dim):
        return str(v)
    return repr(v)
