"""``OneHot`` against onnxruntime at several sizes: depth a constant, a size computed from the
model's shapes, or a run-time input; negative axes; the inputs' checks.

symshape refused a depth that is not a constant (``unsupported-op``), accepted ``values`` of other
than two entries (onnxruntime: "Input 'values' must have exactly two elements", "Invalid argument
for values") and scalar indices (onnx's inference and onnxruntime: "Indices tensor must have rank
>= 1"). A depth computed at run time is now an axis of its value, which must be >= 1 (onnxruntime:
"Depth is negative" for 0 as well): a guard on the sizes it is computed from (``b - 1 >= 1``), or on
the fresh size of a depth fed as data.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx_helpers import In, make_model, node
from size_oracle import disagreements, feeds_of

I64 = np.int64
V2 = np.array([0.0, 1.0], dtype=np.float32)
SIZES = [dict(a=1, b=1), dict(a=3, b=4), dict(a=2, b=7), dict(a=5, b=1), dict(a=1, b=2)]


IND = In("i", "int64", ["a", "b"])
SHAPE_B = [node("Shape", ["i"], ["s"]), node("Gather", ["s", "one"], ["b"], axis=0)]

ROWS: list[tuple[str, list[onnx.NodeProto], list[In], dict[str, Any], dict[str, Any]]] = [
    # (id, nodes before and with OneHot_0 "y", graph inputs, initializers, fed values)
    *[(f"const-axis{ax}", [node("OneHot", ["i", "d", "v"], ["y"], axis=ax)], [IND],
       {"d": np.array(5, dtype=I64), "v": V2}, {}) for ax in (-3, -2, -1, 0, 1, 2, 3, -4)],
    ("const-float-depth", [node("OneHot", ["i", "d", "v"], ["y"])], [IND],
     {"d": np.array([2.9], dtype=np.float32), "v": V2}, {}),
    ("const-depth-0", [node("OneHot", ["i", "d", "v"], ["y"])], [IND],
     {"d": np.array(0, dtype=I64), "v": V2}, {}),
    ("values-3", [node("OneHot", ["i", "d", "v"], ["y"])], [IND],
     {"d": np.array(3, dtype=I64), "v": np.array([0.0, 1.0, 2.0], dtype=np.float32)}, {}),
    ("values-symbolic", [node("OneHot", ["i", "d", "v"], ["y"])], [IND, In("v", "float32", ["a"])],
     {"d": np.array(3, dtype=I64)}, {}),
    ("depth-from-shape", [*SHAPE_B, node("OneHot", ["i", "b", "v"], ["y"], axis=-2)], [IND],
     {"one": np.array(1, dtype=I64), "v": V2}, {}),
    ("depth-from-shape-minus-1",
     [*SHAPE_B, node("Sub", ["b", "one"], ["d"]), node("OneHot", ["i", "d", "v"], ["y"], axis=0)], [IND],
     {"one": np.array(1, dtype=I64), "v": V2}, {}),
    ("depth-shape-of-2", [node("Shape", ["i"], ["d"]), node("OneHot", ["i", "d", "v"], ["y"])], [IND],
     {"v": V2}, {}),
    ("depth-fed", [node("OneHot", ["i", "d", "v"], ["y"], axis=-1)], [IND, In("d", "int64", [])],
     {"v": V2}, {"d": np.array(4, dtype=I64)}),
    ("depth-fed-float-1", [node("OneHot", ["i", "d", "v"], ["y"], axis=1)], [IND, In("d", "float32", [1])],
     {"v": V2}, {"d": np.array([3.7], dtype=np.float32)}),
    ("scalar-indices", [node("OneHot", ["i", "d", "v"], ["y"])], [In("i", "int64", [])],
     {"d": np.array(3, dtype=I64), "v": V2}, {}),
]  # fmt: skip


@pytest.mark.parametrize(("nodes", "ins", "inits", "fed"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_one_hot_against_onnxruntime(
    nodes: list[onnx.NodeProto], ins: list[In], inits: dict[str, Any], fed: dict[str, Any]
) -> None:
    for n in nodes:
        n.name = n.name if n.op_type == "OneHot" else f"{n.op_type}_{n.output[0]}"
    model = make_model(nodes, ins, ["y"], opset=11, inits=inits)
    names = sorted({d for i in ins for d in i.shape or () if isinstance(d, str)})
    assert disagreements(model, names, SIZES, feeds_of(ins, fed)) == []
