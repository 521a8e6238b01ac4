"""``Attention`` (3-d inputs with caches): ``present_key``/``present_value`` have ``kv_num_heads``
heads and ``Y`` the query's batch, as onnx's inference gives them (issue 14).

symshape gave the presents the cache's heads symbol (``s4_1`` where onnx's inference of the
expanded cases ``test_attention_3d_*with_past_and_present_expanded`` writes 3; of the one node it
writes no present shape) and ``Y`` the batch ``max(s0_0, s2_0)`` (a broadcast of the query's and
the value's batches, which must be equal) where onnx writes the query's ``s0_0``. Checked against
onnx's ``infer_shapes`` (``Y``) and against onnxruntime at several sizes (1 among them, and caches
it refuses).
"""

from __future__ import annotations

import onnx
import pytest
from onnx_helpers import In, make_model, node
from size_oracle import disagreements, feeds_of

import symshape as ss
import symshape.onnx as sso

OUTS = ["y", "pk", "pv"]


def _model(hq: int, hk: int, d: int) -> tuple[list[In], onnx.ModelProto]:
    ins = [
        In("q", "float32", ["b", "s", hq * d]),
        In("k", "float32", ["bk", "l", hk * d]),
        In("v", "float32", ["bv", "l", hk * d]),
        In("past_k", "float32", ["b1", "h1", "p", d]),
        In("past_v", "float32", ["b2", "h2", "p", d]),
    ]
    inputs = ["q", "k", "v", "", "past_k", "past_v"]
    n = node("Attention", inputs, OUTS, q_num_heads=hq, kv_num_heads=hk)
    return ins, make_model([n], ins, OUTS, opset=23)


def _onnx(model: onnx.ModelProto) -> dict[str, list[int | str]]:
    inf = onnx.shape_inference.infer_shapes(model, data_prop=True)
    return {
        o.name: [
            d.dim_value if d.HasField("dim_value") else d.dim_param for d in o.type.tensor_type.shape.dim
        ]
        for o in inf.graph.output
    }


@pytest.mark.parametrize(("hq", "hk", "d"), [(3, 3, 4), (6, 2, 2), (2, 1, 3)])
def test_presents_have_kv_num_heads_and_y_the_query_batch(hq: int, hk: int, d: int) -> None:
    ins, model = _model(hq, hk, d)
    res = sso.infer(model)
    theirs = _onnx(model)
    for name in ("pk", "pv"):
        t = res.type_of(name)
        assert isinstance(t, ss.TensorType) and t.ndim == 4 and t.dims[1] == hk, t
    y = res.type_of("y")
    assert isinstance(y, ss.TensorType) and str(y.dims[0]) == "b" == theirs["y"][0], (y, theirs)
    base = dict(b=2, bk=2, bv=2, b1=2, b2=2, s=3, l=2, p=4, h1=hk, h2=hk)
    sizes = [
        base,
        {**base, **dict(b=1, bk=1, bv=1, b1=1, b2=1, s=1, l=1, p=1)},
        {**base, "h1": hk + 1},
        {**base, "h2": 1},
        {**base, "bv": 1},
        {**base, "b1": 3},
    ]
    assert disagreements(model, sorted(base), sizes, feeds_of(ins)) == []
