"""Dimensions rewritten under a result's guards, for what ``infer_shapes`` writes.

A result states guards (``seq <= 16``, ``height % 4 == 0``): the model runs only where they hold.
There, ``min(16, seq)`` is ``seq`` and ``4*(height//4)`` is ``height``; onnxruntime compares
``dim_param`` strings by name, so :func:`simplify_types` writes the simpler equal dimension. The
candidates are cheap: an argument of a ``min``/``max`` (the one every other argument is above or
below), the ``x`` of ``k*(x//k)`` (``x//2`` of ``2*(x//4)``) and of ``x - x % k`` (when
``x % k == 0``), and the dimension with such sub-terms rewritten (innermost first). A candidate is
taken only when the guards imply it: decided by the canonical forms first (a guard that is the
very condition, a condition that is constant), then by a candidate counter-model, then by Z3
(:class:`symshape.solver.simplify.Prover`: its resource limit, so the answer is the same on every
run), with the guards that share symbols with the condition (transitively) as premises. A
dimension without ``min``, ``max``, ``//`` or ``%`` is returned as it is, never sent to Z3; each
distinct dimension is simplified once per call.

>>> import symshape as ss
>>> from symshape.encoding.dims import dmax, dmin
>>> from symshape.encoding.conds import le, eq
>>> seq, h = ss.dim("seq"), ss.dim("height")
>>> g = GuardedDims([le(seq, 16), eq(h % 4, 0)])
>>> [str(g.dim(d)) for d in (dmax(seq, dmin(16, seq)), 4 * (h // 4), h - h % 4 + 1, 2 * (h // 4))]
['seq', 'height', 'height + 1', 'height//2']
>>> str(GuardedDims([le(seq, 17)]).dim(dmin(16, seq)))
'min(16, seq)'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from symshape import Dim, TensorType, Type
from symshape.encoding.conds import TRUE, BoolOp, Cond, all_of, decide, eq, ge, le
from symshape.encoding.dims import (
    ZERO,
    Atom,
    FloorDiv,
    Max,
    Min,
    Mod,
    Sym,
    const,
    dmax,
    dmin,
    floordiv,
    mod,
)
from symshape.solver.relevance import Leaf, cond_leaves
from symshape.solver.simplify import Prover

__all__ = ["GuardedDims", "simplify_types"]

_K = TypeVar("_K")
_V = TypeVar("_V")


def _members(c: Cond) -> list[Cond]:
    if isinstance(c, BoolOp) and c.op == "and":
        return [m for x in c.args for m in _members(x)]
    return [c]


def _composite(d: Dim) -> bool:
    """``d`` holds a ``min``, ``max``, ``//`` or ``%`` (at any depth: they are atoms of ``d``)."""
    return any(not isinstance(a, Sym) for m, _ in d.terms for a, _ in m)


def _cached(memo: dict[_K, _V], key: _K, make: Callable[[_K], _V]) -> _V:
    """``memo[key]``, made by ``make(key)`` the first time."""
    hit = memo.get(key)
    if hit is None:
        hit = memo[key] = make(key)
    return hit


def _atom_dim(a: Atom) -> Dim:
    return Dim(((((a, 1),), 1),))


