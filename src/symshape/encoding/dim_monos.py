"""Monomial algebra on term tuples: products, exact quotients, and the common factor of a sum and
a one-term divisor that the division and remainder constructors cancel. Nothing here builds a
:class:`~symshape.encoding.dims.Dim`; :mod:`symshape.encoding.dim_expr` wraps the results."""

from __future__ import annotations

import math

from symshape.encoding.dim_atoms import Atom, Mono, Terms
from symshape.encoding.dim_bounds import mono_bounds

__all__ = [
    "cancel_mono_factor",
    "common_atoms",
    "common_factor",
    "content",
    "exact_quotient",
    "mono_divides",
    "mono_mul",
    "split_multiples",
]


def _sorted_mono(acc: dict[Atom, int]) -> Mono:
    return tuple(sorted(acc.items(), key=lambda ae: ae[0]._key))


def mono_mul(m1: Mono, m2: Mono) -> Mono:
    """The product of two monomials."""
    if not m1:
        return m2
    if not m2:
        return m1
    acc: dict[Atom, int] = dict(m1)
    for a, e in m2:
        acc[a] = acc.get(a, 0) + e
    return _sorted_mono(acc)


def content(terms: Terms) -> int:
    """The gcd of the coefficients."""
    g = 0
    for _, c in terms:
        g = math.gcd(g, c)
    return g


def mono_divides(div: Mono, m: Mono) -> Mono | None:
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
    return _sorted_mono(acc)


def exact_quotient(terms: Terms, bm: Mono, bc: int) -> dict[Mono, int] | None:
    """The terms of ``terms / (bc*bm)`` when ``bc > 0`` and ``bc*bm`` divides every term exactly,
    else None."""
    if bc <= 0:
        return None
    acc: dict[Mono, int] = {}
    for m, c in terms:
        if c % bc:
            return None
        q = mono_divides(bm, m)
        if q is None:
            return None
        acc[q] = acc.get(q, 0) + c // bc
    return acc


def split_multiples(terms: Terms, k: int) -> tuple[dict[Mono, int], dict[Mono, int]]:
    """The terms whose coefficient ``k`` divides, divided by ``k``; and the other terms."""
    q: dict[Mono, int] = {}
    r: dict[Mono, int] = {}
    for m, c in terms:
        if c % k == 0:
            q[m] = c // k
        else:
            r[m] = c
    return q, r


def common_atoms(terms: Terms, start: Mono) -> Mono:
    """The atoms of ``start`` common to every term, at their lowest exponent."""
    common: dict[Atom, int] = dict(start)
    for m, _ in terms:
        if not common:
            break
        have = dict(m)
        for at in list(common):
            e = have.get(at, 0)
            if e == 0:
                del common[at]
            elif e < common[at]:
                common[at] = e
    return _sorted_mono(common) if common else ()


def common_factor(terms: Terms, bm: Mono, bc: int) -> tuple[Mono, int]:
    """``(fm, g)``: the common factor ``g*fm`` of every term of ``terms`` and the one-term divisor
    ``bc*bm`` (``bc > 0``) that is at least 1 for every value of the symbols.

    ``g`` is the gcd of all coefficients and ``bc``; ``fm`` holds the atoms common to every term
    and to ``bm`` at their lowest exponent whose product is at least 1 by the declared bounds
    (all of them when their product is, else those whose own power is): a factor that may vanish
    (a symbol with ``min=0``, a solver unknown) is never cancelled. ``((), 1)`` means there is
    nothing to cancel."""
    g = math.gcd(content(terms), bc)
    fm = common_atoms(terms, bm)
    if fm and mono_bounds(fm)[0] < 1:
        # keep the powers that are >= 1 by themselves (their product is): ``z*n`` with ``z``
        # declared ``min=0`` cancels ``n`` only
        fm = tuple((a, e) for a, e in fm if mono_bounds(((a, e),))[0] >= 1)
    return fm, g


def cancel_mono_factor(a: Terms, b: Terms) -> tuple[dict[Mono, int], dict[Mono, int], dict[Mono, int]] | None:
    """``(f, a', b')`` with ``a == f*a'`` and ``b == f*b'`` for the common factor ``f`` of ``a``'s
    terms and the divisor ``b``'s terms (:func:`common_factor`: at least 1 by the declared bounds;
    a one-term ``b`` needs a positive coefficient), else None."""
    if not b:
        return None
    bm, bc = b[0]
    if len(b) > 1:
        bm, bc = common_factor(b[1:], bm, abs(bc))
    elif bc <= 0:
        return None
    fm, g = common_factor(a, bm, bc)
    if not fm and g <= 1:
        return None
    na = exact_quotient(a, fm, g)
    nb = exact_quotient(b, fm, g)
    if na is None or nb is None:  # pragma: no cover - f divides both by construction
        return None
    return {fm: g}, na, nb
