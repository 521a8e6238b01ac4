"""What solving gives: the status (:class:`Status`, :func:`judge`), the diagnostic lists a
:class:`Solution` and an :class:`~symshape.ir.infer.InferenceResult` share (:class:`Outcome`), and
the :class:`Solution` of :meth:`TypeSolver.solve <symshape.solver.solve.TypeSolver.solve>`.

>>> judge([], [], [], ["a guard"])
'guarded'
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import networkx as nx

from symshape.encoding.conds import Cond, decide, map_cond
from symshape.encoding.types import IncompleteType, TensorType, Type
from symshape.errors import PINNED_SYMBOL, UNPROVEN_GUARD, UNRESOLVED
from symshape.solver.diagnostics import Diagnostic, Guard, Origin, OriginKind, TextEnum, assert_never
from symshape.solver.graph import rel_node
from symshape.solver.holes import holes_deep
from symshape.solver.instance import RelationInstance, RelationState
from symshape.solver.simplify import pinned_symbol, simplify_guard_list
from symshape.views import Shown, View, show

if TYPE_CHECKING:
    from symshape.solver.solve import TypeSolver

__all__ = ["Status", "STATUSES", "judge", "pinned_warnings", "Outcome", "Solution", "guards_as_stated"]

#: (:func:`guards_as_stated`) whether a solution simplifies its guards for the report
_SIMPLIFY: ContextVar[bool] = ContextVar("symshape_simplify_guards", default=True)


@contextmanager
def guards_as_stated() -> Iterator[None]:
    """Solutions made inside keep their guards as the relations stated them, not simplified (the
    simplification proves each rewrite equivalent with Z3): for callers that read only types,
    such as the ONNX importer's type probes."""
    token = _SIMPLIFY.set(False)
    try:
        yield
    finally:
        _SIMPLIFY.reset(token)


class Status(TextEnum):
    """The status of a solution or an inference result (a :class:`TextEnum`: ``res.status ==
    "ok"`` holds, and reports and JSON show the plain word)."""

    OK = "ok"
    GUARDED = "guarded"  # well typed where the guards hold
    ERROR = "error"
    UNRESOLVED = "unresolved"  # some types stay open
    INCONCLUSIVE = "inconclusive"  # Z3 could not decide a condition

    @property
    def ok(self) -> bool:
        """Whether the program is accepted: ``ok`` or ``guarded``."""
        match self:
            case Status.OK | Status.GUARDED:
                return True
            case Status.ERROR | Status.UNRESOLVED | Status.INCONCLUSIVE:
                return False
            case _:
                assert_never(self)


STATUSES: tuple[str, ...] = tuple(s.value for s in Status)


def judge(
    errors: Sequence[object],
    inconclusive: Sequence[object],
    unresolved: Sequence[object],
    guards: Sequence[object],
) -> Status:
    """The status: ``error`` over ``inconclusive`` over ``unresolved`` over ``guarded`` over ``ok``."""
    if errors:
        return Status.ERROR
    if inconclusive:
        return Status.INCONCLUSIVE
    if unresolved:
        return Status.UNRESOLVED
    if guards:
        return Status.GUARDED
    return Status.OK


def pinned_warnings(guards: Sequence[Guard]) -> list[Diagnostic]:
    """A ``pinned-symbol`` warning for each guard that pins a given symbol to one value
    (``s == 64``): the program is then well typed at that size only, which is almost always a
    bug (an axis transposed or reshaped in the wrong place). Reported in every mode."""
    out: list[Diagnostic] = []
    for g in guards:
        p = pinned_symbol(g.cond)
        if p is None:
            continue
        s, k = p
        who = g.origin.label if g.origin else "the program"
        out.append(
            Diagnostic(
                PINNED_SYMBOL.code,
                f"{who} needs `{s} == {k}`, which pins the symbol {s} to one value; is an axis "
                "transposed or reshaped in the wrong place?",
                g.origin.span if g.origin else None,
                severity="warning",
                origin=g.origin,
            )
        )
    return out


class Outcome(Shown):
    """What a Solution and an InferenceResult share: the status and the diagnostic lists
    (``warnings`` never change the status)."""

    status: str
    errors: list[Diagnostic]
    warnings: list[Diagnostic]
    inconclusive: list[Diagnostic]
    unresolved: list[Diagnostic]

    @property
    def ok(self) -> bool:
        """True when the status is ``ok`` or ``guarded``."""
        return Status(self.status).ok

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """Errors, then inconclusive conditions, then unresolved expressions."""
        return [*self.errors, *self.inconclusive, *self.unresolved]


