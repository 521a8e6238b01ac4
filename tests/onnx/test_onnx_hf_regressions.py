"""The bugs the exported transformers models found (test_onnx_hf_models), each as a small graph
checked against onnxruntime at concrete sizes.

* ``Where(r < 4, r, 7)`` indexing an 8-row table (T5's relative position buckets, dynamo export):
  where the condition holds ``r < 4``, so the index fits whatever the range of ``r``; symshape
  joined the branches' ranges and guarded ``max(n - 1, 7) < 8`` (a false reject for ``n > 8``).
* ``Resize`` to sizes computed at run time (ViT's ``interpolate_pos_encoding``:
  ``interpolate(pos, size=(h // 8, w // 8), mode="bicubic")``) was ``unsupported-op``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from torch_models import run_all_values

import symshape as ss
import symshape.onnx as sso

_I64 = np.int64


def _init(name: str, v: Any, dtype: Any = _I64) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(v, dtype=dtype), name)


def _model(nodes: list[onnx.NodeProto], x_dims: list[Any], inits: list[onnx.TensorProto]) -> onnx.ModelProto:
    g = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_dims)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits,
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def _bucket_model(op: str, r_is_then: bool, r_first: bool, c: int) -> onnx.ModelProto:
    """r = arange(n); y = table[where(r OP c, r, 7)] (or the branches swapped, the operands too)."""
    cmp = ["r", "c"] if r_first else ["c", "r"]
    nodes = [
        helper.make_node("Shape", ["x"], ["sh"], start=0, end=1),
        helper.make_node("Squeeze", ["sh"], ["n"]),
        helper.make_node("Range", ["zero", "n", "one"], ["r"]),
        helper.make_node(op, cmp, ["cond"]),
        helper.make_node("Where", ["cond", "r", "seven"] if r_is_then else ["cond", "seven", "r"], ["idx"]),
        helper.make_node("Gather", ["table", "idx"], ["y"], axis=0),
    ]
    inits = [_init("zero", 0), _init("one", 1), _init("c", c), _init("seven", 7),
             _init("table", np.zeros((8, 3)), np.float32)]  # fmt: skip
    return _model(nodes, ["n"], inits)


def _runs(model: onnx.ModelProto, x: np.ndarray[Any, Any]) -> dict[str, tuple[int, ...]] | None:
    try:
        return run_all_values(model, {"x": x})
    except Exception:  # onnxruntime refuses this size: the oracle's "invalid"
        return None


@pytest.mark.parametrize("op", ["Less", "LessOrEqual", "Greater", "GreaterOrEqual"])
@pytest.mark.parametrize("r_is_then", [True, False])
@pytest.mark.parametrize("r_first", [True, False])
@pytest.mark.parametrize("c", [4, 6])
def test_where_branch_keeps_the_conditions_bound(op: str, r_is_then: bool, r_first: bool, c: int) -> None:
    model = _bucket_model(op, r_is_then, r_first, c)
    n = ss.dim("n")
    res = sso.infer(model, dims={"n": n})
    assert res.ok, res.report()
    for size in (1, 4, 5, 7, 8, 9, 12, 30):
        actual = _runs(model, np.zeros(size, np.float32))
        assert res.valid_at({n: size}) == (actual is not None), (size, [str(g) for g in res.guards])
        if actual is not None:
            assert res.type_of("y").subs({n: size}).shape == actual["y"]


def test_where_bound_needs_the_same_value() -> None:
    """A comparison of another value bounds nothing: where(r - 8 < 4, r, 7) with r = arange(n)
    still needs n <= 8."""
    model = _bucket_model("Less", True, True, 4)
    g = model.graph
    g.node.insert(3, helper.make_node("Sub", ["r", "eight"], ["s"]))
    g.initializer.append(_init("eight", 8))
    g.node[4].input[0] = "s"  # the Less now reads s = r - 8
    n = ss.dim("n")
    res = sso.infer(model, dims={"n": n})
    assert res.status == "guarded", res.report()
    assert res.valid_at({n: 8}) and not res.valid_at({n: 9})
    assert _runs(model, np.zeros(9, np.float32)) is None


def _resize_model(axes: list[int] | None) -> onnx.ModelProto:
    """y = Resize(x, sizes=(h // 8, w // 8)) of x: (b, c, h, w) (every axis, or only 2 and 3)."""
    nodes = [
        helper.make_node("Shape", ["x"], ["sh"]),
        helper.make_node("Slice", ["sh", "two", "four"], ["hw"]),
        helper.make_node("Div", ["hw", "eight"], ["new"]),
        helper.make_node("Slice", ["sh", "zero", "two"], ["bc"]),
    ]
    if axes is None:
        nodes.append(helper.make_node("Concat", ["bc", "new"], ["sizes"], axis=0))
    else:
        nodes.append(helper.make_node("Identity", ["new"], ["sizes"]))
    attrs = {} if axes is None else {"axes": axes}
    nodes.append(helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="cubic", **attrs))
    inits = [_init(name, [v]) for name, v in (("zero", 0), ("one", 1), ("two", 2), ("four", 4), ("eight", 8))]
    m = _model(nodes, ["b", 3, "h", "w"], inits)
    m.opset_import[0].version = 18
    return m


@pytest.mark.parametrize("axes", [None, [2, 3], [3, 2], [-2, -1]])
def test_resize_to_sizes_computed_at_run_time(axes: list[int] | None) -> None:
    model = _resize_model(axes)
    if axes == [3, 2]:  # the sizes in the axes' order: (w // 8, h // 8)
        model.graph.node.insert(3, helper.make_node("Concat", ["wdiv", "hdiv"], ["swapped"], axis=0))
        model.graph.node.insert(3, helper.make_node("Slice", ["new", "zero", "one"], ["hdiv"]))
        model.graph.node.insert(3, helper.make_node("Slice", ["new", "one", "two"], ["wdiv"]))
        for node in model.graph.node:
            if node.op_type == "Identity":
                node.input[0] = "swapped"
    syms = {k: ss.dim(k) for k in ("b", "h", "w")}
    res = sso.infer(model, dims=syms)
    assert res.status == "ok", res.report()
    assert not res.unsupported
    for b, h, w in ((1, 8, 8), (2, 39, 32), (1, 16, 64)):
        actual = run_all_values(model, {"x": np.zeros((b, 3, h, w), np.float32)})
        env = {syms["b"]: b, syms["h"]: h, syms["w"]: w}
        assert res.type_of("y").subs(env).shape == actual["y"] == (b, 3, h // 8, w // 8)


def test_resize_sizes_of_the_wrong_length() -> None:
    """Four sizes are needed for a 4-d input (no axes): three is a rank mismatch."""
    model = _resize_model(None)
    for node in model.graph.node:
        if node.op_type == "Slice" and node.output[0] == "bc":
            node.input[2] = "one"  # (b,) instead of (b, 3)
    res = sso.infer(model, dims={k: ss.dim(k) for k in ("b", "h", "w")})
    assert res.status == "error", res.report()
    assert any(e.code == "rank-mismatch" for e in res.errors), res.report()


def _rotary_model(position_ids: bool, rank: int) -> onnx.ModelProto:
    """RotaryEmbedding (opset 23) of x: (b, 2, s, 8) (or (b, s, 16) with num_heads 2): with
    position_ids = [arange(s)] into 6-row caches, or with caches (1, s, 4) as torch 2.13 exports
    Llama's (both have a batch of 1: valid at b == 1 only)."""
    nodes = [
        helper.make_node(
            "Shape", ["x"], ["sh"], start=rank - 2 if rank == 4 else 1, end=rank - 1 if rank == 4 else 2
        ),
        helper.make_node("Squeeze", ["sh"], ["s"]),
        helper.make_node("Range", ["zero", "s", "one"], ["r"]),
        helper.make_node("Unsqueeze", ["r", "axes0"], ["pos"]),  # (1, s)
    ]
    inits = [_init("zero", 0), _init("one", 1), _init("axes0", [0]), _init("axes2", [2])]
    table = np.ones((6, 4), np.float32)
    inits += [numpy_helper.from_array(table, "cos"), numpy_helper.from_array(table, "sin")]
    attrs = {"num_heads": 2} if rank == 3 else {}
    if position_ids:
        nodes.append(helper.make_node("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y"], **attrs))
    else:
        nodes += [
            helper.make_node("Gather", ["cos", "pos"], ["c3"], axis=0),  # (1, s, 4)
            helper.make_node("Gather", ["sin", "pos"], ["s3"], axis=0),
            helper.make_node("RotaryEmbedding", ["x", "c3", "s3"], ["y"], **attrs),
        ]
    m = _model(nodes, ["b", 2, "s", 8] if rank == 4 else ["b", "s", 16], inits)
    m.opset_import[0].version = 23
    return m


@pytest.mark.parametrize("position_ids", [True, False])
@pytest.mark.parametrize("rank", [4, 3])
def test_rotary_embedding_caches_have_the_batch(position_ids: bool, rank: int) -> None:
    model = _rotary_model(position_ids, rank)
    b, s = ss.dim("b"), ss.dim("s")
    res = sso.infer(model, dims={"b": b, "s": s})
    assert res.status == "guarded", res.report()
    for bv, sv in ((1, 1), (1, 6), (2, 3), (1, 7), (3, 1)):
        shape = (bv, 2, sv, 8) if rank == 4 else (bv, sv, 16)
        actual = _runs(model, np.zeros(shape, np.float32))
        assert res.valid_at({b: bv, s: sv}) == (actual is not None), ((bv, sv), [str(g) for g in res.guards])
        if actual is not None:
            assert res.type_of("y").subs({b: bv, s: sv}).shape == actual["y"] == shape


def _offsets_model(exclusive: int, reverse: int) -> onnx.ModelProto:
    """c = concat(a, b) of (n + m,); y = c[offs[0]:offs[1]] with offs = CumSum((n, m))."""
    nodes = [
        helper.make_node("Concat", ["a", "b"], ["c"], axis=0),
        helper.make_node("Shape", ["a"], ["na"]),
        helper.make_node("Shape", ["b"], ["nb"]),
        helper.make_node("Concat", ["na", "nb"], ["sizes"], axis=0),
        helper.make_node("CumSum", ["sizes", "zero"], ["offs"], exclusive=exclusive, reverse=reverse),
        helper.make_node("Slice", ["offs", "zero1", "one1"], ["start"]),
        helper.make_node("Slice", ["offs", "one1", "two1"], ["end"]),
        helper.make_node("Slice", ["c", "start", "end"], ["y"]),
    ]
    inits = [_init("zero", 0), _init("zero1", [0]), _init("one1", [1]), _init("two1", [2])]
    g = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, ["n"]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, ["m"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits,
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize(("exclusive", "reverse"), [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_cumsum_of_a_shape_value_is_summed(exclusive: int, reverse: int) -> None:
    """Offsets from sizes: CumSum((n, m)) is (n, n + m) (exclusive (0, n); reversed (n + m, m)),
    not (n, m) as a copy of its input's value."""
    model = _offsets_model(exclusive, reverse)
    n, m = ss.dim("n"), ss.dim("m")
    res = sso.infer(model, dims={"n": n, "m": m})
    assert res.ok, res.report()
    for nv, mv in ((1, 1), (3, 5), (6, 2)):
        feeds = {"a": np.zeros(nv, np.float32), "b": np.zeros(mv, np.float32)}
        actual = run_all_values(model, feeds)
        env = {n: nv, m: mv}
        for name in ("offs", "y"):
            t = res.type_of(name).subs(env)
            assert t.shape == actual[name], (name, str(res.type_of(name)), actual[name])


def _bitwise_model(op: str) -> onnx.ModelProto:
    """y = Reshape(x, (-1, shape(x)[1] OP 1)) of x: (2, m) (a shape computed with a bitwise op)."""
    nodes = [
        helper.make_node("Shape", ["x"], ["sh"], start=1, end=2),
        helper.make_node(op, ["sh", "k"], ["h"]),
        helper.make_node("Concat", ["m1", "h"], ["tgt"], axis=0),
        helper.make_node("Reshape", ["x", "tgt"], ["y"]),
    ]
    m = _model(nodes, [2, "m"], [_init("k", [1]), _init("m1", [-1])])
    m.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 2
    m.opset_import[0].version = 18
    return m


@pytest.mark.parametrize("op", ["BitwiseAnd", "BitwiseOr", "BitwiseXor"])
def test_bitwise_operators_compute_no_wrong_value(op: str) -> None:
    """``add`` stood in for them and computed ``m + 1`` as the value: a wrong reshape target. Now
    the value is not known (fresh dims), and every dimension that is known is right."""
    model = _bitwise_model(op)
    m = ss.dim("m")
    res = sso.infer(model, dims={"m": m})
    for mv in (4, 6):
        actual = _runs(model, np.zeros((2, mv), np.float32))
        if actual is None:
            continue
        for name, shape in actual.items():
            t = res.type_of(name)
            if isinstance(t, ss.TensorType) and t.ndim is not None:
                dims = [d.subs({m: mv}) for d in t.dims]
                assert all(not d.is_constant or int(d) == s for d, s in zip(dims, shape)), (
                    name,
                    str(t),
                    shape,
                )


def test_bitwise_not_is_minus_x_minus_one() -> None:
    """table[~arange(n)] reads rows -1 .. -n: valid iff n <= 8 (the range [-n, -1])."""
    model = _bucket_model("Less", True, True, 4)
    g = model.graph
    del g.node[3:5]  # no Less, no Where: idx = ~r
    g.node.insert(3, helper.make_node("BitwiseNot", ["r"], ["idx"]))
    model.opset_import[0].version = 18
    n = ss.dim("n")
    res = sso.infer(model, dims={"n": n})
    assert res.status == "guarded", res.report()
    for size in (1, 8, 9):
        actual = _runs(model, np.zeros(size, np.float32))
        assert res.valid_at({n: size}) == (actual is not None), size


def test_integer_div_of_a_value_of_unknown_sign() -> None:
    """``((h - 1)//4 - 1) / 2 + 1`` (Segformer's overlapping patch grid, dynamo export: torch's
    ``//`` is ONNX's truncating ``Div``) had no value (the dividend's sign is not known), so a
    reshape to it got fresh dims. Truncation is ``max(a, 0)//2 - max(-a, 0)//2``: exact for every
    ``h``, negative dividends (h <= 4) included."""
    nodes = [
        helper.make_node("Shape", ["x"], ["sh"], start=0, end=1),
        helper.make_node("Sub", ["sh", "one1"], ["a"]),
        helper.make_node("Div", ["a", "four"], ["q"]),  # (h - 1)//4 (non-negative)
        helper.make_node("Sub", ["q", "one1"], ["d"]),  # may be -1
        helper.make_node("Div", ["d", "two"], ["t"]),  # truncated toward zero
        helper.make_node("Add", ["t", "one1"], ["size"]),
        helper.make_node("ConstantOfShape", ["size"], ["y"]),
    ]
    inits = [_init("one1", [1]), _init("four", 4), _init("two", 2)]
    model = _model(nodes, ["h"], inits)
    h = ss.dim("h")
    res = sso.infer(model, dims={"h": h})
    assert res.ok and "?" not in str(res.type_of("y")), (res.report(), str(res.type_of("y")))
    for hv in (1, 2, 4, 5, 8, 9, 13, 40):
        actual = run_all_values(model, {"x": np.zeros(hv, np.float32)})
        assert res.type_of("y").subs({h: hv}).shape == actual["y"], (hv, str(res.type_of("y")))
