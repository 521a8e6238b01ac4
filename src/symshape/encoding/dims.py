"""Canonical dimension expressions.

A :class:`Dim` is an integer polynomial over *atoms* in one canonical form:

* atoms are symbols (:class:`Sym`, declared by the user), anonymous given dimensions (:class:`AnyDim`,
  the ``?`` of an annotation), unknowns created by the solver (:class:`DimVar`), and the
  non-polynomial operations :class:`FloorDiv`, :class:`Mod`, :class:`Max` and :class:`Min` whose
  arguments are themselves canonical;
* a monomial is a tuple of ``(atom, exponent)`` pairs sorted by the atoms' keys;
* a dimension is a tuple of ``(monomial, coefficient)`` pairs with non-zero coefficients, sorted by
  the monomials' keys; the constant term has the empty monomial.

Smart constructors (the arithmetic operators, :func:`floordiv`, :func:`mod`, :func:`dmax`,
:func:`dmin`) keep this form, so ``n*3*4`` and ``12*n`` are the same value, ``(12*n)//12`` is
``n``, ``x % 1`` is ``0`` and ``max(n, n)`` is ``n``. The hash is computed once. ``==`` is
structural on canonical forms, never raises and never calls Z3; deciding equalities that need
reasoning is the solver's job (:mod:`symshape.solver.session`).

Symbols and names. A symbol is its name and its range: ``dim("n")`` twice is one symbol, and it
prints as its name. ``dim("k")`` and ``dim("k", min=0)`` are two different symbols that print
alike, so a program must not mix them: as in JAX (one symbolic scope per exported program), one
name is one symbol in a program, and ``infer`` reports two symbols of one name as a
``duplicate-binding`` error naming both ranges (no guard like ``k == k`` can arise). ``dims("n n")``
is an error. Names are ASCII identifiers that are not Python keywords.

Bounds. Every walk over a dimension is bounded: composite atoms nest at most :data:`MAX_NESTING`
deep and exponents are at most :data:`MAX_EXPONENT`; :func:`~symshape.encoding.dim_parse.parse_dim`
(the text syntax ``str`` prints) is an iterative parser with limits on length, degree and size (a
``parse-error`` beyond them, never a hang).

Examples
--------
>>> n = dim("n")
>>> 12 * n == n * 3 * 4
True
>>> str((dim("h") - 1) // 2 + 1)
'(h - 1)//2 + 1'
>>> (12 * n).subs({n: 3})
Dim(36)
"""

from __future__ import annotations

import functools
import itertools
import keyword
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from numbers import Integral
from typing import Union

from symshape.errors import BAD_DIM, INVALID_ARGUMENT, NEGATIVE_DIM, SymshapeError
from symshape.views import Shown

__all__ = [
    "Dim",
    "DimLike",
    "Atom",
    "Sym",
    "AnyDim",
    "DimVar",
    "FloorDiv",
    "Mod",
    "Max",
    "Min",
    "dim",
    "dims",
    "const",
    "as_dim",
    "floordiv",
    "mod",
    "dmax",
    "dmin",
    "MAX_DEGREE",
    "MAX_EXPONENT",
    "MAX_TERMS",
    "check_nonnegative_constant",
    "fresh_dimvar",
    "fresh_any",
    "fresh_join",
    "MAX_NESTING",
    "bounds",
]

Key = tuple[object, ...]
Interval = tuple[float, float]
_INF = math.inf


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

    __slots__ = ("_key", "_hash", "depth")
    _key: Key
    _hash: int
    depth: int

    def _init(self, key: Key, args: Iterable[Dim] = ()) -> None:
        self._key = key
        self._hash = hash(key)
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
    """The ``?`` of an annotation: an anonymous given dimension (``>= 1``).

    Unnumbered (``id == 0``) ``?`` values are equal to each other; the solver replaces every
    occurrence by a freshly numbered one when a type enters it, so two ``?`` are never assumed
    equal. All print as ``?``.

    The join of differing dimensions (``If``/``Match`` branches, :func:`fresh_join`) is an
    ``AnyDim`` that remembers its *alternatives* ``alts``: it is one of them, depending on the
    branch taken. Its bounds are the hull of theirs, and a condition over it is required for each
    alternative (:func:`symshape.encoding.conds.expand_joins`), so no guard ever mentions it.
    """

    __slots__ = ("id", "alts")

    def __init__(self, id: int = 0, alts: tuple[Dim, ...] = ()) -> None:
        self.id = id
        self.alts = alts
        self._init((1, id), alts)


