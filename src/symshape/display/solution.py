"""A :class:`~symshape.solver.outcome.Solution` (what :class:`symshape.TypeSolver` gives): the
relation instances with their resolved arguments, the guards and the diagnostics."""

from __future__ import annotations

from symshape.display.elements import counts, diagnostic_html, guards_html, status_html, type_html
from symshape.display.graph import origin_map
from symshape.display.style import CELL, GUARD, MAX_ROWS, RED, ROW_BG, TABLE, esc, short_span
from symshape.solver.diagnostics import Guard, numbered
from symshape.solver.outcome import Solution

__all__ = ["solution_html", "solution_text"]


@numbered
def solution_html(sol: Solution, max_rows: int = MAX_ROWS) -> str:
    """A solution: status, the relation instances with resolved arguments, guards, diagnostics."""
    solver = sol.solver
    err_rels: dict[int, list[str]] = {}
    core_rels: set[int] = set()
    for d in sol.diagnostics:
        if d.origin is not None and isinstance(d.origin.payload, int):
            err_rels.setdefault(d.origin.payload, []).append(d.code)
        core_rels.update(m.payload for m in d.core if isinstance(m.payload, int))
    guards_of: dict[int, list[Guard]] = {}
    omap = origin_map(solver)
    for g in sol.guards:
        rid = omap.get(id(g.origin)) if g.origin is not None else None
        if rid is not None:
            guards_of.setdefault(rid, []).append(g)
    head = "".join(
        f"<th style='{CELL}'>{h}</th>" for h in ("relation", "inputs", "outputs", "state", "guards", "at")
    )
    body = []
    for r in solver.rels[:max_rows]:
        role = "error" if r.id in err_rels else ("core" if r.id in core_rels else "")
        bg = ROW_BG[role]
        style = f" style='background:{bg}'" if bg else ""
        args = [sol.resolve(a) for a in r.args]
        ins = ", ".join(type_html(a) for a in args[: r.num_inputs])
        outs = ", ".join(type_html(a) for a in args[r.num_inputs :])
        codes = (
            f" <span class='ss-code' style='color:{RED}'>[{esc(', '.join(err_rels[r.id]))}]</span>"
            if r.id in err_rels
            else ""
        )
        guards = "<br>".join(
            f"<code class='ss-guard' style='color:{GUARD}'>{esc(g)}</code>" for g in guards_of.get(r.id, [])
        )
        body.append(
            f"<tr class='ss-row{' ss-' + role if role else ''}'{style}>"
            f"<td style='{CELL}'>{esc(r.origin.label)}#{r.id}{codes}</td><td style='{CELL}'>{ins}</td>"
            f"<td style='{CELL}'>{outs}</td><td style='{CELL}'>{esc(r.state)}</td>"
            f"<td style='{CELL}'>{guards}</td>"
            f"<td style='{CELL};color:#666'>{esc(short_span(r.origin.span))}</td></tr>"
        )
    left = max(0, len(solver.rels) - max_rows)
    more = f"<p style='color:#666'>... {left} more relations not shown</p>" if left else ""
    table = (
        f"<table class='ss-table' style='{TABLE}'><tr>{head}</tr>{''.join(body)}</table>{more}"
        if body
        else ""
    )
    diags = "".join(diagnostic_html(d) for d in sol.diagnostics)
    return (
        f"<div class='symshape-solution'>{status_html(sol.status, counts(sol))}"
        f"{table}{guards_html(sol.guards)}{diags}</div>"
    )


@numbered
def solution_text(sol: Solution) -> str:
    """Plain text: status, guards, diagnostics."""
    lines = [f"Solution: status {sol.status} ({counts(sol)})"]
    lines.extend(f"  guard: {g.describe()}" for g in sol.guards)
    lines.extend(d.render() for d in sol.diagnostics)
    return "\n".join(lines)
