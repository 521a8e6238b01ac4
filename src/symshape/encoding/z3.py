"""Memoized lowering of dimensions and conditions to Z3 terms.

Each atom becomes an integer constant with its declared range as an *axiom* (``n >= 1``,
``?d3 >= 0``; a join of branches equals one of its alternatives); :class:`Z3Encoder` collects the
axioms of every atom it has lowered so that the session asserts them once. Floor division and
modulo lower to Z3's ``div``/``mod``, which agree with Python's ``//`` and ``%`` for the positive
divisors that dimensions have (divisors are also given the axiom ``> 0``). ``max``/``min`` lower to
``If``.
"""

from __future__ import annotations

import z3

from symshape.encoding.conds import BoolConst, BoolOp, Cmp, CmpOp, Cond, Not, assert_never
from symshape.encoding.dim_atoms import Key
from symshape.encoding.dims import AnyDim, Atom, Dim, DimVar, FloorDiv, Max, Min, Mod, Sym

__all__ = ["Z3Encoder"]


class Z3Encoder:
    """Lower :class:`Dim` and :class:`Cond` to Z3, memoized per encoder (one per solve)."""

    def __init__(self, ctx: z3.Context | None = None) -> None:
        self.ctx = ctx
        self._dims: dict[Key, z3.ArithRef] = {}
        self._atoms: dict[Key, z3.ArithRef] = {}
        self.axioms: list[z3.BoolRef] = []
        self._names: dict[str, int] = {}

    def _var(self, name: str) -> z3.ArithRef:
        k = self._names.get(name, 0)
        self._names[name] = k + 1
        return z3.Int(name if k == 0 else f"{name}#{k}", self.ctx)

    def atom(self, a: Atom) -> z3.ArithRef:
        hit = self._atoms.get(a._key)
        if hit is not None:
            return hit
        t: z3.ArithRef
        if isinstance(a, Sym):
            t = self._var(a.name)
            self.axioms.append(t >= a.min)
            if a.max is not None:
                self.axioms.append(t <= a.max)
        elif isinstance(a, AnyDim):
            t = self._var(f"?{a.id}")
            if a.alts:
                # a join of branches is one of its alternatives
                self.axioms.append(z3.Or(*[t == self.dim(x) for x in a.alts]))
            else:
                self.axioms.append(t >= a.least)
        elif isinstance(a, DimVar):
            t = self._var(f"?d{a.id}")
            self.axioms.append(t >= 0)
        elif isinstance(a, FloorDiv):
            num, den = self.dim(a.a), self.dim(a.b)
            if a.b.constant_value is None:
                self.axioms.append(den > 0)
            t = num / den
        elif isinstance(a, Mod):
            num, den = self.dim(a.a), self.dim(a.b)
            if a.b.constant_value is None:
                self.axioms.append(den > 0)
            t = num % den
        elif isinstance(a, (Max, Min)):
            args = [self.dim(x) for x in a.args]
            t = args[0]
            for x in args[1:]:
                t = z3.If(x > t, x, t) if isinstance(a, Max) else z3.If(x < t, x, t)
        else:  # pragma: no cover - exhaustive
            raise TypeError(a)
        self._atoms[a._key] = t
        return t

    def dim(self, d: Dim) -> z3.ArithRef:
        hit = self._dims.get(d._key)
        if hit is not None:
            return hit
        total: z3.ArithRef | None = None
        for m, c in d.terms:
            term: z3.ArithRef | None = None if m else z3.IntVal(c, self.ctx)
            for a, e in m:
                base = self.atom(a)
                for _ in range(e):
                    term = base if term is None else term * base
            assert term is not None
            if m and c != 1:
                term = z3.IntVal(c, self.ctx) * term
            total = term if total is None else total + term
        if total is None:
            total = z3.IntVal(0, self.ctx)
        self._dims[d._key] = total
        return total

    def cond(self, c: Cond) -> z3.BoolRef:
        match c:
            case BoolConst(v):
                return z3.BoolVal(v, self.ctx)
            case Cmp(op, a, b):
                x, y = self.dim(a), self.dim(b)
                match op:
                    case CmpOp.EQ:
                        return x == y
                    case CmpOp.NE:
                        return x != y
                    case CmpOp.LE:
                        return x <= y
                    case CmpOp.LT:
                        return x < y
                    case _:
                        assert_never(op)
            case BoolOp("and", xs):
                return z3.And(*(self.cond(x) for x in xs))
            case BoolOp(_, xs):
                return z3.Or(*(self.cond(x) for x in xs))
            case Not(x):
                return z3.Not(self.cond(x))
        raise TypeError(c)

    def take_axioms(self) -> list[z3.BoolRef]:
        out, self.axioms = self.axioms, []
        return out
