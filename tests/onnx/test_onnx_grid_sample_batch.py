"""``GridSample``'s output has ``X``'s batch, as onnx's inference gives it (issue 14).

``X`` and the grid must have one batch (onnxruntime refuses others, a guard): symshape gave the
output the broadcast ``max(n, m)`` where onnx writes ``X``'s ``n``. Checked against onnx's
``infer_shapes`` and onnxruntime at several sizes (1 among them, and batches it refuses).
"""

from __future__ import annotations

import onnx
import pytest
from onnx_helpers import In, make_model, node
from size_oracle import disagreements, feeds_of

import symshape as ss
import symshape.onnx as sso


@pytest.mark.parametrize(
    ("xs", "gs"), [(["n", "c", 4, 4], ["m", 3, 3, 2]), (["n", 2, 3, 4, 4], ["m", 2, 3, 2, 3])]
)
def test_grid_sample_output_has_the_input_batch(xs: list[int | str], gs: list[int | str]) -> None:
    ins = [In("x", "float32", xs), In("g", "float32", gs)]
    model = make_model([node("GridSample", ["x", "g"], ["y"])], ins, ["y"], opset=20)
    y = sso.infer(model).type_of("y")
    inf = onnx.shape_inference.infer_shapes(model, data_prop=True)
    theirs = inf.graph.output[0].type.tensor_type.shape.dim[0].dim_param
    assert isinstance(y, ss.TensorType) and str(y.dims[0]) == theirs == "n", (y, theirs)
    names = sorted({d for d in [*xs, *gs] if isinstance(d, str)})
    sizes = [dict(n=2, m=2, c=3), dict(n=1, m=1, c=1), dict(n=1, m=2, c=3), dict(n=3, m=1, c=3)]
    assert (
        disagreements(
            model, names, [{k: v for k, v in s.items() if k in names} for s in sizes], feeds_of(ins)
        )
        == []
    )
