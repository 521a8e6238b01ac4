"""Which facts can matter to a query, found without visiting the others: *dead* atoms.

The members are the session's facts (indices ``i >= 0``) and the divisor axioms (``~j < 0``),
each with its leaf atoms. A member is *killed* by one of its leaves ``y`` in witness mode ``m``
when it is true, by canonical forms, once ``y`` takes its witness constant (whatever the values of
its other atoms): the broadcast guard ``n == m or n == 1 or m == 1`` is killed by ``m`` (``m = 1``).
A leaf is *dead* when, in some mode, every member that mentions it is killed by it.

For a query over atoms ``xs``, a member killed by a dead leaf outside ``xs`` can be dropped: take
any model of the other members and of the query (or of its negation), and give every dead leaf
outside ``xs`` its witness. Every dropped member is then true whatever its other atoms are, and
no kept member and not the query mentions such a leaf (every member that mentions a dead leaf is
killed by it). So a query is proved (refuted) by all the members iff by the kept ones, and an
unsat core only ever names kept members.

:meth:`RelevanceIndex.cone` walks from the query's atoms through the kept members only: the
members killed by a dead leaf wait in ``killed_by`` lists and are looked at only when the query
mentions that leaf. A program that states a guard per block over a fresh symbol (``m_i``) and a
shared one (``n``) keeps each query's cone to its own block, instead of every block so far.

Deadness is maintained as members arrive: a leaf stays dead while each new member that mentions
it is killed by it in a common mode; otherwise it comes alive for good, and the members it killed
that no other dead leaf kills become live.

The session indexes its facts here, and the guard simplifier (:mod:`symshape.solver.simplify`)
its guards, to find the premises of an implication. Both use the helpers below: the leaves and
divisors of a condition, the witness constants, and :meth:`RelevanceIndex.kill_modes`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Union

from symshape.encoding.conds import Cond, cond_dims
from symshape.encoding.dims import AnyDim, Atom, Dim, DimVar, FloorDiv, Mod, Sym
from symshape.solver.alpha import AlphaKey

__all__ = [
    "Leaf",
    "RelevanceIndex",
    "BOTH_MODES",
    "leaves_of_dims",
    "cond_leaves",
    "cond_divisors",
    "witness",
    "groups_apart",
]

Leaf = Union[Sym, AnyDim, DimVar]

#: Both witness modes (bit ``1 << m`` for mode ``m``); a leaf no member mentions is dead in both.
BOTH_MODES = 3


def leaves_of_dims(dims: Iterable[Dim]) -> frozenset[Leaf]:
    """The leaf atoms of ``dims``, also those inside ``//``, ``%``, ``max`` and ``min`` atoms."""
    out: set[Leaf] = set()
    for d in dims:
        _add_leaves(d, out)
    return frozenset(out)


def _add_leaves(d: Dim, out: set[Leaf]) -> None:
    """Add the leaves of ``d`` to ``out`` in the order of :meth:`Dim.atoms` (without its
    generators: a dimension's atoms are mostly leaves)."""
    for m, _ in d.terms:
        for a, _ in m:
            cls = type(a)
            if cls is Sym or cls is AnyDim or cls is DimVar:
                out.add(a)  # type: ignore[arg-type]
            elif cls is FloorDiv or cls is Mod:
                _add_leaves(a.a, out)  # type: ignore[union-attr]
                _add_leaves(a.b, out)  # type: ignore[union-attr]
            else:
                for x in a.args:  # type: ignore[union-attr]
                    _add_leaves(x, out)


def cond_leaves(c: Cond) -> frozenset[Leaf]:
    """The leaf atoms of ``c`` (see :func:`leaves_of_dims`)."""
    return leaves_of_dims(cond_dims(c))


def cond_divisors(c: Cond) -> list[Dim]:
    """The non-constant divisors of ``c``'s ``//`` and ``%`` atoms, each once, in order of
    appearance (the Z3 encoder asserts each ``> 0`` as an axiom, unconditionally)."""
    out: list[Dim] = []
    for d in cond_dims(c):
        _add_divisors(d, out)
    return out


def _add_divisors(d: Dim, out: list[Dim]) -> None:
    """Add the divisors of ``d`` to ``out`` in the order of :meth:`Dim.atoms`."""
    for m, _ in d.terms:
        for a, _ in m:
            cls = type(a)
            if cls is FloorDiv or cls is Mod:
                b = a.b  # type: ignore[union-attr]
                if b.constant_value is None and b not in out:
                    out.append(b)
                _add_divisors(a.a, out)  # type: ignore[union-attr]
                _add_divisors(b, out)
            elif cls is not Sym and cls is not AnyDim and cls is not DimVar:
                for x in a.args:  # type: ignore[union-attr]
                    _add_divisors(x, out)


def witness(y: Leaf, mode: int) -> int:
    """A constant for atom ``y`` within its range: its least value (``mode`` 0), or 1 (``mode`` 1)
    when the range allows."""
    lo = y.min if isinstance(y, Sym) else y.least if isinstance(y, AnyDim) else 0
    if mode == 1 and lo <= 1 and (not isinstance(y, Sym) or y.max is None or y.max >= 1):
        return 1
    return lo


