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
4. What still defers is *unresolved*. A relation downstream of a failed one is not reported, so an
   error does not cascade.

The status is ``error`` if any diagnostic is an error, else ``inconclusive`` if Z3 could not decide
a condition, else ``unresolved`` if relations remain deferred, else ``guarded`` if guards were
recorded, else ``ok``. With ``strict=True`` every guard is an ``unproven-guard`` error.
"""

from __future__ import annotations

import contextlib
import copy
import gc
import heapq
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from symshape.encoding.conds import BoolConst, Cond, decide, expand_joins, ge, map_cond
from symshape.encoding.dims import AnyDim, Dim, DimVar, bounds, fresh_any, fresh_dimvar
from symshape.encoding.types import (
    Attrs,
    IncompleteType,
    TensorType,
    Type,
    _check_type,
    iter_dims,
    iter_types,
    map_dims,
)
from symshape.errors import (
    BAD_ATTRIBUTE,
    INCONCLUSIVE,
    INVALID_ARGUMENT,
    NEGATIVE_DIM,
    UNPROVEN_GUARD,
    UNRESOLVED,
    ErrorCode,
    SymshapeError,
)
from symshape.relations import get_relation
from symshape.relations.base import Context, RelationDef, RelationFailure
from symshape.solver.diagnostics import Diagnostic, Guard, Note, Origin, Span, caller_span
from symshape.solver.eager import EagerMemo
from symshape.solver.graph import DependencyGraph, dim_node, hole_node, rel_node
from symshape.solver.session import Fact, Session
from symshape.solver.unify import Unifier

__all__ = [
    "TypeSolver",
    "Solution",
    "RelationInstance",
    "STATUSES",
    "Outcome",
    "judge",
    "SandboxRun",
    "sandbox_run",
]

STATUSES = ("ok", "guarded", "error", "unresolved", "inconclusive")


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while solving (as mypy does): the solver allocates
    many small acyclic objects, and collections triggered by them make large programs
    superlinear. Reference counting still frees everything; the collector resumes after."""
    was = gc.isenabled()
    if was:
        gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@dataclass(eq=False, slots=True)
class RelationInstance:
    """One use of a relation (an operator call site)."""

    id: int
    rdef: RelationDef
    args: tuple[Type, ...]
    attrs: Attrs
    num_inputs: int
    origin: Origin
    state: str = "pending"  # pending | solved | failed
    inq: bool = False
    runs: int = 0

    @property
    def name(self) -> str:
        return self.rdef.name


class _Ctx(Context):
    __slots__ = ("solver", "rel", "final", "num_inputs", "name")

    def __init__(self, solver: TypeSolver, rel: RelationInstance, final: bool) -> None:
        self.solver = solver
        self.rel = rel
        self.final = final
        self.num_inputs = rel.num_inputs
        self.name = rel.name

    def resolve(self, t: Type) -> Type:
        return self.solver.unifier.resolve(t)

    def resolve_dim(self, d: Dim) -> Dim:
        return self.solver.unifier.resolve_dim(d)

    def unify(self, a: Type, b: Type) -> Type:
        return self.solver.unifier.unify(a, b, self.rel.origin)

    def unify_dim(self, a: Dim, b: Dim) -> Dim:
        from symshape.solver.unify import Mismatch

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


class _LoggingUnifier(Unifier):
    """The unifier, recording each top-level unification made outside a relation (a binding, an
    argument, a return annotation): the explainer turns each into a core candidate."""

    def __init__(self, solver: TypeSolver) -> None:
        super().__init__()
        self._solver = solver

    def unify(self, a: Type, b: Type, origin: Origin) -> Type:
        if self._frame is None and self._solver._current is None:
            self._solver.unify_log.append((a, b, origin))
        return super().unify(a, b, origin)


