"""Holes and unknown dimensions inside the solver: ``?`` made fresh on entry, the conditions that
keep dimensions nonnegative, and poison (the values written by a relation that reported an error).

A relation that reports an error *poisons* what it writes — the holes of its outputs (those that
are not also its inputs) and the unknown dimensions new there — and a relation that reads a
poisoned value is skipped and poisons its own outputs in turn: the one root error is reported, not
its cascade (see :mod:`symshape.solver.solve`).

>>> import symshape as ss
>>> str(freshen_any(ss.parse_type("Tensor[(?, 3), float32]"))).startswith("Tensor[(?")
True
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Sequence

from symshape.encoding.conds import BoolConst, Cond, ge
from symshape.encoding.dims import AnyDim, Dim, DimVar, Sym, bounds, fresh_any
from symshape.encoding.leaf_types import tensor_settled
from symshape.encoding.types import (
    FuncType,
    IncompleteType,
    TensorType,
    TupleType,
    Type,
    check_type,
    iter_dims,
    iter_types,
    map_dims,
    plain_copy,
    type_children,
)
from symshape.solver.bindings import COMPOSITE
from symshape.solver.diagnostics import Origin
from symshape.solver.instance import RelationInstance, RelationState
from symshape.solver.unify import Unifier

__all__ = [
    "types_deep",
    "holes_deep",
    "unknowns",
    "freshen_any",
    "admission_scan",
    "admission_form",
    "nonneg_conditions",
    "add_readers",
    "record_annotation",
    "Poison",
]


def add_readers(readers: dict[object, set[int]], rid: int, args: Iterable[Type]) -> None:
    """Relation ``rid`` reads every hole and unknown dimension in ``args`` (its trigger lists)."""
    for t in args:
        if isinstance(t, IncompleteType):
            readers.setdefault(t, set()).add(rid)
            continue
        if isinstance(t, TensorType):
            if isinstance(t.shape, tuple):
                for d in t.shape:
                    if d.has_unknowns:
                        for v in d.unknowns:
                            readers.setdefault(v, set()).add(rid)
            continue
        for x in iter_types(t):
            if isinstance(x, IncompleteType):
                readers.setdefault(x, set()).add(rid)
        for d in iter_dims(t):
            if d.has_unknowns:
                for v in d.unknowns:
                    readers.setdefault(v, set()).add(rid)


def types_deep(u: Unifier, t: Type) -> Iterator[Type]:
    """Every node of ``t`` (pre-order, as :func:`~symshape.encoding.types.iter_types` gives them)
    and, through each hole's resolved type, every node of that (each hole class followed once)."""
    stack = [t]
    followed: set[IncompleteType] = set()
    while stack:
        for x in iter_types(stack.pop()):
            yield x
            if type(x) is IncompleteType:
                r = u.find(x)
                if r not in followed:
                    followed.add(r)
                    rt = u.resolved.get(r)
                    if rt is not None:
                        stack.append(rt)


def holes_deep(u: Unifier, t: Type) -> Iterator[IncompleteType]:
    """The holes of ``t`` and, through each hole's resolved type, the holes inside that."""
    if type(t) is TensorType:
        return
    seen: set[int] = set()
    for x in types_deep(u, t):
        if type(x) is IncompleteType and x.id not in seen:
            seen.add(x.id)
            yield x


def unknowns(t: Type) -> set[DimVar]:
    """The unknown dimensions of a resolved type."""
    out: set[DimVar] = set()
    for d in iter_dims(t):
        if d.has_unknowns:
            out.update(d.unknowns)
    return out


_LEAVES = frozenset((Sym, AnyDim, DimVar))  # atoms that are >= 0
_NAMED = frozenset((Sym, DimVar))  # leaf atoms that are not ``?``


def _anon_in(d: Dim) -> bool:
    for m, _ in d.terms:
        for a, _ in m:
            ta = type(a)
            if ta is AnyDim:
                if a.id == 0:  # type: ignore[union-attr]
                    return True
            elif ta is not Sym and ta is not DimVar:  # a composite atom: look inside
                return any(type(x) is AnyDim and x.id == 0 for x in d.atoms())
    return False


