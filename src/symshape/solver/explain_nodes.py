"""Types encoded for Z3 as *position nodes* (see :mod:`symshape.solver.positions`): the terms
the explainer states its members over. A hole or an annotated type occurrence is a position with
free variables shaped like its resolved type (:meth:`PositionEncoder.skeleton`); any other type
is a node built from its parts (:meth:`PositionEncoder.struct`); :meth:`PositionEncoder.equate`
states two nodes equal, part by part, so a note can name the part that matters.
"""

from __future__ import annotations

import itertools
import weakref
from typing import TYPE_CHECKING, Any

import z3

from symshape.encoding.dims import AnyDim, Atom, Dim, DimLike, DimVar, Sym
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
from symshape.solver.positions import FORMS, VALUE_AT, Node, Part, Unsupported, value_list

if TYPE_CHECKING:
    from symshape.solver.solve import TypeSolver

__all__ = ["GEN_PREFIX", "PositionEncoder"]

GEN_PREFIX = "_g#"
"""The name prefix of the generic symbols that stand for an input's dimensions in a probe."""


class _Enc(Z3Encoder):
    """Lower dimensions with generic symbols mapped to position terms and unknowns renamed
    locally (names never depend on process-global counters)."""

    def __init__(self, ctx: z3.Context, owner: PositionEncoder) -> None:
        super().__init__(ctx)
        # a proxy: a strong reference would make a cycle with the encoder, which keeps the
        # explanation's Z3 context (16 MB native) alive until the cyclic collector runs
        self.owner = weakref.proxy(owner)
        self.generic: dict[str, Any] = {}

    def atom(self, a: Atom) -> Any:
        if isinstance(a, Sym) and a.name.startswith(GEN_PREFIX):
            t = self.generic.get(a.name)
            if t is None:
                raise Unsupported(a.name)
            return t
        if isinstance(a, (DimVar, AnyDim)):
            hit = self._atoms.get(a._key)
            if hit is not None:
                return hit
            v = self.owner.var("u")
            self.axioms.append(v >= (a.least if isinstance(a, AnyDim) else 0))
            self._atoms[a._key] = v
            return v
        return super().atom(a)