class DimVar(_AtomBase):
    """An unknown dimension created by the solver, printed ``?d<id>``; solved for."""

    __slots__ = ("id",)

    def __init__(self, id: int) -> None:
        self.id = id
        self._init((2, id))


class FloorDiv(_AtomBase):
    """``a // b`` that did not simplify; ``b`` is positive."""

    __slots__ = ("a", "b")

    def __init__(self, a: Dim, b: Dim) -> None:
        self.a = a
        self.b = b
        self._init((3, a._key, b._key), (a, b))


class Mod(_AtomBase):
    """``a % b`` that did not simplify; ``b`` is positive."""

    __slots__ = ("a", "b")

    def __init__(self, a: Dim, b: Dim) -> None:
        self.a = a
        self.b = b
        self._init((4, a._key, b._key), (a, b))


class Max(_AtomBase):
    """``max(*args)`` with at least two canonical, mutually undominated arguments."""

    __slots__ = ("args",)

    def __init__(self, args: tuple[Dim, ...]) -> None:
        self.args = args
        self._init((5, tuple(a._key for a in args)), args)


class Min(_AtomBase):
    """``min(*args)`` with at least two canonical, mutually undominated arguments."""

    __slots__ = ("args",)

    def __init__(self, args: tuple[Dim, ...]) -> None:
        self.args = args
        self._init((6, tuple(a._key for a in args)), args)


Atom = Union[Sym, AnyDim, DimVar, FloorDiv, Mod, Max, Min]
Mono = tuple[tuple[Atom, int], ...]
Terms = tuple[tuple[Mono, int], ...]

_dimvar_ids = itertools.count(1)
_any_ids = itertools.count(1)


def _mono_key(m: Mono) -> Key:
    return tuple((a._key, e) for a, e in m)


