"""Elementwise relations (identity, broadcast, where, cast) and reductions: tables + numpy."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import symshape as ss
from symshape.ir.op import OPS
from test_relations_common import against_numpy, check_row, rows, run, small_shape

TABLE: list[tuple[Any, ...]] = [
    ("identity", ["Tensor[(n, 3), float32]"], {}, "Tensor[(n, 3), float32]"),
    ("identity", ["Tensor[?, float32]"], {}, "Tensor[?, float32]"),
    ("identity_bool", ["Tensor[(n, 3), float32]"], {}, "Tensor[(n, 3), bool]"),
    ("broadcast", ["Tensor[(n, 1), float32]", "Tensor[(1, 4), float32]"], {}, "Tensor[(n, 4), float32]", []),
    (
        "broadcast",
        ["Tensor[(n, 3), float32]", "Tensor[(5, 1), float32]"],
        {},
        "Tensor[(5, 3), float32]",
        ["n == 1 or n == 5"],
    ),
    ("broadcast", ["Tensor[(2, 3), float32]", "Tensor[(4, 3), float32]"], {}, "!not-broadcastable"),
    ("broadcast", ["Tensor[(2, 3), float32]", "Tensor[(2, 3), int32]"], {}, "!dtype-mismatch"),
    ("broadcast_bool", ["Tensor[(n, 3), float32]", "Tensor[(3,), float32]"], {}, "Tensor[(n, 3), bool]"),
    (
        "where",
        ["Tensor[(n, 1), bool]", "Tensor[(4,), float32]", "Tensor[(1, 4), float32]"],
        {},
        "Tensor[(n, 4), float32]",
        [],
    ),
    (
        "where",
        ["Tensor[(3,), bool]", "Tensor[(n, 1), float32]", "Tensor[(1,), float32]"],
        {},
        "Tensor[(n, 3), float32]",
        [],
    ),
    (
        "where",
        ["Tensor[(2,), bool]", "Tensor[(3,), float32]", "Tensor[(3,), float32]"],
        {},
        "!not-broadcastable",
    ),
    (
        "where",
        ["Tensor[(3,), float32]", "Tensor[(3,), float32]", "Tensor[(3,), float32]"],
        {},
        "!dtype-mismatch",
    ),
    ("where", ["Tensor[(3,), bool]", "Tensor[(3,), float32]", "Tensor[(3,), int32]"], {}, "!dtype-mismatch"),
    ("cast", ["Tensor[(n, 3), float32]"], {"dtype": "int8"}, "Tensor[(n, 3), int8]"),
    ("cast", ["Tensor[(n, 3), float32]"], {"dtype": "int"}, "!bad-attribute"),
    ("cast_like", ["Tensor[(n, 3), float32]", "Tensor[(2,), float16]"], {}, "Tensor[(n, 3), float16]"),
    # reductions
    (
        "reduce",
        ["Tensor[(n, c, h, w), float32]"],
        {"axis": (-1, 1), "keepdims": True},
        "Tensor[(n, 1, h, 1), float32]",
    ),
    ("reduce", ["Tensor[(n, c, h, w), float32]"], {"axis": (1,), "exclude": True}, "Tensor[(c,), float32]"),
    ("reduce", ["Tensor[(n, c), float32]"], {}, "Tensor[(), float32]"),
    ("reduce", ["Tensor[(n, c), float32]"], {"axis": ()}, "Tensor[(n, c), float32]"),
    ("reduce", ["Tensor[(n, c), float32]"], {"axis": 2}, "!axis-out-of-range"),
    ("reduce", ["Tensor[(n, c), float32]"], {"axis": (0, -2)}, "!bad-attribute"),
    ("reduce", ["Tensor[(n, c), float32]"], {"axis": (0, 0)}, "!bad-attribute"),
    ("reduce", ["Tensor[?, float32]"], {"axis": 0}, "Tensor[?, float32]"),
    ("reduce_nonempty", ["Tensor[(0, 3), float32]"], {"axis": 0}, "!shape-mismatch"),
    ("reduce_nonempty", ["Tensor[(0, 3), float32]"], {"axis": 1}, "Tensor[(0,), float32]"),
    ("arg_reduce", ["Tensor[(n, c), float32]"], {"axis": -1}, "Tensor[(n,), int32]"),
    ("arg_reduce", ["Tensor[(n, c), float32]"], {"axis": None, "keepdims": True}, "Tensor[(1, 1), int32]"),
]


@rows(TABLE)
def test_elementwise_table(row: tuple[Any, ...]) -> None:
    check_row(*row)


def test_reduction_over_possibly_empty_symbol_is_a_guard() -> None:
    b = ss.dim("b", min=0)
    sol, outs, _ = run("reduce_nonempty", [ss.Tensor((b, 3))], {"axis": 0})
    assert sol.status == "guarded" and [str(g) for g in sol.guards] == ["b >= 1"]
    assert str(outs[0]) == "Tensor[(3,), float32]"


def test_every_unary_and_binary_op_is_registered() -> None:
    # the operators Relax registers as float-only (require_float_dtype) use ``unary_float``
    for name in ("sigmoid", "tanh", "exp", "log", "sqrt", "erf", "rsqrt", "sin", "cos", "nn.leaky_relu"):
        assert OPS[name].relation == "unary_float" and OPS[name].pure
    for name in ("nn.relu", "abs", "floor", "ceil", "round", "sign", "copy", "clip"):
        assert OPS[name].relation == "unary" and OPS[name].pure
    for name in ("zeros_like", "ones_like"):
        assert OPS[name].relation == "init_like"
    assert OPS["power"].relation == "broadcast"
    for name in ("logical_and", "logical_or", "logical_not", "negative"):  # the value of the result too
        assert OPS[name].relation == name
    # the arithmetic that computes shape values: broadcast plus the value (one relation each, so
    # that results memoized per relation never mix two operators)
    # and the comparisons (bool values 0/1: `expand(b, -1, -1)` as exporters write it)
    for name in ("add", "subtract", "multiply", "divide", "floor_divide", "mod", "maximum", "minimum"):
        assert OPS[name].relation == name
    for name in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"):
        assert OPS[name].relation == name


SETTINGS = settings(max_examples=40, deadline=None)


@SETTINGS
@given(small_shape(0, 3, hi=3), small_shape(0, 3, hi=3), st.data())
def test_broadcast_matches_numpy(a: tuple[int, ...], b: tuple[int, ...], data: st.DataObject) -> None:
    against_numpy(data, "broadcast", [a, b], {}, lambda x, y: x + y)


@SETTINGS
@given(small_shape(0, 3, hi=3), small_shape(0, 3, hi=3), small_shape(0, 3, hi=3), st.data())
def test_where_matches_numpy(
    c: tuple[int, ...], a: tuple[int, ...], b: tuple[int, ...], data: st.DataObject
) -> None:
    against_numpy(data, "where", [c, a, b], {}, np.where, dtypes=["bool", "float32", "float32"])


@SETTINGS
@given(small_shape(0, 3), st.data())
def test_unary_and_cast_match_numpy(a: tuple[int, ...], data: st.DataObject) -> None:
    against_numpy(data, "identity", [a], {}, np.exp)
    against_numpy(data, "cast", [a], {"dtype": "int32"}, lambda x: x.astype("int32"), symbolic=False)


@SETTINGS
@given(small_shape(0, 4), st.data())
def test_reductions_match_numpy(shape: tuple[int, ...], data: st.DataObject) -> None:
    r = len(shape)
    axis = data.draw(
        st.one_of(st.none(), st.integers(-r - 1, r), st.lists(st.integers(-r, r), max_size=3).map(tuple))
    )
    keepdims = data.draw(st.booleans())
    exclude = data.draw(st.booleans()) if isinstance(axis, tuple) else False

    def ref(x: np.ndarray) -> np.ndarray:
        ax = axis
        if r == 0 and isinstance(ax, int):
            raise ValueError("numpy accepts axis 0/-1 on a 0-d array; symshape (like Relay) does not")
        if exclude:
            norm = [a + r if a < 0 else a for a in ax]  # type: ignore[union-attr]
            if any(not 0 <= a < r for a in norm) or len(set(norm)) != len(norm):
                raise ValueError
            ax = tuple(i for i in range(r) if i not in norm)
        return np.sum(x, axis=ax, keepdims=keepdims)

    against_numpy(data, "reduce", [shape], {"axis": axis, "keepdims": keepdims, "exclude": exclude}, ref)
    if isinstance(axis, tuple) or (r == 0 and axis is not None):
        return
    against_numpy(
        data,
        "arg_reduce",
        [shape],
        {"axis": axis, "keepdims": keepdims},
        lambda x: np.argmax(x, axis=axis, keepdims=keepdims),
    )
    against_numpy(
        data,
        "reduce_nonempty",
        [shape],
        {"axis": axis, "keepdims": keepdims},
        lambda x: np.max(x, axis=axis, keepdims=keepdims),
    )
