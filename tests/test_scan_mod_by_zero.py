"""Guard simplification's scan of one symbol's values (``encoding.simplify.scan_one_symbol``)
meets a value where the condition means nothing (``x % d`` at ``d = 0``): no pattern, not an
error (it raised ``bad-dim`` from inside guard simplification: helper tz's note)."""

from __future__ import annotations

import symshape as ss
from symshape.encoding.conds import eq
from symshape.encoding.simplify import scan_one_symbol


def test_a_modulo_by_a_symbol_that_may_be_0_is_no_pattern() -> None:
    x, d = ss.dim("x", min=0), ss.dim("d", min=0)
    assert scan_one_symbol(eq(x % d, 0), d.atom) is None  # type: ignore[arg-type]


def test_a_modulo_by_a_constant_still_scans() -> None:
    k = ss.dim("k", min=0)
    assert str(scan_one_symbol(eq(k % 3, 0), k.atom)) == "k % 3 == 0"  # type: ignore[arg-type]
