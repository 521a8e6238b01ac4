"""``Pad`` in the modes that copy entries, by literal pads, against onnxruntime at several sizes.

The dynamo export of ``F.pad(x, (2, 2), mode="reflect")`` is ``Pad(x, [0, 0, 2, 0, 0, 2],
mode="reflect")``; symshape said ``ok`` and ``valid_at`` True at ``t = 1, 2``, where onnxruntime
refuses ("pre-pad (2) exceeds maximum allowed (1)"): ``reflect`` needs each pad smaller than its
axis, ``edge`` and ``wrap`` a non-empty axis to pad.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from torch_models import run_all_values

import symshape as ss
import symshape.onnx as sso


def _model(mode: str, pads: list[int], opset: int) -> onnx.ModelProto:
    """``y = Pad(x, pads, mode)`` on ``x`` (b, t), the pads an initializer (an attribute before
    opset 11)."""
    if opset < 11:
        node = helper.make_node("Pad", ["x"], ["y"], mode=mode, pads=pads)
        inits = []
    else:
        node = helper.make_node("Pad", ["x", "pads"], ["y"], mode=mode)
        inits = [numpy_helper.from_array(np.array(pads, dtype=np.int64), "pads")]
    g = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", "t"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits,
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


ROWS = [
    # (mode, pads (b-begin, t-begin, b-end, t-end), opset)
    ("reflect", [0, 2, 0, 2], 18),  # F.pad(x, (2, 2), mode="reflect"): t >= 3
    ("reflect", [0, 1, 0, 3], 18),  # the larger pad decides: t >= 4
    ("reflect", [1, 0, 0, 0], 17),  # the batch axis: b >= 2
    ("reflect", [0, 0, 0, 0], 18),
    ("reflect", [0, 2, 0, -1], 18),  # cropped first: t - 1 > 2
    ("edge", [0, -2, 0, 1], 18),  # t - 2 >= 1
    ("edge", [0, 3, 0, 0], 18),
    ("edge", [0, 0, 2, 1], 13),
    ("wrap", [0, 0, 0, 4], 19),
    ("reflect", [0, 2, 0, 1], 10),
    ("constant", [0, 2, 0, 2], 18),
]


@pytest.mark.parametrize(("mode", "pads", "opset"), ROWS)
def test_pad_mode_reads_against_onnxruntime(mode: str, pads: list[int], opset: int) -> None:
    model = _model(mode, pads, opset)
    syms = {"b": ss.dim("b"), "t": ss.dim("t")}
    res = sso.infer(model, dims=syms)
    assert not res.errors and not res.unsupported, res.report()
    y = res.type_of("y")
    for b, t in ((1, 1), (1, 2), (2, 3), (3, 4), (1, 5), (2, 7)):
        env = {syms["b"]: b, syms["t"]: t}
        try:
            actual = run_all_values(model, {"x": np.zeros((b, t), np.float32)})
        except Exception:  # onnxruntime refuses these sizes
            actual = None
        assert res.valid_at(env) == (actual is not None), ((b, t), [str(g) for g in res.guards])
        if actual is not None:
            assert tuple(int(d.subs(env)) for d in y.dims) == actual["y"], (str(y), (b, t))
