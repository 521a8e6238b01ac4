"""The unifier's fast paths agree with the general ones.

* :meth:`Unifier._rec` unifies the first levels of nesting by direct recursion (holes, tuples,
  function types); past ``_REC_LIMIT`` levels the iterative generator-driven path does the same
  work. With the limit at 0 every pair takes the iterative path: results, resolved holes, error
  codes and messages must be the same (up to the numbering of fresh holes and unknowns).
* The unchecked constructors (``tuple_of_checked``, ``func_of_checked``) and the solver's fast
  relation origin build the same objects as the checked ones.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hole_names import number_by_appearance

import symshape as ss
import symshape.solver.unify as unify_mod
from symshape.encoding.dims import const
from symshape.encoding.types import func_of_checked, tuple_of_checked
from symshape.solver.solve import _relation_origin_fast, _relation_origin_plain

T = ss.Tensor
n, s = ss.dims("n s")
_DIMS = [n, s, 2 * n, const(3), const(4)]


def _type_strategy(holes: list[ss.IncompleteType], dvars: list[ss.Dim]) -> st.SearchStrategy[ss.Type]:
    dim = st.sampled_from(_DIMS + dvars)
    tensor = st.builds(lambda ds: T(tuple(ds)), st.lists(dim, min_size=0, max_size=3))
    leaf = st.one_of(tensor, st.sampled_from(holes))

    def extend(inner: st.SearchStrategy[ss.Type]) -> st.SearchStrategy[ss.Type]:
        tup = st.builds(lambda fs: ss.TupleType(fs), st.lists(inner, min_size=0, max_size=3))
        fn = st.builds(lambda ps, r: ss.FuncType(ps, r), st.lists(inner, max_size=2), inner)
        return st.one_of(tup, fn)

    return st.recursive(leaf, extend, max_leaves=8)


def _generic_fn(i: int) -> ss.FuncType:
    a = ss.TypeVar(f"a{i}")
    return ss.FuncType((a, T((n,))), ss.TupleType((a, a)), type_params=(a,))


def _run(pairs: list[tuple[ss.Type, ss.Type]], probes: list[ss.Type], limit: int) -> list[str]:
    old = unify_mod._REC_LIMIT
    unify_mod._REC_LIMIT = limit
    try:
        solver = ss.TypeSolver()
        out = [str(solver.unify(x, y)) for x, y in pairs]
        sol = solver.solve()
        out += [str(sol.resolve(p)) for p in probes]
        out += [f"{d.code}: {d.message}" for d in sol.errors]
        out += [str(g) for g in sol.guards]
        return [number_by_appearance(" | ".join(out))]
    finally:
        unify_mod._REC_LIMIT = old


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_direct_recursion_equals_the_iterative_path(data: st.DataObject) -> None:
    holes = [ss.IncompleteType() for _ in range(4)]
    dvars = [ss.TypeSolver().fresh_dim() for _ in range(2)]
    types = _type_strategy(holes, dvars)
    generic = st.integers(0, 3).map(_generic_fn)
    side = st.one_of(types, generic)
    pairs = data.draw(st.lists(st.tuples(side, side), min_size=1, max_size=4))
    probes: list[ss.Type] = [*holes, *(x for x, _ in pairs)]
    assert _run(pairs, probes, 48) == _run(pairs, probes, 0)


@pytest.mark.parametrize("limit", [0, 48])
def test_the_workload_d_chain_resolves_the_same_either_way(limit: int) -> None:
    from benchmarks.workloads import unification_pairs

    solver, pairs, probes = unification_pairs(12)
    old = unify_mod._REC_LIMIT
    unify_mod._REC_LIMIT = limit
    try:
        for x, y in pairs:
            solver.unify(x, y)
    finally:
        unify_mod._REC_LIMIT = old
    sol = solver.solve()
    assert sol.ok
    assert str(sol.resolve(probes[-1])) == "Tensor[(n, s, 64), float32]"
    assert all("?" not in str(sol.resolve(p)) for p in probes)


def test_unchecked_constructors_build_the_checked_objects() -> None:
    a = ss.TypeVar("a")
    fields = (T((n, 3)), ss.IncompleteType(), a)
    assert tuple_of_checked(fields) == ss.TupleType(fields)
    assert hash(tuple_of_checked(fields)) == hash(ss.TupleType(fields))
    rel = ss.TypeRelation("broadcast", (T((n,)), T((n,)), T((n,))))
    checked = ss.FuncType(fields, a, (a,), (rel,), False)
    fast = func_of_checked(fields, a, (a,), (rel,), False)
    assert fast == checked and hash(fast) == hash(checked)
    assert str(fast) == str(checked) and repr(fast) == repr(checked)


def test_the_fast_relation_origin_equals_the_constructed_one() -> None:
    span = ss.Span("f.py", 3, 1) if hasattr(ss, "Span") else None
    fast, plain = _relation_origin_fast("add", span, 7), _relation_origin_plain("add", span, 7)
    for f in dataclasses.fields(plain):
        if f.name != "seq":
            assert getattr(fast, f.name) == getattr(plain, f.name)
    assert plain.seq == fast.seq + 1  # numbered from the one counter, in creation order
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.label = "other"  # type: ignore[misc]
