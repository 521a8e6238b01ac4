"""The contribution of a relation to a *structural* conflict, found by perturbing its inputs.

See :class:`StructuralRun`. Used by :mod:`symshape.solver.explain` when an error is about ranks,
dtypes, tuple arities or forms: each output attribute of a relation instance gets its own
premise (the input attributes it depends on), and an output attribute that simply follows an
input's becomes a *forward* (a link of the explanation, not a note).
"""

from __future__ import annotations

import itertools
from dataclasses import InitVar, dataclass
from typing import TYPE_CHECKING, Any

import z3

from symshape.encoding.dims import Dim, Sym, bounds
from symshape.encoding.types import IncompleteType, TensorType, TupleType, Type
from symshape.solver.instance import RelationState
from symshape.solver.positions import FORMS, Node, Part, Unsupported, attr_of, blank, same_structure, type_at
from symshape.solver.sandbox import sandbox_run

if TYPE_CHECKING:
    from symshape.solver.explain_members import Explainer
    from symshape.solver.instance import RelationInstance

__all__ = ["StructuralRun"]

_FAIL = object()  # a perturbed run that failed (or could not decide)
_Key = tuple[int, tuple[int, ...], str]  # (input, position path, "form" | "rank" | "dtype" | ...)
_Pert = frozenset[tuple[_Key, int]]  # atoms perturbed, each to its alternative number i


