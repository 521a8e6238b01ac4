"""The *settled* flag composite types compute when built (:func:`type_settled`: admitting the type
has nothing to do) against the walks it lets admission skip: on random types the flag is exactly
"no ``?`` may occur (:func:`shape_dims`) and every shape dimension is nonnegative at a glance (the
first test of :func:`nonneg_conditions`)", and :func:`admission_scan` gives the same answer for a
type with flags as for the same type without them (a deep copy drops the cached flags)."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symshape as ss
from symshape.encoding.composite_types import type_settled
from symshape.encoding.dims import AnyDim, DimVar, Sym, const, fresh_any, fresh_dimvar, fresh_join
from symshape.encoding.leaf_types import tensor_settled
from symshape.encoding.types import func_of_checked, iter_types, tuple_of_checked
from symshape.solver.holes import admission_scan, shape_dims

n, s = ss.dims("n s")
_U = fresh_dimvar()
_ANON = ss.parse_type("Tensor[(?,), float32]").dims[0]  # ``?``: numbered when admitted
_DIMS = [
    n, s, const(0), const(3), 2 * n, n**2, -n + 5, n - 1, n * s, n // 2, _ANON,
    2 * _ANON, fresh_any(), 3 * fresh_any(), -fresh_any(), fresh_join([n - 1, const(4)]),
    _U, 2 * _U, _U - 1, -_U,
]
_TV = [ss.TypeVar("a"), ss.TypeVar("b")]


def _glance(d: ss.Dim) -> bool:
    """:func:`nonneg_conditions`'s first test: nonnegative without looking at bounds."""
    terms = d.terms
    if not terms or (len(terms) == 1 and not terms[0][0]):
        return True
    if len(terms) != 1:
        return False
    m, k = terms[0]
    a = m[0][0]
    leaf = type(a) in (Sym, AnyDim, DimVar) and not (type(a) is AnyDim and a.alts)
    return k > 0 and len(m) == 1 and leaf


def _oracle(t: ss.Type) -> bool:
    anon, dims = shape_dims(t)
    return not anon and all(_glance(d) for d in dims)


tensors = st.one_of(
    st.builds(lambda ds: ss.Tensor(tuple(ds), "float32"), st.lists(st.sampled_from(_DIMS), max_size=3)),
    st.just(ss.Tensor(None, "float32")),
    st.builds(lambda v: ss.Tensor((3,), "int64", value=v), st.tuples(*[st.sampled_from([n, s, 4])] * 3)),
    st.builds(lambda d: ss.Tensor((d,), "int64", values=(0, 9)), st.sampled_from([n, s - 1])),
)
leaves = st.one_of(tensors, st.sampled_from(_TV), st.builds(ss.IncompleteType), st.just(ss.ObjectType()))


def _extend(kids: st.SearchStrategy[ss.Type]) -> st.SearchStrategy[ss.Type]:
    return st.one_of(
        st.lists(kids, max_size=3).map(ss.TupleType),
        st.builds(lambda ps, r: ss.FuncType(ps, r, _TV), st.lists(kids, max_size=2), kids),
        st.builds(
            lambda ps, r, x: ss.FuncType(ps, r, _TV, [ss.TypeRelation("broadcast", [*ps, x, r])]),
            st.lists(kids, max_size=2),
            kids,
            kids,
        ),
        st.lists(kids, min_size=1, max_size=2).map(lambda a: ss.TypeCall(ss.GlobalTypeVar("List"), a)),
        # the solver's unchecked constructors leave the flag to be computed on demand
        st.lists(kids, max_size=3).map(lambda fs: tuple_of_checked(tuple(fs))),
        st.builds(
            lambda ps, r: func_of_checked(tuple(ps), r, (), (), True), st.lists(kids, max_size=2), kids
        ),
    )


types = st.recursive(leaves, _extend, max_leaves=10)


def _scan_text(t: ss.Type) -> list[str] | None:
    todo = admission_scan(t)
    return None if todo is None else [str(d) for d in todo]


@settings(max_examples=400, deadline=None)
@given(types)
def test_flag_is_the_walks_answer(t: ss.Type) -> None:
    bare = copy.deepcopy(t)  # the same type, no node holding a cached flag
    assert all("_settled" not in vars(x) for x in iter_types(bare) if hasattr(x, "__dict__"))
    want = _oracle(t)
    assert type_settled(t) == want
    assert type_settled(bare) == want
    assert _scan_text(t) == _scan_text(copy.deepcopy(t))
    assert (_scan_text(t) == []) == want
    for x in iter_types(t):  # every node's flag agrees too
        assert type_settled(x) == _oracle(x)


@pytest.mark.parametrize("d", _DIMS, ids=str)
def test_tensor_flag_per_dimension(d: ss.Dim) -> None:
    t = ss.Tensor((n, d), "float32")
    assert tensor_settled(t) == _oracle(t)
    assert type_settled(ss.TupleType([t, ss.IncompleteType()])) == _oracle(t)


def test_flag_is_not_pickled_and_bad_fields_still_fail() -> None:
    t = ss.TupleType([ss.Tensor((n - 1,), "float32")])
    assert t._settled is False
    assert "_settled" not in t.__getstate__()
    assert ss.TupleType([ss.Tensor((n,), "float32"), ss.IncompleteType()])._settled is True
    with pytest.raises(ss.SymshapeError, match="expected a type"):
        ss.TupleType([ss.Tensor((n,), "float32"), 3])  # type: ignore[arg-type]
    with pytest.raises(ss.SymshapeError, match="expected a type"):
        ss.FuncType([], "x")  # type: ignore[arg-type]
