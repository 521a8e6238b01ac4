"""Notebook display and graph drawing.

Everything that shows symshape objects lives here. The classes of the layers below only delegate
(``Dim._repr_html_``, ``TensorType._repr_html_``, ``Diagnostic._repr_html_``,
``Solution._repr_html_``, ``InferenceResult._repr_html_`` / ``graph()`` / ``draw()`` /
``to_dot()``, an expression's ``repr``) through :mod:`symshape.views`, in which this module
registers its functions when it is imported (``import symshape`` imports it last); nothing imports
this module but the package itself.

* HTML (``*_html``) and plain text for IPython's pretty printer (``pretty``, ``*_text``) of
  dimensions, types, diagnostics, solutions and inference results. An inference result is a table
  in A-normal form (``%2 = matmul(%x, %wq)``): expression, type, the guards it needs and where it
  was built; the expression an error is reported at is highlighted red, the other members of the
  error's core orange. Only inline styles are used, so the HTML renders the same in Jupyter,
  VS Code and on GitHub (which strips ``<style>`` blocks); class names and ``data-*`` attributes
  make it machine-readable.
* :func:`result_graph` gives the solver's dependency graph as a networkx ``DiGraph`` with readable
  node names (``add#1``, ``?t17``) and attributes (``kind``, ``label``, ``op``, ``span``, ``state``,
  ``type``, ``role``, ``core``, ``codes``, ``guards``).
* :func:`draw` draws it with matplotlib (optional: ``pip install 'symshape[notebook]'``), the
  error's core and the chain between its members highlighted; :func:`to_dot` exports Graphviz
  text.

Output is deterministic: rows and nodes come in creation (program) order.
"""

from __future__ import annotations

import html
import itertools
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from symshape.errors import INVALID_ARGUMENT, SymshapeError
from symshape.views import View, register_view

__all__ = [
    "dim_html",
    "type_html",
    "diagnostic_html",
    "solution_html",
    "solution_text",
    "result_html",
    "result_text",
    "result_graph",
    "draw",
    "to_dot",
]

MAX_ROWS = 200

# colours (shared by HTML, dot and matplotlib)
_RED = "#c62828"
_ERROR_FILL = "#e57373"
_CORE_FILL = "#ffb74d"
_CHAIN_FILL = "#fff176"
_REL_FILL = "#9ecae1"
_HOLE_FILL = "#e0e0e0"
_GUARD = "#a65e00"
_ROW_BG = {"error": "#fde0e0", "core": "#fff0d9", "": ""}
_STATUS_COLOR = {
    "ok": "#2e7d32",
    "guarded": _GUARD,
    "error": _RED,
    "unresolved": "#6a1b9a",
    "inconclusive": "#6a1b9a",
}

_TABLE = "border-collapse:collapse;font-family:monospace;font-size:12px;margin:4px 0"
_CELL = "border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top"


def _esc(x: object) -> str:
    return html.escape(str(x), quote=True)


def _short_span(span: Any) -> str:
    """``model.py:7`` (base name and line) for a Span, ``""`` for None."""
    if span is None:
        return ""
    return f"{os.path.basename(str(span.file)) or span.file}:{span.line}"


# ----------------------------------------------------------------------------------------------
# dimensions and types


def dim_html(d: Any) -> str:
    """A dimension: its canonical form, with its symbols in the tooltip."""
    try:
        syms = ", ".join(sorted(str(s) for s in d.symbols))
    except (AttributeError, TypeError):
        syms = ""
    title = f"symbols: {syms}" if syms else "constant"
    return f"<code class='ss-dim' title='{_esc(title)}'>{_esc(d)}</code>"


def type_html(t: Any) -> str:
    """A type in its printed form (what ``parse_type`` reads back); rank and dtype in the tooltip."""
    from symshape.encoding.types import IncompleteType, TensorType

    title = type(t).__name__
    style = ""
    if isinstance(t, TensorType):
        rank = "unknown rank" if t.ndim is None else f"rank {t.ndim}"
        title = f"{rank}, dtype {t.dtype if t.dtype is not None else '?'}"
    elif isinstance(t, IncompleteType):
        title, style = "unresolved (a hole)", " style='color:#777'"
    return f"<code class='ss-type' title='{_esc(title)}'{style}>{_esc(t)}</code>"


# ----------------------------------------------------------------------------------------------
# diagnostics


