"""Admission's one-walk scan (:func:`symshape.solver.holes.admission_scan`) against the walks it
replaces: :func:`shape_dims` for whether a ``?`` may occur, and :func:`nonneg_conditions` over every
dimension for the conditions stated (same conditions, same messages, same order)."""

from __future__ import annotations

import pytest

import symshape as ss
from symshape.encoding.dims import const, fresh_join
from symshape.solver.holes import admission_scan, nonneg_conditions, shape_dims

n, s = ss.dims("n s")

TYPES = [
    "Tensor[(n, 3), float32]",
    "Tensor[(), float32]",
    "Tensor[(0, 2 * n, n**2), float32]",
    "Tensor[(n - 1, n * s, n // 2, max(n, s)), float32]",
    "Tensor[(-n + 5, min(n, 4), n - s), float32]",
    "Tensor[(?, 3), float32]",
    "Tensor[(n, 2 * ?), float32]",
    "Tensor[(max(?, n),), float32]",
    "Tensor[(3,), int64] = (n, s, 64)",
    "List[Tensor[(n - 3,), int32]]",
    "(Tensor[(n - 1,), int8], (Tensor[(s - 2, n), int8], Tensor[(n - 1,), int8]), ())",
    "fn<a>(a, Tensor[(n - 2,), float32]) -> a where broadcast(a, Tensor[(s - 2,), float32], a)",
    "fn(Tensor[(n,), int8], (Tensor[(s - 1,), int8],)) -> (Tensor[(n - 4,), int8], Tensor[(?, n), int8])",
    "fn(Tensor[(n,), float32]) -> fn(Tensor[(?,), float32]) -> Tensor[(n - 1,), float32]",
]


def _cases() -> list[ss.Type]:
    out: list[ss.Type] = [ss.parse_type(x) for x in TYPES]
    j = fresh_join([n - 1, const(4)])  # a join: an ``AnyDim`` with alternatives
    out.append(ss.Tensor((j, n), "float32"))
    out.append(ss.TupleType((ss.Tensor((n,), "float32"), ss.Tensor((-j + 9,), "float32"))))
    out.append(ss.Tensor(None, "float32"))
    out.append(ss.IncompleteType())
    return out


@pytest.mark.parametrize("t", _cases(), ids=str)
def test_scan_agrees_with_the_walks_it_replaces(t: ss.Type) -> None:
    anon, dims = shape_dims(t)
    todo = admission_scan(t)
    assert (todo is None) == anon
    if todo is None:
        return
    assert set(todo) <= set(dims)
    full = list(nonneg_conditions(t, set()))
    assert list(nonneg_conditions(t, set(), todo)) == full
    assert [str(d) for d in todo if not isinstance(t, ss.IncompleteType)] == [
        str(d) for d in dims if d in set(todo)
    ]  # iter_dims order


def test_scan_finds_what_needs_a_condition() -> None:
    t = ss.parse_type("(Tensor[(n, 3), int8], fn(Tensor[(s - 2,), int8]) -> Tensor[(n - 1, n * s), int8])")
    todo = admission_scan(t)
    assert todo is not None and [str(d) for d in todo] == ["s - 2", "n - 1", "n*s"]
    # symbols are >= 1: only ``s - 2`` may be negative
    assert [m for _, m in nonneg_conditions(t, set(), todo)] == ["dimension `s - 2` may be negative"]


@pytest.mark.parametrize("strict", [False, True])
def test_solver_reports_are_unchanged_by_the_scan(strict: bool) -> None:
    # a unification whose admission states conditions: guards (or strict errors) in dims order
    solver = ss.TypeSolver(strict=strict)
    h = solver.hole()
    a = ss.parse_type("(Tensor[(n - 2,), int8], fn(Tensor[(s - 2,), int8]) -> Tensor[(?, 3 - n), int8])")
    solver.unify(h, a)
    sol = solver.solve()
    want = ["n - 2 >= 0", "s - 2 >= 0", "-n + 3 >= 0"]
    assert [str(g.cond) for g in solver.guards] == want
    assert sol.status == ("error" if strict else "guarded")
    assert [e.code for e in solver.errors] == (["unproven-guard"] * 3 if strict else [])
    assert [e.message.split("`")[1] for e in solver.errors] == (want if strict else [])


def test_admit_settled_is_admit_of_a_constant_shape() -> None:
    """``admit_settled`` (a weight's annotation of constant shape) records what ``admit`` records:
    the same type object (a copy when the object already annotates another place), the annotation
    as its source, no condition; a type with a value goes through ``admit`` itself."""
    from symshape.solver.origins import annotation_origin
    from symshape.solver.solve import TypeSolver

    w = ss.Tensor((3, 4), "float32")
    valued = ss.parse_type("Tensor[(3,), int64] = (n, s, 64)")
    assert isinstance(valued, ss.TensorType) and w._cshape and valued._cshape
    results = []
    for method in ("admit", "admit_settled"):
        solver = TypeSolver()
        o1, o2, o3 = (annotation_origin(f"w{i}", w, None, None) for i in range(3))
        first = getattr(solver, method)(w, o1)
        again = getattr(solver, method)(w, o1)  # (the same place: the same object)
        other = getattr(solver, method)(w, o2)  # another place: its own occurrence
        v = getattr(solver, method)(valued, o3)
        assert first is w and again is w and other is not w and other == w
        assert solver.sources[id(other)] == (other, o2) and solver.sources[id(w)] == (w, o1)
        assert solver._admitted[id(other)] is other
        results.append((len(solver.sources), len(solver.guards), str(v), v is valued))
    assert results[0] == results[1]
