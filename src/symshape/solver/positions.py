"""The pieces the explainer builds its Z3 problem from: the terms of a type *position*
(:class:`Node`), one piece of a member's contribution (:class:`Part`), and small helpers on the
structure of types (:func:`same_structure`, :func:`attr_of`).

A *position* is a hole or an annotated type occurrence; its node holds Z3 integer terms for its
form (tensor, tuple, function, ...), size (which makes the occurs check arithmetic), rank, dtype,
head (an ADT), arity, dimensions and the nodes of its parts (tuple fields, function parameters).

>>> import symshape as ss
>>> same_structure(ss.Tensor((2, 3)), ss.IncompleteType()), attr_of(ss.Tensor((2, 3)), (), "rank")
(True, 2)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from symshape.encoding import types as ty
from symshape.encoding.dims import Dim
from symshape.encoding.types import FuncType, IncompleteType, TensorType, TupleType, Type, TypeCall

__all__ = [
    "FORMS",
    "VALUE_AT",
    "Unsupported",
    "Node",
    "Part",
    "type_at",
    "blank",
    "same_structure",
    "attr_of",
    "value_list",
    "dim_obj",
    "dim_at",
]

FORMS: dict[type, int] = {
    ty.TensorType: 1,
    ty.TupleType: 2,
    ty.FuncType: 3,
    ty.TypeCall: 4,
    ty.TypeVar: 5,
    ty.GlobalTypeVar: 6,
    ty.ObjectType: 7,
    ty.ShapeType: 8,
}
"""The form code of each kind of type (0 for any other)."""


class Unsupported(Exception):
    """A type the explainer cannot describe (the explanation is then not found)."""


@dataclass
class Node:
    """The Z3 terms of one type position."""

    form: Any
    size: Any
    rank: Any
    dtype: Any
    head: Any
    arity: Any
    dims: list[Any] = field(default_factory=list)
    kids: list[Node] = field(default_factory=list)
    vals: list[Any] = field(default_factory=list)  # the entries of a tensor's value (shape values)


@dataclass
class Part:
    """One piece of a member's contribution: an output dimension, an output's structure, a
    condition, a failure, or (for annotations and unifications) everything."""

    kind: str  # "dim" | "struct" | "cond" | "fail" | "all"
    text: str
    formula: Any
    loc: tuple[int, ...] = ()
    held: bool = False  # a condition that held at the real values (it links, it explains nothing)
    forward: bool = False  # an output attribute that follows an input's: background, a link


def type_at(t: Type, path: tuple[int, ...]) -> Type:
    """The part of ``t`` at ``path`` (tuple field indices), or what the path reaches."""
    for i in path:
        if not isinstance(t, TupleType) or i >= len(t.fields):
            return t
        t = t.fields[i]
    return t


def blank(t: Type) -> Type:
    """A fresh hole standing for ``t`` (of its kind, when it is a hole)."""
    return IncompleteType(t.kind) if isinstance(t, IncompleteType) else IncompleteType()


def same_structure(a: Type, b: Type) -> bool:
    """Whether ``a`` has the structure (forms, ranks, dtypes, arities) of ``b``, which may
    leave parts open (holes)."""
    if isinstance(b, IncompleteType):
        return True
    if isinstance(a, IncompleteType):
        return False
    if type(a) is not type(b):
        return False
    if isinstance(a, TensorType) and isinstance(b, TensorType):
        ra = len(a.shape) if isinstance(a.shape, tuple) else None
        rb = len(b.shape) if isinstance(b.shape, tuple) else None
        return ra == rb and a.dtype == b.dtype
    if isinstance(a, TupleType) and isinstance(b, TupleType):
        return len(a.fields) == len(b.fields) and all(
            same_structure(x, y) for x, y in zip(a.fields, b.fields)
        )
    return True


def attr_of(t: Type, path: tuple[int, ...], kind: str) -> object:
    """The rank, dtype or form of the type at ``path`` (field indices) in ``t``."""
    for i in path:
        if not isinstance(t, TupleType) or i >= len(t.fields):
            return None
        t = t.fields[i]
    match kind:
        case "rank":
            return len(t.shape) if isinstance(t, TensorType) and isinstance(t.shape, tuple) else None
        case "dtype":
            return t.dtype if isinstance(t, TensorType) else None
        case "arity":
            return len(t.fields) if isinstance(t, TupleType) else None
        case _:
            return type(t).__name__


VALUE_AT = 1 << 20
"""Positions of a tensor's value entries follow its dimensions' at this offset."""


def value_list(v: Any) -> list[Dim | None]:
    return [v] if isinstance(v, Dim) else list(v)


def dim_obj(t: Type, loc: Sequence[int]) -> Dim | None:
    """The dimension at ``loc`` (tuple field indices, then the dimension index) of ``t``."""
    cur = t
    for k, i in enumerate(loc):
        if k == len(loc) - 1 and isinstance(cur, TensorType) and i >= VALUE_AT:
            vs = value_list(cur.value) if cur.value is not None else []
            return vs[i - VALUE_AT] if i - VALUE_AT < len(vs) else None
        if k == len(loc) - 1 and isinstance(cur, TensorType) and isinstance(cur.shape, tuple):
            return cur.shape[i] if i < len(cur.shape) else None
        if not isinstance(cur, TupleType) or i >= len(cur.fields):
            return None
        cur = cur.fields[i]
    return None


def dim_at(t: Type, loc: Sequence[int]) -> str | None:
    """The dimension at ``loc`` (field indices, then the dimension index) of a resolved type."""
    cur = t
    for k, i in enumerate(loc):
        last = k == len(loc) - 1
        if last and isinstance(cur, TensorType) and i >= VALUE_AT:
            d = dim_obj(cur, (i,))
            return None if d is None else str(d)
        if last and isinstance(cur, TensorType) and isinstance(cur.shape, tuple):
            return str(cur.shape[i]) if i < len(cur.shape) else None
        if isinstance(cur, TupleType) and i < len(cur.fields):
            cur = cur.fields[i]
        elif isinstance(cur, FuncType) and not cur.type_params:
            kids = (*cur.params, cur.ret)
            if i >= len(kids):
                return None
            cur = kids[i]
        elif isinstance(cur, TypeCall) and i < len(cur.args):
            cur = cur.args[i]
        else:
            return None
    return None
