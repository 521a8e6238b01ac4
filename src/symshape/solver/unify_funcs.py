"""Function types in unification: which side is instantiated (the one with more type parameters;
the right one on a tie) and how, and the unified function type built from the unified parts.

Instantiation renames the general side's type parameters: a type-kind parameter becomes a fresh
hole, a dim-kind one a fresh unknown dimension, a shape- or dtype-kind one a fresh *flexible* type
variable (recorded in the unifier's ``flex``, bound to whatever shape or dtype it meets).
"""

from __future__ import annotations

from collections.abc import Callable
from operator import is_

from symshape.encoding.dims import Dim, fresh_dimvar
from symshape.encoding.types import (
    FuncType,
    IncompleteType,
    TensorType,
    Type,
    TypeRelation,
    TypeVar,
    func_of_checked,
    map_dims,
    subst_typevars,
)
from symshape.errors import ARITY_MISMATCH
from symshape.solver.unify_tensors import Mismatch

__all__ = ["func_result", "func_sides", "instantiate", "param_where", "renames"]

_PARAM = tuple(f"parameter {i}" for i in range(16))  # the ``where`` of parameter pairs, made once


def func_sides(
    a: FuncType,
    b: FuncType,
    flex: dict[TypeVar, tuple[Dim, ...] | TypeVar | str | None],
    fresh_hole: Callable[[str], IncompleteType],
) -> tuple[FuncType, FuncType, FuncType, FuncType]:
    """``(left, right, rigid, gen)`` for unifying function types ``a`` and ``b``: the more
    general side (right on a tie) instantiated with fresh holes as ``gen``, the other kept
    ``rigid``; ``left``/``right`` are the two in the caller's order.

    When the general side is the rigid one with its type parameters renamed (see
    :func:`renames`), its instantiation would only bind the fresh holes to the rigid side's own
    parts: ``gen`` is then the rigid side itself (no holes are made; the unified parts and the
    result are the same objects)."""
    pa, pb = a.params, b.params
    if len(pa) != len(pb):
        raise Mismatch(ARITY_MISMATCH, f"functions of {len(pa)} and {len(pb)} parameters")
    # instantiate the more general side (right on a tie); the other side's parameters stay rigid
    ta, tb = a.type_params, b.type_params
    if len(ta) > len(tb):
        if renames(b, a):
            return b, b, b, b
        gen = instantiate(a, flex, fresh_hole)
        return gen, b, b, gen
    if tb:
        if renames(a, b):
            return a, a, a, a
        gen = instantiate(b, flex, fresh_hole)
        return a, gen, a, gen
    return a, b, a, b


def renames(rigid: FuncType, gen: FuncType) -> bool:
    """Whether instantiating ``gen`` and unifying it with ``rigid`` only binds each fresh hole to
    the part of ``rigid`` at its places: ``gen``'s type parameters are all of kind ``type``,
    neither side has relations, and position by position (parameters, then the return type)
    ``gen`` has one of its type parameters where ``rigid`` has a tensor type or a type variable of
    kind ``type`` (each parameter meeting one object of ``rigid`` wherever it occurs), or the very
    object ``rigid`` has, a tensor type without shape or dtype variables. Anything else (nested
    types, holes, other kinds) is left to instantiation: False."""
    tps = gen.type_params
    if rigid.relations or gen.relations:
        return False
    for tp in tps:
        if tp.kind != "type":
            return False
    bound: list[Type | None] = [None] * len(tps)  # what each type parameter meets
    for x, y in zip((*rigid.params, rigid.ret), (*gen.params, gen.ret)):
        cy = type(y)
        if cy is TypeVar:
            if y not in tps:  # (as instantiation substitutes: by equality)
                return False
            i = tps.index(y)
            cx = type(x)
            if cx is not TensorType and (cx is not TypeVar or x.kind != "type"):  # type: ignore[union-attr]
                return False
            got = bound[i]
            if got is None:
                bound[i] = x
            elif got is not x:
                return False
        elif x is not y or cy is not TensorType:
            return False
        elif type(y.shape) is TypeVar or type(y.dtype) is TypeVar:  # type: ignore[union-attr]
            return False
    return True