@dataclass(eq=False)
class StructuralRun:
    """The contribution of a relation to a *structural* conflict (ranks, dtypes, forms), made as
    precise as the relation allows.

    The plain contribution is ``inputs have the structure they had -> outputs have theirs``: to
    use it, an explanation needs the origin of every input's rank and dtype, so ``softmax(axis=3)``
    on ``dense(x, w)`` would drag ``w``'s annotation in although the rank comes from ``x`` alone.
    Here each output form, rank and dtype gets its own premise. The relation is re-run (in the
    sandbox, on the generic inputs) with an input's structure *perturbed* — its rank changed (one
    more, one less, every other input's, far more), its dtype changed (another float, an int,
    every other input's), a tensor wrapped in a tuple, a tuple's arity grown — and an input atom is
    left out of the premise when every such change, alone and together with the atoms left out
    before, either keeps the output's value or makes the relation fail (then the relation would be
    an error itself, so it says nothing about the output). An output rank or dtype that simply
    follows one input's becomes the equation between the two (a *forward*: background, like an
    elementwise operator, shown in the chain of the explanation rather than as a note). A failing
    relation's premise is reduced the same way (what still fails whatever it is changed to is left
    out), so the error needs only the origins of what made it fail.

    This is a test, not a proof: a relation could behave differently for a value no perturbation
    tried. The evidence stays checkable (the core is minimal for the formulas stated), and the
    values tried include every other input's, which is what equality checks compare against.
    """

    ex: Explainer
    rel: RelationInstance
    nodes: InitVar[list[Node]]  # the inputs' positions
    ins: InitVar[list[Type]]  # the inputs' real (resolved) types
    gins: list[Type]  # the generic inputs
    outs: list[Type]  # the outputs' real types
    base: Any  # the run on the generic inputs (a SandboxRun)

    def __post_init__(self, nodes: list[Node], ins: list[Type]) -> None:
        gins = self.gins
        self.atoms: list[tuple[_Key, Any]] = []
        for i, (n, r) in enumerate(zip(nodes, ins)):
            self._atoms(i, n, r, (), self.atoms)
        self.value: dict[_Key, object] = {k: attr_of(gins[k[0]], k[1], k[2]) for k, _ in self.atoms}
        ranks = sorted({v for k, v in self.value.items() if k[2] == "rank" and isinstance(v, int)})
        dtypes = sorted({v for k, v in self.value.items() if k[2] == "dtype" and isinstance(v, str)})
        self.alts: dict[_Key, list[object]] = {}
        for k, _ in self.atoms:
            v = self.value[k]
            alts: list[object] = []
            if k[2] == "rank" and isinstance(v, int):
                alts = [v + 1, *([v - 1] if v >= 1 else []), *(r for r in ranks if r != v), 2 * v + 3]
            elif k[2] == "dtype" and isinstance(v, str):
                alts = [_other_dtype(v), "int32" if v != "int32" else "int64", *(d for d in dtypes if d != v)]
            elif k[2] in ("form", "arity"):
                alts = [None]
            self.alts[k] = list(dict.fromkeys(alts))
        self._runs: dict[_Pert, Any] = {}
        self._fresh = itertools.count()

    def _atoms(self, i: int, n: Node, r: Type, path: tuple[int, ...], out: list[tuple[_Key, Any]]) -> None:
        ex = self.ex
        if isinstance(r, IncompleteType):
            return
        out.append(((i, path, "form"), n.form == FORMS.get(type(r), 0)))
        match r:
            case TensorType(shape, dtype):
                if isinstance(shape, tuple):
                    out.append(((i, path, "rank"), n.rank == len(shape)))
                if isinstance(dtype, str):
                    out.append(((i, path, "dtype"), n.dtype == ex.code(f"dtype:{dtype}")))
            case TupleType(fields):
                out.append(((i, path, "arity"), n.arity == len(fields)))
                if len(n.kids) != len(fields):
                    raise Unsupported("arity")
                for k, (kid, f) in enumerate(zip(n.kids, fields)):
                    self._atoms(i, kid, f, (*path, k), out)
            case _:
                eqs = [p.formula for p in ex.equate(n, ex.struct(r))]
                out.append(((i, path, "struct"), z3.And(*eqs, ex.ctx)))

    # -- perturbed runs --------------------------------------------------------------------------
    def outputs(self, pert: _Pert) -> Any:
        """The outputs of the relation on the generic inputs perturbed by ``pert`` (or _FAIL)."""
        if not pert:
            return self.base.outputs
        hit = self._runs.get(pert)
        if hit is not None:
            return hit
        ins = list(self.gins)
        # deepest first, and a position's form last (it replaces the position)
        for (i, path, kind), alt in sorted(pert, key=lambda p: (-len(p[0][1]), p[0][2] == "form", p)):
            ins[i] = self._perturb(ins[i], path, kind, self.alts[(i, path, kind)][alt])
        run = sandbox_run(self.rel, ins, [blank(t) for t in self.outs])
        got = _FAIL if run.pending or run.failed else run.outputs
        self._runs[pert] = got
        return got

    def _perturb(self, t: Type, path: tuple[int, ...], kind: str, value: object) -> Type:
        """``t`` with the ``kind`` of the position at ``path`` changed to ``value``: a tensor's
        rank (dimensions dropped from or fresh ones added at the end) or dtype; a tuple's arity
        (its last field once more); a position's form (a tensor becomes a 1-tuple of itself, a
        tuple its first field)."""
        if path:
            if not isinstance(t, TupleType) or path[0] >= len(t.fields):
                return t
            fs = list(t.fields)
            fs[path[0]] = self._perturb(fs[path[0]], path[1:], kind, value)
            return TupleType(tuple(fs))
        match kind, t:
            case "rank", TensorType(shape, dtype) if isinstance(shape, tuple) and isinstance(value, int):
                if value <= len(shape):
                    return TensorType(shape[:value], dtype)
                extra = tuple(
                    Dim(((((Sym(f"_p#{next(self._fresh)}", 0), 1),), 1),))
                    for _ in range(value - len(shape))
                )
                return TensorType((*shape, *extra), dtype)
            case "dtype", TensorType(shape, _) if isinstance(value, str):
                return TensorType(shape, value)
            case "arity", TupleType(fields) if fields:
                return TupleType((*fields, fields[-1]))
            case "form", TensorType():
                return TupleType((t,))
            case "form", TupleType(fields):
                return fields[0] if fields else TensorType((), "float32")
            case _:
                return t

    def _part_value(self, pert: _Pert, j: int, path: tuple[int, ...], kind: str) -> object:
        outs = self.outputs(pert)
        if outs is _FAIL:
            return _FAIL
        return attr_of(outs[j], path, kind)

    def _premise(self, ok: Any) -> list[_Key]:
        """The atoms left in the premise: greedily, in order, an atom (a form, arity, rank or
        dtype) is left out when ``ok`` holds of the run with it perturbed to each of its
        alternatives, alone and together with every atom of its kind left out before (at its
        first alternative: two dtypes that must agree both change, and the relation may succeed
        again with a different output)."""
        dropped: list[_Key] = []
        for k, _ in self.atoms:
            alts = range(len(self.alts.get(k, ())))
            if not alts:
                continue
            rest = [(d, 0) for d in dropped if d[2] == k[2]]
            if all(ok(frozenset([(k, a)])) for a in alts) and (
                not rest or all(ok(frozenset([*rest, (k, a)])) for a in alts)
            ):
                dropped.append(k)
        return [k for k, _ in self.atoms if k not in dropped]

    # -- the contribution ------------------------------------------------------------------------
    def parts(self) -> tuple[list[Any], list[Any], list[Part], bool] | None:
        """Premise, parts and link flag as :meth:`Explainer._relation_parts` returns them (None:
        this relation's structure cannot be described this way). The decisions (which atoms stay
        in which premise, which outputs forward) depend only on the relation, its attributes and
        the structure of its generic inputs and real outputs, so they are computed once per such
        key (a model that repeats a layer costs one set of perturbed runs per distinct layer)."""
        key: object = (
            self.rel.rdef,
            self.rel.attrs,
            self.rel.state == RelationState.FAILED or self.rel.erred,
            tuple(_sig(g) for g in self.gins),
            tuple(_sig(o) for o in self.outs),
        )
        memo = self.ex.struct_memo
        try:
            if key in memo:
                decided = memo[key]
            else:
                decided = memo[key] = self._decide()
        except TypeError:  # an unhashable attribute value
            decided = self._decide()
        if decided is None:
            return None
        return self._emit(decided)

    def _decide(self) -> Any:
        if self.base.failed:
            if self.rel.state != RelationState.FAILED and not self.rel.erred:
                return None  # the generic run lost information the real (successful) run had
            return ("fail", self._premise(lambda pert: self.outputs(pert) is _FAIL))
        out: list[tuple[int, tuple[int, ...], str, list[_Key], tuple[_Key, int] | None]] = []
        for j, s in enumerate(self.base.outputs):
            if not same_structure(s, self.outs[j]):
                return None
            for path, kind in _out_attrs(s, ()):
                base = attr_of(s, path, kind)

                def same(
                    pert: _Pert,
                    j: int = j,
                    path: tuple[int, ...] = path,
                    kind: str = kind,
                    base: object = base,
                ) -> bool:
                    v = self._part_value(pert, j, path, kind)
                    return v is _FAIL or v == base

                keep = self._premise(same)
                out.append((j, path, kind, keep, self._forward(j, path, kind, base, keep)))
        return ("ok", out)

    def _emit(self, decided: Any) -> tuple[list[Any], list[Any], list[Part], bool]:
        ex, rel = self.ex, self.rel
        formula = dict(self.atoms)
        if decided[0] == "fail":
            body = z3.Not(z3.And(*[formula[k] for k in decided[1]], ex.ctx))
            return [], [], [Part("fail", "", body)], False
        parts: list[Part] = []
        link = rel.state != RelationState.FAILED
        ni = rel.num_inputs
        for j, path, kind, keep, fwd in decided[1]:
            o = _node_at(ex.enc(rel.args[ni + j]), path)
            text = f"output {j} {kind}" if len(self.outs) > 1 else kind
            if fwd is not None:
                (i, ipath, _), offset = fwd
                src = _node_at(ex.enc(rel.args[i]), ipath)
                f = o.rank == src.rank + offset if kind == "rank" else o.dtype == src.dtype
                parts.append(Part(kind, text, f, (j, *path), forward=True))
                continue
            link = False
            s = type_at(self.base.outputs[j], path)
            mine, theirs = self._term(o, s, kind)
            prem = [formula[k] for k in keep]
            f = z3.Implies(z3.And(*prem, ex.ctx), mine == theirs) if prem else mine == theirs
            parts.append(Part(kind, text, f, (j, *path)))
        return [], [], parts, link

    def _term(self, o: Node, s: Type, kind: str) -> tuple[Any, Any]:
        """The output node's term for ``kind`` and the value the run gave it."""
        ex = self.ex
        c = ex.const
        match kind:
            case "form":
                return o.form, c(FORMS.get(type(s), 0))
            case "size":
                return o.size, c(1)
            case "rank":
                assert isinstance(s, TensorType) and isinstance(s.shape, tuple)
                return o.rank, c(len(s.shape))
            case "dtype":
                assert isinstance(s, TensorType)
                return o.dtype, c(ex.code(f"dtype:{s.dtype}"))
            case "arity":
                assert isinstance(s, TupleType)
                return o.arity, c(len(s.fields))
            case _:
                same = z3.And(*[p.formula for p in ex.equate(o, ex.struct(s, sandbox=True))], ex.ctx)
                return same, z3.BoolVal(True, ex.ctx)

    def _forward(
        self, j: int, path: tuple[int, ...], kind: str, base: object, keep: list[_Key]
    ) -> tuple[_Key, int] | None:
        """``(input atom, offset)`` when the output's rank or dtype follows one input's (its
        premise is that input's same attribute, maybe with forms, and changing it, or every
        input's equal one together, moves the output along): ``output == input + offset``."""
        if kind not in ("rank", "dtype"):
            return None
        same_kind = [k for k in keep if k[2] == kind]
        if len(same_kind) != 1 or any(k[2] not in (kind, "form") for k in keep):
            return None
        k = same_kind[0]
        mine = self.value[k]
        moved = self.alts[k][0]
        if kind == "rank":
            assert isinstance(mine, int) and isinstance(base, int) and isinstance(moved, int)
            expect: object = base + (moved - mine)
        elif mine != base:
            return None
        else:
            expect = moved
        v = self._part_value(frozenset([(k, 0)]), j, path, kind)
        if v is _FAIL:
            together = frozenset(
                (a, 0)
                for a, _ in self.atoms
                if a[2] == kind and self.value[a] == mine and self.alts[a][:1] == [moved]
            )
            v = self._part_value(together, j, path, kind)
        if v != expect:
            return None
        offset = base - mine if kind == "rank" and isinstance(base, int) and isinstance(mine, int) else 0
        return k, offset


