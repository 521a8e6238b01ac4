"""Index guards from value ranges in small ONNX graphs, against onnxruntime.

The patterns of notes/hunt (real transformers exports that symshape accepted where onnxruntime
fails): a flattened 2-d mask read at ``row * total + col`` (KV-cache decoding: a range times a
size), and positions made by a cumulative sum (RoBERTa's ``cumsum(ids != pad)``, OPT's
``cumsum(ones) * ones - 1`` in float). At every size ``valid_at`` must be True exactly where
onnxruntime runs.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_helpers import ort_runs

import symshape as ss
import symshape.onnx as sso

pytest.importorskip("onnxruntime")


def _c(name: str, v: Any, dtype: Any = np.int64) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(v, dtype=dtype), name)


def _fill(out: str, dtype: int, v: int) -> onnx.NodeProto:
    """ConstantOfShape(shape) filled with ``v``."""
    value = helper.make_tensor("v", dtype, [1], [v])
    return helper.make_node("ConstantOfShape", ["shape"], [out], value=value)


# ----------------------------------------------------------------------------------------------
# a range times a size: the flattened mask of KV-cache decoding


def _flat_gather(swap: bool, offset: int) -> onnx.ModelProto:
    """mask (b, t) flattened, read at arange(b)[:, None] * t + arange(n) + offset."""
    nodes = [
        helper.make_node("Shape", ["mask"], ["b1"], start=0, end=1),
        helper.make_node("Shape", ["mask"], ["t1"], start=1, end=2),
        helper.make_node("Shape", ["q"], ["n1"], start=0, end=1),
        helper.make_node("Squeeze", ["b1"], ["b"]),
        helper.make_node("Squeeze", ["n1"], ["n"]),
        helper.make_node("Range", ["zero", "b", "one"], ["rows"]),
        helper.make_node("Range", ["off", "n", "one"], ["cols0"]),
        helper.make_node("Add", ["cols0", "zero"], ["cols"]),
        helper.make_node("Unsqueeze", ["rows", "ax1"], ["rows2"]),
        helper.make_node("Mul", ["t1", "rows2"] if swap else ["rows2", "t1"], ["base"]),
        helper.make_node("Add", ["base", "cols"], ["idx"]),
        helper.make_node("Flatten", ["mask"], ["flat"], axis=2),
        helper.make_node("Gather", ["flat", "idx"], ["y"], axis=0),
    ]
    # Range(off, n): entries off .. n - 1 (empty where n <= off)
    g = helper.make_graph(
        nodes, "flat_gather",
        [helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["b", "t"]),
         helper.make_tensor_value_info("q", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [_c("zero", 0), _c("one", 1), _c("ax1", [1]), _c("off", offset)],
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("swap", [False, True], ids=["row*t", "t*row"])
@pytest.mark.parametrize("offset", [0, 2])
def test_flattened_mask_needs_its_length(swap: bool, offset: int) -> None:
    model = _flat_gather(swap, offset)
    b, t, n = ss.dims("b t n")
    res = sso.infer(model, dims={"b": b, "t": t, "n": n})
    assert not res.errors and not res.unsupported, res.report()
    assert res.status == "guarded", res.report()
    for bv, tv, nv in itertools.product((1, 2, 3), range(1, 6), range(1, 8)):
        feeds = {"mask": np.zeros((bv, tv), np.float32), "q": np.zeros(nv, np.float32)}
        assert res.valid_at({b: bv, t: tv, n: nv}) == ort_runs(model, feeds), ((bv, tv, nv), res.valid_when())


# ----------------------------------------------------------------------------------------------
# running sums: positions from a mask


@dataclass(frozen=True)
class Positions:
    """idx = cumsum(src(x), axis 1) * scale + offset, read from a table of ``rows`` rows."""

    name: str
    src: str  # "ones" (ConstantOfShape 1), "twos", "ones_f" (float), "not_equal" (a bool cast)
    exclusive: int = 0
    reverse: int = 0
    scale: int = 1
    offset: int = 0
    times_mask: bool = False  # idx = cumsum(m) * m (RoBERTa, OPT)
    rows: int = 8


CASES = [
    Positions("ones", "ones"),
    Positions("exclusive", "ones", exclusive=1),
    Positions("reverse", "ones", reverse=1),
    Positions("reverse exclusive", "ones", exclusive=1, reverse=1),
    Positions("twos", "twos"),
    Positions("negative", "ones", scale=-1),
    Positions("negative exclusive", "ones", exclusive=1, scale=-1, offset=-1),
    Positions("bool cast (RoBERTa)", "not_equal", times_mask=True, offset=1),
    Positions("float ones (OPT)", "ones_f", times_mask=True, offset=1),
]


def _positions_model(p: Positions) -> onnx.ModelProto:
    float_src = p.src == "ones_f"
    nodes = [helper.make_node("Shape", ["x"], ["shape"])]
    if p.src == "not_equal":  # RoBERTa: (ids != pad) cast to int, ids = arange(s) + 2 broadcast
        nodes += [
            helper.make_node("Shape", ["x"], ["s1"], start=1, end=2),
            helper.make_node("Squeeze", ["s1"], ["s"]),
            helper.make_node("Range", ["two", "s", "one"], ["r0"]),
            helper.make_node("Add", ["r0", "s"], ["r"]),  # entries s + 2 .. 2s + 1: never 1
            helper.make_node("Expand", ["r", "shape"], ["ids"]),
            helper.make_node("Equal", ["ids", "one"], ["eq"]),
            helper.make_node("Not", ["eq"], ["ne"]),
            helper.make_node("Cast", ["ne"], ["m"], to=TensorProto.INT64),
        ]
    else:
        fill = {"ones": 1, "twos": 2, "ones_f": 1}[p.src]
        dt = TensorProto.FLOAT if float_src else TensorProto.INT64
        nodes.append(_fill("m", dt, fill))
    nodes.append(helper.make_node("CumSum", ["m", "one"], ["cs"], exclusive=p.exclusive, reverse=p.reverse))
    last = "cs"
    if p.times_mask:
        nodes.append(helper.make_node("Mul", ["cs", "m"], ["csm"]))
        last = "csm"
    k = "f" if float_src else ""
    nodes += [
        helper.make_node("Mul", [last, "scale" + k], ["sc"]),
        helper.make_node("Add", ["sc", "offset" + k], ["idx0"]),
        helper.make_node("Cast", ["idx0"], ["idx"], to=TensorProto.INT64),
        helper.make_node("Gather", ["table", "idx"], ["y"], axis=0),
    ]
    inits = [
        _c("one", 1), _c("two", 2), _c("scale", p.scale), _c("offset", p.offset),
        _c("scalef", p.scale, np.float32), _c("offsetf", p.offset, np.float32),
        _c("table", np.zeros((p.rows, 3)), np.float32),
    ]  # fmt: skip
    g = helper.make_graph(
        nodes, "positions", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", "s"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits,
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("p", CASES, ids=lambda p: p.name)
def test_running_sum_positions(p: Positions) -> None:
    model = _positions_model(p)
    b, s = ss.dims("b s")
    res = sso.infer(model, dims={"b": b, "s": s})
    assert not res.errors and not res.unsupported, res.report()
    assert res.status == "guarded", res.report()
    for bv, sv in itertools.product((1, 2), range(1, 2 * p.rows + 3)):
        ran = ort_runs(model, {"x": np.zeros((bv, sv), np.float32)})
        assert res.valid_at({b: bv, s: sv}) == ran, (p.name, (bv, sv), res.valid_when())


def test_runtime_axis_is_untracked() -> None:
    """CumSum along an axis known only at run time: no range (rather than the input's), no guard."""
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        _fill("m", TensorProto.INT64, 1),
        helper.make_node("CumSum", ["m", "axis"], ["idx"]),
        helper.make_node("Gather", ["table", "idx"], ["y"], axis=0),
    ]  # fmt: skip
    g = helper.make_graph(
        nodes, "axis", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", "s"]),
                        helper.make_tensor_value_info("axis", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [_c("table", np.zeros((8, 3)), np.float32)],
    )  # fmt: skip
    res = sso.infer(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
    assert res.ok and not res.guards, res.report()


def test_cumsum_axis_out_of_range_is_an_error() -> None:
    nodes = [helper.make_node("CumSum", ["x", "axis"], ["y"])]
    g = helper.make_graph(
        nodes, "bad", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", "s"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [_c("axis", 2)],
    )  # fmt: skip
    res = sso.infer(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
    assert [e.code for e in res.errors] == ["bad-attribute"], res.report()
