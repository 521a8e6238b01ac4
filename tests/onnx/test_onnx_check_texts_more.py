"""Guards and errors of checks a converter builds out of internal operators say in ONNX terms what
they check (:meth:`NodeContext.checking`), as in ``test_onnx_check_texts``: Resize's ``roi``, DFT's
and STFT's signal, window and frame length, Scan's scan lengths, batch and body sizes, Einsum's
labels. Per case: the text fragment expected in a guard or error line, and the verdict
(``valid_at``) against onnxruntime at sizes that satisfy the check and sizes that violate it.

Found by ``python -m tests.onnx.check_audit``: ``concatenate at ...: node 'R' (Resize) needs
`s1_0 == 8``` said nothing of the roi. A Reduce* axis named twice (was the error ``sum: duplicate
axes``) is reduced once, as onnxruntime does (the reference evaluator refuses it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx_helpers import In, make_model, node, ort_runs, reference, run_ort
from test_onnx_check_texts import Case, Feeds, check_case

import symshape as ss
import symshape.onnx as sso

F = np.float32


def _zeros(shapes: Callable[[Mapping[str, int]], dict[str, tuple[int, ...]]]) -> Feeds:
    return lambda s: {k: np.zeros(v, F) for k, v in shapes(s).items()}


def _resize_roi() -> Case:
    n0 = node(
        "Resize", ["x", "roi", "scales"], ["y"], name="R", coordinate_transformation_mode="tf_crop_and_resize"
    )
    inits = {"scales": np.array([1, 1, 2, 2], F)}
    model = make_model(
        [n0], [In("x", "float32", [1, 1, 2, 2]), In("roi", "float32", ["k"])], ["y"], 13, inits
    )
    feeds = _zeros(lambda s: {"x": (1, 1, 2, 2), "roi": (s["k"],)})
    return Case(
        "Resize roi",
        model,
        "node 'R' (Resize): roi is (8,): a start and an end per axis of the input",
        feeds,
        {"k": 8},
        {"k": 6},
    )


def _resize_roi_axes() -> Case:
    n0 = node(
        "Resize",
        ["x", "roi", "scales"],
        ["y"],
        name="R",
        coordinate_transformation_mode="tf_crop_and_resize",
        axes=[2, 3],
    )
    inits = {"scales": np.array([2, 2], F)}
    model = make_model(
        [n0], [In("x", "float32", [1, 1, 2, 2]), In("roi", "float32", ["k"])], ["y"], 18, inits
    )
    feeds = _zeros(lambda s: {"x": (1, 1, 2, 2), "roi": (s["k"],)})
    return Case(
        "Resize roi with axes",
        model,
        "node 'R' (Resize): roi is (4,): a start and an end per resized axis (axes)",
        feeds,
        {"k": 4},
        {"k": 6},
    )


def _dft(onesided: int, inverse: int, good: int, bad: int, fragment: str) -> Case:
    n0 = node("DFT", ["x"], ["y"], name="D", onesided=onesided, inverse=inverse, axis=1)
    model = make_model([n0], [In("x", "float32", [1, 4, "c"])], ["y"], 17)
    return Case(
        f"DFT onesided={onesided} inverse={inverse}",
        model,
        f"node 'D' (DFT): {fragment}",
        _zeros(lambda s: {"x": (1, 4, s["c"])}),
        {"c": good},
        {"c": bad},
    )


def _stft(
    id: str, fragment: str, window: int | str | None, length: int | None, signal: tuple[int | str, ...]
) -> Callable[[Mapping[str, int], Mapping[str, int]], Case]:
    def make(good: Mapping[str, int], bad: Mapping[str, int]) -> Case:
        ins = [In("x", "float32", list(signal))] + (
            [In("w", "float32", [window])] if window is not None else []
        )
        inits: dict[str, Any] = {"step": np.array(2, np.int64)}
        if length is not None:
            inits["len"] = np.array(length, np.int64)
        names = ["x", "step", "w" if window is not None else "", "len" if length is not None else ""]
        n0 = node("STFT", names, ["y"], name="S", onesided=1)
        model = make_model([n0], ins, ["y"], 17, inits)

        def feeds(s: Mapping[str, int]) -> dict[str, np.ndarray[Any, Any]]:
            out = {"x": np.zeros(tuple(s[d] if isinstance(d, str) else d for d in signal), F)}
            if window is not None:
                out["w"] = np.ones((s[window] if isinstance(window, str) else window,), F)
            return out

        return Case(id, model, f"node 'S' (STFT): {fragment}", feeds, good, bad)

    return make


def _einsum_broadcast() -> Case:
    n0 = node("Einsum", ["a", "b"], ["y"], name="E", equation="bij,bjk->bik")
    model = make_model([n0], [In("a", "float32", ["n", 2, 3]), In("b", "float32", [2, 3, 4])], ["y"], 12)
    return Case(
        "Einsum labels broadcast",
        model,
        "(Einsum): operand 1's sizes at label(s) 'b', 'j' broadcast with operand 0's (one size, or 1)",
        _zeros(lambda s: {"a": (s["n"], 2, 3), "b": (2, 3, 4)}),
        {"n": 2},
        {"n": 3},
    )


def _einsum_diagonal() -> Case:
    n0 = node("Einsum", ["a"], ["y"], name="E", equation="ii->i")
    model = make_model([n0], [In("a", "float32", [3, "k"])], ["y"], 12)
    return Case(
        "Einsum diagonal",
        model,
        "node 'E' (Einsum): the axes of operand 0 that label 'i' repeats have one size (a diagonal)",
        _zeros(lambda s: {"a": (3, s["k"])}),
        {"k": 3},
        {"k": 4},
    )


def _vi(name: str, shape: list[int | str] | None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def _scan_body(declared: list[int | str] | None) -> onnx.GraphProto:
    """``s_out = s_in + a + b`` and the scan output ``s_out``: a state of the slices' shape."""
    nodes = [
        helper.make_node("Add", ["s_in", "a"], ["t"]),
        helper.make_node("Add", ["t", "b"], ["s_out"]),
        helper.make_node("Identity", ["s_out"], ["o"]),
    ]
    ins = [_vi("s_in", declared), _vi("a", None), _vi("b", None)]
    return helper.make_graph(nodes, "body", ins, [_vi("s_out", None), _vi("o", None)])


