"""``CausalConvWithState`` (opset 27) against onnx's reference evaluator at several sizes.

symshape checked none of its inputs against the input ``(B, C, L)``: the weight is ``(C, 1, k)``,
the bias ``(C,)``, the past state ``(B, C, k - 1)`` (the spec); the reference (and onnxruntime's
function body) refuse a weight whose channels are not a multiple of ``C`` ("Output channels M is
not divisible by group"), and other biases and batches. They also run a weight of ``m*C`` channels
(a grouped convolution with ``m*C`` output channels: the output is not the input's shape) and a
longer past state, looser than the spec: symshape follows the spec, and such sizes are the only
differences allowed. Found by varying the sizes of onnx's
node cases.
"""

from __future__ import annotations

import pytest
from onnx_helpers import In, make_model, node
from size_oracle import disagreements, feeds_of

X = In("x", "float32", ["b", "c", "l"])
W = In("w", "float32", ["m", "one", 3])
BIAS = In("bias", "float32", ["cb"])
PAST = In("past", "float32", ["bp", "cp", "k1"])
BASE = dict(b=2, c=4, l=5, m=4, one=1, cb=4, bp=2, cp=4, k1=2)
SIZES = [BASE, dict(BASE, m=8), dict(BASE, m=3), dict(BASE, m=1), dict(BASE, one=2), dict(BASE, cb=3),
         dict(BASE, bp=1), dict(BASE, cp=8), dict(BASE, k1=3), dict(BASE, b=1, bp=1, l=1),
         dict(BASE, c=1, m=1, cb=1, cp=1)]  # fmt: skip
ROWS = [("weight", ["x", "w"], [X, W]), ("bias", ["x", "w", "bias"], [X, W, BIAS]),
        ("past", ["x", "w", "", "past"], [X, W, PAST]),
        ("all", ["x", "w", "bias", "past"], [X, W, BIAS, PAST])]  # fmt: skip


def _spec_ok(s: dict[str, int]) -> bool:
    c = s["c"]
    return (s["m"], s["one"], s.get("cb", c), s.get("bp", s["b"]), s.get("cp", c), s.get("k1", 2)) == (
        c, 1, c, s["b"], c, 2)  # fmt: skip


@pytest.mark.parametrize(("inputs", "ins"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_causal_conv_with_state_inputs(inputs: list[str], ins: list[In]) -> None:
    """Against the reference (onnxruntime 1.23 has no kernel for opset 27): every difference is a
    size the reference runs and the spec refuses, and symshape must refuse each of those."""
    outs = ["y", "state"]
    model = make_model([node("CausalConvWithState", inputs, outs)], ins, outs, opset=27)
    names = sorted({d for i in ins for d in i.shape or () if isinstance(d, str)})
    sizes = [{k: v for k, v in s.items() if k in names} for s in SIZES]
    got = disagreements(model, names, sizes, feeds_of(ins), runner="reference")
    looser = [g.split(": reference runs; symshape excludes it")[0] for g in got]
    assert all(s != g for g in got for s in looser), got  # only "runs; symshape excludes it"
    assert all(not _spec_ok(s) for s in sizes if str(s) in looser), got
    if inputs == ["x", "w"]:  # the weight of 2*C channels (a bias or state of C channels refuses it)
        assert any(str(s) in looser for s in sizes if s["m"] == 2 * s["c"]), got