class TypeSolver:
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
        if not isinstance(timeout_ms, int) or isinstance(timeout_ms, bool) or timeout_ms <= 0:
            raise SymshapeError(INVALID_ARGUMENT, f"timeout_ms must be a positive int, got {timeout_ms!r}")
        self.strict = bool(strict)
        self.timeout_ms = timeout_ms
        self.unify_log: list[tuple[Type, Type, Origin]] = []
        self._current: RelationInstance | None = None
        self.explain = True
        self.unifier: Unifier = _LoggingUnifier(self)
        self.unifier.on_refine = self._on_refine
        self.unifier.on_condition = self._on_condition
        self.unifier.on_conflict = self._on_conflict
        self.unifier.fresh_hole = lambda kind: IncompleteType(kind)
        self.session = Session(timeout_ms)
        self.graph = DependencyGraph()
        self.rels: list[RelationInstance] = []
        self.readers: dict[object, set[int]] = {}
        self.errors: list[Diagnostic] = []
        self.guards: list[Guard] = []
        self.inconclusive: list[Diagnostic] = []
        self._heap: list[tuple[int, int]] = []
        self._rank: dict[int, int] = {}
        self._stated: dict[tuple[int, Cond], str] = {}
        self._nonneg_checked: set[Dim] = set()
        self._error_keys: set[tuple[str, str, object]] = set()
        self.steps = 0
        # provenance: where an admitted type came from, and which relation produces a hole
        self.sources: dict[int, tuple[Type, Origin]] = {}
        self.producer: dict[IncompleteType, RelationInstance] = {}
        self._admitted: dict[int, Type] = {}  # id -> type (kept alive, so ids stay unique)
        self.memo = EagerMemo()

    # -- building ------------------------------------------------------------------------------
    def hole(self, kind: str = "type") -> IncompleteType:
        """A fresh hole (incomplete type)."""
        return IncompleteType(kind)

    def fresh_dim(self) -> Dim:
        """A fresh unknown dimension."""
        return fresh_dimvar()

    def _origin(self, kind: str, label: str, origin: Origin | None) -> Origin:
        if origin is not None:
            return origin
        return Origin(kind, label, caller_span(3))

    def admit(self, t: Type, origin: Origin) -> Type:
        """Prepare a type entering the solver: number every ``?`` and check its dimensions."""
        if type(t) is IncompleteType:
            return t
        annotation = origin.kind == "annotation"
        if not annotation and self._admitted.get(id(t)) is t:
            return t  # admitted before: its ``?`` are numbered and its dimensions checked
        _check_type(t)
        t = _freshen_any(t)
        self._check_nonneg(t, origin)
        if annotation:
            hit = self.sources.get(id(t))
            if hit is not None and hit[1] is not origin:
                # the same type object annotates two places: give each its own occurrence
                t = copy.copy(t)
            self.sources[id(t)] = (t, origin)
        self._admitted[id(t)] = t
        return t

    def unify(self, a: Type, b: Type, origin: Origin | None = None) -> Type:
        """Unify two types; a conflict is recorded (reported by :meth:`solve`), not raised."""
        o = self._origin("unify", "unification", origin)
        a, b = self.admit(a, o), self.admit(b, o)
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
        o = self._origin("relation", name, origin)
        if type(args) not in (list, tuple) and (
            isinstance(args, (str, bytes)) or not isinstance(args, Sequence)
        ):
            raise SymshapeError(INVALID_ARGUMENT, "relation arguments must be a list of types")
        targs = tuple(self.admit(t, o) for t in args)
        if not targs:
            raise SymshapeError(INVALID_ARGUMENT, f"relation {name} needs at least one argument")
        if attrs is None:
            a = Attrs()
        elif isinstance(attrs, Attrs):
            a = attrs
        elif isinstance(attrs, Mapping):
            a = Attrs(attrs)
        else:
            raise SymshapeError(BAD_ATTRIBUTE, f"attributes must be a mapping, got {attrs!r}")
        ni = len(targs) - 1 if num_inputs is None else num_inputs
        if not 0 <= ni <= len(targs):
            raise SymshapeError(INVALID_ARGUMENT, f"num_inputs {ni} out of range for {name}")
        rel = RelationInstance(len(self.rels), rdef, targs, a, ni, o)
        if o.payload is None:
            object.__setattr__(o, "payload", rel.id)
        self.rels.append(rel)
        for t in targs[ni:]:
            if isinstance(t, IncompleteType):
                self.producer.setdefault(t, rel)
        self.graph.add_instance(rel)
        self._enqueue(rel)
        return rel

    def add_call(
        self, rdef: RelationDef, inputs: Sequence[Type], attrs: Attrs, label: str, span: Span | None
    ) -> IncompleteType:
        """An operator call during constraint generation: ``rdef`` over admitted ``inputs`` and a
        fresh output hole, which is returned. When the inputs are ground and the relation needs
        no reasoning (see :mod:`symshape.solver.eager`) it is solved here — in program order, like
        every relation whose inputs are known; otherwise it is queued for :meth:`solve`."""
        out = IncompleteType()
        rid = len(self.rels)
        origin = Origin("relation", label, span, payload=rid)
        rel = RelationInstance(rid, rdef, (*inputs, out), attrs, len(inputs), origin)
        self.rels.append(rel)
        self.producer[out] = rel
        self.graph.add_instance(rel)
        u = self.unifier
        if u.flex or u.dim_bind:
            ins = tuple([u.resolve(t) for t in inputs])
        else:  # the resolve fast path, inlined: holes standing for tensors
            parent, resolved = u.parent, u.resolved
            got: list[Type] = []
            for t in inputs:
                if isinstance(t, IncompleteType):
                    r = u.find(t) if t in parent else t
                    t = resolved.get(r, r)
                    if type(t) is not TensorType:
                        t = u.resolve(t)
                elif type(t) is not TensorType:
                    t = u.resolve(t)
                got.append(t)
            ins = tuple(got)
        vals = self.memo.lookup(rdef, ins, attrs, 1)
        if vals is None:
            self._enqueue(rel)
        else:
            u.resolved[out] = vals[0]
            rel.state = "solved"
            rel.runs = 1
            self.steps += 1
        return out

    def require(self, cond: Cond, origin: Origin, code: ErrorCode | str, message: str) -> str:
        """State a condition on the symbols (see :class:`~symshape.solver.session.Session`)."""
        cond = expand_joins(cond)  # required of every branch a join of branches stands for
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
            self._error(code_s, f"{message}{needs}", origin, v.core)
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
        hs = list(holes)
        if hs:
            root = self.unifier.find(hs[0])
            merged: set[int] = set()
            for h in hs:
                r = self.readers.pop(h, None)
                if r:
                    merged |= r
            if merged:
                self.readers.setdefault(root, set()).update(merged)
            for rid in sorted(merged):
                self._enqueue(self.rels[rid])
        for v in dvars:
            for rid in sorted(self.readers.get(v, ())):
                self._enqueue(self.rels[rid])

    def _on_condition(self, cond: Cond, origin: Origin, code: ErrorCode, message: str) -> None:
        self.require(cond, origin, code, message)

    def _on_conflict(self, code: ErrorCode, message: str, origin: Origin, a: Type, b: Type) -> None:
        self._error(code.code, message, origin)

    # -- errors ---------------------------------------------------------------------------------
    def _provenance(self, rel: RelationInstance) -> list[tuple[Origin, str]]:
        """Where a relation's inputs came from: producing relations (followed back through the
        chain of operators) and annotations, each with what it contributed."""
        out: list[tuple[Origin, str]] = []
        seen: set[int] = set()
        todo: list[Type] = list(rel.args[: rel.num_inputs])
        while todo and len(out) < 12:
            t = todo.pop(0)
            src = self.sources.get(id(t))
            if src is not None and src[0] is t:
                if src[1].seq not in seen:
                    seen.add(src[1].seq)
                    out.append((src[1], src[1].label))
                continue
            if isinstance(t, IncompleteType):
                p = self.producer.get(t)
                if p is not None and p.origin.seq not in seen and p is not rel:
                    seen.add(p.origin.seq)
                    res = self.unifier.resolve(t)
                    out.append((p.origin, f"{p.origin.label} gives `{res}`"))
                    todo.extend(p.args[: p.num_inputs])
        return out

    def _error(
        self,
        code: str,
        message: str,
        origin: Origin,
        core: Sequence[Fact] = (),
        provenance: Sequence[tuple[Origin, str]] = (),
    ) -> None:
        key = (code, message, origin.span)
        if key in self._error_keys:
            return
        self._error_keys.add(key)
        notes = []
        members = [origin]
        for f in sorted(core, key=lambda f: f.origin.sort_key()):
            if f.origin is origin:
                continue
            members.append(f.origin)
            notes.append(Note(f"{f.origin.label} requires `{f.cond}`", f.origin.span))
        for o, what in sorted(provenance, key=lambda p: p[0].sort_key()):
            if o is origin or o in members:
                continue
            members.append(o)
            notes.append(Note(what, o.span))
        self.errors.append(
            Diagnostic(code, message, origin.span, tuple(notes), origin=origin, core=tuple(members))
        )

    def _check_nonneg(self, t: Type, origin: Origin) -> None:
        if isinstance(t, TensorType):
            dims: Iterable[Dim] = t.shape if isinstance(t.shape, tuple) else ()
        elif isinstance(t, IncompleteType):
            return
        else:
            dims = iter_dims(t)
        checked = self._nonneg_checked
        for d in dims:
            if d.terms and (len(d.terms) > 1 or d.terms[0][0]) and d not in checked:
                checked.add(d)
            else:
                continue
            self._nonneg_checked.add(d)
            if bounds(d)[0] >= 0:
                continue
            c = ge(d, 0)
            what = "is negative" if isinstance(c, BoolConst) else "may be negative"
            self.require(c, origin, NEGATIVE_DIM, f"dimension `{d}` {what}")

    # -- scheduling -----------------------------------------------------------------------------
    def _register(self, rel: RelationInstance, args: Iterable[Type]) -> None:
        readers = self.readers
        rid = rel.id
        for t in args:
            if isinstance(t, IncompleteType):
                readers.setdefault(t, set()).add(rid)
                continue
            if isinstance(t, TensorType):
                if isinstance(t.shape, tuple):
                    for d in t.shape:
                        if d.has_unknowns:
                            for v in d.unknowns:
                                readers.setdefault(v, set()).add(rid)
                continue
            for x in iter_types(t):
                if isinstance(x, IncompleteType):
                    readers.setdefault(x, set()).add(rid)
            for d in iter_dims(t):
                if d.has_unknowns:
                    for v in d.unknowns:
                        readers.setdefault(v, set()).add(rid)

    def _enqueue(self, rel: RelationInstance) -> None:
        if rel.state != "pending" or rel.inq or rel is self._current:
            return
        rel.inq = True
        heapq.heappush(self._heap, (self._rank.get(rel.id, 1 << 40) , rel.id))

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
        self.steps += 1
        rel.runs += 1
        u = self.unifier
        args = tuple(u.resolve(a) for a in rel.args)
        if not final and self._run_eager(rel, args):
            rel.state = "solved"
            return
        self._current = rel
        try:
            done = rel.rdef.fn(_Ctx(self, rel, final), args, rel.attrs)
        except RelationFailure as f:
            rel.state = "failed"
            self._error(f.code, f.message, rel.origin, provenance=self._provenance(rel))
            return
        except SymshapeError as e:
            rel.state = "failed"
            self._error(e.code, e.message, rel.origin, provenance=self._provenance(rel))
            return
        except RecursionError:
            rel.state = "failed"
            self._error(INVALID_ARGUMENT.code, f"{rel.name}: type too deeply nested", rel.origin)
            return
        except Exception as e:  # a user relation's bug must not escape as a raw traceback
            rel.state = "failed"
            self._error(
                INVALID_ARGUMENT.code,
                f"relation {rel.name} raised {type(e).__name__}: {e}",
                rel.origin,
            )
            return
        finally:
            self._current = None
        verdict: object = done
        if verdict is True or verdict == "solved":
            rel.state = "solved"
            for t in args[rel.num_inputs :]:
                self._check_nonneg(u.resolve(t), rel.origin)
        else:
            # it defers: it becomes a reader of every hole and unknown in its (current) arguments,
            # so refining any of them re-queues it. A relation is queued when it is added or a
            # solve starts, so only deferring relations need trigger lists.
            self._register(rel, tuple(u.resolve(a) for a in rel.args))

    def solve(self) -> Solution:
        """Run the relations to a fixpoint and return the :class:`Solution`."""
        with gc_paused():
            return self._solve()

    def _solve(self) -> Solution:
        pending = [r for r in self.rels if r.state == "pending"]
        self._rank = self.graph.order([r.id for r in pending])
        self._heap = [(self._rank[r.id], r.id) for r in pending]
        for r in pending:
            r.inq = True
        heapq.heapify(self._heap)
        limit = 200 * (len(self.rels) + 10)
        stopped = False
        while True:
            while self._heap:
                _, rid = heapq.heappop(self._heap)
                rel = self.rels[rid]
                rel.inq = False
                if rel.state != "pending":
                    continue
                if self.steps > limit:
                    stopped = True
                    self._heap.clear()
                    break
                self._run(rel, final=False)
            if stopped:
                break
            left = sorted(
                (r for r in self.rels if r.state == "pending"),
                key=lambda r: (self._rank.get(r.id, 1 << 40), r.id),
            )
            progressed = False
            for rel in left:
                self._run(rel, final=True)
                if rel.state != "pending" or self._heap:
                    progressed = True
                    break
            if not progressed:
                break
        if stopped:
            self.inconclusive.append(
                Diagnostic(INCONCLUSIVE.code, f"the solver stopped after {limit} relation runs")
            )
        if self.explain and self.errors:
            from symshape.solver.explain import explain_errors

            explain_errors(self)
        return Solution(self)


