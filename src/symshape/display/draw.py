"""Drawing the dependency graph with matplotlib (optional: ``pip install 'symshape[notebook]'``):
the error's core and the chain between its members highlighted, big graphs cut down to the
error's neighbourhood."""

from __future__ import annotations

import os
from typing import Any

import networkx as nx

from symshape.display.graph import Shown, diagnostics_of, result_graph
from symshape.display.style import FILL, HOLE_FILL, RED, REL_FILL
from symshape.errors import INVALID_ARGUMENT, SymshapeError
from symshape.ir.result import InferenceResult
from symshape.solver.outcome import Solution

__all__ = ["draw"]


def _focus(g: nx.DiGraph, max_nodes: int) -> nx.DiGraph:
    """At most ``max_nodes`` nodes: nearest the error first (core and chain before the rest, by
    distance), else the first ones in creation order."""
    if g.number_of_nodes() <= max_nodes:
        return g
    order = {n: i for i, n in enumerate(g.nodes)}
    seeds = [n for n, d in g.nodes(data=True) if d.get("role") == "error"]
    seeds = seeds or [n for n, d in g.nodes(data=True) if d.get("core")]
    if not seeds:
        return g.subgraph(list(g.nodes)[:max_nodes]).copy()
    dist = dict.fromkeys(seeds, 0)
    frontier = list(seeds)
    und = g.to_undirected(as_view=True)
    while frontier:
        nxt = []
        for n in frontier:
            for m in und.neighbors(n):
                if m not in dist:
                    dist[m] = dist[n] + 1
                    nxt.append(m)
        frontier = nxt
    ranked = sorted(dist, key=lambda n: (not g.nodes[n].get("core"), dist[n], order[n]))
    keep = sorted(ranked[:max_nodes], key=order.__getitem__)
    return g.subgraph(keep).copy()


def _layers(g: nx.DiGraph) -> list[list[str]]:
    """Nodes by topological generation (creation order inside one); one layer if cyclic."""
    order = {n: i for i, n in enumerate(g.nodes)}
    try:
        gens = [sorted(gen, key=order.__getitem__) for gen in nx.topological_generations(g)]
    except nx.NetworkXUnfeasible:
        cond = nx.condensation(g)
        gens = []
        for gen in nx.topological_generations(cond):
            members = [n for c in gen for n in cond.nodes[c]["members"]]
            gens.append(sorted(members, key=order.__getitem__))
    return gens


def _node_color(d: dict[str, Any]) -> str:
    role = d.get("role", "")
    if role:
        return FILL[role]
    return REL_FILL if d["kind"] in ("relation", "unify") else HOLE_FILL


def _draw_label(n: str, d: dict[str, Any]) -> str:
    if d["kind"] in ("relation", "unify"):
        where = _short_text(d.get("span", ""))
        text = f"{n}  {where}" if where else n
        if d.get("codes"):
            text += f"  [{d['codes']}]"
        return text
    t = d.get("type", "")
    if len(t) > 48:
        t = t[:45] + "..."
    return f"{n}: {t}" if t and t != n else n


def _short_text(span: str) -> str:
    """``model.py:7`` from a graph node's ``span`` attribute (``path/model.py:7:5``)."""
    parts = span.rsplit(":", 2)
    if len(parts) != 3 or not parts[1].isdigit():
        return ""
    return f"{os.path.basename(parts[0]) or parts[0]}:{parts[1]}"


