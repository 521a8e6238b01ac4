"""A relation instance (one use of a relation: an operator call site), the context a relation
runs in inside the solver, and how operators are named in messages.

>>> op_display_name("nn.dense")
'dense'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from symshape.encoding.conds import Cond, expand_joins
from symshape.encoding.dims import Dim, fresh_dimvar
from symshape.encoding.leaf_types import _next_hole_id
from symshape.encoding.types import Attrs, IncompleteType, Type
from symshape.errors import ErrorCode
from symshape.relations.base import Context, RelationDef
from symshape.solver.diagnostics import Origin, OriginKind, TextEnum, _origin_ids
from symshape.solver.unify import Mismatch, Unifier

if TYPE_CHECKING:
    from symshape.solver.solve import TypeSolver
    from symshape.source import Span

__all__ = [
    "RelationInstance",
    "RelationState",
    "SolverContext",
    "LoggingUnifier",
    "op_display_name",
    "new_hole",
    "HOLE_SETTERS",
    "next_origin_seq",
]


class RelationState(TextEnum):
    """Where a relation instance stands (a :class:`TextEnum`: ``rel.state == "solved"`` holds)."""

    PENDING = "pending"  # queued, or deferring until its inputs are known
    SOLVED = "solved"
    FAILED = "failed"  # it reported an error
    POISONED = "poisoned"  # not run: it reads a value an error wrote (downstream of an error)


_OP_NAMES: dict[str, str] = {}

_new = object.__new__
_set_hole_kind = IncompleteType.__dict__["kind"].__set__
_set_hole_id = IncompleteType.__dict__["id"].__set__
#: what :func:`new_hole` does, for a caller that writes it out: ``object.__new__``, the setters of
#: ``kind`` and ``id``, and the counter of hole ids
HOLE_SETTERS = (_new, _set_hole_kind, _set_hole_id, _next_hole_id)
#: the counter of origin numbers (an operator call's instance takes its number when it is made)
next_origin_seq = _origin_ids.__next__


def new_hole() -> IncompleteType:
    """``IncompleteType()``: a fresh hole of kind ``type``, numbered from the same counter, without
    the constructor's argument checks (the solver makes one per operator call).

    >>> h = new_hole()
    >>> (h.kind, type(h.id), str(h) == f"?t{h.id}")
    ('type', <class 'int'>, True)
    """
    h: IncompleteType = _new(IncompleteType)
    _set_hole_kind(h, "type")
    _set_hole_id(h, _next_hole_id())
    return h



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


class RelationInstance:
    """One use of a relation (an operator call site).

    The origin of an operator call's instance (:meth:`TypeSolver.add_call`) is made when it is
    first read, from the operator, span and sequence number the call was given: most are never
    read (an eagerly solved call reports nothing), and the object is the same either way.
    """

    __slots__ = (
        "id",
        "rdef",
        "args",
        "attrs",
        "num_inputs",
        "_origin",
        "state",
        "inq",
        "runs",
        "erred",
        "op",
        "span",
        "seq",
    )

    id: int
    rdef: RelationDef
    args: tuple[Type, ...]
    attrs: Attrs
    num_inputs: int
    _origin: Origin | None
    state: RelationState
    inq: bool
    runs: int
    erred: bool  # it reported an error: the values it writes are poisoned
    op: str | None  # the operator the user called (see :func:`op_display_name`)
    span: Span | None  # with ``seq``: the origin not made yet (see the class docstring)
    seq: int

    def __init__(
        self,
        id: int,
        rdef: RelationDef,
        args: tuple[Type, ...],
        attrs: Attrs,
        num_inputs: int,
        origin: Origin,
        state: RelationState = RelationState.PENDING,
        inq: bool = False,
        runs: int = 0,
        erred: bool = False,
        op: str | None = None,
    ) -> None:
        self.id = id
        self.rdef = rdef
        self.args = args
        self.attrs = attrs
        self.num_inputs = num_inputs
        self._origin = origin
        self.state = state
        self.inq = inq
        self.runs = runs
        self.erred = erred
        self.op = op
        self.span = origin.span
        self.seq = origin.seq

    @property
    def origin(self) -> Origin:
        """Where the instance comes from (for an operator call: the call's relation origin)."""
        o = self._origin
        if o is None:
            o = self._origin = Origin(OriginKind.RELATION, self.display, self.span, self.seq, self.id)
        return o

    def __repr__(self) -> str:
        return (
            f"RelationInstance(id={self.id!r}, rdef={self.rdef!r}, args={self.args!r}, "
            f"attrs={self.attrs!r}, num_inputs={self.num_inputs!r}, origin={self.origin!r}, "
            f"state={self.state!r}, inq={self.inq!r}, runs={self.runs!r}, erred={self.erred!r}, "
            f"op={self.op!r})"
        )

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
