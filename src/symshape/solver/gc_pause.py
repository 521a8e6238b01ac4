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


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while solving (as mypy does): the solver allocates
    many small acyclic objects, and collections triggered by them make large programs
    superlinear. Reference counting still frees everything; the collector resumes after.

    What was allocated meanwhile (the types and relations the result keeps) moves to the oldest
    generation on the way out (``gc.freeze`` then ``gc.unfreeze``: two list splices), as the
    young collection that the next allocation would start promotes it, having traversed every
    object (a few milliseconds per 10 000 operators, a quarter of one per 5 000 young objects).
    Only when that collection is due (the young generation has reached the collector's first
    threshold; below it the objects are left to the collector as any others are), and not when
    the program froze objects itself (unfreezing would release them; counting them walks them,
    hence the size test first)."""
    was = gc.isenabled()
    if was:
        gc.disable()
    try:
        yield
    finally:
        if was:
            due = gc.get_threshold()[0]  # (0: automatic collection is off, nothing is due)
            if due and gc.get_count()[0] >= due and not gc.get_freeze_count():
                gc.freeze()
                gc.unfreeze()
            gc.enable()
