"""The members of an explanation encoded for Z3: annotations, unifications and relation instances
as formulas over *positions* (the structure and dimensions of each hole and annotated type
occurrence), with the parts (dimensions, ranks, dtypes, conditions, arguments) that the notes of
a diagnostic name. The search over them is in :mod:`symshape.solver.explain`; see its docstring
for the encoding of each kind of member.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
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
from symshape.solver.diagnostics import Origin
from symshape.solver.positions import FORMS as _FORMS
from symshape.solver.positions import Node as _Node
from symshape.solver.positions import Part as _Part
from symshape.solver.positions import Unsupported as _Unsupported
from symshape.solver.positions import blank as _blank
from symshape.solver.positions import same_structure as _same_structure
from symshape.solver.positions import type_at as _type_at
from symshape.solver.sandbox import sandbox_run

if TYPE_CHECKING:
    from symshape.solver.instance import RelationInstance
    from symshape.solver.solve import TypeSolver

__all__ = ["Explainer", "Member", "dim_at"]

_GEN_PREFIX = "_g#"


@dataclass
class Member:
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

    def __init__(self, ctx: z3.Context, owner: Explainer) -> None:
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


class Explainer:
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
        self.members: dict[int, Member] = {}  # by origin seq
        self._keys: set[tuple[str, int]] = set()
        self.structural = False  # explaining a structural conflict (see explain._explain_one)
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
    def member(self, o: Origin) -> Member:
        m = self.members.get(o.seq)
        if m is None:
            m = self.members[o.seq] = Member(o)
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
            # a call: its parts say which argument matters (see explain._describe_unify)
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


def dim_at(t: Type, loc: Sequence[int]) -> str | None:
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
