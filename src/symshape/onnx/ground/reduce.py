"""Ground rules of the reductions (``ReduceSum``, ``ReduceMean``, ...) over float tensors.

The axes are an attribute up to the opset where they became an input (13 for ``ReduceSum``, 18 for
the others), then a constant int64 vector; without axes every axis is reduced, or none where
``noop_with_empty_axes`` is set (input form). An axis out of range or named twice (onnxruntime
reduces it once, the reference evaluator refuses it) is the full path's.
"""

from __future__ import annotations

from typing import Final

from symshape.onnx.ground.node import Entry, Fallback, Node, rule

__all__: list[str] = []

#: the reductions, each with the opset its axes became an input
_INPUT_FORM: Final = {
    "ReduceSum": 13, "ReduceMean": 18, "ReduceMax": 18, "ReduceMin": 18, "ReduceProd": 18,
    "ReduceL1": 18, "ReduceL2": 18, "ReduceSumSquare": 18, "ReduceLogSum": 18, "ReduceLogSumExp": 18,
}  # fmt: skip


@rule(*_INPUT_FORM)
def _reduce(n: Node) -> list[Entry]:
    input_form = n.opset >= _INPUT_FORM[n.op]
    axes: tuple[int, ...] | None
    if input_form:
        n.only("keepdims", "noop_with_empty_axes")
        if not 1 <= len(n.inputs) <= 2:
            raise Fallback
        axes = n.value(1) if len(n.inputs) == 2 and n.inputs[1] is not None else None
    else:
        n.only("keepdims", "axes")
        if len(n.inputs) != 1:
            raise Fallback
        axes = n.ints_attr("axes") if "axes" in n.attrs else None
    keep = n.int_attr("keepdims", 1)
    if n.outputs != 1 or keep not in (0, 1):
        raise Fallback
    et, x = n.float_input(0)
    r = len(x)
    if not axes:
        if input_form and n.int_attr("noop_with_empty_axes", 0):
            return [(et, x)]
        at = set(range(r))
    else:
        at = set()
        for a in axes:
            if not -r <= a < r or a % r in at:
                raise Fallback
            at.add(a % r)
    if keep:
        return [(et, tuple(1 if i in at else d for i, d in enumerate(x)))]
    return [(et, tuple(d for i, d in enumerate(x) if i not in at))]
