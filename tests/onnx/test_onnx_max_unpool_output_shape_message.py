"""``MaxUnpool`` whose ``output_shape`` can never fit the input: the error speaks ONNX (issue 14).

It said "concatenate: tensors 0 and 1 differ on non-concatenated axis 1" (another batch or channel
count) or "take of indices in [0, 3] from axis 2 ... needs `3 <= 2`" (a spatial size too small).
Now it names the node, the ``output_shape`` and the least size the input allows (or the input's
batch and channel sizes), as onnxruntime does ("output_shape is smaller than minimum required",
"output_shape batch and channel dimensions must match input"), with onnxruntime's verdict at every
size tried (1 among them).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx_helpers import In, make_model, node, run_ort

import symshape.onnx as sso

K2S2: dict[str, Any] = {"kernel_shape": [2, 2], "strides": [2, 2]}
K3S2P1: dict[str, Any] = {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}

ROWS: list[tuple[dict[str, Any], tuple[int, ...], tuple[int, ...], str | None]] = [
    # attributes, input shape, output_shape, what the error says (None: it runs)
    (K2S2, (1, 1, 2, 2), (1, 1, 3, 3), "output_shape (1, 1, 3, 3) is smaller than the least size the "
     "input allows, (1, 1, 4, 4), on axis 2 (3 < 4)"),
    (K2S2, (1, 1, 2, 2), (1, 1, 4, 3), "least size the input allows, (1, 1, 4, 4), on axis 3 (3 < 4)"),
    (K2S2, (2, 3, 3, 1), (2, 3, 6, 1), "least size the input allows, (2, 3, 6, 2), on axis 3 (1 < 2)"),
    (K3S2P1, (1, 1, 3, 3), (1, 1, 4, 5), "least size the input allows, (1, 1, 5, 5), on axis 2 (4 < 5)"),
    (K2S2, (1, 1, 2, 2), (1, 2, 4, 4), "output_shape (1, 2, 4, 4) must keep the input's batch and "
     "channel sizes (1, 1)"),
    (K2S2, (2, 3, 2, 2), (1, 3, 4, 4), "must keep the input's batch and channel sizes (2, 3)"),
    (K2S2, (1, 1, 2, 2), (1, 1, 4, 4), None),
    (K2S2, (1, 1, 2, 2), (1, 1, 5, 4), None),
    (K3S2P1, (1, 1, 3, 3), (1, 1, 5, 6), None),
]  # fmt: skip


def _ort_refuses(model: Any, feeds: dict[str, np.ndarray[Any, Any]]) -> bool:
    try:
        run_ort(model, feeds)
    except Exception:
        return True
    return False


@pytest.mark.parametrize(("attrs", "xs", "os", "says"), ROWS, ids=[f"{r[1]}->{r[2]}" for r in ROWS])
def test_max_unpool_output_shape_that_never_fits_is_an_error_in_onnx_terms(
    attrs: dict[str, Any], xs: tuple[int, ...], os: tuple[int, ...], says: str | None
) -> None:
    ins = [In("x", "float32", list(xs)), In("i", "int64", list(xs))]
    inits = {"os": np.array(os, dtype=np.int64)}
    model = make_model(
        [node("MaxUnpool", ["x", "i", "os"], ["y"], **attrs)], ins, ["y"], opset=11, inits=inits
    )
    refuses = _ort_refuses(model, {"x": np.zeros(xs, np.float32), "i": np.zeros(xs, np.int64)})
    res = sso.infer(model)
    assert bool(res.errors) == refuses == (says is not None), res.report()
    if says is not None:
        text = res.errors[0].render(source=False)
        assert res.errors[0].code == "shape-mismatch" and "node 'MaxUnpool_0' (MaxUnpool)" in text, text
        assert says in text and "the input `x` of shape" in text, text
        assert "concatenate" not in res.report() and "take of" not in res.report(), res.report()


@pytest.mark.parametrize("n", [1, 2, 3])
def test_max_unpool_run_time_output_shape_too_small_at_every_batch(n: int) -> None:
    """``output_shape`` computed at run time (``Shape`` of a tensor ``(n, c, 4, b)``) for an input
    ``(n, c, 3, w)``: the least height is 6 whatever the symbols, so it is the same error (and
    onnxruntime refuses it at every size)."""
    ins = [
        In("x", "float32", ["n", "c", 3, "w"]),
        In("i", "int64", ["n", "c", 3, "w"]),
        In("r", "float32", ["n", "c", 4, "b"]),
    ]
    nodes = [node("Shape", ["r"], ["os"]), node("MaxUnpool", ["x", "i", "os"], ["y"], **K2S2)]
    model = make_model(nodes, ins, ["y"], opset=11)
    res = sso.infer(model)
    assert [e.code for e in res.errors] == ["shape-mismatch"], res.report()
    text = res.errors[0].render(source=False)
    assert "output_shape (n, c, 4, b) is smaller than the least size the input allows, (n, c, 6, 2*w), " \
        "on axis 2 (4 < 6)" in text, text  # fmt: skip
    feeds: dict[str, np.ndarray[Any, Any]] = {
        "x": np.zeros((n, 2, 3, n), np.float32),
        "i": np.zeros((n, 2, 3, n), np.int64),
        "r": np.zeros((n, 2, 4, 2 * n), np.float32),
    }
    assert _ort_refuses(model, feeds)
