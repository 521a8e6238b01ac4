"""Walks over types built on :func:`~symshape.encoding.composite_types.type_children`: every node,
the kind of a type, the dimensions and holes it holds, and substitution of type variables; and
the unchecked constructors the solver rebuilds types with."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from symshape.encoding.composite_types import (
    _COMPOSITE,
    FuncType,
    TupleType,
    Type,
    TypeRelation,
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
    "func_of_checked",
    "iter_types",
    "tuple_of_checked",
    "iter_dims",
    "iter_holes",
    "iter_value_dims",
    "subst_typevars",
    "type_kind",
]


def tuple_of_checked(fields: tuple[Type, ...]) -> TupleType:
    """``TupleType(fields)`` for a tuple of values already known to be types (the solver
    rebuilding a type from unified parts): the same object, without re-validating the fields."""
    t: TupleType = object.__new__(TupleType)
    t.__dict__["fields"] = fields  # (an item store: cheaper than object.__setattr__)
    return t


def func_of_checked(
    params: tuple[Type, ...],
    ret: Type,
    type_params: tuple[TypeVar, ...],
    relations: tuple[TypeRelation, ...],
    pure: bool,
) -> FuncType:
    """``FuncType(...)`` from parts already known to be valid (tuples of types, type variables and
    relations; a bool), without re-validating them (see :func:`tuple_of_checked`)."""
    t: FuncType = object.__new__(FuncType)
    d = t.__dict__  # (item stores: cheaper than ``update`` with keywords)
    d["params"] = params
    d["ret"] = ret
    d["type_params"] = type_params
    d["relations"] = relations
    d["pure"] = pure
    return t


def iter_types(t: Type) -> Iterator[Type]:
    """Every node of ``t``, pre-order (iterative)."""
    stack: list[Type] = [t]
    while stack:
        x = stack.pop()
        yield x
        if x.__class__ in _COMPOSITE:
            stack.extend(reversed(type_children(x)))


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
