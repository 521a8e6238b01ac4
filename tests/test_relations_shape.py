"""Shape-manipulation relations: table of Relay behaviours, then numpy properties."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symshape as ss
from test_relations_common import against_numpy, check_row, rows, run, small_shape

F = "float32"

TABLE: list[tuple[Any, ...]] = [
    # flatten
    ("flatten", ["Tensor[(n, 3, 4), float32]"], {"axis": 1}, "Tensor[(n, 12), float32]"),
    ("flatten", ["Tensor[(n, 3, 4), float32]"], {"axis": -1}, "Tensor[(3*n, 4), float32]"),
    ("flatten", ["Tensor[(n, 3), float32]"], {"axis": 3}, "!axis-out-of-range"),
    # reshape: Relay's special values, symbolic element counts
    (
        "reshape",
        ["Tensor[(n, 6), float32]"],
        {"newshape": (-1, 4)},
        "Tensor[(3*n//2, 4), float32]",
        ["n % 2 == 0"],
    ),
    ("reshape", ["Tensor[(2, 3), float32]"], {"newshape": (7,)}, "!reshape-size"),
    ("reshape", ["Tensor[(2, 3), float32]"], {"newshape": (-1, 4)}, "!reshape-size"),
    ("reshape", ["Tensor[(n, 12), float32]"], {"newshape": (-1, 4)}, "Tensor[(3*n, 4), float32]", []),
    ("reshape", ["Tensor[(n, m, 6), float32]"], {"newshape": (0, -1)}, "Tensor[(n, 6*m), float32]", []),
    ("reshape", ["Tensor[(n + 1, 6), float32]"], {"newshape": (0, -1)}, "Tensor[(n + 1, 6), float32]", []),
    ("reshape", ["Tensor[(n, m), float32]"], {"newshape": (-1,)}, "Tensor[(m*n,), float32]", []),
    (
        "reshape",
        ["Tensor[(n, m), float32]"],
        {"newshape": (4, -1)},
        "Tensor[(4, m*n//4), float32]",
        ["m*n % 4 == 0"],
    ),
    ("reshape", ["Tensor[(2, 3, 4), float32]"], {"newshape": (-2,)}, "Tensor[(2, 3, 4), float32]"),
    ("reshape", ["Tensor[(2, 3, 4), float32]"], {"newshape": (0, -2)}, "Tensor[(2, 3, 4), float32]"),
    ("reshape", ["Tensor[(2, 3, 4), float32]"], {"newshape": (-3, 4)}, "Tensor[(6, 4), float32]"),
    ("reshape", ["Tensor[(n, t, 4), float32]"], {"newshape": (-3, -2)}, "Tensor[(n*t, 4), float32]"),
    ("reshape", ["Tensor[(6, 4), float32]"], {"newshape": (-4, 2, 3, 4)}, "Tensor[(2, 3, 4), float32]"),
    ("reshape", ["Tensor[(6, 4), float32]"], {"newshape": (-4, -1, 3, 4)}, "Tensor[(2, 3, 4), float32]"),
    (
        "reshape",
        ["Tensor[(n, 4), float32]"],
        {"newshape": (-4, 2, -1, 4)},
        "Tensor[(2, n//2, 4), float32]",
        ["n % 2 == 0"],
    ),
    ("reshape", ["Tensor[(6, 4), float32]"], {"newshape": (-4, 4, 2, 4)}, "!reshape-size"),
    ("reshape", ["Tensor[(2, 3), float32]"], {"newshape": (0, 0, 0)}, "!reshape-size"),
    ("reshape", ["Tensor[(2, 3), float32]"], {"newshape": (0, 3), "allowzero": True}, "!reshape-size"),
    ("reshape", ["Tensor[(n, 3), float32]"], {"newshape": (3, ss.dim("n"))}, "Tensor[(3, n), float32]", []),
    ("reshape", ["Tensor[?, float32]"], {"newshape": (3, 4)}, "Tensor[(3, 4), float32]"),
    ("reshape", ["Tensor[?, float32]"], {"newshape": (-2, 4)}, "Tensor[?, float32]"),
    ("reshape", ["Tensor[(2, 3), float32]"], {"newshape": (-1, -1)}, "!bad-attribute"),
    ("reshape", ["Tensor[(2, 3), float32]"], {"newshape": (-5,)}, "!bad-attribute"),
    # reshape_like
    (
        "reshape_like",
        ["Tensor[(n, 6), float32]", "Tensor[(3, 2, n), int32]"],
        {},
        "Tensor[(3, 2, n), float32]",
        [],
    ),
    ("reshape_like", ["Tensor[(2, 6), float32]", "Tensor[(5,), int32]"], {}, "!reshape-size"),
    # concatenate
    (
        "concatenate",
        ["(Tensor[(n, t, 100), float32], Tensor[(n, t, 100), float32])"],
        {"axis": 1},
        "Tensor[(n, 2*t, 100), float32]",
        [],
    ),
    (
        "concatenate",
        ["(Tensor[(n, 3), float32], Tensor[(m, 5), float32])"],
        {"axis": 1},
        "Tensor[(n, 8), float32]",
        ["n == m"],
    ),
    ("concatenate", ["(Tensor[(3, 3), float32], Tensor[(5, 5), float32])"], {"axis": 1}, "!shape-mismatch"),
    ("concatenate", ["(Tensor[(2, 3), float32], Tensor[(2, 3, 1), float32])"], {"axis": 0}, "!rank-mismatch"),
    ("concatenate", ["(Tensor[(2, 3), float32], Tensor[(2, 3), int32])"], {"axis": 0}, "!dtype-mismatch"),
    (
        "concatenate",
        ["(Tensor[(2, 3), float32], Tensor[(2, 3), float32])"],
        {"axis": -3},
        "!axis-out-of-range",
    ),
    (
        "concatenate",
        ["(Tensor[(2, n), float32], Tensor[(m, n), float32])"],
        {"axis": -2},
        "Tensor[(m + 2, n), float32]",
        [],
    ),
    ("concatenate", ["Tensor[(2, 3), float32]"], {"axis": 0}, "!type-mismatch"),
    ("concatenate", ["()"], {"axis": 0}, "!arity-mismatch"),
    ("concatenate", ["(Tensor[?, float32], Tensor[?, float32])"], {"axis": 0}, "Tensor[?, float32]"),
    # stack
    (
        "stack",
        ["(Tensor[(n, 3), float32], Tensor[(n, 3), float32])"],
        {"axis": 0},
        "Tensor[(2, n, 3), float32]",
    ),
    (
        "stack",
        ["(Tensor[(n, 3), float32], Tensor[(m, 3), float32])"],
        {"axis": -1},
        "Tensor[(n, 3, 2), float32]",
        ["n == m"],
    ),
    ("stack", ["(Tensor[(2, 3), float32], Tensor[(3, 3), float32])"], {"axis": 0}, "!shape-mismatch"),
    ("stack", ["(Tensor[(2, 3), float32],)"], {"axis": 3}, "!axis-out-of-range"),
    # split
    (
        "split",
        ["Tensor[(n, 4), float32]"],
        {"indices_or_sections": 2},
        "(Tensor[(n//2, 4), float32], Tensor[(n//2, 4), float32])",
        ["n % 2 == 0"],
    ),
    ("split", ["Tensor[(6, 4), float32]"], {"indices_or_sections": 4}, "!shape-mismatch"),
    (
        "split",
        ["Tensor[(2*n, 4), float32]"],
        {"indices_or_sections": 2},
        "(Tensor[(n, 4), float32], Tensor[(n, 4), float32])",
        [],
    ),
    (
        "split",
        ["Tensor[(n, 5), float32]"],
        {"indices_or_sections": (1, 3), "axis": -1},
        "(Tensor[(n, 1), float32], Tensor[(n, 2), float32], Tensor[(n, 2), float32])",
    ),
    (
        "split",
        ["Tensor[(n, 5), float32]"],
        {"indices_or_sections": (2,), "axis": 0},
        "(Tensor[(2, 5), float32], Tensor[(n - 2, 5), float32])",
        ["n >= 2"],
    ),
    ("split", ["Tensor[(3, 5), float32]"], {"indices_or_sections": (1, 4)}, "!shape-mismatch"),
    ("split", ["Tensor[(3, 5), float32]"], {"indices_or_sections": (3, 1)}, "!bad-attribute"),
    ("split", ["Tensor[(3, 5), float32]"], {"indices_or_sections": 0}, "!bad-attribute"),
    ("split", ["Tensor[(3, 5), float32]"], {"indices_or_sections": 1, "axis": 2}, "!axis-out-of-range"),
    # transpose
    ("transpose", ["Tensor[(n, 3, m), float32]"], {}, "Tensor[(m, 3, n), float32]"),
    ("transpose", ["Tensor[(n, 3, m), float32]"], {"axes": (1, -1, 0)}, "Tensor[(3, m, n), float32]"),
    ("transpose", ["Tensor[(n, 3), float32]"], {"axes": (0, -2)}, "!bad-attribute"),
    ("transpose", ["Tensor[(n, 3), float32]"], {"axes": (0, 0)}, "!bad-attribute"),
    ("transpose", ["Tensor[(n, 3), float32]"], {"axes": (0, 1, 2)}, "!rank-mismatch"),
    ("transpose", ["Tensor[(n, 3), float32]"], {"axes": (0, 2)}, "!axis-out-of-range"),
    ("transpose", ["Tensor[?, float32]"], {}, "Tensor[?, float32]"),
    # squeeze
    ("squeeze", ["Tensor[(n, 1, 3), float32]"], {"axis": (1,)}, "Tensor[(n, 3), float32]", []),
    ("squeeze", ["Tensor[(n, 1, 3), float32]"], {"axis": (0,)}, "Tensor[(1, 3), float32]", ["n == 1"]),
    ("squeeze", ["Tensor[(2, 1, 3), float32]"], {"axis": (0,)}, "!shape-mismatch"),
    ("squeeze", ["Tensor[(2, 1, 1), float32]"], {"axis": None}, "Tensor[(2,), float32]", []),
    ("squeeze", ["Tensor[(n, 1, 3), float32]"], {"axis": None}, "Tensor[(n, 3), float32]", ["n != 1"]),
    ("squeeze", ["Tensor[(n, 1, 3), float32]"], {"axis": -2}, "Tensor[(n, 3), float32]", []),
    ("squeeze", ["Tensor[(n, 1, 3), float32]"], {"axis": (1, -2)}, "!bad-attribute"),
    ("squeeze", ["Tensor[(n, 1, 3), float32]"], {"axis": 3}, "!axis-out-of-range"),
    # expand_dims
    ("expand_dims", ["Tensor[(n, 3), float32]"], {"axis": 1}, "Tensor[(n, 1, 3), float32]"),
    (
        "expand_dims",
        ["Tensor[(n, 3), float32]"],
        {"axis": -1, "num_newaxis": 2},
        "Tensor[(n, 3, 1, 1), float32]",
    ),
    ("expand_dims", ["Tensor[(n, 3), float32]"], {"axis": -3}, "Tensor[(1, n, 3), float32]"),
    ("expand_dims", ["Tensor[(n, 3), float32]"], {"axis": 3}, "!axis-out-of-range"),
    ("expand_dims", ["Tensor[(n, 3), float32]"], {"axis": 0, "num_newaxis": -1}, "!bad-attribute"),
    # broadcast_to
    (
        "broadcast_to",
        ["Tensor[(n, 1), float32]"],
        {"shape": (5, 4)},
        "Tensor[(5, 4), float32]",
        ["n == 1 or n == 5"],
    ),
    ("broadcast_to", ["Tensor[(3, 1), float32]"], {"shape": (2, 3, 4)}, "Tensor[(2, 3, 4), float32]", []),
    ("broadcast_to", ["Tensor[(3, 2), float32]"], {"shape": (3, 4)}, "!not-broadcastable"),
    ("broadcast_to", ["Tensor[(2, 3, 1), float32]"], {"shape": (3, 4)}, "!not-broadcastable"),
    (
        "broadcast_to",
        ["Tensor[(n,), float32]"],
        {"shape": (ss.dim("n"), 2, ss.dim("n"))},
        "Tensor[(n, 2, n), float32]",
        [],
    ),
    # pad
    ("pad", ["Tensor[(n, 3), float32]"], {"pad_width": ((1, 2), (0, 0))}, "Tensor[(n + 3, 3), float32]"),
    ("pad", ["Tensor[(n, 3), float32]"], {"pad_width": 1}, "Tensor[(n + 2, 5), float32]"),
    ("pad", ["Tensor[(n, 3), float32]"], {"pad_width": ((1, 2),)}, "!rank-mismatch"),
    ("pad", ["Tensor[(n, 3), float32]"], {"pad_width": ((1, -2), (0, 0))}, "!bad-attribute"),
]


@rows(TABLE)
def test_shape_table(row: tuple[Any, ...]) -> None:
    check_row(*row)


def test_zeros_ones_have_no_inputs() -> None:
    n = ss.dim("n")
    sol, outs, _ = run("init_tensor", [], {"shape": (n, 4), "dtype": "int32"})
    assert sol.status == "ok" and str(outs[0]) == "Tensor[(n, 4), int32]"
    sol, outs, _ = run("init_tensor", [], {"shape": (2, -1)})
    assert sol.status == "error" and sol.errors[0].code == "bad-attribute"


def test_reshape_unknown_dimension_is_deferred_then_solved() -> None:
    # an unknown input dimension (a hole refined later) is fine: the relation defers
    solver = ss.TypeSolver()
    x, out = solver.hole(), solver.hole()
    n = ss.dim("n")
    solver.add_relation("reshape", [x, out], {"newshape": (-1, 4)})
    solver.unify(x, ss.Tensor((n, 8)))
    sol = solver.solve()
    assert sol.status == "ok" and str(sol.resolve(out)) == "Tensor[(2*n, 4), float32]"


def test_hole_input_defers_to_unresolved() -> None:
    for rel, attrs in [
        ("reshape", {"newshape": (-1,)}),
        ("transpose", {}),
        ("split", {"indices_or_sections": 2}),
    ]:
        sol, _, _ = run(rel, [ss.IncompleteType()], attrs)
        assert sol.status == "unresolved", rel


def test_concatenate_hole_field_defers() -> None:
    solver = ss.TypeSolver()
    h, out = solver.hole(), solver.hole()
    solver.add_relation("concatenate", [ss.TupleType([h, ss.Tensor((2, 3))]), out], {"axis": 0})
    solver.unify(h, ss.Tensor((4, 3)))
    sol = solver.solve()
    assert str(sol.resolve(out)) == "Tensor[(6, 3), float32]"


def test_strict_mode_turns_guards_into_errors() -> None:
    sol, _, _ = run("reshape", ["Tensor[(n, 6), float32]"], {"newshape": (-1, 4)}, strict=True)
    assert sol.status == "error" and sol.errors[0].code == "unproven-guard"


# ----------------------------------------------------------------------------------------------
# numpy properties

SETTINGS = settings(max_examples=40, deadline=None)


@st.composite
def reshape_case(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...]]:
    shape = draw(small_shape(1, 3))
    total = int(np.prod(shape))
    if draw(st.integers(0, 3)) == 0:
        new = tuple(draw(st.lists(st.integers(1, 6), min_size=1, max_size=3)))
    else:
        new_l: list[int] = []
        rest = total
        for _ in range(draw(st.integers(0, 2))):
            f = draw(st.sampled_from([d for d in range(1, 7) if rest % d == 0]))
            new_l.append(f)
            rest //= f
        new_l.append(rest)
        new = tuple(draw(st.permutations(new_l)))
    if draw(st.booleans()):
        i = draw(st.integers(0, len(new) - 1))
        new = (*new[:i], -1, *new[i + 1 :])
    return shape, new


@SETTINGS
@given(reshape_case(), st.data())
def test_reshape_matches_numpy(case: tuple[tuple[int, ...], tuple[int, ...]], data: st.DataObject) -> None:
    shape, new = case
    against_numpy(data, "reshape", [shape], {"newshape": new}, lambda x: x.reshape(new))


@SETTINGS
@given(small_shape(1, 3), st.integers(0, 3), st.data())
def test_flatten_matches_numpy(shape: tuple[int, ...], axis: int, data: st.DataObject) -> None:
    def ref(x: np.ndarray) -> np.ndarray:
        if axis > x.ndim:
            raise ValueError
        return x.reshape(int(np.prod(x.shape[:axis])), -1) if x.size else x

    against_numpy(data, "flatten", [shape], {"axis": axis}, ref)


@st.composite
def concat_case(draw: st.DrawFn) -> tuple[list[tuple[int, ...]], int]:
    base = draw(small_shape(1, 3))
    axis = draw(st.integers(-len(base) - 1, len(base)))
    shapes = []
    for _ in range(draw(st.integers(1, 3))):
        s = list(base)
        for i in range(len(s)):
            if draw(st.integers(0, 4)) == 0 or (axis % max(len(s), 1) == i and draw(st.booleans())):
                s[i] = draw(st.integers(1, 6))
        shapes.append(tuple(s))
    return shapes, axis


@SETTINGS
@given(concat_case(), st.data())
def test_concatenate_matches_numpy(case: tuple[list[tuple[int, ...]], int], data: st.DataObject) -> None:
    shapes, axis = case
    k = len(shapes)

    def rel_run(*xs: np.ndarray) -> np.ndarray:
        return np.concatenate(xs, axis=axis)

    _tuple_property(data, "concatenate", shapes, {"axis": axis}, rel_run, k)


@SETTINGS
@given(concat_case(), st.data())
def test_stack_matches_numpy(case: tuple[list[tuple[int, ...]], int], data: st.DataObject) -> None:
    shapes, axis = case
    _tuple_property(data, "stack", shapes, {"axis": axis}, lambda *xs: np.stack(xs, axis=axis), len(shapes))


def _tuple_property(
    data: st.DataObject, rel: str, shapes: list[tuple[int, ...]], attrs: dict[str, Any], np_fn: Any, k: int
) -> None:
    """Like against_numpy, with the inputs packed into one tuple argument."""
    from test_relations_common import numpy_result, symbolize

    expect = numpy_result(np_fn, shapes, [F] * k)
    sol, outs, _ = run(rel, [ss.TupleType([ss.Tensor(s) for s in shapes])], attrs)
    if expect is None:
        assert sol.status == "error"
    else:
        assert sol.status == "ok" and outs[0].shape == expect[0]  # type: ignore[union-attr]
    sym, env = data.draw(symbolize(shapes))
    sol, outs, _ = run(rel, [ss.TupleType([ss.Tensor(s) for s in sym])], attrs)
    if sol.status == "error":
        assert expect is None
        return
    holds = all(g.holds(env) for g in sol.guards)
    assert holds == (expect is not None), ([str(g) for g in sol.guards], env)
    if holds:
        assert tuple(d.subs(env) for d in outs[0].shape) == expect[0]  # type: ignore[union-attr]


@SETTINGS
@given(
    small_shape(1, 3),
    st.integers(-3, 2),
    st.one_of(st.integers(1, 4), st.lists(st.integers(0, 7), max_size=3)),
    st.data(),
)
def test_split_matches_numpy(shape: tuple[int, ...], axis: int, ios: Any, data: st.DataObject) -> None:
    ios_attr = ios if isinstance(ios, int) else tuple(sorted(ios))

    def ref(x: np.ndarray) -> list[np.ndarray]:
        if not -x.ndim <= axis < x.ndim:
            raise ValueError
        if isinstance(ios_attr, tuple) and ios_attr and ios_attr[-1] > x.shape[axis]:
            raise ValueError("symshape rejects split indices past the axis (numpy clamps them)")
        return np.split(x, ios_attr if isinstance(ios_attr, int) else list(ios_attr), axis=axis)

    against_numpy(data, "split", [shape], {"indices_or_sections": ios_attr, "axis": axis}, ref)


@SETTINGS
@given(small_shape(0, 4), st.data())
def test_transpose_matches_numpy(shape: tuple[int, ...], data: st.DataObject) -> None:
    r = len(shape)
    axes = data.draw(
        st.one_of(
            st.none(),
            st.permutations(range(r)).map(tuple),
            st.lists(st.integers(-r - 1, r), min_size=r, max_size=r, unique=True).map(tuple),
        )
    )
    against_numpy(data, "transpose", [shape], {"axes": axes}, lambda x: np.transpose(x, axes))


@SETTINGS
@given(small_shape(0, 4, hi=3), st.data())
def test_squeeze_matches_numpy(shape: tuple[int, ...], data: st.DataObject) -> None:
    r = len(shape)
    axis = data.draw(
        st.one_of(st.none(), st.lists(st.integers(-r - 1, r), max_size=2, unique=True).map(tuple))
    )
    # axis=None with symbols: guards `n != 1` hold exactly when the result has the predicted rank;
    # numpy itself accepts either way (documented difference), hence lenient_guard
    against_numpy(
        data, "squeeze", [shape], {"axis": axis}, lambda x: np.squeeze(x, axis), lenient_guard=axis is None
    )


@SETTINGS
@given(small_shape(0, 3), st.integers(-5, 4), st.data())
def test_expand_dims_matches_numpy(shape: tuple[int, ...], axis: int, data: st.DataObject) -> None:
    against_numpy(data, "expand_dims", [shape], {"axis": axis}, lambda x: np.expand_dims(x, axis))


@SETTINGS
@given(small_shape(0, 3, hi=3), small_shape(0, 4, hi=3), st.data())
def test_broadcast_to_matches_numpy(
    shape: tuple[int, ...], target: tuple[int, ...], data: st.DataObject
) -> None:
    against_numpy(data, "broadcast_to", [shape], {"shape": target}, lambda x: np.broadcast_to(x, target))


@SETTINGS
@given(small_shape(1, 3), st.data())
def test_pad_matches_numpy(shape: tuple[int, ...], data: st.DataObject) -> None:
    n = data.draw(st.sampled_from([len(shape), len(shape), max(len(shape) - 1, 1)]))
    pw = tuple(data.draw(st.tuples(st.integers(0, 3), st.integers(0, 3))) for _ in range(n))

    def ref(x: np.ndarray) -> np.ndarray:
        if len(pw) != x.ndim:
            raise ValueError("one (before, after) pair per axis")  # numpy would broadcast the pairs
        return np.pad(x, pw)

    against_numpy(data, "pad", [shape], {"pad_width": pw}, ref)


@SETTINGS
@given(small_shape(1, 3), small_shape(1, 3), st.data())
def test_reshape_like_matches_numpy(
    shape: tuple[int, ...], like: tuple[int, ...], data: st.DataObject
) -> None:
    against_numpy(data, "reshape_like", [shape, like], {}, lambda x, y: x.reshape(y.shape))


@pytest.mark.parametrize("shape", [(2, 3), (1,), ()])
def test_zeros_match_numpy(shape: tuple[int, ...]) -> None:
    _, outs, _ = run("init_tensor", [], {"shape": shape, "dtype": "float32"})
    assert outs[0].shape == np.zeros(shape).shape  # type: ignore[union-attr]
