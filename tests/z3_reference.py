"""The reference verdict the session tests compare with: Z3 alone, every fact at once.

No relevance filtering, no cheap procedure, no cache: ``proved`` when the facts imply the
condition, ``refuted`` when they contradict it, ``guard`` when both are possible, ``unknown``
when Z3 gives up (10 s).
"""

from __future__ import annotations

from collections.abc import Sequence

import z3

from symshape.encoding.conds import Cond
from symshape.encoding.z3 import Z3Encoder

__all__ = ["z3_verdict"]


def z3_verdict(facts: Sequence[Cond], cond: Cond) -> str:
    """The verdict of ``cond`` against every fact at once, by Z3 alone."""
    enc = Z3Encoder()
    sv = z3.Solver()
    sv.set("timeout", 10000)
    for f in facts:
        sv.add(enc.cond(f))
    t = enc.cond(cond)
    sv.add(*enc.take_axioms())
    proved = sv.check(z3.Not(t))
    if proved == z3.unsat:
        return "proved"
    possible = sv.check(t)
    if possible == z3.unsat:
        return "refuted"
    return "unknown" if z3.unknown in (proved, possible) else "guard"
