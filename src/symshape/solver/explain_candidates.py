"""Candidate members of an explanation, chosen cheaply (no encoding): each program member keyed by
the holes, type occurrences, weights and symbols it touches, and ordered breadth-first from the
error's primary member, so the search adds the nearest members first.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from symshape.encoding.dims import AnyDim, Dim, DimVar, Sym
from symshape.encoding.types import IncompleteType, TensorType, Type
from symshape.solver.diagnostics import Origin, OriginKind
from symshape.solver.holes import types_deep
from symshape.solver.instance import RelationState

if TYPE_CHECKING:
    from symshape.solver.solve import TypeSolver

__all__ = ["Candidate", "bfs_order", "candidates"]

_HUB = 8  # a key shared by more candidates than this is expanded late


def _shape_keys(shape: tuple[Dim, ...]) -> tuple[tuple[str, Any], ...]:
    out: dict[tuple[str, Any], None] = {}
    for d in shape:
        for a in d.atoms():
            if isinstance(a, (DimVar, AnyDim)):
                out[("dim", a._key)] = None
            elif isinstance(a, Sym):
                out[("sym", a.name)] = None
    return tuple(out)


class _KeyMemo:
    """The link keys of each type object (by id: the solver keeps them alive) and of each shape."""

    def __init__(self) -> None:
        self.types: dict[int, tuple[tuple[str, Any], ...]] = {}
        self.shapes: dict[tuple[Dim, ...], tuple[tuple[str, Any], ...]] = {}


def _type_keys(
    solver: TypeSolver, t: Type, ann: dict[int, Any], out: set[tuple[str, Any]], memo: _KeyMemo | None = None
) -> None:
    """Add the link keys of ``t`` to ``out`` (``memo``: the keys of the types and shapes met so
    far; an output hole is the next operator's input, and shapes repeat along a program)."""
    if memo is None:
        _type_keys_walk(solver, t, ann, out, {})
        return
    hit = memo.types.get(id(t))
    if hit is None:
        hit = _hole_tensor_keys(solver, t, ann, memo)
        if hit is None:
            keys: set[tuple[str, Any]] = set()
            _type_keys_walk(solver, t, ann, keys, memo.shapes)
            hit = tuple(keys)
        memo.types[id(t)] = hit
    out.update(hit)


def _hole_tensor_keys(
    solver: TypeSolver, t: Type, ann: dict[int, Any], memo: _KeyMemo
) -> tuple[tuple[str, Any], ...] | None:
    """The keys of a hole resolved to a tensor type with a known shape (what the walk gives, in
    the common case, without it); None otherwise."""
    if type(t) is not IncompleteType or id(t) in ann:
        return None
    u = solver.unifier
    r = u.find(t)
    rt = u.resolved.get(r)
    if type(rt) is not TensorType or id(rt) in ann:
        return None
    shape = rt.shape
    if type(shape) is not tuple:
        return None
    sk = memo.shapes.get(shape)
    if sk is None:
        sk = memo.shapes[shape] = _shape_keys(shape)
    return (("hole", r.id), *sk)


def _type_keys_walk(
    solver: TypeSolver,
    t: Type,
    ann: dict[int, Any],
    out: set[tuple[str, Any]],
    shapes: dict[tuple[Dim, ...], tuple[tuple[str, Any], ...]],
) -> None:
    u = solver.unifier
    for x in types_deep(u, t):
        if id(x) in ann:
            out.add(("occ", ann[id(x)][1].seq))
        if type(x) is TensorType:
            shape = x.shape
            if isinstance(shape, tuple):
                keys = shapes.get(shape)
                if keys is None:
                    keys = shapes[shape] = _shape_keys(shape)
                out.update(keys)
        elif type(x) is IncompleteType:
            out.add(("hole", u.find(x).id))


@dataclass
class Candidate:
    origin: Origin
    kind: OriginKind  # of the first item: an annotation's origin may also unify
    items: list[tuple[OriginKind, Any, Any]] = field(default_factory=list)  # (kind, what, with what)
    keys: set[tuple[str, Any]] = field(default_factory=set)


def candidates(solver: TypeSolver) -> dict[int, Candidate]:
    ann = {id(t): (t, o) for t, o in solver.sources.values()}
    cands: dict[int, Candidate] = {}

    def get(o: Origin, kind: OriginKind) -> Candidate:
        c = cands.get(o.seq)
        if c is None:
            c = cands[o.seq] = Candidate(o, kind)
        return c

    shapes = _KeyMemo()
    for t, o in solver.sources.values():
        c = get(o, OriginKind.ANNOTATION)
        c.items.append((OriginKind.ANNOTATION, t, None))
        _type_keys(solver, t, ann, c.keys, shapes)
    for a, b, o in solver.unify_log:
        c = get(o, OriginKind.UNIFY)
        c.items.append((OriginKind.UNIFY, a, b))
        _type_keys(solver, a, ann, c.keys, shapes)
        _type_keys(solver, b, ann, c.keys, shapes)
    known = shapes.types
    for rel in solver.rels:
        if rel.state == RelationState.POISONED:
            continue  # downstream of an error: it never ran, so it contributes nothing
        c = get(rel.origin, OriginKind.RELATION)
        c.items.append((OriginKind.RELATION, rel, None))
        keys = c.keys
        for t in rel.args:
            hit = known.get(id(t))  # the common case (an input is the output before): inline
            if hit is not None:
                keys.update(hit)
            else:
                _type_keys(solver, t, ann, keys, shapes)
    return cands


def bfs_order(cands: dict[int, Candidate], primary: int, excluded: set[int]) -> list[int]:
    """Every candidate connected to the primary, nearest first (the primary first): local links
    first (a hole, an occurrence used a few times), then hubs (a weight used by every layer), then
    symbols (which link nearly everything); what nothing links comes last, in program order."""
    pool = [s for s in cands if s not in excluded or s == primary]
    by_key: defaultdict[tuple[str, Any], list[int]] = defaultdict(list)
    for q in pool:
        for k in cands[q].keys:
            by_key[k].append(q)
    keys_of: dict[int, list[tuple[str, Any]]] = {}  # sorted on first use (ids and seqs)

    def sorted_keys(q: int) -> list[tuple[str, Any]]:
        ks = keys_of.get(q)
        if ks is None:
            ks = keys_of[q] = sorted(cands[q].keys)
        return ks

    chosen = [primary]
    seen = {primary}
    expanded: set[tuple[str, Any]] = set()  # each key is expanded once (linear in the links)
    for stage in (0, 1, 2):
        frontier = list(chosen)
        while frontier:
            nxt: list[int] = []
            for q in frontier:
                for k in sorted_keys(q):
                    if k in expanded:
                        continue
                    if (k[0] == "sym" and stage < 2) or (len(by_key[k]) > _HUB and stage < 1):
                        continue
                    expanded.add(k)
                    for q2 in by_key.get(k, ()):
                        if q2 not in seen:
                            seen.add(q2)
                            chosen.append(q2)
                            nxt.append(q2)
            frontier = nxt
    chosen.extend(sorted(q for q in pool if q not in seen))
    return chosen