def draw(
    obj: Shown,
    path: str | os.PathLike[str] | None = None,
    *,
    ax: Any = None,
    max_nodes: int = 60,
    title: str | None = None,
) -> Any:
    """Draw the dependency graph with matplotlib and return the ``Figure``.

    Layers run top to bottom in evaluation order; relations are squares labelled
    ``op#id  file:line``, holes circles labelled with their resolved type. The node an error is
    reported at is red, the other members of its core orange, the chain between them yellow, and
    the edges between highlighted nodes red. Graphs over ``max_nodes`` nodes are cut down to the
    error's core and its neighbourhood. With ``path`` the figure is also saved (format from the
    extension, e.g. ``.png``); with ``ax`` it is drawn into existing axes. pyplot is not used to
    create the figure, so no figure is left open and in a notebook the returned one displays once.
    """
    try:
        from matplotlib.figure import Figure  # type: ignore[import-not-found, unused-ignore]
        from matplotlib.patches import Patch  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        raise SymshapeError(
            INVALID_ARGUMENT, "draw needs matplotlib: pip install 'symshape[notebook]'"
        ) from None
    _enable_inline_display()
    full = result_graph(obj)
    g = _focus(full, max_nodes)
    layers = _layers(g)
    width = max((len(layer) for layer in layers), default=1)
    pos: dict[str, tuple[float, float]] = {}
    for y, layer in enumerate(layers):
        off = (width - len(layer)) / 2
        for x, n in enumerate(layer):
            pos[n] = (off + x, -float(y))
    if ax is None:
        fig = Figure(figsize=(min(1.0 + 4.2 * width, 40.0), min(1.4 + 0.5 * len(layers), 60.0)))
        ax = fig.add_subplot(1, 1, 1)
    else:
        fig = ax.figure
    size = 260
    for shape, kinds in (("s", ("relation", "unify")), ("o", ("hole", "dim"))):
        nodes = [n for n, d in g.nodes(data=True) if d["kind"] in kinds]
        if nodes:
            nx.draw_networkx_nodes(
                g,
                pos,
                nodelist=nodes,
                ax=ax,
                node_shape=shape,
                node_size=size,
                node_color=[_node_color(g.nodes[n]) for n in nodes],
                edgecolors=[RED if g.nodes[n].get("role") == "error" else "#555" for n in nodes],
                linewidths=[2.0 if g.nodes[n].get("role") == "error" else 0.7 for n in nodes],
            )
    core_edges = [(a, b) for a, b in g.edges if g.nodes[a]["core"] and g.nodes[b]["core"]]
    core_set = set(core_edges)
    other_edges = [e for e in g.edges if e not in core_set]
    common = {"ax": ax, "arrows": True, "node_size": size, "arrowsize": 8}
    if other_edges:
        nx.draw_networkx_edges(g, pos, edgelist=other_edges, edge_color="#999", width=0.8, **common)
    if core_edges:
        nx.draw_networkx_edges(g, pos, edgelist=core_edges, edge_color=RED, width=1.8, **common)
    for n, d in g.nodes(data=True):
        px, py = pos[n]
        ax.text(
            px + 0.09,
            py,
            _draw_label(n, d),
            fontsize=7,
            family="monospace",
            va="center",
            ha="left",
            color=RED if d.get("role") == "error" else "#222",
        )
    handles = [
        Patch(facecolor=REL_FILL, edgecolor="#555", label="relation (operator call)"),
        Patch(facecolor=HOLE_FILL, edgecolor="#555", label="hole / unknown"),
    ]
    roles = {d.get("role", "") for _, d in g.nodes(data=True)}
    for r, text in (("error", "error reported here"), ("core", "unsat core"), ("chain", "chain")):
        if r in roles:
            handles.append(Patch(facecolor=FILL[r], edgecolor="#555", label=text))
    ax.legend(handles=handles, loc="upper left", fontsize=7, frameon=False, bbox_to_anchor=(0.0, 0.0))
    if title is None:
        diags = diagnostics_of(obj)
        status = obj.status if isinstance(obj, (InferenceResult, Solution)) else ""
        title = f"status: {status}" if status else ""
        if diags:
            msg = diags[0].message
            title += f"\n{diags[0].code}: {msg[:100]}{'...' if len(msg) > 100 else ''}"
        if g is not full:
            title += f"\n({g.number_of_nodes()} of {full.number_of_nodes()} nodes shown)"
    if title:
        ax.set_title(title, fontsize=8, loc="left", family="monospace")
    ax.set_xlim(-0.4, width + 0.4)
    ax.set_ylim(-len(layers) + 0.4, 0.6)
    ax.set_axis_off()
    if path is not None:
        fig.savefig(os.fspath(path), bbox_inches="tight", dpi=110)
    return fig


def _enable_inline_display() -> None:
    """Inside IPython, make sure a returned ``Figure`` displays as a PNG.

    matplotlib's inline backend registers that formatter only once pyplot has picked it; figures
    made without pyplot would otherwise show as ``<Figure size ...>``. Outside IPython nothing
    happens (no backend is chosen, no pyplot import)."""
    import sys

    if "IPython" not in sys.modules:
        return
    try:
        import importlib

        ipython: Any = importlib.import_module("IPython")
        pylabtools: Any = importlib.import_module("IPython.core.pylabtools")
        from matplotlib.figure import Figure  # type: ignore[import-not-found, unused-ignore]
    except ImportError:  # pragma: no cover
        return
    ip = ipython.get_ipython()
    if ip is None or not hasattr(ip, "display_formatter"):
        return
    png = ip.display_formatter.formatters["image/png"]
    try:
        png.lookup_by_type(Figure)
    except KeyError:
        png.for_type(Figure, lambda fig: pylabtools.print_figure(fig, "png", bbox_inches="tight"))
