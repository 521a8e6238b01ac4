"""``//`` and ``%`` cancel a sum both operands share: ``(k*p) // p`` is ``k`` and ``(k*p) % p`` is
``0`` for a polynomial ``p`` (not only a monomial), and ``(n*p) // (m*p)`` is ``n // m``, when the
declared bounds prove ``p >= 1`` (a sum that may be 0 stays: the divisor's ``> 0`` stays stated).

Found on Segformer's reshapes (hunt's reshape_poly_factor.py): the -1 of ``(a + 1, b + 1, -1)``
over ``((a + 1)*(b + 1), 8)`` was ``(8*a*b + 8*a + 8*b + 8)//(a*b + a + b + 1)``, nested until Z3
gave up. Checked against Python's integer ``//`` and ``%`` at random sizes (hypothesis) and Z3.
"""

from __future__ import annotations

import pytest
import z3
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from tests.z3_reference import prove_floordiv

import symshape as ss
from symshape.encoding.dims import Atom, Dim, bounds, const, divide_exactly, floordiv, mod

a, b, c = ss.dims("a b c")
z = ss.dim("z", min=0)
y = ss.dim("y", min=0)
SYMS = (a, b, c, z)
NAMES = ("a", "b", "c", "z")
P = (a + 1) * (b + 1)


