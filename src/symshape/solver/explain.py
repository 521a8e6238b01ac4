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

Nothing caps the number of candidates; a time budget does (:func:`_budget`: 2.5 Z3 timeouts, at
least 2 s). If it runs out while minimizing, the diagnostic keeps the (unminimized) core it has and
says so in a note ("the explanation was not minimized: ..."); if no conflict was found in time, a
note says that ("the explanation was not found: ...").

The formulas are kept on the diagnostic (:class:`Evidence`), so tests can re-check minimality.
"""

from __future__ import annotations

import itertools
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import z3

from symshape.encoding.conds import BoolOp, Cmp, Cond, decide, map_cond
from symshape.encoding.dims import AnyDim, Atom, Dim, DimLike, DimVar, Sym, bounds
from symshape.encoding.types import (
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    ShapeType,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeVar,
    iter_dims,
    map_dims,
    subst_typevars,
)
from symshape.encoding.z3 import Z3Encoder
from symshape.solver.diagnostics import Diagnostic, Evidence, Note, Origin
from symshape.solver.positions import FORMS as _FORMS
from symshape.solver.positions import Node as _Node
from symshape.solver.positions import Part as _Part
from symshape.solver.positions import Unsupported as _Unsupported
from symshape.solver.positions import attr_of as _attr
from symshape.solver.positions import blank as _blank
from symshape.solver.positions import same_structure as _same_structure
from symshape.solver.positions import type_at as _type_at
from symshape.solver.sandbox import sandbox_run
from symshape.source import Span

if TYPE_CHECKING:
    from symshape.solver.instance import RelationInstance
    from symshape.solver.solve import TypeSolver

__all__ = ["explain_errors"]

_HUB = 8  # a key shared by more candidates than this is expanded late
_GEN_PREFIX = "_g#"


@dataclass
class _Member:
    origin: Origin
    premise: list[Any] = field(default_factory=list)  # the inputs' structure
    dpremise: list[Any] = field(default_factory=list)  # input dimensions a run depended on
    parts: list[_Part] = field(default_factory=list)
    keys: set[tuple[str, int]] = field(default_factory=set)
    rels: list[RelationInstance] = field(default_factory=list)
    outputs: list[Type] = field(default_factory=list)
    link: bool = True  # only forwards positions (a binding, an elementwise operator)
    pairs: list[tuple[Type, Type]] = field(default_factory=list)

    def formula(self, ctx: z3.Context, parts: Sequence[_Part] | None = None, structure: bool = True) -> Any:
        """The contribution; ``structure=False`` leaves the structural premise out (it is then
        asserted as background). Forwarding parts are not in it: they are background links."""
        ps = [p for p in (self.parts if parts is None else parts) if not p.forward]
        body = z3.And(*[p.formula for p in ps], ctx) if ps else z3.BoolVal(True, ctx)
        prem = [*self.premise, *self.dpremise] if structure else list(self.dpremise)
        if prem:
            return z3.Implies(z3.And(*prem, ctx), body)
        return body


class _Enc(Z3Encoder):
    """Lower dimensions with generic symbols mapped to position terms and unknowns renamed
    locally (names never depend on process-global counters)."""

    def __init__(self, ctx: z3.Context, owner: _Explainer) -> None:
        super().__init__(ctx)
        self.owner = owner
        self.generic: dict[str, Any] = {}

    def atom(self, a: Atom) -> Any:
        if isinstance(a, Sym) and a.name.startswith(_GEN_PREFIX):
            t = self.generic.get(a.name)
            if t is None:
                raise _Unsupported(a.name)
            return t
        if isinstance(a, (DimVar, AnyDim)):
            hit = self._atoms.get(a._key)
            if hit is not None:
                return hit
            v = self.owner.var("u")
            self.axioms.append(v >= (1 if isinstance(a, AnyDim) else 0))
            self._atoms[a._key] = v
            return v
        return super().atom(a)


class _Explainer:
    def __init__(self, solver: TypeSolver) -> None:
        self.solver = solver
        self.u = solver.unifier
        self.ctx = z3.Context()
        self.z = _Enc(self.ctx, self)
        self.axioms: list[Any] = []
        self._n = itertools.count()
        self._gen = itertools.count()
        self.codes: dict[str, int] = {}
        self.hole_nodes: dict[int, _Node] = {}
        self.occ_nodes: dict[int, _Node] = {}
        self.ann: dict[int, tuple[Type, Origin]] = {id(t): (t, o) for t, o in solver.sources.values()}
        self.members: dict[int, _Member] = {}  # by origin seq
        self._keys: set[tuple[str, int]] = set()
        self.structural = False  # explaining a structural conflict (see _explain_one)
        self.gen_pos: dict[str, tuple[int, tuple[int, ...], int]] = {}  # generic symbol -> position
        self.struct_memo: dict[object, Any] = {}  # see StructuralRun.parts

    # -- terms -----------------------------------------------------------------------------------
    def var(self, prefix: str) -> Any:
        return z3.Int(f"{prefix}{next(self._n)}", self.ctx)

    def const(self, v: int) -> Any:
        return z3.IntVal(v, self.ctx)

    def code(self, s: str) -> int:
        c = self.codes.get(s)
        if c is None:
            c = self.codes[s] = len(self.codes) + 1
        return c

    def skeleton(self, r: Type) -> _Node:
        """Fresh variables shaped like the (resolved) type ``r``."""
        n = _Node(self.var("f"), self.var("s"), self.var("r"), self.var("t"), self.var("h"), self.var("a"))
        self.axioms.append(n.size >= 1)
        if isinstance(r, TensorType) and isinstance(r.shape, tuple):
            n.dims = [self.var("d") for _ in r.shape]
            self.axioms.extend(d >= 0 for d in n.dims)
            if r.value is not None:  # a shape value's entries are positions too (any sign)
                n.vals = [self.var("v") for _ in _value_list(r.value)]
        elif isinstance(r, TupleType):
            n.kids = [self.skeleton(f) for f in r.fields]
        elif isinstance(r, FuncType) and not r.type_params:
            n.kids = [self.skeleton(p) for p in (*r.params, r.ret)]
        elif isinstance(r, TypeCall):
            n.kids = [self.skeleton(a) for a in r.args]
        if not isinstance(r, IncompleteType):
            # the size of a compound type (which makes the occurs check arithmetic); only under
            # the form and arity the skeleton was shaped after, so the skeleton states nothing
            size = 1 + sum((k.size for k in n.kids), self.const(0))
            shaped = [n.form == _FORMS.get(type(r), 0)]
            if n.kids:
                shaped.append(n.arity == (len(n.kids) - 1 if isinstance(r, FuncType) else len(n.kids)))
            self.axioms.append(z3.Implies(z3.And(*shaped, self.ctx), n.size == size))
        return n

    def enc(self, t: Type, sandbox: bool = False) -> _Node:
        """The node of a type occurrence: holes and annotated occurrences are positions."""
        if not sandbox:
            if isinstance(t, IncompleteType):
                self._keys.add(("hole", t.id))
                hit = self.hole_nodes.get(t.id)
                if hit is None:
                    hit = self.hole_nodes[t.id] = self.skeleton(self.u.resolve(t))
                return hit
            if id(t) in self.ann:
                self._keys.add(("occ", self.ann[id(t)][1].seq))
                hit = self.occ_nodes.get(id(t))
                if hit is None:
                    hit = self.occ_nodes[id(t)] = self.skeleton(self.u.resolve(t))
                return hit
        elif isinstance(t, IncompleteType):
            return self.skeleton(t)
        return self.struct(t, sandbox)

    def struct(self, t: Type, sandbox: bool = False) -> _Node:
        """The node of a type built from its parts (kids through :meth:`enc`)."""
        c, none = self.const, -1
        form = c(_FORMS.get(type(t), 0))
        match t:
            case TensorType(shape, dtype):
                dims: list[Any] = []
                if isinstance(shape, tuple):
                    rank = c(len(shape))
                    for d in shape:
                        self._note_dim(d)
                        dims.append(self.z.dim(d))
                else:
                    rank = self.var("r")
                dt = c(self.code(f"dtype:{dtype}")) if isinstance(dtype, str) else self.var("t")
                node = _Node(form, c(1), rank, dt, c(0), c(0), dims)
                if t.value is not None:
                    for e in _value_list(t.value):
                        if e is None:
                            node.vals.append(self.var("v"))
                        else:
                            self._note_dim(e)
                            node.vals.append(self.z.dim(e))
                return node
            case TupleType(fields):
                kids = [self.enc(f, sandbox) for f in fields]
                size = 1 + sum((k.size for k in kids), c(0))
                return _Node(form, size, c(none), c(none), c(0), c(len(kids)), [], kids)
            case FuncType(params, ret, tps, _, _):
                if tps:
                    # a polymorphic function type: each occurrence is one instantiation, its
                    # type and dim parameters fresh (the size stays free: a hole holding the
                    # polymorphic type has no positions for its parts)
                    s = self.var("s")
                    self.axioms.append(s >= 1)
                    inst = self._instantiate(t)
                    kids = [] if inst is None else [self.enc(p, sandbox) for p in (*inst.params, inst.ret)]
                    return _Node(form, s, c(none), c(none), c(0), c(len(params)), [], kids)
                kids = [self.enc(p, sandbox) for p in (*params, ret)]
                size = 1 + sum((k.size for k in kids), c(0))
                return _Node(form, size, c(none), c(none), c(0), c(len(params)), [], kids)
            case TypeCall(func, args):
                kids = [self.enc(a, sandbox) for a in args]
                size = 1 + sum((k.size for k in kids), c(0))
                head = c(self.code(f"adt:{func}"))
                return _Node(form, size, c(none), c(none), head, c(len(kids)), [], kids)
            case TypeVar() | GlobalTypeVar():
                return _Node(form, c(1), c(none), c(none), c(self.code(f"var:{t}")), c(0))
            case ShapeType(ndim):
                r = c(ndim) if ndim is not None else self.var("r")
                return _Node(form, c(1), r, c(none), c(0), c(0))
            case _:
                return _Node(form, c(1), c(none), c(none), c(0), c(0))

    def _instantiate(self, ft: FuncType) -> FuncType | None:
        """``ft`` with its type parameters replaced by fresh holes and its dim parameters by
        fresh symbols (None when it has parameters of other kinds)."""
        if any(tp.kind not in ("dim", "type") for tp in ft.type_params):
            return None
        holes: dict[TypeVar, Type] = {tp: IncompleteType() for tp in ft.type_params if tp.kind == "type"}
        names = {tp.name for tp in ft.type_params if tp.kind == "dim"}
        fresh: dict[Dim | Atom | str, DimLike] = {}
        for d in iter_dims(ft):
            for a in d.atoms():
                if isinstance(a, Sym) and a.name in names and a not in fresh:
                    k = next(self._gen)
                    fresh[a] = Dim(((((Sym(f"_i#{k}", a.min, a.max), 1),), 1),))

        def inst(t: Type) -> Type:
            t = subst_typevars(t, holes) if holes else t
            return map_dims(t, lambda d: d.subs(fresh)) if fresh else t

        return FuncType(tuple(inst(p) for p in ft.params), inst(ft.ret), (), (), ft.pure)

    def _note_dim(self, d: Dim) -> None:
        for v in d.unknowns:
            self._keys.add(("dim", v.id))

    def _same_place(self, d: Dim | None, loc: Sequence[int]) -> bool:
        """Whether output dimension ``d`` (at ``loc``) is an input's generic dimension at the same
        index, as such (batch_norm's data, a tuple field, an elementwise operand): the call only
        passes it on — a link. A dimension that moves (dense's ``w`` rows becoming columns) is
        something the call contributes, and its note says so."""
        a = d.atom if d is not None else None
        if not (isinstance(a, Sym) and a.name.startswith(_GEN_PREFIX)):
            return False
        where = self.gen_pos.get(a.name)
        return where is not None and where[2] == loc[-1]

    def equate(self, a: _Node, b: _Node, path: str = "", loc: tuple[int, ...] = ()) -> list[_Part]:
        """Parts stating ``a == b``: one for the structure, one per dimension."""
        struct = [
            a.form == b.form,
            a.size == b.size,
            a.rank == b.rank,
            a.dtype == b.dtype,
            a.head == b.head,
            a.arity == b.arity,
        ]
        parts = [_Part("struct", path, z3.And(*struct, self.ctx), loc)]
        for i, (x, y) in enumerate(zip(a.dims, b.dims)):
            parts.append(_Part("dim", f"{path}dimension {i}", x == y, (*loc, i)))
        for i, (x, y) in enumerate(zip(a.vals, b.vals)):
            parts.append(_Part("dim", f"{path}value entry {i}", x == y, (*loc, _VALUE_AT + i)))
        for i, (p, q) in enumerate(zip(a.kids, b.kids)):
            parts.extend(self.equate(p, q, f"{path}field {i} ", (*loc, i)))
        return parts

    def premise(self, n: _Node, r: Type) -> list[Any]:
        """``n`` has the structure of the resolved type ``r`` (dimensions free)."""
        c = self.const
        if isinstance(r, IncompleteType):
            return []
        out = [n.form == _FORMS.get(type(r), 0)]
        match r:
            case TensorType(shape, dtype):
                if isinstance(shape, tuple):
                    out.append(n.rank == len(shape))
                if isinstance(dtype, str):
                    out.append(n.dtype == self.code(f"dtype:{dtype}"))
                if isinstance(shape, tuple) and len(n.dims) != len(shape):
                    raise _Unsupported("rank")
            case TupleType(fields):
                out.append(n.arity == len(fields))
                if len(n.kids) != len(fields):
                    raise _Unsupported("arity")
                for k, f in zip(n.kids, fields):
                    out.extend(self.premise(k, f))
            case _:
                out.extend(p.formula for p in self.equate(n, self.struct(r)))
        _ = c
        return out

    # -- generic inputs --------------------------------------------------------------------------
    def generic(
        self,
        n: _Node,
        r: Type,
        tier: int,
        premise: list[Any],
        back: dict[Any, Dim],
        where: tuple[int, tuple[int, ...]] = (0, ()),
    ) -> Type:
        """A copy of ``r`` whose dimensions are fresh generic symbols bound to ``n``'s terms (tier 1;
        tier 2 keeps constants, tier 3 keeps everything, stating them in the premise). ``where`` is
        (input number, field path): each generic symbol's position is kept in ``gen_pos``."""
        match r:
            case TensorType(shape, dtype) if isinstance(shape, tuple):
                if len(n.dims) != len(shape):
                    raise _Unsupported("rank")
                new: list[Dim] = []
                for i, d in enumerate(shape):
                    # (a valued tensor keeps its length: the value's entries are its positions)
                    keep = tier >= 3 or (tier == 2 and d.is_constant) or r.value is not None
                    if keep:
                        self._note_dim(d)
                        premise.append(n.dims[i] == self.z.dim(d))
                        new.append(d)
                        continue
                    name = f"{_GEN_PREFIX}{next(self._gen)}"
                    # the stand-in is >= 1 like every symbol (>= 0 where the real dimension may
                    # be 0), never more: a larger bound (`n + 1` >= 2, a constant 4) is a fact
                    # about the input, which its origin must contribute
                    lo = 1 if bounds(d)[0] >= 1 else 0
                    g = Sym(name, lo)
                    self.z.generic[name] = n.dims[i]
                    self.gen_pos[name] = (where[0], where[1], i)
                    back[g] = d
                    new.append(Dim(((((g, 1),), 1),)))
                value = r.value
                if value is not None:
                    value = self._generic_value(n, value, tier, premise, back, where)
                return TensorType(tuple(new), dtype, value)
            case TupleType(fields):
                if len(n.kids) != len(fields):
                    raise _Unsupported("arity")
                return TupleType(
                    tuple(
                        self.generic(k, f, tier, premise, back, (where[0], (*where[1], j)))
                        for j, (k, f) in enumerate(zip(n.kids, fields))
                    )
                )
            case IncompleteType():
                return IncompleteType(r.kind)
            case _:
                premise.extend(p.formula for p in self.equate(n, self.struct(r)))
                return r

    def _generic_value(
        self,
        n: _Node,
        value: Any,
        tier: int,
        premise: list[Any],
        back: dict[Any, Dim],
        where: tuple[int, tuple[int, ...]],
    ) -> Any:
        """A tensor's value with generic symbols for its known entries (as :meth:`generic` does
        for dimensions; an entry may be negative, so the stand-in's bound follows the entry's)."""
        entries = _value_list(value)
        if len(n.vals) != len(entries):
            raise _Unsupported("value")
        out: list[Dim | None] = []
        for i, d in enumerate(entries):
            if d is None:
                out.append(None)
                continue
            if tier >= 3 or (tier == 2 and d.is_constant):
                self._note_dim(d)
                premise.append(n.vals[i] == self.z.dim(d))
                out.append(d)
                continue
            name = f"{_GEN_PREFIX}{next(self._gen)}"
            lo = bounds(d)[0]
            g = Sym(name, 1 if lo >= 1 else 0 if lo >= 0 else -(1 << 40))
            self.z.generic[name] = n.vals[i]
            self.gen_pos[name] = (where[0], where[1], _VALUE_AT + i)
            back[g] = d
            out.append(Dim(((((g, 1),), 1),)))
        return out[0] if isinstance(value, Dim) else tuple(out)

    def _held_text(self, c: Cond, ins: Sequence[Type]) -> str:
        """A condition the relation states that held at the real values, in words: which input
        dimensions it ties (``dimension 2 of `Tensor[(b, s, 64), float32]` to equal dimension 1
        of `Tensor[(64, 64), float32]```), as its real values say nothing (``64 == 64``)."""

        def pos(d: Dim) -> tuple[int, tuple[int, ...], int] | None:
            a = d.atom
            return self.gen_pos.get(a.name) if isinstance(a, Sym) else None

        def pair(pa: _Pos, pb: _Pos, verb: tuple[str, str, str]) -> str:
            ta, tb = str(_type_at(ins[pa[0]], pa[1])), str(_type_at(ins[pb[0]], pb[1]))
            if ta != tb:
                return f"dimension {pa[2]} of `{ta}` {verb[0]} dimension {pb[2]} of `{tb}`{verb[1]}"
            if pa[:2] == pb[:2]:  # two dimensions of one operand
                return f"dimensions {pa[2]} and {pb[2]} of `{ta}` {verb[2]}"
            # two operands that print alike: say which operands
            return (
                f"dimension {pa[2]} of {_operand(pa)} {verb[0]} dimension {pb[2]} of {_operand(pb)}"
                f"{verb[1]} (both `{ta}`)"
            )

        match c:
            case Cmp("==", a, b) if pos(a) is not None and pos(b) is not None:
                pa, pb = pos(a), pos(b)
                assert pa is not None and pb is not None
                return pair(pa, pb, ("to equal", "", "to be equal"))
            case BoolOp("or", xs):
                ps = {
                    p for x in xs if isinstance(x, Cmp) for d in (x.lhs, x.rhs) if (p := pos(d)) is not None
                }
                if len(ps) == 2:
                    pa, pb = sorted(ps)
                    return pair(pa, pb, ("and", " to broadcast", "to broadcast"))
            case _:
                pass
        return "its inputs' dimensions to agree"

    # -- members ---------------------------------------------------------------------------------
    def member(self, o: Origin) -> _Member:
        m = self.members.get(o.seq)
        if m is None:
            m = self.members[o.seq] = _Member(o)
        return m

    def add_annotation(self, t: Type, o: Origin) -> None:
        self._keys = set()
        m = self.member(o)
        m.link = False
        parts = self.equate(self.enc(t), self.struct(t, sandbox=True))
        m.parts.append(_Part("all", "", z3.And(*[p.formula for p in parts], self.ctx)))
        m.keys |= self._keys

    def add_unification(self, a: Type, b: Type, o: Origin) -> None:
        self._keys = set()
        m = self.member(o)
        if not (self._is_position(a) and self._is_position(b)):
            m.link = False
        m.pairs.append((a, b))
        parts = self.equate(self.enc(a), self.enc(b))
        if len(m.pairs) == 1 and isinstance(self.u.shallow(b), FuncType):
            # a call: its parts say which argument matters (see _describe_unify)
            for p in parts:
                m.parts.append(_Part("all", p.text, p.formula, p.loc))
        else:
            m.parts.append(_Part("all", "", z3.And(*[p.formula for p in parts], self.ctx)))
        m.keys |= self._keys

    def _is_position(self, t: Type) -> bool:
        return isinstance(t, IncompleteType) or id(t) in self.ann

    def add_relation(self, rel: RelationInstance, tier: int = 1) -> None:
        """(Re)build the contribution of ``rel``'s origin, its relations at ``tier`` or above."""
        m = self.member(rel.origin)
        if rel not in m.rels:
            m.rels.append(rel)
        if not m.outputs:
            m.outputs = [self.u.resolve(t) for t in rel.args[rel.num_inputs :]]
        self._keys = set()
        m.premise, m.dpremise, m.parts = [], [], []
        link = tier == 1
        for r in m.rels:
            if tier == 1 and r.rdef.name == "identity" and r.state != "failed":
                # the elementwise identity relation: every argument has the same type
                first = self.enc(r.args[0])
                for arg in r.args[1:]:
                    m.parts.extend(self.equate(first, self.enc(arg)))
                continue
            for level in range(tier, 4):
                got = self._relation_parts(r, level)
                if got is not None:
                    m.premise.extend(got[0])
                    m.dpremise.extend(got[1])
                    m.parts.extend(got[2])
                    link = link and level == 1 and got[3]
                    break
            else:
                link = False
        m.link = link
        m.keys |= self._keys

    def _relation_parts(
        self, rel: RelationInstance, tier: int
    ) -> tuple[list[Any], list[Any], list[_Part], bool] | None:
        """Premise and parts of one relation at ``tier``, and whether it only forwards its
        input; None when that tier cannot reproduce the real run."""
        ni = rel.num_inputs
        ins = [self.u.resolve(t) for t in rel.args[:ni]]
        premise: list[Any] = []
        dprem: list[Any] = []
        back: dict[Any, Dim] = {}
        try:
            nodes = [self.enc(t) for t in rel.args[:ni]]
            gins = []
            for k, (n, r) in enumerate(zip(nodes, ins)):
                premise.extend(self.premise(n, r))
                gins.append(self.generic(n, r, tier, dprem, back, (k, ())))
        except _Unsupported:
            return None
        outs = [self.u.resolve(t) for t in rel.args[ni:]]
        run = sandbox_run(rel, gins, [_blank(t) for t in outs])
        if self.structural and tier == 1 and not run.pending:
            from symshape.solver.structural import StructuralRun

            got = StructuralRun(self, rel, nodes, ins, gins, outs, run).parts()
            if got is not None:
                return got
            if tier < 3:
                return None
            return premise, dprem, [], False
        if run.failed:
            if rel.state != "failed" and tier < 3:
                return None  # the generic run lost information the real run had
            return premise, dprem, [_Part("fail", "", z3.BoolVal(False, self.ctx))], False
        parts: list[_Part] = []
        # an output dimension that is one input dimension as such (batch_norm's and bias_add's
        # data, tuple_get_item's field) only moves a position: a link, not something the call
        # contributes (only where the generic run is the real one)
        passes = tier == 1 and rel.state != "failed" and not rel.erred
        try:
            for j, (t, s) in enumerate(zip(rel.args[ni:], run.outputs)):
                if rel.state != "failed" and not _same_structure(s, outs[j]):
                    return None if tier < 3 else (premise, dprem, [], False)
                for p in self.equate(self.enc(t), self.enc(s, sandbox=True)):
                    prefix = f"output {j} " if len(outs) > 1 else ""
                    fwd = passes and p.kind == "dim" and self._same_place(_dim_obj(s, p.loc), p.loc)
                    parts.append(_Part(p.kind, prefix + p.text, p.formula, (j, *p.loc), forward=fwd))
            for c in run.conds:
                # every condition the generic run states is part of the relation's contribution,
                # also one that held at the real values: broadcasting ``a`` with ``b`` ties the two
                # (``a == b or a == 1 or b == 1``), so the output is pinned by either operand
                real = map_cond(c, lambda d: d.subs(back)) if back else c
                held = decide(real) is True and rel.state != "failed"
                text = self._held_text(c, ins) if held else str(real)
                parts.append(_Part("cond", text, self.z.cond(c), held=held))
        except _Unsupported:
            return None
        forwards = (
            not run.conds
            and len(run.outputs) == 1
            and rel.state != "failed"
            and (any(run.outputs[0] == g for g in gins) or _permutes(run.outputs[0], gins))
        )
        return premise, dprem, parts, forwards


_Pos = tuple[int, tuple[int, ...], int]  # operand, tuple field path, dimension


def _operand(p: _Pos) -> str:
    """``operand 1`` or ``field 2 of operand 0`` (0-based, as dimensions are)."""
    fields = "".join(f"field {i} of " for i in reversed(p[1]))
    return f"{fields}operand {p[0]}"


def _permutes(out: Type, gins: Sequence[Type]) -> bool:
    """Whether every dimension of ``out`` is one of the inputs' generic dimensions, as such (a
    transpose, a selection of axes): the relation only moves positions around, like a binding."""
    if not isinstance(out, TensorType) or not isinstance(out.shape, tuple):
        return False
    generic: set[Atom] = set()
    for g in gins:
        for d in iter_dims(g):
            a = d.atom
            if isinstance(a, Sym) and a.name.startswith(_GEN_PREFIX):
                generic.add(a)
    return all(d.atom in generic for d in out.shape)


_VALUE_AT = 1 << 20
"""Positions of a tensor's value entries follow its dimensions' at this offset."""


def _value_list(v: Any) -> list[Dim | None]:
    return [v] if isinstance(v, Dim) else list(v)


def _dim_obj(t: Type, loc: Sequence[int]) -> Dim | None:
    """The dimension at ``loc`` (tuple field indices, then the dimension index) of ``t``."""
    cur = t
    for k, i in enumerate(loc):
        if k == len(loc) - 1 and isinstance(cur, TensorType) and i >= _VALUE_AT:
            vs = _value_list(cur.value) if cur.value is not None else []
            return vs[i - _VALUE_AT] if i - _VALUE_AT < len(vs) else None
        if k == len(loc) - 1 and isinstance(cur, TensorType) and isinstance(cur.shape, tuple):
            return cur.shape[i] if i < len(cur.shape) else None
        if not isinstance(cur, TupleType) or i >= len(cur.fields):
            return None
        cur = cur.fields[i]
    return None


def _dim_at(t: Type, loc: Sequence[int]) -> str | None:
    """The dimension at ``loc`` (field indices, then the dimension index) of a resolved type."""
    cur = t
    for k, i in enumerate(loc):
        last = k == len(loc) - 1
        if last and isinstance(cur, TensorType) and i >= _VALUE_AT:
            d = _dim_obj(cur, (i,))
            return None if d is None else str(d)
        if last and isinstance(cur, TensorType) and isinstance(cur.shape, tuple):
            return str(cur.shape[i]) if i < len(cur.shape) else None
        if isinstance(cur, TupleType) and i < len(cur.fields):
            cur = cur.fields[i]
        elif isinstance(cur, FuncType) and not cur.type_params:
            kids = (*cur.params, cur.ret)
            if i >= len(kids):
                return None
            cur = kids[i]
        elif isinstance(cur, TypeCall) and i < len(cur.args):
            cur = cur.args[i]
        else:
            return None
    return None


# ------------------------------------------------------------------------------------------------
# candidate selection (cheap: no encoding) and the driver


def _shape_keys(shape: tuple[Dim, ...]) -> tuple[tuple[str, Any], ...]:
    out: dict[tuple[str, Any], None] = {}
    for d in shape:
        for a in d.atoms():
            if isinstance(a, (DimVar, AnyDim)):
                out[("dim", a._key)] = None
            elif isinstance(a, Sym):
                out[("sym", a.name)] = None
    return tuple(out)


class _KeyMemo:
    """The link keys of each type object (by id: the solver keeps them alive) and of each shape."""

    def __init__(self) -> None:
        self.types: dict[int, tuple[tuple[str, Any], ...]] = {}
        self.shapes: dict[tuple[Dim, ...], tuple[tuple[str, Any], ...]] = {}


def _type_keys(
    solver: TypeSolver, t: Type, ann: dict[int, Any], out: set[tuple[str, Any]], memo: _KeyMemo | None = None
) -> None:
    """Add the link keys of ``t`` to ``out`` (``memo``: the keys of the types and shapes met so
    far; an output hole is the next operator's input, and shapes repeat along a program)."""
    if memo is None:
        _type_keys_walk(solver, t, ann, out, {})
        return
    hit = memo.types.get(id(t))
    if hit is None:
        hit = _hole_tensor_keys(solver, t, ann, memo)
        if hit is None:
            keys: set[tuple[str, Any]] = set()
            _type_keys_walk(solver, t, ann, keys, memo.shapes)
            hit = tuple(keys)
        memo.types[id(t)] = hit
    out.update(hit)


def _hole_tensor_keys(
    solver: TypeSolver, t: Type, ann: dict[int, Any], memo: _KeyMemo
) -> tuple[tuple[str, Any], ...] | None:
    """The keys of a hole resolved to a tensor type with a known shape (what the walk gives, in
    the common case, without it); None otherwise."""
    if type(t) is not IncompleteType or id(t) in ann:
        return None
    u = solver.unifier
    r = u.find(t)
    rt = u.resolved.get(r)
    if type(rt) is not TensorType or id(rt) in ann:
        return None
    shape = rt.shape
    if type(shape) is not tuple:
        return None
    sk = memo.shapes.get(shape)
    if sk is None:
        sk = memo.shapes[shape] = _shape_keys(shape)
    return (("hole", r.id), *sk)


def _type_keys_walk(
    solver: TypeSolver,
    t: Type,
    ann: dict[int, Any],
    out: set[tuple[str, Any]],
    shapes: dict[tuple[Dim, ...], tuple[tuple[str, Any], ...]],
) -> None:
    u = solver.unifier
    stack = [t]
    seen: set[int] = set()
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if id(x) in ann:
            out.add(("occ", ann[id(x)][1].seq))
        cx = type(x)
        if cx is TensorType:
            shape = x.shape  # type: ignore[union-attr]
            if isinstance(shape, tuple):
                keys = shapes.get(shape)
                if keys is None:
                    keys = shapes[shape] = _shape_keys(shape)
                out.update(keys)
            continue
        match x:
            case IncompleteType():
                r = u.find(x)
                out.add(("hole", r.id))
                rt = u.resolved.get(r)
                if rt is not None:
                    stack.append(rt)
            case TupleType(fields):
                stack.extend(fields)
            case FuncType(params, ret, _, _, _):
                stack.extend((*params, ret))
            case TypeCall(_, args):
                stack.extend(args)
            case _:
                pass


@dataclass
class _Cand:
    origin: Origin
    kind: str  # "annotation" | "unify" | "relation"
    items: list[Any] = field(default_factory=list)
    keys: set[tuple[str, Any]] = field(default_factory=set)


def _candidates(solver: TypeSolver) -> dict[int, _Cand]:
    ann = {id(t): (t, o) for t, o in solver.sources.values()}
    cands: dict[int, _Cand] = {}

    def get(o: Origin, kind: str) -> _Cand:
        c = cands.get(o.seq)
        if c is None:
            c = cands[o.seq] = _Cand(o, kind)
        return c

    shapes = _KeyMemo()
    for t, o in solver.sources.values():
        c = get(o, "annotation")
        c.items.append(("annotation", t))
        _type_keys(solver, t, ann, c.keys, shapes)
    for a, b, o in solver.unify_log:
        c = get(o, "unify")
        c.items.append(("unify", a, b))
        _type_keys(solver, a, ann, c.keys, shapes)
        _type_keys(solver, b, ann, c.keys, shapes)
    known = shapes.types
    for rel in solver.rels:
        if rel.state == "poisoned":
            continue  # downstream of an error: it never ran, so it contributes nothing
        c = get(rel.origin, "relation")
        c.items.append(("relation", rel))
        keys = c.keys
        for t in rel.args:
            hit = known.get(id(t))  # the common case (an input is the output before): inline
            if hit is not None:
                keys.update(hit)
            else:
                _type_keys(solver, t, ann, keys, shapes)
    return cands


def _bfs_order(cands: dict[int, _Cand], primary: int, excluded: set[int]) -> list[int]:
    """Every candidate connected to the primary, nearest first (the primary first): local links
    first (a hole, an occurrence used a few times), then hubs (a weight used by every layer), then
    symbols (which link nearly everything); what nothing links comes last, in program order."""
    pool = [s for s in cands if s not in excluded or s == primary]
    by_key: defaultdict[tuple[str, Any], list[int]] = defaultdict(list)
    for q in pool:
        for k in cands[q].keys:
            by_key[k].append(q)
    keys_of: dict[int, list[tuple[str, Any]]] = {}  # sorted on first use (ids and seqs)

    def sorted_keys(q: int) -> list[tuple[str, Any]]:
        ks = keys_of.get(q)
        if ks is None:
            ks = keys_of[q] = sorted(cands[q].keys)
        return ks

    chosen = [primary]
    seen = {primary}
    expanded: set[tuple[str, Any]] = set()  # each key is expanded once (linear in the links)
    for stage in (0, 1, 2):
        frontier = list(chosen)
        while frontier:
            nxt: list[int] = []
            for q in frontier:
                for k in sorted_keys(q):
                    if k in expanded:
                        continue
                    if (k[0] == "sym" and stage < 2) or (len(by_key[k]) > _HUB and stage < 1):
                        continue
                    expanded.add(k)
                    for q2 in by_key.get(k, ()):
                        if q2 not in seen:
                            seen.add(q2)
                            chosen.append(q2)
                            nxt.append(q2)
            frontier = nxt
    chosen.extend(sorted(q for q in pool if q not in seen))
    return chosen


def explain_errors(solver: TypeSolver) -> None:
    """Replace the notes of each explainable error in ``solver.errors`` by its minimal core."""
    targets = [
        i
        for i, d in enumerate(solver.errors)
        if d.origin is not None and d.code not in _NOT_CONFLICTS and d.evidence is None
    ]
    if not targets:
        return
    cands = _candidates(solver)
    failing = {d.origin.seq for d in solver.errors if d.origin is not None}
    memo: dict[object, Any] = {}  # structural decisions, shared by the errors' explanations
    end = time.perf_counter() + _TOTAL_BUDGETS * _budget(solver).seconds
    for i in targets:
        d = solver.errors[i]
        assert d.origin is not None
        if d.origin.seq not in cands:
            continue
        budget = _budget(solver)
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


_MIN_BUDGET_S = 2.0  # seconds an explanation may take at least ...
_BUDGET_TIMEOUTS = 2.5  # ... and in Z3 timeouts (the default 2 s timeout gives 5 s)
_TOTAL_BUDGETS = 4  # all the errors of one program together: four budgets


class _Budget:
    """The time an explanation may take; ``reason`` says why it gave up (empty: it did not);
    ``phase`` is what the explainer is doing (``grow``, ``search``, ``minimize``)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.deadline = time.perf_counter() + seconds
        self.reason = ""
        self.phase = "grow"

    def out(self) -> bool:
        return time.perf_counter() > self.deadline


def _budget(solver: TypeSolver) -> _Budget:
    """The budget of one error's explanation (tests replace this to make the explainer give up)."""
    return _Budget(max(_MIN_BUDGET_S, _BUDGET_TIMEOUTS * solver.timeout_ms / 1000))


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

    def __init__(self, ex: _Explainer, structural: bool, timeout_ms: int, calls: Any) -> None:
        self.ex = ex
        self.structural = structural
        self.s = z3.Solver(ctx=ex.ctx)
        self.s.set("timeout", int(timeout_ms))
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
        r = self.s.check(*[self.lits[q] for q in seqs])
        return True if r == z3.unsat else False if r == z3.sat else None

    def core(self) -> list[int]:
        """The members of Z3's unsat core of the last (unsat) check."""
        names = {str(x) for x in self.s.unsat_core()}
        return [q for q in self.order if str(self.lits[q]) in names]

    def unsat_with(self, seqs: Sequence[int], fs: dict[int, Any]) -> bool | None:
        """Check members ``seqs`` stated as ``fs`` (to try a member with fewer parts)."""
        self.calls.explain_calls += 1
        self.s.push()
        try:
            for q in seqs:
                self.s.add(fs[q])
            r = self.s.check()
        finally:
            self.s.pop()
        return True if r == z3.unsat else False if r == z3.sat else None


def _build(ex: _Explainer, cand: _Cand) -> None:
    for item in cand.items:
        if item[0] == "annotation":
            ex.add_annotation(item[1], cand.origin)
        elif item[0] == "unify":
            ex.add_unification(item[1], item[2], cand.origin)
        else:
            ex.add_relation(item[1])


def _explain_one(
    solver: TypeSolver,
    cands: dict[int, _Cand],
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
    order = _bfs_order(cands, primary, excluded)
    rank = {q: i for i, q in enumerate(order)}
    ex = _Explainer(solver)
    ex.struct_memo = memo
    # for a conflict between dimensions, the structure the solver found (ranks, dtypes, tuple
    # arities) is background; for a structural conflict it is what the members contribute
    structural = d.code in _STRUCTURAL
    ex.structural = structural and refine
    prob = _Problem(ex, structural, solver.timeout_ms, solver.session)
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
    for q in core:
        if q != primary:
            m = ex.members[q]
            notes.append(Note(_describe(ex, m, core, fs, prob.unsat_with, structural), m.origin.span))
    notes = _merge_same(notes)
    chain = _chain(ex, primary, [q for q in core if q != primary])
    if chain:
        notes.append(Note(_chain_text(chain), None))
    if not minimized:
        notes.append(Note(f"the explanation was not minimized: {budget.reason}", None))
    members = [primary, *(q for q in core if q != primary)]
    ev = Evidence(tuple(fs[q] for q in members), tuple(prob.background), ex.ctx, minimized)
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


def _chain(ex: _Explainer, primary: int, others: list[int]) -> list[Origin]:
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
    ex: _Explainer,
    m: _Member,
    core: list[int],
    fs: dict[int, Any],
    unsat: Any,
    structure: bool = True,
) -> str:
    """What member ``m`` contributed: the parts of it that the conflict needs."""
    label = m.origin.label
    if not m.rels and m.origin.kind == "annotation":
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
            if unsat([*others, m.origin.seq], fs2) is True:
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
        value = _dim_at(src, p.loc[1:]) if src is not None else None
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


def _describe_unify(ex: _Explainer, m: _Member, label: str, needed: Sequence[_Part] = ()) -> str:
    """A unification: what it made equal — the arguments a call passes (those the conflict
    needs), the type a hole was given, or both sides."""
    if not m.pairs or m.origin.kind == "annotation":
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
