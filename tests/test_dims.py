"""Dimensions: canonical forms, identity, printing and parsing, substitution, bad input."""

from __future__ import annotations

import numpy as np
import pytest

import symshape as ss
from symshape.encoding.dims import bounds, dmax, dmin, floordiv, fresh_dimvar, mod

n, m, h = ss.dims("n m h")
b0 = ss.dim("b0", min=0)


# -- canonical forms ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (12 * n, n * 3 * 4),
        (n * 3 * 4, 4 * (3 * n)),
        (n + m, m + n),
        (n * m, m * n),
        ((n + 1) * (n - 1), n * n - 1),
        ((n + m) * 2, 2 * m + 2 * n),
        (n - n, ss.parse_dim("0")),
        ((12 * n) // 12, n),
        ((12 * n + 5) // 12, n),
        ((4 * n + 6) // 2, 2 * n + 3),
        ((n // 2) // 3, n // 6),
        (n % 1, ss.parse_dim("0")),
        ((6 * n) % 3, ss.parse_dim("0")),
        ((6 * n + 4) % 3, ss.parse_dim("1")),
        ((3 * n + 1) % 3, ss.parse_dim("1")),
        (n // 1, n),
        (n // n, ss.parse_dim("1")),
        ((n * m) // n, m),
        ((n * m) % m, ss.parse_dim("0")),
        (dmax(n, n), n),
        (dmin(n, n), n),
        (dmax(n, 1), n),
        (dmin(n, 1), ss.parse_dim("1")),
        (dmax(n, n + 1), n + 1),
        (dmax(n, m), dmax(m, n)),
        (dmax(dmax(n, m), h), dmax(n, dmax(m, h))),
        (dmin(n, m, n), dmin(m, n)),
        (n**2, n * n),
        (n**0, ss.parse_dim("1")),
        ((n + 1) ** 2, n * n + 2 * n + 1),
    ],
    ids=lambda x: str(x),
)
def test_canonical_forms_are_equal(left: ss.Dim, right: ss.Dim) -> None:
    assert left == right
    assert hash(left) == hash(right)
    assert str(left) == str(right)


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        (ss.parse_dim("2") + 3, 5),
        (ss.parse_dim("2") * ss.parse_dim("3") - 1, 5),
        (ss.parse_dim("7") // 2, 3),
        (ss.parse_dim("-7") // 2, -4),
        (ss.parse_dim("-7") % 3, 2),
        (ss.parse_dim("7") % 3, 1),
        (dmax(ss.parse_dim("3"), 8, 2), 8),
        (dmin(ss.parse_dim("3"), 8, 2), 2),
        (ss.parse_dim("3") ** 3, 27),
        (n - n + 4, 4),
    ],
    ids=str,
)
def test_constant_folding(expr: ss.Dim, value: int) -> None:
    assert expr.is_constant
    assert expr == value
    assert int(expr) == value
    assert expr.symbols == frozenset()


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (n, m),
        (n, n + 1),
        (2 * n, n),
        (n // 2, n),
        (n % 3, n),
        (dmax(n, m), dmin(n, m)),
        (n * m, n + m),
    ],
    ids=str,
)
def test_different_forms_differ(left: ss.Dim, right: ss.Dim) -> None:
    assert left != right
    assert not (left == right)


def test_identity_of_declarations() -> None:
    assert ss.dim("n") == n
    assert hash(ss.dim("n")) == hash(n)
    assert ss.dims("n, m") == (n, m)
    # the declared range is part of a symbol's identity
    assert ss.dim("n", min=0) != n


def test_dim_equals_int_and_hash_consistency() -> None:
    six = ss.parse_dim("6")
    assert six == 6
    assert 6 == six
    assert six != 7
    assert hash(six) == hash(6)
    assert {six: "x"}[6] == "x"
    assert six == np.int64(6)
    assert ss.parse_dim("0") == 0
    assert n != 1
    assert (n - n) == 0
    assert len({12 * n, n * 3 * 4, 4 * 3 * n}) == 1


@pytest.mark.parametrize("other", [None, "n", 2.0, 6.0, [6], (6,), object(), True, False, 1j, {}])
def test_eq_never_raises(other: object) -> None:
    assert (n == other) is False
    assert (n != other) is True
    six = ss.parse_dim("6")
    assert (six == other) is False


def test_bool_is_not_a_dimension() -> None:
    assert ss.parse_dim("1") != True  # noqa: E712
    with pytest.raises(ss.SymshapeError) as e:
        n + True  # type: ignore[operator]
    assert e.value.code == "bad-dim"


def test_inspection() -> None:
    d = 12 * n + m
    assert not d.is_constant
    assert d.symbols == {n, m}
    assert (n // 2 + dmax(m, 3)).symbols == {n, m}
    assert ss.parse_dim("6").is_constant
    assert n.is_symbol and not (2 * n).is_symbol
    assert (n + 3).constant_term == 3
    assert int(ss.parse_dim("6")) == 6
    with pytest.raises(ss.SymshapeError) as e:
        int(n)
    assert e.value.code == "bad-dim"


# -- substitution -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "mapping", "expected"),
    [
        (12 * n, {n: 3}, 36),
        (n * m + 2 * n, {n: 3, m: 4}, 18),
        (n * m + 2 * n, {"n": 3, "m": 4}, 18),
        (n // 2, {n: 7}, 3),
        ((h - 1) // 2 + 1, {h: 224}, 112),
        (n % 3, {n: 7}, 1),
        (dmax(n, m), {n: 2, m: 9}, 9),
        (dmin(n, m), {n: 2, m: 9}, 2),
        (n**3 - n, {n: 3}, 24),
        ((n * m) // (n + 1), {n: 2, m: 5}, 3),
    ],
    ids=str,
)
def test_subs_to_constant(expr: ss.Dim, mapping: dict[object, int], expected: int) -> None:
    r = expr.subs(mapping)
    assert r.is_constant
    assert r == expected


def test_subs_partial_and_symbolic() -> None:
    assert (n * m).subs({n: 2}) == 2 * m
    assert (n + m).subs({n: m}) == 2 * m
    assert (n // 2).subs({n: 2 * m}) == m
    assert dmax(n, m).subs({n: m}) == m
    assert (n + 1).subs({}) == n + 1
    assert (n + 1).subs({h: 3}) == n + 1
    with pytest.raises(ss.SymshapeError) as e:
        (n + 1).subs({n + 1: 3})
    assert e.value.code == "invalid-argument"


def test_subs_unknown_dimension() -> None:
    d = fresh_dimvar()
    assert (d + 1).subs({d: n}) == n + 1
    assert (d + 1).unknowns == {d.atom}


# -- printing and parsing ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "printed"),
    [
        ("(h - 1)//2 + 1", "(h - 1)//2 + 1"),
        ("n*3*4", "12*n"),
        ("12*n", "12*n"),
        ("n - 1", "n - 1"),
        ("-n + 5", "-n + 5"),
        ("5 - 2*n", "-2*n + 5"),
        ("n % 3", "n % 3"),
        ("max(n, m)", "max(m, n)"),
        ("min(n, 3)", "min(3, n)"),
        ("n**2", "n**2"),
        ("n*n*m", "m*n**2"),
        ("-(n//2)", "-(n//2)"),
        ("2*(n % 3)", "2*(n % 3)"),
        ("(n*m) % (n + 1)", "m*n % (n + 1)"),
        ("(n + 1)//m", "(n + 1)//m"),
        ("0", "0"),
        ("-3", "-3"),
    ],
)
def test_str_and_parse(text: str, printed: str) -> None:
    d = ss.parse_dim(text, {"n": n, "m": m, "h": h})
    assert str(d) == printed
    assert ss.parse_dim(str(d), {"n": n, "m": m, "h": h}) == d


@pytest.mark.parametrize(
    "expr",
    [
        (h - 1) // 2 + 1,
        n // 2 - m // 3,
        -(n % 3) + m,
        2 * (n % 3) - 5,
        dmax(n, m) // 2,
        dmax(n - 3, m * 2),
        dmin(n, m) * dmax(n, m),
        (n // 2) ** 2,
        -(n**2) + 3 * n * m - 7,
        (n * m) // (n + 1),
        (n * m) % (n + m),
        mod(n // 3, m),
        floordiv(n % 5, m),
        n // m // h,
        b0 - 1,
    ],
    ids=str,
)
def test_parse_dim_round_trip(expr: ss.Dim) -> None:
    assert ss.parse_dim(str(expr), {"n": n, "m": m, "h": h, "b0": b0}) == expr


def test_parse_dim_env_and_defaults() -> None:
    # names missing from the environment are declared with the default range
    assert ss.parse_dim("n + 1") == n + 1
    # the environment decides the symbol (here one that may be 0)
    assert ss.parse_dim("b0 + 1", {"b0": b0}) == b0 + 1
    assert ss.parse_dim("b0 + 1") != b0 + 1
    assert int(ss.parse_dim("6")) == 6
    assert ss.parse_dim("  n  ") == n


def test_anonymous_and_unknown_dims_print() -> None:
    q = ss.parse_dim("?")
    assert str(q) == "?"
    assert q.symbols == {q}
    d = ss.parse_dim("?d7 + 1")
    assert str(d) == "?d7 + 1"
    assert d.unknowns and not d.symbols


# -- bounds --------------------------------------------------------------------------------------


def test_bounds_of_declared_ranges() -> None:
    c = ss.dim("c", min=2, max=5)
    assert bounds(c) == (2, 5)
    assert bounds(n) == (1, float("inf"))
    assert bounds(b0 - 1) == (-1, float("inf"))
    assert bounds(n % 4) == (0, 3)
    assert bounds(c // 2) == (1, 2)
    # a smart constructor uses them: c % 8 is c itself since 2 <= c <= 5
    assert c % 8 == c
    assert c // 8 == 0


# -- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["n +", "n / 2", "n ** m", "n ** -1", "foo(n)", "1.5", "n < 2", "", "n if m else 2", "[n]"]
)
def test_parse_errors(text: str) -> None:
    with pytest.raises(ss.SymshapeError) as e:
        ss.parse_dim(text)
    assert e.value.code == "parse-error"


def test_parse_dim_of_non_string() -> None:
    with pytest.raises(ss.SymshapeError) as e:
        ss.parse_dim(3)  # type: ignore[arg-type]
    assert e.value.code == "parse-error"


@pytest.mark.parametrize("bad", [2.5, "x", None, True, [1], object()])
def test_bad_dim_values(bad: object) -> None:
    with pytest.raises(ss.SymshapeError) as e:
        ss.Tensor((bad,), "float32")  # type: ignore[arg-type]
    assert e.value.code == "bad-dim"
    with pytest.raises(ss.SymshapeError) as e2:
        n * bad  # type: ignore[operator]
    assert e2.value.code == "bad-dim"


@pytest.mark.parametrize(
    ("make", "code"),
    [
        (lambda: n // 0, "bad-dim"),
        (lambda: n % 0, "bad-dim"),
        (lambda: n // -2, "bad-dim"),
        (lambda: n ** -1, "bad-dim"),
        (lambda: n**m, "bad-dim"),
        (lambda: dmax(), "invalid-argument"),
        (lambda: ss.dim("3n"), "invalid-argument"),
        (lambda: ss.dim("n", min=-1), "invalid-argument"),
        (lambda: ss.dim("n", min=3, max=2), "invalid-argument"),
        (lambda: ss.Tensor((-1,), "float32"), "negative-dim"),
        (lambda: ss.Tensor((2, n - n - 3), "float32"), "negative-dim"),
        (lambda: ss.Tensor((2,), "floaty"), "bad-dtype"),
        (lambda: ss.Tensor((2,), 32), "bad-dtype"),
        (lambda: ss.Tensor(5, "float32"), "invalid-argument"),
        (lambda: ss.Tensor("n", "float32"), "invalid-argument"),
        (lambda: ss.TypeSolver().add_relation("nope", [ss.Tensor((2,))]), "unknown-relation"),
        (lambda: ss.TypeSolver(timeout_ms=0), "invalid-argument"),
    ],
)
def test_bad_input_raises_symshape_error(make: object, code: str) -> None:
    with pytest.raises(ss.SymshapeError) as e:
        make()  # type: ignore[operator]
    assert e.value.code == code
    assert code in ss.ERROR_CODES
    assert f"[{code}]" in str(e.value)