class Dim(Shown):
    """A dimension in canonical form. Build with :func:`dim`, :func:`const`, arithmetic."""

    __slots__ = ("terms", "_key", "_hash", "_str", "_hv")
    terms: Terms
    _key: Key
    _hash: int
    _str: str | None
    _hv: bool | None

    def __init__(self, terms: Terms) -> None:
        # Callers guarantee ``terms`` is canonical; use the smart constructors.
        self.terms = terms
        try:
            self._key = tuple((_mono_key(m), c) for m, c in terms)
        except (TypeError, ValueError, AttributeError):
            raise SymshapeError(
                BAD_DIM,
                f"Dim(...) takes canonical terms, got {terms!r}; build dimensions with ss.dim, "
                "ss.parse_dim and arithmetic",
            ) from None
        if not terms:
            self._hash = hash(0)
        elif len(terms) == 1 and not terms[0][0]:
            self._hash = hash(terms[0][1])
        else:
            self._hash = hash(self._key)
        self._str = None
        self._hv = None

    # -- identity -------------------------------------------------------------------------
    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Dim):
            return self is other or self._key == other._key
        if isinstance(other, Integral) and not isinstance(other, bool):
            c = self.constant_value
            return c is not None and c == int(other)
        return False

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    # -- inspection ------------------------------------------------------------------------
    @property
    def is_constant(self) -> bool:
        """True when the dimension has no atoms."""
        return not self.terms or (len(self.terms) == 1 and not self.terms[0][0])

    @property
    def constant_value(self) -> int | None:
        """The integer value of a constant dimension, else None."""
        if not self.terms:
            return 0
        if len(self.terms) == 1 and not self.terms[0][0]:
            return self.terms[0][1]
        return None

    @property
    def constant_term(self) -> int:
        """The constant part of the polynomial (``3`` for ``n + 3``)."""
        for m, c in self.terms:
            if not m:
                return c
        return 0

    @property
    def atom(self) -> Atom | None:
        """The atom when the dimension is exactly one atom with coefficient 1, else None."""
        if len(self.terms) == 1:
            m, c = self.terms[0]
            if c == 1 and len(m) == 1 and m[0][1] == 1:
                return m[0][0]
        return None

    @property
    def is_symbol(self) -> bool:
        return isinstance(self.atom, Sym)

    @property
    def symbols(self) -> frozenset[Dim]:
        """The given symbols (as dimensions) the expression mentions, also inside atoms."""
        return frozenset(_atom_dim(a) for a in self.atoms() if isinstance(a, (Sym, AnyDim)))

    @property
    def unknowns(self) -> frozenset[DimVar]:
        """The solver unknowns the expression mentions."""
        return frozenset(a for a in self.atoms() if isinstance(a, DimVar))

    @property
    def has_unknowns(self) -> bool:
        """True when a solver unknown occurs (cached)."""
        hv = self._hv
        if hv is None:
            hv = self._hv = any(isinstance(a, DimVar) for a in self.atoms())
        return hv

    def atoms(self) -> Iterator[Atom]:
        """Every atom, recursively (leaf atoms and the composite atoms that contain them)."""
        for m, _ in self.terms:
            for a, _ in m:
                yield a
                if isinstance(a, (FloorDiv, Mod)):
                    yield from a.a.atoms()
                    yield from a.b.atoms()
                elif isinstance(a, (Max, Min)):
                    for x in a.args:
                        yield from x.atoms()

    @property
    def degree(self) -> int:
        return max((sum(e for _, e in m) for m, _ in self.terms), default=0)

    def __int__(self) -> int:
        c = self.constant_value
        if c is None:
            raise SymshapeError(BAD_DIM, f"dimension {self} is not a constant")
        return c

    __index__ = __int__

    # -- arithmetic ------------------------------------------------------------------------
    def __add__(self, other: DimLike) -> Dim:
        return _add(self, as_dim(other))

    def __radd__(self, other: DimLike) -> Dim:
        return _add(as_dim(other), self)

    def __sub__(self, other: DimLike) -> Dim:
        return _add(self, _scale(as_dim(other), -1))

    def __rsub__(self, other: DimLike) -> Dim:
        return _add(as_dim(other), _scale(self, -1))

    def __neg__(self) -> Dim:
        return _scale(self, -1)

    def __pos__(self) -> Dim:
        return self

    def __mul__(self, other: DimLike) -> Dim:
        return _mul(self, as_dim(other))

    def __rmul__(self, other: DimLike) -> Dim:
        return _mul(as_dim(other), self)

    def __floordiv__(self, other: DimLike) -> Dim:
        return floordiv(self, other)

    def __rfloordiv__(self, other: DimLike) -> Dim:
        return floordiv(other, self)

    def __truediv__(self, other: object) -> Dim:
        raise _true_division(self, other, "/")

    def __rtruediv__(self, other: object) -> Dim:
        raise _true_division(other, self, "/")

    def __mod__(self, other: DimLike) -> Dim:
        return mod(self, other)

    def __rmod__(self, other: DimLike) -> Dim:
        return mod(other, self)

    def __pow__(self, exp: int) -> Dim:
        if not isinstance(exp, int) or isinstance(exp, bool) or exp < 0:
            raise SymshapeError(BAD_DIM, f"dimension exponent must be an int >= 0, got {exp!r}")
        if exp > MAX_EXPONENT:
            raise SymshapeError(BAD_DIM, f"dimension exponent {exp} is larger than {MAX_EXPONENT}")
        c = self.constant_value
        if c is not None:
            return const(c**exp)
        if self.degree * exp > MAX_DEGREE:
            raise SymshapeError(BAD_DIM, f"`({self})**{exp}` has a degree larger than {MAX_DEGREE}")
        out = ONE
        for _ in range(exp):
            out = _mul(out, self)
            if len(out.terms) > MAX_TERMS:
                raise SymshapeError(BAD_DIM, f"`({self})**{exp}` has more than {MAX_TERMS} terms")
        return out

    # -- substitution ----------------------------------------------------------------------
    def subs(self, mapping: Mapping[Dim | Atom | str, DimLike]) -> Dim:
        """Replace symbols (or unknowns) by dimensions or ints and re-simplify.

        Keys are symbol dimensions (``n``), atoms, or symbol names.
        """
        amap = _atom_map(mapping)
        if not amap:
            return self
        return _subst(self, amap)

    def evaluate(self, env: Mapping[Dim | Atom | str, int]) -> int:
        """The value at integer values for every symbol; raises if a symbol is left."""
        v = self.subs(env)
        c = v.constant_value
        if c is None:
            raise SymshapeError(BAD_DIM, f"no value given for {sorted(map(str, v.symbols))}")
        return c

    # -- printing --------------------------------------------------------------------------
    def __str__(self) -> str:
        s = self._str
        if s is None:
            s = self._str = _dim_str(self)
        return s

    def __repr__(self) -> str:
        return f"Dim({self})"

    def sort_key(self) -> Key:
        """A deterministic total order key (structural, not numeric)."""
        return self._key