def groups_apart(members: Sequence[tuple[int, frozenset[Leaf]]], xs: frozenset[Leaf]) -> list[list[int]]:
    """The members (each with its leaves) grouped by the leaves outside ``xs`` they share,
    transitively (union-find); each group in the members' order, the groups by their first."""
    owner: dict[Leaf, int] = {}
    parent: dict[int, int] = {}

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, leaves in members:
        parent[i] = i
        for y in leaves:
            if y in xs:
                continue
            o = owner.setdefault(y, i)
            if o != i:
                ro, ri = find(o), find(i)
                if ro != ri:
                    parent[ri] = ro
    groups: dict[int, list[int]] = {}
    for i, _ in members:
        groups.setdefault(find(i), []).append(i)
    return list(groups.values())


class RelevanceIndex:
    """Members by leaf, with the dead leaves and the members they kill kept apart."""

    def __init__(self) -> None:
        self.leaves: dict[int, frozenset[Leaf]] = {}
        self.dead: dict[Leaf, int] = {}  # leaf -> modes in which it kills every member; 0: alive
        self.killers: dict[int, set[Leaf]] = {}  # member -> the dead leaves that kill it
        self.killed_by: dict[Leaf, set[int]] = {}  # dead leaf -> the members it kills
        self.live: dict[Leaf, list[int]] = {}  # leaf -> the members no dead leaf kills

    def add(self, member: int, leaves: frozenset[Leaf], kills: Mapping[Leaf, int]) -> None:
        """Add ``member`` over ``leaves``; ``kills[y]`` holds the modes in which ``y`` kills it."""
        self.leaves[member] = leaves
        dead = self.dead
        waking: list[Leaf] = []
        ks: set[Leaf] = set()
        for y in leaves:
            old = dead.get(y, BOTH_MODES)
            new = old & kills.get(y, 0)
            dead[y] = new
            if new:
                ks.add(y)
            elif old:
                waking.append(y)
        if waking:  # they come alive: the members they killed may become live (in leaf order)
            waking.sort(key=lambda a: a._key)
            for y in waking:
                for f in sorted(self.killed_by.pop(y, ())):
                    fk = self.killers[f]
                    fk.discard(y)
                    if not fk:
                        self._make_live(f)
        self.killers[member] = ks
        if ks:
            for y in ks:
                self.killed_by.setdefault(y, set()).add(member)
        else:
            self._make_live(member)

    def kill_modes(
        self,
        leaves: Iterable[Leaf],
        true_at: Callable[[Leaf, int], bool],
        key: Callable[[], tuple[AlphaKey, tuple[Atom, ...]] | None],
        memo: dict[tuple[AlphaKey, int, int], bool],
    ) -> dict[Leaf, int]:
        """The ``kills`` argument of :meth:`add` for a new member over ``leaves``: the modes, among
        those in which leaf ``y`` is still dead, where ``true_at(y, mode)`` (the member is true
        once ``y`` takes its witness). ``key()`` is the member's key up to renaming leaves
        (:class:`symshape.solver.alpha.AlphaMemo`), or None; ``memo`` keeps the answers by it, so
        a member that renames an earlier one is not tested again."""
        kills: dict[Leaf, int] = {}
        keyed = False
        k: tuple[AlphaKey, tuple[Atom, ...]] | None = None
        for y in leaves:  # (any order: each leaf is tested on its own)
            dead = self.dead.get(y, BOTH_MODES)
            if not dead:
                continue  # alive for good: whether y kills the member no longer matters
            if not keyed:
                keyed, k = True, key()
            mask = 0
            for mode in (0, 1):
                if not dead >> mode & 1:
                    continue
                ck = None if k is None else (k[0], k[1].index(y), mode)
                hit = None if ck is None else memo.get(ck)
                if hit is None:
                    hit = true_at(y, mode)
                    if ck is not None:
                        memo[ck] = hit
                if hit:
                    mask |= 1 << mode
            kills[y] = mask
        return kills

    def _make_live(self, member: int) -> None:
        for y in self.leaves[member]:
            self.live.setdefault(y, []).append(member)

    def cone(self, xs: Iterable[Leaf]) -> set[int]:
        """The members connected to the atoms ``xs`` through kept members (see the module
        docstring): every member not killed by a dead leaf outside ``xs``."""
        out = self.bounded_cone(xs, None)
        assert out is not None
        return out

    def bounded_cone(self, xs: Iterable[Leaf], limit: int | None) -> set[int] | None:
        """:meth:`cone`, or None as soon as it has more than ``limit`` members."""
        # (the walk's order does not matter: the cone is a set, and it outgrows ``limit`` or not)
        start = xs if type(xs) is frozenset else frozenset(xs)
        seen = set(start)
        todo = list(start)
        out: set[int] = set()
        live, killed_by, killers, leaves = self.live, self.killed_by, self.killers, self.leaves
        while todo:
            a = todo.pop()
            cands: Iterable[int] = live.get(a, ())
            if a in start:
                kb = killed_by.get(a)
                if kb:
                    cands = [*cands, *(f for f in kb if killers[f] <= start)]
            for f in cands:
                if f in out:
                    continue
                out.add(f)
                if limit is not None and len(out) > limit:
                    return None
                for y in leaves[f]:
                    if y not in seen:
                        seen.add(y)
                        todo.append(y)
        return out
