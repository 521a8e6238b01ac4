"""``QLinearMatMul``'s scales and zero points against onnxruntime at several sizes.

symshape checked none of them. onnxruntime (the oracle here) wants each zero point of its scale's
shape (also the spec's rule), ``a``'s and the output's per tensor ("input zero point must be a
scalar or 1D tensor of size 1"), ``b``'s per tensor or per column of a matrix ``b`` ("weight zero
point must be a scalar, 1D tensor of size 1, or last to second dimension is 1"). The spec also
allows per-row ``a`` parameters (``(M,)``, ``(..., M, 1)``), which onnxruntime refuses; symshape
follows onnxruntime (onnx's reference evaluator broadcasts the parameters and checks nothing).
onnxruntime runs a ``b`` zero point of another shape than its scale (each per tensor or per column);
symshape follows the spec there (:func:`test_zero_point_of_another_shape_than_its_scale`).
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from onnx_helpers import In, make_model, node
from size_oracle import disagreements, feeds_of

Dims = Sequence[int | str]
BASE = dict(m=2, k=3, k2=3, n=4)
PQR = ((1, 1, 1), (2, 1, 1), (4, 1, 2), (1, 4, 2), (3, 2, 1), (1, 4, 1), (2, 4, 2))
P_SIZES = [dict(BASE, p=p, q=q, r=r) for p, q, r in PQR] + [dict(m=1, k=1, k2=1, n=1, p=1, q=1, r=1)]

ROWS: list[tuple[str, Dims, Dims, Dims, Dims, Dims, Dims, Dims, Dims]] = [
    # (id, a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point)
    ("scalars", ["m", "k"], [], [], ["k2", "n"], [], [], [], []),
    ("scalars-and-1", ["m", "k"], [], [1], ["k2", "n"], [1], [], [1], []),
    ("a-per-row", ["m", "k"], ["m"], ["m"], ["k2", "n"], [], [], [], []),
    ("a-p", ["m", "k"], ["p"], ["p"], ["k2", "n"], [], [], [], []),
    ("a-1", ["m", "k"], [1], [1], ["k2", "n"], [], [], [], []),
    ("a-m-1", ["m", "k"], ["m", 1], ["m", 1], ["k2", "n"], [], [], [], []),
    ("a-zp-other-shape", ["m", "k"], ["p"], ["q"], ["k2", "n"], [], [], [], []),
    ("b-per-column", ["m", "k"], [], [], ["k2", "n"], ["n"], ["n"], [], []),
    ("b-p", ["m", "k"], [], [], ["k2", "n"], ["p"], ["p"], [], []),
    ("b-1-n", ["m", "k"], [], [], ["k2", "n"], [1, "n"], [1, "n"], [], []),
    ("b-p-q", ["m", "k"], [], [], ["k2", "n"], ["p", "q"], ["p", "q"], [], []),
    ("b-1-1", ["m", "k"], [], [], ["k2", "n"], [1, 1], [1, 1], [], []),
    ("b3-p", ["r", "m", "k"], [], [], ["r", "k2", "n"], ["p"], ["p"], [], []),
    ("b3-p-q", ["r", "m", "k"], [], [], ["r", "k2", "n"], ["p", "q"], ["p", "q"], [], []),
    ("b3-r-p-q", ["r", "m", "k"], [], [], ["r", "k2", "n"], ["r", "p", "q"], ["r", "p", "q"], [], []),
    ("y-p", ["m", "k"], [], [], ["k2", "n"], [], [], ["p"], ["p"]),
    ("y-m-1", ["m", "k"], [], [], ["k2", "n"], [], [], ["m", 1], ["m", 1]),
    ("vectors", ["k"], [], [], ["k2"], [], [], [], []),
    ("batched", ["r", "m", "k"], [], [], ["k2", "n"], [], [], [], []),
]


@pytest.mark.parametrize("opset", [10, 21])
@pytest.mark.parametrize("shapes", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_qlinear_matmul_parameters(shapes: tuple[Dims, ...], opset: int) -> None:
    names = ["a", "as", "az", "b", "bs", "bz", "ys", "yz"]
    dtypes = ["uint8", "float32", "uint8"] * 2 + ["float32", "uint8"]
    ins = [In(n, t, list(s)) for n, t, s in zip(names, dtypes, shapes)]
    model = make_model([node("QLinearMatMul", names, ["y"])], ins, ["y"], opset=opset)
    syms = sorted({d for s in shapes for d in s if isinstance(d, str)})
    sizes = [{k: v for k, v in s.items() if k in syms} for s in P_SIZES]
    assert disagreements(model, syms, sizes, feeds_of(ins)) == []


def test_zero_point_of_another_shape_than_its_scale() -> None:
    """The spec: "Scale and zero point must have same shape"; onnxruntime is looser for ``b``."""
    names = ["a", "as", "az", "b", "bs", "bz", "ys", "yz"]
    shapes: list[Dims] = [["m", "k"], [], [], ["k2", "n"], ["p"], ["q"], [], []]
    dtypes = ["uint8", "float32", "uint8"] * 2 + ["float32", "uint8"]
    ins = [In(n, t, list(s)) for n, t, s in zip(names, dtypes, shapes)]
    model = make_model([node("QLinearMatMul", names, ["y"])], ins, ["y"], opset=21)
    sizes = [dict(BASE, p=4, q=4), dict(BASE, p=1, q=1), dict(BASE, p=4, q=1), dict(BASE, p=1, q=4)]
    got = disagreements(model, ["k", "k2", "m", "n", "p", "q"], sizes, feeds_of(ins))
    # onnxruntime runs the last two; the spec refuses them
    assert [line.split(": onnxruntime")[0] for line in got] == [str(sizes[2]), str(sizes[3])], got
    assert all(
        "onnxruntime runs; symshape excludes it" in line and "needs `p == q`" in line for line in got
    ), got
