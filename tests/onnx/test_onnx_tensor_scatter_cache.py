"""``TensorScatter`` (opset 24) against onnx's reference evaluator at several sizes.

symshape gave the cache's type and checked nothing: the update must have the cache's shape except
at ``axis`` (not the batch axis 0), where it is at most the cache's ("Input shape ... and update
shape ... are not compatible"), and the write indices are ``(batch,)`` (the spec; the reference
reads only the first ``batch`` entries of a longer one, looser than the spec: symshape follows the
spec, :func:`test_write_indices_longer_than_the_batch`).
"""

from __future__ import annotations

from typing import Any

import pytest
from onnx_helpers import In, make_model, node
from size_oracle import disagreements, feeds_of

P4, U4 = In("p", "float32", ["b", "h", "m", "d"]), In("u", "float32", ["b2", "h2", "s", "d2"])
P3, U3 = In("p", "float32", ["b", "m", "d"]), In("u", "float32", ["b2", "s", "d2"])
B = dict(b=2, h=3, m=5, d=4, b2=2, h2=3, s=2, d2=4)
SIZES = [B, dict(B, s=5), dict(B, s=6), dict(B, b2=1), dict(B, h2=1), dict(B, d2=5), dict(B, m=1, s=1),
         dict(B, m=1, s=2), {k: 1 for k in B}]  # fmt: skip
W = In("w", "int64", ["bw"])

ROWS: list[tuple[str, list[In], dict[str, Any], list[dict[str, int]]]] = [
    ("default", [P4, U4], {}, SIZES),
    ("circular", [P4, U4], {"mode": "circular"}, SIZES),
    ("axis-2", [P4, U4], {"axis": 2}, SIZES),
    ("axis-1", [P4, U4], {"axis": 1}, SIZES),
    ("rank-3-axis-1", [P3, U3], {"axis": 1}, SIZES),
    ("axis-last", [P3, U3], {"axis": -1},
     [dict(b=2, m=3, d=5, b2=2, s=3, d2=2), dict(b=2, m=3, d=5, b2=2, s=3, d2=6)]),
    ("axis-0", [P3, U3], {"axis": 0}, SIZES),
    ("axis-out-of-range", [P3, U3], {"axis": 3}, SIZES[:2]),
    ("write-indices", [P4, U4, W], {"mode": "circular"},
     [dict(B, bw=2), dict(B, bw=1), dict(B, b=1, b2=1, bw=1)]),
]  # fmt: skip


@pytest.mark.parametrize(("ins", "attrs", "sizes"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_tensor_scatter_against_reference(
    ins: list[In], attrs: dict[str, Any], sizes: list[dict[str, int]]
) -> None:
    model = make_model([node("TensorScatter", [i.name for i in ins], ["y"], **attrs)], ins, ["y"], opset=24)
    names = sorted({d for i in ins for d in i.shape or () if isinstance(d, str)})
    assert disagreements(model, names, sizes, feeds_of(ins), runner="reference") == []


def test_write_indices_longer_than_the_batch() -> None:
    ins = [P4, U4, W]
    model = make_model([node("TensorScatter", ["p", "u", "w"], ["y"])], ins, ["y"], opset=24)
    got = disagreements(model, sorted({*B, "bw"}), [dict(B, bw=3)], feeds_of(ins), runner="reference")
    assert len(got) == 1 and "reference runs; symshape excludes it" in got[0] and "`b == bw`" in got[0], got
