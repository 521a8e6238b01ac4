"""Zero-size dimensions (literal 0s and ``min=0`` symbols) follow numpy (issue 11).

Every relation is checked with shapes that contain zeros: concretely against numpy, and with
``min=0`` symbols whose values are then substituted (every guard must hold exactly when numpy
accepts the values, and the substituted type must be numpy's shape).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symshape as ss
from symshape.encoding.dims import Dim
from test_relations_common import numpy_result, run

F32 = "float32"
SETTINGS = settings(max_examples=40, deadline=None)

Shape = tuple[int, ...]


def _shapes_of(t: ss.Type, env: Mapping[Dim, int]) -> list[Shape]:
    if isinstance(t, ss.TupleType):
        return [s for f in t.fields for s in _shapes_of(f, env)]
    assert isinstance(t, ss.TensorType) and isinstance(t.shape, tuple), t
    out = []
    for d in t.shape:
        v = d.subs(env).constant_value  # type: ignore[arg-type]
        assert v is not None, (t, env)
        out.append(v)
    return [tuple(out)]


def symbolic_agrees(
    rel: str,
    shapes: Sequence[tuple[Dim | int, ...]],
    attrs: Mapping[str, Any] | None,
    np_fn: Callable[..., Any],
    values: Sequence[Mapping[Dim, int]],
    dtypes: Sequence[str] | None = None,
    nout: int = 1,
) -> None:
    """Infer once with symbols, then for every assignment: numpy runs exactly when the verdict is
    not an error and every guard holds, and then the substituted result is numpy's shape."""
    dts = list(dtypes or [F32] * len(shapes))
    sol, outs, _ = run(rel, [ss.Tensor(s, d) for s, d in zip(shapes, dts)], attrs, nout)
    assert sol.status != "inconclusive", sol
    for env in values:
        concrete = [tuple(int(d.subs(env)) if isinstance(d, Dim) else d for d in s) for s in shapes]
        expect = numpy_result(np_fn, concrete, dts)
        holds = sol.ok and all(g.holds(env) for g in sol.guards)
        guards = [str(g) for g in sol.guards]
        assert holds == (expect is not None), (rel, shapes, env, guards, sol.status, expect)
        if expect is not None:
            got = [s for o in outs for s in _shapes_of(o, env)]
            assert got == expect, (rel, [str(o) for o in outs], env, got, expect)


def _grid(*syms: Dim, hi: int = 3) -> list[dict[Dim, int]]:
    return [dict(zip(syms, vs)) for vs in itertools.product(range(hi + 1), repeat=len(syms))]


# -- the examples -------------------------------------------------------------------------


def test_broadcast_zero_against_one_is_zero() -> None:
    d0, d1 = ss.dim("d0", min=0), ss.dim("d1", min=0)
    x0 = ss.var("x0", ss.Tensor((2, d0, 2, d0), "bool"))
    x1 = ss.var("x1", ss.Tensor((d0, 2, d1), "bool"))
    b = ss.ops.logical_and(x0, x1)
    res = ss.infer(ss.Function([x0, x1], b))
    t = res.type_of(b)
    assert isinstance(t, ss.TensorType) and t.shape is not None
    assert t.shape[3].subs({d0: 0, d1: 1}) == 0  # numpy: (2, 0, 2, 0) & (0, 2, 1) -> (2, 0, 2, 0)
    assert np.logical_and(np.empty((2, 0, 2, 0), bool), np.empty((0, 2, 1), bool)).shape == (2, 0, 2, 0)
    symbolic_agrees(
        "broadcast",
        [(2, d0, 2, d0), (d0, 2, d1)],
        {},
        np.logical_and,
        _grid(d0, d1),
        dtypes=["bool", "bool"],
    )


def test_broadcast_of_symbols_at_least_one_keeps_max() -> None:
    n, m = ss.dims("n m")
    _, [out], _ = run("broadcast", [ss.Tensor((n,)), ss.Tensor((m,))])
    assert str(out) == "Tensor[(max(m, n),), float32]"