def diagnostic_html(d: Any) -> str:
    """One diagnostic: location, severity, message, code (with its description), source line,
    and a note per other core member."""
    import linecache

    where = _esc(d.span) if d.span is not None else ""
    desc = _esc(getattr(d, "description", "") or "")
    src = ""
    if d.span is not None:
        line = linecache.getline(str(d.span.file), d.span.line).rstrip("\n")
        if line:
            src = f"<pre class='ss-source' style='margin:2px 0 2px 1.5em;color:#444'>{_esc(line)}</pre>"
    notes = "".join(
        f"<li class='ss-note'><span class='ss-note-span' style='color:#666'>{_esc(n.span or '')}</span>"
        f" note: {_esc(n.message)}</li>"
        for n in d.notes
    )
    color = _RED if d.severity == "error" else _GUARD
    return (
        f"<div class='symshape-diagnostic' data-code='{_esc(d.code)}' "
        f"style='font-family:monospace;font-size:12px;margin:4px 0'>"
        f"<span class='ss-span' style='color:#666'>{where}</span> "
        f"<b style='color:{color}'>{_esc(d.severity)}:</b> {_esc(d.message)} "
        f"<code class='ss-code' title='{desc}' style='color:{color}'>[{_esc(d.code)}]</code>"
        f"{src}{'<ul style=margin:0>' + notes + '</ul>' if notes else ''}</div>"
    )


def _guards_html(guards: Sequence[Any]) -> str:
    if not guards:
        return ""
    items = "".join(
        f"<li class='ss-guard' style='color:{_GUARD}'><code>{_esc(g)}</code>"
        f" <span style='color:#666'>({_esc(_guard_where(g))})</span></li>"
        for g in guards
    )
    return (
        "<div><b>guards</b> (the program is well typed when these hold):"
        f"<ul style='margin:0'>{items}</ul></div>"
    )


def _guard_where(g: Any) -> str:
    o = g.origin
    if o is None:
        return "the program"
    where = _short_span(o.span)
    return f"{o.label} at {where}" if where else str(o.label)


def _status_html(status: str, counts: str) -> str:
    color = _STATUS_COLOR.get(status, "#000")
    return (
        f"<div><span class='ss-status' data-status='{_esc(status)}' "
        f"style='font-weight:bold;color:{color}'>status: {_esc(status)}</span>"
        f" <span style='color:#666'>{_esc(counts)}</span></div>"
    )


def _counts(obj: Any) -> str:
    parts = [f"{len(obj.errors)} error{'s' if len(obj.errors) != 1 else ''}"]
    parts.append(f"{len(obj.guards)} guard{'s' if len(obj.guards) != 1 else ''}")
    if obj.unresolved:
        parts.append(f"{len(obj.unresolved)} unresolved")
    if obj.inconclusive:
        parts.append(f"{len(obj.inconclusive)} inconclusive")
    return ", ".join(parts)


# ----------------------------------------------------------------------------------------------
# rows: the A-normal-form view of a program (shared by HTML and text)


@dataclass
class _Row:
    expr: str
    type: Any
    span: Any = None
    guards: list[Any] = field(default_factory=list)
    role: str = ""  # "error" | "core" | ""
    codes: list[str] = field(default_factory=list)


def _origin_map(solver: Any) -> dict[int, int]:
    """id(origin) -> relation id, for the relation instances of a solver."""
    return {id(r.origin): r.id for r in solver.rels}