def shape_dims(t: Type) -> tuple[bool, list[Dim]]:
    """The dimensions of the shapes in ``t`` (what :func:`~symshape.encoding.types.iter_dims`
    gives, in its order), and whether a ``?`` (``AnyDim(0)``) may occur in ``t`` (a shape value:
    assumed so)."""
    dims: list[Dim] = []
    anon = False
    for x in (t,) if type(t) is TensorType else iter_types(t):  # (a tensor: no generator)
        if type(x) is not TensorType:
            continue
        if x.value is not None:
            anon = True
        shape = x.shape
        if type(shape) is tuple:
            dims.extend(shape)
            if not anon:
                for d in shape:
                    terms = d.terms
                    if len(terms) == 1:  # a constant or a multiple of one leaf: seen here
                        m = terms[0][0]
                        if not m or (len(m) == 1 and type(m[0][0]) in _NAMED):
                            continue
                    if _anon_in(d):
                        anon = True
                        break
    return anon, dims


def record_annotation(
    sources: dict[int, tuple[Type, Origin]], admitted: dict[int, Type], t: Type, origin: Origin
) -> Type:
    """The last step of admitting ``t`` as the type of annotation ``origin``: ``t`` is recorded
    as its source and as admitted, and returned — or a copy of it when the same object annotates
    another place already (each place its own occurrence; a tensor type copied without re-running
    its checks: shared parameter annotations)."""
    hit = sources.get(id(t))
    if hit is not None and hit[1] is not origin:
        t = plain_copy(t) if type(t) is TensorType else copy.copy(t)
    sources[id(t)] = (t, origin)
    admitted[id(t)] = t
    return t


def admission_scan(t: Type) -> list[Dim] | None:
    """What admitting ``t`` must look at, in one walk: ``None`` when a ``?`` (``AnyDim(0)``) may
    occur in ``t`` (as for :func:`shape_dims`: then it is numbered first), else the dimensions of
    its shapes, in :func:`~symshape.encoding.types.iter_dims` order, that
    :func:`nonneg_conditions` does not settle at a glance (usually none: constants and positive
    multiples of a symbol or unknown are nonnegative). A part of ``t`` flagged settled when it was
    built (:func:`~symshape.encoding.composite_types.type_settled`) is not walked.

    >>> import symshape as ss
    >>> t = ss.parse_type("(Tensor[(n, 3), int8], fn(Tensor[(2 * n,), int8]) -> Tensor[(n - 1,), int8])")
    >>> [str(d) for d in admission_scan(t)]
    ['n - 1']
    >>> admission_scan(ss.parse_type("Tensor[(?, 3), float32]")) is None
    True
    """
    out: list[Dim] = []
    if t.__class__ in COMPOSITE and t._settled:
        return out  # (the common case: flagged when built)
    stack: list[Type] = [t]
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        x = pop()
        cls = x.__class__
        if cls is TensorType:
            if not tensor_settled(x) and _tensor_todo(x, out):  # type: ignore[arg-type]
                return None
        elif cls in COMPOSITE:
            if x._settled:  # type: ignore[union-attr]
                continue  # flagged when built: nothing to admit inside
            if cls is TupleType:
                extend(reversed(x.fields))  # type: ignore[union-attr]
            elif cls is FuncType and not x.relations:  # type: ignore[union-attr]
                push(x.ret)  # type: ignore[union-attr]
                extend(reversed(x.params))  # type: ignore[union-attr]
            else:
                extend(reversed(type_children(x)))
    return out


def _tensor_todo(x: TensorType, out: list[Dim]) -> bool:
    """Append to ``out`` the dimensions of tensor ``x`` that :func:`nonneg_conditions` does not
    settle at a glance; true (and ``out`` incomplete) when a ``?`` may occur in ``x``."""
    if x.value is not None:
        return True  # a shape value: assumed to hold a ``?``
    shape = x.shape
    if type(shape) is not tuple:
        return False
    for d in shape:
        terms = d.terms
        if len(terms) == 1:
            m, k = terms[0]
            if not m:
                continue  # a constant
            if len(m) == 1:
                a = m[0][0]
                ta = type(a)
                if ta is Sym or ta is DimVar:
                    if k <= 0:
                        out.append(d)
                    continue
                if ta is AnyDim:
                    if a.id == 0:  # type: ignore[union-attr]
                        return True
                    if k <= 0 or a.alts:  # type: ignore[union-attr]
                        out.append(d)
                    continue
        elif not terms:
            continue  # zero
        if _anon_in(d):
            return True
        out.append(d)
    return False


def _mentions_anon(t: Type) -> bool:
    return shape_dims(t)[0]


def admission_form(t: Type, checked: set[Dim]) -> tuple[Type, Iterable[tuple[Cond, str]]]:
    """``t`` as a solver admits it (checked, its ``?`` numbered when one may occur) and the
    conditions its dimensions need (:func:`nonneg_conditions`, read lazily: ``checked`` grows as
    they are read)."""
    check_type(t)
    todo = admission_scan(t)  # the dimensions to check, or None: a ``?`` may occur
    if todo is None:
        t = freshen_any(t)
        return t, nonneg_conditions(t, checked)
    return t, nonneg_conditions(t, checked, todo) if todo else ()


