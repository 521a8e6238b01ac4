"""Function types equal up to renaming of type parameters unify without instantiation.

:func:`symshape.solver.unify_funcs.func_sides` skips instantiating the general side when
:func:`~symshape.solver.unify_funcs.renames` says it is the rigid side with its type parameters
renamed. With ``renames`` disabled every pair takes the general path (fresh holes, unified): the
unified type (and whether it is one side's own object), the resolved holes, errors and guards must
be the same.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hole_names import number_by_appearance

import symshape as ss
import symshape.solver.unify_funcs as funcs_mod

T, V = ss.Tensor, ss.TypeVar
n, s = ss.dims("n s")
SHARED = T((n, 3))  # one tensor object both sides may hold


def F(
    params: Sequence[ss.Type],
    ret: ss.Type,
    type_params: Sequence[ss.TypeVar] = (),
    relations: Sequence[ss.TypeRelation] = (),
    pure: bool = True,
) -> ss.FuncType:
    return ss.FuncType(tuple(params), ret, tuple(type_params), tuple(relations), pure)


def Tup(fields: Sequence[ss.Type]) -> ss.TupleType:
    return ss.TupleType(tuple(fields))


def _run(pairs: list[tuple[ss.Type, ss.Type]], probes: list[ss.Type], fast: bool) -> str:
    old = funcs_mod.renames
    if not fast:
        funcs_mod.renames = lambda rigid, gen: False
    try:
        solver = ss.TypeSolver()
        out = []
        for x, y in pairs:
            r = solver.unify(x, y)
            out.append(f"{r} {'a' if r is x else 'b' if r is y else 'new'}")
        sol = solver.solve()
        out += [str(sol.resolve(p)) for p in probes]
        out += [f"{d.code}: {d.message}" for d in sol.errors]
        out += [str(g) for g in sol.guards]
        return number_by_appearance(" | ".join(out))
    finally:
        funcs_mod.renames = old


def _cases() -> list[tuple[str, Callable[[], tuple[ss.Type, ss.Type, list[ss.Type]]]]]:
    a, b, c, d = V("a"), V("b"), V("c"), V("d")
    h = ss.IncompleteType()
    rel = ss.TypeRelation("broadcast", (T((n,)), T((n,)), T((n,))))
    return [
        ("identity", lambda: (F([a], a, [a]), F([b], b, [b]), [])),
        ("same names", lambda: (F([a], a, [a]), F([V("a")], V("a"), [V("a")]), [])),
        ("swapped", lambda: (F([a, c], a, [a, c]), F([c, a], c, [c, a]), [])),
        ("shared tensor", lambda: (F([a, SHARED], a, [a]), F([b, SHARED], b, [b]), [])),
        ("equal tensors", lambda: (F([a, T((n,))], a, [a]), F([b, T((n,))], b, [b]), [])),
        ("rigid tensor", lambda: (F([SHARED], SHARED), F([b], b, [b]), [])),
        ("two tensors", lambda: (F([T((n, 3))], T((n, 3))), F([b], b, [b]), [])),
        ("conflicting tensors", lambda: (F([T((n, 3))], T((s,))), F([b], b, [b]), [])),
        ("inconsistent", lambda: (F([a, c], a, [a, c]), F([b, b], b, [b, d]), [])),
        ("many to one", lambda: (F([a, a], a, [a]), F([b, d], b, [b, d]), [])),
        ("left general", lambda: (F([b, d], b, [b, d]), F([a, a], a, [a]), [])),
        ("left renamed", lambda: (F([b, d], d, [b, d]), F([a, c], c, [c, a]), [])),
        ("impure right", lambda: (F([a], a, [a]), F([b], b, [b], pure=False), [])),
        ("impure left", lambda: (F([a], a, [a], pure=False), F([b], b, [b]), [])),
        ("relations", lambda: (F([a], a, [a], [rel]), F([b], b, [b], [rel]), [])),
        ("hole", lambda: (F([h], h), F([b], b, [b]), [h])),
        ("tuple", lambda: (F([a], Tup([a, a]), [a]), F([b], Tup([b, b]), [b]), [])),
        ("free variable", lambda: (F([a], c, [a]), F([b], c, [b]), [])),
        ("shape kind", lambda: (F([V("k", "shape")], a, [a]), F([b], b, [b]), [])),
        ("arity", lambda: (F([a, a], a, [a]), F([b], b, [b]), [])),
    ]


@pytest.mark.parametrize("name, make", _cases(), ids=[c[0] for c in _cases()])
def test_renamed_function_types_unify_as_instantiated(
    name: str, make: Callable[[], tuple[ss.Type, ss.Type, list[ss.Type]]]
) -> None:
    x, y, probes = make()
    pairs: list[tuple[ss.Type, ss.Type]] = [(x, y), (y, x), (Tup([x, y]), Tup([y, x]))]
    assert _run(pairs, probes, True) == _run(pairs, probes, False)


def test_the_fast_path_is_taken_for_renamed_signatures() -> None:
    a, b = V("a"), V("b")
    assert funcs_mod.renames(F([a, SHARED], a, [a]), F([b, SHARED], b, [b]))
    assert not funcs_mod.renames(F([a, T((n,))], a, [a]), F([b, T((n,))], b, [b]))  # not one object
    x, y = F([a], a, [a]), F([b], b, [b])
    solver = ss.TypeSolver()
    assert solver.unify(x, y) is x
    assert not solver.unifier.resolved  # no fresh hole was made and bound


def _side(tvars: list[ss.TypeVar]) -> st.SearchStrategy[ss.FuncType]:
    leaf = st.sampled_from([*tvars, SHARED, T((n,)), T((s, 3)), V("free")])
    parts = st.lists(leaf, min_size=1, max_size=4)
    return st.builds(
        lambda ps, tps, pure: F(ps[:-1], ps[-1], tps, pure=pure),
        parts,
        st.lists(st.sampled_from(tvars), max_size=len(tvars), unique=True),
        st.booleans(),
    )


@settings(max_examples=200, deadline=None)
@given(_side([V("a"), V("c")]), _side([V("b"), V("d"), V("a")]))
def test_random_function_pairs_unify_the_same_with_and_without_the_fast_path(
    x: ss.FuncType, y: ss.FuncType
) -> None:
    pairs: list[tuple[ss.Type, ss.Type]] = [(x, y), (y, x)]
    assert _run(pairs, [], True) == _run(pairs, [], False)
