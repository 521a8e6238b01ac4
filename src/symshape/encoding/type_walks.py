"""Walks over types built on :func:`~symshape.encoding.composite_types.type_children`: the kind of a
type, the dimensions and holes it holds, and substitution of type variables."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from symshape.encoding.composite_types import (
    _COMPOSITE,
    FuncType,
    Type,
    iter_types,
    type_children,
    type_rebuild,
)
from symshape.encoding.dims import Dim
from symshape.encoding.leaf_types import (
    GlobalTypeVar,
    IncompleteType,
    TensorType,
    TypeVar,
)
from symshape.encoding.values import (
    range_dims,
    value_dims,
)

__all__ = [
    "iter_dims",
    "iter_holes",
    "iter_value_dims",
    "subst_typevars",
    "type_kind",
]


def type_kind(t: Type) -> str:
    """The kind of a type: ``type`` for value types, the declared kind for variables and holes."""
    match t:
        case TypeVar(kind=k) | IncompleteType(kind=k):
            return k
        case GlobalTypeVar():
            return "adt"
        case _:
            return "type"


def iter_dims(t: Type) -> Iterator[Dim]:
    for x in iter_types(t):
        if isinstance(x, TensorType) and isinstance(x.shape, tuple):
            yield from x.shape


def iter_value_dims(t: Type) -> Iterator[Dim]:
    """The known entries of the values, and the known bounds of the ranges, of the tensors in
    ``t`` (:func:`iter_dims` gives the dimensions of their shapes)."""
    for x in iter_types(t):
        if isinstance(x, TensorType):
            if x.value is not None:
                yield from value_dims(x.value)
            if x.range is not None:
                yield from range_dims(x.range)


def iter_holes(t: Type) -> Iterator[IncompleteType]:
    for x in iter_types(t):
        if isinstance(x, IncompleteType):
            yield x


def subst_typevars(t: Type, mapping: Mapping[TypeVar, Type]) -> Type:
    """Replace type variables (of kind type) by types; shape- and dtype-kind variables inside
    tensors are replaced when the mapping holds a tensor (its shape or dtype is taken). A function
    type's own type parameters shadow the mapping inside it. Iterative."""
    if not mapping:
        return t

    def leaf(x: Type, env: Mapping[TypeVar, Type]) -> Type:
        if isinstance(x, TypeVar):
            return env.get(x, x)
        if isinstance(x, TensorType):
            shape, dtype = x.shape, x.dtype
            if isinstance(shape, TypeVar) and shape in env:
                rep = env[shape]
                shape = rep.shape if isinstance(rep, TensorType) else shape
            if isinstance(dtype, TypeVar) and dtype in env:
                rep = env[dtype]
                dtype = rep.dtype if isinstance(rep, TensorType) else dtype
            if shape is x.shape and dtype is x.dtype:
                return x
            return TensorType(shape, dtype)
        return x

    if t.__class__ not in _COMPOSITE:
        return leaf(t, mapping)
    # environments by id: a function type's own type parameters shadow the mapping inside it
    envs: dict[int, Mapping[TypeVar, Type]] = {id(mapping): mapping}
    inner_of: dict[tuple[int, int], Mapping[TypeVar, Type]] = {}

    def inner_env(x: Type, env: Mapping[TypeVar, Type]) -> Mapping[TypeVar, Type]:
        if not (isinstance(x, FuncType) and x.type_params):
            return env
        hit = inner_of.get((id(x), id(env)))
        if hit is None:
            hit = {k: v for k, v in env.items() if k not in x.type_params}
            if len(hit) == len(env):
                hit = env
            envs[id(hit)] = hit
            inner_of[(id(x), id(env))] = hit
        return hit

    done: dict[tuple[int, int], Type] = {}
    stack: list[tuple[Type, Mapping[TypeVar, Type], bool]] = [(t, mapping, False)]
    while stack:
        x, env, post = stack.pop()
        key = (id(x), id(env))
        if post:
            kids = type_children(x)
            ienv = id(inner_env(x, env))
            new = [done[(id(k), ienv)] for k in kids]
            done[key] = x if all(a is b for a, b in zip(new, kids)) else type_rebuild(x, new)
            continue
        if key in done:
            continue
        if x.__class__ not in _COMPOSITE:
            done[key] = leaf(x, env)
            continue
        inner = inner_env(x, env)
        if not inner:
            done[key] = x
            continue
        stack.append((x, env, True))
        stack.extend((k, inner, False) for k in type_children(x))
    return done[(id(t), id(mapping))]