DimLike = Union[Dim, int]


# ----------------------------------------------------------------------------------------------
# constructors


def _terms_from(acc: dict[Mono, int]) -> Dim:
    items = [(m, c) for m, c in acc.items() if c != 0]
    if len(items) > 1:
        items.sort(key=lambda mc: _mono_key(mc[0]))
    return Dim(tuple(items))


_CONSTS: dict[int, Dim] = {}


def const(value: int) -> Dim:
    """The constant dimension ``value`` (may be negative inside expressions)."""
    d = _CONSTS.get(value)
    if d is None:
        d = Dim(((((), value),)) if value != 0 else ())
        if -64 <= value <= 1024:
            _CONSTS[value] = d
    return d


ZERO = const(0)
ONE = const(1)


def _atom_dim(a: Atom) -> Dim:
    return Dim(((((a, 1),), 1),))



def _true_division(a: object, b: object, op: str) -> SymshapeError:
    """The error for ``a / b`` on dimensions: sizes are integers, so division is ``//``."""
    return SymshapeError(
        BAD_DIM,
        f"dimensions are integers: `{a} {op} {b}` has no dimension value; use `{a} // {b}` "
        "(floor division) for a size",
    )


def as_dim(x: object) -> Dim:
    """Coerce an int or a :class:`Dim` to a :class:`Dim`; anything else is a ``bad-dim`` error."""
    if type(x) is int:  # the common case, without the abstract-base-class check below
        d = _CONSTS.get(x)
        return d if d is not None else const(x)
    if isinstance(x, Dim):
        return x
    if isinstance(x, Integral) and not isinstance(x, bool):
        return const(int(x))
    raise SymshapeError(BAD_DIM, f"expected a dimension (int or Dim), got {type(x).__name__} {x!r}")


_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        raise SymshapeError(
            INVALID_ARGUMENT, f"a symbol name must be an ASCII identifier, got {name!r}"
        )
    if keyword.iskeyword(name):
        raise SymshapeError(INVALID_ARGUMENT, f"a symbol name must not be a Python keyword, got {name!r}")
    return name


def dim(name: str, min: int = 1, max: int | None = None) -> Dim:
    """Declare a given symbol ``name`` with ``min <= name <= max`` (``min`` defaults to 1).

    A symbol *is* its name and range: ``dim("n")`` twice is one symbol. The same name with
    another range is another symbol, which prints alike; a program must not mix them
    (``infer`` reports a ``duplicate-binding`` error naming both declarations).

    >>> b = dim("b", min=0)
    >>> str(b + 1)
    'b + 1'
    """
    _check_name(name)
    if not isinstance(min, int) or isinstance(min, bool) or min < 0:
        raise SymshapeError(INVALID_ARGUMENT, f"min of symbol {name} must be an int >= 0")
    if max is not None and (not isinstance(max, int) or isinstance(max, bool) or max < min):
        raise SymshapeError(INVALID_ARGUMENT, f"max of symbol {name} must be an int >= min")
    return _atom_dim(Sym(name, min, max))