def _scan(
    id: str,
    fragment: str,
    declared: list[int | str] | None,
    shapes: list[list[int | str]],
    good: int,
    bad: int,
) -> Case:
    n0 = node(
        "Scan", ["s", "xa", "xb"], ["fin", "ys"], name="SC", num_scan_inputs=2, body=_scan_body(declared)
    )
    ins = [In(k, "float32", v) for k, v in zip(["s", "xa", "xb"], shapes)]
    model = make_model([n0], ins, ["fin", "ys"], 11)

    def feeds(s: Mapping[str, int]) -> dict[str, np.ndarray[Any, Any]]:
        return {
            i.name: np.zeros(tuple(s[d] if isinstance(d, str) else d for d in i.shape or ()), F) for i in ins
        }

    names = sorted({d for v in shapes for d in v if isinstance(d, str)})
    assert len(names) == 1
    return Case(id, model, f"node 'SC' (Scan): {fragment}", feeds, {names[0]: good}, {names[0]: bad})


def _scan_v8() -> Case:
    body = _scan_body(None)
    n0 = node("Scan", ["", "s", "xa", "xb"], ["fin", "ys"], name="SC", num_scan_inputs=2, body=body)
    ins = [In("s", "float32", ["b", 2]), In("xa", "float32", [2, 3, 2]), In("xb", "float32", [2, 3, 2])]
    model = make_model([n0], ins, ["fin", "ys"], 8)
    return Case(
        "Scan-8 state batch",
        model,
        "node 'SC' (Scan): state 0 has the scan inputs' batch (axis 0)",
        _zeros(lambda s: {"s": (s["b"], 2), "xa": (2, 3, 2), "xb": (2, 3, 2)}),
        {"b": 2},
        {"b": 3},
    )