@dataclass
class SandboxRun:
    """The outcome of running one relation alone (see :func:`sandbox_run`)."""

    pending: bool
    failed: bool
    outputs: list[Type]
    conds: list[Cond]


class _CanonicalSession(Session):
    """A session that decides by canonical forms only (the sandbox never calls Z3)."""

    def prove(self, c: Cond) -> bool | None:
        return decide(c)


class _Sandbox(TypeSolver):
    """A solver for one relation run on its own: records every condition the relation states,
    decides nothing it cannot decide by canonical forms (so the relation takes its general path)."""

    def __init__(self, timeout_ms: int) -> None:
        super().__init__(timeout_ms=timeout_ms)
        self.session = _CanonicalSession(timeout_ms)
        self.explain = False
        self.conds: list[Cond] = []
        self.failed = False

    def require(self, cond: Cond, origin: Origin, code: ErrorCode | str, message: str) -> str:
        d = decide(cond)
        if d is True:
            return "proved"
        if cond not in self.conds:
            self.conds.append(cond)
        return "refuted" if d is False else "guard"

    def _error(
        self,
        code: str,
        message: str,
        origin: Origin,
        core: Sequence[Fact] = (),
        provenance: Sequence[tuple[Origin, str]] = (),
    ) -> None:
        self.failed = True


