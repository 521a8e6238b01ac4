"""Where a marked line of a test file is: span tests compare spans with the source's own places."""

from __future__ import annotations

__all__ = ["place"]


def place(path: str, marker: str, text: str = "") -> tuple[int, int]:
    """The 1-based line and column of ``text`` on the line of ``path`` ending with ``marker`` (a
    comment at the end of the line)."""
    with open(path, encoding="utf-8") as fh:
        for i, line in enumerate(fh, start=1):
            if line.rstrip().endswith(marker):
                return i, line.index(text) + 1
    raise AssertionError(marker)
