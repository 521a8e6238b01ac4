"""Type texts compared across runs: holes (``?t<id>``) and unknowns (``?d<id>``) are numbered by a
process-wide counter, so two runs name the same hole differently; :func:`number_by_appearance`
renames them by first appearance."""

from __future__ import annotations

import re

__all__ = ["number_by_appearance"]


def number_by_appearance(text: str) -> str:
    """Number holes (``?t<id>``) and unknowns (``?d<id>``) by first appearance."""
    names: dict[str, str] = {}

    def sub(m: re.Match[str]) -> str:
        key = m.group(0)
        if key not in names:
            names[key] = f"{m.group(1)}#{sum(k.startswith(m.group(1)) for k in names)}"
        return names[key]

    return re.sub(r"(\?[td])\d+", sub, text)
