"""Hypothesis strategies for symbolic dimensions shared by the property tests of shape values."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

import symshape as ss

__all__ = ["signed_entries"]


@st.composite
def signed_entries(
    draw: Any,
    syms: Sequence[ss.Dim],
    sizes: tuple[int, int],
    consts: tuple[int, int] = (-9, 9),
    coefs: tuple[int, int] = (-3, 3),
    offsets: tuple[int, int] = (-9, 9),
) -> tuple[ss.Dim, ...]:
    """Between ``sizes[0]`` and ``sizes[1]`` entries that may be negative: constants in ``consts``,
    or ``a*sym + b`` with ``a`` in ``coefs`` (never 0) and ``b`` in ``offsets``."""
    out = []
    for _ in range(draw(st.integers(*sizes))):
        if draw(st.booleans()):
            out.append(ss.parse_dim(str(draw(st.integers(*consts)))))
        else:
            a = draw(st.integers(*coefs).filter(lambda v: v != 0))
            out.append(a * draw(st.sampled_from(syms)) + draw(st.integers(*offsets)))
    return tuple(out)
