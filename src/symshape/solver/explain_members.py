"""The members of an explanation encoded for Z3: annotations, unifications and relation instances
as formulas over *positions* (the structure and dimensions of each hole and annotated type
occurrence), with the parts (dimensions, ranks, dtypes, conditions, arguments) that the notes of
a diagnostic name. The search over them is in :mod:`symshape.solver.explain`; see its docstring
for the encoding of each kind of member.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import z3

from symshape.encoding.conds import BoolOp, Cmp, Cond, decide, map_cond
from symshape.encoding.dims import Atom, Dim, Sym, bounds
from symshape.encoding.types import FuncType, IncompleteType, TensorType, TupleType, Type, iter_dims
from symshape.solver.diagnostics import Origin
from symshape.solver.explain_nodes import GEN_PREFIX, PositionEncoder
from symshape.solver.instance import RelationState
from symshape.solver.positions import (
    VALUE_AT,
    Node,
    Part,
    Unsupported,
    blank,
    dim_obj,
    same_structure,
    type_at,
    value_list,
)
from symshape.solver.sandbox import sandbox_run

if TYPE_CHECKING:
    from symshape.solver.instance import RelationInstance
    from symshape.solver.solve import TypeSolver

__all__ = ["Explainer", "Member"]


@dataclass
class Member:
    origin: Origin
    premise: list[Any] = field(default_factory=list)  # the inputs' structure
    dpremise: list[Any] = field(default_factory=list)  # input dimensions a run depended on
    parts: list[Part] = field(default_factory=list)
    keys: set[tuple[str, int]] = field(default_factory=set)
    rels: list[RelationInstance] = field(default_factory=list)
    outputs: list[Type] = field(default_factory=list)
    link: bool = True  # only forwards positions (a binding, an elementwise operator)
    pairs: list[tuple[Type, Type]] = field(default_factory=list)

    def formula(self, ctx: z3.Context, parts: Sequence[Part] | None = None, structure: bool = True) -> Any:
        """The contribution; ``structure=False`` leaves the structural premise out (it is then
        asserted as background). Forwarding parts are not in it: they are background links."""
        ps = [p for p in (self.parts if parts is None else parts) if not p.forward]
        body = z3.And(*[p.formula for p in ps], ctx) if ps else z3.BoolVal(True, ctx)
        prem = [*self.premise, *self.dpremise] if structure else list(self.dpremise)
        if prem:
            return z3.Implies(z3.And(*prem, ctx), body)
        return body



class Explainer(PositionEncoder):
    """The members of one explanation, over the position nodes of :class:`PositionEncoder`."""

    def __init__(self, solver: TypeSolver) -> None:
        super().__init__(solver)
        self.solver = solver
        self.members: dict[int, Member] = {}  # by origin seq
        self.structural = False  # explaining a structural conflict (see explain._explain_one)
        self.gen_pos: dict[str, tuple[int, tuple[int, ...], int]] = {}  # generic symbol -> position
        self.struct_memo: dict[object, Any] = {}  # see StructuralRun.parts

    def _same_place(self, d: Dim | None, loc: Sequence[int]) -> bool:
        """Whether output dimension ``d`` (at ``loc``) is an input's generic dimension at the same
        index, as such (batch_norm's data, a tuple field, an elementwise operand): the call only
        passes it on — a link. A dimension that moves (dense's ``w`` rows becoming columns) is
        something the call contributes, and its note says so."""
        a = d.atom if d is not None else None
        if not (isinstance(a, Sym) and a.name.startswith(GEN_PREFIX)):
            return False
        where = self.gen_pos.get(a.name)
        return where is not None and where[2] == loc[-1]


    # -- generic inputs --------------------------------------------------------------------------
    def generic(
        self,
        n: Node,
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
                    raise Unsupported("rank")
                new: list[Dim] = []
                for i, d in enumerate(shape):
                    # (a valued tensor keeps its length: the value's entries are its positions)
                    keep = tier >= 3 or (tier == 2 and d.is_constant) or r.value is not None
                    if keep:
                        self._note_dim(d)
                        premise.append(n.dims[i] == self.z.dim(d))
                        new.append(d)
                        continue
                    name = f"{GEN_PREFIX}{next(self._gen)}"
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
                    raise Unsupported("arity")
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
        n: Node,
        value: Any,
        tier: int,
        premise: list[Any],
        back: dict[Any, Dim],
        where: tuple[int, tuple[int, ...]],
    ) -> Any:
        """A tensor's value with generic symbols for its known entries (as :meth:`generic` does
        for dimensions; an entry may be negative, so the stand-in's bound follows the entry's)."""
        entries = value_list(value)
        if len(n.vals) != len(entries):
            raise Unsupported("value")
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
            name = f"{GEN_PREFIX}{next(self._gen)}"
            lo = bounds(d)[0]
            g = Sym(name, 1 if lo >= 1 else 0 if lo >= 0 else -(1 << 40))
            self.z.generic[name] = n.vals[i]
            self.gen_pos[name] = (where[0], where[1], VALUE_AT + i)
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
            ta, tb = str(type_at(ins[pa[0]], pa[1])), str(type_at(ins[pb[0]], pb[1]))
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
        m.parts.append(Part("all", "", z3.And(*[p.formula for p in parts], self.ctx)))
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
                m.parts.append(Part("all", p.text, p.formula, p.loc))
        else:
            m.parts.append(Part("all", "", z3.And(*[p.formula for p in parts], self.ctx)))
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
            if tier == 1 and r.rdef.name == "identity" and r.state != RelationState.FAILED:
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
    ) -> tuple[list[Any], list[Any], list[Part], bool] | None:
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
        except Unsupported:
            return None
        outs = [self.u.resolve(t) for t in rel.args[ni:]]
        run = sandbox_run(rel, gins, [blank(t) for t in outs])
        if self.structural and tier == 1 and not run.pending:
            from symshape.solver.structural import StructuralRun

            got = StructuralRun(self, rel, nodes, ins, gins, outs, run).parts()
            if got is not None:
                return got
            if tier < 3:
                return None
            return premise, dprem, [], False
        if run.failed:
            if rel.state != RelationState.FAILED and tier < 3:
                return None  # the generic run lost information the real run had
            return premise, dprem, [Part("fail", "", z3.BoolVal(False, self.ctx))], False
        parts: list[Part] = []
        # an output dimension that is one input dimension as such (batch_norm's and bias_add's
        # data, tuple_get_item's field) only moves a position: a link, not something the call
        # contributes (only where the generic run is the real one)
        passes = tier == 1 and rel.state != RelationState.FAILED and not rel.erred
        try:
            for j, (t, s) in enumerate(zip(rel.args[ni:], run.outputs)):
                if rel.state != RelationState.FAILED and not same_structure(s, outs[j]):
                    return None if tier < 3 else (premise, dprem, [], False)
                for p in self.equate(self.enc(t), self.enc(s, sandbox=True)):
                    prefix = f"output {j} " if len(outs) > 1 else ""
                    fwd = passes and p.kind == "dim" and self._same_place(dim_obj(s, p.loc), p.loc)
                    parts.append(Part(p.kind, prefix + p.text, p.formula, (j, *p.loc), forward=fwd))
            for c in run.conds:
                # every condition the generic run states is part of the relation's contribution,
                # also one that held at the real values: broadcasting ``a`` with ``b`` ties the two
                # (``a == b or a == 1 or b == 1``), so the output is pinned by either operand
                real = map_cond(c, lambda d: d.subs(back)) if back else c
                held = decide(real) is True and rel.state != RelationState.FAILED
                text = self._held_text(c, ins) if held else str(real)
                parts.append(Part("cond", text, self.z.cond(c), held=held))
        except Unsupported:
            return None
        forwards = (
            not run.conds
            and len(run.outputs) == 1
            and rel.state != RelationState.FAILED
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
            if isinstance(a, Sym) and a.name.startswith(GEN_PREFIX):
                generic.add(a)
    return all(d.atom in generic for d in out.shape)


