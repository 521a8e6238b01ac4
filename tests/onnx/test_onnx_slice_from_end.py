"""``Slice`` with bounds computed at run time that may be negative, against onnxruntime.

ONNX counts a negative start or end from the end of its axis; symshape's ``strided_slice`` takes a
symbolic index as counted from the start (and guards it ``>= 0``). Found by exporting models:

* XLM (TorchScript): ``attention_mask[:, -seq:]`` is ``Slice(starts=Neg(seq))``; ``Neg`` dropped the
  shape value (a fresh size, and ``valid_at`` True at a sequence onnxruntime refuses);
* XLM (dynamo): the same start as ``-1 * seq`` was an error ("the symbolic begin -seq may be
  negative");
* MPT (ALiBi): ``alibi[:, :, 16 - seq:]`` on a 16-column buffer guarded ``seq <= 16``, yet
  onnxruntime runs ``seq = 17`` (a start of -1: the last column, broadcast);
* ``x[:, n - 3:]`` guarded ``n >= 3``; ``x[:, -(n // 3):]`` had a fresh size.

Each row is ``y = Slice(x, start, end)`` on the axis 1 of ``x`` (``n`` columns, or a constant
count), with the bounds computed from ``n`` (the last axis of the input ``s``): every value's shape
and ``valid_at`` against onnxruntime at several ``n``.
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

_BIG = 2**63 - 1


def _i64(name: str, v: Any) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(v, dtype=np.int64), name)


# bound name -> the nodes computing it from `n` (a 0-d int64: the last axis of `s`)
_BOUNDS: dict[str, list[onnx.NodeProto]] = {
    "neg_n": [helper.make_node("Neg", ["n"], ["neg_n"])],
    "neg_third": [  # -(n // 3), TorchScript's Neg
        helper.make_node("Div", ["n", "three"], ["third"]),
        helper.make_node("Neg", ["third"], ["neg_third"]),
    ],
    "minus_n": [helper.make_node("Mul", ["n", "minus_one"], ["minus_n"])],  # dynamo's -1 * n
    "n_minus_3": [helper.make_node("Sub", ["n", "three"], ["n_minus_3"])],
    "c_minus_n": [helper.make_node("Sub", ["sixteen", "n"], ["c_minus_n"])],
    "big": [],
    "zero": [],
}


def _model(start: str, end: str, cols: int | None, step: int | None) -> onnx.ModelProto:
    """``y = x[:, start:end:step]`` with ``x`` of shape (2, n) (or (2, cols))."""
    nodes = [
        helper.make_node("Shape", ["s"], ["sh"], start=-1),
        helper.make_node("Squeeze", ["sh", "axis0"], ["n"]),
    ]
    for b in dict.fromkeys((start, end)):
        nodes += _BOUNDS[b]
    nodes += [
        helper.make_node("Unsqueeze", [start, "axis0"], ["starts"]),
        helper.make_node("Unsqueeze", [end, "axis0"], ["ends"]),
        helper.make_node("Slice", ["x", "starts", "ends", "axes", *(["steps"] if step else [])], ["y"]),
    ]
    inits = [
        _i64("axis0", [0]), _i64("axes", [1]), _i64("three", 3), _i64("minus_one", -1),
        _i64("sixteen", 16), _i64("big", _BIG), _i64("zero", 0),
    ]  # fmt: skip
    if step:
        inits.append(_i64("steps", [step]))
    g = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, cols or "n"]),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits,
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


ROWS = [
    # (start, end, cols, step): x[:, start:end:step]
    ("neg_n", "big", None, None),  # x[:, -n:]: all
    ("neg_third", "big", None, None),  # x[:, -(n // 3):]: all when n < 3
    ("minus_n", "big", None, 2),
    ("n_minus_3", "big", None, None),  # x[:, n - 3:]: a start < 0 when n < 3
    ("c_minus_n", "big", 16, None),  # MPT: a 16-column buffer, the last n columns
    ("c_minus_n", "big", 16, 3),
    ("zero", "neg_third", None, None),  # x[:, :-(n // 3)]: empty when n < 3
    ("zero", "n_minus_3", None, None),
    ("zero", "c_minus_n", 16, None),  # x[:, :16 - n]: 16 - n columns, then 32 - n
    ("neg_n", "c_minus_n", 16, None),
]


@pytest.mark.parametrize(("start", "end", "cols", "step"), ROWS)
def test_slice_bounds_that_may_be_negative(start: str, end: str, cols: int | None, step: int | None) -> None:
    model = _model(start, end, cols, step)
    n = ss.dim("n")
    res = sso.infer(model, dims={"n": n})
    assert not res.errors and not res.unsupported, res.report()
    types = res.types()
    for size in (1, 2, 3, 4, 5, 7, 15, 16, 17, 23, 31, 32, 33):
        x = np.zeros((2, cols or size), np.float32)
        try:
            actual = run_all_values(model, {"x": x, "s": np.zeros(size, np.float32)})
        except Exception:  # onnxruntime refuses this size
            actual = None
        assert res.valid_at({n: size}) == (actual is not None), (size, [str(g) for g in res.guards])
        if actual is None:
            continue
        for name, shape in actual.items():
            t = types[name]
            assert isinstance(t, ss.TensorType) and t.ndim is not None, (name, t)
            got = tuple(int(d.subs({n: size})) for d in t.dims)
            assert got == shape, (name, str(t), size, shape)


def test_the_mpt_start_is_exact() -> None:
    """``x[:, 16 - n:]`` on 16 columns: n columns up to 16, then ``n - 16`` up to 32 (a start
    counted from the end), then all 16."""
    res = sso.infer(_model("c_minus_n", "big", 16, None), dims={"n": ss.dim("n")})
    assert res.ok, res.report()
    cols = res.type_of("y").dims[1]
    got = [int(cols.subs({ss.dim("n"): k})) for k in (1, 16, 17, 20, 31, 32, 40)]
    assert got == [1, 16, 1, 4, 15, 16, 16]
