"""``MaxUnpool`` against onnxruntime at several sizes, with and without ``output_shape``.

symshape accepted indices of another shape than the input (the spec: "Dimensions must be the same
as input tensor X"; onnxruntime: "Index tensor shape should be same as that of the input data
tensor"), an ``output_shape`` of another ``N``/``C`` or smaller than the unpooled size (onnxruntime
refuses both), pads not smaller than the kernel (onnxruntime refuses them when it loads the model),
and refused an ``output_shape`` computed at run time (``unsupported-op``). onnx's reference
evaluator is looser than onnxruntime here (it checks none of these), so onnxruntime is the oracle.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx_helpers import In, make_model, node
from size_oracle import disagreements, feeds_of

X = In("x", "float32", ["n", "c", "h", "w"])
IDX = In("i", "int64", ["n2", "c2", "h2", "w2"])
B = dict(n=1, c=1, h=2, w=2, n2=1, c2=1, h2=2, w2=2)
B2 = dict(n=2, c=3, h=3, w=1, n2=2, c2=3, h2=3, w2=1)
SIZES = [B, B2, dict(B, w2=3), dict(B, n2=2), dict(B, c=2), dict(B, h2=1, w2=1), dict(B2, h=1, h2=1)]
K2S2: dict[str, Any] = {"kernel_shape": [2, 2], "strides": [2, 2]}
OUTPUT_SHAPES = [(1, 1, 4, 4), (2, 3, 6, 2), (1, 1, 5, 5), (1, 1, 3, 3), (1, 2, 4, 4), (1, 1, 4, 4, 1)]
S1, S2 = dict(n=1, c=1, h=2, w=2), dict(n=2, c=3, h=3, w=1)


def _os(*v: int) -> dict[str, Any]:
    return {"os": np.array(v, dtype=np.int64)}


ROWS: list[tuple[str, list[onnx.NodeProto], list[In], dict[str, Any], list[dict[str, int]]]] = [
    ("k2s2", [node("MaxUnpool", ["x", "i"], ["y"], **K2S2)], [X, IDX], {}, SIZES),
    ("k3s2p1", [node("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])],
     [X, IDX], {}, SIZES),
    ("k2s1", [node("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[2, 2])], [X, IDX], {}, SIZES),
    ("pads-not-below-kernel", [node("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[1, 1], pads=[1, 0, 1, 0])],
     [X, IDX], {}, SIZES),
    *[(f"output-shape-{'x'.join(map(str, v))}", [node("MaxUnpool", ["x", "i", "os"], ["y"], **K2S2)],
       [X, IDX], _os(*v), SIZES) for v in OUTPUT_SHAPES],
    ("output-shape-from-shape",
     [node("Shape", ["r"], ["os"], name="Shape_0"), node("MaxUnpool", ["x", "i", "os"], ["y"], **K2S2)],
     [X, In("i", "int64", ["n", "c", "h", "w"]), In("r", "float32", ["n", "c", "a", "b"])], {},
     [dict(S1, a=4, b=4), dict(S1, a=5, b=4), dict(S1, a=3, b=4), dict(S2, a=6, b=2), dict(S2, a=7, b=3),
      dict(S2, a=8, b=1)]),
    ("output-shape-fed", [node("MaxUnpool", ["x", "i", "os"], ["y"], **K2S2)],
     [X, IDX, In("os", "int64", [4])], {}, [dict(B2, n=2), dict(B2, h=2, h2=2)]),
]  # fmt: skip


@pytest.mark.parametrize(("nodes", "ins", "inits", "sizes"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_max_unpool_against_onnxruntime(
    nodes: list[onnx.NodeProto], ins: list[In], inits: dict[str, Any], sizes: list[dict[str, int]]
) -> None:
    model = make_model(nodes, ins, ["y"], opset=11, inits=inits)
    names = sorted({d for i in ins for d in i.shape or () if isinstance(d, str)})
    fed = {"os": np.array([2, 3, 6, 2], dtype=np.int64)} if "os" in {i.name for i in ins} else None
    assert disagreements(model, names, sizes, feeds_of(ins, fed)) == []
