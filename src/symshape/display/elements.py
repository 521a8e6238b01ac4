"""The pieces every HTML view is made of: dimensions, types, diagnostics, guards and the status
line."""

from __future__ import annotations

import linecache
from collections.abc import Sequence

from symshape.display.style import GUARD, RED, STATUS_COLOR, esc, short_span
from symshape.encoding.dims import Dim
from symshape.encoding.types import IncompleteType, TensorType, Type
from symshape.ir.result import InferenceResult
from symshape.solver.diagnostics import Diagnostic, Guard, numbered
from symshape.solver.outcome import Solution

__all__ = ["dim_html", "type_html", "diagnostic_html", "guards_html", "status_html", "counts"]


def dim_html(d: Dim) -> str:
    """A dimension: its canonical form, with its symbols in the tooltip."""
    try:
        syms = ", ".join(sorted(str(s) for s in d.symbols))
    except (AttributeError, TypeError):
        syms = ""
    title = f"symbols: {syms}" if syms else "constant"
    return f"<code class='ss-dim' title='{esc(title)}'>{esc(d)}</code>"


def type_html(t: Type) -> str:
    """A type in its printed form (what ``parse_type`` reads back); rank and dtype in the tooltip."""
    title = type(t).__name__
    style = ""
    if isinstance(t, TensorType):
        rank = "unknown rank" if t.ndim is None else f"rank {t.ndim}"
        title = f"{rank}, dtype {t.dtype if t.dtype is not None else '?'}"
    elif isinstance(t, IncompleteType):
        title, style = "unresolved (a hole)", " style='color:#777'"
    return f"<code class='ss-type' title='{esc(title)}'{style}>{esc(t)}</code>"


# ----------------------------------------------------------------------------------------------
# diagnostics


@numbered
def diagnostic_html(d: Diagnostic) -> str:
    """One diagnostic: location, severity, message, code (with its description), source line,
    and a note per other core member."""
    where = esc(d.span) if d.span is not None else ""
    desc = esc(getattr(d, "description", "") or "")
    src = ""
    if d.span is not None:
        line = linecache.getline(str(d.span.file), d.span.line).rstrip("\n")
        if line:
            src = f"<pre class='ss-source' style='margin:2px 0 2px 1.5em;color:#444'>{esc(line)}</pre>"
    notes = "".join(
        f"<li class='ss-note'><span class='ss-note-span' style='color:#666'>{esc(n.span or '')}</span>"
        f" note: {esc(n.message)}</li>"
        for n in d.notes
    )
    color = RED if d.severity == "error" else GUARD
    return (
        f"<div class='symshape-diagnostic' data-code='{esc(d.code)}' "
        f"style='font-family:monospace;font-size:12px;margin:4px 0'>"
        f"<span class='ss-span' style='color:#666'>{where}</span> "
        f"<b style='color:{color}'>{esc(d.severity)}:</b> {esc(d.message)} "
        f"<code class='ss-code' title='{desc}' style='color:{color}'>[{esc(d.code)}]</code>"
        f"{src}{'<ul style=margin:0>' + notes + '</ul>' if notes else ''}</div>"
    )


def guards_html(guards: Sequence[Guard]) -> str:
    """The guards of a result or solution as a list, each with where it was stated."""
    if not guards:
        return ""
    items = "".join(
        f"<li class='ss-guard' style='color:{GUARD}'><code>{esc(g)}</code>"
        f" <span style='color:#666'>({esc(_guard_where(g))})</span></li>"
        for g in guards
    )
    return (
        "<div><b>guards</b> (the program is well typed when these hold):"
        f"<ul style='margin:0'>{items}</ul></div>"
    )


def _guard_where(g: Guard) -> str:
    o = g.origin
    if o is None:
        return "the program"
    where = short_span(o.span)
    return f"{o.label} at {where}" if where else str(o.label)


def status_html(status: str, counts: str) -> str:
    """The status line, coloured by the status."""
    color = STATUS_COLOR.get(status, "#000")
    return (
        f"<div><span class='ss-status' data-status='{esc(status)}' "
        f"style='font-weight:bold;color:{color}'>status: {esc(status)}</span>"
        f" <span style='color:#666'>{esc(counts)}</span></div>"
    )


def counts(obj: Solution | InferenceResult) -> str:
    """``2 errors, 1 guard`` (and the unresolved and inconclusive counts when there are any)."""
    parts = [f"{len(obj.errors)} error{'s' if len(obj.errors) != 1 else ''}"]
    parts.append(f"{len(obj.guards)} guard{'s' if len(obj.guards) != 1 else ''}")
    if obj.unresolved:
        parts.append(f"{len(obj.unresolved)} unresolved")
    if obj.inconclusive:
        parts.append(f"{len(obj.inconclusive)} inconclusive")
    return ", ".join(parts)
