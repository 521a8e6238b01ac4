"""Floor division cancels common factors in the canonical form (issue 11).

``a*b*c*d // (2*a)`` is ``b*c*d // 2``: a factor common to every term of the numerator and to the
single-term divisor cancels when it is >= 1 for every admissible value (a factor that may be 0 is
kept: there the original divides by zero); a common coefficient cancels always. Soundness is
checked against Z3 (``x // y`` with Z3's ``div``, which is Python's ``//`` for ``y > 0``) and by
evaluation at random values.
"""

from __future__ import annotations

import itertools
import random

import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.z3_reference import prove_floordiv

import symshape as ss
from symshape.encoding.dims import Dim, bounds, floordiv

a, b, c, d = ss.dims("a b c d")
z = ss.dim("z", min=0)
w = ss.dim("w", min=0, max=3)


@pytest.mark.parametrize(
    ("expr", "printed"),
    [
        (a * b * c * d // (2 * a), "b*c*d//2"),
        (a * b * c * d // (a * b), "c*d"),
        (2 * a * b // (4 * a * c), "b//(2*c)"),
        ((6 * a * b + 4 * a) // (2 * a), "3*b + 2"),
        ((6 * a * b + 4 * a) // (4 * a), "3*b//2 + 1"),
        ((2 * b + 4 * c) // 6, "(b + 2*c)//3"),
        ((a * a * b) // (a * c), "a*b//c"),
        ((2 * a) // 4, "a//2"),
        # a factor that may be 0 stays (the division is by zero there)
        ((z * b) // (2 * z), "b*z//(2*z)"),
        ((2 * z * b) // (4 * z), "b*z//(2*z)"),
        # nothing in common
        ((a * b + c) // (2 * a), "(a*b + c)//(2*a)"),
    ],
    ids=lambda x: str(x),
)
def test_common_factors_cancel(expr: Dim, printed: str) -> None:
    assert str(expr) == printed
    assert ss.parse_dim(str(expr), {"z": z}) == expr


def test_canonical_forms_agree() -> None:
    assert a * b * c * d // (2 * a) == (b * c * d) // 2
    assert (4 * a * b) // (6 * a) == (2 * b) // 3


def _evaluate_equal(orig_num: Dim, orig_den: Dim, simplified: Dim, rng: random.Random) -> None:
    syms = sorted((orig_num.symbols | orig_den.symbols), key=str)
    ranges = [(str(x), *bounds(x)) for x in syms]
    for _ in range(25):
        env = {name: rng.randint(int(lo), int(min(hi, lo + 9))) for name, lo, hi in ranges}
        den_v = orig_den.evaluate(env)
        if den_v <= 0:
            continue
        assert simplified.evaluate(env) == orig_num.evaluate(env) // den_v, (env, str(simplified))


ATOMS = [a, b, c, z, w]
monomials = st.lists(st.sampled_from(ATOMS), min_size=0, max_size=3)
coefficient = st.integers(min_value=-6, max_value=6).filter(lambda k: k != 0)


def _mono(atoms: list[Dim]) -> Dim:
    out = ss.parse_dim("1")
    for x in atoms:
        out = out * x
    return out


@settings(max_examples=40, deadline=None)
@given(
    common=monomials,
    terms=st.lists(st.tuples(coefficient, monomials), min_size=1, max_size=3),
    den_coef=st.integers(min_value=1, max_value=6),
    den_rest=monomials,
    factor=st.integers(min_value=1, max_value=4),
)
def test_division_by_a_monomial_is_sound(
    common: list[Dim], terms: list[tuple[int, list[Dim]]], den_coef: int, den_rest: list[Dim], factor: int
) -> None:
    cm = _mono(common)
    num = sum((k * factor * cm * _mono(m) for k, m in terms), start=ss.parse_dim("0"))
    den = den_coef * factor * cm * _mono(den_rest)
    if den.is_constant and den.constant_value is not None and den.constant_value <= 0:
        return
    simplified = floordiv(num, den)
    _evaluate_equal(num, den, simplified, random.Random(str(simplified)))
    verdict = prove_floordiv(num, den, simplified)
    assert verdict != z3.sat, f"{num} // {den} is not {simplified}"


def test_z3_proves_the_issue_example() -> None:
    num, den = a * b * c * d, 2 * a
    assert prove_floordiv(num, den, floordiv(num, den)) == z3.unsat


def test_cancellation_reaches_every_term() -> None:
    # every term must carry the factor: a*b + c has none in common with a
    for num, den in itertools.product([a * b + c, a * b + a * c, a * a + a], [a, 2 * a, a * b]):
        q = floordiv(num, den)
        assert prove_floordiv(num, den, q) != z3.sat, (num, den, q)
