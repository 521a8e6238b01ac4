"""``Attrs.items()``/``values()`` iterate the stored pairs directly; they are what the ``Mapping``
mixins give (a view looking each name up again) and what a dict of the same pairs gives."""

from __future__ import annotations

from collections.abc import ItemsView, Mapping, ValuesView

from hypothesis import given
from hypothesis import strategies as st

from symshape.encoding.attrs import Attrs

_values = st.recursive(
    st.one_of(st.integers(), st.text(max_size=3), st.booleans(), st.none()),
    lambda inner: st.lists(inner, max_size=3),
    max_leaves=6,
)


@given(st.dictionaries(st.text(min_size=1, max_size=4), _values, max_size=6))
def test_views_are_the_mapping_ones(d: dict[str, object]) -> None:
    a = Attrs(d)
    items, values = a.items(), a.values()
    assert isinstance(items, ItemsView) and isinstance(values, ValuesView)
    assert list(items) == list(Mapping.items(a)) == [(k, a[k]) for k in sorted(d)]
    assert list(values) == list(Mapping.values(a))
    assert len(items) == len(values) == len(d)
    assert items == dict(a).items()
    for pair in Mapping.items(a):
        assert pair in items
    assert ("\0", 0) not in items
