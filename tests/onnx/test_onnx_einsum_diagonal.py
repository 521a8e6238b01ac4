"""``Einsum`` with a label repeated in one operand (its diagonal), against onnxruntime.

The two axes of a repeated label must have the same size; symshape broadcast them (``add`` of the
operand and its transpose), so ``valid_at`` was True for axes of sizes 1 and 5, which onnxruntime
(and numpy) refuse: onnx's ``test_einsum_batch_diagonal`` made symbolic. Every size symbolic;
onnxruntime at sizes where the axes agree and where they do not.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from torch_models import run_all_values

import symshape as ss
import symshape.onnx as sso

ROWS = [
    # (equation, operand shapes (names are symbols))
    ("ii->i", [["a", "b"]]),
    ("...ii->...i", [["n", "a", "b"]]),
    ("bii->bi", [["n", "a", "b"]]),
    ("ii", [["a", "b"]]),
    ("iij->ij", [["a", "b", "c"]]),
    ("ii,i->i", [["a", "b"], ["c"]]),
]
SIZES = [
    {"a": 3, "b": 3, "c": 3, "n": 2}, {"a": 1, "b": 5, "c": 1, "n": 1}, {"a": 5, "b": 1, "c": 5, "n": 2},
    {"a": 1, "b": 1, "c": 1, "n": 3}, {"a": 4, "b": 4, "c": 1, "n": 1}, {"a": 2, "b": 3, "c": 2, "n": 2},
]  # fmt: skip


def _model(eq: str, shapes: Sequence[Sequence[str]]) -> onnx.ModelProto:
    names = [f"x{i}" for i in range(len(shapes))]
    g = helper.make_graph(
        [helper.make_node("Einsum", names, ["y"], equation=eq)], "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s)) for n, s in zip(names, shapes)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize(("eq", "shapes"), ROWS)
def test_einsum_diagonal_axes_agree(eq: str, shapes: Sequence[Sequence[str]]) -> None:
    model = _model(eq, shapes)
    used = sorted({d for s in shapes for d in s})
    syms = {d: ss.dim(d) for d in used}
    res = sso.infer(model, dims=syms)
    assert not res.errors and not res.unsupported, res.report()
    y = res.type_of("y")
    ran = 0
    for size in SIZES:
        feeds = {f"x{i}": np.ones([size[d] for d in s], np.float32) for i, s in enumerate(shapes)}
        try:
            actual = run_all_values(model, feeds)
        except Exception:  # the diagonal's axes differ
            actual = None
        env = {syms[d]: size[d] for d in used}
        assert res.valid_at(env) == (actual is not None), (size, [str(g) for g in res.guards])
        if actual is not None:
            ran += 1
            assert tuple(int(d.subs(env)) for d in y.dims) == actual["y"], (str(y), size)
    assert 0 < ran < len(SIZES)
