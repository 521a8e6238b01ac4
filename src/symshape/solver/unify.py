"""Unification: union-find over holes and unknown dimensions, structural recursion, occurs check.

This is Relay's unifier (seed 000) with two changes:

* dimensions unify by *equating* them: identical canonical forms agree; an unknown dimension binds
  (also when it occurs linearly, so ``?d + 1 == n`` binds ``?d := n - 1``, and ``2*?d == n`` binds
  ``?d := n//2`` under the condition ``n % 2 == 0``; an unknown is ``>= 0``, so a value that may be
  negative states ``value >= 0``); two different constants conflict; anything else is a condition
  handed to the solver (decided by Z3 as proved, refuted or a guard);
* function types with type parameters unify *up to renaming*: the side with more type parameters
  (the right side on a tie) is instantiated with fresh holes and the other side's parameters stay
  rigid, so ``fn<a,b,c>(a,(b,c))->(a,b,c)`` against ``fn<a,c>(a,(a,c))->(a,a,c)`` pairs the
  parameters by use, not by position, and gives the second type.

Algorithm for ``unify(t1, t2)`` (after replacing each hole by its class's resolved type):

1. both holes: union the classes (the root with the smaller id wins, for determinism); if both
   were resolved, their types are unified and the result becomes the class's type;
2. one hole ``h``, one type ``t``: occurs check (``h`` must not occur in ``t``), then ``h``'s
   class is resolved to ``t`` (or to the unification of its previous type with ``t``);
3. two types: same form or a conflict; recurse through tensors (dtype, rank, dimensions), tuples,
   function types, type calls; type variables and global type variables unify only with themselves.

Every refinement calls :attr:`Unifier.on_refine` with the holes and unknowns whose value changed,
which the solver uses to re-queue exactly the relations that read them.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass

from symshape.encoding.conds import Cond, eq, ge
from symshape.encoding.dims import ZERO, Dim, DimVar, bounds, const, floordiv, fresh_dimvar, mod
from symshape.encoding.types import (
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    ObjectType,
    ShapeType,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeRelation,
    TypeVar,
    func_of_checked,
    map_dims,
    subst_typevars,
    tuple_of_checked,
    type_children,
    type_kind,
    type_rebuild,
)
from symshape.encoding.values import Value, map_value, value_str
from symshape.errors import (
    ARITY_MISMATCH,
    DTYPE_MISMATCH,
    KIND_MISMATCH,
    NEGATIVE_DIM,
    OCCURS_CHECK,
    RANK_MISMATCH,
    SHAPE_MISMATCH,
    TYPE_MISMATCH,
    ErrorCode,
)
from symshape.solver.diagnostics import Origin, conflict_message

__all__ = ["Unifier", "Mismatch"]


class Mismatch(Exception):
    """Raised inside structural unification; caught at the top and reported once."""

    def __init__(self, code: ErrorCode, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


_COMPOSITE = (TupleType, FuncType, TypeCall)
_REC_LIMIT = 48  # levels of nesting unified recursively (see Unifier._unify)
_FIELD = tuple(f"field {i}" for i in range(16))  # the ``where`` of nested pairs, made once
_PARAM = tuple(f"parameter {i}" for i in range(16))
_Request = tuple[Type, Type, str]
_UnifyGen = Generator[_Request, Type, Type]


@dataclass
class _Frame:
    left: Type
    right: Type
    origin: Origin


class Unifier:
    """Union-find over holes (with a resolved type per class) and over unknown dimensions."""

    def __init__(self) -> None:
        self.parent: dict[IncompleteType, IncompleteType] = {}
        self.resolved: dict[IncompleteType, Type] = {}
        self.why: dict[IncompleteType, list[Origin]] = {}
        self.dim_bind: dict[DimVar, Dim] = {}
        self.dim_why: dict[DimVar, Origin] = {}
        # hooks set by the solver
        self.on_refine: Callable[[Iterable[IncompleteType], Iterable[DimVar]], None] = (
            lambda holes, dvars: None
        )
        self.on_condition: Callable[[Cond, Origin, ErrorCode, str], None] = (
            lambda c, o, code, msg: None
        )
        self.on_conflict: Callable[[ErrorCode, str, Origin, Type, Type], None] = (
            lambda code, msg, o, a, b: None
        )
        self.fresh_hole: Callable[[str], IncompleteType] = lambda kind: IncompleteType(kind)
        self._frame: _Frame | None = None
        # instantiated shape- and dtype-kind type parameters: their binding, or None while unbound
        self.flex: dict[TypeVar, tuple[Dim, ...] | TypeVar | str | None] = {}

    # -- union-find ---------------------------------------------------------------------------
    def find(self, h: IncompleteType) -> IncompleteType:
        parent = self.parent
        root = h
        while True:
            p = parent.get(root)
            if p is None:
                break
            root = p
        while h is not root:  # path compression
            nxt = parent[h]
            parent[h] = root
            h = nxt
        return root

    def shallow(self, t: Type) -> Type:
        """The class's resolved type for a hole (or its root), else ``t``."""
        if isinstance(t, IncompleteType):
            r = self.find(t)
            return self.resolved.get(r, r)
        return t

    # -- resolution -----------------------------------------------------------------------------
    def resolve_dim(self, d: Dim) -> Dim:
        bind = self.dim_bind
        if not bind or not d.has_unknowns:
            return d
        at = d.atom
        if type(at) is DimVar:  # exactly one unknown (the common case): its value
            b = bind.get(at)
            if b is None:
                return d
            if b.has_unknowns and any(u in bind for u in b.unknowns):
                b = self._resolve_var(at)
            return b
        mapping: dict[object, Dim] = {}
        for a in d.unknowns:
            b = bind.get(a)
            if b is not None:
                if b.has_unknowns and any(u in bind for u in b.unknowns):
                    b = self._resolve_var(a)
                mapping[a] = b
        return d.subs(mapping) if mapping else d  # type: ignore[arg-type]

    def _resolve_var(self, v: DimVar) -> Dim:
        """The value of bound unknown ``v`` with every bound unknown inside replaced, iteratively;
        each binding on the way is compressed to its resolved value. (Bindings never form a cycle:
        both sides are resolved before an unknown binds.)"""
        bind = self.dim_bind
        stack: list[tuple[DimVar, bool]] = [(v, False)]
        seen: set[DimVar] = set()
        while stack:
            x, post = stack.pop()
            b = bind[x]
            if post:
                m = {u: bind[u] for u in b.unknowns if u in bind}
                if m:
                    bind[x] = b.subs(m)  # type: ignore[arg-type]
                continue
            if x in seen:
                continue
            seen.add(x)
            stack.append((x, True))
            if b.has_unknowns:
                stack.extend((u, False) for u in b.unknowns if u in bind and u not in seen)
        return bind[v]

    def _resolve_tensor(self, t: TensorType) -> TensorType:
        shape, dtype = t.shape, t.dtype
        if self.flex:
            fs, fd = self._flex_shape(shape), self._flex_dtype(dtype)
            if fs is not shape or fd is not dtype:
                t = TensorType(fs, fd, t.value)
                shape, dtype = fs, fd
        if self.dim_bind and isinstance(shape, tuple):
            new = tuple(self.resolve_dim(d) for d in shape)
            v = t.value
            nv = v if v is None else map_value(v, self.resolve_dim)
            if nv is not v or any(a is not b for a, b in zip(new, shape)):
                return TensorType(new, dtype, nv)
        return t

    def resolve(self, t: Type) -> Type:
        """``t`` with every hole replaced by its class's type and every bound unknown by its value
        (iterative: a type nested any number of levels deep resolves)."""
        cls = type(t)
        if cls is TensorType:
            if not self.flex and not self.dim_bind:
                return t  # the common case: nothing inside a tensor type can change
            return self._resolve_tensor(t)  # type: ignore[arg-type]
        if cls is IncompleteType:
            r = self.find(t) if t in self.parent else t  # type: ignore[arg-type]
            rt = self.resolved.get(r)  # type: ignore[arg-type]
            if rt is None:
                return r
            t = rt
            cls = type(t)
            if cls is TensorType:
                if not self.flex and not self.dim_bind:
                    return t
                return self._resolve_tensor(t)  # type: ignore[arg-type]
        if cls not in _COMPOSITE:
            return t
        done: dict[int, Type] = {}
        stack: list[tuple[Type, bool]] = [(t, False)]
        resolved = self.resolved
        while stack:
            x, post = stack.pop()
            if post:
                if type(x) is IncompleteType:
                    done[id(x)] = done[id(resolved[self.find(x)])]
                    continue
                kids = type_children(x)
                new = [done[id(k)] for k in kids]
                done[id(x)] = x if all(a is b for a, b in zip(new, kids)) else type_rebuild(x, new)
                continue
            if id(x) in done:
                continue
            cx = type(x)
            if cx is IncompleteType:
                r = self.find(x)  # type: ignore[arg-type]
                rt = resolved.get(r)
                if rt is None:
                    done[id(x)] = r
                    continue
                stack.append((x, True))
                stack.append((rt, False))
            elif cx is TensorType:
                done[id(x)] = self.resolve(x)
            elif cx in _COMPOSITE:
                stack.append((x, True))
                stack.extend((k, False) for k in type_children(x))
            else:
                done[id(x)] = x
        return done[id(t)]

    def occurs(self, root: IncompleteType, t: Type) -> bool:
        """Does hole class ``root`` occur in ``t`` (through resolved holes too)? Iterative."""
        stack: list[Type] = [t]
        seen: set[int] = set()
        while stack:
            x = stack.pop()
            cx = type(x)
            if cx is IncompleteType:
                r = self.find(x)  # type: ignore[arg-type]
                if r is root:
                    return True
                if id(r) in seen:
                    continue
                seen.add(id(r))
                rt = self.resolved.get(r)
                if rt is not None:
                    stack.append(rt)
            elif cx in _COMPOSITE:
                stack.extend(type_children(x))
        return False

    # -- entry point ---------------------------------------------------------------------------
    def unify(self, a: Type, b: Type, origin: Origin) -> Type:
        """Unify ``a`` and ``b``; a conflict is reported through :attr:`on_conflict` and the
        (resolved) left type is returned."""
        outer = self._frame
        if outer is None:
            self._frame = _Frame(a, b, origin)
        try:
            return self._unify(a, b, origin)
        except Mismatch as m:
            if outer is not None:
                raise
            left, right = self.resolve(a), self.resolve(b)
            msg = conflict_message("cannot unify", left, right, m.detail)
            self.on_conflict(m.code, msg, origin, left, right)
            return left
        finally:
            if outer is None:
                self._frame = None

    def _unify(self, a: Type, b: Type, origin: Origin) -> Type:
        """Structural unification: recursive for the first :data:`_REC_LIMIT` levels of nesting
        (cheaper), then the iterative :meth:`_unify_deep` (any depth). Same results either way."""
        return self._rec(a, b, origin, 0)

    def _rec(self, a: Type, b: Type, origin: Origin, depth: int) -> Type:
        if a is b:
            return a
        ca, cb = type(a), type(b)
        if ca is TensorType and cb is TensorType:
            return self._unify_tensor(a, b, origin)  # type: ignore[arg-type]
        if depth >= _REC_LIMIT:
            return self._unify_deep(a, b, origin)
        d1 = depth + 1
        if ca is TupleType and cb is TupleType:
            fa, fb = a.fields, b.fields  # type: ignore[union-attr]
            if len(fa) != len(fb):
                raise Mismatch(ARITY_MISMATCH, f"tuples of {len(fa)} and {len(fb)} fields")
            out = []
            changed = False
            for i, (x, y) in enumerate(zip(fa, fb)):
                if x is y:
                    out.append(x)
                    continue
                try:
                    r = self._rec(x, y, origin, d1)
                except Mismatch as m:
                    where = _FIELD[i] if i < len(_FIELD) else f"field {i}"
                    raise Mismatch(m.code, f"{where}: {m.detail}") from None
                out.append(r)
                if r is not x:
                    changed = True
            if not changed:
                return a
            return tuple_of_checked(tuple(out))
        if ca is IncompleteType or cb is IncompleteType:
            if ca is not cb:
                hole, other = (a, b) if ca is IncompleteType else (b, a)
                done = self._hole_to_type(hole, other, origin)  # type: ignore[arg-type]
                if done is not None:
                    return done
                return self._hole_typed(hole, other, hole is a, origin, d1)  # type: ignore[arg-type]
            return self._hole_pair(a, b, origin, d1)  # type: ignore[arg-type]
        if ca is FuncType and cb is FuncType:
            return self._func_rec(a, b, origin, d1)  # type: ignore[arg-type]
        if ca is cb and ca in _COMPOSITE:
            g: _UnifyGen = self._unify_struct(a, b, origin)
        else:
            return self._unify_simple(a, b)
        try:
            req = next(g)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        while True:
            x, y, where = req
            try:
                sub = self._rec(x, y, origin, d1)
            except Mismatch as m:
                try:
                    req = g.throw(Mismatch(m.code, f"{where}: {m.detail}") if where else m)
                except StopIteration as stop:
                    return stop.value  # type: ignore[no-any-return]
                continue
            try:
                req = g.send(sub)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]

    # The direct (recursive) forms of the generators below, for the levels :meth:`_rec` unifies
    # recursively; each does exactly what its generator does, in the same order.
    def _hole_pair(self, a: IncompleteType, b: IncompleteType, origin: Origin, d1: int) -> Type:
        """Two holes (:meth:`_unify_hole`'s first case)."""
        ra, rb = self.find(a), self.find(b)
        if ra is rb:
            return self.resolved.get(ra, ra)
        if ra.kind != rb.kind:
            raise Mismatch(KIND_MISMATCH, f"kind {ra.kind} vs {rb.kind}")
        if rb.id < ra.id:
            ra, rb = rb, ra
        resolved = self.resolved
        ta, tb = resolved.get(ra), resolved.get(rb)
        self.parent[rb] = ra
        why = self.why
        w = why.get(ra)
        if w is None:
            w = why[ra] = []
        w.append(origin)
        w.extend(why.pop(rb, ()))
        if tb is not None:
            del resolved[rb]
            if ta is None:
                resolved[ra] = tb
            else:
                resolved[ra] = self._rec(ta, tb, origin, d1)
        self.on_refine((ra, rb), ())
        return resolved.get(ra, ra)

    def _hole_typed(
        self, hole: IncompleteType, other: Type, hole_left: bool, origin: Origin, d1: int
    ) -> Type:
        """A hole whose class has a type, and a type (:meth:`_unify_hole`'s second case)."""
        root = self.find(hole)
        co = type(other)
        kind = type_kind(other) if co is TypeVar or co is IncompleteType or co is GlobalTypeVar else "type"
        if root.kind != kind and not (root.kind == "type" and kind == "adt"):
            raise Mismatch(KIND_MISMATCH, f"a hole of kind {root.kind} cannot be `{other}`")
        if self.occurs(root, other):
            raise Mismatch(OCCURS_CHECK, f"`{root}` occurs in `{self.resolve(other)}`")
        prev = self.resolved.get(root)
        if prev is None:
            new = other
        elif hole_left:
            new = self._rec(prev, other, origin, d1)
        else:  # keep the sides in the caller's order, so that details read like the message
            new = self._rec(other, prev, origin, d1)
        if new is not prev:
            self.resolved[root] = new
            self.why.setdefault(root, []).append(origin)
            self.on_refine((root,), ())
        return new

    def _func_rec(self, a: FuncType, b: FuncType, origin: Origin, d1: int) -> Type:
        """Two function types (:meth:`_unify_func`)."""
        left, right, rigid, gen = self._func_sides(a, b)
        params = []
        for i, (x, y) in enumerate(zip(left.params, right.params)):
            try:
                params.append(x if x is y else self._rec(x, y, origin, d1))
            except Mismatch as m:
                where = _PARAM[i] if i < len(_PARAM) else f"parameter {i}"
                raise Mismatch(m.code, f"{where}: {m.detail}") from None
        try:
            ret = self._rec(left.ret, right.ret, origin, d1)
        except Mismatch as m:
            raise Mismatch(m.code, f"return type: {m.detail}") from None
        rels = rigid.relations if rigid.relations else gen.relations
        return func_of_checked(tuple(params), ret, rigid.type_params, rels, a.pure and b.pure)

    def _hole_to_type(self, hole: IncompleteType, other: Type, origin: Origin) -> Type | None:
        """Case 2 of the algorithm when ``hole``'s class has no type yet (the common case): the
        class takes ``other``. None when the class has a type (then the two are unified)."""
        root = self.find(hole) if hole in self.parent else hole
        if root in self.resolved:
            return None
        co = type(other)
        if co is TensorType:  # a tensor type: of kind type, and no hole occurs in it
            if root.kind == "type":
                self.resolved[root] = other
                self.why.setdefault(root, []).append(origin)
                self.on_refine((root,), ())
                return other
            kind = "type"
        elif co is TypeVar or co is IncompleteType or co is GlobalTypeVar:
            kind = type_kind(other)
        else:
            kind = "type"
        if root.kind != kind and not (root.kind == "type" and kind == "adt"):
            raise Mismatch(KIND_MISMATCH, f"a hole of kind {root.kind} cannot be `{other}`")
        if (co in _COMPOSITE or co is IncompleteType) and self.occurs(root, other):
            raise Mismatch(OCCURS_CHECK, f"`{root}` occurs in `{self.resolve(other)}`")
        self.resolved[root] = other
        self.why.setdefault(root, []).append(origin)
        self.on_refine((root,), ())
        return other

    def _unify_deep(self, a: Type, b: Type, origin: Origin) -> Type:
        """Structural unification without recursion: a pair that needs nested unifications is a
        generator that yields each nested pair ``(x, y, where)`` and receives its unified type;
        a stack of them is run here. A nested conflict is thrown into the parent with ``where``
        prefixed to its detail (``field 1: dimension 0: 3 vs 4``)."""
        res, g, req = self._start(a, b, origin)
        if g is None:
            return res  # type: ignore[return-value]
        stack: list[tuple[_UnifyGen, str]] = [(g, "")]
        pending: _Request | None = req
        send: Type | None = None
        throw: Mismatch | None = None
        while True:
            if pending is not None:
                x, y, where = pending
                pending = None
                try:
                    res, g, req = self._start(x, y, origin)
                except Mismatch as m:
                    throw = Mismatch(m.code, f"{where}: {m.detail}") if where else m
                else:
                    if g is not None:
                        stack.append((g, where))
                        pending = req
                        continue
                    send = res
            top, where = stack[-1]
            try:
                if throw is not None:
                    exc, throw = throw, None
                    pending = top.throw(exc)
                else:
                    pending = top.send(send)  # type: ignore[arg-type]
            except StopIteration as stop:
                stack.pop()
                if not stack:
                    return stop.value  # type: ignore[no-any-return]
                send = stop.value
            except Mismatch as m:
                stack.pop()
                if not stack:
                    raise
                throw = Mismatch(m.code, f"{where}: {m.detail}") if where else m

    def _start(
        self, a: Type, b: Type, origin: Origin
    ) -> tuple[Type | None, _UnifyGen | None, _Request | None]:
        """Unify ``a`` and ``b`` when no nested unification is needed (the result, None, None);
        else (None, the started generator, its first request)."""
        if a is b:
            return a, None, None
        ca, cb = type(a), type(b)
        if ca is TensorType and cb is TensorType:
            return self._unify_tensor(a, b, origin), None, None  # type: ignore[arg-type]
        g: _UnifyGen
        if ca is IncompleteType or cb is IncompleteType:
            g = self._unify_hole(a, b, origin)
        elif ca is cb and ca in _COMPOSITE:
            g = self._unify_struct(a, b, origin)
        else:
            return self._unify_simple(a, b), None, None
        try:
            req = next(g)
        except StopIteration as stop:
            return stop.value, None, None
        return None, g, req

    def _unify_hole(self, a: Type, b: Type, origin: Origin) -> _UnifyGen:
        if isinstance(a, IncompleteType) and isinstance(b, IncompleteType):
            ra, rb = self.find(a), self.find(b)
            if ra is rb:
                return self.resolved.get(ra, ra)
            if ra.kind != rb.kind:
                raise Mismatch(KIND_MISMATCH, f"kind {ra.kind} vs {rb.kind}")
            if rb.id < ra.id:
                ra, rb = rb, ra
            ta, tb = self.resolved.get(ra), self.resolved.get(rb)
            self.parent[rb] = ra
            self.why.setdefault(ra, []).append(origin)
            self.why[ra].extend(self.why.pop(rb, []))
            if tb is not None:
                del self.resolved[rb]
                if ta is None:
                    self.resolved[ra] = tb
                else:
                    self.resolved[ra] = yield (ta, tb, "")
            self.on_refine((ra, rb), ())
            return self.resolved.get(ra, ra)
        hole, other = (a, b) if isinstance(a, IncompleteType) else (b, a)
        assert isinstance(hole, IncompleteType)
        root = self.find(hole)
        co = type(other)
        kind = type_kind(other) if co is TypeVar or co is IncompleteType or co is GlobalTypeVar else "type"
        if root.kind != kind and not (root.kind == "type" and kind == "adt"):
            raise Mismatch(KIND_MISMATCH, f"a hole of kind {root.kind} cannot be `{other}`")
        if self.occurs(root, other):
            raise Mismatch(OCCURS_CHECK, f"`{root}` occurs in `{self.resolve(other)}`")
        prev = self.resolved.get(root)
        if prev is None:
            new = other
        elif hole is a:
            new = yield (prev, other, "")
        else:  # keep the sides in the caller's order, so that details read like the message
            new = yield (other, prev, "")
        if new is not prev:
            self.resolved[root] = new
            self.why.setdefault(root, []).append(origin)
            self.on_refine((root,), ())
        return new

    def _unify_struct(self, a: Type, b: Type, origin: Origin) -> _UnifyGen:
        """Two composite types of the same form."""
        if isinstance(a, TupleType):
            assert isinstance(b, TupleType)
            fa, fb = a.fields, b.fields
            if len(fa) != len(fb):
                raise Mismatch(ARITY_MISMATCH, f"tuples of {len(fa)} and {len(fb)} fields")
            out = []
            for i, (x, y) in enumerate(zip(fa, fb)):
                out.append((yield (x, y, _FIELD[i] if i < len(_FIELD) else f"field {i}")))
            if all(p is q for p, q in zip(out, fa)):
                return a
            return tuple_of_checked(tuple(out))
        if isinstance(a, FuncType):
            assert isinstance(b, FuncType)
            return (yield from self._unify_func(a, b, origin))
        assert isinstance(a, TypeCall) and isinstance(b, TypeCall)
        if a.func != b.func:
            raise Mismatch(TYPE_MISMATCH, f"type constructors {a.func} vs {b.func}")
        if len(a.args) != len(b.args):
            raise Mismatch(ARITY_MISMATCH, f"{len(a.args)} vs {len(b.args)} type arguments")
        args = []
        for i, (x, y) in enumerate(zip(a.args, b.args)):
            args.append((yield (x, y, f"type argument {i}")))
        return TypeCall(a.func, tuple(args))

    def _unify_simple(self, a: Type, b: Type) -> Type:
        """Two types without sub-types to unify (or of different forms)."""
        match a, b:
            case TypeVar(), TypeVar():
                if a != b:
                    if a.kind != b.kind:
                        raise Mismatch(KIND_MISMATCH, f"kind {a.kind} vs {b.kind}")
                    raise Mismatch(TYPE_MISMATCH, f"type variables {a} vs {b}")
                return a
            case GlobalTypeVar(), GlobalTypeVar():
                if a != b:
                    raise Mismatch(TYPE_MISMATCH, f"global type variables {a} vs {b}")
                return a
            case ObjectType(), ObjectType():
                return a
            case ShapeType(na), ShapeType(nb):
                if na is not None and nb is not None and na != nb:
                    raise Mismatch(RANK_MISMATCH, f"shapes of rank {na} vs {nb}")
                return a if na is not None else b
            case _:
                if type_kind(a) != type_kind(b):
                    raise Mismatch(KIND_MISMATCH, f"kind {type_kind(a)} vs {type_kind(b)}")
                raise Mismatch(TYPE_MISMATCH, f"{_form(a)} vs {_form(b)}")

    def _flex_shape(self, s: tuple[Dim, ...] | TypeVar | None) -> tuple[Dim, ...] | TypeVar | None:
        while isinstance(s, TypeVar):
            nxt = self.flex.get(s)
            if nxt is None:
                break
            s = nxt  # type: ignore[assignment]
        return s

    def _flex_dtype(self, d: str | TypeVar | None) -> str | TypeVar | None:
        while isinstance(d, TypeVar):
            nxt = self.flex.get(d)
            if nxt is None:
                break
            d = nxt  # type: ignore[assignment]
        return d

    def _unify_tensor(self, a: TensorType, b: TensorType, origin: Origin) -> TensorType:
        if self.flex:
            # bind instantiated shape/dtype parameters first (they stand for whatever they meet)
            fa = TensorType(self._flex_shape(a.shape), self._flex_dtype(a.dtype), a.value)
            fb = TensorType(self._flex_shape(b.shape), self._flex_dtype(b.dtype), b.value)
            for x, y in ((fa, fb), (fb, fa)):
                if x.shape in self.flex and y.shape is not None and y.shape != x.shape:
                    self.flex[x.shape] = y.shape
                if x.dtype in self.flex and y.dtype is not None and y.dtype != x.dtype:
                    self.flex[x.dtype] = y.dtype
            fa = TensorType(self._flex_shape(a.shape), self._flex_dtype(a.dtype), a.value)
            fb = TensorType(self._flex_shape(b.shape), self._flex_dtype(b.dtype), b.value)
            if fa != a or fb != b:
                return self._unify_tensor_plain(fa, fb, origin)
        return self._unify_tensor_plain(a, b, origin)

    def _unify_tensor_plain(self, a: TensorType, b: TensorType, origin: Origin) -> TensorType:
        da, db = a.dtype, b.dtype
        if da is not None and db is not None and da != db:
            raise Mismatch(DTYPE_MISMATCH, f"dtype {da} vs {db}")
        dtype = da if da is not None else db
        sa, sb = a.shape, b.shape
        shape: tuple[Dim, ...] | TypeVar | None
        if sa is None:
            shape = sb
        elif sb is None:
            shape = sa
        elif isinstance(sa, TypeVar) or isinstance(sb, TypeVar):
            if sa != sb:
                raise Mismatch(SHAPE_MISMATCH, f"shape {_shape(sa)} vs {_shape(sb)}")
            shape = sa
        else:
            if len(sa) != len(sb):
                raise Mismatch(RANK_MISMATCH, f"rank {len(sa)} vs {len(sb)}")
            out = []
            bound = self.dim_bind
            for i, (x, y) in enumerate(zip(sa, sb)):
                if (x is y or x == y) and (not bound or not x.has_unknowns):
                    out.append(x)  # what unify_dim gives: nothing to resolve, equal
                else:
                    out.append(self.unify_dim(x, y, origin, i))
            shape = tuple(out) if any(p is not q for p, q in zip(out, sa)) else sa
        va, vb = a.value, b.value
        if va is None and vb is None:
            if shape is sa and dtype == da:
                return a
            if shape is sb and dtype == db:
                return b
            return TensorType(shape, dtype)
        value = self._meet_values(va, vb, origin)
        if shape is sa and dtype == da and value is va:
            return a
        if shape is sb and dtype == db and value is vb:
            return b
        return TensorType(shape, dtype, value)

    def _meet_values(self, va: Value | None, vb: Value | None, origin: Origin) -> Value | None:
        """The meet of two values (a value refines its type): an unknown entry takes the other
        side's, two known entries are equated as dimensions are (different constants conflict,
        symbolic ones become a condition)."""
        if va is None or va == vb:
            return vb
        if vb is None:
            return va
        if isinstance(va, Dim) and isinstance(vb, Dim):
            return self._meet_entry(va, vb, origin, None)
        if isinstance(va, Dim) or isinstance(vb, Dim) or len(va) != len(vb):
            raise Mismatch(SHAPE_MISMATCH, f"value {value_str(va)} vs {value_str(vb)}")
        out: list[Dim | None] = []
        for i, (x, y) in enumerate(zip(va, vb)):
            if x is None:
                out.append(y)
            elif y is None:
                out.append(x)
            else:
                out.append(self._meet_entry(x, y, origin, i))
        if all(p is q for p, q in zip(out, va)):
            return va
        if all(p is q for p, q in zip(out, vb)):
            return vb
        return tuple(out)

    def _meet_entry(self, x: Dim, y: Dim, origin: Origin, index: int | None) -> Dim:
        x, y = self.resolve_dim(x), self.resolve_dim(y)
        if x == y:
            return x
        cx, cy = x.constant_value, y.constant_value
        if cx is not None and cy is not None:
            where = "value" if index is None else f"value entry {index}"
            raise Mismatch(SHAPE_MISMATCH, f"{where}: {cx} vs {cy}")
        return self.unify_dim(x, y, origin)

    def unify_dim(self, x: Dim, y: Dim, origin: Origin, index: int | None = None) -> Dim:
        """Equate two dimensions (see the module docstring); returns the agreed dimension."""
        x, y = self.resolve_dim(x), self.resolve_dim(y)
        if x == y:
            return x
        for u, v in ((x, y), (y, x)):
            at = u.atom
            if isinstance(at, DimVar) and (not v.has_unknowns or at not in v.unknowns):
                self._bind(at, v, origin)
                return v
        cx, cy = x.constant_value, y.constant_value
        where = f"dimension {index}: " if index is not None else ""
        if cx is not None and cy is not None:
            raise Mismatch(SHAPE_MISMATCH, f"{where}{cx} vs {cy}")
        solved = _solve_linear(x - y)
        if solved is not None:
            var, val, rem = solved
            if rem.is_constant and rem != 0:
                raise Mismatch(SHAPE_MISMATCH, f"{where}{x} vs {y}")
            if rem != 0:
                msg = f"{where}`{x}` and `{y}` are equal only when `{rem}` is 0"
                self.on_condition(eq(rem, 0), origin, SHAPE_MISMATCH, msg)
            self._bind(var, val, origin)
            # the agreed dimension is the side the unknown was solved from
            return self.resolve_dim(y if var in x.unknowns else x)
        frame = self._frame
        if frame is not None:
            msg = conflict_message(
                "cannot unify", self.resolve(frame.left), self.resolve(frame.right), f"{where}{x} vs {y}"
            )
        else:
            msg = f"dimensions `{x}` and `{y}` must be equal"
        self.on_condition(eq(x, y), origin, SHAPE_MISMATCH, msg)
        # prefer the simpler side as the agreed dimension
        return x if _size(x) <= _size(y) else y

    def _bind(self, var: DimVar, val: Dim, origin: Origin) -> None:
        # an unknown dimension is >= 0: binding it to a value that may be negative states that
        c = val.constant_value
        if (c < 0) if c is not None else (bounds(val)[0] < 0):
            msg = f"dimension `{val}` (the value of `?d{var.id}`) may be negative"
            self.on_condition(ge(val, 0), origin, NEGATIVE_DIM, msg)
        self.dim_bind[var] = val
        self.dim_why[var] = origin
        self.on_refine((), (var,))

    def _func_sides(self, a: FuncType, b: FuncType) -> tuple[FuncType, FuncType, FuncType, FuncType]:
        """``(left, right, rigid, gen)`` for unifying function types ``a`` and ``b``: the more
        general side (right on a tie) instantiated with fresh holes as ``gen``, the other kept
        ``rigid``; ``left``/``right`` are the two in the caller's order."""
        if len(a.params) != len(b.params):
            raise Mismatch(
                ARITY_MISMATCH, f"functions of {len(a.params)} and {len(b.params)} parameters"
            )
        # instantiate the more general side (right on a tie); the other side's parameters stay rigid
        flip = len(a.type_params) > len(b.type_params)
        rigid, gen = (b, a) if flip else (a, b)
        if gen.type_params:
            sub: dict[TypeVar, Type] = {}
            dsub: dict[object, Dim] = {}
            for tp in gen.type_params:
                if tp.kind == "shape":
                    v = TypeVar(f"{tp.name}'{len(self.flex) + 1}", "shape")
                    self.flex[v] = None
                    sub[tp] = TensorType(v, None)  # subst_typevars takes the tensor's shape
                elif tp.kind == "dtype":
                    v = TypeVar(f"{tp.name}'{len(self.flex) + 1}", "dtype")
                    self.flex[v] = None
                    sub[tp] = TensorType(None, v)  # ... and its dtype
                elif tp.kind == "dim":
                    dsub[tp.name] = fresh_dimvar()  # the symbol of that name becomes an unknown
                else:
                    sub[tp] = self.fresh_hole("type")

            def inst(t: Type) -> Type:
                if not dsub:
                    ct = type(t)
                    if ct is TypeVar:  # what subst_typevars gives for a lone variable
                        return sub.get(t, t)  # type: ignore[arg-type]
                    if ct is TensorType and type(t.shape) is not TypeVar and type(t.dtype) is not TypeVar:  # type: ignore[union-attr]
                        return t  # no variable inside
                t = subst_typevars(t, sub)
                return map_dims(t, lambda d: d.subs(dsub)) if dsub else t  # type: ignore[arg-type]

            gen = func_of_checked(
                tuple(inst(p) for p in gen.params),
                inst(gen.ret),
                (),
                tuple(
                    TypeRelation(r.name, tuple(inst(x) for x in r.args), r.attrs)
                    for r in gen.relations
                ),
                gen.pure,
            )
        left, right = (gen, rigid) if flip else (rigid, gen)
        return left, right, rigid, gen

    def _unify_func(self, a: FuncType, b: FuncType, origin: Origin) -> _UnifyGen:
        left, right, rigid, gen = self._func_sides(a, b)
        params = []
        for i, (x, y) in enumerate(zip(left.params, right.params)):
            params.append((yield (x, y, _PARAM[i] if i < len(_PARAM) else f"parameter {i}")))
        ret = yield (left.ret, right.ret, "return type")
        rels = rigid.relations if rigid.relations else gen.relations
        return func_of_checked(tuple(params), ret, rigid.type_params, rels, a.pure and b.pure)


