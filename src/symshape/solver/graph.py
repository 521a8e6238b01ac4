"""The dependency graph: relation instances and holes/unknowns as nodes (networkx).

Edges run from a hole or unknown dimension to each relation that reads it (its inputs) and from a
relation to each hole or unknown it writes (its outputs). Relations are evaluated in topological
order of the graph's condensation, so a forward chain of operators is solved in one pass; within
a strongly connected component (mutual dependencies) relations keep their creation order.

The same graph explains errors: the chain between two core members of a conflict is a shortest
path between them in the undirected view.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol

import networkx as nx

from symshape.encoding.dims import DimVar
from symshape.encoding.types import IncompleteType, TensorType, Type, iter_dims, iter_types

__all__ = ["DependencyGraph", "rel_node", "hole_node", "dim_node", "nodes_of"]

Node = tuple[str, int]


def rel_node(rid: int) -> Node:
    return ("rel", rid)


def hole_node(h: IncompleteType) -> Node:
    return ("hole", h.id)


def dim_node(v: DimVar) -> Node:
    return ("dim", v.id)


def nodes_of(t: Type) -> list[Node]:
    """The hole and unknown-dimension nodes a (resolved) type mentions."""
    if isinstance(t, IncompleteType):
        return [("hole", t.id)]
    out: list[Node] = []
    if isinstance(t, TensorType):
        if isinstance(t.shape, tuple):
            for d in t.shape:
                if d.has_unknowns:
                    out.extend(dim_node(v) for v in sorted(d.unknowns, key=lambda v: v.id))
        return out
    for x in iter_types(t):
        if isinstance(x, IncompleteType):
            out.append(hole_node(x))
    for d in iter_dims(t):
        if d.has_unknowns:
            out.extend(dim_node(v) for v in sorted(d.unknowns, key=lambda v: v.id))
    return out


class Instance(Protocol):
    """What the graph reads of a relation instance (:class:`~symshape.solver.solve.RelationInstance`)."""

    id: int
    args: tuple[Type, ...]
    num_inputs: int

    @property
    def name(self) -> str: ...


Entry = tuple[int, str, Sequence[Type], Sequence[Type]]
#: an operator call solved when added: ``(id, relation, args, attrs, num_inputs, ...)`` (see
#: :func:`symshape.solver.instance.add_call`)
Record = tuple[Any, ...]


class DependencyGraph:
    """A networkx ``DiGraph`` over relations and holes with an evaluation order."""

    def __init__(self) -> None:
        self._g: nx.DiGraph | None = None  # made when first read (most solvers never read it)
        # relations are recorded as they come and turned into networkx nodes and edges in bulk,
        # only when the graph is read (display, explanations) or the order needs them
        self._rels: list[Entry | Record | Instance] = []
        self._done = 0  # how many of ``_rels`` are in ``_g``
        self._nodes: list[tuple[Node, str]] = []
        self._edges: list[tuple[Node, Node]] = []

    @property
    def g(self) -> nx.DiGraph:
        g = self._g
        if g is None:
            g = self._g = nx.DiGraph()
        if self._done < len(self._rels):
            nodes, edges = self._nodes, self._edges
            for rid, label, inputs, outputs in self._entries(self._done):
                r = rel_node(rid)
                nodes.append((r, label))
                for t in inputs:
                    edges.extend((n, r) for n in nodes_of(t))
                for t in outputs:
                    edges.extend((r, n) for n in nodes_of(t))
            self._done = len(self._rels)
        if self._nodes:
            g.add_nodes_from((n, {"kind": "relation", "label": lab}) for n, lab in self._nodes)
            self._nodes.clear()
        if self._edges:
            g.add_edges_from(self._edges)
            self._edges.clear()
        return g

    def add_instance(self, rel: Instance) -> None:
        """A relation instance: it reads its inputs and writes its outputs (kept as the instance
        itself, which the solver holds anyway, until the graph is read)."""
        self._rels.append(rel)

    def instance_sink(self) -> Callable[[Instance | Record], None]:
        """What :meth:`add_instance` does, as one bound call (the solver's per-call path)."""
        return self._rels.append

    def _entries(self, start: int = 0) -> Iterator[Entry]:
        for e in self._rels[start:]:
            if type(e) is tuple:
                if len(e) == 4:
                    yield e
                else:  # an operator call solved when added (a record, see instance.add_call)
                    ni = e[4]
                    yield (e[0], e[1].name, e[2][:ni], e[2][ni:])
            else:
                assert not isinstance(e, tuple)
                ni = e.num_inputs
                yield (e.id, e.name, e.args[:ni], e.args[ni:])

    def add_unification(self, key: int, types: Sequence[Type]) -> None:
        """A unification node (negative ``key``): it both reads and writes every hole and unknown
        of its types (never scheduled; it links them for explanations)."""
        self._rels.append((key, "unify", types, types))

    def order(self, rids: Sequence[int]) -> dict[int, int]:
        """A rank per relation: topological order of the condensation, creation order inside.

        Constraint generation usually creates relations in an order that already is topological
        (every relation is created after the relations producing its inputs); that is checked in
        one pass over what the relations to be ranked read and write, and only otherwise does
        networkx sort the condensation.
        """
        if not rids:
            return {}  # everything was solved as it was created (the common case)
        ranked = set(rids)
        writer: dict[Node, int] = {}
        reads: list[tuple[Node, int]] = []
        for rid, _, inputs, outputs in self._entries():
            if rid < 0 or rid not in ranked:
                continue
            for t in inputs:
                reads.extend((n, rid) for n in nodes_of(t))
            for t in outputs:
                for n in nodes_of(t):
                    writer[n] = rid
        if all(writer.get(n, -1) < r for n, r in reads):
            return {rid: rid for rid in rids}
        g = self.g
        if nx.is_directed_acyclic_graph(g):
            ranks: dict[int, int] = {}
            for i, n in enumerate(nx.topological_sort(g)):
                if n[0] == "rel":
                    ranks[n[1]] = i
        else:
            cond = nx.condensation(g)
            comp_rank = {c: i for i, c in enumerate(nx.topological_sort(cond))}
            mapping = cond.graph["mapping"]
            ranks = {}
            for n, c in mapping.items():
                if n[0] == "rel":
                    ranks[n[1]] = comp_rank[c] * (len(mapping) + 1) + n[1]
        big = len(ranks) + 1
        return {rid: ranks.get(rid, big + rid) for rid in rids}

    def chain(self, a: Node, b: Node) -> list[Node]:
        """A shortest path between two nodes ignoring direction (empty when unconnected)."""
        if a not in self.g or b not in self.g:
            return []
        try:
            return list(nx.shortest_path(self.g.to_undirected(as_view=True), a, b))
        except nx.NetworkXNoPath:
            return []

    def downstream(self, nodes: Iterable[Node]) -> set[Node]:
        out: set[Node] = set()
        for n in nodes:
            if n in self.g and n not in out:
                out |= nx.descendants(self.g, n)
                out.add(n)
        return out