def _out_attrs(s: Type, path: tuple[int, ...]) -> list[tuple[tuple[int, ...], str]]:
    """(path, kind) of every structural attribute of output ``s``."""
    out: list[tuple[tuple[int, ...], str]] = []
    if isinstance(s, IncompleteType):
        return out
    out.append((path, "form"))
    match s:
        case TensorType(shape, dtype):
            out.append((path, "size"))
            if isinstance(shape, tuple):
                out.append((path, "rank"))
            if isinstance(dtype, str):
                out.append((path, "dtype"))
        case TupleType(fields):
            out.append((path, "arity"))
            for k, f in enumerate(fields):
                out.extend(_out_attrs(f, (*path, k)))
        case _:
            out.append((path, "struct"))
    return out


def _node_at(n: Node, path: tuple[int, ...]) -> Node:
    for i in path:
        if i >= len(n.kids):
            raise Unsupported("path")
        n = n.kids[i]
    return n


def _sig(t: Type) -> object:
    """The structure of a (generic) type as a memo key: forms, ranks, dtypes, dimension bounds."""
    match t:
        case TensorType(shape, dtype):
            dims = tuple(bounds(d) for d in shape) if isinstance(shape, tuple) else None
            return ("T", dims, str(dtype))
        case TupleType(fields):
            return ("U", tuple(_sig(f) for f in fields))
        case IncompleteType():
            return ("H", t.kind)
        case _:
            return ("O", str(t))


def _other_dtype(d: object) -> str:
    return "float64" if d != "float64" else "float32"
