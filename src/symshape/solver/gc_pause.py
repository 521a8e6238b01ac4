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
    hence the size test first).

    The collector collects its oldest generation once the objects its young collections moved
    there are a quarter of what that generation held after its last full collection; objects
    moved by ``freeze``/``unfreeze`` are not counted, so a process that infers model after model
    never reached that point: each inference's cyclic garbage (the importer's graph, its protobuf
    copies) stayed in the oldest generation (5 GB after 1 500 fuzzed models). :func:`_promoted`
    counts them and collects the oldest generation by the same rule."""
    was = gc.isenabled()
    if was:
        gc.disable()
    try:
        yield
    finally:
        if was:
            due = gc.get_threshold()[0]  # (0: automatic collection is off, nothing is due)
            if due and gc.get_count()[0] >= due and not gc.get_freeze_count():
                moved = gc.get_count()[0]
                gc.freeze()
                gc.unfreeze()
                _promoted(moved)
            gc.enable()


#: the fewest promoted objects that start a full collection. Measured (40 inferences of 4 light
#: models, CPU min of 3): 100 000 made 16 full collections, 2.1x the CPU of never collecting;
#: 1 000 000 makes 2 (+5 %), the process staying near 170 MB; the fuzz loop stays under ~400 MB.
MIN_PROMOTED = 1_000_000


class _Promotions:
    """The objects :func:`gc_paused` moved to the oldest generation since its last full
    collection (``moved``), the collector's count of full collections then (``full``: one of its
    own resets the count), and the objects tracked after the last full collection run here."""

    moved = 0
    full = -1
    live = 0


def _promoted(moved: int) -> None:
    """Count ``moved`` objects promoted; a full collection once they are a quarter of the objects
    tracked after the last one (or :data:`MIN_PROMOTED`), as the collector's own rule does for the
    objects it promotes."""
    full = gc.get_stats()[2]["collections"]
    if full != _Promotions.full:
        _Promotions.moved, _Promotions.full = 0, full
    _Promotions.moved += moved
    if _Promotions.moved > max(MIN_PROMOTED, _Promotions.live // 4):
        gc.collect()
        _Promotions.live = len(gc.get_objects())
        _Promotions.moved, _Promotions.full = 0, gc.get_stats()[2]["collections"]
