"""Where the values behind an error came from, and the notes that say so.

:func:`provenance` follows a relation's inputs back through the operators that produced them to
annotations; :func:`core_notes` turns the unsat core Z3 gave for an error and that provenance into
the notes of its diagnostic, in program order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from symshape.encoding.types import IncompleteType, Type
from symshape.solver.diagnostics import Note, Origin
from symshape.solver.session import Fact

if TYPE_CHECKING:
    from symshape.solver.instance import RelationInstance
    from symshape.solver.solve import TypeSolver

__all__ = ["provenance", "core_notes"]

_MAX_SOURCES = 12


def provenance(solver: TypeSolver, rel: RelationInstance) -> list[tuple[Origin, str]]:
    """Where a relation's inputs came from: producing relations (followed back through the
    chain of operators) and annotations, each with what it contributed."""
    out: list[tuple[Origin, str]] = []
    seen: set[int] = set()
    todo: list[Type] = list(rel.args[: rel.num_inputs])
    while todo and len(out) < _MAX_SOURCES:
        t = todo.pop(0)
        src = solver.sources.get(id(t))
        if src is not None and src[0] is t:
            if src[1].seq not in seen:
                seen.add(src[1].seq)
                out.append((src[1], src[1].label))
            continue
        if isinstance(t, IncompleteType):
            p = solver.producer.get(t)
            if p is not None and p.origin.seq not in seen and p is not rel:
                seen.add(p.origin.seq)
                res = solver.unifier.resolve(t)
                out.append((p.origin, f"{p.origin.label} gives `{res}`"))
                todo.extend(p.args[: p.num_inputs])
    return out


def core_notes(
    origin: Origin, core: Sequence[Fact], sources: Sequence[tuple[Origin, str]]
) -> tuple[tuple[Note, ...], tuple[Origin, ...]]:
    """The notes of an error at ``origin`` — one per other member of the Z3 ``core`` (what it
    requires), then one per origin of ``sources`` not among them (what it contributed), each group
    in program order — and the members they name (``origin`` first)."""
    notes = []
    members = [origin]
    for f in sorted(core, key=lambda f: f.origin.sort_key()):
        if f.origin is origin:
            continue
        members.append(f.origin)
        notes.append(Note(f"{f.origin.label} requires `{f.cond}`", f.origin.span))
    for o, what in sorted(sources, key=lambda p: p[0].sort_key()):
        if o is origin or o in members:
            continue
        members.append(o)
        notes.append(Note(what, o.span))
    return tuple(notes), tuple(members)