def _result_rows(res: Any, max_rows: int) -> tuple[list[_Row], int]:
    """Rows for the binders and calls of an inference result (and the root function or the
    module's globals); the second value is the number of rows left out."""
    from symshape.encoding.types import Attrs, IncompleteType
    from symshape.ir.expr import Call, Constant, Function, GlobalVar, Tuple, TupleGetItem, Var
    from symshape.ir.module import Module
    from symshape.ir.op import Op

    gen = res._gen
    solver = res.solution.solver
    names: dict[int, str] = {}
    used: dict[str, int] = {}

    def vname(v: Any) -> str:
        hit = names.get(id(v))
        if hit is None:
            k = used.get(v.name, 0)
            used[v.name] = k + 1
            hit = names[id(v)] = f"%{v.name}" if k == 0 else f"%{v.name}_{k}"
        return hit

    def short(e: Any, depth: int = 0) -> str:
        hit = names.get(id(e))
        if hit is not None:
            return hit
        if isinstance(e, Var):
            return vname(e)
        if isinstance(e, GlobalVar):
            return f"@{e.name}"
        if isinstance(e, Constant):
            return f"const{e.type}"
        if depth < 2 and isinstance(e, Tuple):
            return "(" + ", ".join(short(f, depth + 1) for f in e.fields) + ")"
        if depth < 2 and isinstance(e, TupleGetItem):
            return f"{short(e.tuple_value, depth + 1)}.{e.index}"
        if isinstance(e, Function):
            return "fn(...)"
        return "..."

    rows: list[_Row] = []
    by_origin: dict[int, int] = {}  # id(origin) -> row index
    by_key: dict[tuple[str, Any], int] = {}  # (label, span) -> row (fallback matching)
    by_span: dict[Any, list[int]] = {}
    annot: dict[tuple[str, Any], int] = {}  # (var name, span) -> binder row
    for v in gen.binders:
        rows.append(_Row(vname(v), res._safe_type(v), v.span))
        annot[(v.name, v.span)] = len(rows) - 1
        by_span.setdefault(v.span, []).append(len(rows) - 1)
    producer = getattr(solver, "producer", {})
    for i, c in enumerate(gen.calls):
        names[id(c)] = f"%{i}"
    for i, c in enumerate(gen.calls):
        callee = c.callee
        if isinstance(callee, Op):
            head = callee.name
        elif isinstance(callee, (Var, GlobalVar)):
            head = short(callee)
        else:
            head = getattr(callee, "name", None) or short(callee)
        args = [short(a) for a in c.args]
        shown = {k: v for k, v in c.attrs.items() if v is not None and v != "" and v is not False}
        if shown:
            args.append(str(Attrs(shown)))
        rows.append(_Row(f"%{i} = {head}({', '.join(args)})", res._safe_type(c), c.span))
        ri = len(rows) - 1
        out = gen.types.get(id(c))
        rel = producer.get(out) if isinstance(out, IncompleteType) else None
        if rel is not None:
            by_origin[id(rel.origin)] = ri
        label = (
            head
            if isinstance(callee, Op) or not isinstance(callee, (Var, GlobalVar))
            else (f"call of {head}")
        )
        by_key.setdefault((label, c.span), ri)
        by_span.setdefault(c.span, []).append(ri)
    root = res.program
    if isinstance(root, Module):
        for gv, _f in root.items():
            try:
                rows.append(_Row(f"@{gv.name}", res.type_of(gv.name), getattr(_f, "span", None)))
            except SymshapeError:
                pass
    elif isinstance(root, Function):
        params = ", ".join(short(p) for p in root.params)
        rows.append(_Row(f"fn({params})", res._safe_type(root), root.span))
    elif not isinstance(root, Call):
        rows.append(_Row("result", res._safe_type(root), getattr(root, "span", None)))

    def row_of(o: Any) -> int | None:
        if o is None:
            return None
        hit = by_origin.get(id(o))
        if hit is not None:
            return hit
        if o.kind == "annotation" and o.label.startswith("`"):
            name = o.label[1:].split("`", 1)[0]
            hit = annot.get((name, o.span))
            if hit is not None:
                return hit
        hit = by_key.get((o.label, o.span))
        if hit is not None:
            return hit
        cands = by_span.get(o.span, [])
        return cands[0] if len(cands) == 1 else None

    for g in res.guards:
        r = row_of(g.origin)
        if r is not None:
            rows[r].guards.append(g)
    for d in [*res.errors, *res.inconclusive, *res.unresolved]:
        primary = row_of(d.origin) if d.origin is not None else None
        if primary is None and d.span is not None:
            cands = by_span.get(d.span, [])
            primary = cands[0] if len(cands) == 1 else None
        if primary is not None:
            rows[primary].role = "error"
            rows[primary].codes.append(d.code)
        for m in d.core:
            r = row_of(m)
            if r is not None and r != primary and rows[r].role == "":
                rows[r].role = "core"
    left = max(0, len(rows) - max_rows)
    if left:
        # keep the rows that matter (errors, core members, guards) and the first ones
        keep = {i for i, r in enumerate(rows) if r.role or r.guards}
        rest = [i for i in range(len(rows)) if i not in keep][: max(0, max_rows - len(keep))]
        rows = [rows[i] for i in sorted(keep.union(rest))]
    return rows, left


