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

from typing import TYPE_CHECKING

from symshape.encoding.types import (
    FuncType,
    IncompleteType,
    TensorType,
    TupleType,
    TypeCall,
    TypeVar,
    tuple_of_checked,
)
from symshape.errors import ARITY_MISMATCH, KIND_MISMATCH, OCCURS_CHECK, TYPE_MISMATCH, ErrorCode
from symshape.solver.bindings import COMPOSITE as _COMPOSITE
from symshape.solver.diagnostics import Origin, conflict_message
from symshape.solver.unify_atoms import OWN_KIND as _OWN_KIND
from symshape.solver.unify_atoms import check_hole_kind, unify_atoms
from symshape.solver.unify_funcs import func_result, func_sides, param_where
from symshape.solver.unify_tensors import Mismatch, TensorUnifier

if TYPE_CHECKING:  # names only the annotations use
    from collections.abc import Callable, Generator

    from symshape.encoding.types import Type

    _Request = tuple[Type, Type, str]
    _UnifyGen = Generator[_Request, Type, Type]

__all__ = ["Unifier", "Mismatch"]


_REC_LIMIT = 48  # levels of nesting unified recursively (see Unifier._unify)
_FIELD = tuple(f"field {i}" for i in range(16))  # the ``where`` of nested pairs, made once


