"""The atoms of a dimension (symbols, unknowns, and ``//``, ``%``, ``max``, ``min`` that did not
simplify), the monomials built from them, and their printed form.

A monomial is a tuple of ``(atom, exponent)`` pairs sorted by the atoms' keys; the helpers here
work on monomials and term tuples only and never build a :class:`~symshape.encoding.dims.Dim`
(that is :mod:`symshape.encoding.dim_expr`'s job).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Union

from symshape.errors import BAD_DIM, SymshapeError

if TYPE_CHECKING:
    from symshape.encoding.dim_expr import Dim

__all__ = [
    "MAX_DEGREE",
    "MAX_EXPONENT",
    "MAX_NESTING",
    "MAX_TERMS",
    "AnyDim",
    "Atom",
    "DimVar",
    "FloorDiv",
    "Key",
    "Max",
    "Min",
    "Mod",
    "Mono",
    "Sym",
    "Terms",
    "iter_atoms",
    "terms_have_unknowns",
]

Key = tuple[object, ...]

MAX_EXPONENT = 64
"""The largest exponent of ``**`` (in :meth:`Dim.__pow__` and in parsed text)."""
MAX_DEGREE = 64
"""The largest degree of a power (``**``) or a parsed polynomial."""
MAX_TERMS = 10_000
"""The most terms a power or a parsed product may have."""
MAX_NESTING = 64
"""How deeply ``//``, ``%``, ``max``, ``min`` (and joins) may nest inside one dimension."""


def _dim_depth(d: Dim) -> int:
    """The nesting depth of the composite atoms in ``d`` (0 for a polynomial over leaves)."""
    depth = 0
    for m, _ in d.terms:
        for a, _ in m:
            if a.depth > depth:
                depth = a.depth
    return depth


class _AtomBase:
    """Common machinery: a sort key that determines identity, a cached hash, the nesting depth
    (0 for leaves; composite atoms deeper than :data:`MAX_NESTING` are a ``bad-dim`` error, which
    bounds every recursive walk over a dimension)."""

    __slots__ = ("_key", "_hash", "depth", "_mono1")
    _key: Key
    _hash: int
    depth: int
    _mono1: Key  # the key of the monomial ``self**1``, shared by every dimension that has it

    def _init(self, key: Key, args: Iterable[Dim] = ()) -> None:
        self._key = key
        self._hash = hash(key)
        self._mono1 = ((key, 1),)
        depth = 0
        for d in args:
            k = _dim_depth(d) + 1
            if k > depth:
                depth = k
        if depth > MAX_NESTING:
            raise SymshapeError(
                BAD_DIM, f"dimension nested too deeply (more than {MAX_NESTING} levels of //, %, max, min)"
            )
        self.depth = depth

    def __hash__(self) -> int:
        return self._hash

    def __getstate__(self) -> dict[str, object]:
        # every slot but the hash, made again when unpickled (a string's hash differs between
        # processes, so a stored hash would break dict lookups there)
        names = (n for c in type(self).__mro__ for n in getattr(c, "__slots__", ()))
        return {n: getattr(self, n) for n in names if n != "_hash" and hasattr(self, n)}

    def __setstate__(self, state: dict[str, object]) -> None:
        for n, v in state.items():
            object.__setattr__(self, n, v)
        self._hash = hash(self._key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _AtomBase) and self._key == other._key

    def __repr__(self) -> str:
        return f"{type(self).__name__}({_atom_str(self)})"  # type: ignore[arg-type]


class Sym(_AtomBase):
    """A given symbol: the program must type-check for all its values in ``[min, max]``."""

    __slots__ = ("name", "min", "max")

    def __init__(self, name: str, min: int = 1, max: int | None = None) -> None:
        self.name = name
        self.min = min
        self.max = max
        self._init((0, name, min, -1 if max is None else max))


class AnyDim(_AtomBase):
    """The ``?`` of an annotation: an anonymous given dimension (``>= 1``); a ``?`` a relation
    gives for a size only the run decides (a slice's length from bounds not known, ...) may be 0:
    its ``least`` is 0.

    Unnumbered (``id == 0``) ``?`` values are equal to each other; the solver replaces every
    occurrence by a freshly numbered one when a type enters it, so two ``?`` are never assumed
    equal. All print as ``?``.

    The join of differing dimensions (``If``/``Match`` branches, :func:`fresh_join`) is an
    ``AnyDim`` that remembers its *alternatives* ``alts``: it is one of them, depending on the
    branch taken. Its bounds are the hull of theirs, and a condition over it is required for each
    alternative (:func:`symshape.encoding.conds.expand_joins`), so no guard ever mentions it.
    """

    __slots__ = ("id", "alts", "least")

    def __init__(self, id: int = 0, alts: tuple[Dim, ...] = (), least: int = 1) -> None:
        self.id = id
        self.alts = alts
        self.least = least  # (not in the key: numbered ones are unique, the unnumbered one is >= 1)
        self._init((1, id), alts)


class DimVar(_AtomBase):
    """An unknown dimension created by the solver, printed ``?d<id>``; solved for."""

    __slots__ = ("id",)

    def __init__(self, id: int) -> None:
        self.id = id
        self._init((2, id))


