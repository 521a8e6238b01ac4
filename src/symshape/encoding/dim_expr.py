"""The :class:`Dim` class and its canonical arithmetic: constants, the polynomial operations, the
smart constructors :func:`floordiv`, :func:`mod`, :func:`dmax`, :func:`dmin`, and substitution
(see :mod:`symshape.encoding.dims` for the canonical form)."""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Iterator, Mapping
from numbers import Integral
from typing import Union

from symshape.encoding.arguments import check_mapping, true_division_error
from symshape.encoding.dim_atoms import (
    MAX_DEGREE,
    MAX_EXPONENT,
    MAX_TERMS,
    AnyDim,
    Atom,
    DimVar,
    FloorDiv,
    Key,
    Max,
    Min,
    Mod,
    Mono,
    Sym,
    Terms,
    _AtomBase,
    _dim_str,
    _mono_key,
    iter_atoms,
    terms_have_unknowns,
)
from symshape.encoding.dim_bounds import bounds
from symshape.encoding.dim_monos import cancel_mono_factor, content, exact_quotient, mono_mul, split_multiples
from symshape.encoding.dim_polys import cancel_poly_factor, drop_inner_mods, unfloor
from symshape.errors import BAD_DIM, INVALID_ARGUMENT, SymshapeError
from symshape.views import Shown

__all__ = [
    "ONE",
    "ZERO",
    "Dim",
    "DimLike",
    "as_dim",
    "const",
    "dmax",
    "dmin",
    "floordiv",
    "mod",
]


class Dim(Shown):
    """A dimension in canonical form. Build with :func:`dim`, :func:`const`, arithmetic."""

    __slots__ = ("terms", "_key", "_hash", "_str", "_hv", "_bounds", "_nc", "_cv")
    terms: Terms
    _key: Key
    _hash: int
    _nc: bool  # a nonnegative constant (what a tensor type's constructor checks of each dimension)
    _cv: int | None  # the value of a constant, else None (``constant_value``)
    _str: str | None
    _hv: bool | None
    _bounds: tuple[float, float] | None  # memo of :func:`~symshape.encoding.dim_bounds.bounds`

    def __init__(self, terms: Terms) -> None:
        # Callers guarantee ``terms`` is canonical; use the smart constructors.
        self.terms = terms
        try:
            self._key = tuple([(_mono_key(m), c) for m, c in terms])
        except (TypeError, ValueError, AttributeError):
            raise SymshapeError(
                BAD_DIM,
                f"Dim(...) takes canonical terms, got {terms!r}; build dimensions with ss.dim, "
                "ss.parse_dim and arithmetic",
            ) from None
        if not terms:
            self._hash = hash(0)
            self._nc = True
            self._cv = 0
        elif len(terms) == 1 and not terms[0][0]:
            c = terms[0][1]
            self._hash = hash(c)
            self._nc = c >= 0
            self._cv = c
        else:
            self._hash = hash(self._key)
            self._nc = False
            self._cv = None
        self._str = None
        self._hv = None
        self._bounds = None

    # -- identity -------------------------------------------------------------------------
    def __hash__(self) -> int:
        return self._hash

    def __getstate__(self) -> Terms:
        # only the terms: the key and hash are made again when unpickled (a string's hash differs
        # between processes, so a stored hash would break dict lookups there)
        return self.terms

    def __setstate__(self, terms: Terms) -> None:
        Dim.__init__(self, terms)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is Dim or isinstance(other, Dim):
            return self is other or self._key == other._key
        if type(other) is int or (isinstance(other, Integral) and not isinstance(other, bool)):
            # (a plain int first: the abstract-base-class check costs more than the comparison)
            c = self._cv
            return c is not None and c == int(other)
        return False

    def __ne__(self, other: object) -> bool:
        if other.__class__ is Dim:  # (the common case without a second call)
            return self is not other and self._key != other._key
        return not self.__eq__(other)

    # -- inspection ------------------------------------------------------------------------
    @property
    def is_constant(self) -> bool:
        """True when the dimension has no atoms."""
        return self._cv is not None

    @property
    def constant_value(self) -> int | None:
        """The integer value of a constant dimension, else None."""
        return self._cv

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
            hv = self._hv = terms_have_unknowns(self.terms)
        return hv

    def atoms(self) -> Iterator[Atom]:
        """Every atom, recursively (leaf atoms and the composite atoms that contain them)."""
        return iter_atoms(self.terms)

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
        if type(other) is int:  # ``n - 1``: add the interned constant ``-1``
            return _add(self, as_dim(-other))
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
        raise true_division_error(self, other)

    def __rtruediv__(self, other: object) -> Dim:
        raise true_division_error(other, self)

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
            m = mono_mul(m1, m2)
            acc[m] = acc.get(m, 0) + c1 * c2
    return _terms_from(acc)


