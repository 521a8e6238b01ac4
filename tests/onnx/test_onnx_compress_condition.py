"""``Compress`` by a constant condition over a symbolic axis, against onnx's reference evaluator
(numpy) and onnxruntime.

symshape counted the condition's true entries whatever the axis' size: ``[0, 1, 1]`` over an axis of
1 gave 2 entries, more than the axis has (onnx's ``test_compress_0`` made symbolic). numpy and the
reference refuse a true entry past the axis ("index 1 is out of bounds"); onnxruntime ignores it.
symshape now reads the kept entries with ``take``: where they exist, the shape is exact for both
runtimes; where one does not, ``valid_at`` is False as the reference says.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_helpers import reference, run_ort

import symshape as ss
import symshape.onnx as sso


@pytest.mark.parametrize(
    ("cond", "axis"), [([0, 1, 1], 0), ([1, 0, 0, 1], 1), ([1, 1], -1), ([0, 0, 1, 0, 1], None)]
)
def test_compress_keeps_entries_of_the_axis(cond: list[int], axis: int | None) -> None:
    attrs: dict[str, Any] = {} if axis is None else {"axis": axis}
    g = helper.make_graph(
        [helper.make_node("Compress", ["x", "c"], ["y"], **attrs)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["a", "b"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(cond, dtype=bool), "c")],
    )  # fmt: skip
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    syms = {"a": ss.dim("a"), "b": ss.dim("b")}
    res = sso.infer(model, dims=syms)
    assert not res.errors, res.report()
    y = res.type_of("y")
    for a, b in ((1, 1), (1, 2), (2, 2), (3, 1), (3, 4), (5, 2), (2, 5)):
        feeds = {"x": np.ones((a, b), np.float32)}
        try:
            want = reference(model, feeds)[0].shape
        except Exception:  # a kept entry past the axis
            want = None
        env = {syms["a"]: a, syms["b"]: b}
        assert res.valid_at(env) == (want is not None), ((a, b), [str(g) for g in res.guards])
        if want is not None:
            got = tuple(int(d.subs(env)) for d in y.dims)
            assert got == want == run_ort(model, feeds)[0].shape, (str(y), (a, b))
