"""Comparison operators are an enum (:class:`CmpOp`) that prints, compares and hashes as its symbol.

So conditions read, print and key dictionaries exactly as when the operators were strings, and a
``Cmp`` built with a symbol holds the enum member.
"""

from __future__ import annotations

import pickle

import pytest

import symshape as ss
from symshape.encoding.conds import Cmp, CmpOp, eq, ge, gt, le, lt, ne, negate
from symshape.encoding.dims import const

n, m = ss.dims("n m")


@pytest.mark.parametrize(
    ("op", "symbol"), [(CmpOp.EQ, "=="), (CmpOp.NE, "!="), (CmpOp.LE, "<="), (CmpOp.LT, "<")]
)
def test_an_operator_is_its_symbol(op: CmpOp, symbol: str) -> None:
    assert op == symbol and hash(op) == hash(symbol)
    assert str(op) == f"{op}" == symbol and repr(op) == repr(symbol)
    assert CmpOp(symbol) is op
    c = Cmp(symbol, n, m)  # type: ignore[arg-type]
    assert c.op is op and c == Cmp(op, n, m)
    assert repr(c) == f"Cmp(op={symbol!r}, lhs=Dim(n), rhs=Dim(m))"
    assert pickle.loads(pickle.dumps(c)) == c


@pytest.mark.parametrize(
    ("build", "printed"),
    [
        (eq, "n == m"),
        (ne, "n != m"),
        (le, "n <= m"),
        (lt, "n < m"),
        (ge, "m <= n"),
        (gt, "m < n"),
    ],
    ids=lambda x: getattr(x, "__name__", str(x)),
)
def test_the_constructors(build: object, printed: str) -> None:
    c = build(n, m)  # type: ignore[operator]
    assert isinstance(c, Cmp) and isinstance(c.op, CmpOp)
    assert str(c) == printed
    # the negation of each operator is the complementary comparison
    assert str(negate(negate(c))) == str(c)


def test_constants_go_to_the_right() -> None:
    assert str(le(3, n)) == "n >= 3"
    assert str(lt(const(3), n)) == "n > 3"
    assert str(ge(n, 5)) == "n >= 5"
