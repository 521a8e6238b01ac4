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

Modules. This module declares symbols and re-exports what the modules below it list in their
``__all__``: :mod:`~symshape.encoding.dim_atoms` (atoms, their printed form),
:mod:`~symshape.encoding.dim_bounds` (interval bounds) and :mod:`~symshape.encoding.dim_expr` (the
:class:`Dim` class, canonical arithmetic, substitution), which uses
:mod:`~symshape.encoding.dim_monos` (monomial algebra).

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

# ruff: noqa: F403, F405 (re-exports what dim_atoms, dim_bounds and dim_expr list in __all__)
from __future__ import annotations

import itertools
import keyword
import re
from collections.abc import Iterable

from symshape.encoding.dim_atoms import *
from symshape.encoding.dim_atoms import AnyDim, DimVar, Key, Mono, _mono_key
from symshape.encoding.dim_bounds import bounds
from symshape.encoding.dim_expr import *
from symshape.encoding.dim_expr import Dim, _exact_floor, const
from symshape.encoding.dim_expr import _atom_dim as _atom_dim
from symshape.encoding.dim_monos import exact_quotient
from symshape.encoding.dim_polys import poly_exact_quotient, unfloor
from symshape.errors import INVALID_ARGUMENT, NEGATIVE_DIM, SymshapeError

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
    "divide_exactly",
]

_dimvar_ids = itertools.count(1)
_any_ids = itertools.count(1)


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


def fresh_any(least: int = 1) -> Dim:
    """A new numbered anonymous given dimension (prints as ``?``), ``>= least`` (0 for a size the
    run decides, which may be empty)."""
    return _atom_dim(AnyDim(next(_any_ids), least=least))


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


def check_nonnegative_constant(d: Dim, what: str = "dimension") -> None:
    """Raise ``negative-dim`` for a negative constant (used when a shape is constructed)."""
    c = d.constant_value
    if c is not None and c < 0:
        raise SymshapeError(NEGATIVE_DIM, f"{what} {c} is negative")


def divide_exactly(a: Dim, b: Dim) -> Dim | None:
    """The polynomial ``q`` with ``a == q*b`` identically (integer coefficients), else None.

    Unlike ``a // b`` this asks nothing of ``b``'s sign: where ``b`` is 0, ``a`` is 0 too. A
    reshape's -1 is ``q`` wherever the other entries of the new shape are non-zero (which the
    reshape requires), with nothing to check for divisibility. An atom ``y // k`` that divides
    exactly (``y % k`` is 0) counts as ``y/k``: ``4*(e//2)`` is ``2*e`` times ``2`` for ``e = h + h % 2``."""
    at, bt = a.terms, b.terms
    for _ in range(8):
        if not bt:
            return None
        q = exact_quotient(at, *bt[0]) if len(bt) == 1 else poly_exact_quotient(at, bt)
        if q is not None:
            return _from_terms(q)
        un = unfloor(at, bt, _exact_floor)
        if un is None:
            return None
        at, bt = _from_terms(un[1]).terms, _from_terms(un[2]).terms
    return None


def _from_terms(q: dict[Mono, int]) -> Dim:
    return Dim(tuple(sorted(((m, c) for m, c in q.items() if c), key=lambda mc: _mono_key(mc[0]))))
