"""Explaining a type error: a minimal set of program members whose contributions conflict.

After :meth:`TypeSolver.solve <symshape.solver.solve.TypeSolver.solve>` has run, every error is
re-checked as one Z3 problem over *positions* (the structure and dimensions of each hole and of each
annotated type occurrence), in a fresh Z3 context:

* an **annotation** contributes "this occurrence is the annotated type";
* a **unification** (a binding, an argument, a return annotation) contributes "these two types are
  equal" (form, rank, dtype, arity, size, and dimension by dimension; sizes make the occurs check
  an arithmetic contradiction); a polymorphic function type is instantiated afresh where it occurs;
* a **relation instance** (an operator call) contributes ``premise -> parts``: the relation is
  re-run in a sandbox solver on *generic* inputs (each input dimension a fresh symbol, the input
  structure as it was solved), so its outputs come back as expressions over those symbols and its
  conditions as formulas over them — every condition, also one that held at the real values (it
  ties the inputs together: a broadcast's output is pinned by either operand); the premise says
  the inputs have the solved structure. When the generic run cannot reproduce the real one (a
  relation whose behaviour depends on a dimension's value, as ``squeeze`` without axes), constant
  dimensions are kept in the premise, and as a last resort every input dimension is (the relation
  is then described only at the values it saw). A failing run contributes ``not premise``. For a
  *structural* conflict (rank, dtype, arity, form) each output attribute gets its own premise,
  found by perturbing the inputs' structure (:class:`~symshape.solver.structural.StructuralRun`).

Members that only move positions around (a binding between holes, an elementwise operator, a
transpose, an output rank or dtype that follows an input's) are *links*: background, never in a
core; the notes' last line names those the conflict flows through.

**Search.** The candidates are ordered nearest the error first (through holes and type
occurrences, then shared weights, then symbols) and added to one Z3 solver in batches that double
in size, each non-link member under its own tracking literal, until they conflict; a binary search
finds the shortest conflicting prefix (so the explanation is as local as it can be); Z3's unsat
core of that prefix is minimized by deletion, the farthest member first. The error's primary
member (where the conflict surfaced) is always in; the other errors' primary members are left out,
so each error is explained on its own. The result is deterministic and *minimal*: dropping any
listed member makes the rest satisfiable. Inside each kept member the same deletion finds which
parts mattered (output dimensions, ranks, dtypes, conditions, the arguments of a call), which
become the notes' text ("flatten gives `Tensor[(n, 12), float32]` (dimension 1 is `12`)").

Nothing caps the number of candidates; a budget does (:func:`_budget`: 2.5 Z3 timeouts, at least
2 s, per error). It covers every Z3 check of the explanation, naming each member's parts included,
and is counted in Z3's resource units (``rlimit``, 4000 per millisecond, a count of Z3's work that
is the same every run, so a cut-short report is the same every run too), each check limited to the
units left; the wall clock is a backstop (twice the budget, and four budgets for all the errors of
one program). If it runs out while minimizing, the diagnostic keeps the (unminimized) core it has
and says so ("the explanation was not minimized: ..."); while naming parts, the members left are
named without them ("the explanation was cut short ..."); if no conflict was found in time, a note
says that ("the explanation was not found: ...").

The formulas are kept on the diagnostic (:class:`Evidence`), so tests can re-check minimality.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import z3

from symshape.encoding.types import (
    FuncType,
    IncompleteType,
)
from symshape.solver.diagnostics import Diagnostic, Note, Origin, OriginKind, assert_never
from symshape.solver.evidence import Z3Evidence
from symshape.solver.explain_budget import _TOTAL_BUDGETS
from symshape.solver.explain_budget import _Budget as _Budget  # (tests replace these two)
from symshape.solver.explain_budget import _budget as _budget
from symshape.solver.positions import Part as _Part
from symshape.solver.positions import Unsupported as _Unsupported
from symshape.solver.positions import attr_of as _attr
from symshape.solver.positions import dim_at
from symshape.source import Span

if TYPE_CHECKING:
    from symshape.solver.solve import TypeSolver
from symshape.solver.explain_candidates import Candidate, bfs_order, candidates
from symshape.solver.explain_members import Explainer, Member

__all__ = ["explain_errors"]


def explain_errors(solver: TypeSolver) -> None:
    """Replace the notes of each explainable error in ``solver.errors`` by its minimal core."""
    targets = [
        i
        for i, d in enumerate(solver.errors)
        if d.origin is not None and d.code not in _NOT_CONFLICTS and d.evidence is None
    ]
    if not targets:
        return
    cands = candidates(solver)
    failing = {d.origin.seq for d in solver.errors if d.origin is not None}
    memo: dict[object, Any] = {}  # structural decisions, shared by the errors' explanations
    end = time.perf_counter() + _TOTAL_BUDGETS * _budget(solver).seconds
    for i in targets:
        d = solver.errors[i]
        assert d.origin is not None
        if d.origin.seq not in cands:
            continue
        budget = _budget(solver)
        budget.deadline = min(budget.deadline, end)
        if time.perf_counter() > end:
            new = None
            budget.reason = "the time for explaining this program's errors ran out"
        else:
            try:
                new = _explain_one(solver, cands, d, failing - {d.origin.seq}, budget, memo)
                if new is None and not budget.reason and d.code in _STRUCTURAL:
                    # the per-output premises lost the conflict: the plain contributions
                    new = _explain_one(solver, cands, d, failing - {d.origin.seq}, budget, memo, False)
            except _Unsupported as e:
                new = None
                budget.reason = f"a type the explainer cannot describe ({e})"
            except z3.Z3Exception as e:
                new = None
                budget.reason = f"Z3 failed ({e})"
            except RecursionError:
                new = None
                budget.reason = "the types are too deeply nested"
        if new is not None:
            solver.errors[i] = new
        elif budget.reason:
            solver.errors[i] = replace(
                d, notes=(*d.notes, Note(f"the explanation was not found: {budget.reason}", None))
            )


_CUT = "some members are named without the parts of them that the conflict needs"

_STRUCTURAL = frozenset(
    {
        "rank-mismatch",
        "dtype-mismatch",
        "arity-mismatch",
        "type-mismatch",
        "kind-mismatch",
        "occurs-check",
        "axis-out-of-range",
    }
)
_NOT_CONFLICTS = frozenset({"unproven-guard", "impure-call", "undefined-var", "inconclusive"})


class _Problem:
    """The members built so far in one Z3 solver: links and premises as background, every other
    member under its own tracking literal (so any subset can be checked, and Z3 names a core)."""

    def __init__(self, ex: Explainer, structural: bool, timeout_ms: int, calls: Any, budget: _Budget) -> None:
        self.ex = ex
        self.structural = structural
        self.s = z3.Solver(ctx=ex.ctx)
        self.timeout_ms = int(timeout_ms)
        self.budget = budget
        self.cut = False  # a part-naming check was skipped or undecided (the budget ran out)
        self._base = budget.used  # (the structural retry's problem continues the count)
        self.calls = calls  # the session, whose explain_calls counts the checks
        self.background: list[Any] = []
        self.order: list[int] = []  # members under literals, in the order they were added
        self.lits: dict[int, Any] = {}
        self.fs: dict[int, Any] = {}
        self._axioms = 0
        self._done: set[int] = set()

    def add_background(self, fs: Sequence[Any]) -> None:
        for f in fs:
            self.background.append(f)
            self.s.add(f)

    def sync(self) -> None:
        """Assert what the explainer built since the last call."""
        ex = self.ex
        ex.axioms.extend(ex.z.take_axioms())
        self.add_background(ex.axioms[self._axioms :])
        self._axioms = len(ex.axioms)
        for q, m in sorted(ex.members.items()):
            if q in self._done:
                continue
            self._done.add(q)
            if not self.structural:
                self.add_background(m.premise)
            self.add_background([p.formula for p in m.parts if p.forward])
            if m.link:
                self.add_background([m.formula(ex.ctx, structure=self.structural)])
            else:
                self.put(q, m.formula(ex.ctx, structure=self.structural))

    def put(self, q: int, f: Any) -> None:
        """(Re)state member ``q`` as ``f`` under a fresh literal."""
        lit = z3.Bool(f"member{q}_{len(self.lits)}", self.ex.ctx)
        self.s.add(z3.Implies(lit, f))
        self.lits[q] = lit
        self.fs[q] = f
        if q not in self.order:
            self.order.append(q)

    def check(self, seqs: Sequence[int]) -> bool | None:
        """True: the members ``seqs`` conflict; False: they do not; None: Z3 could not tell."""
        self.calls.explain_calls += 1
        self._limit()
        r = self.s.check(*[self.lits[q] for q in seqs])
        self._spent()
        return True if r == z3.unsat else False if r == z3.sat else None

    def _limit(self) -> None:
        """The next check's timeout: what is left of the budget, at least a tenth of the
        solver's timeout (the check that confirms a core must still get its chance)."""
        left_ms = int((self.budget.deadline - time.perf_counter()) * 1000)
        self.s.set("timeout", max(1, min(self.timeout_ms, max(left_ms, self.timeout_ms // 10))))
        b = self.budget
        if b.units:  # the deterministic limit: the resource units left, at least a 25th
            self.s.set("rlimit", max(b.units - b.used, b.units // 25))

    def _spent(self) -> None:
        """Count the Z3 resource units spent so far (a count of Z3's work, the same every run)."""
        try:
            n = self.s.statistics().get_key_value("rlimit count")
        except z3.Z3Exception:
            return
        self.budget.used = self._base + int(n)

    def core(self) -> list[int]:
        """The members of Z3's unsat core of the last (unsat) check."""
        names = {str(x) for x in self.s.unsat_core()}
        return [q for q in self.order if str(self.lits[q]) in names]

    def unsat_with(self, seqs: Sequence[int], fs: dict[int, Any]) -> bool | None:
        """Check members ``seqs`` stated as ``fs`` (to try a member with fewer parts); None, and
        ``cut`` set, when the budget is out or Z3 could not tell."""
        if self.budget.out():
            self.cut = True
            return None
        self.calls.explain_calls += 1
        self._limit()
        self.s.push()
        try:
            for q in seqs:
                self.s.add(fs[q])
            r = self.s.check()
        finally:
            self.s.pop()
        self._spent()
        if r != z3.unsat and r != z3.sat:
            self.cut = True
        return True if r == z3.unsat else False if r == z3.sat else None


def _build(ex: Explainer, cand: Candidate) -> None:
    for kind, what, other in cand.items:
        match kind:
            case OriginKind.ANNOTATION:
                ex.add_annotation(what, cand.origin)
            case OriginKind.UNIFY:
                ex.add_unification(what, other, cand.origin)
            case OriginKind.RELATION:
                ex.add_relation(what)
            case OriginKind.HOLE | OriginKind.EXPR:
                pass  # (no candidate holds these)
            case _:
                assert_never(kind)


def _explain_one(
    solver: TypeSolver,
    cands: dict[int, Candidate],
    d: Diagnostic,
    excluded: set[int],
    budget: _Budget,
    memo: dict[object, Any],
    refine: bool = True,
) -> Diagnostic | None:
    """The explained diagnostic, or None (then ``budget.reason`` says why, when it is not simply
    that the error is no conflict between members).

    The candidates are added nearest first, in batches that double in size, until they conflict;
    a binary search then finds the shortest prefix (in that order) that conflicts, so the
    explanation is as local as it can be; Z3 names a core of it, and deletion (farthest member
    first) makes the core minimal. Nothing caps the number of candidates: a conflict whose
    explanation lies far away is found too, at the cost of a few more checks.
    """
    assert d.origin is not None
    primary = d.origin.seq
    order = bfs_order(cands, primary, excluded)
    rank = {q: i for i, q in enumerate(order)}
    ex = Explainer(solver)
    ex.struct_memo = memo
    # for a conflict between dimensions, the structure the solver found (ranks, dtypes, tuple
    # arities) is background; for a structural conflict it is what the members contribute
    structural = d.code in _STRUCTURAL
    ex.structural = structural and refine
    prob = _Problem(ex, structural, solver.timeout_ms, solver.session, budget)
    _build(ex, cands[primary])
    pm = ex.members.get(primary)
    if pm is None:
        return None
    pm.link = False
    prob.sync()

    def members_upto(k: int) -> list[int]:
        return [q for q in prob.order if rank[q] < k]

    # grow: batches doubling in size, until the members built conflict
    built = 1
    found: int | None = None
    prev = 0
    size = 4
    undecided = False
    while True:
        verdict = prob.check(members_upto(built))
        if verdict is True:
            found = built
            break
        undecided = undecided or verdict is None
        if budget.out():
            budget.reason = f"no conflict among the nearest {built} members within {budget.seconds:g} s"
            return None
        if built >= len(order):
            break
        prev = built
        for q in order[built : built + size]:
            _build(ex, cands[q])
        built = min(len(order), built + size)
        size *= 2
        prob.sync()
    if found is None:
        if undecided:
            budget.reason = "Z3 could not decide whether the members conflict (a timeout)"
        if not pm.rels:
            return None
        # the generic run of the primary lost what made it fail: describe it at its values
        for rel in pm.rels:
            ex.add_relation(rel, tier=3)
        pm.link = False
        prob.sync()
        prob.put(primary, pm.formula(ex.ctx, structure=structural))
        if prob.check(members_upto(len(order))) is not True:
            return None
        budget.reason = ""
        found, prev = len(order), 0
    # the shortest conflicting prefix: prefixes up to ``prev`` do not conflict
    budget.phase = "search"
    lo, hi = prev, found
    while hi - lo > 1 and not budget.out():
        mid = (lo + hi) // 2
        if prob.check(members_upto(mid)) is True:
            hi = mid
        else:
            lo = mid
    if prob.check(members_upto(hi)) is not True:
        return None
    core = prob.core()
    if primary not in core:
        return None  # the conflict does not need the place where it surfaced
    # deletion-based minimization, the farthest member first, the primary pinned
    budget.phase = "minimize"
    minimized = True
    for q in sorted(core, key=lambda x: (-rank[x], ex.members[x].origin.sort_key())):
        if q == primary:
            continue
        if budget.out():
            minimized = False
            budget.reason = f"the time limit of {budget.seconds:g} s was reached"
            break
        trial = [x for x in core if x != q]
        r = prob.check(trial)
        if r is True:
            core = trial
        elif r is None:
            minimized = False
            budget.reason = f"Z3 could not decide whether {ex.members[q].origin.describe()} is needed"
    if prob.check([x for x in core if x != primary]) is not False:
        return None
    core.sort(key=lambda q: ex.members[q].origin.sort_key())
    fs = prob.fs
    notes: list[Note] = []
    budget.phase = "describe"
    for q in core:
        if q != primary:
            m = ex.members[q]
            notes.append(Note(_describe(ex, m, core, fs, prob.unsat_with, structural), m.origin.span))
    notes = _merge_same(notes)
    chain = _chain(ex, primary, [q for q in core if q != primary])
    if chain:
        notes.append(Note(_chain_text(chain), None))
    if prob.cut:
        why = (
            f"when its budget ({budget.seconds:g} s) ran out"
            if budget.out()
            else "(a Z3 check was undecided)"
        )
        notes.append(Note(f"the explanation was cut short {why}: {_CUT}", None))
    if not minimized:
        notes.append(Note(f"the explanation was not minimized: {budget.reason}", None))
    members = [primary, *(q for q in core if q != primary)]
    ev = Z3Evidence.of([fs[q] for q in members], prob.background, minimized)
    return Diagnostic(
        d.code,
        d.message,
        d.span,
        tuple(notes),
        d.severity,
        origin=d.origin,
        core=tuple(ex.members[q].origin for q in members),
        evidence=ev,
    )


def _merge_same(notes: list[Note]) -> list[Note]:
    """One note for core members that read alike at the same place (the calls of one line in a
    loop): ``add gives `...` (2 calls at this line)``. Notes come in program order, so they are
    adjacent.

    >>> from symshape.solver.diagnostics import Span
    >>> at = Span("m.py", 3)
    >>> [n.message for n in _merge_same([Note("add", at), Note("add", at), Note("relu", at)])]
    ['add (2 calls at this line)', 'relu']
    """
    out: list[Note] = []
    counts: list[int] = []
    for n in notes:
        if out and out[-1] == n and n.span is not None:
            counts[-1] += 1
        else:
            out.append(n)
            counts.append(1)
    return [
        n if k == 1 else replace(n, message=f"{n.message} ({k} calls at this line)")
        for n, k in zip(out, counts)
    ]


def _chain(ex: Explainer, primary: int, others: list[int]) -> list[Origin]:
    """The forwarding members (elementwise operators, bindings) on the shortest paths in the
    position graph from the primary to the other core members, in program order."""
    import networkx as nx

    g: nx.Graph = nx.Graph()
    ends = {primary, *others}
    for q, m in sorted(ex.members.items()):
        if not m.link and q not in ends and not any(p.forward for p in m.parts):
            continue
        for k in sorted(m.keys):
            if k[0] != "sym":
                g.add_edge(("m", q), ("k", k))
    found: dict[int, Origin] = {}
    for q in others:
        a, b = ("m", primary), ("m", q)
        if a not in g or b not in g:
            continue
        sub = g.subgraph([n for n in g if n[0] == "k" or n in (a, b) or n[1] not in ends])
        try:
            path = nx.shortest_path(sub, a, b)
        except nx.NetworkXNoPath:
            # only through other core members (a weight whose dimension reaches the error
            # through a note's member): the links on that way
            try:
                path = nx.shortest_path(g, a, b)
            except nx.NetworkXNoPath:
                continue
        for n in path[1:-1]:
            if n[0] == "m" and n[1] not in ends:
                found[n[1]] = ex.members[n[1]].origin
    return sorted(found.values(), key=lambda o: o.sort_key())


def _chain_text(chain: Sequence[Origin]) -> str:
    """The chain's line: the links in program order, the calls of one line in a loop counted,
    the operators one call site stands for (an importer's conv2d and bias_add, batch_norm and
    its tuple index) named together.

    >>> from symshape.solver.diagnostics import Span
    >>> at, at2 = Span("m.py", 3, 5), Span("m.py", 4, 1)
    >>> _chain_text([Origin("relation", "conv2d", at), Origin("relation", "bias_add", at),
    ...              Origin("relation", "relu", at2), Origin("relation", "relu", at2)])
    'the conflict flows through conv2d and bias_add at m.py:3:5 and relu at m.py:4:1 (2 calls)'
    """
    items: list[str] = []
    counts: list[int] = []
    groups: list[tuple[list[str], Span | None]] = []  # operators at one call site
    for o in chain:
        if groups and o.span is not None and groups[-1][1] == o.span:
            if o.label not in groups[-1][0]:
                groups[-1][0].append(o.label)
                continue
        groups.append(([o.label], o.span))
    for labels, span in groups:
        text = _join(labels) + (f" at {span}" if span else "")
        if items and items[-1] == text:
            counts[-1] += 1
        else:
            items.append(text)
            counts.append(1)
    items = [t if c == 1 else f"{t} ({c} calls)" for t, c in zip(items, counts)]
    if len(items) > 8:
        items = [*items[:3], f"{len(items) - 6} more", *items[-3:]]
    return f"the conflict flows through {_join(items)}"


def _describe(
    ex: Explainer,
    m: Member,
    core: list[int],
    fs: dict[int, Any],
    unsat: Any,
    structure: bool = True,
) -> str:
    """What member ``m`` contributed: the parts of it that the conflict needs."""
    label = m.origin.label
    if not m.rels and m.origin.kind == OriginKind.ANNOTATION:
        return label
    others = [q for q in core if q != m.origin.seq]
    needed = list(m.parts)
    if len(needed) > 1:
        for p in list(needed):
            if p.forward:
                continue
            trial = [x for x in needed if x is not p]
            fs2 = dict(fs)
            fs2[m.origin.seq] = m.formula(ex.ctx, trial, structure)
            r = unsat([*others, m.origin.seq], fs2)
            if r is None:  # out of time (or undecided): the member without the parts' detail
                return _describe_unify(ex, m, label) if not m.rels else _gives(m, label)
            if r:
                needed = trial
    if not m.rels:
        return _describe_unify(ex, m, label, needed)
    out = m.outputs[0] if len(m.outputs) == 1 else None
    bits: list[str] = []
    dims: list[str] = []
    for p in needed:
        if p.kind != "dim" or p.forward:
            continue
        src = m.outputs[p.loc[0]] if p.loc and p.loc[0] < len(m.outputs) else out
        value = dim_at(src, p.loc[1:]) if src is not None else None
        dims.append(f"{p.text} is `{value}`" if value is not None else p.text)
    for p in needed:  # a structural part: an output's rank or dtype
        if p.kind in ("rank", "dtype") and p.loc and p.loc[0] < len(m.outputs):
            v = _attr(m.outputs[p.loc[0]], p.loc[1:], p.kind)
            if v is not None:
                dims.append(f"{p.kind} {v}" if len(m.outputs) == 1 else f"output {p.loc[0]} has {p.kind} {v}")
    shown = ", ".join(str(t) for t in m.outputs)
    if dims and m.outputs:
        bits.append(f"gives `{shown}` ({_join(dims)})")
    elif dims:
        bits.append("makes " + _join(dims))
    elif any(p.kind in ("struct", "fail", "form", "size", "arity") for p in needed) and m.outputs:
        bits.append(f"gives `{shown}`")
    conds = [f"`{p.text}`" for p in needed if p.kind == "cond" and not p.held]
    conds += [p.text for p in needed if p.kind == "cond" and p.held]
    if conds:
        bits.append("requires " + _join(conds))
    return f"{label} {' and '.join(bits)}" if bits else label


def _gives(m: Member, label: str) -> str:
    """An operator call without the detail of what the conflict needs of it."""
    return f"{label} gives `{', '.join(str(t) for t in m.outputs)}`" if m.outputs else label


def _describe_unify(ex: Explainer, m: Member, label: str, needed: Sequence[_Part] = ()) -> str:
    """A unification: what it made equal — the arguments a call passes (those the conflict
    needs), the type a hole was given, or both sides."""
    if not m.pairs or m.origin.kind == OriginKind.ANNOTATION:
        return label
    a, b = m.pairs[0]
    rb_t = ex.u.resolve(b)
    if isinstance(rb_t, FuncType) and label.startswith("call of") and not isinstance(b, IncompleteType):
        n = len(rb_t.params)
        used = sorted({p.loc[0] for p in needed if p.loc and p.loc[0] < n}) or list(range(n))
        args = [f"argument {i} `{rb_t.params[i]}`" for i in used]
        return f"{label} passes {_join(args)}"
    ra, rb = str(ex.u.resolve(a)), str(rb_t)
    if ra == rb:
        return f"{label} has type `{ra}`"
    if isinstance(a, IncompleteType) and not isinstance(b, IncompleteType):
        return f"{label} has type `{rb}`"
    return f"{label} equates `{ra}` and `{rb}`"


def _join(xs: Sequence[str]) -> str:
    if len(xs) <= 1:
        return "".join(xs)
    return ", ".join(xs[:-1]) + " and " + xs[-1]
