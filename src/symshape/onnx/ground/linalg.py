"""Ground rules of ``MatMul`` (numpy's ``matmul``), ``Gemm`` (2-d operands, ``C`` broadcast to the
product's ``(M, N)``, one way) and ``Gather`` (an embedding lookup: indices of a graph input's,
whose values nothing knows)."""

from __future__ import annotations

from symshape.onnx.ground.elementwise import broadcast
from symshape.onnx.ground.node import Entry, Fallback, Node, rule

__all__: list[str] = []

_INDEX_TYPES = frozenset({6, 7})  # int32, int64


@rule("MatMul")
def _matmul(n: Node) -> list[Entry]:
    if n.attrs or len(n.inputs) != 2 or n.outputs != 1:
        raise Fallback
    (et, a), (bt, b) = n.float_input(0), n.float_input(1)
    if et != bt or not a or not b:
        raise Fallback
    rows = a[-2:-1] if len(a) > 1 else ()
    cols = b[-1:] if len(b) > 1 else ()
    if a[-1] != (b[-2] if len(b) > 1 else b[0]):
        raise Fallback
    batch = broadcast(a[:-2], b[:-2])
    return [(et, batch + rows + cols)]


@rule("Gemm", since=7)
def _gemm(n: Node) -> list[Entry]:
    n.only("alpha", "beta", "transA", "transB")
    if n.outputs != 1 or not 2 <= len(n.inputs) <= 3 or (len(n.inputs) == 2 and n.opset < 11):
        raise Fallback
    (et, a), (bt, b) = n.float_input(0), n.float_input(1)
    if et != bt or len(a) != 2 or len(b) != 2:
        raise Fallback
    ta, tb = n.int_attr("transA", 0), n.int_attr("transB", 0)
    if ta not in (0, 1) or tb not in (0, 1):
        raise Fallback
    if ta:
        a = a[::-1]
    if tb:
        b = b[::-1]
    if a[1] != b[0]:
        raise Fallback
    out = (a[0], b[1])
    if len(n.inputs) == 3 and n.inputs[2] is not None:
        ct, c = n.float_input(2)
        if ct != et or len(c) > 2 or broadcast(out, c) != out:
            raise Fallback
    return [(et, out)]


@rule("Gather", since=1)
def _gather(n: Node) -> list[Entry]:
    n.only("axis")
    if n.outputs != 1 or len(n.inputs) != 2:
        raise Fallback
    et, data = n.float_input(0)
    it, idx = n.any_input(1)
    r = len(data)
    axis = n.int_attr("axis", 0)
    if it not in _INDEX_TYPES or not -r <= axis < r or (axis < 0 and n.opset < 11):
        raise Fallback
    axis %= r
    return [(et, data[:axis] + idx + data[axis + 1 :])]