def test_reshape_of_zero_sized_tensor_counts_zero_elements() -> None:
    sol, [out], _ = run("reshape", ["Tensor[(0, 5, 0), float32]"], {"newshape": (0, 5, 0, 2)})
    assert sol.status == "ok", [e.message for e in sol.errors]
    assert str(out) == "Tensor[(0, 5, 0, 2), float32]"


def test_reshape_minus_one_with_a_zero_sized_remainder_is_an_error() -> None:
    # numpy: np.empty((0, 6)).reshape(0, -1) raises (-1 is undetermined)
    with pytest.raises(ValueError):
        np.empty((0, 6)).reshape(0, -1)
    sol, _, _ = run("reshape", ["Tensor[(0, 6), float32]"], {"newshape": (0, -1)})
    assert sol.status == "error" and [e.code for e in sol.errors] == ["reshape-size"]
    b = ss.dim("b", min=0)
    sol, [out], _ = run("reshape", [ss.Tensor((b, 6))], {"newshape": (0, -1)})
    assert sol.status == "guarded" and [str(g) for g in sol.guards] == ["b != 0"]
    assert str(out) == "Tensor[(b, 6), float32]"


def test_reshape_copied_zero_does_not_cancel() -> None:
    # (z, 5) -> (0, 10): 5*z elements vs 10*z, which holds only at z = 0
    z = ss.dim("z", min=0)
    symbolic_agrees("reshape", [(z, 5)], {"newshape": (0, 10)}, lambda x: x.reshape(x.shape[0], 10), _grid(z))


def test_reshape_to_symbolic_dims_that_may_be_zero() -> None:
    # (z0, 3) -> (z1, 3) is valid exactly when z0 == z1 (also at 0); with allowzero, (z0, 3) ->
    # (z1, 0) exactly when z0 == 0
    sol, [out], _ = run("reshape", [ss.Tensor((z0, 3))], {"newshape": (z1, 3)})
    assert [str(g) for g in sol.guards] == ["z0 == z1"] and str(out) == "Tensor[(z1, 3), float32]"
    sol, [out], _ = run("reshape", [ss.Tensor((z0, 3))], {"newshape": (z1, 0), "allowzero": True})
    for v0, v1 in itertools.product(range(3), repeat=2):
        ok = numpy_result(lambda x, a=v1: x.reshape(a, 0), [(v0, 3)], [F32]) is not None
        assert ok == all(g.holds({z0: v0, z1: v1}) for g in sol.guards), (v0, v1)


def test_take_from_a_possibly_empty_axis_is_a_guard() -> None:
    z = ss.dim("z", min=0)
    sol, _, _ = run("take", [ss.Tensor((z, 3)), ss.Tensor((4,), "int32")], {"axis": 0})
    assert sol.status == "guarded"
    assert not all(g.holds({z: 0}) for g in sol.guards) and all(g.holds({z: 2}) for g in sol.guards)
    sol, _, _ = run("take", ["Tensor[(0, 3), float32]", "Tensor[(4,), int32]"], {"axis": 0})
    assert sol.status == "error"
    sol, _, _ = run("take", ["Tensor[(0, 3), float32]", "Tensor[(0,), int32]"], {"axis": 0})
    assert sol.status == "ok"  # no indices: nothing is read


def test_conv_kernel_that_may_be_zero_is_a_guard() -> None:
    k = ss.dim("k", min=0)
    sol, _, _ = run("conv2d", [ss.Tensor((1, 3, 8, 8)), ss.Tensor((4, 3, k, 3))])
    assert sol.status == "guarded"
    assert "k >= 1" in [str(g) for g in sol.guards]


# -- every relation, with min=0 symbols, against numpy ---------------------------------------------

Z = [ss.dim(f"z{i}", min=0) for i in range(3)]


def _split_12(x: np.ndarray) -> list[np.ndarray]:
    return _split_idx(x, (1, 2))


def _flat1(x: np.ndarray) -> np.ndarray:
    return x.reshape(x.shape[0], int(np.prod(x.shape[1:])))


def _rev2(x: np.ndarray) -> np.ndarray:
    return x[::-2]


z0, z1, z2 = Z

