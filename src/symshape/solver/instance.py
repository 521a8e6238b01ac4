"""A relation instance (one use of a relation: an operator call site), the context a relation
runs in inside the solver, and how operators are named in messages.

>>> op_display_name("nn.dense")
'dense'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from symshape.encoding.conds import Cond, expand_joins
from symshape.encoding.dims import Dim, fresh_dimvar
from symshape.encoding.types import Attrs, IncompleteType, Type
from symshape.errors import ErrorCode
from symshape.relations.base import Context, RelationDef
from symshape.solver.diagnostics import Origin, TextEnum
from symshape.solver.unify import Mismatch, Unifier

if TYPE_CHECKING:
    from symshape.solver.solve import TypeSolver

__all__ = ["RelationInstance", "RelationState", "SolverContext", "LoggingUnifier", "op_display_name"]


class RelationState(TextEnum):
    """Where a relation instance stands (a :class:`TextEnum`: ``rel.state == "solved"`` holds)."""

    PENDING = "pending"  # queued, or deferring until its inputs are known
    SOLVED = "solved"
    FAILED = "failed"  # it reported an error
    POISONED = "poisoned"  # not run: it reads a value an error wrote (downstream of an error)


_OP_NAMES: dict[str, str] = {}


def op_display_name(name: str) -> str:
    """The name a user calls an operator by: its registry name without Relay's ``nn.`` prefix
    (``nn.dense`` is ``ss.ops.dense``). The one place that decides how operators are named in
    messages, notes and chains.

    >>> op_display_name("nn.max_pool2d"), op_display_name("add")
    ('max_pool2d', 'add')
    """
    hit = _OP_NAMES.get(name)
    if hit is None:
        hit = name[3:] if name.startswith("nn.") and len(name) > 3 else name
        if len(_OP_NAMES) < 4096:
            _OP_NAMES[name] = hit
    return hit


@dataclass(eq=False, slots=True)
class RelationInstance:
    """One use of a relation (an operator call site)."""

    id: int
    rdef: RelationDef
    args: tuple[Type, ...]
    attrs: Attrs
    num_inputs: int
    origin: Origin
    state: RelationState = RelationState.PENDING
    inq: bool = False
    runs: int = 0
    erred: bool = False  # it reported an error: the values it writes are poisoned
    op: str | None = None  # the operator the user called (see :func:`op_display_name`)

    @property
    def name(self) -> str:
        return self.rdef.name

    @property
    def display(self) -> str:
        """The name messages use: the operator the user called, else the relation's name."""
        return self.op if self.op is not None else self.rdef.name


class SolverContext(Context):
    """What a relation sees of the solver while it runs (the :class:`Context` protocol)."""

    __slots__ = ("solver", "rel", "final", "num_inputs", "name")

    def __init__(self, solver: TypeSolver, rel: RelationInstance, final: bool) -> None:
        self.solver = solver
        self.rel = rel
        self.final = final
        self.num_inputs = rel.num_inputs
        self.name = rel.display

    def resolve(self, t: Type) -> Type:
        return self.solver.unifier.resolve(t)

    def resolve_dim(self, d: Dim) -> Dim:
        return self.solver.unifier.resolve_dim(d)

    def unify(self, a: Type, b: Type) -> Type:
        return self.solver.unifier.unify(a, b, self.rel.origin)

    def unify_dim(self, a: Dim, b: Dim) -> Dim:
        try:
            return self.solver.unifier.unify_dim(a, b, self.rel.origin)
        except Mismatch as m:
            self.fail(m.code, f"{self.name}: {m.detail}")

    def require(self, cond: Cond, code: ErrorCode | str, message: str) -> str:
        return self.solver.require(cond, self.rel.origin, code, message)

    def prove(self, cond: Cond) -> bool | None:
        return self.solver.session.prove(expand_joins(cond))

    def assume(self, cond: Cond) -> None:
        self.solver.session.assume(cond, self.rel.origin)

    def fresh_dim(self) -> Dim:
        return fresh_dimvar()

    def fresh_hole(self) -> IncompleteType:
        return IncompleteType()


class LoggingUnifier(Unifier):
    """The unifier, recording each top-level unification made outside a relation (a binding, an
    argument, a return annotation): the explainer turns each into a core candidate."""

    def __init__(self, solver: TypeSolver) -> None:
        super().__init__()
        self._solver = solver
        self.before: tuple[Type, Type] | None = None

    def unify(self, a: Type, b: Type, origin: Origin) -> Type:
        if self._frame is not None:
            return super().unify(a, b, origin)
        if self._solver._current is None:
            self._solver.unify_log.append((a, b, origin))
        # the two sides as they were: a conflict found after two holes' classes were merged
        # would otherwise print the merged type on both sides
        self.before = (
            a if type(a) is not IncompleteType else self.shallow(a),
            b if type(b) is not IncompleteType else self.shallow(b),
        )
        # what Unifier.unify does for an outermost pair, inline (a hot path)
        self._frame = (a, b)
        try:
            return self._rec(a, b, origin, 0)
        except Mismatch as m:
            return self._conflict(a, b, origin, m)
        finally:
            self._frame = None
            self.before = None
