"""``Pad`` with negative pads (crops) against onnxruntime, found by the differential fuzzer
(:mod:`tests.onnx.test_onnx_differential_fuzz`).

A crop was a numpy slice after the padding, which clamps: ``Pad(r, [-1, 0])`` of an empty
``Range`` was ``ok`` (an empty result) where onnxruntime fails (the output size ``0 - 1`` is
negative); and ``edge``/``reflect``/``wrap`` with a crop but no pad on an axis had no condition,
where onnxruntime needs an entry left after the crop ("Pad: invalid mode: 2 with zero effective
input extent"): ``Pad(x (c,), [0, -1], mode="edge")`` at ``c = 1``. Each row: every pad pair on
an axis of symbolic length ``d`` (1 to 4), symshape's ``valid_at`` and shape against onnxruntime;
and the same for pads computed from the shape (``[b, d + e]``), which had no mode check at all.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from tests.onnx.onnx_helpers import run_ort

import symshape as ss
import symshape.onnx as sso

PAIRS = [(-1, 0), (0, -1), (-2, 3), (3, -2), (-1, -1), (-2, 0), (1, -1), (-1, 2), (2, -1), (-3, 1)]
PAIRS += [(1, 0), (0, 2)]
MODES = ["constant", "edge", "reflect", "wrap"]


def _model(mode: str, pads: list[int], opset: int = 19) -> onnx.ModelProto:
    g = helper.make_graph(
        [helper.make_node("Pad", ["x", "pads"], ["y"], mode=mode)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, "d"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(pads, dtype=np.int64), "pads")],
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _runs(model: onnx.ModelProto, feeds: dict[str, Any]) -> tuple[int, ...] | None:
    try:
        return tuple(run_ort(model, feeds)[0].shape)
    except Exception:
        return None


@pytest.mark.parametrize(("mode", "pair"), list(itertools.product(MODES, PAIRS)))
def test_pad_crops_against_onnxruntime(mode: str, pair: tuple[int, int]) -> None:
    b, e = pair
    model = _model(mode, [0, b, 0, e])
    d = ss.dim("d")
    res = sso.infer(model, dims={"d": d})
    assert not res.unsupported, res.report()
    for n in (1, 2, 3, 4):
        got = _runs(model, {"x": np.arange(2 * n, dtype=np.float32).reshape(2, n)})
        valid = not res.errors and res.valid_at({d: n})
        assert valid == (got is not None), f"d={n}: onnxruntime {got}, valid_at {valid}\n{res.report()}"
        if got is not None:
            t = res.type_of("y")
            assert isinstance(t, ss.TensorType) and t.subs({d: n}) == ss.Tensor(got, "float32")


def test_pad_crop_of_an_empty_range() -> None:
    """The fuzzer's graph: ``Range(-1, c - 1, -1)`` is empty; cropping it fails at every ``c``."""
    named = [("two", 2), ("one", 1), ("m1", -1)]
    k = {n: numpy_helper.from_array(np.array(v, dtype=np.int64), n) for n, v in named}
    nodes = [
        helper.make_node("Shape", ["x"], ["sh"]),
        helper.make_node("Gather", ["sh", "two"], ["g"], axis=0),
        helper.make_node("Sub", ["g", "one"], ["lim"]),
        helper.make_node("Range", ["m1", "lim", "m1"], ["r"]),
        helper.make_node("Pad", ["r", "pads"], ["y"]),
    ]
    g = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["a", "c", 1])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, None)],
        [*k.values(), numpy_helper.from_array(np.array([-1, 0], dtype=np.int64), "pads")],
    )  # fmt: skip
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    a, c = ss.dim("a"), ss.dim("c")
    res = sso.infer(model, dims={"a": a, "c": c})
    for n in (1, 3):
        assert _runs(model, {"x": np.zeros((2, n, 1), np.float32)}) is None
        assert not res.valid_at({a: 2, c: n}), res.report()


COMPUTED = [(0, -2), (-2, 0), (1, -3), (-1, -1), (0, 0), (2, -2), (-3, 2)]


@pytest.mark.parametrize(("mode", "pair"), list(itertools.product(MODES, COMPUTED)))
def test_pad_computed_against_onnxruntime(mode: str, pair: tuple[int, int]) -> None:
    """Pads ``[b, d + e]`` computed from ``x``'s shape (``d``)."""
    b, e = pair
    nodes = [
        helper.make_node("Shape", ["x"], ["sh"]),
        helper.make_node("Add", ["sh", "e"], ["end"]),
        helper.make_node("Concat", ["b", "end"], ["pads"], axis=0),
        helper.make_node("Pad", ["x", "pads"], ["y"], mode=mode),
    ]
    inits = [numpy_helper.from_array(np.array([v], dtype=np.int64), n) for n, v in (("b", b), ("e", e))]
    g = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["d"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits,
    )  # fmt: skip
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)])
    d = ss.dim("d")
    res = sso.infer(model, dims={"d": d})
    for n in (1, 2, 3, 4, 6):
        got = _runs(model, {"x": np.arange(n, dtype=np.float32)})
        valid = not res.errors and res.valid_at({d: n})
        assert valid == (got is not None), f"d={n}: onnxruntime {got}, valid_at {valid}\n{res.report()}"
        if got is not None:
            t = res.type_of("y")
            assert isinstance(t, ss.TensorType) and t.subs({d: n}) == ss.Tensor(got, "float32")
