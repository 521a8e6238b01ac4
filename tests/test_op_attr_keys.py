"""The keys an operator remembers its checked attributes under (``ir.op._attrs_key``) tell apart
exactly the attribute values the general form of the key tells apart, and ``_immutable`` says
what the walk of every item says.

The key of a sequence of ints has a form of its own (``_SEQ_INTS``, a shortcut for the most
common attribute values): checked here against the general form (:func:`_general_key`, the
key item by item) on random nested values of every type a key takes (and some it refuses).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import symshape as ss
from symshape.encoding.dim_expr import const
from symshape.ir import op as op_mod

_SEQ = object()
_FLAT = (int, str, bool, type(None), ss.Dim)


def _general_seq(seq: Any) -> tuple[object, ...] | None:
    out: list[object] = [_SEQ]
    for x in seq:
        t = type(x)
        if t in _FLAT:
            out += [t, x]
        elif t is float:
            if x != x:
                return None
            out += [t, x if x else str(x)]
        elif t is tuple or t is list:
            sub = _general_seq(x)
            if sub is None:
                return None
            out.append(sub)
        else:
            return None
    return tuple(out)


def _general_key(nargs: int, attrs: dict[str, Any]) -> tuple[object, ...] | None:
    out: list[object] = [nargs]
    for k, v in attrs.items():
        t = type(v)
        if t in _FLAT:
            out += [k, t, v]
        elif t is float:
            if v != v:
                return None
            out += [k, t, v if v else str(v)]
        elif t is tuple or t is list:
            sub = _general_seq(v)
            if sub is None:
                return None
            out += [k, sub]
        else:
            return None
    return tuple(out)


def _general_immutable(v: Any) -> bool:
    t = type(v)
    return t in _FLAT or t is float or (t is tuple and all(_general_immutable(x) for x in v))


_leaf = st.one_of(
    st.integers(-3, 3),
    st.booleans(),
    st.sampled_from([0.0, -0.0, 1.0, float("nan"), 2.5]),
    st.sampled_from(["a", "b", ""]),
    st.none(),
    st.sampled_from([const(1), const(2)]),
    st.just(object()),
)
_value = st.recursive(
    _leaf,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.lists(inner, max_size=3).map(tuple)),
    max_leaves=8,
)
_attrs = st.dictionaries(st.sampled_from(["axis", "pads", "mode"]), _value, max_size=3)


@settings(max_examples=400, deadline=None)
@given(_attrs, _attrs, st.integers(0, 2))
def test_attribute_keys_tell_apart_what_the_general_form_tells_apart(
    a: dict[str, Any], b: dict[str, Any], nargs: int
) -> None:
    ka, kb = op_mod._attrs_key(nargs, a), op_mod._attrs_key(nargs, b)
    ga, gb = _general_key(nargs, a), _general_key(nargs, b)
    assert (ka is None) == (ga is None) and (kb is None) == (gb is None)
    if ka is not None and kb is not None:
        assert (ka == kb) == (ga == gb)
        if ka == kb:
            assert hash(ka) == hash(kb)


@settings(max_examples=300, deadline=None)
@given(_value)
def test_immutable_is_the_walk_of_every_item(v: Any) -> None:
    assert op_mod._immutable(v) == _general_immutable(v)


def test_ints_of_a_list_and_a_tuple_share_a_key_and_bools_do_not() -> None:
    k = op_mod._attrs_key
    assert k(1, {"pads": [1, 2]}) == k(1, {"pads": (1, 2)})
    assert k(1, {"pads": (1, 0)}) != k(1, {"pads": (True, False)})
    assert k(1, {"pads": (1, 0)}) != k(1, {"pads": (1.0, 0.0)})
    assert k(1, {"pads": ()}) == k(1, {"pads": []}) != k(1, {"pads": ((),)})
    assert op_mod._immutable((1, 2)) and not op_mod._immutable((1, [2]))


def test_a_prepared_conv_keeps_its_attributes_by_key() -> None:
    x = ss.var("x", ss.Tensor((1, 3, 8, 8), "float32"))
    w = ss.var("w", ss.Tensor((4, 3, 3, 3), "float32"))
    one = ss.ops.conv2d(x, w, strides=(1, 1), padding=(1, 1, 1, 1))
    two = ss.ops.conv2d(x, w, strides=[1, 1], padding=[1, 1, 1, 1])
    other = ss.ops.conv2d(x, w, strides=(2, 2), padding=(1, 1, 1, 1))
    assert one.attrs is two.attrs and one.attrs != other.attrs
    fn = ss.Function([x, w], ss.Tuple([one, two, other]))
    assert str(ss.infer(fn).type_of(fn.body)) == (
        "(Tensor[(1, 4, 8, 8), float32], Tensor[(1, 4, 8, 8), float32], Tensor[(1, 4, 4, 4), float32])"
    )
