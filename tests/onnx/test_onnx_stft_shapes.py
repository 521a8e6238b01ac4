"""``STFT`` against onnxruntime (and onnx's reference evaluator where onnxruntime lacks a case) at
several sizes.

symshape checked neither the signal's last axis (1 or 2 values: onnxruntime refuses 3), nor the
window's length against ``frame_length``, and refused a frame length given only by a window of
symbolic length or by the signal (``unsupported-op``; the spec: "When both window and frame_length
are omitted, frame_length defaults to signal_length", which onnxruntime refuses and the reference
runs). onnxruntime is looser than the spec on a complex one-sided STFT ("if the input or window
tensors are complex, then onesided output is not possible"), on 1-element steps and lengths ("must
be a scalar"; onnx's inference and the reference refuse them too) and on a rank-2 signal ("expected
to have rank 3"): symshape follows the spec, and those sizes are expected to differ.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from onnx_helpers import In, make_model, node
from size_oracle import disagreements, feeds_of

X = In("x", "float32", ["b", "l", "c"])
BLC = [(1, 8, 1), (2, 9, 1), (1, 8, 2), (1, 4, 1), (1, 3, 1), (2, 16, 3), (1, 1, 1), (1, 5, 2)]
SIZES = [dict(b=b, l=n, c=c) for b, n, c in BLC]
WS = [dict(b=1, l=8, c=1, w=4), dict(b=1, l=8, c=1, w=3), dict(b=1, l=8, c=1, w=5), dict(b=1, l=3, c=1, w=4),
      dict(b=2, l=9, c=2, w=9), dict(b=1, l=8, c=1, w=1), dict(b=1, l=8, c=3, w=2)]  # fmt: skip
W = In("w", "float32", ["w"])

Row = tuple[
    str, dict[str, Any], list[In], dict[str, Any], list[dict[str, int]], str, Callable[[dict[str, int]], bool]
]


def _and_w4(p: Callable[[dict[str, int]], bool]) -> Callable[[dict[str, int]], bool]:
    return lambda s: s["w"] == 4 and p(s)


def _rows() -> list[Row]:
    """(id, attributes, inputs, constant inputs (step "st", length "fl", window "w" of ones), sizes,
    runner, the sizes where the runtime runs but the spec refuses)."""
    rows: list[Row] = []
    for one in (0, 1):
        a = {"onesided": one}

        def complex_one_sided(fl: int | None, one: int = one) -> Callable[[dict[str, int]], bool]:
            """Complex input to a one-sided STFT whose frames fit (``fl``: the window's ``w``)."""
            return lambda s: bool(one) and s["c"] == 2 and s["l"] >= (s["w"] if fl is None else fl)

        for name, consts, fl in [
            ("fl4", {"fl": 4}, 4), ("win4", {"w": 4}, 4), ("fl4-win4", {"fl": 4, "w": 4}, 4),
            ("fl6-step3", {"fl": 6, "st": 3}, 6),
        ]:  # fmt: skip
            rows.append((f"one{one}-{name}", a, [X], consts, SIZES, "onnxruntime", complex_one_sided(fl)))
        rows.append((f"one{one}-fl4-win5", a, [X], {"fl": 4, "w": 5}, SIZES, "onnxruntime", lambda s: False))
        rows.append((f"one{one}-win-symbolic", a, [X, W], {}, WS, "onnxruntime", complex_one_sided(None)))
        rows.append(
            (
                f"one{one}-fl4-win-symbolic",
                a,
                [X, W],
                {"fl": 4},
                WS,
                "onnxruntime",
                _and_w4(complex_one_sided(4)),
            )
        )
        rows.append((f"one{one}-signal-length", a, [X], {}, SIZES, "reference", complex_one_sided(1)))
        one_element: list[tuple[str, dict[str, Any]]] = [("step-1-element", {"fl": 4, "st": [2]}),
                                                         ("fl-1-element", {"fl": [4]})]  # fmt: skip
        for name, given in one_element:
            rows.append((f"one{one}-{name}", a, [X], given, SIZES, "onnxruntime",
                         lambda s: s["c"] != 3 and s["l"] >= 4))  # fmt: skip
    rows.append(("rank-2", {}, [In("x", "float32", ["b", "l"])], {"fl": 4}, [dict(b=1, l=8), dict(b=2, l=3)],
                 "onnxruntime", lambda s: s["l"] >= 4))  # fmt: skip
    return rows


ROWS = _rows()


@pytest.mark.parametrize(("attrs", "ins", "consts", "sizes", "runner", "spec_only"), [r[1:] for r in ROWS],
                         ids=[r[0] for r in ROWS])  # fmt: skip
def test_stft_against_runtime(
    attrs: dict[str, Any], ins: list[In], consts: dict[str, Any], sizes: list[dict[str, int]], runner: str,
    spec_only: Callable[[dict[str, int]], bool],
) -> None:  # fmt: skip
    inits = {"st": np.array(consts.get("st", 2), dtype=np.int64)}
    inputs = ["x", "st", "", ""]
    if "fl" in consts:
        inits["fl"], inputs[3] = np.array(consts["fl"], dtype=np.int64), "fl"
    if "w" in consts:
        inits["w"] = np.ones(consts["w"], dtype=np.float32)
    if "w" in consts or W in ins:
        inputs[2] = "w"
    while inputs[-1] == "":
        inputs.pop()
    model = make_model([node("STFT", inputs, ["y"], **attrs)], ins, ["y"], opset=17, inits=inits)
    names = sorted({d for i in ins for d in i.shape or () if isinstance(d, str)})
    got = disagreements(model, names, sizes, feeds_of(ins), runner=runner)
    expected = [str(s) for s in sizes if spec_only(s)]
    assert [g.split(f": {runner} runs; symshape excludes it")[0] for g in got] == expected, got
