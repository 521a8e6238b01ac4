"""Guards and errors of checks a converter builds out of internal operators (``take``, ``stack``,
``arange``, ...) say in ONNX terms what they check: the node, its input or attribute, the axis and
the condition (:meth:`NodeContext.checking`), not only the internal operator. Per case: the text
fragment expected in a guard or error line, and the verdict (``valid_at``) against onnxruntime at
sizes that satisfy the check and sizes that violate it.

Found by an audit of every guard and error line over onnx's node cases with symbolic sizes, the
light models with batch ``N`` and error-injected variants (wrong initializer shapes, mismatched
sizes): ``take at g: node 'MU' (MaxUnpool) needs `2*h < 5``` said nothing of the output_shape.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
import pytest
from onnx_helpers import In, make_model, node, ort_runs

import symshape as ss
import symshape.onnx as sso

Feeds = Callable[[Mapping[str, int]], dict[str, np.ndarray[Any, Any]]]


@dataclass(frozen=True)
class Case:
    id: str
    model: onnx.ModelProto
    fragment: str  # in one guard or error line
    feeds: Feeds  # concrete inputs at the symbols' sizes
    good: Mapping[str, int]  # sizes that satisfy the check
    bad: Mapping[str, int]  # sizes that violate it


def _max_unpool() -> Case:
    n0 = node("MaxUnpool", ["x", "i", "os"], ["y"], name="MU", kernel_shape=[2, 2], strides=[2, 2])
    ins = [In("x", "float32", [1, 1, "h", 2]), In("i", "int64", [1, 1, "h", 2])]
    model = make_model([n0], ins, ["y"], opset=11, inits={"os": np.array([1, 1, 4, 4], np.int64)})

    def feeds(s: Mapping[str, int]) -> dict[str, np.ndarray[Any, Any]]:
        shape = (1, 1, s["h"], 2)
        return {"x": np.ones(shape, np.float32), "i": np.zeros(shape, np.int64)}

    return Case(
        "MaxUnpool output_shape",
        model,
        "node 'MU' (MaxUnpool): output_shape[2] is no smaller than the unpooled size of axis 2",
        feeds,
        {"h": 2},
        {"h": 3},
    )


def _zeros(shapes: Callable[[Mapping[str, int]], dict[str, tuple[int, ...]]]) -> Feeds:
    return lambda s: {k: np.zeros(v, np.float32) for k, v in shapes(s).items()}


def _gemm() -> Case:
    n0 = node("Gemm", ["a", "b", "c"], ["y"], name="G")
    ins = [In("a", "float32", [2, 3]), In("b", "float32", [3, 4]), In("c", "float32", ["m", 4])]
    model = make_model([n0], ins, ["y"], opset=13)
    feeds = _zeros(lambda s: {"a": (2, 3), "b": (3, 4), "c": (s["m"], 4)})
    return Case(
        "Gemm C", model, "node 'G' (Gemm): C broadcasts to the product's (M, N)", feeds, {"m": 2}, {"m": 3}
    )


def _affine_grid() -> Case:
    n0 = node("AffineGrid", ["theta", "size"], ["grid"], name="AG")
    ins = [In("theta", "float32", ["n", 2, 3])]
    model = make_model([n0], ins, ["grid"], opset=20, inits={"size": np.array([2, 1, 4, 5], np.int64)})
    feeds = _zeros(lambda s: {"theta": (s["n"], 2, 3)})
    return Case(
        "AffineGrid theta",
        model,
        "node 'AG' (AffineGrid): theta is (N, 2, 3) for size's N = 2",
        feeds,
        {"n": 2},
        {"n": 3},
    )


def _attention() -> Case:
    n0 = node("Attention", ["q", "k", "v"], ["y"], name="A")
    ins = [
        In("q", "float32", ["b", 2, 3, 4]),
        In("k", "float32", [2, 2, 5, 4]),
        In("v", "float32", [2, 2, 5, 6]),
    ]
    model = make_model([n0], ins, ["y"], opset=23)
    feeds = _zeros(lambda s: {"q": (s["b"], 2, 3, 4), "k": (2, 2, 5, 4), "v": (2, 2, 5, 6)})
    return Case(
        "Attention batch",
        model,
        "node 'A' (Attention): Q's and K's batch sizes (axis 0) alike",
        feeds,
        {"b": 2},
        {"b": 1},
    )


def _col2im() -> Case:
    n0 = node("Col2Im", ["x", "image", "block"], ["y"], name="C2I")
    inits = {"image": np.array([3, 3], np.int64), "block": np.array([2, 2], np.int64)}
    model = make_model([n0], [In("x", "float32", [1, 4, "l"])], ["y"], opset=18, inits=inits)
    feeds = _zeros(lambda s: {"x": (1, 4, s["l"])})
    return Case(
        "Col2Im blocks",
        model,
        "(Col2Im): the input's axis 2 is the number of blocks L = 4",
        feeds,
        {"l": 4},
        {"l": 5},
    )


def _conv_transpose() -> Case:
    n0 = node("ConvTranspose", ["x", "w"], ["y"], name="CT")
    ins = [In("x", "float32", [1, "c", 3, 3]), In("w", "float32", [2, 1, 2, 2])]
    model = make_model([n0], ins, ["y"], opset=11)
    feeds = _zeros(lambda s: {"x": (1, s["c"], 3, 3), "w": (2, 1, 2, 2)})
    return Case(
        "ConvTranspose channels",
        model,
        "(ConvTranspose): the input's channels (axis 1) are the weight's axis 0",
        feeds,
        {"c": 2},
        {"c": 3},
    )


def _deform_conv() -> Case:
    n0 = node("DeformConv", ["x", "w", "off"], ["y"], name="DC")
    ins = [
        In("x", "float32", [1, 1, 3, 3]),
        In("w", "float32", [1, 1, 2, 2]),
        In("off", "float32", [1, "k", 2, 2]),
    ]
    model = make_model([n0], ins, ["y"], opset=19)
    feeds = _zeros(lambda s: {"x": (1, 1, 3, 3), "w": (1, 1, 2, 2), "off": (1, s["k"], 2, 2)})
    return Case(
        "DeformConv offset",
        model,
        "(DeformConv): the offset is (N, 2*offset_group*K, *out)",
        feeds,
        {"k": 8},
        {"k": 6},
    )


def _rnn() -> Case:
    n0 = node("RNN", ["x", "w", "r"], ["y"], name="R", hidden_size=4)
    ins = [In("x", "float32", [2, 1, 3]), In("w", "float32", [1, 4, "i"]), In("r", "float32", [1, 4, 4])]
    model = make_model([n0], ins, ["y"], opset=14)
    feeds = _zeros(lambda s: {"x": (2, 1, 3), "w": (1, 4, s["i"]), "r": (1, 4, 4)})
    return Case("RNN W", model, "(RNN): W's input_size (axis 2) is X's", feeds, {"i": 3}, {"i": 2})


def _scatter_elements() -> Case:
    n0 = node("ScatterElements", ["data", "ind", "upd"], ["y"], name="SE")
    ins = [In("data", "float32", [3, 3]), In("ind", "int64", [2, 3]), In("upd", "float32", ["u", 3])]
    model = make_model([n0], ins, ["y"], opset=13)

    def feeds(s: Mapping[str, int]) -> dict[str, np.ndarray[Any, Any]]:
        return {
            "data": np.zeros((3, 3), np.float32),
            "ind": np.zeros((2, 3), np.int64),
            "upd": np.zeros((s["u"], 3), np.float32),
        }

    return Case(
        "ScatterElements updates",
        model,
        "(ScatterElements): the updates have the shape of what the indices address",
        feeds,
        {"u": 2},
        {"u": 3},
    )


def _reverse_sequence() -> Case:
    n0 = node("ReverseSequence", ["x", "lens"], ["y"], name="RS", time_axis=0, batch_axis=1)
    model = make_model(
        [n0], [In("x", "float32", [3, "b"])], ["y"], opset=10, inits={"lens": np.array([1, 2], np.int64)}
    )
    feeds = _zeros(lambda s: {"x": (3, s["b"])})
    return Case(
        "ReverseSequence lens",
        model,
        "(ReverseSequence): sequence_lens has one entry per batch row (axis 1)",
        feeds,
        {"b": 2},
        {"b": 3},
    )


def _nll_loss() -> Case:
    n0 = node("NegativeLogLikelihoodLoss", ["x", "t"], ["y"], name="NLL")
    model = make_model([n0], [In("x", "float32", [2, 3]), In("t", "int64", ["n"])], ["y"], opset=13)

    def feeds(s: Mapping[str, int]) -> dict[str, np.ndarray[Any, Any]]:
        return {"x": np.zeros((2, 3), np.float32), "t": np.zeros((s["n"],), np.int64)}

    return Case(
        "NLL target",
        model,
        "(NegativeLogLikelihoodLoss): the target is the scores' shape without the class axis 1",
        feeds,
        {"n": 2},
        {"n": 3},
    )


def _quantize() -> Case:
    n0 = node("QuantizeLinear", ["x", "s"], ["y"], name="Q", axis=1)
    model = make_model([n0], [In("x", "float32", [2, 3]), In("s", "float32", ["k"])], ["y"], opset=13)

    def feeds(s: Mapping[str, int]) -> dict[str, np.ndarray[Any, Any]]:
        return {"x": np.zeros((2, 3), np.float32), "s": np.ones((s["k"],), np.float32)}

    return Case(
        "QuantizeLinear scale",
        model,
        "(QuantizeLinear): a 1-d scale has one entry, or one per entry of the input's axis 1",
        feeds,
        {"k": 3},
        {"k": 2},
    )


def _nms() -> Case:
    n0 = node("NonMaxSuppression", ["boxes", "scores"], ["sel"], name="NMS")
    model = make_model(
        [n0], [In("boxes", "float32", [1, "n", 4]), In("scores", "float32", [1, 1, 3])], ["sel"], opset=11
    )
    feeds = _zeros(lambda s: {"boxes": (1, s["n"], 4), "scores": (1, 1, 3)})
    return Case(
        "NonMaxSuppression boxes",
        model,
        "(NonMaxSuppression): boxes (B, N, 4) and scores (B, C, N) have one B and one N",
        feeds,
        {"n": 3},
        {"n": 2},
    )


def _grid_sample() -> Case:
    n0 = node("GridSample", ["x", "grid"], ["y"], name="GS")
    model = make_model(
        [n0], [In("x", "float32", ["n", 1, 3, 3]), In("grid", "float32", [2, 2, 2, 2])], ["y"], opset=16
    )
    feeds = _zeros(lambda s: {"x": (s["n"], 1, 3, 3), "grid": (2, 2, 2, 2)})
    return Case(
        "GridSample batch",
        model,
        "(GridSample): X's and the grid's N (axis 0) alike",
        feeds,
        {"n": 2},
        {"n": 3},
    )


def _rotary() -> Case:
    n0 = node("RotaryEmbedding", ["x", "cos", "sin"], ["y"], name="RE")
    ins = [
        In("x", "float32", [1, 1, 2, 4]),
        In("cos", "float32", ["b", 2, 2]),
        In("sin", "float32", ["b", 2, 2]),
    ]
    model = make_model([n0], ins, ["y"], opset=23)
    feeds = _zeros(lambda s: {"x": (1, 1, 2, 4), "cos": (s["b"], 2, 2), "sin": (s["b"], 2, 2)})
    return Case(
        "RotaryEmbedding caches",
        model,
        "(RotaryEmbedding): the caches are (batch, sequence, rotary width / 2) of X",
        feeds,
        {"b": 1},
        {"b": 2},
    )


def _layer_norm() -> Case:
    n0 = node("LayerNormalization", ["x", "scale"], ["y"], name="LN")
    model = make_model([n0], [In("x", "float32", [2, 3]), In("scale", "float32", ["k"])], ["y"], opset=17)
    feeds = _zeros(lambda s: {"x": (2, 3), "scale": (s["k"],)})
    return Case(
        "LayerNormalization scale",
        model,
        "(LayerNormalization): Scale and B broadcast to X's shape, one way",
        feeds,
        {"k": 3},
        {"k": 2},
    )


def _prelu() -> Case:
    n0 = node("PRelu", ["x", "slope"], ["y"], name="PR")
    model = make_model([n0], [In("x", "float32", [2, 3]), In("slope", "float32", ["k"])], ["y"], opset=16)
    feeds = _zeros(lambda s: {"x": (2, 3), "slope": (s["k"],)})
    return Case(
        "PRelu slope", model, "(PRelu): slope broadcasts to X's shape, one way", feeds, {"k": 3}, {"k": 2}
    )


def _det() -> Case:
    n0 = node("Det", ["x"], ["y"], name="D")
    model = make_model([n0], [In("x", "float32", [3, 2, "k"])], ["y"], opset=11)
    feeds = _zeros(lambda s: {"x": (3, 2, s["k"])})
    return Case(
        "Det square", model, "(Det): X's last two axes are square matrices", feeds, {"k": 2}, {"k": 3}
    )


CASES = [
    _det(),
    _layer_norm(),
    _prelu(),
    _grid_sample(),
    _rotary(),
    _reverse_sequence(),
    _nll_loss(),
    _quantize(),
    _nms(),
    _max_unpool(),
    _gemm(),
    _affine_grid(),
    _attention(),
    _col2im(),
    _conv_transpose(),
    _deform_conv(),
    _rnn(),
    _scatter_elements(),
]


def _lines(res: sso.OnnxInferenceResult) -> list[str]:
    return [g.describe() for g in res.guards] + [e.render(source=False) for e in res.errors]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_check_text_and_verdict(case: Case) -> None:
    check_case(case)


def check_case(case: Case) -> None:
    """The case's text is in a guard or error line, and ``valid_at`` is onnxruntime's verdict at
    the sizes that satisfy the check and at those that violate it (test_onnx_check_texts_more's
    cases too)."""
    names = sorted({*case.good, *case.bad})
    syms = {k: ss.dim(k) for k in names}
    res = sso.infer(case.model, dims=syms)
    lines = _lines(res)
    assert any(case.fragment in ln for ln in lines), lines
    for sizes, want in ((case.good, True), (case.bad, False)):
        env: dict[Any, int] = {syms[k]: v for k, v in sizes.items()}
        assert ort_runs(case.model, case.feeds(sizes)) == want, (sizes, "onnxruntime")
        assert res.valid_at(env) == want, (sizes, lines)
