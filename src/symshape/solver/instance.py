"""A relation instance (one use of a relation: an operator call site), the context a relation
runs in inside the solver, and how operators are named in messages.

>>> op_display_name("nn.dense")
'dense'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from symshape.encoding.conds import Cond
from symshape.encoding.dims import Dim, fresh_dimvar
from symshape.encoding.leaf_types import next_hole_id
from symshape.encoding.types import Attrs, IncompleteType, TensorType, Type
from symshape.errors import ErrorCode
from symshape.relations.base import Context, Message, RelationDef
from symshape.solver.diagnostics import Origin, OriginKind, TextEnum, next_origin_seq
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
    "add_call",
    "SolvedCall",
    "solved_instance",
    "make_instance",
]


class RelationState(TextEnum):
    """Where a relation instance stands (a :class:`TextEnum`: ``rel.state == "solved"`` holds)."""

    PENDING = "pending"  # queued, or deferring until its inputs are known
    SOLVED = "solved"
    FAILED = "failed"  # it reported an error
    POISONED = "poisoned"  # not run: it reads a value an error wrote (downstream of an error)


_OP_NAMES: dict[str, str] = {}
_PENDING, _SOLVED = RelationState.PENDING, RelationState.SOLVED

_new = object.__new__
_set_hole_kind = IncompleteType.__dict__["kind"].__set__
_set_hole_id = IncompleteType.__dict__["id"].__set__


def new_hole() -> IncompleteType:
    """``IncompleteType()``: a fresh hole of kind ``type``, numbered from the same counter, without
    the constructor's argument checks (the solver makes one per operator call).

    >>> h = new_hole()
    >>> (h.kind, type(h.id), str(h) == f"?t{h.id}")
    ('type', <class 'int'>, True)
    """
    h: IncompleteType = _new(IncompleteType)
    _set_hole_kind(h, "type")
    _set_hole_id(h, next_hole_id())
    return h


def add_call(
    solver: TypeSolver,
    rdef: RelationDef,
    inputs: Sequence[Type],
    attrs: Attrs,
    label: str,
    span: Span | None,
    solved: Type | None = None,
) -> IncompleteType:
    """:meth:`TypeSolver.add_call <symshape.solver.solve.TypeSolver.add_call>` (that method is
    this function): an operator call during constraint generation, ``rdef`` over admitted
    ``inputs`` and a fresh output hole, which is returned. ``label`` is the operator's registry
    name; messages, notes and chains name it as the user called it (:func:`op_display_name`).
    When the inputs are ground and the relation needs no reasoning (see
    :mod:`symshape.solver.eager`) it is solved here — in program order, like every relation whose
    inputs are known; otherwise it is queued for ``solve()``. ``solved``, when given, is the output
    the eager run would give (a caller that knows it: a field of a tuple of constant-shape
    tensors), taken without resolving the inputs or asking the memo.

    (Once per operator call of a program, so written out: the instance is what
    ``RelationInstance(...)`` with a relation origin makes, the origin made when first read (see
    :class:`RelationInstance`); the resolution of the inputs and the memo's hit path inline. A
    call solved here is kept as a :data:`SolvedCall` record, in the solver's list of instances
    and the dependency graph, and made its instance (:func:`solved_instance`) when
    ``solver.rels`` or ``solver.producer`` is first read: a model's calls are nearly all solved
    here, and only an explanation or a display reads them.)"""
    rels = solver._rels
    out: IncompleteType = _new(IncompleteType)
    _set_hole_kind(out, "type")
    _set_hole_id(out, next_hole_id())
    seq = next_origin_seq()
    u = solver.unifier
    if solved is None:
        if u.flex or u.dim_bind:
            got = [u.resolve(t) for t in inputs]
        else:  # the resolve fast path, inlined: holes standing for tensors
            parent, resolved = u.parent, u.resolved
            got = []
            for t in inputs:
                if type(t) is IncompleteType:
                    r = u.find(t) if t in parent else t
                    t = resolved.get(r, r)
                    if type(t) is not TensorType:
                        t = u.resolve(t)
                elif type(t) is not TensorType:
                    t = u.resolve(t)
                got.append(t)
        memo = solver.memo
        # (the memo's key by identity, spelt out for the commonest arities: a tuple display is
        # several times cheaper than unpacking a ``map``)
        n = len(got)
        if n == 2:
            ids: tuple[object, ...] = (rdef, id(attrs), id(got[0]), id(got[1]))
        elif n == 1:
            ids = (rdef, id(attrs), id(got[0]))
        else:
            ids = (rdef, id(attrs), *map(id, got))
        hit = memo.by_id.get(ids)
        if hit is not None:
            vals = hit[2]
            memo.hits += 1
        else:
            vals = memo.lookup_ids(rdef, tuple(got), attrs, ids)
        if vals is None:  # queued
            rec = (len(rels), rdef, (*inputs, out), attrs, len(inputs), label, span, seq)
            rel = make_instance(rec, _PENDING, 0)
            rels.append(rel)
            solver._producer[out] = rel
            solver._graph_add(rel)
            solver._open.append(rel)
            solver._enqueue(rel)
            return out
        solved = vals[0]
    # solved here: a record, made an instance when first read (see ``TypeSolver.rels``)
    rec = (len(rels), rdef, (*inputs, out), attrs, len(inputs), label, span, seq)
    rels.append(rec)
    solver._graph_add(rec)
    if solver._lazy_from < 0:
        solver._lazy_from = rec[0]
    u.resolved[out] = solved
    solver.steps += 1
    return out


#: an operator call solved when it was added, as :func:`add_call` keeps it until something reads
#: the solver's instances: ``(id, relation, args, attrs, num_inputs, label, span, seq)``
SolvedCall = tuple[int, RelationDef, tuple[Type, ...], Attrs, int, str, "Span | None", int]


def solved_instance(rec: SolvedCall) -> RelationInstance:
    """The instance of an operator call solved when added (what :func:`add_call` kept as the
    record ``rec``): the one it would have made then, solved once."""
    return make_instance(rec, _SOLVED, 1)


def make_instance(rec: SolvedCall, state: RelationState, runs: int) -> RelationInstance:
    """``RelationInstance(...)`` of an operator call (``rec`` as for :data:`SolvedCall`), its
    origin made when first read, without the dataclass ``__init__``."""
    rid, rdef, args, attrs, ni, label, span, seq = rec
    rel: RelationInstance = _new(RelationInstance)
    rel.id = rid
    rel.rdef = rdef
    rel.args = args
    rel.attrs = attrs
    rel.num_inputs = ni
    rel._origin = None
    rel.inq = rel.erred = False
    rel.op = _OP_NAMES.get(label) or op_display_name(label)
    rel.span = span
    rel.seq = seq
    rel.state = state
    rel.runs = runs
    return rel


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


@dataclass(eq=False, slots=True, repr=False)
class RelationInstance:
    """One use of a relation (an operator call site).

    The origin of an operator call's instance (:meth:`TypeSolver.add_call`) is made when it is
    first read, from the operator, ``span`` and ``seq`` (the origin's number, taken when the call
    was added): most are never read (an eagerly solved call reports nothing), and the object is
    the same either way.
    """

    id: int
    rdef: RelationDef
    args: tuple[Type, ...]
    attrs: Attrs
    num_inputs: int
    _origin: Origin | None
    state: RelationState = RelationState.PENDING
    inq: bool = False
    runs: int = 0
    erred: bool = False  # it reported an error: the values it writes are poisoned
    op: str | None = None  # the operator the user called (see :func:`op_display_name`)
    span: Span | None = None
    seq: int = 0

    def __post_init__(self) -> None:
        o = self._origin
        if o is not None:
            self.span = o.span
            self.seq = o.seq

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

    def require(self, cond: Cond, code: ErrorCode | str, message: Message) -> str:
        return self.solver.require(cond, self.rel.origin, code, message)

    def prove(self, cond: Cond) -> bool | None:
        session = self.solver.session
        return session.prove(session.expand_joins(cond))

    def known_verdict(self, cond: Cond) -> str | None:
        session = self.solver.session
        return session.known_verdict(session.expand_joins(cond))

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

    def unify_tensors(self, a: TensorType, b: TensorType, origin: Origin) -> Type:
        """:meth:`unify` of two tensor types (a weight bound to its annotation's copy); two equal
        ones of constant shapes are logged and ``a`` is returned, what ``_rec`` gives them,
        without its walk."""
        if (
            a._cshape
            and b._cshape
            and a.dtype == b.dtype
            and a.value is None
            and b.value is None
            and a.range is None
            and b.range is None
            and self._frame is None
            and not self.flex
            and a.shape == b.shape
        ):
            if self._solver._current is None:
                self._solver.unify_log.append((a, b, origin))
            return a
        return self.unify(a, b, origin)

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