class GuardedDims:
    """Dimensions simplified under the conjunction of ``conds`` (see the module docstring)."""

    def __init__(self, conds: Sequence[Cond]) -> None:
        self._guards = [m for c in conds for m in _members(c)]
        self._known = set(self._guards)
        self._leaves = [cond_leaves(c) for c in self._guards]
        self._memo: dict[Dim, Dim] = {}
        self._held: dict[Cond, bool] = {}
        self._prover = Prover()

    @property
    def z3_checks(self) -> int:
        """How many checks Z3 ran so far."""
        return self._prover.z3_checks

    def dim(self, d: Dim) -> Dim:
        """A dimension equal to ``d`` wherever the guards hold, and simpler when one is found."""
        return _cached(self._memo, d, self._simplify) if _composite(d) else d

    def _simplify(self, d: Dim) -> Dim:
        amap: dict[Atom, Dim] = {}
        for m, _ in d.terms:
            for a, _ in m:
                if not isinstance(a, Sym) and a not in amap:
                    amap[a] = self._atom(a)
        changed = {a: x for a, x in amap.items() if x != _atom_dim(a)}
        out = d.subs(changed) if changed else d  # type: ignore[arg-type]
        return self._unfloor(out)

    def _atom(self, a: Atom) -> Dim:
        """An equal dimension for the atom ``a``, its arguments simplified first."""
        if isinstance(a, (Max, Min)):
            args = [self.dim(x) for x in a.args]
            new = dmax(*args) if isinstance(a, Max) else dmin(*args)
            at = new.atom
            if isinstance(at, (Max, Min)):
                for x in sorted(at.args, key=lambda y: (len(str(y)), y.sort_key())):
                    rel = ge if isinstance(at, Max) else le
                    if self._holds(all_of(*(rel(x, y) for y in at.args if y is not x))):
                        return x
            return new
        if isinstance(a, (FloorDiv, Mod)):
            x, b = self.dim(a.a), self.dim(a.b)
            if isinstance(a, FloorDiv):
                return floordiv(x, b)
            new = mod(x, b)
            if isinstance(new.atom, Mod) and self._holds(eq(new, 0)):
                return ZERO
            return new
        return _atom_dim(a)

    def _unfloor(self, d: Dim) -> Dim:
        """``c*(x//m)`` as ``(c/g)*(x//(m/g))`` (``g = gcd(c, m) > 1``; ``x`` when ``g == m``) in
        every term of ``d``, for each ``x//m`` (``m`` a constant) with ``x % m == 0`` under the
        guards: ``4*(h//4)`` is ``h``, ``2*(h//4)`` is ``h//2``."""
        for m, c in d.terms:
            for a, e in m:
                if isinstance(a, FloorDiv) and e == 1:
                    k = a.b.constant_value
                    if k is not None and math.gcd(c, k) > 1 and self._holds(eq(mod(a.a, k), 0)):
                        return self._unfloor(_replace_floor(d, a, k))
        return d

    def _holds(self, c: Cond) -> bool:
        """The guards imply ``c`` (False when it is not proved)."""
        r = decide(c)
        if r is not None:
            return r
        return all(m in self._known for m in _members(c)) or _cached(self._held, c, self._implied)

    def _implied(self, c: Cond) -> bool:
        leaves = cond_leaves(c)
        near: list[int] = []
        reach: set[Leaf] = set(leaves)
        grew = True
        while grew:  # the guards sharing symbols with c, transitively
            grew = False
            for i, gl in enumerate(self._leaves):
                if i not in near and not reach.isdisjoint(gl):
                    near.append(i)
                    reach |= gl
                    grew = True
        near.sort()
        premises: list[Cond] = [self._guards[i] for i in near] or [TRUE]  # (true at every size?)
        return self._prover.implies(premises, c, [self._leaves[i] for i in near] + [leaves])


def _replace_floor(d: Dim, f: FloorDiv, k: int) -> Dim:
    """``d`` with each term ``c*(x//k)*rest`` written ``(c/g)*(x//(k/g))*rest``, ``g = gcd(c, k)``."""
    out = ZERO
    for m, c in d.terms:
        g = math.gcd(c, k) if (f, 1) in m else 1
        t = const(c // g)
        for a, e in m:
            t = t * (floordiv(f.a, k // g) if g > 1 and a == f else _atom_dim(a) ** e)
        out = out + t
    return out


def simplify_types(types: Mapping[_K, Type], conds: Sequence[Cond]) -> tuple[dict[_K, Type], GuardedDims]:
    """``types`` with every tensor type's dimensions simplified under ``conds`` (other types, and
    tensor types whose dimensions do not change, as they were); and the simplifier (its
    ``z3_checks``)."""
    g = GuardedDims(conds)
    out: dict[_K, Type] = {}
    shapes: dict[tuple[Dim, ...], tuple[Dim, ...] | None] = {}  # None: unchanged
    for name, t in types.items():
        if isinstance(t, TensorType) and isinstance(t.shape, tuple) and not t._cshape:
            shape = t.shape
            if shape in shapes:
                dims = shapes[shape]
            else:
                new = tuple([g.dim(d) for d in shape])
                dims = shapes[shape] = None if new == shape else new
            if dims is not None:
                t = TensorType(dims, t.dtype)  # (what is written: the shape and the dtype)
        out[name] = t
    return out, g
