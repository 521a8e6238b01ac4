"""Notebook display and graph drawing.

* ``_repr_html_`` for dimensions, types, solutions, inference results and diagnostics (the classes
  call the functions here);
* :func:`result_graph` gives the dependency graph with readable node labels and attributes
  (``kind``, ``label``, ``state``, ``core``: whether the node belongs to an error's core or chain);
* :func:`draw` draws it with matplotlib (an optional dependency: ``pip install symshape[notebook]``),
  the nodes of an error's core and chain highlighted; :func:`to_dot` exports Graphviz text.
"""

from __future__ import annotations

import html
from typing import Any

import networkx as nx

from symshape.errors import INVALID_ARGUMENT, SymshapeError

__all__ = [
    "type_html",
    "dim_html",
    "solution_html",
    "result_html",
    "result_graph",
    "draw",
    "to_dot",
]

_STYLE = (
    "<style>.ss-table{border-collapse:collapse;font-family:monospace;font-size:12px}"
    ".ss-table td,.ss-table th{border:1px solid #ccc;padding:2px 6px;text-align:left}"
    ".ss-error{color:#b00}.ss-guard{color:#a60}.ss-status{font-weight:bold}</style>"
)


def _esc(x: object) -> str:
    return html.escape(str(x))


def dim_html(d: object) -> str:
    return f"<code class='ss-dim'>{_esc(d)}</code>"


def type_html(t: object) -> str:
    return f"<code class='ss-type'>{_esc(t)}</code>"


def _diag_rows(diags: list[Any]) -> str:
    return "".join(d._repr_html_() for d in diags)


def solution_html(sol: Any) -> str:
    """A solution: status, guards and diagnostics."""
    guards = "".join(f"<li class='ss-guard'>{_esc(g.describe())}</li>" for g in sol.guards)
    return (
        f"{_STYLE}<div class='symshape-solution'>"
        f"<span class='ss-status' data-status='{_esc(sol.status)}'>status: {_esc(sol.status)}</span>"
        f"{'<ul>' + guards + '</ul>' if guards else ''}{_diag_rows(sol.diagnostics)}</div>"
    )


def result_html(res: Any, max_rows: int = 200) -> str:
    """An inference result: a table of binding expressions and their types, guards, errors."""
    from symshape.ir.expr import Var
    from symshape.ir.printer import expr_str

    rows = []
    gen = res._gen
    for v in gen.binders[:max_rows]:
        if isinstance(v, Var):
            rows.append(f"<tr><td>%{_esc(v.name)}</td><td>{type_html(res.type_of(v))}</td></tr>")
    root = res.program
    try:
        rt = res.type_of(root) if not hasattr(root, "items") else None
    except SymshapeError:
        rt = None
    if rt is not None:
        label = expr_str(root).splitlines()[0][:60]
        rows.append(f"<tr><td>{_esc(label)}</td><td>{type_html(rt)}</td></tr>")
    guards = "".join(f"<li class='ss-guard'>{_esc(g.describe())}</li>" for g in res.guards)
    return (
        f"{_STYLE}<div class='symshape-result'>"
        f"<span class='ss-status' data-status='{_esc(res.status)}'>status: {_esc(res.status)}</span>"
        f"<table class='ss-table'><tr><th>expression</th><th>type</th></tr>{''.join(rows)}</table>"
        f"{'<p>guards:</p><ul>' + guards + '</ul>' if guards else ''}"
        f"{_diag_rows(res.diagnostics)}</div>"
    )


def _solver_of(obj: Any) -> Any:
    sol = getattr(obj, "solution", obj)
    solver = getattr(sol, "solver", None)
    if solver is None:
        raise SymshapeError(INVALID_ARGUMENT, f"no dependency graph in {type(obj).__name__}")
    return solver