def sandbox_run(rel: RelationInstance, inputs: Sequence[Type], outputs: Sequence[Type]) -> SandboxRun:
    """Run ``rel``'s relation alone on ``inputs`` (and fresh ``outputs``): the outputs it computes
    and the conditions it states (the explainer runs relations on generic inputs this way)."""
    sb = _Sandbox(timeout_ms=500)
    o = Origin("relation", rel.origin.label)
    try:
        inst = sb.add_relation(
            rel.rdef.name, [*inputs, *outputs], rel.attrs, num_inputs=len(inputs), origin=o
        )
        sb.solve()
    except SymshapeError:
        return SandboxRun(False, True, [], [])
    conds = list(sb.conds)
    for f in sb.session.facts:
        if f.cond not in conds:
            conds.append(f.cond)
    return SandboxRun(
        inst.state == "pending",
        sb.failed or inst.state == "failed",
        [sb.unifier.resolve(t) for t in inst.args[len(inputs) :]],
        conds,
    )


def _freshen_any(t: Type) -> Type:
    if isinstance(t, IncompleteType):
        return t
    if isinstance(t, TensorType) and isinstance(t.shape, tuple):
        if all(len(d.terms) <= 1 and (not d.terms or not d.terms[0][0] or d.is_symbol) for d in t.shape):
            return t

    def fix(d: Dim) -> Dim:
        if d.is_constant:
            return d
        anys = [a for a in d.atoms() if isinstance(a, AnyDim) and a.id == 0]
        if not anys:
            return d
        out = d
        for _ in anys:
            out = out.subs({AnyDim(0): fresh_any()})
        return out

    return map_dims(t, fix)