def _form(t: Type) -> str:
    names = {
        TensorType: "a tensor",
        TupleType: "a tuple",
        FuncType: "a function",
        TypeVar: "a type variable",
        GlobalTypeVar: "a global type variable",
        TypeCall: "a type call",
        ObjectType: "Object",
        ShapeType: "a shape",
    }
    return names.get(type(t), type(t).__name__)


def _shape(s: object) -> str:
    return str(s)


def _size(d: Dim) -> int:
    return len(str(d))


def _solve_linear(diff: Dim) -> tuple[DimVar, Dim, Dim] | None:
    """If ``diff == 0`` determines an unknown ``v`` occurring once, linearly, as ``k*v``, return
    ``(v, value, remainder)``: ``v == value`` holds exactly when ``remainder == 0`` (the remainder
    is the canonical ``0`` when ``k`` divides the rest, as for ``?d + 1 == n``; for ``2*?d == n`` it
    is ``n % 2``)."""
    for m, k in diff.terms:
        if len(m) == 1 and m[0][1] == 1 and isinstance(m[0][0], DimVar):
            v = m[0][0]
            rest = diff - const(k) * Dim(((m, 1),))
            if v in rest.unknowns:
                continue
            # k*v + rest == 0  <=>  v == num / den with den > 0
            num, den = (ZERO - rest, k) if k > 0 else (rest, -k)
            return v, floordiv(num, den), mod(num, den)
    return None
