"""Converters of symshape.onnx.ops.elementwise, against onnx's reference evaluator."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from onnx_helpers import Case, In, check_node, infer_node, make_model, node, reference, symbols_of

import symshape.onnx as sso

F = "float32"

CASES = [
    Case("relu", node("Relu", ["x"], ["y"]), [In("x", F, ("n", 3))], ["Tensor[(n, 3), float32]"], [{"n": 2}]),
    Case(
        "gelu",
        node("Gelu", ["x"], ["y"]),
        [In("x", F, ("n", "s"))],
        ["Tensor[(n, s), float32]"],
        [{"n": 2, "s": 3}],
        opset=20,
    ),
    Case(
        "clip_inputs",
        node("Clip", ["x", "lo", "hi"], ["y"]),
        [In("x", F, ("n", 3))],
        ["Tensor[(n, 3), float32]"],
        [{"n": 4}],
        inits={"lo": np.array(0, np.float32), "hi": np.array(1, np.float32)},
    ),
    Case("isnan_bool", node("IsNaN", ["x"], ["y"]), [In("x", F, ("n",))], ["Tensor[(n,), bool]"], [{"n": 3}]),
    Case("not", node("Not", ["x"], ["y"]), [In("x", "bool", ("n",))], ["Tensor[(n,), bool]"], [{"n": 3}]),
    Case(
        "add_broadcast",
        node("Add", ["a", "b"], ["y"]),
        [In("a", F, ("n", 1, 4)), In("b", F, (3, 1))],
        ["Tensor[(n, 3, 4), float32]"],
        [{"n": 1}, {"n": 5}],
        status="ok",
    ),
    Case(
        "sub_guarded",
        node("Sub", ["a", "b"], ["y"]),
        [In("a", F, ("n", 4)), In("b", F, ("m", 4))],
        ["Tensor[(max(m, n), 4), float32]"],
        [{"n": 3, "m": 3}, {"n": 1, "m": 5}, {"n": 2, "m": 1}],
        status="guarded",
    ),
    Case(
        "mul_scalar",
        node("Mul", ["a", "b"], ["y"]),
        [In("a", F, ("n", "s")), In("b", F, ())],
        ["Tensor[(n, s), float32]"],
        [{"n": 2, "s": 3}],
    ),
    Case(
        "equal_bool",
        node("Equal", ["a", "b"], ["y"]),
        [In("a", "int64", ("n", 1)), In("b", "int64", (1, "m"))],
        ["Tensor[(n, m), bool]"],
        [{"n": 2, "m": 3}],
    ),
    Case(
        "less_or_equal",
        node("LessOrEqual", ["a", "b"], ["y"]),
        [In("a", F, ("n",)), In("b", F, ("n",))],
        ["Tensor[(n,), bool]"],
        [{"n": 4}],
    ),
    Case(
        "pow_int_exponent",
        node("Pow", ["a", "b"], ["y"]),
        [In("a", F, ("n", 2)), In("b", "int64", (2,))],
        ["Tensor[(n, 2), float32]"],
        [{"n": 3}],
    ),
    Case(
        "mod",
        node("Mod", ["a", "b"], ["y"], fmod=0),
        [
            In("a", "int32", ("n", 4)),
            In("b", "int32", (4,), data=lambda s, r: r.integers(1, 5, s).astype(np.int32)),
        ],
        ["Tensor[(n, 4), int32]"],
        [{"n": 2}],
    ),
    Case(
        "xor",
        node("Xor", ["a", "b"], ["y"]),
        [In("a", "bool", ("n", 1)), In("b", "bool", (3,))],
        ["Tensor[(n, 3), bool]"],
        [{"n": 2}],
    ),
    Case(
        "bitshift",
        node("BitShift", ["a", "b"], ["y"], direction="LEFT"),
        [In("a", "uint8", ("n",)), In("b", "uint8", (1,))],
        ["Tensor[(n,), uint8]"],
        [{"n": 3}],
    ),
    Case(
        "prelu_one_way",
        node("PRelu", ["x", "s"], ["y"]),
        [In("x", F, ("n", 3, 4)), In("s", F, (4,))],
        ["Tensor[(n, 3, 4), float32]"],
        [{"n": 2}],
    ),
    Case(
        "max_variadic",
        node("Max", ["a", "b", "c"], ["y"]),
        [In("a", F, ("n", 1)), In("b", F, (1, 3)), In("c", F, (3,))],
        ["Tensor[(n, 3), float32]"],
        [{"n": 2}],
    ),
    Case(
        "sum_single", node("Sum", ["a"], ["y"]), [In("a", F, ("n",))], ["Tensor[(n,), float32]"], [{"n": 2}]
    ),
    Case(
        "where",
        node("Where", ["c", "a", "b"], ["y"]),
        [In("c", "bool", ("n", 1)), In("a", F, (1, "m")), In("b", F, ())],
        ["Tensor[(n, m), float32]"],
        [{"n": 2, "m": 3}],
    ),
    Case(
        "cast",
        node("Cast", ["x"], ["y"], to=6),
        [In("x", F, ("n", 2))],
        ["Tensor[(n, 2), int32]"],
        [{"n": 2}],
    ),
    Case(
        "cast_like",
        node("CastLike", ["x", "t"], ["y"]),
        [In("x", F, ("n",)), In("t", "float16", (1,))],
        ["Tensor[(n,), float16]"],
        [{"n": 2}],
    ),
    Case(
        "identity",
        node("Identity", ["x"], ["y"]),
        [In("x", F, ("n", 2))],
        ["Tensor[(n, 2), float32]"],
        [{"n": 2}],
    ),
    Case(
        "trilu_k",
        node("Trilu", ["x", "k"], ["y"]),
        [In("x", F, ("n", "m"))],
        ["Tensor[(n, m), float32]"],
        [{"n": 3, "m": 4}],
        inits={"k": np.array(1, np.int64)},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_elementwise(case: Case) -> None:
    check_node(case)


def test_legacy_broadcast_with_axis() -> None:
    # opset 6: B lines up with A from axis 1 on
    res = infer_node(
        node("Add", ["a", "b"], ["y"], broadcast=1, axis=1),
        [In("a", F, (2, 3, 4, 5)), In("b", F, (3, 4))],
        opset=6,
    )
    assert res.status == "ok" and str(res.type_of("y")) == "Tensor[(2, 3, 4, 5), float32]"


def test_cast_opset1_type_name() -> None:
    res = infer_node(node("Cast", ["x"], ["y"], to="INT64"), [In("x", F, ("n",))], opset=1)
    assert str(res.type_of("y")) == "Tensor[(n,), int64]"


def test_not_broadcastable_names_the_node() -> None:
    res = infer_node(node("Add", ["a", "b"], ["y"], name="add_7"), [In("a", F, ("n", 4)), In("b", F, (3, 5))])
    assert res.status == "error"
    d = res.errors[0]
    assert d.code == "not-broadcastable"
    assert str(d.span) == "test: node 'add_7' (Add)"
    assert [str(n.span) for n in d.notes] == ["test: graph input 'a'", "test: graph input 'b'"]


@pytest.mark.parametrize("to", [17, 19, 21, 22, 23])  # float8e4m3fn, float8e5m2, uint4, int4, float4e2m1
def test_cast_to_a_dtype_symshape_lacks_keeps_the_shape(to: int) -> None:
    res = infer_node(node("Cast", ["x"], ["y"], to=to), [In("x", F, ("n", 3))], opset=23)
    assert res.status == "ok", res.report()
    assert str(res.type_of("y")) == "Tensor[(n, 3), ?]"
    # against onnx's reference evaluator: the shape at a size
    m = make_model([node("Cast", ["x"], ["y"], to=to)], [In("x", F, ("n", 3))], ["y"], opset=23)
    (y,) = reference(m, {"x": np.zeros((4, 3), np.float32)})
    assert y.shape == (4, 3)
    # infer_shapes keeps the ONNX element type symshape does not have
    out = sso.infer_shapes(m).graph.output[0].type.tensor_type
    assert out.elem_type == to and [d.dim_param or d.dim_value for d in out.shape.dim] == ["n", 3]


def test_cast_to_string_is_unsupported() -> None:
    res = infer_node(node("Cast", ["x"], ["y"], to=8), [In("x", F, ("n",))], opset=19)
    assert res.status == "error"
    assert res.errors[0].code == "unsupported-op"
    assert res.unsupported[0][0] is sso.CAUSES[4]  # dtype


@given(
    st.lists(
        st.tuples(st.integers(1, 4), st.sampled_from(["a", "b", "both", "none"])), min_size=0, max_size=4
    )
)
def test_add_broadcasts_like_numpy(axes: list[tuple[int, str]]) -> None:
    # each axis: the size, and which operand has it (the other has 1, or both have it)
    sa = tuple(k if w in ("a", "both") else 1 for k, w in axes)
    sb = tuple(k if w in ("b", "both") else 1 for k, w in axes)[1:]  # b may have a lower rank
    res = infer_node(node("Add", ["a", "b"], ["y"]), [In("a", F, sa), In("b", F, sb)])
    assert res.status == "ok"
    t = res.type_of("y")
    assert tuple(int(d) for d in t.dims) == np.broadcast_shapes(sa, sb)


@pytest.mark.parametrize(("q_heads", "kv_heads"), [(6, 2), (4, 4), (6, 4)])
def test_logic_on_sizes_computes_values(q_heads: int, kv_heads: int) -> None:
    """The grouped-query factor of an expanded ``Attention``: ``Where(q != kv and q % kv == 0,
    q / kv, 1)`` on sizes read with ``Shape``; ``Not``/``And``/``Or`` compute the value, so a
    shape made of it is exact (the reference evaluator gives the same shape)."""
    ins = [In("q", F, ("n", q_heads)), In("k", F, ("n", kv_heads))]
    nodes = [
        node("Shape", ["q"], ["qh"], start=1, end=2),
        node("Shape", ["k"], ["kh"], start=1, end=2),
        node("Equal", ["qh", "kh"], ["same"]),
        node("Not", ["same"], ["differ"]),
        node("Mod", ["qh", "kh"], ["rem"]),
        node("Equal", ["rem", "zero"], ["divides"]),
        node("And", ["differ", "divides"], ["gqa"]),
        node("Or", ["gqa", "gqa"], ["gqa2"]),
        node("Div", ["qh", "kh"], ["ratio"]),
        node("Where", ["gqa2", "ratio", "one"], ["factor"]),
        node("Concat", ["factor", "one"], ["shape"], axis=0),
        node("ConstantOfShape", ["shape"], ["y"]),
    ]
    inits = {"zero": np.array([0], np.int64), "one": np.array([1], np.int64)}
    m = make_model(nodes, ins, ["y"], opset=17, inits=inits)
    res = sso.infer(m, dims=symbols_of(ins))
    assert res.status == "ok", res.report()
    factor = q_heads // kv_heads if q_heads != kv_heads and q_heads % kv_heads == 0 else 1
    feeds = {"q": np.zeros((3, q_heads), F), "k": np.zeros((3, kv_heads), F)}
    (y,) = reference(m, feeds)
    assert y.shape[0] == factor
    assert str(res.type_of("y")) == f"Tensor[({factor}, 1), float32]"
