"""The solver's dependency graph as a readable networkx ``DiGraph``, and as Graphviz ``dot``
text."""

from __future__ import annotations

import itertools
from typing import Any

import networkx as nx

from symshape.display.style import FILL, RED, short_span
from symshape.encoding.dims import DimVar, _atom_dim
from symshape.encoding.types import IncompleteType, iter_holes
from symshape.errors import INVALID_ARGUMENT, SymshapeError
from symshape.ir.result import InferenceResult
from symshape.solver.diagnostics import Diagnostic, Guard, IdNumbering, ids_are_raw, numbered
from symshape.solver.graph import Node
from symshape.solver.instance import RelationInstance
from symshape.solver.outcome import Solution
from symshape.solver.solve import TypeSolver

__all__ = [
    "Shown",
    "solver_of",
    "diagnostics_of",
    "guards_of",
    "origin_map",
    "result_graph",
    "to_dot",
]

Shown = InferenceResult | Solution | TypeSolver
"""What has a dependency graph to show."""


def solver_of(obj: Shown) -> TypeSolver:
    """The solver behind a result, a solution, or the solver itself."""
    if isinstance(obj, TypeSolver):
        return obj
    if isinstance(obj, InferenceResult):
        return obj.solution.solver
    if isinstance(obj, Solution):
        return obj.solver
    raise SymshapeError(
        INVALID_ARGUMENT,
        f"no dependency graph in {type(obj).__name__}: pass an InferenceResult or a Solution",
    )


def diagnostics_of(obj: Shown) -> list[Diagnostic]:
    """The diagnostics of a result or solution (a solver's own errors and inconclusive ones)."""
    if isinstance(obj, (InferenceResult, Solution)):
        return list(obj.diagnostics)
    return [*obj.errors, *obj.inconclusive]


def guards_of(obj: Shown) -> list[Guard]:
    """The guards of a result or solution (none for a bare solver)."""
    return list(obj.guards) if isinstance(obj, (InferenceResult, Solution)) else []


def origin_map(solver: TypeSolver) -> dict[int, int]:
    """id(origin) -> relation id, for the relation instances of a solver."""
    return {id(r.origin): r.id for r in solver.rels}


def _node_name(node: tuple[str, int], rels: dict[int, RelationInstance]) -> str:
    kind, ident = node
    if kind == "rel":
        r = rels.get(ident)
        return f"{r.origin.label}#{ident}" if r is not None else f"unify#{abs(ident)}"
    if kind == "hole":
        return f"?t{ident}"
    return f"?d{ident}"


def result_graph(obj: Shown) -> nx.DiGraph:
    """The dependency graph of an InferenceResult, Solution or TypeSolver, readably labelled.

    Nodes are named ``add#1`` (relation ``add``, instance 1), ``?t17`` (a hole) and ``?d3`` (an
    unknown dimension); edges run from a hole to the relations that read it and from a relation
    to the holes it writes (attribute ``role``: ``input`` or ``output``). Node attributes:

    * ``kind``: ``relation``, ``unify``, ``hole`` or ``dim``;
    * ``label``: a two-line label for drawing (``add#1`` and ``model.py:7``; ``?t17`` and its
      resolved type);
    * ``op`` and ``span`` (relations), ``type`` (holes and unknowns: the resolved type or dim);
    * ``state``: ``solved``, ``failed``, ``pending`` or ``poisoned`` (downstream of an error, not
      run) for relations, ``""`` otherwise;
    * ``role``: ``error`` (an error is reported here), ``core`` (another member of an error's
      unsat core), ``chain`` (on the shortest path between core members), ``""`` otherwise;
    * ``core``: True when ``role`` is not empty; ``codes``: the error codes reported at the node,
      comma-separated; ``guards``: the guards it states, ``; ``-separated.

    Holes and unknowns are numbered by first appearance in node order (``?t1``, ``?d1``; names, then
    attributes), not by the process-wide counters, so the same program gives the same graph.
    """
    g = _raw_graph(obj)
    return g if ids_are_raw() else _numbered_graph(g)


def _numbered_graph(g: nx.DiGraph) -> nx.DiGraph:
    num = IdNumbering()
    out = nx.DiGraph(**g.graph)
    names: dict[str, str] = {}
    for n, d in g.nodes(data=True):
        names[n] = num(n)
        out.add_node(names[n], **{k: num(v) if isinstance(v, str) else v for k, v in d.items()})
    for a, b, d in g.edges(data=True):
        out.add_edge(names[a], names[b], **d)
    return out


