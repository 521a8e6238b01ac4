"""Exact division of polynomials on term tuples: the quotient ``a / b`` when ``b`` (any number of
terms) divides ``a`` with integer coefficients, and the split of a polynomial into its content
(a coefficient times a monomial) and its primitive part. The division and remainder constructors
(:mod:`symshape.encoding.dim_expr`) use them to cancel a sum both operands share:
``(8*(a + 1)*(b + 1)) // ((a + 1)*(b + 1))`` is ``8``. Nothing here builds a
:class:`~symshape.encoding.dims.Dim`."""

from __future__ import annotations

from collections.abc import Callable

from symshape.encoding.dim_atoms import Atom, FloorDiv, Mod, Mono, Terms
from symshape.encoding.dim_bounds import mono_bounds
from symshape.encoding.dim_monos import common_atoms, content, exact_quotient, mono_divides, mono_mul

__all__ = ["cancel_poly_factor", "drop_inner_mods", "poly_exact_quotient", "primitive_split", "unfloor"]

_MAX_STEPS = 256
"""At most this many quotient terms are tried before giving up (no simplification, still sound)."""


def primitive_split(terms: Terms) -> tuple[Mono, int, dict[Mono, int]]:
    """``(fm, g, p)`` with ``terms == g*fm * p``: ``g > 0`` the gcd of the coefficients, ``fm`` the
    atoms common to every term at their lowest exponent, ``p`` the rest (the primitive part)."""
    fm = common_atoms(terms[1:], terms[0][0]) if terms else ()
    g = content(terms)
    p = exact_quotient(terms, fm, g)
    assert p is not None  # g*fm divides every term by construction
    return fm, g, p


def poly_exact_quotient(a: Terms, b: Terms) -> dict[Mono, int] | None:
    """The terms of ``q`` with ``a == q*b`` and integer coefficients, else None (also when the
    search takes more than :data:`_MAX_STEPS` steps: the caller then keeps ``a // b`` as it is).

    The division algorithm under the graded lexicographic order of the atoms (sorted by their
    keys): the leading term of ``b`` must divide the leading term of what is left; when ``b``
    divides ``a`` this finds the quotient, and what is left ends empty."""
    if not b:
        return None
    atoms = sorted({at for m, _ in (*a, *b) for at, _ in m}, key=lambda at: at._key)
    index = {at: i for i, at in enumerate(atoms)}
    n = len(atoms)

    def order(m: Mono) -> tuple[int, tuple[int, ...]]:
        vec = [0] * n
        deg = 0
        for at, e in m:
            vec[index[at]] = e
            deg += e
        return (deg, tuple(vec))

    lead_m, lead_c = max(b, key=lambda mc: order(mc[0]))
    rest: dict[Mono, int] = dict(a)
    quot: dict[Mono, int] = {}
    for _ in range(_MAX_STEPS):
        if not rest:
            return quot
        m = max(rest, key=order)
        c = rest[m]
        if c % lead_c:
            return None
        t = mono_divides(lead_m, m)
        if t is None:
            return None
        k = c // lead_c
        quot[t] = k
        for bm, bc in b:
            tm = mono_mul(t, bm)
            v = rest.get(tm, 0) - k * bc
            if v:
                rest[tm] = v
            else:
                rest.pop(tm, None)
    return quot if not rest else None


def _lower_bound(terms: dict[Mono, int]) -> float:
    """A lower bound of a polynomial from the symbols' declared ranges (interval arithmetic)."""
    lo = 0.0
    for m, c in terms.items():
        mlo, mhi = mono_bounds(m)
        lo += c * mlo if c > 0 else c * mhi
    return lo