def judge(
    errors: Sequence[object],
    inconclusive: Sequence[object],
    unresolved: Sequence[object],
    guards: Sequence[object],
) -> str:
    """The status: ``error`` over ``inconclusive`` over ``unresolved`` over ``guarded`` over ``ok``."""
    if errors:
        return "error"
    if inconclusive:
        return "inconclusive"
    if unresolved:
        return "unresolved"
    if guards:
        return "guarded"
    return "ok"


class Outcome:
    """What a Solution and an InferenceResult share: the status and the diagnostic lists."""

    status: str
    errors: list[Diagnostic]
    inconclusive: list[Diagnostic]
    unresolved: list[Diagnostic]

    @property
    def ok(self) -> bool:
        """True when the status is ``ok`` or ``guarded``."""
        return self.status in ("ok", "guarded")

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """Errors, then inconclusive conditions, then unresolved expressions."""
        return [*self.errors, *self.inconclusive, *self.unresolved]


@dataclass
class Solution(Outcome):
    """The outcome of :meth:`TypeSolver.solve`."""

    solver: TypeSolver = field(repr=False)
    status: str = "ok"
    errors: list[Diagnostic] = field(default_factory=list)
    guards: list[Guard] = field(default_factory=list)
    unresolved: list[Diagnostic] = field(default_factory=list)
    inconclusive: list[Diagnostic] = field(default_factory=list)

    def __init__(self, solver: TypeSolver) -> None:
        self.solver = solver
        self.errors = sorted(solver.errors, key=lambda d: _diag_key(d))
        # guards stated before an unknown in them was bound are shown with its value
        self.guards = []
        seen: set[Cond] = set()
        u = solver.unifier
        for g in solver.guards:
            c = map_cond(g.cond, u.resolve_dim) if u.dim_bind else g.cond
            if decide(c) is True or c in seen:
                continue
            seen.add(c)
            self.guards.append(g if c is g.cond else Guard(c, g.origin, g.code))
        self.inconclusive = list(solver.inconclusive)
        failed = [rel_node(r.id) for r in solver.rels if r.state == "failed"]
        poisoned = solver.graph.downstream(failed) if failed else set()
        self.unresolved = []
        for r in solver.rels:
            if r.state == "pending" and rel_node(r.id) not in poisoned:
                args = ", ".join(str(solver.unifier.resolve(a)) for a in r.args)
                self.unresolved.append(
                    Diagnostic(
                        UNRESOLVED.code,
                        f"cannot infer the types of {r.origin.label}({args}); add an annotation",
                        r.origin.span,
                        origin=r.origin,
                    )
                )
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
        from symshape.display import result_graph

        return result_graph(self)

    def _repr_html_(self) -> str:
        from symshape.display import solution_html

        return solution_html(self)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        from symshape.display import solution_text

        p.text(solution_text(self) if not cycle else "Solution(...)")

    def __repr__(self) -> str:
        return (
            f"Solution(status={self.status!r}, errors={len(self.errors)}, "
            f"guards={[str(g) for g in self.guards]})"
        )


def _diag_key(d: Diagnostic) -> tuple[int, str, int, int, int]:
    if d.origin is not None:
        return d.origin.sort_key()
    return (1, "", 0, 0, 0)


_ = (hole_node, dim_node)