class _Binary(_AtomBase):
    """``a <op> b`` that did not simplify (``b`` is positive); the subclass's tag orders it."""

    __slots__ = ("a", "b")
    _TAG = 0

    def __init__(self, a: Dim, b: Dim) -> None:
        self.a = a
        self.b = b
        self._init((self._TAG, a._key, b._key), (a, b))


class FloorDiv(_Binary):
    """``a // b`` that did not simplify; ``b`` is positive."""

    __slots__ = ()
    _TAG = 3


class Mod(_Binary):
    """``a % b`` that did not simplify; ``b`` is positive."""

    __slots__ = ()
    _TAG = 4


class _Extremum(_AtomBase):
    """``max`` or ``min`` of at least two canonical, mutually undominated arguments."""

    __slots__ = ("args",)
    _TAG = 0

    def __init__(self, args: tuple[Dim, ...]) -> None:
        self.args = args
        self._init((self._TAG, tuple(a._key for a in args)), args)


class Max(_Extremum):
    """``max(*args)`` with at least two canonical, mutually undominated arguments."""

    __slots__ = ()
    _TAG = 5


class Min(_Extremum):
    """``min(*args)`` with at least two canonical, mutually undominated arguments."""

    __slots__ = ()
    _TAG = 6


Atom = Union[Sym, AnyDim, DimVar, FloorDiv, Mod, Max, Min]
Mono = tuple[tuple[Atom, int], ...]
Terms = tuple[tuple[Mono, int], ...]


def iter_atoms(terms: Terms) -> Iterator[Atom]:
    """Every atom of a dimension's terms, recursively (leaf atoms and the composite atoms that
    contain them)."""
    for m, _ in terms:
        for a, _ in m:
            yield a
            if isinstance(a, _Binary):
                yield from iter_atoms(a.a.terms)
                yield from iter_atoms(a.b.terms)
            elif isinstance(a, _Extremum):
                for x in a.args:
                    yield from iter_atoms(x.terms)


def terms_have_unknowns(terms: Terms) -> bool:
    """Whether a solver unknown occurs in a dimension's ``terms``, at any depth (an atom that
    :func:`iter_atoms` would yield), reading the cached ``has_unknowns`` of each dimension inside
    a composite atom."""
    for m, _ in terms:
        for a, _ in m:
            cls = type(a)
            if cls is DimVar:
                return True
            if cls is FloorDiv or cls is Mod:
                if a.a.has_unknowns or a.b.has_unknowns:  # type: ignore[union-attr]
                    return True
            elif cls is Max or cls is Min:
                for x in a.args:  # type: ignore[union-attr]
                    if x.has_unknowns:
                        return True
    return False


def _mono_key(m: Mono) -> Key:
    if len(m) == 1 and m[0][1] == 1:
        return m[0][0]._mono1
    return tuple([(a._key, e) for a, e in m])


# ----------------------------------------------------------------------------------------------
# printing


def _print_order(d: Dim) -> list[tuple[Mono, int]]:
    return sorted(
        d.terms,
        key=lambda mc: (0 if mc[0] else 1, -sum(e for _, e in mc[0]), _mono_key(mc[0])),
    )


def _operand(d: Dim) -> str:
    """``d`` as an operand of ``//`` or ``%`` on the left: parenthesized unless one product."""
    s = str(d)
    if len(d.terms) > 1 or (d.terms and d.terms[0][1] < 0):
        return f"({s})"
    return s


def _divisor(d: Dim) -> str:
    s = str(d)
    if d.is_constant and d.terms and d.terms[0][1] > 0:
        return s
    if d.atom is not None and isinstance(d.atom, (Sym, AnyDim, DimVar, Max, Min)):
        return s
    return f"({s})"


def _atom_str(a: Atom) -> str:
    if isinstance(a, Sym):
        return a.name
    if isinstance(a, AnyDim):
        return "?"
    if isinstance(a, DimVar):
        return f"?d{a.id}"
    if isinstance(a, FloorDiv):
        return f"{_operand(a.a)}//{_divisor(a.b)}"
    if isinstance(a, Mod):
        return f"{_operand(a.a)} % {_divisor(a.b)}"
    name = "max" if isinstance(a, Max) else "min"
    return f"{name}({', '.join(str(x) for x in a.args)})"


def _mono_str(m: Mono, alone: bool) -> str:
    parts = []
    for a, e in m:
        s = _atom_str(a)
        if isinstance(a, (FloorDiv, Mod)) and (not alone or e != 1 or len(m) > 1):
            s = f"({s})"
        if e != 1:
            s = f"{s}**{e}"
        parts.append(s)
    return "*".join(parts)


def _dim_str(d: Dim) -> str:
    if not d.terms:
        return "0"
    out: list[str] = []
    for i, (m, c) in enumerate(_print_order(d)):
        neg = c < 0
        ac = -c if neg else c
        if not m:
            body = str(ac)
        elif ac == 1:
            body = _mono_str(m, alone=not (neg and i == 0))
        else:
            body = f"{ac}*{_mono_str(m, alone=False)}"
        if i == 0:
            out.append(f"-{body}" if neg else body)
        else:
            out.append(f" - {body}" if neg else f" + {body}")
    return "".join(out)