CASES: list[tuple[str, list[tuple[Any, ...]], dict[str, Any], Callable[..., Any], list[str] | None, int]] = [
    ("broadcast", [(z0, 3), (1, 3)], {}, np.add, None, 1),
    ("broadcast", [(z0,), (z1,)], {}, np.add, None, 1),
    ("broadcast", [(z0, 1), (1, z1)], {}, np.add, None, 1),
    ("broadcast", [(z0,), (0,)], {}, np.add, None, 1),
    ("where", [(z0, 1), (1, z1), (z0, z1)], {}, np.where, ["bool", F32, F32], 1),
    ("reshape", [(z0, 6)], {"newshape": (-1, 3)}, lambda x: x.reshape(-1, 3), None, 1),
    ("reshape", [(z0, 6)], {"newshape": (-1,)}, lambda x: x.reshape(-1), None, 1),
    ("reshape", [(2, z0, 3)], {"newshape": (0, -1)}, lambda x: x.reshape(x.shape[0], -1), None, 1),
    ("reshape", [(z0, z1)], {"newshape": (-3,)}, lambda x: x.reshape(-1), None, 1),
    ("reshape", [(z0, 4)], {"newshape": (-4, 2, -1, 4)}, lambda x: x.reshape(2, -1, 4), None, 1),
    ("flatten", [(z0, 2, z1)], {"axis": 1}, _flat1, None, 1),
    ("concatenate", ["tuple", (z0, 2), (z1, 2)], {"axis": 0}, lambda a, b: np.concatenate([a, b]), None, 1),
    ("stack", ["tuple", (z0, 2), (z0, 2)], {"axis": 1}, lambda a, b: np.stack([a, b], 1), None, 1),
    ("split", [(z0, 3)], {"indices_or_sections": 3, "axis": 0}, lambda x: np.split(x, 3, 0), None, 1),
    ("split", [(z0, 3)], {"indices_or_sections": (1, 2), "axis": 0}, _split_12, None, 1),
    ("transpose", [(z0, 2, z1)], {"axes": (2, 0, 1)}, lambda x: x.transpose(2, 0, 1), None, 1),
    ("squeeze", [(0, 1, 3)], {"axis": None}, np.squeeze, None, 1),
    ("squeeze", [(z0, 3)], {"axis": (0,)}, lambda x: np.squeeze(x, 0), None, 1),
    ("expand_dims", [(z0, 3)], {"axis": 1}, lambda x: np.expand_dims(x, 1), None, 1),
    ("broadcast_to", [(z0, 1)], {"shape": (z0, 4)}, lambda x: np.broadcast_to(x, (x.shape[0], 4)), None, 1),
    ("broadcast_to", [(1, z0)], {"shape": (3, 2)}, lambda x: np.broadcast_to(x, (3, 2)), None, 1),
    ("reduce", [(z0, 3)], {"axis": 0}, lambda x: x.sum(0), None, 1),
    ("reduce_nonempty", [(z0, 3)], {"axis": 0}, lambda x: x.max(0), None, 1),
    ("reduce_nonempty", [(z0, 3)], {"axis": 1}, lambda x: x.max(1), None, 1),
    ("arg_reduce", [(z0, z1)], {"axis": None}, lambda x: np.argmax(x), None, 1),
    ("take", [(z0, 3), (z1,)], {"axis": 0}, lambda x, i: np.take(x, i, 0), [F32, "int32"], 1),
    ("take", [(z0, 3), (2,)], {"axis": None}, lambda x, i: np.take(x, i), [F32, "int32"], 1),
    ("strided_slice", [(z0, 4)], {"begin": (1,), "end": (-1,)}, lambda x: x[1:-1], None, 1),
    ("strided_slice", [(z0,)], {"begin": (None,), "end": (None,), "strides": (-2,)}, _rev2, None, 1),
    ("matmul", [(2, z0), (z0, 3)], {}, np.matmul, None, 1),
    ("matmul", [(z1, 2, z0), (z0, 3)], {}, np.matmul, None, 1),
    ("matmul", [(z0,), (z0,)], {}, np.matmul, None, 1),
    ("dense", [(z0, 4), (z1, 4)], {}, lambda x, w: x @ w.T, None, 1),
    ("batch_matmul", [(z0, 2, 3), (1, 4, 3)], {}, lambda x, y: np.matmul(x, y.transpose(0, 2, 1)), None, 1),
    ("pad", [(z0, 2)], {"pad_width": ((1, 0), (0, 2))}, lambda x: np.pad(x, ((1, 0), (0, 2))), None, 1),
]


