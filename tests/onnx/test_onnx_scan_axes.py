"""``Scan`` against onnxruntime at several sizes: scan input and output axes (negative ones too),
directions, several scan inputs, and the loop state's shape.

symshape refused negative ``scan_output_axes`` (onnxruntime counts them in the output, rank + 1),
read the scan length off the first scan input only (onnxruntime: "Scan inputs have inconsistent
sequence lengths") and let the body change a state's shape if not its element count (onnxruntime
refuses that), and refused opset 8's ``Scan`` (a batch axis first, optional sequence lengths).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx_helpers import In, make_model, node
from size_oracle import disagreements, feeds_of


def _scan(
    ins: list[In], body_nodes: list[onnx.NodeProto], body_io: tuple[list[str], list[str]], outs: list[str],
    opset: int = 16, **attrs: Any,
) -> onnx.ModelProto:  # fmt: skip
    vis = [[helper.make_tensor_value_info(v, TensorProto.FLOAT, None) for v in vs] for vs in body_io]
    body = helper.make_graph(body_nodes, "body", vis[0], vis[1])
    n = helper.make_node("Scan", [i.name for i in ins], outs, name="Scan_0", body=body, **attrs)
    return make_model([n], ins, outs, opset=opset)


S0, X = In("s0", "float32", ["d"]), In("x", "float32", ["n", "e"])
XT = In("x", "float32", ["e", "n"])
SUM = [node("Add", ["s_in", "x_t"], ["s_out"], name="acc"), node("Identity", ["s_out"], ["y_t"], name="emit"),
       node("Add", ["x_t", "x_t"], ["z_t"], name="twice")]  # fmt: skip
SUM_IO = (["s_in", "x_t"], ["s_out", "y_t", "z_t"])
SIZES = [
    dict(d=3, n=4, e=3),
    dict(d=1, n=2, e=3),
    dict(d=3, n=1, e=1),
    dict(d=3, n=5, e=2),
    dict(d=1, n=1, e=1),
]
W, XW = In("w", "float32", ["m", "e2"]), In("x", "float32", ["n", "e"])
PAIR = [node("Add", ["x_t", "w_t"], ["z_t"], name="add2")]
PAIR_SIZES = [dict(n=3, e=2, m=3, e2=2), dict(n=3, e=2, m=4, e2=2), dict(n=3, e=2, m=3, e2=1),
              dict(n=1, e=1, m=2, e2=1), dict(n=3, e=2, m=2, e2=3)]  # fmt: skip
S2, X3 = In("s0", "float32", ["a", "b"]), In("x", "float32", ["n", "a2", "b2"])
TRANSPOSED = [
    node("Transpose", ["s_in"], ["s_t"], perm=[1, 0], name="tr"),
    node("Add", ["s_t", "x_t"], ["s_out"]),
]

ROWS: list[tuple[str, list[In], list[onnx.NodeProto], tuple[list[str], list[str]], list[str], dict[str, Any],
                 list[dict[str, int]]]] = [
    *[(f"out-axes-{a}-{b}", [S0, X], SUM, SUM_IO, ["s", "y", "z"], {"scan_output_axes": [a, b]}, SIZES)
      for a, b in ((0, 0), (0, 1), (-1, -1), (-2, -1), (1, -2), (2, 0), (0, -3))],
    *[(f"in-axis-{a}", [S0, XT], SUM, SUM_IO, ["s", "y", "z"], {"scan_input_axes": [a]}, SIZES)
      for a in (1, -1, 0)],
    ("directions", [S0, X], SUM, SUM_IO, ["s", "y", "z"],
     {"scan_input_directions": [1], "scan_output_directions": [1, 0]}, SIZES),
    ("two-scan-inputs", [XW, W], PAIR, (["x_t", "w_t"], ["z_t"]), ["z"], {}, PAIR_SIZES),
    ("two-scan-inputs-axes", [XW, W], PAIR, (["x_t", "w_t"], ["z_t"]), ["z"], {"scan_input_axes": [0, 1]},
     PAIR_SIZES),
    ("state-transposed", [S2, X3], TRANSPOSED, (["s_in", "x_t"], ["s_out"]), ["s"], {},
     [dict(a=2, b=2, n=3, a2=2, b2=2), dict(a=2, b=3, n=3, a2=3, b2=2), dict(a=1, b=1, n=1, a2=1, b2=1)]),
]  # fmt: skip


@pytest.mark.parametrize(("ins", "body", "io", "outs", "attrs", "sizes"), [r[1:] for r in ROWS],
                         ids=[r[0] for r in ROWS])  # fmt: skip
def test_scan_against_onnxruntime(
    ins: list[In], body: list[onnx.NodeProto], io: tuple[list[str], list[str]], outs: list[str],
    attrs: dict[str, Any], sizes: list[dict[str, int]],
) -> None:  # fmt: skip
    m = attrs.pop("num_scan_inputs", len(ins) - (1 if ins[0].name == "s0" else 0))
    model = _scan(ins, body, io, outs, num_scan_inputs=m, **attrs)
    names = sorted({d for i in ins for d in i.shape or () if isinstance(d, str)})
    assert disagreements(model, names, sizes, feeds_of(ins)) == []


BDBNE = ((2, 3, 2, 4, 3), (1, 3, 1, 1, 3), (2, 3, 1, 4, 3), (2, 1, 2, 4, 3), (2, 3, 2, 4, 2), (1, 1, 1, 1, 1))
B8 = [dict(b=b, d=d, b2=b2, n=n, e=e) for b, d, b2, n, e in BDBNE]
SX8 = [In("s0", "float32", ["b", "d"]), In("x", "float32", ["b2", "n", "e"])]
SL = In("sl", "int32", ["bl"])
ROWS8: list[tuple[str, list[str], list[In], dict[str, Any], list[dict[str, int]]]] = [
    ("states-and-one-input", ["", "s0", "x"], SX8, {}, B8),
    ("directions", ["", "s0", "x"], SX8, {"directions": [1]}, B8),
    ("sequence-lengths", ["sl", "s0", "x"], [SL, *SX8], {},
     [dict(s, bl=s["b"]) for s in B8] + [dict(B8[0], bl=1)]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("inputs", "ins", "attrs", "sizes"), [r[1:] for r in ROWS8], ids=[r[0] for r in ROWS8]
)
def test_scan_of_opset_8_against_onnxruntime(
    inputs: list[str], ins: list[In], attrs: dict[str, Any], sizes: list[dict[str, int]]
) -> None:
    """Opset 8: a batch axis first, the sequence axis second (was ``unsupported-op``)."""
    vis = [[helper.make_tensor_value_info(v, TensorProto.FLOAT, None) for v in vs] for vs in SUM_IO]
    body = helper.make_graph(SUM, "body", vis[0], vis[1])
    n = helper.make_node(
        "Scan", inputs, ["s", "y", "z"], name="Scan_0", body=body, num_scan_inputs=1, **attrs
    )
    model = make_model([n], ins, ["s", "y", "z"], opset=8)
    names = sorted({d for i in ins for d in i.shape or () if isinstance(d, str)})
    base = feeds_of(ins)

    def feeds(size: Mapping[str, int], rng: np.random.Generator) -> dict[str, np.ndarray[Any, Any]]:
        d = base(size, rng)
        if "sl" in d:  # every sequence is whole
            d["sl"] = np.full(d["sl"].shape, size["n"], dtype=np.int32)
        return d

    assert disagreements(model, names, sizes, feeds) == []