CASES = [
    _resize_roi(),
    _resize_roi_axes(),
    _dft(0, 0, 2, 3, "the input's last axis holds 1 (real) or 2 (complex) values"),
    _dft(1, 1, 2, 3, "the input of a one-sided inverse DFT is complex: its last axis holds 2 values"),
    _stft(
        "STFT window longer than the signal",
        "the window's length is at most the signal's length (axis 1)",
        "w",
        None,
        (1, 8, 1),
    )({"w": 8}, {"w": 9}),
    _stft(
        "STFT frame_length longer than the signal",
        "the frame length 4 is at most the signal's length (axis 1)",
        None,
        4,
        (1, "l", 1),
    )({"l": 4}, {"l": 3}),
    _stft("STFT window of frame_length", "the window's length is frame_length 4", "w", 4, (1, 8, 1))(
        {"w": 4}, {"w": 5}
    ),
    _einsum_broadcast(),
    _einsum_diagonal(),
    _scan(
        "Scan lengths",
        "scan input 1 has the length (axis 0) of the scan inputs before it",
        None,
        [[2], [3, 2], ["l", 2]],
        3,
        2,
    ),
    _scan(
        "Scan declared body input",
        "the body input 's_in' has the sizes the body declares (2)",
        [2],
        [["n"], [3, 2], [3, 2]],
        2,
        3,
    ),
    _scan(
        "Scan final state",
        "the body's state output 0 's_out' has its initial state's shape",
        None,
        [["n", 2], [3, 1, 2], [3, 2, 2]],
        2,
        1,
    ),
    _scan_v8(),
]


def test_resize_roi_of_every_axis_with_axes() -> None:
    """With ``axes``, onnxruntime also runs a roi of two values per axis of the input."""
    base = _resize_roi_axes().model
    for k, want in ((8, True), (6, False), (4, True)):
        model = onnx.ModelProto()
        model.CopyFrom(base)
        model.graph.input[1].type.tensor_type.shape.dim[0].dim_value = k
        assert ort_runs(model, {"x": np.zeros((1, 1, 2, 2), F), "roi": np.zeros(k, F)}) == want
        assert (sso.infer(model).status == "ok") == want, k


@pytest.mark.parametrize("scales", [[1, 2, 2], [1, 1, 1, 2, 2]])
def test_resize_scales_for_another_rank(scales: list[int]) -> None:
    """Scales (or sizes) of another length than the input's rank: an error saying so (was a
    reshape's or take's), onnxruntime's verdict."""
    n0 = node("Resize", ["x", "", "s"], ["y"], name="R")
    inits = {"s": np.array(scales, F)}
    model = make_model([n0], [In("x", "float32", [1, 1, 2, 2])], ["y"], 13, inits)
    assert not ort_runs(model, {"x": np.zeros((1, 1, 2, 2), F)})
    res = sso.infer(model)
    text = f"node 'R' (Resize): {len(scales)} scales or sizes for an input of rank 4"
    assert res.status == "error" and text in res.errors[0].render(source=False)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_check_text_and_verdict(case: Case) -> None:
    check_case(case)


@pytest.mark.parametrize(
    ("op", "opset", "axes"),
    [("ReduceSum", 13, [1, 1]), ("ReduceMax", 18, [1, -2]), ("ReduceMean", 11, [2, 2])],
)
def test_reduce_repeated_axis(op: str, opset: int, axes: list[int]) -> None:
    """A repeated axis is reduced once, as onnxruntime runs it (its shape at several sizes); the
    reference evaluator refuses it (two runtimes disagree: symshape follows the one that runs it,
    and onnx's own inference, rather than call the model wrong)."""
    x = In("x", "float32", ["n", 3, 4])
    if opset >= 18 or op == "ReduceSum":
        inits = {"a": np.array(axes, np.int64)}
        model = make_model([node(op, ["x", "a"], ["y"], name="RD")], [x], ["y"], opset, inits)
    else:
        model = make_model([node(op, ["x"], ["y"], name="RD", axes=axes)], [x], ["y"], opset)
    n = ss.dim("n")
    res = sso.infer(model, dims={"n": n})
    assert res.status == "ok", res.report()
    t = res.type_of("y")
    assert isinstance(t, ss.TensorType)
    for size in (1, 2, 5):
        (y,) = run_ort(model, {"x": np.zeros((size, 3, 4), F)})
        assert tuple(int(d) for d in t.subs({n: size}).dims) == y.shape
    with pytest.raises(Exception, match="duplicate"):
        reference(model, {"x": np.zeros((2, 3, 4), F)})