class Unifier(TensorUnifier):
    """Structural unification over :class:`TensorUnifier`: holes, tuples, function types (up to
    renaming of type parameters), type calls; a conflict goes to :attr:`on_conflict`."""

    def __init__(self) -> None:
        super().__init__()
        self.on_conflict: Callable[[ErrorCode, str, Origin, Type, Type], None] = (
            lambda code, msg, o, a, b: None
        )
        self.fresh_hole: Callable[[str], IncompleteType] = lambda kind: IncompleteType(kind)

    # -- entry point ---------------------------------------------------------------------------
    def unify(self, a: Type, b: Type, origin: Origin) -> Type:
        """Unify ``a`` and ``b``; a conflict is reported through :attr:`on_conflict` and the
        (resolved) left type is returned."""
        outer = self._frame
        if outer is None:
            self._frame = (a, b)
        try:
            return self._rec(a, b, origin, 0)
        except Mismatch as m:
            if outer is not None:
                raise
            return self._conflict(a, b, origin, m)
        finally:
            if outer is None:
                self._frame = None

    def _conflict(self, a: Type, b: Type, origin: Origin, m: Mismatch) -> Type:
        """Report the conflict ``m`` found unifying ``a`` and ``b`` (outermost); the left type."""
        left, right = self.resolve(a), self.resolve(b)
        msg = conflict_message("cannot unify", left, right, m.detail)
        self.on_conflict(m.code, msg, origin, left, right)
        return left

    def _rec(self, a: Type, b: Type, origin: Origin, depth: int) -> Type:
        """Structural unification: recursive for the first :data:`_REC_LIMIT` levels of nesting
        (cheaper), then the iterative :meth:`_unify_deep` (any depth). Same results either way."""
        if a is b:
            return a
        ca, cb = type(a), type(b)
        if ca is TensorType and cb is TensorType:
            if self.flex:
                return self._unify_tensor(a, b, origin)  # type: ignore[arg-type]
            return self._unify_tensor_plain(a, b, origin)  # type: ignore[arg-type]
        if depth >= _REC_LIMIT:
            return self._unify_deep(a, b, origin)
        d1 = depth + 1
        if ca is TupleType and cb is TupleType:
            fa, fb = a.fields, b.fields  # type: ignore[union-attr]
            if len(fa) != len(fb):
                raise Mismatch(ARITY_MISMATCH, f"tuples of {len(fa)} and {len(fb)} fields")
            out = []
            changed = False
            for x, y in zip(fa, fb):
                if x is y:
                    out.append(x)
                    continue
                try:
                    # a hole and a type, or two holes: what _rec does for them, without its dispatch
                    if type(x) is IncompleteType:
                        if type(y) is IncompleteType:
                            r = self._hole_pair(x, y, origin, d1 + 1)
                        else:
                            done = self._hole_to_type(x, y)
                            r = done if done is not None else self._hole_typed(x, y, True, origin, d1 + 1)
                    elif type(y) is IncompleteType:
                        done = self._hole_to_type(y, x)
                        r = done if done is not None else self._hole_typed(y, x, False, origin, d1 + 1)
                    else:
                        r = self._rec(x, y, origin, d1)
                except Mismatch as m:  # (``len(out)``: the field's index)
                    raise Mismatch(m.code, f"{_field(len(out))}: {m.detail}") from None
                out.append(r)
                if r is not x:
                    changed = True
            if not changed:
                return a
            return tuple_of_checked(tuple(out))
        if ca is IncompleteType or cb is IncompleteType:
            if ca is not cb:
                hole, other = (a, b) if ca is IncompleteType else (b, a)
                done = self._hole_to_type(hole, other)  # type: ignore[arg-type]
                if done is not None:
                    return done
                return self._hole_typed(hole, other, hole is a, origin, d1)  # type: ignore[arg-type]
            return self._hole_pair(a, b, origin, d1)  # type: ignore[arg-type]
        if ca is FuncType and cb is FuncType:
            return self._func_rec(a, b, origin, d1)  # type: ignore[arg-type]
        if ca is cb and ca in _COMPOSITE:
            g: _UnifyGen = self._unify_struct(a, b, origin)
        else:
            return unify_atoms(a, b)
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
    # recursively; each does exactly what its generator does, in the same order (the steps they
    # share are the methods after them).
    def _hole_pair(self, a: IncompleteType, b: IncompleteType, origin: Origin, d1: int) -> Type:
        """Two holes (:meth:`_unify_hole`'s first case)."""
        ra, rb, pair = self._union(a, b)
        if pair is not None:
            self.resolved[ra] = self._rec(pair[0], pair[1], origin, d1)
        return self._unioned(ra, rb)

    def _hole_typed(
        self, hole: IncompleteType, other: Type, hole_left: bool, origin: Origin, d1: int
    ) -> Type:
        """A hole whose class has a type, and a type (:meth:`_unify_hole`'s second case)."""
        root, prev = self._hole_class(hole, other)
        if prev is None:
            new = other
        elif hole_left:
            new = self._rec(prev, other, origin, d1)
        else:  # keep the sides in the caller's order, so that details read like the message
            new = self._rec(other, prev, origin, d1)
        return self._settle(root, prev, new)

    def _func_rec(self, a: FuncType, b: FuncType, origin: Origin, d1: int) -> Type:
        """Two function types (:meth:`_unify_func`)."""
        left, right, rigid, gen = func_sides(a, b, self.flex, self.fresh_hole)
        params: list[Type] = []
        for x, y in zip(left.params, right.params):
            try:
                params.append(x if x is y else self._rec(x, y, origin, d1))
            except Mismatch as m:  # (``len(params)``: the parameter's index)
                raise Mismatch(m.code, f"{param_where(len(params))}: {m.detail}") from None
        try:
            ret = self._rec(left.ret, right.ret, origin, d1)
        except Mismatch as m:
            raise Mismatch(m.code, f"return type: {m.detail}") from None
        return func_result(a, b, rigid, gen, params, ret)

    def _hole_to_type(self, hole: IncompleteType, other: Type) -> Type | None:
        """Case 2 of the algorithm when ``hole``'s class has no type yet (the common case): the
        class takes ``other``; or when its type *is* ``other`` and ``other`` has no sub-types
        (nothing changes). None otherwise (then the two are unified)."""
        root = self.find(hole) if hole in self.parent else hole
        resolved = self.resolved
        prev = resolved.get(root)
        co = type(other)
        if prev is not None:
            if prev is other and co is not IncompleteType and co not in _COMPOSITE:
                return other  # what _hole_typed gives: the checks passed when it was bound
            return None
        if co is not TensorType or root.kind != "type":  # (a tensor type holds no hole)
            if co is TypeVar:
                if root.kind != other.kind:  # type: ignore[union-attr]
                    check_hole_kind(root, other)  # (raises)
            elif co in _OWN_KIND or root.kind != "type":
                check_hole_kind(root, other)
            if (co in _COMPOSITE or co is IncompleteType) and self.occurs(root, other):
                raise Mismatch(OCCURS_CHECK, f"`{root}` occurs in `{self.resolve(other)}`")
        resolved[root] = other
        if self._watch_a or self._watch_b:
            self.on_refine((root,), ())
        return other

    # -- the steps on holes both forms share ------------------------------------------------------
    def _union(
        self, a: IncompleteType, b: IncompleteType
    ) -> tuple[IncompleteType, IncompleteType | None, tuple[Type, Type] | None]:
        """Step 1: union the classes of holes ``a`` and ``b`` (the root with the smaller id wins).
        Returns the root, the other former root (None when they were one class already) and, when
        both classes had a type, the two types: the caller stores their unification as the root's
        type, then calls :meth:`_unioned`."""
        parent = self.parent
        ra = self.find(a) if a in parent else a  # (a root, the common case: no walk)
        rb = self.find(b) if b in parent else b
        if ra is rb:
            return ra, None, None
        if ra.kind != rb.kind:
            raise Mismatch(KIND_MISMATCH, f"kind {ra.kind} vs {rb.kind}")
        if rb.id < ra.id:
            ra, rb = rb, ra
        resolved = self.resolved
        ta, tb = resolved.get(ra), resolved.get(rb)
        parent[rb] = ra
        if tb is None:
            return ra, rb, None
        del resolved[rb]
        if ta is None:
            resolved[ra] = tb
            return ra, rb, None
        return ra, rb, (ta, tb)

    def _unioned(self, ra: IncompleteType, rb: IncompleteType | None) -> Type:
        """The end of step 1: report the refinement; the class's type (or its root)."""
        if rb is not None:
            if self._watch_a or self._watch_b:
                self.on_refine((ra, rb), ())
        return self.resolved.get(ra, ra)

    def _hole_class(self, hole: IncompleteType, other: Type) -> tuple[IncompleteType, Type | None]:
        """Step 2's checks (kind, occurs check): ``hole``'s class root and the class's type."""
        root = self.find(hole)
        check_hole_kind(root, other)
        if self.occurs(root, other):
            raise Mismatch(OCCURS_CHECK, f"`{root}` occurs in `{self.resolve(other)}`")
        return root, self.resolved.get(root)

    def _settle(self, root: IncompleteType, prev: Type | None, new: Type) -> Type:
        """The end of step 2: ``new`` becomes the class's type (if it changed); returns it."""
        if new is not prev:
            self.resolved[root] = new
            if self._watch_a or self._watch_b:
                self.on_refine((root,), ())
        return new

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
            return unify_atoms(a, b), None, None
        try:
            req = next(g)
        except StopIteration as stop:
            return stop.value, None, None
        return None, g, req

    def _unify_hole(self, a: Type, b: Type, origin: Origin) -> _UnifyGen:
        if isinstance(a, IncompleteType) and isinstance(b, IncompleteType):
            ra, rb, pair = self._union(a, b)
            if pair is not None:
                self.resolved[ra] = yield (pair[0], pair[1], "")
            return self._unioned(ra, rb)
        hole, other = (a, b) if isinstance(a, IncompleteType) else (b, a)
        assert isinstance(hole, IncompleteType)
        root, prev = self._hole_class(hole, other)
        if prev is None:
            new = other
        elif hole is a:
            new = yield (prev, other, "")
        else:  # keep the sides in the caller's order, so that details read like the message
            new = yield (other, prev, "")
        return self._settle(root, prev, new)

    def _unify_struct(self, a: Type, b: Type, origin: Origin) -> _UnifyGen:
        """Two composite types of the same form."""
        if isinstance(a, TupleType):
            assert isinstance(b, TupleType)
            fa, fb = a.fields, b.fields
            if len(fa) != len(fb):
                raise Mismatch(ARITY_MISMATCH, f"tuples of {len(fa)} and {len(fb)} fields")
            out = []
            for i, (x, y) in enumerate(zip(fa, fb)):
                out.append((yield (x, y, _field(i))))
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

    def _unify_func(self, a: FuncType, b: FuncType, origin: Origin) -> _UnifyGen:
        left, right, rigid, gen = func_sides(a, b, self.flex, self.fresh_hole)
        params = []
        for i, (x, y) in enumerate(zip(left.params, right.params)):
            params.append((yield (x, y, param_where(i))))
        ret = yield (left.ret, right.ret, "return type")
        return func_result(a, b, rigid, gen, params, ret)


def _field(i: int) -> str:
    return _FIELD[i] if i < len(_FIELD) else f"field {i}"