def _raw_graph(obj: Shown) -> nx.DiGraph:
    """:func:`result_graph` with the holes and unknowns named by their ids."""
    solver = solver_of(obj)
    dg = solver.graph
    g = dg.g
    rels = {r.id: r for r in solver.rels}
    holes: dict[int, IncompleteType] = {}
    for inst in solver.rels:
        for arg in inst.args:
            for h in iter_holes(arg):
                holes.setdefault(h.id, h)
    names = {n: _node_name(n, rels) for n in g.nodes}

    role: dict[Node, str] = {}
    codes: dict[Node, list[str]] = {}
    for d in diagnostics_of(obj):
        members = [("rel", m.payload) for m in d.core if isinstance(m.payload, int)]
        if d.origin is not None and isinstance(d.origin.payload, int):
            primary = ("rel", d.origin.payload)
            if primary in g:
                role[primary] = "error" if d.severity == "error" else role.get(primary, "core")
                codes.setdefault(primary, []).append(d.code)
        members = [m for m in members if m in g]
        for m in members:
            role.setdefault(m, "core")
        for m1, m2 in itertools.pairwise(members):
            for n in dg.chain(m1, m2):
                role.setdefault(n, "chain")
    guards: dict[Node, list[str]] = {}
    omap = origin_map(solver)
    for gd in guards_of(obj):
        rid = omap.get(id(gd.origin)) if gd.origin is not None else None
        if rid is not None:
            guards.setdefault(("rel", rid), []).append(str(gd))

    out = nx.DiGraph(name="symshape dependency graph")
    for n in g.nodes:
        kind, ident = n
        name = names[n]
        attrs: dict[str, Any] = {"kind": kind, "op": "", "span": "", "type": "", "state": ""}
        if kind == "rel":
            r = rels.get(ident)
            if r is None:
                attrs.update(kind="unify", op="unify", state="solved", label=name)
            else:
                where = short_span(r.origin.span)
                attrs.update(
                    kind="relation",
                    op=r.origin.label,
                    span=str(r.origin.span or ""),
                    state=r.state,
                    label=f"{name}\n{where}" if where else name,
                )
        elif kind == "hole":
            hole = holes.get(ident)
            t = str(solver.unifier.resolve(hole)) if hole is not None else ""
            attrs.update(type=t, label=f"{name}\n{t}" if t and t != name else name)
        else:
            try:
                t = str(solver.unifier.resolve_dim(_atom_dim(DimVar(ident))))
            except Exception:  # pragma: no cover - display must not fail on internals
                t = ""
            attrs.update(type=t, label=f"{name} = {t}" if t and t != name else name)
        rl = role.get(n, "")
        attrs.update(
            role=rl,
            core=bool(rl),
            codes=",".join(codes.get(n, [])),
            guards="; ".join(guards.get(n, [])),
        )
        out.add_node(name, **attrs)
    for a, b in g.edges:
        out.add_edge(names[a], names[b], role="input" if a[0] != "rel" else "output")
    return out


def _dot_quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


@numbered
def to_dot(obj: Shown | nx.DiGraph) -> str:
    """Graphviz ``dot`` text of the dependency graph: relations are boxes, holes ellipses; the
    node an error is reported at is filled red, the other core members orange, the chain between
    them yellow (and carries ``class="error"``/``"core"``/``"chain"`` for SVG styling)."""
    g = obj if isinstance(obj, nx.DiGraph) else result_graph(obj)
    lines = [
        "digraph symshape {",
        "  rankdir=LR;",
        '  node [fontname="monospace", fontsize=10];',
    ]
    for n, d in g.nodes(data=True):
        shape = "box" if d["kind"] in ("relation", "unify") else "ellipse"
        attrs = [f"label={_dot_quote(d['label'])}", f"shape={shape}"]
        role = d.get("role", "")
        if role:
            attrs.append(f'style=filled, fillcolor="{FILL[role]}", class="{role}"')
            if role == "error":
                attrs.append(f'penwidth=2, color="{RED}"')
        if d.get("codes"):
            attrs.append(f"tooltip={_dot_quote(d['codes'])}")
        lines.append(f"  {_dot_quote(n)} [{', '.join(attrs)}];")
    for a, b in g.edges:
        style = ' [color="#c62828"]' if g.nodes[a].get("core") and g.nodes[b].get("core") else ""
        lines.append(f"  {_dot_quote(a)} -> {_dot_quote(b)}{style};")
    lines.append("}")
    return "\n".join(lines) + "\n"