@pytest.mark.parametrize(
    ("expr", "printed"),
    [
        # the reproducer, and the same with a batch factor on both sides (Segformer's -1)
        ((8 * P) // P, "8"),
        ((8 * P) % P, "0"),
        ((8 * c * P) // (c * P), "8"),
        ((8 * c * P) % (c * P), "0"),
        # a monomial multiple, and the remainder of a multiple by a shared sum times a constant
        ((a * c * c * P) // P, "a*c**2"),
        ((6 * c * P) // (4 * P), "3*c//2"),
        ((3 * c * P) // (3 * c * P), "1"),
        # the divisor a multiple of the dividend's sum: p // (2*p) is 0 for p >= 1
        (P // (2 * P), "0"),
        ((3 * P) // (2 * c * P), "3//(2*c)"),
        # a sum of a >= 1 monomial and a may-be-0 one is still >= 1
        ((5 * (a * b + z)) // (a * b + z), "5"),
        # a sum that may be 0 stays (its division by zero keeps its meaning)
        ((2 * (z + y)) // (z + y), "(2*y + 2*z)//(y + z)"),
        ((a * a - 1) // (a - 1), "(a**2 - 1)//(a - 1)"),
        # a sum that does not divide stays
        ((P + 1) // P, "(a*b + a + b + 2)//(a*b + a + b + 1)"),
        # a quotient that is not a polynomial with integer coefficients stays
        ((a * b + a) // (2 * a + 2), "(a*b + a)//(2*a + 2)"),
    ],
    ids=lambda x: str(x),
)
def test_shared_sums_cancel(expr: Dim, printed: str) -> None:
    assert str(expr) == printed
    assert ss.parse_dim(printed, {"z": z, "y": y}) == expr


@pytest.mark.parametrize(("num", "den"), [(8 * c * P, c * P), (6 * c * P, 4 * P), (3 * P, 2 * c * P)])
def test_quotients_proved_by_z3(num: Dim, den: Dim) -> None:
    assert prove_floordiv(num, den, floordiv(num, den)) == z3.unsat


def _mono(es: tuple[int, ...]) -> Dim:
    out = const(1)
    for s, e in zip(SYMS, es, strict=True):
        out = out * s**e
    return out


_EXP = st.tuples(*(st.integers(0, 2) for _ in SYMS))
_TERM = st.tuples(st.integers(-3, 3), _EXP)
_POSTERM = st.tuples(st.integers(1, 3), _EXP)


def _poly(terms: list[tuple[int, tuple[int, ...]]]) -> Dim:
    out = const(0)
    for k, es in terms:
        out = out + k * _mono(es)
    return out


def _env(vals: tuple[int, int, int, int]) -> dict[Dim | Atom | str, int]:
    return dict(zip(NAMES, vals, strict=True))


_ENV = st.tuples(st.integers(1, 7), st.integers(1, 7), st.integers(1, 7), st.integers(0, 7))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_TERM, min_size=2, max_size=3),
    _TERM,
    _TERM,
    st.lists(_ENV, min_size=1, max_size=4),
)
def test_multiples_of_any_sum_agree_with_python(
    p_terms: list[tuple[int, tuple[int, ...]]],
    n_term: tuple[int, tuple[int, ...]],
    m_term: tuple[int, tuple[int, ...]],
    envs: list[tuple[int, int, int, int]],
) -> None:
    p, n, m = _poly(p_terms), _poly([n_term]), _poly([m_term])
    num, den = n * p, m * p
    assume(den.constant_value is None or den.constant_value > 0)
    q, r = floordiv(num, den), mod(num, den)
    for vals in envs:
        env = _env(vals)
        dv = den.evaluate(env)
        if dv < 1:
            continue  # ``//`` and ``%`` are defined for a positive divisor only
        nv = num.evaluate(env)
        assert q.evaluate(env) == nv // dv, (num, den, q, env)
        assert r.evaluate(env) == nv % dv, (num, den, r, env)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_POSTERM, min_size=1, max_size=3),
    st.integers(1, 4),
    _TERM,
    st.tuples(st.integers(1, 3), _EXP),
    st.lists(_ENV, min_size=1, max_size=4),
)
def test_multiples_of_a_positive_sum_cancel(
    p_terms: list[tuple[int, tuple[int, ...]]],
    p_const: int,
    k_term: tuple[int, tuple[int, ...]],
    m_term: tuple[int, tuple[int, ...]],
    envs: list[tuple[int, int, int, int]],
) -> None:
    # p has positive coefficients and a constant term >= 1: p >= 1 by the declared bounds
    p = _poly(p_terms) + p_const
    assume(p.constant_value is None)
    assert bounds(p)[0] >= 1
    k, m = _poly([k_term]), _poly([m_term])
    # (k*m*p) // (m*p) is k whatever m is (the monomial divides exactly), and the remainder is 0
    assert floordiv(k * m * p, m * p) == k
    assert mod(k * m * p, m * p) == 0
    assert floordiv(k * p, p) == k
    # (k*p) // (m*p) is k // m, checked at random sizes where m >= 1
    q, r = floordiv(k * p, m * p), mod(k * p, m * p)
    assert q == floordiv(k, m)
    for vals in envs:
        env = _env(vals)
        mv, kv, pv = m.evaluate(env), k.evaluate(env), p.evaluate(env)
        if mv < 1:
            continue
        assert q.evaluate(env) == (kv * pv) // (mv * pv)
        assert r.evaluate(env) == (kv * pv) % (mv * pv)


def _reshape(shape: tuple[Dim | int, ...], spec: tuple[Dim | int, ...]) -> tuple[str, str]:
    x = ss.var("x", ss.Tensor(shape, "float32"))
    out = ss.ops.reshape(x, spec)
    res = ss.infer(ss.Function([x], out))
    return res.status, str(res.type_of(out))


@pytest.mark.parametrize(
    ("shape", "spec", "expected"),
    [
        # the reproducer
        ((P, 8), (a + 1, b + 1, -1), "Tensor[(a + 1, b + 1, 8), float32]"),
        # Segformer's: a batch first, the grid flattened
        ((c, P, 8), (c, a + 1, b + 1, -1), "Tensor[(c, a + 1, b + 1, 8), float32]"),
        # the -1 on a factor of the grid
        ((c, P, 8), (c, a + 1, -1, 8), "Tensor[(c, a + 1, b + 1, 8), float32]"),
        ((c, P * 8), (c, -1, b + 1, 4), "Tensor[(c, 2*a + 2, b + 1, 4), float32]"),
        # a grid with a may-be-0 part that is still >= 1
        (((z + 1) * (b + 1), 8), (z + 1, -1, 2), "Tensor[(z + 1, 4*b + 4, 2), float32]"),
    ],
    ids=lambda x: str(x),
)
def test_reshape_infers_the_factor(
    shape: tuple[Dim, ...], spec: tuple[Dim | int, ...], expected: str
) -> None:
    assert _reshape(shape, spec) == ("ok", expected)


def test_nested_reshapes_stay_polynomials() -> None:
    # flatten the grid, split it again, flatten, split on the other side: every -1 is a polynomial
    x = ss.var("x", ss.Tensor((c, P, 8), "float32"))
    t1 = ss.ops.reshape(x, (c, a + 1, b + 1, -1))
    t2 = ss.ops.reshape(t1, (c, -1, 8))
    t3 = ss.ops.reshape(t2, (c, -1, b + 1, 8))
    t4 = ss.ops.reshape(t3, (-1, 2 * (b + 1), 4))
    res = ss.infer(ss.Function([x], t4))
    assert res.status == "ok"
    assert str(res.type_of(t2)) == "Tensor[(c, a*b + a + b + 1, 8), float32]"
    assert str(res.type_of(t3)) == "Tensor[(c, a + 1, b + 1, 8), float32]"
    assert str(res.type_of(t4)) == "Tensor[(a*c + c, 2*b + 2, 4), float32]"
    for d in res.type_of(t4).shape:  # type: ignore[union-attr]
        assert not any(type(at).__name__ in ("FloorDiv", "Mod") for at in d.atoms())


# -- Swin's padded grid: e = h + h % 2 is even (``(-h) % 2 == h % 2`` pads h to a multiple of 2) --

H1 = ss.dim("height", min=1) // 4
H4 = ss.dim("h4", min=4) // 4
W1 = ss.dim("width", min=1) // 4
E1, E4, F1 = H1 + H1 % 2, H4 + H4 % 2, W1 + W1 % 2


@pytest.mark.parametrize(
    ("expr", "printed"),
    [
        # a remainder by 2 reads h % 2 as h (2 divides 2): e % 2 is (2*h) % 2
        (E1 % 2, "0"),
        ((3 * H1 + H1 % 4) % 2, "0"),
        ((H1 + H1 % 3) % 2, "(height//4 + height//4 % 3) % 2"),
        # e//2 is e/2 exactly: e//(e//2) is (2*e)//e, which is 2 when e >= 1 by the bounds
        (E4 // (E4 // 2), "2"),
        (E4 % (E4 // 2), "0"),
        (E1 // (E1 // 2), "(2*(height//4) + 2*(height//4 % 2))//(height//4 + height//4 % 2)"),
        ((E1 // 2) * 4 // (E1 // 2), "4"),
        ((4 * (E1 // 2) * (F1 // 2)) // (E1 * F1), "1"),
    ],
    ids=lambda x: str(x),
)
def test_even_grids(expr: Dim, printed: str) -> None:
    assert str(expr) == printed


@pytest.mark.parametrize(
    ("num", "den", "expected"),
    [
        (64 * c * (E1 // 2) * (F1 // 2), 16 * E1 * F1, "c"),
        (8 * c * P, c * P, "8"),
        (z * (a + 1), z, "a + 1"),  # no sign needed: where z is 0 the count is 0 too
        ((z + y) * (a + 1), z + y, "a + 1"),
        (8 * c * P + 1, c * P, None),
        (E1, E1 // 2 + 1, None),
    ],
    ids=lambda x: str(x),
)
def test_divide_exactly(num: Dim, den: Dim, expected: str | None) -> None:
    q = divide_exactly(num, den)
    assert (None if q is None else str(q)) == expected
    if q is not None:  # num == q*den at every size, 0 included
        for v in range(6):
            env: dict[Dim | Atom | str, int] = dict.fromkeys(("a", "b", "c", "z", "y", "height", "width"), v)
            env["width"] = 3 * v + 1
            assert q.evaluate(env) * den.evaluate(env) == num.evaluate(env)


def test_reshape_of_an_even_grid() -> None:
    # Swin's window merge: the -1 needs (e//2)*(f//2)*4 == e*f, with e, f even
    x = ss.var("x", ss.Tensor((c, 4 * (E1 // 2) * (F1 // 2), 8), "float32"))
    out = ss.ops.reshape(x, (c, E1, F1, -1))
    res = ss.infer(ss.Function([x], out))
    assert res.status in ("ok", "guarded"), res.report()
    assert str(res.type_of(out)).endswith(", 8), float32]"), str(res.type_of(out))


_K = st.sampled_from([2, 3, 4])


@settings(max_examples=300, deadline=None)
@given(_K, st.integers(1, 3), st.integers(-2, 3), st.lists(_TERM, min_size=1, max_size=2),
       st.lists(_TERM, min_size=1, max_size=2), st.lists(_ENV, min_size=1, max_size=4))
def test_even_multiples_agree_with_python(
    k: int,
    j: int,
    s: int,
    y_terms: list[tuple[int, tuple[int, ...]]],
    a_terms: list[tuple[int, tuple[int, ...]]],
    envs: list[tuple[int, int, int, int]],
) -> None:
    yv, av = _poly(y_terms), _poly(a_terms)
    ex = yv - yv % k  # k*(y//k): a multiple of k whose remainder by k is 0 in canonical form
    sums = (yv + s * (yv % (k * j)), ex)
    for e in sums:
        r = mod(e, k)
        for vals in envs:
            env = _env(vals)
            assert r.evaluate(env) == e.evaluate(env) % k
    assert mod(ex, k) == 0
    half = floordiv(ex, k)
    assume(half.constant_value is None or half.constant_value > 0)
    q, rem = floordiv(av, half), mod(av, half)
    for vals in envs:
        env = _env(vals)
        hv = half.evaluate(env)
        if hv < 1:
            continue
        assert q.evaluate(env) == av.evaluate(env) // hv
        assert rem.evaluate(env) == av.evaluate(env) % hv