def instantiate(
    f: FuncType,
    flex: dict[TypeVar, tuple[Dim, ...] | TypeVar | str | None],
    fresh_hole: Callable[[str], IncompleteType],
) -> FuncType:
    """``f`` without type parameters: each replaced by a fresh hole (kind type), a fresh unknown
    dimension (kind dim) or a fresh flexible shape or dtype variable (recorded in ``flex``)."""
    tps = f.type_params
    if len(tps) == 1 and tps[0].kind == "type" and not f.relations:  # (the common case)
        tp = tps[0]
        h = fresh_hole("type")
        ps: list[Type] = []  # (a loop, not a comprehension: no closure over ``h`` and ``tp``)
        for p in f.params:
            ps.append(h if p is tp else _subst_one(p, tp, h))
        params = tuple(ps)
        ret = f.ret
        return func_of_checked(params, h if ret is tp else _subst_one(ret, tp, h), (), f.relations, f.pure)
    return _instantiate_all(f, flex, fresh_hole)


def _instantiate_all(
    f: FuncType,
    flex: dict[TypeVar, tuple[Dim, ...] | TypeVar | str | None],
    fresh_hole: Callable[[str], IncompleteType],
) -> FuncType:
    """:func:`instantiate` for any type parameters and relations (its closures live here, so
    that the common case makes none)."""
    # each type parameter's replacement, in order; ``sub`` maps them for subst_typevars, made
    # only when needed (the one parameter is found by identity first: no hashing)
    pairs: list[tuple[TypeVar, Type]] = []
    sub: dict[TypeVar, Type] = {}
    dsub: dict[object, Dim] = {}
    for tp in f.type_params:
        kind = tp.kind
        if kind == "type":  # (the common case first; each parameter takes one branch, in order)
            pairs.append((tp, fresh_hole("type")))
        elif kind == "shape":
            v = TypeVar(f"{tp.name}'{len(flex) + 1}", "shape")
            flex[v] = None
            pairs.append((tp, TensorType(v, None)))  # subst_typevars takes the tensor's shape
        elif kind == "dtype":
            v = TypeVar(f"{tp.name}'{len(flex) + 1}", "dtype")
            flex[v] = None
            pairs.append((tp, TensorType(None, v)))  # ... and its dtype
        elif kind == "dim":
            dsub[tp.name] = fresh_dimvar()  # the symbol of that name becomes an unknown
        else:
            pairs.append((tp, fresh_hole("type")))

    def inst(t: Type) -> Type:
        if not dsub:
            ct = type(t)
            if ct is TypeVar:  # what subst_typevars gives for a lone variable
                if len(pairs) == 1 and pairs[0][0] is t:
                    return pairs[0][1]
            elif ct is TensorType and type(t.shape) is not TypeVar and type(t.dtype) is not TypeVar:  # type: ignore[union-attr]
                return t  # no variable inside
        if len(sub) != len(pairs):
            sub.update(pairs)
        if type(t) is TypeVar:
            return sub.get(t, t)
        t = subst_typevars(t, sub)
        return map_dims(t, lambda d: d.subs(dsub)) if dsub else t  # type: ignore[arg-type]

    rels = f.relations
    if rels:
        rels = tuple(TypeRelation(r.name, tuple(map(inst, r.args)), r.attrs) for r in rels)
    return func_of_checked(tuple(map(inst, f.params)), inst(f.ret), (), rels, f.pure)


def _subst_one(t: Type, tp: TypeVar, h: Type) -> Type:
    """``t`` with type variable ``tp`` replaced by ``h`` (what :func:`instantiate`'s general path
    gives for one type-kind parameter)."""
    ct = type(t)
    if ct is TypeVar:
        return h if t == tp else t
    if ct is TensorType and type(t.shape) is not TypeVar and type(t.dtype) is not TypeVar:  # type: ignore[union-attr]
        return t  # no variable inside
    return subst_typevars(t, {tp: h})


def func_result(
    a: FuncType, b: FuncType, rigid: FuncType, gen: FuncType, params: list[Type], ret: Type
) -> FuncType:
    """The unification of function types ``a`` and ``b`` from their unified parameters and return
    type: the rigid side's type parameters, its relations (else the instantiated side's)."""
    rels = rigid.relations if rigid.relations else gen.relations
    if (
        rigid is a
        and ret is a.ret
        and rels is a.relations
        and b.pure >= a.pure
        and all(map(is_, params, a.params))
    ):
        return a  # nothing changed: the rigid side itself (as for an unchanged tuple)
    return func_of_checked(tuple(params), ret, rigid.type_params, rels, a.pure and b.pure)


def param_where(i: int) -> str:
    return _PARAM[i] if i < len(_PARAM) else f"parameter {i}"