def result_graph(obj: Any) -> nx.DiGraph:
    """The dependency graph of a Solution or InferenceResult with readable labels.

    Node attributes: ``kind`` (relation, hole, dim), ``label`` (``add@model.py:7``, ``?t3``),
    ``state`` (for relations: solved, failed, pending), ``core`` (True for the members of an
    error's core and the chain between them).
    """
    solver = _solver_of(obj)
    g = solver.graph.g
    out = nx.DiGraph()
    rels = {r.id: r for r in solver.rels}
    core_nodes: set[Any] = set()
    for d in getattr(getattr(obj, "solution", obj), "errors", []):
        members = [m.payload for m in d.core if isinstance(m.payload, int)]
        nodes = [("rel", rid) for rid in members]
        core_nodes.update(nodes)
        for a, b in zip(nodes, nodes[1:]):
            core_nodes.update(solver.graph.chain(a, b))
    for n, data in g.nodes(data=True):
        kind, ident = n
        if kind == "rel":
            r = rels.get(ident)
            if r is None:
                label, state = "unify", "solved"
            else:
                span = r.origin.span
                where = f"@{span.file.rsplit('/', 1)[-1]}:{span.line}" if span else ""
                label, state = f"{r.origin.label}{where}#{r.id}", r.state
        elif kind == "hole":
            label, state = f"?t{ident}", ""
        else:
            label, state = f"?d{ident}", ""
        out.add_node(label, kind="relation" if kind == "rel" else kind, label=label, state=state, core=n in core_nodes)
    names = {n: out_label for n, out_label in zip(g.nodes, out.nodes)}
    for a, b in g.edges:
        out.add_edge(names[a], names[b])
    return out


def to_dot(obj: Any) -> str:
    """Graphviz ``dot`` text of the dependency graph (core nodes filled red)."""
    g = result_graph(obj)
    lines = ["digraph symshape {", "  rankdir=LR;"]
    for n, d in g.nodes(data=True):
        shape = "box" if d["kind"] == "relation" else "ellipse"
        style = ', style=filled, fillcolor="#f4a6a6"' if d["core"] else ""
        if d.get("state") == "failed":
            style = ', style=filled, fillcolor="#e05050"'
        lines.append(f'  "{n}" [shape={shape}{style}];')
    for a, b in g.edges:
        lines.append(f'  "{a}" -> "{b}";')
    lines.append("}")
    return "\n".join(lines)


def draw(obj: Any, path: str | None = None, max_nodes: int = 300) -> Any:
    """Draw the dependency graph with matplotlib; returns the figure (saved to ``path`` if given)."""
    try:
        import matplotlib

        if path is not None:
            matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError:
        raise SymshapeError(
            INVALID_ARGUMENT, "draw needs matplotlib: pip install 'symshape[notebook]'"
        ) from None
    g = result_graph(obj)
    if g.number_of_nodes() > max_nodes:
        keep = [n for n, d in g.nodes(data=True) if d["core"]] or list(g.nodes)[:max_nodes]
        g = g.subgraph(keep).copy()
    try:
        layers = {n: i for i, gen in enumerate(nx.topological_generations(g)) for n in gen}
        for n in g.nodes:
            g.nodes[n]["layer"] = layers.get(n, 0)
        pos = nx.multipartite_layout(g, subset_key="layer")
    except (nx.NetworkXUnfeasible, nx.NetworkXError):
        pos = nx.spring_layout(g, seed=0)
    fig, ax = plt.subplots(figsize=(max(6, len(g) * 0.35), 4))
    colors = []
    for _, d in g.nodes(data=True):
        if d.get("state") == "failed":
            colors.append("#e05050")
        elif d["core"]:
            colors.append("#f4a6a6")
        elif d["kind"] == "relation":
            colors.append("#9ecae1")
        else:
            colors.append("#dddddd")
    nx.draw_networkx(g, pos, ax=ax, node_color=colors, font_size=7, node_size=500, arrows=True)
    ax.set_axis_off()
    if path is not None:
        fig.savefig(path, bbox_inches="tight")
    return fig
