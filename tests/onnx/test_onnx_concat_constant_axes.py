"""``Concat`` whose inputs have a constant on a non-concatenated axis where another input has a
symbol: the output has the constant, as onnx's inference gives it (issue 14).

symshape gave the first input's dimension (a guard makes them equal): ``present_key`` of onnx's
expanded ``test_attention_3d_*with_past_and_present`` cases had the cache's heads ``s4_1`` where
onnx writes ``kv_num_heads`` (3). Checked against onnx's ``infer_shapes`` and onnxruntime at
several sizes (1 among them, and sizes it refuses).
"""

from __future__ import annotations

import onnx
import pytest
from onnx_helpers import In, make_model, node
from size_oracle import disagreements, feeds_of

import symshape as ss
import symshape.onnx as sso

ROWS = [
    # inputs' shapes, axis, sizes
    ([["n", "h", "p", 4], ["n", 3, "l", 4]], 2,
     [dict(n=2, h=3, p=5, l=1), dict(n=1, h=3, p=1, l=1), dict(n=2, h=2, p=5, l=1)]),
    ([["a", "b"], [2, "c"], ["d", 5]], 1,
     [dict(a=2, b=1, c=3, d=2), dict(a=1, b=1, c=1, d=2), dict(a=2, b=1, c=3, d=3)]),
    ([["a", "b"], ["c", 7]], 0, [dict(a=2, b=7, c=3), dict(a=1, b=7, c=1), dict(a=2, b=6, c=3)]),
]  # fmt: skip


@pytest.mark.parametrize(("shapes", "axis", "sizes"), ROWS, ids=[str(r[1]) + str(r[0]) for r in ROWS])
def test_concat_keeps_the_constant_onnx_infers(
    shapes: list[list[int | str]], axis: int, sizes: list[dict[str, int]]
) -> None:
    ins = [In(f"x{i}", "float32", s) for i, s in enumerate(shapes)]
    model = make_model([node("Concat", [i.name for i in ins], ["y"], axis=axis)], ins, ["y"], opset=13)
    y = sso.infer(model).type_of("y")
    inf = onnx.shape_inference.infer_shapes(model, data_prop=True)
    theirs = [
        d.dim_value if d.HasField("dim_value") else d.dim_param
        for d in inf.graph.output[0].type.tensor_type.shape.dim
    ]
    assert isinstance(y, ss.TensorType) and y.ndim == len(theirs), (y, theirs)
    for i, (ours, t) in enumerate(zip(y.dims, theirs)):
        if i != axis and isinstance(t, int):
            assert ours.is_constant and int(ours) == t, (y, theirs)
    names = sorted({d for s in shapes for d in s if isinstance(d, str)})
    assert disagreements(model, names, sizes, feeds_of(ins)) == []