def result_html(res: Any, max_rows: int = MAX_ROWS) -> str:
    """An inference result: status, a table (expression, type, guards, where) with the error rows
    highlighted, the guards, and the diagnostics."""
    rows, left = _result_rows(res, max_rows)
    head = "".join(f"<th style='{_CELL}'>{h}</th>" for h in ("expression", "type", "guards", "at"))
    body = []
    for r in rows:
        bg = _ROW_BG.get(r.role, "")
        style = f" style='background:{bg}'" if bg else ""
        role = f" data-role='{r.role}'" if r.role else ""
        codes = (
            f" <span class='ss-code' style='color:{_RED}'>[{_esc(', '.join(r.codes))}]</span>"
            if r.codes
            else ""
        )
        guards = "<br>".join(
            f"<code class='ss-guard' style='color:{_GUARD}'>{_esc(g)}</code>" for g in r.guards
        )
        tcell = type_html(r.type) if r.type is not None else ""
        body.append(
            f"<tr class='ss-row{' ss-' + r.role if r.role else ''}'{role}{style}>"
            f"<td style='{_CELL}'>{_esc(r.expr)}{codes}</td><td style='{_CELL}'>{tcell}</td>"
            f"<td style='{_CELL}'>{guards}</td>"
            f"<td style='{_CELL};color:#666' title='{_esc(r.span or '')}'>"
            f"{_esc(_short_span(r.span))}</td></tr>"
        )
    more = f"<p style='color:#666'>... {left} more rows not shown</p>" if left else ""
    diags = "".join(diagnostic_html(d) for d in res.diagnostics)
    return (
        f"<div class='symshape-result'>{_status_html(res.status, _counts(res))}"
        f"<table class='ss-table' style='{_TABLE}'><tr>{head}</tr>{''.join(body)}</table>{more}"
        f"{_guards_html(res.guards)}{diags}</div>"
    )


def result_text(res: Any, max_rows: int = 40) -> str:
    """Plain text: the typed A-normal form, then the report (status, errors, guards)."""
    rows, left = _result_rows(res, max_rows)
    width = min(max((len(r.expr) for r in rows), default=0), 60)
    lines = []
    for r in rows:
        mark = "!" if r.role == "error" else ("*" if r.role == "core" else " ")
        extra = f"  [{', '.join(r.codes)}]" if r.codes else ""
        extra += "".join(f"  needs {g}" for g in r.guards)
        lines.append(f"{mark} {r.expr:<{width}} : {r.type}{extra}")
    if left:
        lines.append(f"  ... {left} more rows")
    return "\n".join([*lines, res.report()])


# ----------------------------------------------------------------------------------------------
# solutions


def solution_html(sol: Any, max_rows: int = MAX_ROWS) -> str:
    """A solution: status, the relation instances with resolved arguments, guards, diagnostics."""
    solver = sol.solver
    err_rels: dict[int, list[str]] = {}
    core_rels: set[int] = set()
    for d in sol.diagnostics:
        if d.origin is not None and isinstance(d.origin.payload, int):
            err_rels.setdefault(d.origin.payload, []).append(d.code)
        core_rels.update(m.payload for m in d.core if isinstance(m.payload, int))
    guards_of: dict[int, list[Any]] = {}
    omap = _origin_map(solver)
    for g in sol.guards:
        rid = omap.get(id(g.origin)) if g.origin is not None else None
        if rid is not None:
            guards_of.setdefault(rid, []).append(g)
    head = "".join(
        f"<th style='{_CELL}'>{h}</th>" for h in ("relation", "inputs", "outputs", "state", "guards", "at")
    )
    body = []
    for r in solver.rels[:max_rows]:
        role = "error" if r.id in err_rels else ("core" if r.id in core_rels else "")
        bg = _ROW_BG[role]
        style = f" style='background:{bg}'" if bg else ""
        args = [sol.resolve(a) for a in r.args]
        ins = ", ".join(type_html(a) for a in args[: r.num_inputs])
        outs = ", ".join(type_html(a) for a in args[r.num_inputs :])
        codes = (
            f" <span class='ss-code' style='color:{_RED}'>[{_esc(', '.join(err_rels[r.id]))}]</span>"
            if r.id in err_rels
            else ""
        )
        guards = "<br>".join(
            f"<code class='ss-guard' style='color:{_GUARD}'>{_esc(g)}</code>" for g in guards_of.get(r.id, [])
        )
        body.append(
            f"<tr class='ss-row{' ss-' + role if role else ''}'{style}>"
            f"<td style='{_CELL}'>{_esc(r.origin.label)}#{r.id}{codes}</td><td style='{_CELL}'>{ins}</td>"
            f"<td style='{_CELL}'>{outs}</td><td style='{_CELL}'>{_esc(r.state)}</td>"
            f"<td style='{_CELL}'>{guards}</td>"
            f"<td style='{_CELL};color:#666'>{_esc(_short_span(r.origin.span))}</td></tr>"
        )
    left = max(0, len(solver.rels) - max_rows)
    more = f"<p style='color:#666'>... {left} more relations not shown</p>" if left else ""
    table = (
        f"<table class='ss-table' style='{_TABLE}'><tr>{head}</tr>{''.join(body)}</table>{more}"
        if body
        else ""
    )
    diags = "".join(diagnostic_html(d) for d in sol.diagnostics)
    return (
        f"<div class='symshape-solution'>{_status_html(sol.status, _counts(sol))}"
        f"{table}{_guards_html(sol.guards)}{diags}</div>"
    )


