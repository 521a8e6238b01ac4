"""``%`` and ``//`` cancel the factors a sum and a one-term divisor share (issue 14).

``(a*b*c) % (3*a*b)`` is ``a*b*(c % 3)`` and ``(a*b*c) // (3*a*b)`` is ``c // 3``: for ``f >= 1``
``(f*x) % (f*y) == f*(x % y)`` and ``(f*x) // (f*y) == x // y`` whenever ``f*y > 0``. A factor is
cancelled only when the declared bounds prove it ``>= 1``; a symbol declared ``min=0`` stays in the
divisor, so the lowered atom keeps stating ``divisor > 0`` (division by zero keeps its meaning). A
common coefficient always cancels. Checked against Python's integer ``%`` and ``//`` at random
sizes (hypothesis), and against Z3.
"""

from __future__ import annotations

import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.z3_reference import prove_floordiv

import symshape as ss
from symshape.encoding.conds import eq
from symshape.encoding.dims import Atom, Dim, bounds, const, floordiv, mod
from symshape.encoding.z3 import Z3Encoder
from symshape.errors import SymshapeError

a, b, c = ss.dims("a b c")
z = ss.dim("z", min=0)
ENV = {"z": z}


@pytest.mark.parametrize(
    ("expr", "printed"),
    [
        # the issue's example and its quotient
        ((a * b * c) % (3 * a * b), "a*b*(c % 3)"),
        ((a * b * c) // (3 * a * b), "c//3"),
        # a common coefficient and a common atom
        ((6 * a * b + 4 * a) % (4 * a * c), "2*a*((3*b + 2) % (2*c))"),
        ((6 * a * b + 4 * a) // (4 * a * c), "(3*b + 2)//(2*c)"),
        ((a * b * c + a * b) % (3 * a * b), "a*b*((c + 1) % 3)"),
        ((a * a * b) % (a * c), "a*(a*b % c)"),
        # z may be 0: it stays in the divisor (b, which is >= 1, cancels)
        ((z * b * c) % (3 * z * b), "b*(c*z % (3*z))"),
        ((z * b * c) // (3 * z * b), "c*z//(3*z)"),
        ((z * c) % (3 * z), "c*z % (3*z)"),
        ((2 * z * c) % (4 * z), "2*(c*z % (2*z))"),
        # an exact divisor, and nothing in common
        ((a * b * c) % (a * b), "0"),
        ((a * b + c) % (2 * a), "(a*b + c) % (2*a)"),
    ],
    ids=lambda x: str(x),
)
def test_common_factors_cancel(expr: Dim, printed: str) -> None:
    assert str(expr) == printed
    assert ss.parse_dim(printed, ENV) == expr


def test_the_issue_condition_becomes_a_remainder_by_a_constant() -> None:
    cond = eq((a * b * c) % (3 * a * b), 0)
    assert str(cond) == "a*b*(c % 3) == 0"
    # decided by Z3 at once: it holds exactly when c % 3 == 0
    enc = Z3Encoder()
    lhs, rhs = enc.cond(cond), enc.cond(eq(c % 3, 0))
    s = z3.Solver()
    s.set("timeout", 2000)
    s.add(*enc.take_axioms())
    s.add(lhs != rhs)
    assert s.check() == z3.unsat


@pytest.mark.parametrize(
    ("num", "den"),
    [
        (a * b * c, 3 * a * b),
        (6 * a * b + 4 * a, 4 * a * c),
        (a * b * c + a * b, 3 * a * b),
        (z * b * c, 3 * z * b),
        (2 * z * c, 4 * z),
    ],
    ids=str,
)
def test_z3_proves_the_cancelled_quotients(num: Dim, den: Dim) -> None:
    # (the remainders are nonlinear for Z3, which is why they are cancelled before it sees
    # them: the property test below checks them against Python's arithmetic)
    assert prove_floordiv(num, den, floordiv(num, den)) == z3.unsat


def test_a_factor_that_may_be_zero_keeps_the_divisor_positive() -> None:
    # the kept atom's lowering states its divisor is positive, so z == 0 stays excluded
    enc = Z3Encoder()
    enc.dim((z * b * c) % (3 * z * b))
    s = z3.Solver()
    s.add(*enc.take_axioms())
    s.add(z3.Int("z") == 0)
    assert s.check() == z3.unsat
    with pytest.raises(SymshapeError):
        ((z * c) % (3 * z)).evaluate({"z": 0, "c": 5})


# ----------------------------------------------------------------------------------------------
# against Python's integer arithmetic at random sizes

SYMS = [ss.dim("p"), ss.dim("q"), ss.dim("r"), ss.dim("u", min=0), ss.dim("v", min=0)]
monomial = st.lists(st.sampled_from(SYMS), min_size=0, max_size=3)
coefficient = st.integers(min_value=-7, max_value=7).filter(lambda k: k != 0)
size = st.one_of(st.integers(0, 12), st.integers(0, 10**9))


def _product(atoms: list[Dim], k: int = 1) -> Dim:
    out = const(k)
    for x in atoms:
        out = out * x
    return out


@settings(max_examples=150, deadline=None)
@given(
    common=monomial,
    terms=st.lists(st.tuples(coefficient, monomial), min_size=1, max_size=3),
    den_coef=st.integers(min_value=1, max_value=9),
    den_rest=monomial,
    factor=st.integers(min_value=1, max_value=6),
    values=st.lists(size, min_size=len(SYMS), max_size=len(SYMS)),
)
def test_remainder_and_quotient_match_python(
    common: list[Dim],
    terms: list[tuple[int, list[Dim]]],
    den_coef: int,
    den_rest: list[Dim],
    factor: int,
    values: list[int],
) -> None:
    cm = _product(common, factor)
    num = sum((_product(m, k) * cm for k, m in terms), start=_product([], 0))
    den = _product(den_rest, den_coef) * cm
    env: dict[Dim | Atom | str, int] = {str(s): max(v, int(bounds(s)[0])) for s, v in zip(SYMS, values)}
    n, d = num.evaluate(env), den.evaluate(env)
    if d <= 0:
        return  # the operations are defined for a positive divisor only
    assert mod(num, den).evaluate(env) == n % d, (str(num), str(den), str(mod(num, den)), env)
    assert floordiv(num, den).evaluate(env) == n // d, (str(num), str(den), str(floordiv(num, den)), env)
