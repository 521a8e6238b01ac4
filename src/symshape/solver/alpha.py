"""Keys of decision problems up to a renaming of their leaf atoms.

A program that repeats a block over fresh symbols (a batch ``m_i`` per block) asks the session the
same questions again and again, each about other symbols: ``n == m_0 or n == 1 or m_0 == 1`` is a
guard, and so is ``n == m_1 or n == 1 or m_1 == 1``. :func:`alpha_key` maps a problem (conditions
and dimensions) to a key in which each leaf atom is replaced by its position of first occurrence
and its declared range: two problems with the same key are the same problem up to a bijective
renaming of leaves that keeps ranges, so they have the same verdict (models and proofs carry over
through the renaming). Term order inside a canonical form may depend on names, so two renamings
of one problem can get different keys; that only costs a cache miss.

Joins of branches (``?`` with alternatives) carry an axiom over their alternatives; a problem that
mentions one has no key.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from symshape.encoding.conds import BoolConst, BoolOp, Cmp, Cond, Not
from symshape.encoding.dims import AnyDim, Atom, Dim, DimVar, FloorDiv, Max, Min, Mod, Sym
from symshape.encoding.types import TensorType, TupleType, Type

__all__ = ["alpha_key", "alpha_key_leaves", "alpha_types_key", "AlphaKey", "AlphaMemo"]

AlphaKey = tuple[object, ...]
_X = TypeVar("_X")
_Keyed = tuple[AlphaKey, tuple[Atom, ...]]  # a key and its leaves in the order of their positions


class _NoKey(Exception):
    pass


_MISSING = object()  # a memo's miss (a raised KeyError costs more than the lookup)


def _position(leaves: dict[Atom, int], a: Atom) -> int:
    """The position of leaf ``a`` (numbered in order of first occurrence); a join of branches
    has none."""
    i = leaves.get(a)
    if i is None:
        if type(a) is AnyDim and a.alts:
            raise _NoKey
        i = leaves[a] = len(leaves)
    return i


class _Keyer:
    __slots__ = ("leaves",)

    def __init__(self) -> None:
        self.leaves: dict[Atom, int] = {}

    def atom(self, a: Atom) -> object:
        cls = type(a)
        if cls is Sym or cls is DimVar or cls is AnyDim:
            i = _position(self.leaves, a)
            if cls is Sym:
                return (i, a.min, a.max)  # type: ignore[union-attr]
            return (i, "v") if cls is DimVar else (i, "a", a.least)  # type: ignore[union-attr]
        if cls is FloorDiv or cls is Mod:
            return ("/" if cls is FloorDiv else "%", self.dim(a.a), self.dim(a.b))  # type: ignore[union-attr]
        if cls is Max or cls is Min:
            return ("M" if cls is Max else "m", tuple(self.dim(x) for x in a.args))  # type: ignore[union-attr]
        raise _NoKey  # pragma: no cover - exhaustive

    def dim(self, d: Dim) -> object:
        return tuple((tuple((self.atom(a), e) for a, e in m), c) for m, c in d.terms)

    def cond(self, c: Cond) -> object:
        if isinstance(c, Cmp):
            return (c.op, self.dim(c.lhs), self.dim(c.rhs))
        if isinstance(c, BoolOp):
            return (c.op, tuple(self.cond(x) for x in c.args))
        if isinstance(c, Not):
            return ("not", self.cond(c.arg))
        assert isinstance(c, BoolConst)
        return c.value


def alpha_key(tag: str, conds: Sequence[Cond], dims: Sequence[Dim] = ()) -> AlphaKey | None:
    """The key of the problem ``(conds, dims)`` up to renaming leaves (see the module docstring),
    or None when it has none."""
    return alpha_key_leaves(tag, conds, dims)[0]


def alpha_key_leaves(
    tag: str, conds: Sequence[Cond], dims: Sequence[Dim] = ()
) -> tuple[AlphaKey | None, dict[Atom, int]]:
    """:func:`alpha_key` and the position given to each leaf."""
    k = _Keyer()
    try:
        return (tag, tuple(k.cond(c) for c in conds), tuple(k.dim(d) for d in dims)), k.leaves
    except _NoKey:
        return None, {}


def alpha_types_key(types: Sequence[Type]) -> AlphaKey | None:
    """A key of ground tensor types (and tuples of them) up to renaming the leaves of their
    dimensions; None for other types and for tensors with a known value. One flat tuple
    (:class:`_FlatKeyer`)."""
    k = _FlatKeyer()
    k.out.append(len(types))
    try:
        for t in types:
            k.typ(t)
    except _NoKey:
        return None
    return tuple(k.out)


class _FlatKeyer:
    """:class:`_Keyer`'s key written as one flat tuple of tags, counts, leaf positions, ranges,
    exponents and coefficients (each count comes before what it counts, so the tuple determines
    the structure): the same equality of keys, but one container per key instead of a tuple per
    term, factor and leaf, so a long-lived memo of keys leaves little for the cyclic garbage
    collector to traverse."""

    __slots__ = ("leaves", "out", "divisors")

    def __init__(self) -> None:
        self.leaves: dict[Atom, int] = {}
        self.out: list[object] = []
        #: the non-constant divisors met, each once, in the order of
        #: :func:`~symshape.solver.relevance.cond_divisors`
        self.divisors: list[Dim] = []

    def atom(self, a: Atom) -> None:
        cls = type(a)
        out = self.out
        if cls is Sym or cls is DimVar or cls is AnyDim:
            i = _position(self.leaves, a)
            if cls is Sym:
                out += ("s", i, a.min, a.max)  # type: ignore[union-attr]
            else:
                out += ("v", i) if cls is DimVar else ("a", i, a.least)  # type: ignore[union-attr]
        elif cls is FloorDiv or cls is Mod:
            out.append("/" if cls is FloorDiv else "%")
            b = a.b  # type: ignore[union-attr]
            if b.constant_value is None and b not in self.divisors:
                self.divisors.append(b)
            self.dim(a.a)  # type: ignore[union-attr]
            self.dim(b)
        elif cls is Max or cls is Min:
            args = a.args  # type: ignore[union-attr]
            out += ("M" if cls is Max else "m", len(args))
            for x in args:
                self.dim(x)
        else:  # pragma: no cover - exhaustive
            raise _NoKey

    def dim(self, d: Dim) -> None:
        out = self.out
        terms = d.terms
        out.append(len(terms))
        for m, c in terms:
            out.append(len(m))
            for a, e in m:
                if type(a) is Sym:  # the common leaf, inline (what atom() writes for it)
                    leaves = self.leaves
                    i = leaves.get(a)
                    if i is None:
                        i = leaves[a] = len(leaves)
                    out += ("s", i, a.min, a.max, e)
                else:
                    self.atom(a)
                    out.append(e)
            out.append(c)

    def cond(self, c: Cond) -> None:
        out = self.out
        if isinstance(c, Cmp):
            out += ("C", c.op)
            self.dim(c.lhs)
            self.dim(c.rhs)
        elif isinstance(c, BoolOp):
            out += ("B", c.op, len(c.args))
            for x in c.args:
                self.cond(x)
        elif isinstance(c, Not):
            out.append("N")
            self.cond(c.arg)
        else:
            assert isinstance(c, BoolConst)
            out += ("K", c.value)

    def typ(self, t: Type) -> None:
        """A ground tensor type or a tuple of them (others have no key)."""
        cls = type(t)
        out = self.out
        if cls is TupleType:
            fields = t.fields  # type: ignore[union-attr]
            out += ("t", len(fields))
            for x in fields:
                self.typ(x)
            return
        if cls is not TensorType or t.value is not None:  # type: ignore[union-attr]
            raise _NoKey
        shape = t.shape  # type: ignore[union-attr]
        if type(shape) is tuple:
            out += ("T", len(shape))
            for d in shape:
                self.dim(d)
        else:  # an unknown rank
            out += ("R", shape)
        out.append(t.dtype)  # type: ignore[union-attr]

    def result(self) -> tuple[AlphaKey, tuple[Atom, ...]]:
        """The key and the leaves in the order of their positions."""
        return tuple(self.out), tuple(self.leaves)


class AlphaMemo:
    """Keys of single conditions and dimensions, each computed once, and keys of several of them
    together composed from those: each part's key and which of their leaves are the same
    (numbered in order of first occurrence). Two problems with the same composed key are the same
    problem up to a bijective renaming of leaves that keeps ranges, like :func:`alpha_key`'s.

    Each distinct flat key is handed out as a short stand-in, ``(i,)`` with ``i`` its number in
    this memo: equal keys get the same one, so the stand-ins compare like the keys, and the memo
    tables keyed by them (and by keys composed of them) hash a pair of ints instead of a tuple of
    dozens of tags each time they are looked up (CPython does not remember a tuple's hash)."""

    __slots__ = ("_keys", "_divisors", "_ids")

    def __init__(self) -> None:
        # conditions and dimensions together (a condition never equals a dimension)
        self._keys: dict[Cond | Dim, tuple[AlphaKey, tuple[Atom, ...]] | None] = {}
        self._divisors: dict[Cond, tuple[Dim, ...]] = {}  # of the conditions with a key
        self._ids: dict[AlphaKey, AlphaKey] = {}  # flat key -> its stand-in

    def cond(self, c: Cond) -> tuple[AlphaKey, tuple[Atom, ...]] | None:
        """The key of ``c`` and its leaves in the order of their positions; None without one."""
        hit = self._keys.get(c, _MISSING)
        if hit is not _MISSING:
            return hit  # type: ignore[return-value]
        k = _FlatKeyer()
        try:
            k.cond(c)
        except _NoKey:
            self._keys[c] = None
            return None
        out = self._keys[c] = self._interned(k.result())
        if k.divisors:
            self._divisors[c] = tuple(k.divisors)
        return out

    def leaves_divisors(self, c: Cond) -> tuple[frozenset[Atom], tuple[Dim, ...]] | None:
        """The leaves of ``c`` (:func:`~symshape.solver.relevance.cond_leaves`) and its divisors
        (:func:`~symshape.solver.relevance.cond_divisors`), read off the walk that made its key;
        None when it has no key."""
        k = self.cond(c)
        if k is None:
            return None
        return frozenset(k[1]), self._divisors.get(c, ())

    def dim(self, d: Dim) -> tuple[AlphaKey, tuple[Atom, ...]] | None:
        return self._memo(d, _FlatKeyer.dim)

    def _memo(self, x: _X, write: Callable[[_FlatKeyer, _X], None]) -> _Keyed | None:
        hit = self._keys.get(x, _MISSING)  # type: ignore[call-overload]
        if hit is not _MISSING:
            return hit  # type: ignore[no-any-return]
        out = self._keys[x] = self._interned(_flat_key(write, x))  # type: ignore[index]
        return out

    def _interned(self, keyed: _Keyed | None) -> _Keyed | None:
        """``keyed`` with its flat key replaced by the key's stand-in (see the class docstring)."""
        if keyed is None:
            return None
        ids = self._ids
        key = keyed[0]
        stand_in = ids.get(key)
        if stand_in is None:
            stand_in = ids[key] = (len(ids),)
        return stand_in, keyed[1]

    def joint(self, conds: Sequence[Cond], dims: Sequence[Dim] = ()) -> AlphaKey | None:
        """The key of ``conds`` and ``dims`` together, or None when one of them has none."""
        if len(conds) == 1 and not dims:
            # one condition: its leaves' ids are their positions, 0, 1, ..., which its key
            # determines (the composed key would add nothing)
            k = self.cond(conds[0])
            return None if k is None else (1, 0, k[0])
        ids: dict[Atom, int] = {}
        out: list[object] = [len(conds), len(dims)]
        keys = self._keys
        for x in (*conds, *dims):
            k = keys.get(x, _MISSING)  # type: ignore[arg-type]
            if k is _MISSING:  # (a dimension never equals a condition: see __init__)
                k = self.dim(x) if isinstance(x, Dim) else self.cond(x)
            if k is None:
                return None
            key, leaves = k
            out.append(key)
            out.append(tuple([ids.setdefault(a, len(ids)) for a in leaves]))
        return tuple(out)


def _flat_key(write: Callable[[_FlatKeyer, _X], None], x: _X) -> _Keyed | None:
    """The flat key of ``x`` written by ``write`` and its leaves in order; None without one."""
    k = _FlatKeyer()
    try:
        write(k, x)
    except _NoKey:
        return None
    return k.result()
