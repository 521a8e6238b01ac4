"""Converters of symshape.onnx.ops.shape, against onnx's reference evaluator."""

from __future__ import annotations

import numpy as np
import pytest
from fuzz_builder import onnx_slice_len
from hypothesis import assume, given
from hypothesis import strategies as st
from onnx import helper
from onnx_helpers import Case, In, check_node, infer_node, make_model, node, run_ort

import symshape as ss
import symshape.onnx as sso

F = "float32"
I64 = np.int64


def i64(*v: int) -> np.ndarray:
    return np.array(v, dtype=I64)


CASES = [
    Case(
        "reshape_copy_zeros",
        node("Reshape", ["x", "s"], ["y"]),
        [In("x", F, ("n", "s", 64))],
        ["Tensor[(n, s, 4, 16), float32]"],
        [{"n": 2, "s": 3}],
        inits={"s": i64(0, 0, 4, 16)},
        status="ok",
    ),
    Case(
        "reshape_infer",
        node("Reshape", ["x", "s"], ["y"]),
        [In("x", F, ("n", "s", 64))],
        ["Tensor[(n*s, 64), float32]"],
        [{"n": 2, "s": 3}],
        inits={"s": i64(-1, 64)},
        status="ok",
    ),
    Case(
        "reshape_guarded",
        node("Reshape", ["x", "s"], ["y"]),
        [In("x", F, ("n", 6))],
        ["Tensor[(3*n//2, 4), float32]"],
        [{"n": 2}, {"n": 4}],
        inits={"s": i64(-1, 4)},
        status="guarded",
    ),
    Case(
        "reshape_allowzero",
        node("Reshape", ["x", "s"], ["y"], allowzero=1),
        [In("x", F, (0, 3))],
        ["Tensor[(3, 0), float32]"],
        [{}],
        inits={"s": i64(3, 0)},
        opset=14,
    ),
    Case(
        "reshape_v1_attr",
        node("Reshape", ["x"], ["y"], shape=[-1]),
        [In("x", F, ("n", 2))],
        ["Tensor[(2*n,), float32]"],
        [],
        opset=1,
    ),
    Case(
        "flatten",
        node("Flatten", ["x"], ["y"], axis=2),
        [In("x", F, ("n", 3, "h", 4))],
        ["Tensor[(3*n, 4*h), float32]"],
        [{"n": 2, "h": 5}],
    ),
    Case(
        "flatten_negative",
        node("Flatten", ["x"], ["y"], axis=-1),
        [In("x", F, ("n", 3, 4))],
        ["Tensor[(3*n, 4), float32]"],
        [{"n": 2}],
    ),
    Case(
        "squeeze_axes_input",
        node("Squeeze", ["x", "a"], ["y"]),
        [In("x", F, ("n", 1, 3, 1))],
        ["Tensor[(n, 3), float32]"],
        [{"n": 2}],
        inits={"a": i64(1, -1)},
    ),
    Case(
        "squeeze_v11_attr",
        node("Squeeze", ["x"], ["y"], axes=[0]),
        [In("x", F, (1, "n"))],
        ["Tensor[(n,), float32]"],
        [{"n": 2}],
        opset=11,
    ),
    Case(
        "squeeze_all_static",
        node("Squeeze", ["x"], ["y"]),
        [In("x", F, (1, 3, 1))],
        ["Tensor[(3,), float32]"],
        [{}],
    ),
    Case(
        "unsqueeze_positive",
        node("Unsqueeze", ["x", "a"], ["y"]),
        [In("x", F, ("n", "s"))],
        ["Tensor[(1, n, s, 1), float32]"],
        [{"n": 2, "s": 3}],
        inits={"a": i64(3, 0)},
    ),
    Case(
        "unsqueeze_negative",
        node("Unsqueeze", ["x", "a"], ["y"]),
        [In("x", F, ("n", "s"))],
        ["Tensor[(n, 1, s, 1), float32]"],
        [{"n": 2, "s": 3}],
        inits={"a": i64(-1, -3)},
    ),
    Case(
        "unsqueeze_mixed",
        node("Unsqueeze", ["x", "a"], ["y"]),
        [In("x", F, ("n", "s"))],
        ["Tensor[(1, n, s, 1), float32]"],
        [{"n": 2, "s": 3}],
        inits={"a": i64(0, -1)},
    ),
    Case(
        "unsqueeze_v1",
        node("Unsqueeze", ["x"], ["y"], axes=[1]),
        [In("x", F, ("n",))],
        ["Tensor[(n, 1), float32]"],
        [{"n": 2}],
        opset=9,
    ),
    Case(
        "transpose",
        node("Transpose", ["x"], ["y"], perm=[2, 0, 1]),
        [In("x", F, ("n", "s", 4))],
        ["Tensor[(4, n, s), float32]"],
        [{"n": 2, "s": 3}],
    ),
    Case(
        "transpose_default",
        node("Transpose", ["x"], ["y"]),
        [In("x", F, ("n", "s", 4))],
        ["Tensor[(4, s, n), float32]"],
        [{"n": 2, "s": 3}],
    ),
    Case(
        "concat",
        node("Concat", ["a", "b"], ["y"], axis=1),
        [In("a", F, ("n", "p")), In("b", F, ("n", "q"))],
        ["Tensor[(n, p + q), float32]"],
        [{"n": 2, "p": 3, "q": 1}],
    ),
    Case(
        "concat_negative_axis",
        node("Concat", ["a", "b", "c"], ["y"], axis=-1),
        [In("a", F, ("n", 1)), In("b", F, ("n", 2)), In("c", F, ("n", 3))],
        ["Tensor[(n, 6), float32]"],
        [{"n": 2}],
    ),
    Case(
        "split_sizes",
        node("Split", ["x", "sp"], ["a", "b"], axis=1),
        [In("x", F, ("n", 5))],
        ["Tensor[(n, 2), float32]", "Tensor[(n, 3), float32]"],
        [{"n": 2}],
        inits={"sp": i64(2, 3)},
    ),
    Case(
        "split_equal",
        node("Split", ["x"], ["a", "b", "c"], axis=0),
        [In("x", F, ("n", 2))],
        ["Tensor[(n//3, 2), float32]"] * 3,
        [{"n": 3}, {"n": 6}],
        status="guarded",
    ),
    Case(
        "split_num_outputs_uneven",
        node("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3),
        [In("x", F, ("n", 7))],
        ["Tensor[(n, 3), float32]", "Tensor[(n, 3), float32]", "Tensor[(n, 1), float32]"],
        [{"n": 2}],
        opset=18,
    ),
    Case(
        "split_v2_attr",
        node("Split", ["x"], ["a", "b"], axis=0, split=[1, 3]),
        [In("x", F, (4, "n"))],
        ["Tensor[(1, n), float32]", "Tensor[(3, n), float32]"],
        [{"n": 2}],
        opset=11,
    ),
    Case(
        "slice_basic",
        node("Slice", ["x", "b", "e"], ["y"]),
        [In("x", F, (10, "n"))],
        ["Tensor[(8, n), float32]"],
        [{"n": 2}],
        inits={"b": i64(1), "e": i64(-1)},
    ),
    Case(
        "slice_symbolic",
        node("Slice", ["x", "b", "e", "a"], ["y"]),
        [In("x", F, (3, "n"))],
        [None],
        [{"n": 1}, {"n": 2}, {"n": 5}],
        inits={"b": i64(1), "e": i64(-1), "a": i64(1)},
    ),
    Case(
        "slice_steps",
        node("Slice", ["x", "b", "e", "a", "st"], ["y"]),
        [In("x", F, ("n", 9))],
        ["Tensor[(n, 5), float32]"],
        [{"n": 2}],
        inits={"b": i64(-1), "e": i64(-(2**63)), "a": i64(1), "st": i64(-2)},
    ),
    Case(
        "slice_to_end",
        node("Slice", ["x", "b", "e", "a"], ["y"]),
        [In("x", F, ("n", "s"))],
        [None],
        [{"n": 2, "s": 1}, {"n": 2, "s": 7}],
        inits={"b": i64(2), "e": i64(2**63 - 1), "a": i64(-1)},
    ),
    Case(
        "slice_v1_attrs",
        node("Slice", ["x"], ["y"], starts=[0], ends=[2], axes=[1]),
        [In("x", F, ("n", 5))],
        ["Tensor[(n, 2), float32]"],
        [{"n": 3}],
        opset=9,
    ),
    Case(
        "expand",
        node("Expand", ["x", "s"], ["y"]),
        [In("x", F, ("n", 1))],
        ["Tensor[(3, n, 4), float32]"],
        [{"n": 2}],
        inits={"s": i64(3, 1, 4)},
    ),
    Case(
        "tile",
        node("Tile", ["x", "r"], ["y"]),
        [In("x", F, ("n", 2))],
        ["Tensor[(2*n, 6), float32]"],
        [{"n": 1}, {"n": 3}],
        inits={"r": i64(2, 3)},
    ),
    Case(
        "pad",
        node("Pad", ["x", "p"], ["y"]),
        [In("x", F, ("n", 3))],
        ["Tensor[(n + 3, 4), float32]"],
        [{"n": 2}],
        inits={"p": i64(1, 0, 2, 1)},
    ),
    Case(
        "pad_negative",
        node("Pad", ["x", "p"], ["y"]),
        [In("x", F, (5, "n"))],
        ["Tensor[(3, n + 1), float32]"],
        [{"n": 2}],
        inits={"p": i64(-1, 1, -1, 0)},
        runner="onnxruntime",
    ),
    Case(
        "pad_axes",
        node("Pad", ["x", "p", "", "a"], ["y"], mode="reflect"),
        [In("x", F, ("n", 4, 5))],
        ["Tensor[(n, 4, 8), float32]"],
        [{"n": 2}],
        inits={"p": i64(1, 2), "a": i64(-1)},
        opset=18,
    ),
    Case(
        "pad_v2_attr",
        node("Pad", ["x"], ["y"], pads=[0, 1, 0, 1]),
        [In("x", F, ("n", 3))],
        ["Tensor[(n, 5), float32]"],
        [{"n": 2}],
        opset=2,
    ),
    Case(
        "depth_to_space_dcr",
        node("DepthToSpace", ["x"], ["y"], blocksize=2),
        [In("x", F, ("n", 8, "h", 3))],
        ["Tensor[(n, 2, 2*h, 6), float32]"],
        [{"n": 1, "h": 2}],
    ),
    Case(
        "depth_to_space_crd",
        node("DepthToSpace", ["x"], ["y"], blocksize=2, mode="CRD"),
        [In("x", F, (1, 12, 2, 3))],
        ["Tensor[(1, 3, 4, 6), float32]"],
        [{}],
    ),
    Case(
        "space_to_depth",
        node("SpaceToDepth", ["x"], ["y"], blocksize=2),
        [In("x", F, ("n", 3, 4, 6))],
        ["Tensor[(n, 12, 2, 3), float32]"],
        [{"n": 2}],
    ),
    Case(
        "center_crop_pad",
        node("CenterCropPad", ["x", "s"], ["y"], axes=[0, 1]),
        [In("x", F, ("h", "w", 3))],
        ["Tensor[(5, 2, 3), float32]"],
        [{"h": 4, "w": 7}],
        inits={"s": i64(5, 2)},
        opset=18,
    ),
    Case(
        "constant_of_shape",
        node("ConstantOfShape", ["s"], ["y"], value=helper.make_tensor("v", 7, [1], [1])),
        [],
        ["Tensor[(2, 3), int64]"],
        [{}],
        inits={"s": i64(2, 3)},
    ),
    Case(
        "shape_static",
        node("Shape", ["x"], ["y"], start=1),
        [In("x", F, (2, 3, 4))],
        ["Tensor[(2,), int64] = (3, 4)"],
        [{}],
        opset=15,
    ),
    Case(
        "shape_symbolic",
        node("Shape", ["x"], ["y"], end=-1),
        [In("x", F, ("n", 3, 4))],
        ["Tensor[(2,), int64] = (n, 3)"],
        [{"n": 2}],
        opset=15,
    ),
    Case("size", node("Size", ["x"], ["y"]), [In("x", F, ("n", 3))], ["Tensor[(), int64] = 3*n"], [{"n": 2}]),
    Case(
        "range_constant",
        node("Range", ["a", "b", "c"], ["y"]),
        [],
        ["Tensor[(4,), int64] = (10, 8, 6, 4)"],
        [{}],
        inits={"a": np.array(10, I64), "b": np.array(2, I64), "c": np.array(-2, I64)},
    ),
    Case(
        "eye_like",
        node("EyeLike", ["x"], ["y"], dtype=7),
        [In("x", F, ("n", 3))],
        ["Tensor[(n, 3), int64]"],
        [{"n": 2}],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_shape(case: Case) -> None:
    check_node(case)


def test_reshape_target_from_run_time() -> None:
    """A target that is a graph input of unknown value: the output has the target's length as its
    rank and sizes known only at run time (fresh dimensions, never constants), which is the truth:
    onnxruntime gives different shapes for different targets of one input."""
    n = node("Reshape", ["x", "s"], ["y"], name="r")
    ins = [In("x", F, ("n", 4)), In("s", "int64", (2,))]
    res = infer_node(n, ins)
    assert res.status == "ok" and not res.unsupported, res.report()
    t = res.type_of("y")
    assert isinstance(t, ss.TensorType) and t.ndim == 2
    assert not any(d.is_constant for d in t.dims)
    model = make_model([n], ins, ["y"])
    x = np.zeros((2, 4), np.float32)
    shapes = {run_ort(model, {"x": x, "s": np.array(s, I64)})[0].shape for s in ((2, 4), (8, 1), (-1, 2))}
    assert shapes == {(2, 4), (8, 1), (4, 2)}


def test_reshape_target_from_shape_values() -> None:
    """A target computed from ``Shape`` (what exporters write): exact."""
    nodes = [
        node("Shape", ["x"], ["sh"]),
        node("Gather", ["sh", "i0"], ["n0"], axis=0),
        node("Unsqueeze", ["n0", "ax"], ["n0u"]),
        node("Concat", ["n0u", "m1"], ["target"], axis=0),
        node("Reshape", ["x", "target"], ["y"]),
    ]
    inits = {"i0": np.array(0, I64), "ax": np.array([0], I64), "m1": np.array([-1], I64)}
    m = make_model(nodes, [In("x", F, ("n", 3, 4))], ["y"], inits=inits)
    n = ss.dim("n")
    res = sso.infer(m, dims={"n": n})
    assert res.status == "ok", res.report()
    assert str(res.type_of("y")) == "Tensor[(n, 12), float32]"
    assert str(res.type_of("target")) == "Tensor[(2,), int64] = (n, -1)"
    for k in (1, 3):
        (y,) = run_ort(m, {"x": np.zeros((k, 3, 4), np.float32)})
        assert y.shape == (k, 12)


def test_reshape_bad_value_is_an_error() -> None:
    res = infer_node(node("Reshape", ["x", "s"], ["y"]), [In("x", F, ("n", 4))], {"s": i64(-2, 4)})
    assert res.status == "error" and res.errors[0].code == "bad-attribute"


def test_reshape_size_conflict_names_the_node_and_initializer() -> None:
    res = infer_node(
        node("Reshape", ["x", "s"], ["y"], name="bad_reshape"), [In("x", F, (2, 3))], {"s": i64(7)}
    )
    assert res.status == "error"
    d = res.errors[0]
    assert d.code == "reshape-size" and str(d.span) == "test: node 'bad_reshape' (Reshape)"


@pytest.mark.parametrize("parts", [2, 3])
@pytest.mark.parametrize("axis", [1, -1])
def test_split_num_outputs_over_symbolic_axis(parts: int, axis: int) -> None:
    """Parts of ``ceil(n / parts)``, the last ones smaller or empty: exact at every size (but
    ``n = 1`` into 3 parts, a negative last part: onnxruntime refuses it, symshape guards it)."""
    outs = ["a", "b", "c"][:parts]
    case = Case(
        "split_ceil",
        node("Split", ["x"], outs, axis=axis, num_outputs=parts),
        [In("x", F, (2, "n"))],
        [None] * parts,
        [{"n": k} for k in (1, 2, 3, 4, 5, 7) if parts == 2 or k > 1],
        opset=18,
    )
    res = check_node(case)
    assert not res.unsupported
    assert res.valid_at({ss.dim("n"): 1}) == (parts == 2)


def test_concat_mismatch_is_an_error() -> None:
    res = infer_node(node("Concat", ["a", "b"], ["y"], axis=0), [In("a", F, ("n", 3)), In("b", F, ("n", 4))])
    assert res.status == "error" and res.errors[0].code == "shape-mismatch"


@given(
    d=st.integers(0, 7),
    start=st.integers(-9, 9),
    end=st.one_of(st.integers(-9, 9), st.just(2**63 - 1), st.just(-(2**63))),
    step=st.sampled_from([1, 2, 3, -1, -2]),
)
def test_slice_matches_onnx(d: int, start: int, end: int, step: int) -> None:
    """ONNX's clamping (:func:`onnx_slice_len`): numpy's but for a start below ``-d`` on a
    negative step, which takes the first element (numpy: none)."""
    res = infer_node(
        node("Slice", ["x", "b", "e", "a", "s"], ["y"]),
        [In("x", F, ("n",))],
        {"b": i64(start), "e": i64(end), "a": i64(0), "s": i64(step)},
    )
    t = res.type_of("y")
    assert res.ok
    if d >= 1:  # symbols are >= 1
        n = next(iter(t.dims[0].symbols), None)
        got = int(t.dims[0].subs({n: d})) if n is not None else int(t.dims[0])
        assert got == onnx_slice_len(d, start, end, step)


@given(
    st.lists(st.integers(-2, 3), min_size=2, max_size=2), st.lists(st.integers(0, 3), min_size=2, max_size=2)
)
def test_pad_matches_reference(pads: list[int], shape: list[int]) -> None:
    shape = [s + 2 for s in shape]
    p = [pads[0], 0, pads[1], 1]
    assume(shape[0] + pads[0] + pads[1] >= 0)  # ONNX rejects a negative size
    res = infer_node(node("Pad", ["x", "p"], ["y"]), [In("x", F, tuple(shape))], {"p": i64(*p)})
    m = make_model([node("Pad", ["x", "p"], ["y"])], [In("x", F, tuple(shape))], ["y"], inits={"p": i64(*p)})
    (y,) = run_ort(m, {"x": np.zeros(shape, np.float32)})
    assert tuple(int(d) for d in res.type_of("y").dims) == y.shape


def test_supported_ops_lists_shape_converters() -> None:
    ops = sso.supported_ops()
    for op in ("Reshape", "Slice", "Pad", "Tile", "Expand", "DepthToSpace"):
        assert op in ops


def test_pad_by_pads_from_shape_values() -> None:
    """Pads computed at run time (the shape of another input): the output is ``x.shape + begins +
    ends`` on shape values, exact, against onnxruntime."""
    nodes = [
        node("Shape", ["y"], ["ends"]),
        node("Concat", ["zeros", "ends"], ["pads"], axis=0),
        node("Pad", ["x", "pads"], ["out"]),
    ]
    ins = [In("x", F, ("n", 3)), In("y", F, ("m", 2))]
    m = make_model(nodes, ins, ["out"], inits={"zeros": i64(0, 1)})
    n, mm = ss.dim("n"), ss.dim("m")
    res = sso.infer(m, dims={"n": n, "m": mm})
    assert res.status == "ok", res.report()
    assert str(res.type_of("out")) == "Tensor[(m + n, 6), float32]"
    for a, b in ((1, 1), (2, 4)):
        (out,) = run_ort(m, {"x": np.zeros((a, 3), np.float32), "y": np.zeros((b, 2), np.float32)})
        assert out.shape == (a + b, 6)