def dims(names: str, min: int = 1, max: int | None = None) -> tuple[Dim, ...]:
    """Declare several symbols at once: ``n, s = dims("n s")`` (commas also separate).

    A name given twice (``dims("n n")``) is an ``invalid-argument`` error.
    """
    if not isinstance(names, str):
        raise SymshapeError(
            INVALID_ARGUMENT, f"dims takes a string of names (\"n s\"), got {type(names).__name__} {names!r}"
        )
    parts = names.replace(",", " ").split()
    seen: set[str] = set()
    for x in parts:
        if x in seen:
            raise SymshapeError(INVALID_ARGUMENT, f"dims({names!r}) declares {x!r} twice")
        seen.add(x)
    return tuple(dim(x, min, max) for x in parts)


def fresh_dimvar() -> Dim:
    """A new solver unknown."""
    return _atom_dim(DimVar(next(_dimvar_ids)))


def fresh_any() -> Dim:
    """A new numbered anonymous given dimension (prints as ``?``)."""
    return _atom_dim(AnyDim(next(_any_ids)))


def fresh_join(alts: Iterable[Dim]) -> Dim:
    """The join of differing dimensions: a new ``?`` that is one of ``alts`` (see :class:`AnyDim`).

    Alternatives that are joins themselves are flattened; equal ones are merged.

    >>> n = dim("n")
    >>> j = fresh_join([n, const(4)])
    >>> str(j), bounds(j)
    ('?', (1, inf))
    """
    flat: dict[Key, Dim] = {}
    for d in alts:
        at = d.atom
        if isinstance(at, AnyDim) and at.alts:
            for x in at.alts:
                flat.setdefault(x._key, x)
        else:
            flat.setdefault(d._key, d)
    return _atom_dim(AnyDim(next(_any_ids), tuple(flat.values())))


# ----------------------------------------------------------------------------------------------
# polynomial arithmetic


def _add(a: Dim, b: Dim) -> Dim:
    if not b.terms:
        return a
    if not a.terms:
        return b
    acc: dict[Mono, int] = dict(a.terms)
    for m, c in b.terms:
        acc[m] = acc.get(m, 0) + c
    return _terms_from(acc)


def _scale(a: Dim, k: int) -> Dim:
    if k == 1:
        return a
    if k == 0:
        return ZERO
    return Dim(tuple((m, c * k) for m, c in a.terms))


def _mono_mul(m1: Mono, m2: Mono) -> Mono:
    if not m1:
        return m2
    if not m2:
        return m1
    acc: dict[Atom, int] = dict(m1)
    for a, e in m2:
        acc[a] = acc.get(a, 0) + e
    return tuple(sorted(acc.items(), key=lambda ae: ae[0]._key))


@functools.lru_cache(maxsize=1 << 16)
def _mul(a: Dim, b: Dim) -> Dim:
    # memoized: canonical dimensions are immutable and hash once, and models multiply the same
    # shapes over and over (every reshape and flatten takes products)
    ca, cb = a.constant_value, b.constant_value
    if cb is not None:
        return _scale(a, cb)
    if ca is not None:
        return _scale(b, ca)
    acc: dict[Mono, int] = {}
    for m1, c1 in a.terms:
        for m2, c2 in b.terms:
            m = _mono_mul(m1, m2)
            acc[m] = acc.get(m, 0) + c1 * c2
    return _terms_from(acc)


def _content(d: Dim) -> int:
    """The gcd of the coefficients."""
    g = 0
    for _, c in d.terms:
        g = math.gcd(g, c)
    return g


