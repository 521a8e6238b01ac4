"""The look shared by every view: colours (HTML, dot and matplotlib), table styles, and short
locations."""

from __future__ import annotations

import html
import os

from symshape.source import Span

__all__ = [
    "MAX_ROWS",
    "RED",
    "ERROR_FILL",
    "CORE_FILL",
    "CHAIN_FILL",
    "REL_FILL",
    "HOLE_FILL",
    "GUARD",
    "ROW_BG",
    "STATUS_COLOR",
    "FILL",
    "TABLE",
    "CELL",
    "esc",
    "short_span",
]

MAX_ROWS = 200

# colours (shared by HTML, dot and matplotlib)
RED = "#c62828"
ERROR_FILL = "#e57373"
CORE_FILL = "#ffb74d"
CHAIN_FILL = "#fff176"
REL_FILL = "#9ecae1"
HOLE_FILL = "#e0e0e0"
GUARD = "#a65e00"
ROW_BG = {"error": "#fde0e0", "core": "#fff0d9", "": ""}
STATUS_COLOR = {
    "ok": "#2e7d32",
    "guarded": GUARD,
    "error": RED,
    "unresolved": "#6a1b9a",
    "inconclusive": "#6a1b9a",
}

TABLE = "border-collapse:collapse;font-family:monospace;font-size:12px;margin:4px 0"
CELL = "border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top"


def esc(x: object) -> str:
    """``x`` as text, escaped for HTML (quotes included)."""
    return html.escape(str(x), quote=True)


def short_span(span: Span | None) -> str:
    """``model.py:7`` (base name and line) for a Span, ``""`` for None."""
    if span is None:
        return ""
    return f"{os.path.basename(str(span.file)) or span.file}:{span.line}"


FILL = {"error": ERROR_FILL, "core": CORE_FILL, "chain": CHAIN_FILL}
"""The fill of a graph node by its role in an error."""
