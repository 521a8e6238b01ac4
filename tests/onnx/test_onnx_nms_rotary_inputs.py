"""``NonMaxSuppression``'s boxes and scores, and ``RotaryEmbedding``'s position tables, against
onnxruntime at several sizes.

symshape checked neither: the boxes are ``(B, N, 4)`` and the scores ``(B, C, N)``; gathered by
``position_ids``, the cosine and sine tables have one shape ("Inputs 'cos_cache' and 'sin_cache'
must have the same shape"; onnx's reference is looser there). Found by varying the sizes of onnx's
node cases.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from onnx_helpers import In, make_model, node
from size_oracle import disagreements, feeds_of


def test_nms_boxes_and_scores() -> None:
    ins = [In("boxes", "float32", ["b", "n", "e"]), In("scores", "float32", ["b2", "c", "n2"])]
    inits: dict[str, np.ndarray[Any, Any]] = {
        "m": np.array([3], dtype=np.int64),
        "iou": np.array([0.5], dtype=np.float32),
    }
    nms = node("NonMaxSuppression", ["boxes", "scores", "m", "iou"], ["y"])
    model = make_model([nms], ins, ["y"], opset=11, inits=inits)
    base = dict(b=2, n=5, e=4, b2=2, c=3, n2=5)
    sizes = [base, dict(base, b2=1), dict(base, n2=4), dict(base, e=3), dict(base, e=5), dict(base, c=1),
             {k: 1 for k in base} | {"e": 4}]  # fmt: skip
    assert disagreements(model, sorted(base), sizes, feeds_of(ins)) == []


def test_rotary_tables_gathered_by_position() -> None:
    ins = [In("x", "float32", ["b", 2, "s", 8]), In("cos", "float32", ["p1", 4]),
           In("sin", "float32", ["p2", 4]), In("pos", "int64", ["b", "s"])]  # fmt: skip
    model = make_model([node("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y"])], ins, ["y"], opset=23)
    base = dict(b=2, s=3, p1=16, p2=16)
    # (tables shorter than the sequence: onnxruntime refuses them, "Updating cos_cache and sin_cache
    # ... is not supported", whatever the positions: not a shape rule)
    sizes = [base, dict(base, p2=15), dict(base, p1=3, p2=3), dict(base, b=1, s=1), dict(base, p1=17)]

    def feeds(size: Mapping[str, int], rng: np.random.Generator) -> dict[str, np.ndarray[Any, Any]]:
        d = feeds_of(ins)(size, rng)
        d["pos"] = np.zeros_like(d["pos"])  # a position every table has
        return d

    assert disagreements(model, sorted(base), sizes, feeds) == []
