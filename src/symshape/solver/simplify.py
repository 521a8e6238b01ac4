"""Guards simplified and deduplicated before they are reported.

:func:`simplify_guards` takes conditions and returns an equivalent list (their conjunction is
the same set of sizes, under the symbols' declared ranges) that reads better:

1. every condition is rewritten by the rules of :mod:`symshape.encoding.simplify` (common
   factors, ``max``/``min`` against an argument, divisibility, one-symbol patterns), and a
   rewrite is kept only when Z3 proves it equivalent to the original;
2. conjunctions are split into their members, and repeats are dropped;
3. a condition implied by the others (``h >= 2`` beside ``h >= 4``) is dropped, when Z3 proves
   the implication. The premises are the condition's relevance cone only
   (:class:`symshape.solver.relevance.RelevanceIndex`: the conditions sharing symbols with it,
   transitively, less the groups that constants for their own symbols make true), so a program
   that states a guard per block over a fresh batch ``m_i`` asks about one block at a time; a
   candidate counter-model (:func:`symshape.solver.models.search`) settles "not implied" before
   Z3 is asked, and Z3 is asked at most :data:`MAX_UNPROVED_IMPLICATIONS` times in vain.

Z3 runs with a resource limit (deterministic, so a report is the same on every run) and a
timeout as a backstop; whatever Z3 does not prove stays as it was. :func:`simplify_guard_list`
does the same for :class:`~symshape.solver.diagnostics.Guard` objects, keeping each kept
condition's origin; :func:`pinned_symbols` finds the guards that pin a symbol to one value.

>>> from symshape.encoding.dims import dims, floordiv
>>> from symshape.encoding.conds import ge
>>> h, w = dims("h w")
>>> [str(c) for c in simplify_guards([ge(h, 2), ge(w, 2), ge(floordiv(h, 2), 2), ge(floordiv(w, 2), 2)])]
['h >= 4', 'w >= 4']
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import z3

from symshape.encoding.conds import BoolConst, BoolOp, Cmp, Cond, decide, map_cond
from symshape.encoding.dims import Atom, Dim, Sym
from symshape.encoding.simplify import is_plain, rewrite, scan_one_symbol, single_symbol
from symshape.encoding.z3 import Z3Encoder
from symshape.errors import SymshapeError
from symshape.solver.alpha import AlphaKey, AlphaMemo
from symshape.solver.diagnostics import Guard
from symshape.solver.models import search
from symshape.solver.relevance import (
    Leaf,
    RelevanceIndex,
    cond_divisors,
    cond_leaves,
    witness,
)
from symshape.solver.session import Session

__all__ = [
    "simplify_guards",
    "simplify_guard_list",
    "simplify_cond",
    "pinned_symbol",
    "Prover",
    "MAX_IMPLICATION_GUARDS",
    "MAX_MODEL_LEAVES",
    "MAX_UNPROVED_IMPLICATIONS",
    "RLIMIT",
    "TIMEOUT_MS",
]

RLIMIT = 1_000_000
"""Z3's resource limit for one check (deterministic, unlike a timeout: the same checks succeed on
every run, however loaded the machine). About 0.6 s of Z3 work; the hardest of the issue's
examples (``512*n*s % (480*n) == 0`` is ``s % 15 == 0``) needs half of it."""

TIMEOUT_MS = 30_000
"""A backstop timeout for one check, far beyond what :data:`RLIMIT` allows, so that it never
decides a result on a loaded machine."""

MAX_IMPLICATION_GUARDS = 200
"""A guard whose relevance cone (:meth:`~symshape.solver.relevance.RelevanceIndex.cone`: the
guards that can bear on it) holds more than this many guards is kept without asking whether
they imply it (repeats are still dropped)."""

MAX_UNPROVED_IMPLICATIONS = 4
"""After this many implications Z3 did not prove, no more are asked of it in one simplification
(each costs up to :data:`RLIMIT`; a program with hundreds of independent guards would otherwise
spend minutes proving that none is redundant). Counter-models are still looked for."""

MAX_MODEL_LEAVES = 64
"""Above this many symbols, a candidate counter-model is not looked for before Z3."""


class Prover:
    """Z3 checks in one context (made on the first check), and the simplified form of each
    condition seen (guards repeat across layers). Each check lowers its conditions afresh and
    asserts the range and divisor axioms of their atoms only, so that it is as small as the
    conditions it is about, whatever else was checked before. ``z3_checks`` counts the checks
    (:meth:`implies` is also what :mod:`symshape.onnx.export_simplify` asks)."""

    def __init__(self, session: Session | None = None) -> None:
        self._ctx: z3.Context | None = None
        self.memo: dict[Cond, Cond] = {}
        # conditions up to renaming their symbols (solver/alpha.py): a block repeated over fresh
        # symbols states the same guards again, each over other symbols
        self.rewrite_memo: dict[AlphaKey, tuple[Cond | None, tuple[Atom, ...]]] = {}  # None: unchanged
        self.implied_memo: dict[AlphaKey, bool] = {}
        self.unproved_implications = 0
        self.z3_checks = 0
        if session is None:
            self.kill_memo: dict[tuple[AlphaKey, int, int], bool] = {}  # (c's key, leaf, mode)
            self.alpha = AlphaMemo()
            self.leaves: Callable[[Cond], frozenset[Leaf]] = cond_leaves
        else:
            # the guards were the session's facts: their keys, leaves and kill modes are known
            # (the same questions, asked the same way: see Session._add_member)
            self.kill_memo, self.alpha, self.leaves = session.simplifier_memos()

    def _valid(self, premises: Sequence[Cond], goal: Cond, iff: bool = False) -> bool:
        """``premises => goal`` (``premises[0] <=> goal`` with ``iff``) holds for every value of
        the symbols in their ranges (proved; False when Z3 finds a counterexample or gives up)."""
        if self._ctx is None:
            self._ctx = z3.Context()
        self.z3_checks += 1
        enc = Z3Encoder(self._ctx)
        prem = [enc.cond(p) for p in premises]
        g = enc.cond(goal)
        f = prem[0] == g if iff else z3.Implies(z3.And(*prem), g)
        s = z3.Solver(ctx=self._ctx)
        s.set("rlimit", RLIMIT)
        s.set("timeout", TIMEOUT_MS)
        s.add(*enc.take_axioms())
        s.add(z3.Not(f))
        try:
            return bool(s.check() == z3.unsat)
        except z3.Z3Exception:  # pragma: no cover - a resource limit surfaces as unknown
            return False

    def equivalent(self, a: Cond, b: Cond) -> bool:
        return self._valid([a], b, iff=True)

    def implies(self, premises: Sequence[Cond], c: Cond, leaves: Sequence[frozenset[Leaf]]) -> bool:
        """Whether ``premises`` imply ``c`` (``leaves``: the leaves of each, ``c``'s last); the
        answer is remembered for the problem up to renaming its symbols."""
        if not premises:
            return False
        key = self.alpha.joint([c, *premises])
        hit = None if key is None else self.implied_memo.get(key)
        if hit is None:
            hit = self._implies(premises, c, leaves)
            if key is not None:
                self.implied_memo[key] = hit
        return hit

    def _implies(self, premises: Sequence[Cond], c: Cond, leaves: Sequence[frozenset[Leaf]]) -> bool:
        if _counter_model(premises, c, leaves):
            return False  # what Z3 would find, at a fraction of the cost
        if self.unproved_implications >= MAX_UNPROVED_IMPLICATIONS:
            return False  # Z3 has been asked enough: the rest stay (they are true, maybe redundant)
        if self._valid(premises, c):
            return True
        self.unproved_implications += 1
        return False


_Prover = Prover  # (its former name, which tests/test_simplify_cones.py imports)


def _counter_model(premises: Sequence[Cond], c: Cond, leaves: Sequence[frozenset[Leaf]]) -> bool:
    """A candidate assignment (:func:`symshape.solver.models.search`) where every premise holds
    and ``c`` fails: then the premises do not imply ``c``, and Z3 need not be asked."""
    every: frozenset[Leaf] = frozenset().union(*leaves)
    if len(every) > MAX_MODEL_LEAVES:
        return False
    divisors = cond_divisors(c)
    for p in premises:
        divisors.extend(d for d in cond_divisors(p) if d not in divisors)
    order = sorted(every, key=lambda a: a._key)
    return search(c, premises, divisors, order, (False, True), max_leaves=MAX_MODEL_LEAVES)[1]


def _index(conds: Sequence[Cond], prover: Prover) -> tuple[RelevanceIndex, list[frozenset[Leaf]]]:
    """The conditions as members of a :class:`~symshape.solver.relevance.RelevanceIndex` (the
    modes in which each leaf kills each condition, decided by canonical forms; the same for
    conditions that differ by a renaming of symbols), and their leaves."""
    index = RelevanceIndex()
    all_leaves = [prover.leaves(c) for c in conds]
    for i, (c, leaves) in enumerate(zip(conds, all_leaves)):
        kills = index.kill_modes(
            leaves,
            functools.partial(_true_at, c),
            functools.partial(prover.alpha.cond, c),
            prover.kill_memo,
        )
        index.add(i, leaves, kills)
    return index, all_leaves


def _true_at(c: Cond, y: Leaf, mode: int) -> bool:
    """``c`` is true by canonical forms once ``y`` takes its witness in ``mode``
    (:func:`~symshape.solver.relevance.witness`), whatever its other atoms are."""
    env = {y: witness(y, mode)}
    try:
        return decide(map_cond(c, lambda d: d.subs(env))) is True  # type: ignore[arg-type]
    except (SymshapeError, ArithmeticError):
        return False


def _size(c: Cond) -> int:
    return len(str(c))


def _all_plain(c: Cond) -> bool:
    """Every comparison in ``c`` is already plain (``n == 1 or n == 5``): nothing to gain."""
    match c:
        case BoolOp(_, xs):
            return all(_all_plain(x) for x in xs)
        case Cmp():
            return is_plain(c)
    return isinstance(c, BoolConst)


def _simplify_one(c: Cond, prover: Prover) -> Cond:
    if _all_plain(c):
        return c
    hit = prover.memo.get(c)
    if hit is None:
        hit = prover.memo[c] = _rewrite_renamed(c, prover)
    return hit


def _rewrite_renamed(c: Cond, prover: Prover) -> Cond:
    """:func:`_rewrite_proved`, or the rewrite of a condition seen before that ``c`` renames (the
    renaming keeps the symbols' ranges, so it keeps the equivalence proved for that one)."""
    k = prover.alpha.cond(c)
    if k is None:
        return _rewrite_proved(c, prover)
    akey, order = k
    hit = prover.rewrite_memo.get(akey)
    if hit is None:
        best = _rewrite_proved(c, prover)
        prover.rewrite_memo[akey] = (None if best is c else best, order)
        return best
    best0, order0 = hit
    if best0 is None:
        return c  # unchanged there, so unchanged here
    env = {a: Dim(((((b, 1),), 1),)) for a, b in zip(order0, order)}
    renamed = map_cond(best0, lambda d: d.subs(env))  # type: ignore[arg-type]
    return renamed if _size(renamed) <= _size(c) else _rewrite_proved(c, prover)


def _rewrite_proved(c: Cond, prover: Prover) -> Cond:
    best: Cond = c
    cand = rewrite(c)
    if cand != c and _size(cand) <= _size(c) and prover.equivalent(c, cand):
        best = cand
    s = single_symbol(best)
    if s is not None and not is_plain(best):
        scanned = scan_one_symbol(best, s)
        if scanned is not None and scanned != best and prover.equivalent(c, scanned):
            best = scanned
    return best


def simplify_cond(c: Cond) -> Cond:
    """One condition, rewritten (and proved equivalent), e.g. ``h//2 >= 2`` to ``h >= 4``."""
    return _simplify_one(c, Prover())


def _members(c: Cond) -> list[Cond]:
    return list(c.args) if isinstance(c, BoolOp) and c.op == "and" else [c]


def _simplify(items: Sequence[tuple[Cond, int]], prover: Prover) -> list[tuple[Cond, int]]:
    """``(condition, owner)`` pairs simplified; ``owner`` says which input each came from."""
    out: list[tuple[Cond, int]] = []
    seen: set[Cond] = set()
    for c, who in items:
        for m in _members(_simplify_one(c, prover)):
            for part in _members(m):
                if part == BoolConst(True) or part in seen:
                    continue
                seen.add(part)
                out.append((part, who))
    index, leaves = _index([c for c, _ in out], prover)
    keep = [True] * len(out)
    for i, (c, _) in enumerate(out):
        # the relevance cone of c among the guards (solver/relevance.py): a group of guards that
        # constants for its own symbols make true has no bearing on c, so it is left out
        cone = index.bounded_cone(leaves[i], MAX_IMPLICATION_GUARDS + 1)
        if cone is None:
            continue
        near = [j for j in sorted(cone) if j != i and keep[j]]
        if near and prover.implies([out[j][0] for j in near], c, [leaves[j] for j in near] + [leaves[i]]):
            keep[i] = False
    return [x for x, k in zip(out, keep) if k]


def simplify_guards(conds: Sequence[Cond]) -> list[Cond]:
    """An equivalent, simpler list of conditions: each rewritten, conjunctions split, repeats and
    implied ones dropped (see the module's docstring). The order follows the input."""
    prover = Prover()
    return [c for c, _ in _simplify([(c, i) for i, c in enumerate(conds)], prover)]


def simplify_guard_list(guards: Sequence[Guard], session: Session | None = None) -> list[Guard]:
    """:func:`simplify_guards` for guards: each kept condition keeps the origin and code of the
    guard it came from (a guard that did not change is returned as it was). ``session``: the
    session that found the guards, whose memos of keys, leaves and kill modes are reused."""
    if not guards:
        return []
    prover = Prover(session)
    out: list[Guard] = []
    for c, i in _simplify([(g.cond, i) for i, g in enumerate(guards)], prover):
        g = guards[i]
        out.append(g if c is g.cond or c == g.cond else Guard(c, g.origin, g.code))
    return out


def pinned_symbol(c: Cond) -> tuple[Dim, int] | None:
    """``(s, k)`` when ``c`` is ``s == k`` for a given symbol ``s`` (the guard pins it)."""
    if isinstance(c, Cmp) and c.op == "==":
        for a, b in ((c.lhs, c.rhs), (c.rhs, c.lhs)):
            if isinstance(a.atom, Sym) and b.constant_value is not None:
                return a, b.constant_value
    return None