def _exact_div(a: Dim, b: Dim) -> Dim | None:
    """``a / b`` when ``b`` is a single term dividing every term of ``a`` exactly."""
    if len(b.terms) != 1:
        return None
    acc = exact_quotient(a.terms, *b.terms[0])
    return None if acc is None else _terms_from(acc)


def floordiv(a: DimLike, b: DimLike) -> Dim:
    """``a // b`` (Python floor division; ``b`` must be positive) in canonical form."""
    return _divide(as_dim(a), as_dim(b), True)


def mod(a: DimLike, b: DimLike) -> Dim:
    """``a % b`` (Python semantics; ``b`` must be positive) in canonical form."""
    return _divide(as_dim(a), as_dim(b), False)


def _divide(a: Dim, b: Dim, floor: bool) -> Dim:
    """``a // b`` when ``floor``, else ``a % b``: constants fold, a constant divisor splits ``a``'s
    terms, an exact divisor divides, and a common factor cancels (:func:`_cancel_factor`)."""
    cb = b.constant_value
    if cb is not None:
        if cb <= 0:
            raise SymshapeError(BAD_DIM, f"{'division' if floor else 'modulo'} of {a} by non-positive {cb}")
        ca = a.constant_value
        if ca is not None:
            return const(ca // cb if floor else ca % cb)
        if cb == 1:
            return a if floor else ZERO
        return _floordiv_by(a, cb) if floor else _mod_by(a, b, cb)
    if not a.terms:
        return ZERO
    ex = ONE if a == b else _exact_div(a, b)
    if ex is not None:
        return ex if floor else ZERO
    un = unfloor(a.terms, b.terms, _exact_floor)
    if un is not None:
        k, ua, ub = un
        q = _divide(_terms_from(ua), _terms_from(ub), floor)
        if floor or not any(isinstance(at, Mod) for m, _ in q.terms for at, _ in m):
            return q if floor else floordiv(q, k)
    red = _cancel_factor(a, b)
    if red is not None:
        f, na, nb = red
        return _divide(na, nb, True) if floor else _mul(f, _divide(na, nb, False))
    return _atom_dim(FloorDiv(a, b) if floor else Mod(a, b))


@functools.lru_cache(maxsize=1 << 12)
def _exact_floor(at: Atom) -> int:
    """``k`` when ``at`` is ``y // k`` for a constant ``k`` and ``y % k`` is 0 in canonical form
    (``(h + h % 2)//2``: then ``at == y/k`` exactly), else 0."""
    if isinstance(at, FloorDiv):
        k = at.b.constant_value
        if k is not None and mod(at.a, k) == ZERO:
            return k
    return 0


def _floordiv_by(a: Dim, cb: int) -> Dim:
    """``a // cb`` for a non-constant ``a`` and a constant ``cb > 1``."""
    q, r = split_multiples(a.terms, cb)
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
    g = math.gcd(content(rest.terms), cb)
    # (g*x)//(g*c) == x//c
    den = const(cb // g)
    return _add(quot, _atom_dim(FloorDiv(_divide_coefficients(rest, g) if g > 1 else rest, den)))


def _mod_by(a: Dim, b: Dim, cb: int) -> Dim:
    """``a % b`` for a non-constant ``a`` and a constant ``b == cb > 1``."""
    inner = drop_inner_mods(a.terms, cb)
    rest = _terms_from({m: c % cb for m, c in (inner.items() if inner is not None else a.terms)})
    rc = rest.constant_value
    if rc is not None:
        return const(rc % cb)
    lo, hi = bounds(rest)
    if lo >= 0 and hi < cb:
        return rest
    return _atom_dim(Mod(rest, b))


def _divide_coefficients(d: Dim, g: int) -> Dim:
    return Dim(tuple((m, c // g) for m, c in d.terms))


@functools.lru_cache(maxsize=1 << 12)
def _cancel_factor(a: Dim, b: Dim) -> tuple[Dim, Dim, Dim] | None:
    """``(f, a', b')`` with ``a == f*a'`` and ``b == f*b'`` for a factor ``f >= 1`` (for every
    value of the symbols by their declared bounds) both share, else None: the common factor of
    ``a``'s terms and a one-term divisor (:func:`~symshape.encoding.dim_monos.cancel_mono_factor`:
    ``a*b*c // (2*a)`` is ``b*c // 2``), else a sum dividing both exactly
    (:func:`~symshape.encoding.dim_polys.cancel_poly_factor`: ``(8*(a + 1)*(b + 1)) // ((a + 1)*(b
    + 1))`` is ``8``).

    For ``b > 0`` (what ``//`` and ``%`` require) ``b' > 0`` too, and ``a // b == a' // b'`` (the
    floor of the same rational) and ``a % b == f*(a' % b')`` (``a - b*(a//b)``, factored). A factor
    that may be 0 (a symbol declared with ``min=0``, a solver unknown, a sum of such) is kept: there
    the divisor may be 0, which the original atom rules out (its Z3 lowering states ``b > 0``);
    cancelling it would drop that condition. Memoized (models divide the same shapes again)."""
    got = cancel_mono_factor(a.terms, b.terms) or cancel_poly_factor(a.terms, b.terms)
    if got is None:
        return None
    f, na, nb = got
    return _terms_from(f), _terms_from(na), _terms_from(nb)


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
    # drop each argument another one dominates (of two that tie, the earlier stays)
    inner = Min if is_max else Max
    keep = [
        d
        for i, d in enumerate(cands)
        if not any(_dominates(e, d, is_max, inner, j > i) for j, e in enumerate(cands) if j != i)
    ]
    if len(keep) == 1:
        return keep[0]
    keep.sort(key=lambda d: d._key)
    return _atom_dim(kind(tuple(keep)))


def _dominates(e: Dim, d: Dim, is_max: bool, inner: type, later: bool) -> bool:
    """Whether ``e`` makes ``d`` redundant in a max or min: by absorption (``max(n, min(9, n))``
    is ``n``) or by the difference's bounds (a tie counts unless ``e`` is the ``later`` one)."""
    at = d.atom
    if isinstance(at, (Max, Min)) and isinstance(at, inner) and e in at.args:
        return True
    lo, hi = bounds(_add(e, _scale(d, -1)))
    return (lo >= 0 if is_max else hi <= 0) and not (lo == hi == 0 and later)


def dmax(*args: DimLike) -> Dim:
    """``max`` of dimensions in canonical form (nested maxima flattened, dominated args dropped)."""
    return _minmax(args, True)


def dmin(*args: DimLike) -> Dim:
    """``min`` of dimensions in canonical form."""
    return _minmax(args, False)


# ----------------------------------------------------------------------------------------------
# substitution


def _atom_map(mapping: Mapping[Dim | Atom | str, DimLike]) -> dict[object, Dim]:
    out: dict[object, Dim] = {}
    for k, v in check_mapping(mapping, "a substitution is a mapping of symbols to dimensions").items():
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
