"""``LinearAttention``'s ``present_state`` with a ``past_state`` input (opset 27, issue 14).

The present state is ``(B, kv_num_heads, dk, dv)`` and the past must have exactly that shape (onnx's
reference evaluator: "past_state shape ... does not match"). symshape added the past to the state
(broadcasting) and gave the present the past's shape: with a symbolic past ``(b2, h, dk, dv)`` its
heads were ``h`` where onnx's own inference says ``kv_num_heads``, and a past of 1 head (or of
``h*dk*dv`` entries in another split) was accepted. Checked against onnx's ``infer_shapes`` and
against the reference evaluator at several sizes (1 among them); onnxruntime 1.23 does not load
opset 27.
"""

from __future__ import annotations

from typing import Any

import onnx
import pytest
from onnx_helpers import In, make_model, node
from size_oracle import disagreements, feeds_of

import symshape as ss
import symshape.onnx as sso

PAST = In("p", "float32", ["b2", "h", "dk", "dv"])


def _model(hq: int, hk: int, d: int | str, rule: str = "linear") -> tuple[list[In], onnx.ModelProto]:
    ins = [
        In("q", "float32", ["b", "t", d * hq // hk if isinstance(d, int) else d]),
        In("k", "float32", ["b", "t", d]),
        In("v", "float32", ["b", "t", d]),
        PAST,
    ]
    n = node(
        "LinearAttention",
        ["q", "k", "v", "p"],
        ["y", "st"],
        q_num_heads=hq,
        kv_num_heads=hk,
        update_rule=rule,
    )
    return ins, make_model([n], ins, ["y", "st"], opset=27)


def _onnx_present(model: onnx.ModelProto) -> list[int | str]:
    inf = onnx.shape_inference.infer_shapes(model, data_prop=True)
    (vi,) = [o for o in inf.graph.output if o.name == "st"]
    return [d.dim_value if d.HasField("dim_value") else d.dim_param for d in vi.type.tensor_type.shape.dim]


@pytest.mark.parametrize(("hq", "hk", "d"), [(4, 4, 32), (8, 2, 16), (2, 1, 8), (4, 4, "e")])
def test_present_state_heads_are_kv_num_heads_as_onnx_infers(hq: int, hk: int, d: int | str) -> None:
    _, model = _model(hq, hk, d)
    res = sso.infer(model)
    st = res.type_of("st")
    assert isinstance(st, ss.TensorType) and st.ndim == 4, st
    assert st.dims[1] == hk and _onnx_present(model)[1] == hk, (st, _onnx_present(model))
    if isinstance(d, int):  # dk and dv follow from the key's and value's last sizes
        assert [int(x) for x in st.dims[2:]] == [d // hk, d // hk], st


ROWS: list[tuple[int, int, int, list[dict[str, int]]]] = [
    (4, 4, 32, [dict(b=2, t=3, b2=2, h=4, dk=8, dv=8), dict(b=1, t=1, b2=1, h=4, dk=8, dv=8),
                dict(b=2, t=3, b2=2, h=1, dk=16, dv=16), dict(b=2, t=3, b2=2, h=2, dk=8, dv=16),
                dict(b=2, t=3, b2=1, h=4, dk=8, dv=8), dict(b=2, t=3, b2=2, h=4, dk=1, dv=8)]),
    (8, 2, 16, [dict(b=3, t=2, b2=3, h=2, dk=8, dv=8), dict(b=1, t=1, b2=1, h=2, dk=8, dv=8),
                dict(b=3, t=2, b2=3, h=1, dk=8, dv=16), dict(b=3, t=2, b2=3, h=2, dk=4, dv=16)]),
]  # fmt: skip


@pytest.mark.parametrize(("hq", "hk", "d", "sizes"), ROWS, ids=[f"{r[0]}q{r[1]}kv" for r in ROWS])
def test_past_state_against_the_reference(hq: int, hk: int, d: int, sizes: list[dict[str, Any]]) -> None:
    ins, model = _model(hq, hk, d)
    assert (
        disagreements(model, ["b", "t", "b2", "h", "dk", "dv"], sizes, feeds_of(ins), runner="reference")
        == []
    )


def test_output_has_the_query_batch_as_onnx_infers() -> None:
    """The batches of query, key and value must be equal (checked apart): the output has the
    query's (onnx's ``s0_0``), not the broadcast ``max(bq, bk, bv)`` symshape gave."""
    ins = [
        In("q", "float32", ["bq", "t", 16]),
        In("k", "float32", ["bk", "t", 16]),
        In("v", "float32", ["bv", "t", 16]),
    ]
    n = node(
        "LinearAttention", ["q", "k", "v"], ["y", "st"], q_num_heads=2, kv_num_heads=2, update_rule="linear"
    )
    model = make_model([n], ins, ["y", "st"], opset=27)
    y = sso.infer(model).type_of("y")
    inf = onnx.shape_inference.infer_shapes(model, data_prop=True)
    theirs = inf.graph.output[0].type.tensor_type.shape.dim[0].dim_param
    assert isinstance(y, ss.TensorType) and str(y.dims[0]) == theirs == "bq", (y, theirs)
    sizes = [dict(bq=2, bk=2, bv=2, t=3), dict(bq=1, bk=1, bv=1, t=1), dict(bq=1, bk=2, bv=2, t=3)]
    assert disagreements(model, ["bq", "bk", "bv", "t"], sizes, feeds_of(ins), runner="reference") == []