def _mono_divides(div: Mono, m: Mono) -> Mono | None:
    """``m / div`` when ``div`` divides ``m``, else None."""
    acc = dict(m)
    for a, e in div:
        have = acc.get(a, 0)
        if have < e:
            return None
        if have == e:
            del acc[a]
        else:
            acc[a] = have - e
    return tuple(sorted(acc.items(), key=lambda ae: ae[0]._key))


def _exact_div(a: Dim, b: Dim) -> Dim | None:
    """``a / b`` when ``b`` is a single term dividing every term of ``a`` exactly."""
    if len(b.terms) != 1:
        return None
    bm, bc = b.terms[0]
    if bc <= 0:
        return None
    acc: dict[Mono, int] = {}
    for m, c in a.terms:
        if c % bc:
            return None
        q = _mono_divides(bm, m)
        if q is None:
            return None
        acc[q] = acc.get(q, 0) + c // bc
    return _terms_from(acc)


def floordiv(a: DimLike, b: DimLike) -> Dim:
    """``a // b`` (Python floor division; ``b`` must be positive) in canonical form."""
    a, b = as_dim(a), as_dim(b)
    cb = b.constant_value
    if cb is not None:
        if cb <= 0:
            raise SymshapeError(BAD_DIM, f"division of {a} by non-positive {cb}")
        if cb == 1:
            return a
        ca = a.constant_value
        if ca is not None:
            return const(ca // cb)
        q: dict[Mono, int] = {}
        r: dict[Mono, int] = {}
        for m, c in a.terms:
            if c % cb == 0:
                q[m] = c // cb
            else:
                r[m] = c
        quot = _terms_from(q)
        rest = _terms_from(r)
        if not rest.terms:
            return quot
        rc = rest.constant_value
        if rc is not None:
            return _add(quot, const(rc // cb))
        lo, hi = bounds(rest)
        if lo >= 0 and hi < cb:
            return quot
        inner = rest.atom
        if isinstance(inner, FloorDiv) and inner.b.constant_value is not None:
            return _add(quot, floordiv(inner.a, inner.b.constant_value * cb))
        g = math.gcd(_content(rest), cb)
        if g > 1:
            # (g*x)//(g*c) == x//c
            rest, b = _divide_coefficients(rest, g), const(cb // g)
        return _add(quot, _atom_dim(FloorDiv(rest, b)))
    if not a.terms:
        return ZERO
    if a == b:
        return ONE
    ex = _exact_div(a, b)
    if ex is not None:
        return ex
    red = _cancel_common_factor(a, b)
    if red is not None:
        return floordiv(*red)
    return _atom_dim(FloorDiv(a, b))


def _divide_coefficients(d: Dim, g: int) -> Dim:
    return Dim(tuple((m, c // g) for m, c in d.terms))


def _cancel_common_factor(a: Dim, b: Dim) -> tuple[Dim, Dim] | None:
    """``(a', b')`` with ``a == f*a'`` and ``b == f*b'`` for the common factor ``f`` of ``a``'s terms
    and the single-term divisor ``b``, when ``f >= 1`` for every value of the symbols; else None.

    Then ``a // b == a' // b'``: both are the floor of the same rational, and ``b' > 0`` because
    ``b > 0`` and ``f > 0``. (``a*b*c*d // (2*a)`` is ``b*c*d // 2``.) A factor that may be 0 is
    kept: there the division is by zero, which the original form (and its Z3 axiom) rules out.
    """
    if len(b.terms) != 1:
        return None
    bm, bc = b.terms[0]
    if bc <= 0:
        return None
    # the monomial gcd: atoms common to every term, at their lowest exponent
    common: dict[Atom, int] = dict(bm)
    for m, _ in a.terms:
        if not common:
            break
        have = dict(m)
        for at in list(common):
            e = have.get(at, 0)
            if e == 0:
                del common[at]
            elif e < common[at]:
                common[at] = e
    g = math.gcd(_content(a), bc)
    if not common and g <= 1:
        return None
    if common:
        fm: Mono = tuple(sorted(common.items(), key=lambda ae: ae[0]._key))
        if bounds(Dim(((fm, 1),)))[0] < 1:
            if g <= 1:
                return None
            fm = ()
    else:
        fm = ()
    f = Dim(((fm, g),)) if fm else const(g)
    na = _exact_div(a, f)
    nb = _exact_div(b, f)
    if na is None or nb is None:  # pragma: no cover - f divides both by construction
        return None
    return na, nb


def mod(a: DimLike, b: DimLike) -> Dim:
    """``a % b`` (Python semantics; ``b`` must be positive) in canonical form."""
    a, b = as_dim(a), as_dim(b)
    cb = b.constant_value
    if cb is not None:
        if cb <= 0:
            raise SymshapeError(BAD_DIM, f"modulo of {a} by non-positive {cb}")
        if cb == 1:
            return ZERO
        ca = a.constant_value
        if ca is not None:
            return const(ca % cb)
        rest = _terms_from({m: c % cb for m, c in a.terms})
        rc = rest.constant_value
        if rc is not None:
            return const(rc % cb)
        lo, hi = bounds(rest)
        if lo >= 0 and hi < cb:
            return rest
        return _atom_dim(Mod(rest, b))
    if not a.terms or a == b or _exact_div(a, b) is not None:
        return ZERO
    return _atom_dim(Mod(a, b))


def _minmax(args: Iterable[DimLike], is_max: bool) -> Dim:
    flat: list[Dim] = []
    kind = Max if is_max else Min
    for x in args:
        d = as_dim(x)
        at = d.atom
        if isinstance(at, kind):
            flat.extend(at.args)
        else:
            flat.append(d)
    if not flat:
        raise SymshapeError(INVALID_ARGUMENT, f"{'max' if is_max else 'min'} of no dimensions")
    uniq: dict[Key, Dim] = {}
    consts: list[int] = []
    for d in flat:
        c = d.constant_value
        if c is not None:
            consts.append(c)
        else:
            uniq.setdefault(d._key, d)
    cands = list(uniq.values())
    if consts:
        cands.append(const(max(consts) if is_max else min(consts)))
    # drop arguments dominated by another one (decided from interval bounds of the difference)
    keep: list[Dim] = []
    for i, d in enumerate(cands):
        dominated = False
        for j, e in enumerate(cands):
            if i == j:
                continue
            lo, hi = bounds(_add(e, _scale(d, -1)))
            if (is_max and lo >= 0) or (not is_max and hi <= 0):
                # e >= d (max) or e <= d (min): d is dominated, unless they tie and j comes later
                if lo == hi == 0 and j > i:
                    continue
                dominated = True
                break
        if not dominated:
            keep.append(d)
    if len(keep) == 1:
        return keep[0]
    keep.sort(key=lambda d: d._key)
    return _atom_dim(kind(tuple(keep)))


def dmax(*args: DimLike) -> Dim:
    """``max`` of dimensions in canonical form (nested maxima flattened, dominated args dropped)."""
    return _minmax(args, True)


def dmin(*args: DimLike) -> Dim:
    """``min`` of dimensions in canonical form."""
    return _minmax(args, False)


# ----------------------------------------------------------------------------------------------
# interval bounds (a cheap decision procedure used by the smart constructors and the fast path)


def _imul(x: Interval, y: Interval) -> Interval:
    def m(p: float, q: float) -> float:
        return 0.0 if p == 0 or q == 0 else p * q

    cands = (m(x[0], y[0]), m(x[0], y[1]), m(x[1], y[0]), m(x[1], y[1]))
    return (min(cands), max(cands))


def _ipow(x: Interval, e: int) -> Interval:
    out: Interval = (1, 1)
    for _ in range(e):
        out = _imul(out, x)
    if e % 2 == 0 and x[0] < 0 < x[1]:
        out = (0, out[1])
    return out


def _atom_bounds(a: Atom) -> Interval:
    if isinstance(a, Sym):
        return (a.min, _INF if a.max is None else a.max)
    if isinstance(a, AnyDim):
        if a.alts:
            bs = [bounds(x) for x in a.alts]
            return (min(b[0] for b in bs), max(b[1] for b in bs))
        return (1, _INF)
    if isinstance(a, DimVar):
        return (0, _INF)
    if isinstance(a, FloorDiv):
        la, ha = bounds(a.a)
        lb, hb = bounds(a.b)
        if lb <= 0:
            return (-_INF, _INF)
        cands = [p / q for p in (la, ha) for q in (lb, hb) if not (math.isinf(p) and math.isinf(q))]
        lo = min(cands) if cands else -_INF
        hi = max(cands) if cands else _INF
        return (math.floor(lo) if not math.isinf(lo) else lo, math.floor(hi) if not math.isinf(hi) else hi)
    if isinstance(a, Mod):
        la, ha = bounds(a.a)
        lb, hb = bounds(a.b)
        if lb <= 0:
            return (-_INF, _INF)
        top = hb - 1
        if la >= 0:
            top = min(top, ha)
        return (0, top)
    if isinstance(a, Max):
        bs = [bounds(x) for x in a.args]
        return (max(b[0] for b in bs), max(b[1] for b in bs))
    bs = [bounds(x) for x in a.args]
    return (min(b[0] for b in bs), min(b[1] for b in bs))


def bounds(d: Dim) -> Interval:
    """Interval bounds ``(lo, hi)`` of ``d`` from the symbols' declared ranges (may be infinite)."""
    lo: float = 0
    hi: float = 0
    for m, c in d.terms:
        iv: Interval = (1, 1)
        for a, e in m:
            iv = _imul(iv, _ipow(_atom_bounds(a), e))
        iv = _imul(iv, (c, c))
        lo += iv[0]
        hi += iv[1]
    return (lo, hi)


# ----------------------------------------------------------------------------------------------
# substitution


def _atom_map(mapping: Mapping[Dim | Atom | str, DimLike]) -> dict[object, Dim]:
    if not isinstance(mapping, Mapping):
        raise SymshapeError(
            INVALID_ARGUMENT,
            f"a substitution is a mapping of symbols to dimensions, got {type(mapping).__name__} {mapping!r}",
        )
    out: dict[object, Dim] = {}
    for k, v in mapping.items():
        val = as_dim(v)
        if isinstance(k, Dim):
            a = k.atom
            if a is None:
                raise SymshapeError(INVALID_ARGUMENT, f"cannot substitute for expression {k}")
            out[a] = val
        elif isinstance(k, str):
            out[k] = val
        elif isinstance(k, _AtomBase):
            out[k] = val
        else:
            raise SymshapeError(INVALID_ARGUMENT, f"cannot substitute for {k!r}")
    return out


def _subst_atom(a: Atom, amap: Mapping[object, Dim]) -> Dim:
    hit = amap.get(a)
    if hit is not None:
        return hit
    if isinstance(a, Sym):
        by_name = amap.get(a.name)
        return by_name if by_name is not None else _atom_dim(a)
    if isinstance(a, (AnyDim, DimVar)):
        return _atom_dim(a)
    if isinstance(a, FloorDiv):
        return floordiv(_subst(a.a, amap), _subst(a.b, amap))
    if isinstance(a, Mod):
        return mod(_subst(a.a, amap), _subst(a.b, amap))
    if isinstance(a, Max):
        return dmax(*(_subst(x, amap) for x in a.args))
    return dmin(*(_subst(x, amap) for x in a.args))


def _subst(d: Dim, amap: Mapping[object, Dim]) -> Dim:
    out = ZERO
    changed = False
    for m, c in d.terms:
        t = const(c)
        for a, e in m:
            r = _subst_atom(a, amap)
            if r.atom is not a:
                changed = True
            for _ in range(e):
                t = _mul(t, r)
        out = _add(out, t)
    return out if changed else d


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


def check_nonnegative_constant(d: Dim, what: str = "dimension") -> None:
    """Raise ``negative-dim`` for a negative constant (used when a shape is constructed)."""
    c = d.constant_value
    if c is not None and c < 0:
        raise SymshapeError(NEGATIVE_DIM, f"{what} {c} is negative")