def cancel_poly_factor(a: Terms, b: Terms) -> tuple[dict[Mono, int], dict[Mono, int], dict[Mono, int]] | None:
    """``(p, a', b')`` with ``a == p*a'``, ``b == p*b'`` for a sum ``p`` (two terms or more) that is
    at least 1 for every value of the symbols by their declared bounds, else None.

    ``p`` is the primitive part of ``b`` (then ``b'`` is one term, the content of ``b``), else the
    primitive part of ``a`` when both are sums (then ``a'`` is one term). For ``p >= 1`` and
    ``b > 0``: ``a // b == a' // b'`` and ``a % b == p*(a' % b')``; ``b' > 0`` exactly when
    ``b > 0``, so the divisor's positivity stays stated. A sum that may be 0 (``a*b + c`` with a
    symbol declared ``min=0``) is never cancelled."""
    if len(b) < 2:
        return None
    fm, g, p = primitive_split(b)
    if len(p) > 1 and _lower_bound(p) >= 1:
        na = poly_exact_quotient(a, tuple(p.items()))
        if na is not None:
            return p, na, {fm: g}
    if len(a) < 2:
        return None
    fa, ga, pa = primitive_split(a)
    if len(pa) > 1 and pa != p and _lower_bound(pa) >= 1:
        nb = poly_exact_quotient(b, tuple(pa.items()))
        if nb is not None:
            return pa, {fa: ga}, nb
    return None


def _poly_mul(p: dict[Mono, int], q: Terms) -> dict[Mono, int]:
    out: dict[Mono, int] = {}
    for pm, pc in p.items():
        for qm, qc in q:
            m = mono_mul(pm, qm)
            out[m] = out.get(m, 0) + pc * qc
    return out


def _multiple_of(c: int | None, k: int) -> bool:
    return c is not None and c % k == 0


def drop_inner_mods(terms: Terms, k: int) -> dict[Mono, int] | None:
    """``terms`` with every atom ``y % c``, ``c`` a constant multiple of ``k``, replaced by ``y``
    (congruent modulo ``k``: ``(h + h % 2) % 2`` is ``(2*h) % 2``, that is ``0``), else None when
    there is no such atom. A power of a sum is expanded only while it has at most 64 terms."""
    out: dict[Mono, int] = {}
    changed = False
    for m, c in terms:
        poly: dict[Mono, int] = {(): c}
        for at, e in m:
            if isinstance(at, Mod) and _multiple_of(at.b.constant_value, k) and len(at.a.terms) ** e <= 64:
                changed = True
                for _ in range(e):
                    poly = _poly_mul(poly, at.a.terms)
            else:
                poly = {mono_mul(pm, ((at, e),)): pc for pm, pc in poly.items()}
        for pm, pc in poly.items():
            out[pm] = out.get(pm, 0) + pc
    return out if changed else None


def unfloor(
    a: Terms, b: Terms, exact: Callable[[Atom], int]
) -> tuple[int, dict[Mono, int], dict[Mono, int]] | None:
    """``(K, K*a, K*b)`` written without one atom ``y // k`` of ``a`` or ``b`` that divides exactly
    (``exact(atom)`` is ``k``, else 0: then the atom is ``y/k``, and becomes ``y``), with ``K`` the
    power of ``k`` that clears it; else None. ``a // b == (K*a) // (K*b)`` and ``a % b == ((K*a) %
    (K*b)) // K``, and ``K*b > 0`` exactly when ``b > 0``."""
    for m, _ in (*a, *b):
        for at, _ in m:
            k = exact(at)
            if k and isinstance(at, FloorDiv):
                top = max(e for mm, _ in (*a, *b) for x, e in mm if x == at)
                y = at.a.terms
                return k**top, _unfloor_in(a, at, k, top, y), _unfloor_in(b, at, k, top, y)
    return None


def _unfloor_in(terms: Terms, at: Atom, k: int, top: int, y: Terms) -> dict[Mono, int]:
    out: dict[Mono, int] = {}
    for m, c in terms:
        e = next((xe for x, xe in m if x == at), 0)
        poly: dict[Mono, int] = {tuple(xe for xe in m if xe[0] != at): c * k ** (top - e)}
        for _ in range(e):
            poly = _poly_mul(poly, y)
        for pm, pc in poly.items():
            out[pm] = out.get(pm, 0) + pc
    return out