def solution_text(sol: Any) -> str:
    """Plain text: status, guards, diagnostics."""
    lines = [f"Solution: status {sol.status} ({_counts(sol)})"]
    lines.extend(f"  guard: {g.describe()}" for g in sol.guards)
    lines.extend(d.render() for d in sol.diagnostics)
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------
# the dependency graph


def _solver_of(obj: Any) -> Any:
    if hasattr(obj, "graph") and hasattr(obj, "rels") and hasattr(obj, "unifier"):
        return obj  # a TypeSolver
    sol = getattr(obj, "solution", obj)
    solver = getattr(sol, "solver", None)
    if solver is None:
        raise SymshapeError(
            INVALID_ARGUMENT,
            f"no dependency graph in {type(obj).__name__}: pass an InferenceResult or a Solution",
        )
    return solver


def _diagnostics_of(obj: Any) -> list[Any]:
    src = getattr(obj, "solution", obj)
    diags = getattr(src, "diagnostics", None)
    if diags is None:
        diags = [*getattr(obj, "errors", []), *getattr(obj, "inconclusive", [])]
    return list(diags)


def _node_name(node: tuple[str, int], rels: dict[int, Any]) -> str:
    kind, ident = node
    if kind == "rel":
        r = rels.get(ident)
        return f"{r.origin.label}#{ident}" if r is not None else f"unify#{abs(ident)}"
    if kind == "hole":
        return f"?t{ident}"
    return f"?d{ident}"