class PositionEncoder:
    """Encodes the types of one solver's problem as nodes of Z3 terms in one context."""

    def __init__(self, solver: TypeSolver) -> None:
        self.u = solver.unifier
        self.ctx = z3.Context()
        self.z = _Enc(self.ctx, self)
        self.axioms: list[Any] = []
        self._n = itertools.count()
        self._gen = itertools.count()
        self.codes: dict[str, int] = {}
        self.hole_nodes: dict[int, Node] = {}
        self.occ_nodes: dict[int, Node] = {}
        self.ann: dict[int, tuple[Type, Origin]] = {id(t): (t, o) for t, o in solver.sources.values()}
        self._keys: set[tuple[str, int]] = set()  # the positions an encoding touched

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

    def skeleton(self, r: Type) -> Node:
        """Fresh variables shaped like the (resolved) type ``r``."""
        n = Node(self.var("f"), self.var("s"), self.var("r"), self.var("t"), self.var("h"), self.var("a"))
        self.axioms.append(n.size >= 1)
        if isinstance(r, TensorType) and isinstance(r.shape, tuple):
            n.dims = [self.var("d") for _ in r.shape]
            self.axioms.extend(d >= 0 for d in n.dims)
            if r.value is not None:  # a shape value's entries are positions too (any sign)
                n.vals = [self.var("v") for _ in value_list(r.value)]
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
            shaped = [n.form == FORMS.get(type(r), 0)]
            if n.kids:
                shaped.append(n.arity == (len(n.kids) - 1 if isinstance(r, FuncType) else len(n.kids)))
            self.axioms.append(z3.Implies(z3.And(*shaped, self.ctx), n.size == size))
        return n

    def enc(self, t: Type, sandbox: bool = False) -> Node:
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

    def struct(self, t: Type, sandbox: bool = False) -> Node:
        """The node of a type built from its parts (kids through :meth:`enc`)."""
        c, none = self.const, -1
        form = c(FORMS.get(type(t), 0))
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
                node = Node(form, c(1), rank, dt, c(0), c(0), dims)
                if t.value is not None:
                    for e in value_list(t.value):
                        if e is None:
                            node.vals.append(self.var("v"))
                        else:
                            self._note_dim(e)
                            node.vals.append(self.z.dim(e))
                return node
            case TupleType(fields):
                kids = [self.enc(f, sandbox) for f in fields]
                size = 1 + sum((k.size for k in kids), c(0))
                return Node(form, size, c(none), c(none), c(0), c(len(kids)), [], kids)
            case FuncType(params, ret, tps, _, _):
                if tps:
                    # a polymorphic function type: each occurrence is one instantiation, its
                    # type and dim parameters fresh (the size stays free: a hole holding the
                    # polymorphic type has no positions for its parts)
                    s = self.var("s")
                    self.axioms.append(s >= 1)
                    inst = self._instantiate(t)
                    kids = [] if inst is None else [self.enc(p, sandbox) for p in (*inst.params, inst.ret)]
                    return Node(form, s, c(none), c(none), c(0), c(len(params)), [], kids)
                kids = [self.enc(p, sandbox) for p in (*params, ret)]
                size = 1 + sum((k.size for k in kids), c(0))
                return Node(form, size, c(none), c(none), c(0), c(len(params)), [], kids)
            case TypeCall(func, args):
                kids = [self.enc(a, sandbox) for a in args]
                size = 1 + sum((k.size for k in kids), c(0))
                head = c(self.code(f"adt:{func}"))
                return Node(form, size, c(none), c(none), head, c(len(kids)), [], kids)
            case TypeVar() | GlobalTypeVar():
                return Node(form, c(1), c(none), c(none), c(self.code(f"var:{t}")), c(0))
            case ShapeType(ndim):
                r = c(ndim) if ndim is not None else self.var("r")
                return Node(form, c(1), r, c(none), c(0), c(0))
            case _:
                return Node(form, c(1), c(none), c(none), c(0), c(0))

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


    def equate(self, a: Node, b: Node, path: str = "", loc: tuple[int, ...] = ()) -> list[Part]:
        """Parts stating ``a == b``: one for the structure, one per dimension."""
        struct = [
            a.form == b.form,
            a.size == b.size,
            a.rank == b.rank,
            a.dtype == b.dtype,
            a.head == b.head,
            a.arity == b.arity,
        ]
        parts = [Part("struct", path, z3.And(*struct, self.ctx), loc)]
        for i, (x, y) in enumerate(zip(a.dims, b.dims)):
            parts.append(Part("dim", f"{path}dimension {i}", x == y, (*loc, i)))
        for i, (x, y) in enumerate(zip(a.vals, b.vals)):
            parts.append(Part("dim", f"{path}value entry {i}", x == y, (*loc, VALUE_AT + i)))
        for i, (p, q) in enumerate(zip(a.kids, b.kids)):
            parts.extend(self.equate(p, q, f"{path}field {i} ", (*loc, i)))
        return parts

    def premise(self, n: Node, r: Type) -> list[Any]:
        """``n`` has the structure of the resolved type ``r`` (dimensions free)."""
        if isinstance(r, IncompleteType):
            return []
        out = [n.form == FORMS.get(type(r), 0)]
        match r:
            case TensorType(shape, dtype):
                if isinstance(shape, tuple):
                    out.append(n.rank == len(shape))
                if isinstance(dtype, str):
                    out.append(n.dtype == self.code(f"dtype:{dtype}"))
                if isinstance(shape, tuple) and len(n.dims) != len(shape):
                    raise Unsupported("rank")
            case TupleType(fields):
                out.append(n.arity == len(fields))
                if len(n.kids) != len(fields):
                    raise Unsupported("arity")
                for k, f in zip(n.kids, fields):
                    out.extend(self.premise(k, f))
            case _:
                out.extend(p.formula for p in self.equate(n, self.struct(r)))
        return out

