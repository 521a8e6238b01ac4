"""One Z3 session per solve: tracked facts, validity checks, minimized unsat cores, timeouts.

A *fact* is a condition the solver has accepted (a guard, an equation between given dimensions);
each is asserted as ``Implies(p, fact)`` under its own tracking literal ``p``, labelled with the
:class:`~symshape.solver.diagnostics.Origin` that stated it. :meth:`Session.check` classifies a new
condition ``c`` against the symbols' declared ranges and the facts so far:

1. decided by the canonical forms (:func:`~symshape.encoding.conds.decide`): no Z3 call;
2. ``facts and not c`` unsat: ``c`` is *proved*;
3. ``facts and c`` unsat: ``c`` is *refuted*; the unsat core over the facts' literals is minimized
   (Z3's ``core.minimize``, then deletion until every member is needed) and returned;
4. either check ``unknown`` (timeout, nonlinear arithmetic): *unknown*;
5. otherwise ``c`` is a *guard*: it depends on the symbols' values.

The Z3 solver is created on first need, so a solve whose conditions are all decided by canonical
forms never touches Z3 (``Session.z3_calls`` stays 0).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal

import z3

from symshape.encoding.conds import Cond, decide, negate
from symshape.encoding.z3 import Z3Encoder
from symshape.solver.diagnostics import Origin

__all__ = ["Session", "Verdict", "Fact"]

VerdictKind = Literal["proved", "refuted", "guard", "unknown"]


@dataclass(frozen=True)
class Fact:
    cond: Cond
    origin: Origin
    index: int


@dataclass(frozen=True)
class Verdict:
    kind: VerdictKind
    core: tuple[Fact, ...] = ()
    reason: str = ""


class Session:
    """Tracked Z3 assertions for one solve."""

    def __init__(self, timeout_ms: int = 2000) -> None:
        self.timeout_ms = timeout_ms
        self.facts: list[Fact] = []
        self._solver: z3.Solver | None = None
        self._enc = Z3Encoder()
        self._lits: list[z3.BoolRef] = []
        self._queries = 0
        self.z3_calls = 0
        self.explain_calls = 0  # Z3 checks made while minimizing an error's core (explain.py)
        self.z3_seconds = 0.0

    # -- plumbing ------------------------------------------------------------------------------
    def _z3(self) -> z3.Solver:
        if self._solver is None:
            s = z3.Solver()
            s.set("timeout", int(self.timeout_ms))
            s.set("core.minimize", True)
            self._solver = s
            for f in self.facts:
                self._assert_fact(f)
        return self._solver

    def _flush_axioms(self) -> None:
        s = self._z3()
        for ax in self._enc.take_axioms():
            s.add(ax)

    def _assert_fact(self, f: Fact) -> None:
        s = self._solver
        assert s is not None
        lit = z3.Bool(f"fact{f.index}")
        s.add(z3.Implies(lit, self._enc.cond(f.cond)))
        self._lits.append(lit)
        for ax in self._enc.take_axioms():
            s.add(ax)

    def _query(self, c: Cond) -> z3.BoolRef:
        s = self._z3()
        self._queries += 1
        q = z3.Bool(f"query{self._queries}")
        s.add(z3.Implies(q, self._enc.cond(c)))
        self._flush_axioms()
        return q

    def _check(self, assumptions: list[z3.BoolRef]) -> z3.CheckSatResult:
        s = self._z3()
        t0 = time.perf_counter()
        try:
            r = s.check(*assumptions)
        except z3.Z3Exception:
            r = z3.unknown
        self.z3_calls += 1
        self.z3_seconds += time.perf_counter() - t0
        return r

    # -- public --------------------------------------------------------------------------------
    def assume(self, c: Cond, origin: Origin) -> None:
        """Accept ``c`` as a fact, tracked under ``origin``."""
        if decide(c) is True:
            return
        f = Fact(c, origin, len(self.facts))
        self.facts.append(f)
        if self._solver is not None:
            self._assert_fact(f)

    def prove(self, c: Cond) -> bool | None:
        """True when the facts imply ``c``, False when they do not, None when unknown."""
        d = decide(c)
        if d is not None:
            return d
        q = self._query(negate(c))
        r = self._check([*self._lits, q])
        if r == z3.unsat:
            return True
        if r == z3.sat:
            return False
        return None

    def check(self, c: Cond) -> Verdict:
        """Classify ``c`` (see the module docstring)."""
        d = decide(c)
        if d is True:
            return Verdict("proved")
        if d is False:
            return Verdict("refuted")
        valid = self.prove(c)
        if valid is True:
            return Verdict("proved")
        q = self._query(c)
        r = self._check([*self._lits, q])
        if r == z3.unsat:
            return Verdict("refuted", self._minimal_core(q))
        if r == z3.unknown or valid is None:
            return Verdict("unknown", reason=str(self._z3().reason_unknown()))
        return Verdict("guard")

    def satisfiable(self) -> bool | None:
        r = self._check(list(self._lits))
        return True if r == z3.sat else False if r == z3.unsat else None

    def _minimal_core(self, q: z3.BoolRef) -> tuple[Fact, ...]:
        s = self._z3()
        index = {str(lit): i for i, lit in enumerate(self._lits)}
        core = [index[str(x)] for x in s.unsat_core() if str(x) in index]
        core.sort()
        # deletion-based minimization: drop each member whose removal keeps the core unsat
        i = 0
        while i < len(core):
            trial = core[:i] + core[i + 1 :]
            r = self._check([self._lits[j] for j in trial] + [q])
            if r == z3.unsat:
                core = trial
            else:
                i += 1
        return tuple(self.facts[j] for j in core)
