"""``DFT`` (opsets 17 and 20: axis attribute or input, ``onesided``, ``inverse``, ``dft_length``)
against onnxruntime at several sizes.

symshape checked neither the last axis (1 real or 2 complex values; 2 for an inverse one-sided
DFT, "Inverse ... complex"), nor the axis range (``[-r, -2]`` or ``[0, r - 2]``: "axis attribute
value 3 is invalid for a tensor of rank 4"), nor that ``dft_length`` is a scalar. A forward
one-sided DFT takes only real input in the spec ("only real input is supported"); onnxruntime also
runs complex input there, looser than the spec: symshape follows the spec, so those sizes are
expected to differ (onnx's reference evaluator checks none of these).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx_helpers import In, make_model, node
from size_oracle import disagreements, feeds_of

X3 = In("x", "float32", ["b", "n", "c"])
X4 = In("x", "float32", ["b", "n", "m", "c"])
S3 = [dict(b=2, n=5, c=1), dict(b=2, n=5, c=2), dict(b=2, n=4, c=3), dict(b=1, n=1, c=1), dict(b=1, n=1, c=2),
      dict(b=3, n=8, c=2), dict(b=3, n=2, c=1)]  # fmt: skip
S4 = [dict(b=2, n=5, m=3, c=1), dict(b=2, n=5, m=3, c=2), dict(b=1, n=1, m=1, c=2), dict(b=1, n=4, m=1, c=1),
      dict(b=1, n=2, m=3, c=4)]  # fmt: skip
MODES = [(0, 0), (0, 1), (1, 0), (1, 1)]  # (inverse, onesided)

ROWS: list[tuple[str, int, dict[str, Any], Any, int | None, In, list[dict[str, int]]]] = [
    # (id, opset, attributes, dft_length (None: absent), axis input (opset 20), input, sizes)
    *[(f"op{o}-inv{i}-one{s}-dl{dl}", o, {"inverse": i, "onesided": s}, dl, None, X3, S3)
      for o in (17, 20) for i, s in MODES for dl in (None, 6, [3])],
    *[(f"op17-axis{a}", 17, {"axis": a}, None, None, X4, S4) for a in (0, 1, 2, 3, -1, -2, -4, -5)],
    *[(f"op20-axis{a}-inv{i}-one{s}", 20, {"inverse": i, "onesided": s}, None, a, X4, S4)
      for a in (0, 2, 3, -1, -3, -4, -5) for i, s in MODES],
]  # fmt: skip


@pytest.mark.parametrize(
    ("opset", "attrs", "dl", "axis", "x", "sizes"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS]
)
def test_dft_against_onnxruntime(
    opset: int, attrs: dict[str, Any], dl: Any, axis: int | None, x: In, sizes: list[dict[str, int]]
) -> None:
    inits = {} if dl is None else {"dl": np.array(dl, dtype=np.int64)}
    inputs = ["x", "dl" if dl is not None else ""]
    if axis is not None:
        inits["ax"] = np.array(axis, dtype=np.int64)
        inputs.append("ax")
    model = make_model([node("DFT", [i for i in inputs if i] if axis is None else inputs, ["y"], **attrs)],
                       [x], ["y"], opset=opset, inits=inits)  # fmt: skip
    got = disagreements(model, [str(d) for d in x.shape or ()], sizes, feeds_of([x]))
    # the spec refuses complex input to a forward one-sided DFT, which onnxruntime runs
    rfft = attrs.get("onesided") == 1 and attrs.get("inverse") == 0
    assert all(
        rfft and "'c': 2}: onnxruntime runs; symshape excludes it" in g and "`c == 1`" in g for g in got
    ), got
    r = len(x.shape or ())
    a = axis if axis is not None else attrs.get("axis", 1 if opset < 20 else -2)
    if rfft and (-r <= a <= -2 or 0 <= a <= r - 2) and (dl is None or np.ndim(dl) == 0):
        assert len(got) == sum(s["c"] == 2 for s in sizes), got
