"""Z3 alone, as the tests' reference: the verdict of a condition against every fact at once, and
whether two guard lists are equivalent.

:func:`z3_verdict` uses no relevance filtering, no cheap procedure, no cache: ``proved`` when
the facts imply the condition, ``refuted`` when they contradict it, ``guard`` when both are
possible, ``unknown`` when Z3 gives up (10 s).
"""

from __future__ import annotations

from collections.abc import Sequence

import z3

from symshape.encoding.conds import Cond, all_of
from symshape.encoding.dims import Dim
from symshape.encoding.z3 import Z3Encoder

__all__ = ["z3_verdict", "equivalent_by_z3", "prove_floordiv"]


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


def equivalent_by_z3(before: Sequence[Cond], after: Sequence[Cond]) -> bool:
    """The conjunctions are equivalent for every value of the symbols in their ranges (a fresh
    context each time: the shared one's history can change how Z3 searches)."""
    ctx = z3.Context()
    enc = Z3Encoder(ctx)
    f = enc.cond(all_of(*before)) == enc.cond(all_of(*after))
    solver = z3.Solver(ctx=ctx)
    solver.set("timeout", 60_000)
    solver.add(*enc.take_axioms())
    solver.add(z3.Not(f))
    return bool(solver.check() == z3.unsat)


def prove_floordiv(num: Dim, den: Dim, got: Dim) -> z3.CheckSatResult:
    """Is ``got == num // den`` for every value of the symbols in their ranges with ``den > 0``?
    (``unsat`` of the negation: yes; 5 s.)"""
    enc = Z3Encoder()
    n, d, g = enc.dim(num), enc.dim(den), enc.dim(got)
    s = z3.Solver()
    s.set("timeout", 5000)
    s.add(*enc.take_axioms())
    s.add(d > 0)
    s.add(g != n / d)
    return s.check()
