"""One relation run on its own, on generic inputs: the outputs it computes and every condition it
states (the explainer probes relations this way; see :mod:`symshape.solver.explain`).

The sandbox is a :class:`~symshape.relations.base.Context` over a plain unifier: it decides
nothing the canonical forms do not decide (so a relation takes its general path, and Z3 is never
called), records each condition a relation requires or assumes, and notes a failure (a relation
failing, a conflicting unification) instead of reporting it. Like the solver, it gives a deferring
relation one final run, solves ground inputs from the eager memo, and checks that the dimensions
entering and leaving are nonnegative.

>>> import symshape as ss
>>> from symshape.solver.instance import RelationInstance, RelationState
>>> from symshape.solver.diagnostics import Origin
>>> from symshape.relations import get_relation
>>> n = ss.dim("n")
>>> rel = RelationInstance(0, get_relation("broadcast"), (), ss.Attrs(), 2, Origin("relation", "add"))
>>> run = sandbox_run(rel, [ss.Tensor((n, 1)), ss.Tensor((3,))], [ss.IncompleteType()])
>>> run.failed, [str(t) for t in run.outputs]
(False, ['Tensor[(n, 3), float32]'])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from symshape.encoding.conds import Cond, decide, expand_joins
from symshape.encoding.dims import Dim, fresh_dimvar
from symshape.encoding.types import IncompleteType, Type, check_type
from symshape.errors import ErrorCode, SymshapeError
from symshape.relations.base import Context, Message, RelationFailure
from symshape.solver.diagnostics import Origin
from symshape.solver.eager import EagerMemo
from symshape.solver.holes import freshen_any, nonneg_conditions
from symshape.solver.instance import RelationInstance, RelationState
from symshape.solver.unify import Mismatch, Unifier

__all__ = ["SandboxRun", "sandbox_run"]


@dataclass
class SandboxRun:
    """The outcome of running one relation alone (see :func:`sandbox_run`)."""

    pending: bool
    failed: bool
    outputs: list[Type]
    conds: list[Cond]


class _Sandbox(Context):
    """The context of a relation run alone: conditions are recorded, failures noted."""

    def __init__(self, rel: RelationInstance, num_inputs: int) -> None:
        self.rel = rel
        self.origin = rel.origin
        self.final = False
        self.num_inputs = num_inputs
        self.name = rel.rdef.name
        self.conds: list[Cond] = []
        self.facts: list[Cond] = []
        self.failed = False
        self.checked: set[Dim] = set()
        u = self.unifier = Unifier()
        u.on_condition = self._on_condition
        u.on_conflict = self._on_conflict

    def _record(self, cond: Cond) -> str:
        d = decide(cond)
        if d is True:
            return "proved"
        if cond not in self.conds:
            self.conds.append(cond)
        return "refuted" if d is False else "guard"

    def _on_condition(self, cond: Cond, origin: Origin, code: ErrorCode, message: str) -> None:
        self._record(cond)

    def _on_conflict(self, code: ErrorCode, message: str, origin: Origin, a: Type, b: Type) -> None:
        self.failed = True

    def check_nonneg(self, t: Type) -> None:
        for c, _ in nonneg_conditions(t, self.checked):
            self._record(c)

    # -- the Context protocol
    def resolve(self, t: Type) -> Type:
        return self.unifier.resolve(t)

    def resolve_dim(self, d: Dim) -> Dim:
        return self.unifier.resolve_dim(d)

    def unify(self, a: Type, b: Type) -> Type:
        return self.unifier.unify(a, b, self.origin)

    def unify_dim(self, a: Dim, b: Dim) -> Dim:
        try:
            return self.unifier.unify_dim(a, b, self.origin)
        except Mismatch as m:
            self.fail(m.code, f"{self.name}: {m.detail}")

    def require(self, cond: Cond, code: ErrorCode | str, message: Message) -> str:
        return self._record(cond)

    def prove(self, cond: Cond) -> bool | None:
        return decide(expand_joins(cond))

    def assume(self, cond: Cond) -> None:
        if decide(cond) is not True:
            self.facts.append(cond)

    def fresh_dim(self) -> Dim:
        return fresh_dimvar()

    def fresh_hole(self) -> IncompleteType:
        return IncompleteType()


def _run(sb: _Sandbox, args: tuple[Type, ...], final: bool) -> RelationState:
    """One run of the relation: ``solved``, ``pending`` or ``failed``."""
    rel, u = sb.rel, sb.unifier
    ni = sb.num_inputs
    args = tuple(u.resolve(a) for a in args)
    if not final:
        outs = args[ni:]
        if all(isinstance(h, IncompleteType) and h.kind == "type" for h in outs):
            vals = EagerMemo().lookup(rel.rdef, args[:ni], rel.attrs, len(outs))
            if vals is not None:
                for h, v in zip(outs, vals):
                    root = u.find(h)  # type: ignore[arg-type]
                    if root in u.resolved:  # the same hole twice among the outputs
                        u.unify(root, v, sb.origin)
                    else:
                        u.resolved[root] = v
                return RelationState.SOLVED
    sb.final = final
    try:
        done: object = rel.rdef.fn(sb, args, rel.attrs)
    except (RelationFailure, SymshapeError, RecursionError):
        return RelationState.FAILED
    except Exception:  # a user relation's bug: the explainer treats it as a failure
        return RelationState.FAILED
    if done is True or done == "solved":
        for t in args[ni:]:
            sb.check_nonneg(u.resolve(t))
        return RelationState.SOLVED
    return RelationState.PENDING


def sandbox_run(rel: RelationInstance, inputs: Sequence[Type], outputs: Sequence[Type]) -> SandboxRun:
    """Run ``rel``'s relation alone on ``inputs`` (and fresh ``outputs``): the outputs it computes
    and the conditions it states."""
    sb = _Sandbox(rel, len(inputs))
    try:
        args = []
        for t in (*inputs, *outputs):
            check_type(t)
            t = freshen_any(t)
            sb.check_nonneg(t)
            args.append(t)
    except SymshapeError:
        return SandboxRun(False, True, [], [])
    targs = tuple(args)
    state = _run(sb, targs, final=False)
    if state == RelationState.PENDING:
        state = _run(sb, targs, final=True)
    conds = list(sb.conds)
    for c in sb.facts:
        if c not in conds:
            conds.append(c)
    return SandboxRun(
        state == RelationState.PENDING,
        sb.failed or state == RelationState.FAILED,
        [sb.unifier.resolve(t) for t in targs[len(inputs) :]],
        conds,
    )
