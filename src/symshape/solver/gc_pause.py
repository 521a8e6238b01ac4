"""Pausing the cyclic garbage collector while a program is solved.

>>> import gc
>>> with gc_paused():
...     gc.isenabled()
False
>>> gc.isenabled()
True
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["gc_paused"]

_PROMOTE_MIN = 10_000  # young objects from which gc_paused moves them to the oldest generation


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while solving (as mypy does): the solver allocates
    many small acyclic objects, and collections triggered by them make large programs
    superlinear. Reference counting still frees everything; the collector resumes after.

    What was allocated meanwhile (the types and relations the result keeps) moves to the oldest
    generation on the way out (``gc.freeze`` then ``gc.unfreeze``: two list splices), as the
    first young collection after resuming would promote it, having traversed every object — a
    few milliseconds per 10 000 operators. Only after a large program (below ``_PROMOTE_MIN``
    young objects the collection costs little), and not when the program froze objects itself
    (unfreezing would release them; counting them walks them, hence the size test first)."""
    was = gc.isenabled()
    if was:
        gc.disable()
    try:
        yield
    finally:
        if was:
            if gc.get_count()[0] >= _PROMOTE_MIN and not gc.get_freeze_count():
                gc.freeze()
                gc.unfreeze()
            gc.enable()
