"""``QuantizeLinear``/``DequantizeLinear``: the scale and zero point against the input, checked with
onnxruntime at several sizes (opsets 10, 13, 21).

symshape checked neither: the zero point has the scale's shape (or both have one entry, ``()`` and
``(1,)``, which onnxruntime runs), the scale is one entry (per tensor), one per entry of the input's
``axis`` (per axis, opset 13) or, with ``block_size`` (opset 21), the input's shape with
``ceil(d / block_size)`` at ``axis``. At opset 10 the spec allows a scalar scale only ("It's a
scalar, which means a per-tensor/layer quantization"); onnxruntime also runs a per-axis one there,
looser than the spec: those sizes are the only differences allowed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from onnx_helpers import In, make_model, node
from size_oracle import disagreements, feeds_of

S = [dict(n=2, c=3, h=4, p=p, q=q) for p, q in ((3, 3), (1, 1), (4, 4), (2, 2), (3, 1), (4, 1))] + [
    dict(n=1, c=1, h=1, p=1, q=1)
]
BLOCKED = [
    dict(n=2, c=3, h=h, n2=n2, c2=3, p=p)
    for h, n2, p in ((4, 2, 2), (5, 2, 3), (5, 2, 2), (4, 1, 2), (4, 2, 1))
]


Shapes = list[list[int | str]]


def _never(s: dict[str, int]) -> bool:
    return False


def _per_axis(s: dict[str, int]) -> bool:
    """A scale of one entry per channel (and its zero point): runs in onnxruntime at opset 10."""
    return s["p"] == 3 and s.get("q", 3) == 3


def _rows() -> list[tuple[str, str, int, Shapes, dict[str, Any], list[dict[str, int]], Callable[..., bool]]]:
    """(id, op, opset, (scale, zero point) shapes, attributes, sizes, the sizes where onnxruntime
    runs but the spec refuses)."""
    rows: list[tuple[str, str, int, Shapes, dict[str, Any], list[dict[str, int]], Callable[..., bool]]] = []
    for op in ("QuantizeLinear", "DequantizeLinear"):
        for opset in (10, 13, 21):
            spec_only = _per_axis if opset == 10 else _never
            for axis in (1, -1) if opset > 10 else (1,):
                attrs = {} if opset == 10 else {"axis": axis}
                rows.append((f"{op}-{opset}-per-axis{axis}", op, opset, [["p"], ["p"]], attrs, S, spec_only))
            rows.append((f"{op}-{opset}-zp-of-its-own", op, opset, [["p"], ["q"]], {}, S, spec_only))
            rows.append((f"{op}-{opset}-scalar-and-1", op, opset, [[], [1]], {}, S[:2], _never))
            rows.append((f"{op}-{opset}-scale-2d", op, opset, [["p", 1], ["p", 1]], {}, S[:2], _never))
        blocked: Shapes = [["n2", "c2", "p"], ["n2", "c2", "p"]]
        rows.append((f"{op}-21-blocked", op, 21, blocked, {"axis": 2, "block_size": 2}, BLOCKED, _never))
    return rows


ROWS = _rows()


@pytest.mark.parametrize(("op", "opset", "shapes", "attrs", "sizes", "spec_only"), [r[1:] for r in ROWS],
                         ids=[r[0] for r in ROWS])  # fmt: skip
def test_quantize_parameters_against_onnxruntime(
    op: str, opset: int, shapes: Shapes, attrs: dict[str, Any], sizes: list[dict[str, int]],
    spec_only: Callable[[dict[str, int]], bool],
) -> None:  # fmt: skip
    x = In("x", "float32" if op == "QuantizeLinear" else "uint8", ["n", "c", "h"])
    ins = [x, In("s", "float32", shapes[0]), In("z", "uint8", shapes[1])]
    model = make_model([node(op, ["x", "s", "z"], ["y"], **attrs)], ins, ["y"], opset=opset)
    names = sorted({d for i in ins for d in i.shape or () if isinstance(d, str)})
    sizes = [{k: v for k, v in s.items() if k in names} for s in sizes]
    got = disagreements(model, names, sizes, feeds_of(ins))
    expected = [str(s) for s in sizes if spec_only(s)]
    assert [g.split(": onnxruntime runs; symshape excludes it")[0] for g in got] == expected, got
