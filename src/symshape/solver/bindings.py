"""What unification has learned, and reading types through it: the union-find over holes (each
class with its resolved type), the values bound to unknown
dimensions, the bindings of instantiated shape and dtype type parameters, and :meth:`resolve`,
which replaces all of them inside a type (iteratively, at any depth).

:class:`~symshape.solver.unify.Unifier` builds on this store; see that module for the algorithm.
"""

from __future__ import annotations

from typing import TypeVar as TypeVar_

from symshape.encoding.composite_types import _COMPOSITE as COMPOSITE
from symshape.encoding.dims import Dim, DimVar
from symshape.encoding.types import (
    IncompleteType,
    TensorType,
    TupleType,
    Type,
    TypeVar,
    type_children,
    type_rebuild,
)
from symshape.encoding.values import map_range, map_value

__all__ = ["Bindings", "COMPOSITE"]

# a tensor type's shape or its dtype (what an instantiated type parameter of kind shape/dtype binds)
_Slot = TypeVar_("_Slot", tuple[Dim, ...] | TypeVar | None, str | TypeVar | None)

class Bindings:
    """Union-find over holes (with a resolved type per class) and bindings of unknown dimensions."""

    def __init__(self) -> None:
        self.parent: dict[IncompleteType, IncompleteType] = {}
        self.resolved: dict[IncompleteType, Type] = {}
        self.dim_bind: dict[DimVar, Dim] = {}
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
            r = self.find(t) if t in self.parent else t  # a root (most holes): no walk
            return self.resolved.get(r, r)
        return t

    # -- resolution -----------------------------------------------------------------------------
    def resolve_dim(self, d: Dim) -> Dim:
        bind = self.dim_bind
        if not bind:
            return d
        hv = d._hv  # (``d.has_unknowns``, cached in it; None until asked)
        if hv is False:
            return d
        t = d.terms
        if len(t) == 1:  # ``d.atom``, written out (tuple unpacking: the fewest steps)
            m, k = t[0]
            if k == 1 and len(m) == 1:
                at, p = m[0]
                if p == 1 and type(at) is DimVar:  # exactly one unknown (the common case): its value
                    b = bind.get(at)
                    if b is None:
                        return d
                    if b.has_unknowns and not bind.keys().isdisjoint(b.unknowns):
                        b = self._resolve_var(at)
                    return b
        if hv is None and not d.has_unknowns:
            return d
        mapping: dict[object, Dim] = {}
        for a in d.unknowns:
            b = bind.get(a)
            if b is not None:
                if b.has_unknowns and not bind.keys().isdisjoint(b.unknowns):
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
            fs, fd = self._flex(shape), self._flex(dtype)
            if fs is not shape or fd is not dtype:
                t = TensorType(fs, fd, t.value, t.range)
                shape, dtype = fs, fd
        if self.dim_bind and isinstance(shape, tuple):
            new = tuple(self.resolve_dim(d) for d in shape)
            v, r = t.value, t.range
            nv = v if v is None else map_value(v, self.resolve_dim)
            nr = r if r is None else map_range(r, self.resolve_dim)
            if nv is not v or nr is not r or any(a is not b for a, b in zip(new, shape)):
                return TensorType(new, dtype, nv, nr)
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
        if cls not in COMPOSITE:
            return t
        if cls is TupleType and not self.flex and not self.dim_bind:
            # a tuple of tensor types and holes standing for tensor types (a batch norm's result,
            # a concatenation's operand): each field as the walk below resolves it, inline
            parent, resolved = self.parent, self.resolved
            new: list[Type] = []
            changed = False
            for f in t.fields:  # type: ignore[union-attr]
                tf = type(f)
                if tf is not TensorType:
                    if tf is not IncompleteType:
                        break
                    r = self.find(f) if f in parent else f  # type: ignore[arg-type]
                    rt = resolved.get(r)  # type: ignore[arg-type]
                    g = r if rt is None else rt
                    if type(g) is not TensorType and rt is not None:
                        break  # (a hole resolved to a composite type: the walk below)
                    if g is not f:
                        changed = True
                    f = g
                new.append(f)
            else:
                return type_rebuild(t, new) if changed else t
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
            elif cx in COMPOSITE:
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
            elif cx in COMPOSITE:
                stack.extend(type_children(x))
        return False

    def _flex(self, x: _Slot) -> _Slot:
        """A tensor's shape or dtype with instantiated type parameters followed to their bindings."""
        while isinstance(x, TypeVar):
            nxt = self.flex.get(x)
            if nxt is None:
                break
            x = nxt  # type: ignore[assignment]
        return x
