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

Only the facts *relevant* to ``c`` take part in its checks (and only they are in the Z3 solver
then: Z3 spends time on every formula it holds, even behind a literal left free; see
:meth:`Session._check`):

* the *cone of influence*: the facts connected to ``c``'s atoms through chains of shared atoms
  (leaf atoms: symbols, ``?``, unknowns, also inside ``//``, ``%``, ``max``, ``min``), walked in
  :class:`~symshape.solver.relevance.RelevanceIndex` without visiting the facts that a *dead* atom
  ``c`` does not mention makes true (a leaf whose witness constant makes every fact mentioning it
  true: the broadcast guards' fresh batch symbols), so a query's cost does not grow with the
  blocks before it;
* within the cone, a group of facts joined by atoms that ``c`` does not mention is dropped when
  constants for those atoms make every fact of the group true whatever the values of ``c``'s atoms
  (decided by canonical forms): the broadcast guard ``n == m or n == 1 or m == 1`` about a symbol
  ``m`` no later query mentions holds at ``m = 1`` for every ``n``, so it says nothing about ``n``.

Both are exact: ``c`` is provable (refutable) from all the facts iff from the relevant ones. A model
of the relevant facts and ``not c`` (or ``c``) extends to every fact: a component of facts that
shares no atom with ``c`` is satisfiable on its own (see :meth:`Session._relevant`), and a dropped
group's private atoms take their constants. An unsat core only ever names relevant facts, and a
core is minimal on its own terms, so cores keep their meaning.

Before Z3, cheap exact procedures answer what they can (:mod:`symshape.solver.models`): candidate
models of the relevant facts show a condition satisfiable or not implied (a guard needs one of
each), and a case split on a fact's equations proves what holds in every case; the verdicts are
also kept up to a renaming of the leaves (:mod:`symshape.solver.alpha`), so a block repeated over
fresh symbols is decided once. ``Session(models=False)`` asks Z3 for everything.

The Z3 solver is created on first need, so a solve whose conditions are all decided by canonical
forms (or by the cheap procedures) never touches Z3 (``Session.z3_calls`` stays 0).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import z3

from symshape.encoding.conds import Cond, decide, expand_joins, gt, map_cond, negate
from symshape.encoding.dims import Atom, Dim
from symshape.encoding.z3 import Z3Encoder
from symshape.solver.alpha import AlphaKey, AlphaMemo
from symshape.solver.diagnostics import Origin
from symshape.solver.models import implied, search
from symshape.solver.relevance import (
    Leaf,
    RelevanceIndex,
    cond_divisors,
    cond_leaves,
    groups_apart,
    leaves_of_dims,
    witness,
)

__all__ = ["Session", "Verdict", "Fact"]

VerdictKind = Literal["proved", "refuted", "guard", "unknown"]

_SCOPED_MAX = 8  # checks of at most this many facts push them and pop them after (see _check)


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

    def __init__(self, timeout_ms: int = 2000, models: bool = True) -> None:
        self.timeout_ms = timeout_ms
        #: try candidate models and case splits before Z3 (:mod:`symshape.solver.models`)
        self.models = models
        self.facts: list[Fact] = []
        self._solver: z3.Solver | None = None
        self._enc = Z3Encoder()
        self._lits: list[z3.BoolRef] = []  # the tracking literal of fact i, once Z3 is up
        self._fact_terms: list[z3.BoolRef] = []  # fact i in Z3, once Z3 is up
        self._axioms: list[z3.BoolRef] = []
        self._main: z3.Solver | None = None  # see _check
        self._base: set[int] = set()  # the facts asserted in the main solver
        self._qlits: dict[int, tuple[z3.BoolRef, z3.BoolRef]] = {}  # its queries: id -> term, lit
        self._last_main = False
        self._last_core: list[int] = []
        self._last_reason = ""
        self.z3_calls = 0
        self.explain_calls = 0  # Z3 checks made while minimizing an error's core (explain.py)
        self.z3_seconds = 0.0
        # relevance: the leaves of each fact, the members by leaf (dead leaves apart), the divisor
        # axioms
        self._fact_leaves: list[frozenset[Leaf]] = []
        self._index = RelevanceIndex()
        self._rel_divs: tuple[int, ...] = ()  # the divisor axioms kept by the last _relevant
        self._members_added = 0  # how many members the index has had (see _relevant)
        # _relevant by leaves (the facts, the divisor axioms) while _members_added is _rel_at
        self._rel_memo: dict[frozenset[Leaf], tuple[tuple[int, ...], tuple[int, ...]]] = {}
        self._rel_at = 0
        self._model_memo: dict[tuple[Cond, tuple[int, ...], tuple[int, ...]], tuple[bool, bool]] = {}
        self.model_decisions = 0  # verdicts reached by candidate models or case splits, not Z3
        # verdicts of problems up to renaming of leaves (solver/alpha.py), and of kill tests
        self._alpha_cache: dict[AlphaKey, Verdict | bool] = {}
        self._kill_cache: dict[tuple[AlphaKey, int, int], bool] = {}
        self._alpha_memo = AlphaMemo()  # the key of each condition and divisor, computed once
        # the leaves and divisors of each condition met (the divisors' axioms are members)
        self._info: dict[Cond, tuple[frozenset[Leaf], tuple[Dim, ...]]] = {}
        self._alpha_last: tuple[tuple[Cond, tuple[int, ...], tuple[int, ...]], AlphaKey | None] | None = None
        self.alpha_hits = 0
        self._divs: list[tuple[Dim, frozenset[Leaf]]] = []
        self._div_seen: set[Dim] = set()
        self._divs_lowered = 0  # the divisor axioms asserted in Z3 (see _sync_divisors)
        self._witness_cache: dict[tuple[int, frozenset[tuple[Leaf, int]]], bool] = {}
        self._prove_cache: dict[tuple[Cond, tuple[int, ...], int], bool] = {}
        self._check_cache: dict[tuple[Cond, tuple[int, ...], int], Verdict] = {}
        #: the fact indices the last Z3 check assumed (for tests and debugging)
        self.last_assumptions: tuple[int, ...] = ()

    # -- plumbing ------------------------------------------------------------------------------
    def _z3(self) -> z3.Solver:
        if self._solver is None:
            self._solver = self._new_solver()
            for f in self.facts:
                self._encode_fact(f)
        return self._solver

    def _new_solver(self) -> z3.Solver:
        """A Z3 solver holding the range axioms only."""
        s = z3.Solver()
        s.set("timeout", int(self.timeout_ms))
        s.set("core.minimize", True)
        s.add(*self._axioms)
        return s

    def _lower(self, c: Cond) -> z3.BoolRef:
        """``c`` in Z3; the range axioms of atoms met for the first time are asserted for good."""
        s = self._z3()
        t = self._enc.cond(c)
        for ax in self._enc.take_axioms():
            self._axioms.append(ax)
            s.add(ax)
            if self._main is not None:
                self._main.add(ax)
        return t

    def _sync_divisors(self) -> None:
        """Assert ``divisor > 0`` for every divisor noted so far (a condition decided without Z3
        is never lowered, but its divisors' axioms count as facts: see :meth:`_note`)."""
        while self._divs_lowered < len(self._divs):
            den = self._divs[self._divs_lowered][0]
            self._divs_lowered += 1
            ax = gt(den, 0)
            if decide(ax) is None:
                t = self._lower(ax)
                self._axioms.append(t)
                assert self._solver is not None
                self._solver.add(t)
                if self._main is not None:
                    self._main.add(t)

    def _encode_fact(self, f: Fact) -> None:
        self._fact_terms.append(self._lower(f.cond))
        self._lits.append(z3.Bool(f"fact{f.index}"))

    def _check(
        self,
        facts: Sequence[int],
        query: z3.BoolRef | None = None,
        core: bool = False,
        trial: bool = False,
    ) -> z3.CheckSatResult:
        """Check ``facts`` (ascending fact indices, each under its tracking literal) and ``query``
        (under a query literal); with ``core``, an unsat answer leaves its core (fact indices) in
        ``_last_core``. ``trial`` marks the checks that minimize a core (a subset of the facts of
        the check before).

        Z3 spends time on every formula in the solver, even behind a literal left free, so only
        the checked facts should be there. A few facts are pushed for the check and popped after
        (the *scratch* solver: range axioms only, between checks). Many facts go to the *main*
        solver, which keeps the facts and queries of checks whose fact sets grow (the cone of an
        atom, as facts are added), so that Z3 does not lower them again and keeps what it learned;
        it starts afresh when a check does not contain its facts, or when old queries pile up.
        """
        self._z3()
        self._sync_divisors()
        self.last_assumptions = tuple(facts)
        want = set(facts)
        use_main = (trial and self._last_main) or (not trial and len(want) > _SCOPED_MAX)
        if use_main:
            s = self._main
            if (
                s is None
                or not (self._base <= want or (trial and want <= self._base))
                or len(self._qlits) > _SCOPED_MAX + 2 * len(self._base)
            ):
                s = self._main = self._new_solver()
                self._base, self._qlits = set(), {}
            for i in sorted(want - self._base):
                s.add(z3.Implies(self._lits[i], self._fact_terms[i]))
            self._base |= want
        else:
            s = self._z3()
            s.push()
        if not trial:
            self._last_main = use_main
        assumptions = [self._lits[i] for i in facts]
        t0 = time.perf_counter()
        try:
            if not use_main:
                for i in facts:
                    s.add(z3.Implies(self._lits[i], self._fact_terms[i]))
            if query is not None:
                hit = self._qlits.get(query.get_id()) if use_main else None
                if hit is not None and hit[0].eq(query):
                    ql = hit[1]
                else:
                    ql = z3.Bool(f"query{len(self._qlits)}")
                    s.add(z3.Implies(ql, query))
                    if use_main:
                        self._qlits[query.get_id()] = (query, ql)
                assumptions.append(ql)
            r = s.check(*assumptions)
            if r == z3.unsat and core:
                index = {str(self._lits[i]): i for i in facts}
                self._last_core = sorted(index[str(x)] for x in s.unsat_core() if str(x) in index)
            elif r == z3.unknown:
                self._last_reason = str(s.reason_unknown())
        except z3.Z3Exception as e:
            r = z3.unknown
            self._last_reason = str(e)
        finally:
            if not use_main:
                s.pop()
        self.z3_calls += 1
        self.z3_seconds += time.perf_counter() - t0
        return r

    # -- relevance -----------------------------------------------------------------------------
    def leaves(self, c: Cond) -> frozenset[Leaf]:
        """:func:`~symshape.solver.relevance.cond_leaves` (remembered for the conditions the
        session has met)."""
        hit = self._info.get(c)
        return (hit if hit is not None else self._cond_info(c))[0]

    def _cond_info(self, c: Cond) -> tuple[frozenset[Leaf], tuple[Dim, ...]]:
        """The leaves and the divisors of ``c``; with the cheap procedures, read off the walk that
        makes its key up to renaming (which the checks about ``c`` need anyway)."""
        got = self._alpha_memo.leaves_divisors(c) if self.models else None
        if got is None:
            return cond_leaves(c), tuple(cond_divisors(c))
        return got  # type: ignore[return-value]

    def _note(self, c: Cond) -> frozenset[Leaf]:
        """Add the axioms ``divisor > 0`` of ``c``'s divisors as members (each is asserted for
        good once ``c`` is lowered, so it acts as a fact that every check assumes); ``c``'s
        leaves."""
        hit = self._info.get(c)
        if hit is not None:
            return hit[0]
        info = self._info[c] = self._cond_info(c)
        for den in info[1]:
            if den in self._div_seen:
                continue
            self._div_seen.add(den)
            leaves = leaves_of_dims([den])
            self._divs.append((den, leaves))
            self._add_member(~(len(self._divs) - 1), leaves)
        return info[0]

    def _add_member(self, member: int, leaves: frozenset[Leaf]) -> None:
        """Index fact ``member`` (divisor axiom ``~member``) with the modes in which each of its
        leaves kills it (:mod:`symshape.solver.relevance`)."""

        def key() -> tuple[AlphaKey, tuple[Atom, ...]] | None:
            if not self.models:
                return None
            if member >= 0:
                return self._alpha_memo.cond(self.facts[member].cond)
            return self._alpha_memo.dim(self._divs[~member][0])

        def true_at(y: Leaf, mode: int) -> bool:
            return self._true_at(member, frozenset((y,)), mode)

        kills = self._index.kill_modes(leaves, true_at, key, self._kill_cache)
        self._index.add(member, leaves, kills)
        self._members_added += 1

    def _relevant(self, c: Cond) -> tuple[int, ...]:
        """The indices (ascending) of the facts that can matter to ``c``: its cone of influence,
        less the groups of facts that constants for their private atoms make true.

        Dropping the components that share no atom with ``c`` relies on each of them being
        satisfiable. Were a set of facts unsatisfiable, every condition would follow from all
        the facts, vacuously, and not from the cone. It cannot happen: the solver assumes a
        condition only after :meth:`check` found it a guard (satisfiable together with every
        earlier fact), a refuted condition is never assumed (it is reported as an error when
        stated), and a fact the solver assumes without a check only defines a fresh symbol.
        """
        xs = self._note(c)  # ``negate(c)`` has the same divisors (negation keeps the atoms)
        # what follows depends on the leaves and the members only: a question about the same
        # leaves as one before, with no member added since (a broadcast's guard after its
        # proofs, a reshape's conditions one after the other), has the same answer
        memo = self._rel_memo
        if self._rel_at != self._members_added:
            memo.clear()
            self._rel_at = self._members_added
        hit = memo.get(xs)
        if hit is not None:
            self._rel_divs = hit[1]
            return hit[0]
        rel = self._relevant_to(xs)
        memo[xs] = (rel, self._rel_divs)
        return rel

    def _relevant_to(self, xs: frozenset[Leaf]) -> tuple[int, ...]:
        """:meth:`_relevant` for a question over the leaves ``xs``."""
        kept = self._index.bounded_cone(xs, None)
        if not kept:  # (the common case for a fresh block's first question)
            self._rel_divs = ()
            return ()
        cone: list[int] = []
        divs: list[int] = []
        for i in kept:
            if i >= 0:
                cone.append(i)
            else:
                divs.append(~i)
        if len(cone) == 1 and not divs:  # (one fact: a group of its own)
            self._rel_divs = ()
            return () if self._vacuous((cone[0],), (), xs) else (cone[0],)
        cone.sort()
        divs.sort()
        self._rel_divs = tuple(divs)
        if not cone:
            return ()
        # group the cone's facts (and divisor axioms) by the atoms that ``c`` does not mention
        members = [(i, self._fact_leaves[i]) for i in cone] + [(~j, self._divs[j][1]) for j in divs]
        groups = groups_apart(members, xs)
        drop: set[int] = set()
        for g in groups:
            fs = tuple(sorted(i for i in g if i >= 0))
            if fs and self._vacuous(fs, tuple(sorted(~i for i in g if i < 0)), xs):
                drop.update(fs)
        return tuple(i for i in cone if i not in drop)

    def _vacuous(self, fs: tuple[int, ...], ds: tuple[int, ...], xs: frozenset[Leaf]) -> bool:
        """Whether constants for the atoms of facts ``fs`` (and divisor axioms ``ds``) outside
        ``xs`` make them all true, for every value of the atoms in ``xs``."""
        for mode in (0, 1):
            if all(self._true_at(i, self._fact_leaves[i] - xs, mode) for i in fs) and all(
                self._true_at(~j, self._divs[j][1] - xs, mode) for j in ds
            ):
                return True
        return False

    def _true_at(self, member: int, ys: frozenset[Leaf], mode: int) -> bool:
        """Whether fact ``member`` (divisor axiom ``~member`` when negative) is true, by canonical
        forms, once each atom of ``ys`` takes its constant (:func:`~symshape.solver.relevance.witness`)."""
        if not ys and member >= 0:
            return False  # a fact is never true on its own (``assume`` drops those)
        env = {y: witness(y, mode) for y in ys}
        key = (member, frozenset(env.items()))
        hit = self._witness_cache.get(key)
        if hit is not None:
            return hit

        def sub(d: Dim) -> Dim:
            return d.subs(env)  # type: ignore[arg-type]

        if member >= 0:
            ok = decide(map_cond(self.facts[member].cond, sub)) is True
        else:
            ok = decide(gt(sub(self._divs[~member][0]), 0)) is True
        self._witness_cache[key] = ok
        return ok

    def simplifier_memos(
        self,
    ) -> tuple[dict[tuple[AlphaKey, int, int], bool], AlphaMemo, Callable[[Cond], frozenset[Leaf]]]:
        """What the guard simplifier (:mod:`symshape.solver.simplify`) can reuse: the kill
        modes by key (:meth:`RelevanceIndex.kill_modes`' memo), the keys up to renaming, and
        :meth:`leaves`."""
        return self._kill_cache, self._alpha_memo, self.leaves

    # -- public --------------------------------------------------------------------------------
    def expand_joins(self, c: Cond) -> Cond:
        """:func:`~symshape.encoding.conds.expand_joins`: ``c`` itself when it has a key up to
        renaming (a join of branches has none, see :mod:`symshape.solver.alpha`), which the
        checks about ``c`` compute anyway; otherwise by a walk over ``c``."""
        if self.models and self._alpha_memo.cond(c) is not None:
            return c
        return expand_joins(c)

    def assume(self, c: Cond, origin: Origin) -> None:
        """Accept ``c`` as a fact, tracked under ``origin``."""
        if decide(c) is True:
            return
        f = Fact(c, origin, len(self.facts))
        self.facts.append(f)
        leaves = self._note(c)
        self._fact_leaves.append(leaves)
        if leaves:
            self._add_member(f.index, leaves)
        if self._solver is not None:
            self._encode_fact(f)

    def prove(self, c: Cond) -> bool | None:
        """True when the facts imply ``c``, False when they do not, None when unknown."""
        d = decide(c)
        if d is not None:
            return d
        return self._prove(c, self._relevant(c))

    def _prove(self, c: Cond, rel: tuple[int, ...]) -> bool | None:
        key = (c, rel, len(self._divs))
        hit = self._prove_cache.get(key)
        if hit is not None:
            return hit
        self.last_assumptions = rel
        akey = self._alpha("prove", c, rel)
        if akey is not None:
            ahit = self._alpha_cache.get(akey)
            if isinstance(ahit, bool):
                self.alpha_hits += 1
                self._prove_cache[key] = ahit
                return ahit
        proved = self._prove_uncached(c, rel)
        if proved is not None:
            self._prove_cache[key] = proved
            if akey is not None:
                self._alpha_cache[akey] = proved
        return proved

    def _alpha(self, tag: str, c: Cond, rel: tuple[int, ...]) -> AlphaKey | None:
        """The key of the question about ``c`` under the relevant facts and divisor axioms, up to
        renaming leaves (:mod:`symshape.solver.alpha`); None without the cheap procedures."""
        if not self.models:
            return None
        problem = (c, rel, self._rel_divs)
        last = self._alpha_last
        if last is not None and last[0] == problem:
            body = last[1]  # check() and its _prove() ask about the same problem
        else:
            body = self._alpha_memo.joint(
                [c, *(self.facts[i].cond for i in rel)], [self._divs[j][0] for j in self._rel_divs]
            )
            self._alpha_last = (problem, body)
        return None if body is None else (tag, *body)

    def _prove_uncached(self, c: Cond, rel: tuple[int, ...]) -> bool | None:
        if self.models:
            if self._models(c, rel)[1]:  # a model of the facts where c fails
                self.model_decisions += 1
                return False
            if implied(c, [self.facts[i].cond for i in rel]):
                self.model_decisions += 1
                return True
        neg = negate(c)
        self._note(neg)  # no new divisor, unless a simplification made one
        r = self._check(rel, self._lower(neg))
        if r == z3.unknown:
            return None
        return bool(r == z3.unsat)

    def check(self, c: Cond) -> Verdict:
        """Classify ``c`` (see the module docstring)."""
        d = decide(c)
        if d is True:
            return Verdict("proved")
        if d is False:
            return Verdict("refuted")
        rel = self._relevant(c)
        key = (c, rel, len(self._divs))
        hit = self._check_cache.get(key)
        if hit is not None:
            return hit
        akey = self._alpha("check", c, rel)
        if akey is not None:
            ahit = self._alpha_cache.get(akey)
            if isinstance(ahit, Verdict):
                self.alpha_hits += 1
                self.last_assumptions = rel
                self._check_cache[key] = ahit
                return ahit
        v = self._classify(c, rel)
        if v.kind != "unknown":
            self._check_cache[key] = v
            if akey is not None and v.kind in ("proved", "guard"):  # a core names facts: not kept
                self._alpha_cache[akey] = v
        return v

    def known_verdict(self, c: Cond) -> str | None:
        """The kind of :meth:`check`'s verdict on ``c`` when it needs no reasoning: decided by
        canonical forms, or remembered for the question (or one it renames); None otherwise.
        A remembered verdict is kept as :meth:`check` keeps it, so that check finds it."""
        d = decide(c)
        if d is not None:
            return "proved" if d else "refuted"
        rel = self._relevant(c)
        key = (c, rel, len(self._divs))
        hit = self._check_cache.get(key)
        if hit is None:
            akey = self._alpha("check", c, rel)
            ahit = None if akey is None else self._alpha_cache.get(akey)
            if not isinstance(ahit, Verdict):
                return None
            # (what check() does on this hit)
            self.alpha_hits += 1
            self.last_assumptions = rel
            self._check_cache[key] = hit = ahit
        return hit.kind

    def _classify(self, c: Cond, rel: tuple[int, ...]) -> Verdict:
        valid = self._prove(c, rel)
        if valid is True:
            return Verdict("proved")
        if self.models and valid is False and self._models(c, rel)[0]:
            self.model_decisions += 1
            return Verdict("guard")  # a model where c holds, one where it fails
        q = self._lower(c)
        r = self._check(rel, q, core=True)
        if r == z3.unsat:
            return Verdict("refuted", self._minimal_core(q))
        if r == z3.unknown or valid is None:
            return Verdict("unknown", reason=self._last_reason)
        return Verdict("guard")

    def _models(self, c: Cond, rel: tuple[int, ...]) -> tuple[bool, bool]:
        """Whether candidate models of the relevant facts make ``c`` true, and false
        (:func:`symshape.solver.models.search`; memoized per query)."""
        key = (c, rel, self._rel_divs)
        hit = self._model_memo.get(key)
        if hit is None:
            divs = [self._divs[j][0] for j in self._rel_divs]
            leaves: set[Leaf] = set(cond_leaves(c))
            for i in rel:
                leaves |= self._fact_leaves[i]
            for j in self._rel_divs:
                leaves |= self._divs[j][1]
            facts = [self.facts[i].cond for i in rel]
            hit = search(c, facts, divs, sorted(leaves, key=lambda a: a._key), (True, True))
            self._model_memo[key] = hit
        return hit

    def satisfiable(self) -> bool | None:
        """Whether all the facts together are satisfiable."""
        r = self._check(range(len(self.facts)))
        return True if r == z3.sat else False if r == z3.unsat else None

    def _minimal_core(self, q: z3.BoolRef) -> tuple[Fact, ...]:
        core = list(self._last_core)
        # deletion-based minimization: drop each member whose removal keeps the core unsat
        i = 0
        while i < len(core):
            trial = core[:i] + core[i + 1 :]
            if self._check(trial, q, trial=True) == z3.unsat:
                core = trial
            else:
                i += 1
        return tuple(self.facts[j] for j in core)
