"""An inference result as a table in A-normal form (``%2 = matmul(%x, %wq)``): expression, type,
the guards it needs and where it was built, the expression an error is reported at marked
``error``, the other members of the error's core ``core``. Rendered as HTML (notebooks) and as
plain text (IPython's pretty printer).

Rows are matched to diagnostics and guards by identity: a relation's origin through the relation
instance an operator call became (:meth:`InferenceResult.relation_of`), any other origin through
the expression it records (:attr:`Origin.expr`); an origin without either falls back to its span
when exactly one row was built there.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from symshape.display.elements import counts, diagnostic_html, guards_html, status_html, type_html
from symshape.display.style import CELL, GUARD, MAX_ROWS, RED, ROW_BG, TABLE, esc, short_span
from symshape.encoding.types import Attrs, Type
from symshape.errors import SymshapeError
from symshape.ir.module import Module
from symshape.ir.nodes import Call, Constant, Expr, Function, GlobalVar, Tuple, TupleGetItem, Var
from symshape.ir.op import Op
from symshape.ir.result import InferenceResult
from symshape.solver.diagnostics import Guard, Origin, numbered
from symshape.source import Span

__all__ = ["Row", "result_rows", "result_html", "result_text"]


@dataclass
class Row:
    """One line of the table."""

    expr: str
    type: Type | None
    span: Span | None = None
    guards: list[Guard] = field(default_factory=list)
    role: str = ""  # "error" | "core" | ""
    codes: list[str] = field(default_factory=list)


def _type_or_none(res: InferenceResult, e: Expr | Function) -> Type | None:
    try:
        return res.type_of(e)
    except SymshapeError:
        return None


class _Names:
    """``%x``, ``%x_1`` for variables (one name per variable), ``%3`` for calls."""

    def __init__(self) -> None:
        self.names: dict[int, str] = {}
        self.used: dict[str, int] = {}

    def var(self, v: Var) -> str:
        hit = self.names.get(id(v))
        if hit is None:
            k = self.used.get(v.name, 0)
            self.used[v.name] = k + 1
            hit = self.names[id(v)] = f"%{v.name}" if k == 0 else f"%{v.name}_{k}"
        return hit

    def short(self, e: object, depth: int = 0) -> str:
        hit = self.names.get(id(e))
        if hit is not None:
            return hit
        if isinstance(e, Var):
            return self.var(e)
        if isinstance(e, GlobalVar):
            return f"@{e.name}"
        if isinstance(e, Constant):
            return f"const{e.type}"
        if depth < 2 and isinstance(e, Tuple):
            return "(" + ", ".join(self.short(f, depth + 1) for f in e.fields) + ")"
        if depth < 2 and isinstance(e, TupleGetItem):
            return f"{self.short(e.tuple_value, depth + 1)}.{e.index}"
        if isinstance(e, Function):
            return "fn(...)"
        return "..."


def result_rows(res: InferenceResult, max_rows: int) -> tuple[list[Row], int]:
    """Rows for the binders and calls of an inference result (and the root function or the
    module's globals); the second value is the number of rows left out."""
    names = _Names()
    rows: list[Row] = []
    by_origin: dict[int, int] = {}  # id(relation origin) -> row
    by_expr: dict[int, int] = {}  # id(expression) -> row
    by_span: dict[Span | None, list[int]] = {}

    def add(row: Row, e: object) -> int:
        rows.append(row)
        ri = len(rows) - 1
        by_expr[id(e)] = ri
        by_span.setdefault(row.span, []).append(ri)
        return ri

    for v in res.bound_vars:
        add(Row(names.var(v), _type_or_none(res, v), v.span), v)
    calls = res.calls
    for i, c in enumerate(calls):
        names.names[id(c)] = f"%{i}"
    for i, c in enumerate(calls):
        callee = c.callee
        if isinstance(callee, Op):
            head = callee.name
        elif isinstance(callee, (Var, GlobalVar)):
            head = names.short(callee)
        else:
            head = getattr(callee, "name", None) or names.short(callee)
        args = [names.short(a) for a in c.args]
        shown = {k: v for k, v in c.attrs.items() if v is not None and v != "" and v is not False}
        if shown:
            args.append(str(Attrs(shown)))
        ri = add(Row(f"%{i} = {head}({', '.join(args)})", _type_or_none(res, c), c.span), c)
        rel = res.relation_of(c)
        if rel is not None:
            by_origin[id(rel.origin)] = ri
    root = res.program
    if isinstance(root, Module):
        for gv, f in root.items():
            try:
                rows.append(Row(f"@{gv.name}", res.type_of(gv.name), getattr(f, "span", None)))
            except SymshapeError:
                pass
    elif isinstance(root, Function):
        params = ", ".join(names.short(p) for p in root.params)
        rows.append(Row(f"fn({params})", _type_or_none(res, root), root.span))
    elif not isinstance(root, Call):
        rows.append(Row("result", _type_or_none(res, root), getattr(root, "span", None)))

    def row_of(o: Origin | None) -> int | None:
        if o is None:
            return None
        hit = by_origin.get(id(o))
        if hit is None and o.expr is not None:
            hit = by_expr.get(id(o.expr))
        if hit is not None:
            return hit
        cands = by_span.get(o.span, [])
        return cands[0] if len(cands) == 1 else None

    for g in res.guards:
        r = row_of(g.origin)
        if r is not None:
            rows[r].guards.append(g)
    for d in [*res.errors, *res.inconclusive, *res.unresolved]:
        primary = row_of(d.origin)
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


@numbered
def result_html(res: InferenceResult, max_rows: int = MAX_ROWS) -> str:
    """An inference result: status, a table (expression, type, guards, where) with the error rows
    highlighted, the guards, and the diagnostics."""
    rows, left = result_rows(res, max_rows)
    head = "".join(f"<th style='{CELL}'>{h}</th>" for h in ("expression", "type", "guards", "at"))
    body = []
    for r in rows:
        bg = ROW_BG.get(r.role, "")
        style = f" style='background:{bg}'" if bg else ""
        role = f" data-role='{r.role}'" if r.role else ""
        codes = (
            f" <span class='ss-code' style='color:{RED}'>[{esc(', '.join(r.codes))}]</span>"
            if r.codes
            else ""
        )
        guards = "<br>".join(
            f"<code class='ss-guard' style='color:{GUARD}'>{esc(g)}</code>" for g in r.guards
        )
        tcell = type_html(r.type) if r.type is not None else ""
        body.append(
            f"<tr class='ss-row{' ss-' + r.role if r.role else ''}'{role}{style}>"
            f"<td style='{CELL}'>{esc(r.expr)}{codes}</td><td style='{CELL}'>{tcell}</td>"
            f"<td style='{CELL}'>{guards}</td>"
            f"<td style='{CELL};color:#666' title='{esc(r.span or '')}'>"
            f"{esc(short_span(r.span))}</td></tr>"
        )
    more = f"<p style='color:#666'>... {left} more rows not shown</p>" if left else ""
    diags = "".join(diagnostic_html(d) for d in res.diagnostics)
    return (
        f"<div class='symshape-result'>{status_html(res.status, counts(res))}"
        f"<table class='ss-table' style='{TABLE}'><tr>{head}</tr>{''.join(body)}</table>{more}"
        f"{guards_html(res.guards)}{diags}</div>"
    )


@numbered
def result_text(res: InferenceResult, max_rows: int = 40) -> str:
    """Plain text: the typed A-normal form, then the report (status, errors, guards)."""
    rows, left = result_rows(res, max_rows)
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