def _split_idx(x: np.ndarray, idx: tuple[int, ...]) -> list[np.ndarray]:
    # Relay (and symshape) require the split points to lie within the axis; numpy would clamp
    if idx and idx[-1] > x.shape[0]:
        raise ValueError("split index beyond the axis")
    return np.split(x, list(idx), 0)


def _values(shapes: Sequence[Sequence[Any]], attrs: Mapping[str, Any] | None = None) -> list[dict[Dim, int]]:
    """Every assignment of 0..3 to the symbols of the shapes and of the attributes."""
    found: set[Dim] = set()
    todo: list[Any] = [*shapes, *(attrs or {}).values()]
    while todo:
        v = todo.pop()
        if isinstance(v, Dim):
            found |= v.symbols
        elif isinstance(v, (tuple, list)):
            todo.extend(v)
    return _grid(*sorted(found, key=str))


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_relation_with_possibly_empty_dims_matches_numpy(case: tuple[Any, ...]) -> None:
    rel, shapes, attrs, fn, dtypes, nout = case
    if shapes and shapes[0] == "tuple":
        # a tuple input: build it once, then compare per assignment
        fields = shapes[1:]
        sol, [out], _ = run(rel, [ss.TupleType([ss.Tensor(s, F32) for s in fields])], attrs)
        for env in _values(fields):
            conc = [tuple(int(d.subs(env)) if isinstance(d, Dim) else d for d in s) for s in fields]
            expect = numpy_result(fn, conc, [F32] * len(conc))
            holds = sol.ok and all(g.holds(env) for g in sol.guards)
            assert holds == (expect is not None), (rel, env, [str(g) for g in sol.guards])
            if expect is not None:
                assert _shapes_of(out, env) == expect
        return
    symbolic_agrees(rel, shapes, attrs, fn, _values(shapes, attrs), dtypes, nout)


@SETTINGS
@given(
    st.lists(st.integers(0, 3), min_size=1, max_size=3),
    st.lists(st.integers(0, 3), min_size=1, max_size=3),
)
def test_concrete_broadcast_with_zeros_matches_numpy(a: list[int], b: list[int]) -> None:
    expect = numpy_result(np.add, [tuple(a), tuple(b)], [F32, F32])
    sol, [out], _ = run("broadcast", [ss.Tensor(tuple(a)), ss.Tensor(tuple(b))])
    if expect is None:
        assert sol.status == "error"
    else:
        assert sol.status == "ok" and _shapes_of(out, {}) == expect


@SETTINGS
@given(st.lists(st.integers(0, 3), min_size=1, max_size=3), st.data())
def test_concrete_reshape_with_zeros_matches_numpy(shape: list[int], data: st.DataObject) -> None:
    size = int(np.prod(shape))
    new = data.draw(st.lists(st.integers(-1, 4), min_size=1, max_size=3).filter(lambda s: s.count(-1) <= 1))
    # Relay's 0 copies the input dimension: compare with numpy on the explicit shape
    explicit = []
    for i, v in enumerate(new):
        if v == 0:
            if i >= len(shape):
                return
            explicit.append(shape[i])
        else:
            explicit.append(v)
    expect = numpy_result(lambda x: x.reshape(explicit), [tuple(shape)], [F32])
    sol, [out], _ = run("reshape", [ss.Tensor(tuple(shape))], {"newshape": tuple(new)})
    if expect is None:
        assert sol.status == "error", (shape, new, size, str(out))
    else:
        assert sol.status == "ok", (shape, new, [e.message for e in sol.errors])
        assert _shapes_of(out, {}) == expect
