"""``GenScope.scan_attrs`` skips the attribute values that hold no dimension (ints, strings,
tuples of them) without walking them; it notes the same symbols, in the same order, as the plain
walk of every value."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import symshape as ss
from symshape.encoding.attrs import Attrs
from symshape.encoding.dims import Dim, as_dim
from symshape.ir.scope import GenScope
from symshape.solver.solve import TypeSolver

_N, _M = ss.dims("n m")
_dims = st.sampled_from([_N, _M, 2 * _N, _M - 1, as_dim(3)])
_leaf = st.one_of(st.integers(-3, 9), st.text(max_size=2), st.booleans(), st.none(), st.floats(0, 1), _dims)
_values = st.recursive(_leaf, lambda inner: st.lists(inner, max_size=3).map(tuple), max_leaves=8)


def _plain_walk(attrs: Attrs) -> list[Dim]:
    """The walk scan_attrs made of every value: the symbolic dimensions, in the order noted."""
    out: list[Dim] = []
    stack: list[object] = [v for _, v in attrs.items()]
    while stack:
        v = stack.pop()
        if type(v) is Dim:
            if not v.is_constant:
                out.append(v)
        elif type(v) is tuple:
            stack.extend(v)
    return out


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.text("abcdef", min_size=1, max_size=3), _values, max_size=6))
def test_scan_notes_what_the_plain_walk_notes(d: dict[str, Any]) -> None:
    attrs = Attrs(d)
    gen = GenScope(TypeSolver(), None)
    noted: list[Dim] = []
    setattr(gen, "note_syms", lambda dim, span: noted.append(dim))  # noqa: B010  (records the calls)
    gen.scan_attrs(attrs, None)
    assert [str(x) for x in noted] == [str(x) for x in _plain_walk(attrs)]
    assert all(a is b for a, b in zip(noted, _plain_walk(attrs)))
    gen.scan_attrs(attrs, None)  # (each attributes object once)
    assert len(noted) == len(_plain_walk(attrs))