@dataclass
class Solution(Outcome):
    """The outcome of :meth:`TypeSolver.solve`."""

    solver: TypeSolver = field(repr=False)
    status: str = Status.OK
    errors: list[Diagnostic] = field(default_factory=list)
    guards: list[Guard] = field(default_factory=list)
    stated_guards: list[Guard] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)
    unresolved: list[Diagnostic] = field(default_factory=list)
    inconclusive: list[Diagnostic] = field(default_factory=list)

    def __init__(self, solver: TypeSolver) -> None:
        self.solver = solver
        self.errors = sorted(solver.errors, key=lambda d: _diag_key(d))
        # a relation that failed (or reported an error, or was skipped as downstream of one)
        # has no guards: its conditions are moot
        # (one pass over the relations: the moot ones, those still pending, whether any erred;
        # the states read once, an enum member's lookup on its class costs more than the test)
        ended = (RelationState.FAILED, RelationState.POISONED)
        pending_state = RelationState.PENDING
        moot: set[int] = set()
        pending: list[RelationInstance] = []
        erred = False
        # (the relations ever queued, in creation order: an operator call solved when added is
        # never queued, run again or marked, see add_call, so it is solved and clean)
        for r in solver._open:
            state = r.state
            if r.erred:
                erred = True
                moot.add(id(r.origin))
            elif state in ended:
                moot.add(id(r.origin))
            if state == pending_state:
                pending.append(r)
        if moot:
            self.errors = [
                d
                for d in self.errors
                if not (d.code == UNPROVEN_GUARD.code and d.origin is not None and id(d.origin) in moot)
            ]
        # guards stated before an unknown in them was bound are shown with its value
        self.guards = []
        seen: set[Cond] = set()
        u = solver.unifier
        for g in solver.guards:
            if moot and id(g.origin) in moot:
                continue
            c = map_cond(g.cond, u.resolve_dim) if u.dim_bind else g.cond
            if decide(c) is True or c in seen:
                continue
            seen.add(c)
            self.guards.append(g if c is g.cond else Guard(c, g.origin, g.code))
        # as stated, in the order the relations stated them (why_invalid names the first that
        # fails, as a run would); simplified and deduplicated for the report (each rewrite
        # proved equivalent by Z3)
        self.stated_guards = self.guards
        if _SIMPLIFY.get():
            self.guards = simplify_guard_list(self.guards, solver.session)
        self.warnings = pinned_warnings(self.guards)
        self.inconclusive = list(solver.inconclusive)
        poisoned: set[tuple[str, int]] = set()
        if pending and erred:
            # the scheduler skips the readers of poisoned values; anything still waiting that
            # the graph places downstream of an error is not reported either
            poisoned = solver.graph.downstream([rel_node(r.id) for r in solver._open if r.erred])
        self.unresolved = []
        u = solver.unifier
        open_roots: set[IncompleteType] = set()
        for r in pending:
            if rel_node(r.id) in poisoned:
                continue
            args = ", ".join(str(u.resolve(a)) for a in r.args)
            self.unresolved.append(
                Diagnostic(
                    UNRESOLVED.code,
                    f"cannot infer the types of {r.origin.label}({args}); add an annotation",
                    r.origin.span,
                    origin=r.origin,
                )
            )
        if solver._user_holes:
            for r in solver.rels:
                if r.state in (RelationState.PENDING, RelationState.POISONED):
                    for t in r.args:
                        open_roots.update(u.find(h) for h in holes_deep(u, t))
            open_roots |= {u.find(h) for h in solver._poison.holes}
            self.unresolved.extend(_open_holes(solver, open_roots))
        self.status = judge(self.errors, self.inconclusive, self.unresolved, self.guards)

    @property
    def z3_calls(self) -> int:
        """Z3 checks made to decide conditions (those the canonical forms decide never reach Z3)."""
        return self.solver.session.z3_calls

    @property
    def z3_explain_calls(self) -> int:
        """Z3 checks made to find and minimize the unsat cores of the errors."""
        return self.solver.session.explain_calls

    def resolve(self, t: Type) -> Type:
        """``t`` with every solved hole and unknown dimension replaced."""
        return self.solver.unifier.resolve(t)

    def graph(self) -> nx.DiGraph:
        """The dependency graph with readable labels (see :func:`symshape.display.result_graph`)."""
        return show(View.GRAPH, self)

    def __repr__(self) -> str:
        return (
            f"Solution(status={self.status!r}, errors={len(self.errors)}, "
            f"guards={[str(g) for g in self.guards]})"
        )


def _open_holes(solver: TypeSolver, skip: set[IncompleteType]) -> list[Diagnostic]:
    """One ``unresolved`` diagnostic per hole class left open in a hole the user made (not those
    in ``skip``: arguments of relations reported otherwise), at the place the hole was made."""
    u = solver.unifier
    out: list[Diagnostic] = []
    seen: set[IncompleteType] = set(skip)
    resolved, find = u.resolved, u.find
    for h, span in solver._user_holes:
        if type(resolved.get(find(h))) is TensorType:
            continue  # the common case: determined, and a tensor has no holes inside
        for x in holes_deep(u, h):
            r = u.find(x)
            if r in seen or r in u.resolved:
                continue
            seen.add(r)
            whole = u.resolve(h)
            what = f"`{r}`" if whole is r else f"`{r}` in `{whole}`"
            out.append(
                Diagnostic(
                    UNRESOLVED.code,
                    f"nothing determines the hole {what}; unify it with a type or make it the "
                    "output of a relation",
                    span,
                    origin=Origin(OriginKind.HOLE, f"hole {r}", span),
                )
            )
    return out


def _diag_key(d: Diagnostic) -> tuple[int, str, int, int, int]:
    if d.origin is not None:
        return d.origin.sort_key()
    return (1, "", 0, 0, 0)