def freshen_any(t: Type) -> Type:
    """``t`` with each ``?`` dimension (``AnyDim(0)``) replaced by a fresh numbered one."""
    if isinstance(t, IncompleteType):
        return t
    if isinstance(t, TensorType) and isinstance(t.shape, tuple):
        if all(len(d.terms) <= 1 and (not d.terms or not d.terms[0][0] or d.is_symbol) for d in t.shape):
            return t

    if not _mentions_anon(t):
        return t  # nothing to number: no rebuild (the admission of a type scans it once)

    def fix(d: Dim) -> Dim:
        if d.is_constant:
            return d
        anys = [a for a in d.atoms() if isinstance(a, AnyDim) and a.id == 0]
        if not anys:
            return d
        out = d
        for _ in anys:
            out = out.subs({AnyDim(0): fresh_any()})
        return out

    return map_dims(t, fix)


def nonneg_conditions(
    t: Type, checked: set[Dim], dims_of_t: Iterable[Dim] | None = None
) -> Iterator[tuple[Cond, str]]:
    """``(d >= 0, message)`` for each dimension ``d`` of ``t`` not in ``checked`` (which grows)
    whose bounds do not show it nonnegative (``dims_of_t``: the shape dimensions of ``t`` when
    the caller has them)."""
    if dims_of_t is not None:
        dims: Iterable[Dim] = dims_of_t
    elif isinstance(t, TensorType):
        dims = t.shape if isinstance(t.shape, tuple) else ()
    elif isinstance(t, IncompleteType):
        return
    else:
        dims = iter_dims(t)
    for d in dims:
        terms = d.terms
        if not terms:
            continue
        if len(terms) == 1:
            m, k = terms[0]
            if not m:
                continue  # a constant (checked when it was built)
            if k > 0 and len(m) == 1:
                a = m[0][0]
                if type(a) in _LEAVES and not (type(a) is AnyDim and a.alts):
                    continue  # a positive multiple of a power of a symbol, ``?`` or unknown: >= 0
        if d in checked:
            continue
        checked.add(d)
        if bounds(d)[0] >= 0:
            continue
        c = ge(d, 0)
        what = "is negative" if isinstance(c, BoolConst) else "may be negative"
        yield c, f"dimension `{d}` {what}"


class Poison:
    """The poisoned values: hole-class roots and unknown dimensions (true when a hole is)."""

    __slots__ = ("holes", "dims")

    def __init__(self) -> None:
        self.holes: set[IncompleteType] = set()
        self.dims: set[DimVar] = set()

    def __bool__(self) -> bool:
        return bool(self.holes)

    def outputs_of(self, u: Unifier, rel: RelationInstance, inputs: Sequence[Type]) -> None:
        """Poison what ``rel`` writes: its output holes (but those that are also its inputs: an
        output that *is* an input keeps the input's valid type) and unknown dimensions new in
        its outputs."""
        ni = rel.num_inputs
        in_roots: set[IncompleteType] = set()
        in_dims: set[DimVar] = set()
        for t in rel.args[:ni]:
            for h in holes_deep(u, t):
                in_roots.add(u.find(h))
        for t in inputs[:ni]:
            in_dims.update(unknowns(u.resolve(t)))
        for t in rel.args[ni:]:
            for h in holes_deep(u, t):
                r = u.find(h)
                if r not in in_roots:
                    self.holes.add(r)
            self.dims.update(unknowns(u.resolve(t)) - in_dims)

    def read_by(self, u: Unifier, rel: RelationInstance) -> bool:
        """Whether an argument of ``rel`` mentions a poisoned hole or unknown dimension."""
        holes, dims = self.holes, self.dims
        for t in rel.args:
            for h in holes_deep(u, t):
                if u.find(h) in holes:
                    return True
            if dims and not unknowns(u.resolve(t)).isdisjoint(dims):
                return True
        return False

    def skip(self, u: Unifier, rel: RelationInstance) -> None:
        """``rel`` reads a poisoned value: it is not run, and what it writes is poisoned."""
        rel.state = RelationState.POISONED
        ins: set[IncompleteType] = set()
        for t in rel.args[: rel.num_inputs]:
            ins.update(u.find(h) for h in holes_deep(u, t))
        for t in rel.args[rel.num_inputs :]:
            for h in holes_deep(u, t):
                r = u.find(h)
                if r not in ins:
                    self.holes.add(r)
