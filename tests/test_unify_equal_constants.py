"""The logging unifier's shortcut for two equal tensor types of constant shape (``unify_tensors``:
a weight bound to a copy of its annotation) gives what the general path (``unify``) gives: the same
object, the same log entry, no conflict; any other pair (different sizes, dtypes, values, a
symbolic size) still takes the general path, conflicts included."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import symshape as ss
from symshape.encoding.types import TensorType
from symshape.relations.values import constant_type
from symshape.solver.diagnostics import Origin
from symshape.solver.solve import TypeSolver

n = ss.dim("n")


def _tensor(shape: list[int], dtype: str, kind: str) -> TensorType:
    if kind == "value" and dtype == "int64" and len(shape) == 1:
        return constant_type(ss.Tensor(tuple(shape), dtype), np.arange(shape[0]))
    if kind == "symbolic" and shape:
        return ss.Tensor((n, *shape[1:]), dtype)
    return ss.Tensor(tuple(shape), dtype)


def _unify(a: TensorType, b: TensorType, general: bool) -> tuple[object, ...]:
    s = TypeSolver()
    u = s.unifier
    o = Origin("unify", "binding `w`")
    got = u.unify(a, b, o) if general else u.unify_tensors(a, b, o)
    log = [(x is a, y is b, z is o) for x, y, z in s.unify_log]
    return (got is a, got is b, got == a, log, [e.message for e in s.errors])


@settings(max_examples=200, deadline=None)
@given(
    shape=st.lists(st.integers(0, 4), max_size=3),
    other=st.lists(st.integers(0, 4), max_size=3),
    same=st.booleans(),
    dtypes=st.tuples(st.sampled_from(["float32", "int64"]), st.sampled_from(["float32", "int64"])),
    kinds=st.tuples(*[st.sampled_from(["plain", "plain", "value", "symbolic"])] * 2),
)
def test_shortcut_is_the_general_path(
    shape: list[int], other: list[int], same: bool, dtypes: tuple[str, str], kinds: tuple[str, str]
) -> None:
    a = _tensor(shape, dtypes[0], kinds[0])
    b = _tensor(shape if same else other, dtypes[1], kinds[1])
    assert _unify(a, b, False) == _unify(a, b, True)


def test_equal_copies_take_the_shortcut() -> None:
    a, b = ss.Tensor((3, 4), "float32"), ss.Tensor((3, 4), "float32")
    s = TypeSolver()
    calls = 0
    rec = s.unifier._rec

    def counting(*args: object) -> object:
        nonlocal calls
        calls += 1
        return rec(*args)  # type: ignore[arg-type]

    s.unifier._rec = counting  # type: ignore[method-assign]
    assert s.unifier.unify_tensors(a, b, Origin("unify", "w")) is a and calls == 0
    assert s.unifier.unify_tensors(a, ss.Tensor((3, 5), "float32"), Origin("unify", "v")) is not None
    assert calls == 1
    assert len(s.unify_log) == 2


def test_table_of_pairs_next_to_the_shortcut() -> None:
    plain = ss.Tensor((3,), "int64")
    valued = constant_type(ss.Tensor((3,), "int64"), np.array([1, 2, 3]))
    other = constant_type(ss.Tensor((3,), "int64"), np.array([1, 2, 4]))
    ranged = ss.Tensor((3,), "int64", values=(0, 5))
    for a, b in [
        (plain, valued),
        (valued, plain),
        (valued, valued),
        (valued, other),
        (plain, ranged),
        (ranged, plain),
        (plain, ss.Tensor((n,), "int64")),
        (plain, ss.Tensor((3,), "int32")),
        (plain, ss.Tensor((3,), "int64")),
    ]:
        assert _unify(a, b, False) == _unify(a, b, True), (a, b)