def result_graph(obj: Any) -> nx.DiGraph:
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
    """
    from symshape.encoding.dims import DimVar, _atom_dim
    from symshape.encoding.types import iter_holes

    solver = _solver_of(obj)
    dg = solver.graph
    g = dg.g
    rels = {r.id: r for r in solver.rels}
    holes: dict[int, Any] = {}
    for r in solver.rels:
        for a in r.args:
            for h in iter_holes(a):
                holes.setdefault(h.id, h)
    names = {n: _node_name(n, rels) for n in g.nodes}

    role: dict[Any, str] = {}
    codes: dict[Any, list[str]] = {}
    for d in _diagnostics_of(obj):
        members = [("rel", m.payload) for m in d.core if isinstance(m.payload, int)]
        if d.origin is not None and isinstance(d.origin.payload, int):
            primary = ("rel", d.origin.payload)
            if primary in g:
                role[primary] = "error" if d.severity == "error" else role.get(primary, "core")
                codes.setdefault(primary, []).append(d.code)
        members = [m for m in members if m in g]
        for m in members:
            role.setdefault(m, "core")
        for a, b in itertools.pairwise(members):
            for n in dg.chain(a, b):
                role.setdefault(n, "chain")
    guards: dict[Any, list[str]] = {}
    omap = _origin_map(solver)
    src = getattr(obj, "solution", obj)
    for gd in getattr(src, "guards", []) or []:
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
                where = _short_span(r.origin.span)
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


_FILL = {"error": _ERROR_FILL, "core": _CORE_FILL, "chain": _CHAIN_FILL}


def to_dot(obj: Any) -> str:
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
            attrs.append(f'style=filled, fillcolor="{_FILL[role]}", class="{role}"')
            if role == "error":
                attrs.append(f'penwidth=2, color="{_RED}"')
        if d.get("codes"):
            attrs.append(f"tooltip={_dot_quote(d['codes'])}")
        lines.append(f"  {_dot_quote(n)} [{', '.join(attrs)}];")
    for a, b in g.edges:
        style = ' [color="#c62828"]' if g.nodes[a].get("core") and g.nodes[b].get("core") else ""
        lines.append(f"  {_dot_quote(a)} -> {_dot_quote(b)}{style};")
    lines.append("}")
    return "\n".join(lines) + "\n"


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


def _layers(g: nx.DiGraph) -> list[list[Any]]:
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
        return _FILL[role]
    return _REL_FILL if d["kind"] in ("relation", "unify") else _HOLE_FILL


def _draw_label(n: str, d: dict[str, Any]) -> str:
    if d["kind"] in ("relation", "unify"):
        where = _short_span(_SpanLike.parse(d.get("span", "")))
        text = f"{n}  {where}" if where else n
        if d.get("codes"):
            text += f"  [{d['codes']}]"
        return text
    t = d.get("type", "")
    if len(t) > 48:
        t = t[:45] + "..."
    return f"{n}: {t}" if t and t != n else n


@dataclass(frozen=True)
class _SpanLike:
    file: str
    line: int

    @staticmethod
    def parse(s: str) -> _SpanLike | None:
        parts = s.rsplit(":", 2)
        if len(parts) != 3 or not parts[1].isdigit():
            return None
        return _SpanLike(parts[0], int(parts[1]))


def draw(
    obj: Any,
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
    pos: dict[Any, tuple[float, float]] = {}
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
                edgecolors=[_RED if g.nodes[n].get("role") == "error" else "#555" for n in nodes],
                linewidths=[2.0 if g.nodes[n].get("role") == "error" else 0.7 for n in nodes],
            )
    core_edges = [(a, b) for a, b in g.edges if g.nodes[a]["core"] and g.nodes[b]["core"]]
    core_set = set(core_edges)
    other_edges = [e for e in g.edges if e not in core_set]
    common = {"ax": ax, "arrows": True, "node_size": size, "arrowsize": 8}
    if other_edges:
        nx.draw_networkx_edges(g, pos, edgelist=other_edges, edge_color="#999", width=0.8, **common)
    if core_edges:
        nx.draw_networkx_edges(g, pos, edgelist=core_edges, edge_color=_RED, width=1.8, **common)
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
            color=_RED if d.get("role") == "error" else "#222",
        )
    handles = [
        Patch(facecolor=_REL_FILL, edgecolor="#555", label="relation (operator call)"),
        Patch(facecolor=_HOLE_FILL, edgecolor="#555", label="hole / unknown"),
    ]
    roles = {d.get("role", "") for _, d in g.nodes(data=True)}
    for r, text in (("error", "error reported here"), ("core", "unsat core"), ("chain", "chain")):
        if r in roles:
            handles.append(Patch(facecolor=_FILL[r], edgecolor="#555", label=text))
    ax.legend(handles=handles, loc="upper left", fontsize=7, frameon=False, bbox_to_anchor=(0.0, 0.0))
    if title is None:
        diags = _diagnostics_of(obj)
        status = getattr(obj, "status", "")
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


# ----------------------------------------------------------------------------------------------
# registration (see symshape.views)


def _register() -> None:
    from symshape.encoding.dims import Dim
    from symshape.encoding.types import (
        FuncType,
        GlobalTypeVar,
        IncompleteType,
        ObjectType,
        ShapeType,
        TensorType,
        TupleType,
        TypeCall,
        TypeRelation,
        TypeVar,
    )
    from symshape.ir.expr import Expr
    from symshape.ir.printer import expr_str
    from symshape.ir.result import InferenceResult
    from symshape.solver.diagnostics import Diagnostic
    from symshape.solver.outcome import Solution

    register_view(View.HTML, Dim, dim_html)
    for cls in (
        TensorType, TupleType, FuncType, TypeRelation, TypeVar, IncompleteType, GlobalTypeVar,
        TypeCall, ObjectType, ShapeType,
    ):  # fmt: skip
        register_view(View.HTML, cls, type_html)
    register_view(View.HTML, Diagnostic, diagnostic_html)
    register_view(View.TEXT, Diagnostic, Diagnostic.render)
    register_view(View.HTML, Solution, solution_html)
    register_view(View.TEXT, Solution, solution_text)
    register_view(View.GRAPH, Solution, result_graph)
    register_view(View.HTML, InferenceResult, result_html)
    register_view(View.TEXT, InferenceResult, result_text)
    register_view(View.GRAPH, InferenceResult, result_graph)
    register_view(View.DOT, InferenceResult, to_dot)
    register_view(View.DRAW, InferenceResult, draw)
    register_view(View.TEXT, Expr, expr_str)


_register()
