"""``DeformConv`` against onnxruntime and onnx's reference evaluator at several sizes.

symshape typed it as the convolution and checked neither the offsets (``(N, offset_group*2*K,
*out)`` for ``K`` kernel positions and the output's spatial sizes ``out``), nor the mask
(``(N, offset_group*K, *out)``), nor that ``offset_group`` divides the channels: it accepted sizes
both runtimes refuse ("Offset shape (1, 7, 3, 3) is inconsistent with offset_group 1 and kernel
shape (2, 2)", "Number of input channels must be divisible by offset_group").
"""

from __future__ import annotations

from typing import Any

import pytest
from onnx_helpers import In, make_model, node
from size_oracle import disagreements, feeds_of

X = In("x", "float32", ["n", "c", "h", "w"])
W22 = In("wt", "float32", ["m", "cg", 2, 2])
OFF = In("off", "float32", ["n2", "o", "oh", "ow"])
BASE = dict(n=1, c=2, h=4, w=4, m=3, cg=2, n2=1, o=8, oh=3, ow=3)
SIZES = [
    BASE, dict(BASE, n=2, n2=2, h=5, m=1, oh=4), dict(BASE, ow=4), dict(BASE, o=7), dict(BASE, n2=2),
    dict(BASE, cg=1), dict(BASE, o=16), dict(BASE, h=2, w=2, m=1, oh=1, ow=1), dict(BASE, c=4, cg=4, o=16),
    dict(BASE, c=3, cg=3, o=16),
]  # fmt: skip
MASKED = [dict(s, mb=s["m"], n3=s["n"], mk=s["o"] // 2, oh2=s["oh"], ow2=s["ow"]) for s in SIZES] + [
    dict(BASE, mb=3, n3=1, mk=5, oh2=3, ow2=3), dict(BASE, mb=2, n3=1, mk=4, oh2=3, ow2=3),
    dict(BASE, mb=3, n3=1, mk=4, oh2=2, ow2=3), dict(BASE, mb=3, n3=2, mk=4, oh2=3, ow2=3),
]  # fmt: skip
KH = In("wt", "float32", ["m", "c", "kh", "kw"])
K22 = dict(n=1, c=2, h=4, w=4, m=2, kh=2, kw=2, o=8, oh=3, ow=3)
SYMK = [K22, dict(K22, o=7), dict(K22, kh=3, o=12, oh=2), dict(K22, kh=3, o=8, oh=2)]
OFF1 = In("off", "float32", ["n", "o", "oh", "ow"])

ROWS: list[tuple[str, list[str], list[In], dict[str, Any], list[dict[str, int]]]] = [
    ("basic", ["x", "wt", "off"], [X, W22, OFF], {}, SIZES),
    ("offset-group-2", ["x", "wt", "off"], [X, W22, OFF], {"offset_group": 2}, SIZES),
    ("group-2", ["x", "wt", "off"], [X, W22, OFF], {"group": 2},
     [dict(BASE, c=4, m=2), dict(BASE, c=4, m=3)]),
    ("bias-mask", ["x", "wt", "off", "b", "mask"],
     [X, W22, OFF, In("b", "float32", ["mb"]), In("mask", "float32", ["n3", "mk", "oh2", "ow2"])], {},
     MASKED),
    ("strides-pads", ["x", "wt", "off"], [X, W22, OFF], {"strides": [2, 2], "pads": [0, 0, 1, 0]},
     [dict(BASE, h=5, w=5, oh=2, ow=2), dict(BASE, h=5, w=5, oh=4, ow=4), dict(BASE, h=6, w=5, oh=3, ow=2)]),
    ("kernel-symbolic", ["x", "wt", "off"], [X, KH, OFF1], {}, SYMK),
    ("kernel-attr", ["x", "wt", "off"], [X, KH, OFF1], {"kernel_shape": [2, 2]}, SYMK[:2]),
]  # fmt: skip


@pytest.mark.parametrize("runner", ["onnxruntime", "reference"])
@pytest.mark.parametrize(("inputs", "ins", "attrs", "sizes"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_deform_conv_offsets_and_mask(
    inputs: list[str], ins: list[In], attrs: dict[str, Any], sizes: list[dict[str, int]], runner: str
) -> None:
    model = make_model([node("DeformConv", inputs, ["y"], **attrs)], ins, ["y"], opset=19)
    names = sorted({d for i in ins for d in i.shape or () if isinstance(d, str)})
    assert disagreements(model, names, sizes, feeds_of(ins), runner=runner) == []
