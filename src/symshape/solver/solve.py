"""The type solver: unification plus relations run to a fixpoint, conditions decided by Z3.

``TypeSolver.solve`` does:

1. Build the dependency graph (:mod:`symshape.solver.graph`) over the pending relations and the
   holes/unknowns they read and write, and rank the relations in topological order of its
   condensation.
2. Pop the lowest-ranked queued relation, resolve its arguments and run it; if it defers, register
   it as a *reader* of every hole and unknown dimension in them (also nested inside tuples and
   function types: seed 000's trigger lists). Whatever it unifies or binds re-queues exactly the
   readers of the refined holes and unknowns; conditions it states go to the Z3 session (decided on the spot
   when the canonical forms decide them).
3. When the queue is empty, give the first still-deferred relation one *final* run, in which it may
   make default choices (equate unknown dimensions); if that changed anything, go back to 2.
4. What still defers is *unresolved*.

**No cascades.** A relation instance that reports an error (it fails, a condition it states is
refuted, a unification it makes conflicts) *poisons* the values it writes: the holes of its
outputs (those that are not also its inputs) and the unknown dimensions it created there. A
relation that reads a poisoned value (in any argument, also nested in a tuple or function type) is
not run: it is marked ``poisoned`` and poisons its own outputs in turn, so the error's dependents
in the dependency graph are neither errors nor *unresolved*, and the one root error is reported.
Constraint generation poisons the value of an expression it found wrong itself (a tuple index out
of range) through :meth:`TypeSolver.poison`. Guards that ``strict`` turns into errors do not
poison (the value is well defined where the guard holds).

**Holes that must be resolved.** ``ok`` means every type is resolved. When the solver is used
directly, every hole the user made (:meth:`TypeSolver.hole`, or an ``IncompleteType`` passed as
an argument of :meth:`TypeSolver.unify` or :meth:`TypeSolver.add_relation`) must be determined by
the end, with every hole its type contains: a hole class that nothing determined is an
``unresolved`` diagnostic at the place the hole was made
(``report_holes``; :func:`symshape.infer` turns it off, as it names the expressions whose types
remain open itself, and its internal holes are none of the user's business).

The status is ``error`` if any diagnostic is an error, else ``inconclusive`` if Z3 could not decide
a condition, else ``unresolved`` if relations remain deferred, else ``guarded`` if guards were
recorded, else ``ok``. With ``strict=True`` every guard is an ``unproven-guard`` error.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from symshape.encoding.conds import BoolConst, Cond
from symshape.encoding.dims import Dim, DimVar, fresh_dimvar
from symshape.encoding.leaf_types import tensor_settled
from symshape.encoding.types import (
    Attrs,
    IncompleteType,
    TensorType,
    Type,
    iter_holes,
)
from symshape.errors import (
    BAD_ATTRIBUTE,
    INCONCLUSIVE,
    INVALID_ARGUMENT,
    NEGATIVE_DIM,
    UNPROVEN_GUARD,
    ErrorCode,
    SymshapeError,
)
from symshape.relations import get_relation
from symshape.relations.base import Message, RelationFailure, message_text
from symshape.solver.bindings import COMPOSITE
from symshape.solver.diagnostics import (
    Diagnostic,
    Guard,
    Origin,
    OriginKind,
    conflict_message,
)
from symshape.solver.eager import EagerMemo
from symshape.solver.explain import explain_errors
from symshape.solver.gc_pause import gc_paused
from symshape.solver.graph import DependencyGraph
from symshape.solver.holes import Poison, add_readers, admission_form, nonneg_conditions, record_annotation
from symshape.solver.instance import (
    LoggingUnifier,
    RelationInstance,
    RelationState,
    SolverContext,
    add_call,
)
from symshape.solver.origins import _relation_origin_fast as _relation_origin_fast  # re-export
from symshape.solver.origins import _relation_origin_plain as _relation_origin_plain  # re-export
from symshape.solver.origins import make_origin
from symshape.solver.outcome import Solution
from symshape.solver.provenance import core_notes, provenance
from symshape.solver.records import SolverRecords
from symshape.solver.session import Fact, Session
from symshape.source import Span, caller_span

__all__ = ["TypeSolver", "gc_paused"]  # (gc_paused lives in symshape.solver.gc_pause)


# the states the scheduler tests and sets on every run, bound once (looking a member up on its
# enum class costs several times the comparison)
_PENDING, _SOLVED, _FAILED = RelationState.PENDING, RelationState.SOLVED, RelationState.FAILED
_ANNOTATION, _UNIFY = OriginKind.ANNOTATION, OriginKind.UNIFY  # (likewise, per admitted type)

_NO_ATTRS = Attrs()  # the attributes of a relation given none (immutable: shared)
_RID_BITS = 40  # a queue entry is ``rank << _RID_BITS | id`` (ids below 2**40)
_RID_MASK = (1 << _RID_BITS) - 1


def check_timeout(timeout_ms: object) -> None:
    """Raise ``SymshapeError`` (``invalid-argument``) unless ``timeout_ms`` is a positive int."""
    if not isinstance(timeout_ms, int) or isinstance(timeout_ms, bool) or timeout_ms <= 0:
        raise SymshapeError(INVALID_ARGUMENT, f"timeout_ms must be a positive int, got {timeout_ms!r}")


class TypeSolver(SolverRecords):
    """Unification and relations over types with symbolic dimensions.

    >>> import symshape as ss
    >>> n = ss.dim("n")
    >>> solver = ss.TypeSolver()
    >>> out = solver.hole()
    >>> _ = solver.add_relation("broadcast", [ss.Tensor((n, 1)), ss.Tensor((1, 4)), out])
    >>> sol = solver.solve()
    >>> sol.status, str(sol.resolve(out))
    ('ok', 'Tensor[(n, 4), float32]')
    """

    def __init__(self, strict: bool = False, timeout_ms: int = 2000) -> None:
        check_timeout(timeout_ms)
        self.strict = bool(strict)
        self.timeout_ms = timeout_ms
        self.unify_log: list[tuple[Type, Type, Origin]] = []
        self._current: RelationInstance | None = None
        self.explain = True
        self.unifier: LoggingUnifier = LoggingUnifier(self)
        self.unifier.on_refine = self._on_refine
        self.unifier.on_condition = self._on_condition
        self.unifier.on_conflict = self._on_conflict
        self.unifier.fresh_hole = lambda kind: IncompleteType(kind)
        self.session = Session(timeout_ms)
        self.graph = DependencyGraph()
        self._graph_add = self.graph.instance_sink()
        # the instances made pending (the others are solved when made and never pending again):
        # the scheduler looks for pending ones among these
        self._open: list[RelationInstance] = []
        # the instances, the producers of holes and the sources of annotations (SolverRecords)
        self._init_records()
        self.readers: dict[object, set[int]] = {}
        self.errors: list[Diagnostic] = []
        self.guards: list[Guard] = []
        self.inconclusive: list[Diagnostic] = []
        self._heap: list[int] = []  # queued relations: rank << _RID_BITS | id (see _enqueue)
        self._rank: dict[int, int] = {}
        self._stated: dict[tuple[int, Cond], str] = {}
        self._nonneg_checked: set[Dim] = set()
        self._error_keys: set[tuple[str, str, object]] = set()
        self.steps = 0
        self._admitted: dict[int, Type] = {}  # id -> type (kept alive, so ids stay unique)
        self.memo = EagerMemo()
        #: holes made through the API must be resolved by the end (see the module docstring)
        self.report_holes = True
        # each hole the user made or passed, with the place it was first met (in that order): a
        # dict, not a list of pairs, so that a relation adds no tracked object to it
        self._user_hole_spans: dict[IncompleteType, Span | None] = {}
        self._solving = False  # within solve(): a new pending relation is pushed on the heap
        self._attrs_cache: dict[tuple[tuple[str, type, Any], ...], Attrs] = {}
        # poisoned values: hole-class roots and unknown dimensions written by failed relations
        self._poison = Poison()
        # _on_refine has nothing to do while nothing reads a hole or an unknown and nothing is
        # poisoned (both objects are kept for the solver's life)
        self.unifier.watch_refine(self.readers, self._poison.holes)

    # -- building ------------------------------------------------------------------------------
    def hole(self, kind: str = "type") -> IncompleteType:
        """A fresh hole (incomplete type); unless something determines it, :meth:`solve` ends
        ``unresolved`` (see ``report_holes``)."""
        h = IncompleteType(kind)
        if self.report_holes:
            self._user_hole_spans[h] = caller_span(2)
        return h

    @property
    def _user_holes(self) -> list[tuple[IncompleteType, Span | None]]:
        """The holes the user made or passed, each with the place it was first met."""
        return list(self._user_hole_spans.items())

    def _note_user_holes(self, types: Iterable[Type], span: Span | None) -> None:
        # a hole's first place is the one reported (see outcome._open_holes): later ones are not
        # kept (fewer objects for the garbage collector to walk, per relation)
        noted = self._user_hole_spans
        for t in types:
            if type(t) is IncompleteType and t not in noted:
                noted[t] = span

    def poison(self, t: Type) -> Type:
        """Mark ``t`` (its holes) as the value of an expression found wrong: relations reading it
        are not run and are not reported (the expression's error is). Returns ``t``."""
        for h in iter_holes(t):
            self._poison.holes.add(self.unifier.find(h))
        return t

    def _attrs_of(self, attrs: Mapping[str, Any]) -> Attrs:
        """``Attrs(attrs)``, one object per distinct mapping of plain values (a chain of relations
        with the same attributes shares it)."""
        try:
            key = tuple(sorted((k, type(v), v) for k, v in attrs.items()))  # True is not 1 here
            hit = self._attrs_cache.get(key)
        except TypeError:  # unhashable or unorderable values: no sharing
            return Attrs(attrs)
        if hit is None:
            hit = self._attrs_cache[key] = Attrs(attrs)
        return hit

    def fresh_dim(self) -> Dim:
        """A fresh unknown dimension."""
        return fresh_dimvar()

    def _origin(self, kind: OriginKind, label: str, origin: Origin | None) -> Origin:
        if origin is not None:
            return origin
        return make_origin(kind, label, caller_span(3))

    def admit(self, t: Type, origin: Origin) -> Type:
        """Prepare a type entering the solver: number every ``?`` and check its dimensions."""
        cls = type(t)
        if cls is IncompleteType:
            return t
        if origin.kind == _ANNOTATION:
            # (a settled tensor annotation, a model's weight, has nothing to check)
            if cls is not TensorType or not tensor_settled(t):  # type: ignore[arg-type]
                t = self._checked(t, origin)
            return record_annotation(self._sources, self._admitted, t, origin)
        k = id(t)
        admitted = self._admitted
        if admitted.get(k) is t:
            return t  # admitted before: its ``?`` are numbered and its dimensions checked
        if cls in COMPOSITE and t._settled:  # type: ignore[union-attr]
            admitted[k] = t  # flagged when built: no ``?``, no dimension to check
            return t
        t = self._checked(t, origin)
        admitted[id(t)] = t
        return t

    def admit_settled(self, t: TensorType, origin: Origin) -> Type:
        """:meth:`admit` of an annotation by a tensor type of constant shape (``t._cshape``, a
        weight): without a value there is nothing to check, only the annotation to record."""
        if t.value is not None:
            return self.admit(t, origin)
        return record_annotation(self._sources, self._admitted, t, origin)

    def _checked(self, t: Type, origin: Origin) -> Type:
        t, conds = admission_form(t, self._nonneg_checked)
        for c, message in conds:
            self.require(c, origin, NEGATIVE_DIM, message)
        return t

    def unify(self, a: Type, b: Type, origin: Origin | None = None) -> Type:
        """Unify two types; a conflict is recorded (reported by :meth:`solve`), not raised."""
        # (the steps of _origin and admit for the common cases, inline: this is a hot path)
        o = origin if origin is not None else make_origin(_UNIFY, "unification", caller_span(2))
        admitted = self._admitted if o.kind != _ANNOTATION else {}  # (an annotation: always)
        if type(a) is not IncompleteType and admitted.get(id(a)) is not a:
            a = self.admit(a, o)
        if type(b) is not IncompleteType and admitted.get(id(b)) is not b:
            b = self.admit(b, o)
        if self.report_holes and (type(a) is IncompleteType or type(b) is IncompleteType):
            self._note_user_holes((a, b), o.span)
        self.graph.add_unification(-o.seq, (a, b))
        return self.unifier.unify(a, b, o)

    def add_relation(
        self,
        name: str,
        args: Sequence[Type],
        attrs: Mapping[str, Any] | Attrs | None = None,
        num_inputs: int | None = None,
        origin: Origin | None = None,
    ) -> RelationInstance:
        """Add an instance of relation ``name`` over ``args`` (inputs, then outputs)."""
        rdef = get_relation(name)
        o = self._origin(OriginKind.RELATION, name, origin)
        if type(args) not in (list, tuple) and (
            isinstance(args, (str, bytes)) or not isinstance(args, Sequence)
        ):
            raise SymshapeError(INVALID_ARGUMENT, "relation arguments must be a list of types")
        targs = tuple(self.admit(t, o) for t in args)
        if not targs:
            raise SymshapeError(INVALID_ARGUMENT, f"relation {name} needs at least one argument")
        if self.report_holes:
            self._note_user_holes(targs, o.span)
        if attrs is None:
            a = _NO_ATTRS
        elif isinstance(attrs, Attrs):
            a = attrs
        elif isinstance(attrs, Mapping):
            a = self._attrs_of(attrs)
        else:
            raise SymshapeError(BAD_ATTRIBUTE, f"attributes must be a mapping, got {attrs!r}")
        ni = len(targs) - 1 if num_inputs is None else num_inputs
        if not 0 <= ni <= len(targs):
            raise SymshapeError(INVALID_ARGUMENT, f"num_inputs {ni} out of range for {name}")
        rel = RelationInstance(len(self._rels), rdef, targs, a, ni, o)
        if o.payload is None:
            object.__setattr__(o, "payload", rel.id)
        self._rels.append(rel)
        self._open.append(rel)
        for t in targs[ni:]:
            if isinstance(t, IncompleteType):
                self._producer.setdefault(t, rel)
        self.graph.add_instance(rel)
        self._enqueue(rel)
        return rel

    add_call = add_call  # (symshape.solver.instance.add_call: the per-call path, written out)

    def require(self, cond: Cond, origin: Origin, code: ErrorCode | str, message: Message) -> str:
        """State a condition on the symbols (see :class:`~symshape.solver.session.Session`)."""
        cond = self.session.expand_joins(cond)  # required of every branch a join stands for
        key = (origin.seq, cond)
        hit = self._stated.get(key)
        if hit is not None:
            return hit
        v = self.session.check(cond)
        code_s = code.code if isinstance(code, ErrorCode) else code
        if v.kind == "guard":
            self.session.assume(cond, origin)
            g = Guard(cond, origin)
            self.guards.append(g)
            if self.strict:
                self._error(
                    UNPROVEN_GUARD.code,
                    f"{origin.label} needs `{cond}`, which does not follow from the declarations",
                    origin,
                )
        elif v.kind == "refuted":
            needs = "" if isinstance(cond, BoolConst) else f" (needs `{cond}`)"
            self._error(code_s, f"{message_text(message)}{needs}", origin, v.core)
        elif v.kind == "unknown":
            d = Diagnostic(
                INCONCLUSIVE.code,
                f"{origin.label}: Z3 could not decide `{cond}` ({v.reason or 'unknown'})",
                origin.span,
                origin=origin,
            )
            self.inconclusive.append(d)
        self._stated[key] = v.kind
        return v.kind

    # -- hooks from the unifier ----------------------------------------------------------------
    def _on_refine(self, holes: Iterable[IncompleteType], dvars: Iterable[DimVar]) -> None:
        if not self.readers and not self._poison.holes:
            return  # nothing reads a hole or an unknown yet, and nothing is poisoned
        hs = list(holes)
        if hs:
            root = self.unifier.find(hs[0])
            poison = self._poison.holes
            if poison and root not in poison and any(h in poison for h in hs):
                poison.add(root)
            merged: set[int] = set()
            for h in hs:
                r = self.readers.pop(h, None)
                if r:
                    merged |= r
            if merged:
                self.readers.setdefault(root, set()).update(merged)
            for rid in sorted(merged):
                self._enqueue(self._rel_at(rid))
        for v in dvars:
            for rid in sorted(self.readers.get(v, ())):
                self._enqueue(self._rel_at(rid))

    def _on_condition(self, cond: Cond, origin: Origin, code: ErrorCode, message: str) -> None:
        self.require(cond, origin, code, message)

    def _on_conflict(self, code: ErrorCode, message: str, origin: Origin, a: Type, b: Type) -> None:
        u = self.unifier
        before = getattr(u, "before", None)
        if before is not None and str(a) == str(b):
            # both sides print alike once unified: show them as they were before
            prefix = conflict_message("cannot unify", a, b)
            if message.startswith(prefix + ": "):
                detail = message[len(prefix) + 2 :]
                message = conflict_message("cannot unify", u.resolve(before[0]), u.resolve(before[1]), detail)
        self._error(code.code, message, origin)

    # -- errors ---------------------------------------------------------------------------------
    def _error(
        self,
        code: str,
        message: str,
        origin: Origin,
        core: Sequence[Fact] = (),
        provenance: Sequence[tuple[Origin, str]] = (),
    ) -> None:
        cur = self._current
        if cur is not None and code != UNPROVEN_GUARD.code:
            cur.erred = True
        key = (code, message, origin.span)
        if key in self._error_keys:
            return
        self._error_keys.add(key)
        notes, members = core_notes(origin, core, provenance)
        self.errors.append(Diagnostic(code, message, origin.span, notes, origin=origin, core=members))

    def _check_nonneg(self, t: Type, origin: Origin) -> None:
        for c, message in nonneg_conditions(t, self._nonneg_checked):
            self.require(c, origin, NEGATIVE_DIM, message)

    # -- scheduling -----------------------------------------------------------------------------
    def _enqueue(self, rel: RelationInstance) -> None:
        if not self._solving:
            return  # (solve() queues every pending relation when it starts)
        if rel.state != _PENDING or rel.inq or rel is self._current:
            return
        rel.inq = True
        # one int per entry, ordered as (rank, id) would be: ints compare faster than tuples
        heapq.heappush(self._heap, self._rank.get(rel.id, 1 << 40) << _RID_BITS | rel.id)

    def _run_eager(self, rel: RelationInstance, args: tuple[Type, ...]) -> bool:
        """Solve ``rel`` from the memo of eager results (see :mod:`symshape.solver.eager`) when its
        inputs are ground and its outputs are holes nothing has determined yet."""
        ni = rel.num_inputs
        outs = args[ni:]
        holes: list[IncompleteType] = []
        for h in outs:
            if not isinstance(h, IncompleteType) or h.kind != "type":
                return False
            holes.append(h)
        vals = self.memo.lookup(rel.rdef, args[:ni], rel.attrs, len(outs))
        if vals is None:
            return False
        u = self.unifier
        readers = self.readers
        for h, v in zip(holes, vals):
            root = u.find(h)
            if root in u.resolved:  # the same hole twice among the outputs
                u.unify(root, v, rel.origin)
                continue
            u.resolved[root] = v
            if root in readers:
                self._on_refine((root,), ())
        return True

    def _run(self, rel: RelationInstance, final: bool) -> None:
        if self._poison and self._poison.read_by(self.unifier, rel):
            self._poison.skip(self.unifier, rel)
            return
        self.steps += 1
        rel.runs += 1
        u = self.unifier
        args = tuple(u.resolve(a) for a in rel.args)
        if not final and self._run_eager(rel, args):
            rel.state = _SOLVED
            return
        self._current = rel
        try:
            done: object = rel.rdef.fn(SolverContext(self, rel, final), args, rel.attrs)
            if done is True or done == "solved":
                rel.state = _SOLVED
                for t in args[rel.num_inputs :]:
                    self._check_nonneg(u.resolve(t), rel.origin)
            else:
                # it defers: it becomes a reader of every hole and unknown in its (current)
                # arguments, so refining any of them re-queues it. A relation is queued when it is
                # added or a solve starts, so only deferring relations need trigger lists.
                add_readers(self.readers, rel.id, [u.resolve(a) for a in rel.args])
        except RelationFailure as f:
            rel.state = _FAILED
            self._error(f.code, f.message, rel.origin, provenance=provenance(self, rel))
        except SymshapeError as e:
            rel.state = _FAILED
            self._error(e.code, e.message, rel.origin, provenance=provenance(self, rel))
        except RecursionError:
            rel.state = _FAILED
            self._error(INVALID_ARGUMENT.code, f"{rel.display}: type too deeply nested", rel.origin)
        except Exception as e:  # a user relation's bug must not escape as a raw traceback
            rel.state = _FAILED
            self._error(
                INVALID_ARGUMENT.code,
                f"relation {rel.name} raised {type(e).__name__}: {e}",
                rel.origin,
            )
        finally:
            self._current = None
        if rel.erred or rel.state == _FAILED:
            rel.erred = True
            self._poison.outputs_of(u, rel, args)

    def solve(self) -> Solution:
        """Run the relations to a fixpoint and return the :class:`Solution`."""
        with gc_paused():
            self._solving = True
            try:
                return self._solve()
            finally:
                self._solving = False

    def _solve(self) -> Solution:
        pending = [r for r in self._open if r.state == _PENDING]
        self._rank = self.graph.order([r.id for r in pending])
        rank = self._rank
        self._heap = [rank[r.id] << _RID_BITS | r.id for r in pending]
        for r in pending:
            r.inq = True
        heapq.heapify(self._heap)
        limit = 200 * (len(self._rels) + 10)
        stopped = False
        while True:
            while self._heap:
                rid = heapq.heappop(self._heap) & _RID_MASK
                rel = self._rel_at(rid)
                rel.inq = False
                if rel.state != _PENDING:
                    continue
                if self.steps > limit:
                    stopped = True
                    self._heap.clear()
                    break
                self._run(rel, final=False)
            if stopped:
                break
            left = sorted(
                (r for r in self._open if r.state == _PENDING),
                key=lambda r: (self._rank.get(r.id, 1 << 40), r.id),
            )
            if self._poison:
                # relations waiting on a poisoned value never get it: skip them (rank order, so
                # a chain of them is skipped in one sweep)
                for rel in left:
                    if self._poison.read_by(self.unifier, rel):
                        self._poison.skip(self.unifier, rel)
                left = [r for r in left if r.state == _PENDING]
            progressed = False
            for rel in left:
                self._run(rel, final=True)
                if rel.state != _PENDING or self._heap:
                    progressed = True
                    break
            if not progressed:
                break
        if stopped:
            self.inconclusive.append(
                Diagnostic(INCONCLUSIVE.code, f"the solver stopped after {limit} relation runs")
            )
        if self.explain and self.errors:
            explain_errors(self)
        return Solution(self)
