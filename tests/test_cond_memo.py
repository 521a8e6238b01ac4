"""Comparisons are memoized by their dimensions (conds._cmp_dims): the same condition as built
afresh, and what is not a dimension (a bool, a float) is still refused, whatever is cached."""

from __future__ import annotations

import pytest

from symshape.encoding import conds
from symshape.encoding.conds import eq, ge, gt, le, lt, ne
from symshape.encoding.dims import dim, dmax, floordiv, mod
from symshape.errors import SymshapeError

n, m, s = dim("n"), dim("m"), dim("s", min=0)
DIMS = [n, m, s, n + 1, 2 * n, dmax(n, m), floordiv(64 * s * dmax(m, n), n), mod(6 * n, 4), n * 0 + 1, n * 0]
OPS = [eq, ne, le, lt, ge, gt]


@pytest.mark.parametrize("op", OPS, ids=[f.__name__ for f in OPS])
def test_memoized_equals_fresh(op: object) -> None:
    for a in DIMS:
        for b in [*DIMS, 0, 1, 5]:
            conds._cmp_dims.cache_clear()
            fresh = op(a, b)  # type: ignore[operator]
            again = op(a, b)  # type: ignore[operator]
            assert again == fresh and str(again) == str(fresh)
            assert hash(again) == hash(fresh)


@pytest.mark.parametrize("bad", [True, False, 1.0, "1"])
def test_not_a_dimension_is_refused_after_its_look_alike_was_cached(bad: object) -> None:
    assert str(eq(n, 1)) == "n == 1" and str(eq(s, 0)) == "s == 0"
    with pytest.raises(SymshapeError):
        eq(n, bad)  # type: ignore[arg-type]
    with pytest.raises(SymshapeError):
        eq(s, bad)  # type: ignore[arg-type]
