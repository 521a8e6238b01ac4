"""Constant folding: evaluating a node whose inputs are known, with onnx's reference evaluator.

What gets folded is what sizes are computed from: a node whose inputs are all constants with
values, when they are integers or tiny (at most 64 elements), and every input and output has at
most :data:`FOLD_LIMIT` elements (checked before running the operators whose output can be much
larger than their inputs: ``ConstantOfShape``, ``Expand``, ``Tile``, ``Range``, ``OneHot``); and
``Shape``/``Size`` of a tensor whose shape is static and known without inference (a declared input,
a constant; otherwise ``shape_of`` carries the shape as a value). Weights made by
``ConstantOfShape`` stay expressions; a node that fails to evaluate is converted as usual (its
converter then reports what is wrong).

>>> import numpy as np
>>> from onnx import helper
>>> n = helper.make_node("Concat", ["a", "b"], ["y"], axis=0)
>>> [a.tolist() for a in _evaluate(n, [np.array([2]), np.array([-1, 64])], 17)]
[[2, -1, 64]]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import onnx

from symshape.onnx.dtypes import DTYPES
from symshape.onnx.external import inlined
from symshape.onnx.registry import canonical_domain

if TYPE_CHECKING:
    from symshape.onnx.context import NodeContext, Value

__all__ = ["FOLD_LIMIT", "FOLDABLE", "FOLDED_WITHOUT_VALUES", "fold", "fold_node"]

#: Nodes are folded when every input and output has at most this many elements.
FOLD_LIMIT: Final = 1 << 12
#: The operators folded without any input value (the others need one: the importer asks only then).
FOLDED_WITHOUT_VALUES: Final = frozenset({"Shape", "Size"})

#: The operators folded when their inputs' values are known (see the module docstring).
FOLDABLE: Final = frozenset(
    """Identity Cast CastLike Add Sub Mul Div Mod Pow Neg Abs Floor Ceil Round Sqrt Reciprocal Sign
    Relu Clip Equal Less Greater LessOrEqual GreaterOrEqual Not And Or Xor Where Max Min Sum Mean
    Gather GatherElements GatherND Concat Unsqueeze Squeeze Reshape Flatten Transpose Slice Split
    ReduceSum ReduceProd ReduceMax ReduceMin ReduceMean ArgMax ArgMin Range ConstantOfShape Expand
    Tile NonZero Trilu CumSum TopK Compress OneHot BitShift BitwiseAnd BitwiseOr BitwiseXor
    BitwiseNot IsNaN IsInf""".split()
)


def fold_node(
    node: onnx.NodeProto, ctx: NodeContext, inputs: Sequence[Value | None], opset: int
) -> list[np.ndarray[Any, Any] | None] | None:
    """:func:`fold` with the values of the node's ``inputs`` (None for an absent one); None at
    once when an input's value is not known (fold needs them all, but for ``Shape`` and ``Size``)."""
    consts: list[np.ndarray[Any, Any] | None] = []
    values_needed = ctx.op_type not in FOLDED_WITHOUT_VALUES
    for v in inputs:
        c = None if v is None else v.const
        if c is None and v is not None and values_needed:
            return None
        consts.append(c)
    return fold(node, ctx, consts, opset)


def fold(
    node: onnx.NodeProto,
    ctx: NodeContext,
    consts: Sequence[np.ndarray[Any, Any] | None],
    opset: int,
) -> list[np.ndarray[Any, Any] | None] | None:
    """The node's output values (None for an empty output name), or None when it is not folded.

    ``consts`` are the inputs' values (None for an absent input or an unknown value).
    """
    if canonical_domain(node.domain) != "" or not node.output:
        return None
    op = node.op_type
    if op in FOLDED_WITHOUT_VALUES:
        return _fold_shape(node, ctx) if ctx.has_input(0) else None
    if op not in FOLDABLE:
        return None
    if op == "ConstantOfShape" and not _int_fill(node):
        return None  # a float fill (weights): the converter makes it, no values needed
    arrays: list[np.ndarray[Any, Any] | None] = []
    for k, a in enumerate(consts):
        if not ctx.has_input(k):
            arrays.append(None)
            continue
        if a is None or a.size > FOLD_LIMIT:
            return None
        arrays.append(a)
    if not any(a is not None for a in arrays):
        return None
    small = all(a is None or a.size <= 64 for a in arrays)
    ints = all(a is None or a.dtype.kind in "iub" for a in arrays)
    if not (small or ints):
        return None
    if not _small_output(op, arrays):
        return None
    if op in ("Gather", "GatherElements", "GatherND") and not _indices_in_range(node, arrays):
        return None  # (the reference evaluator does not check them all: the converter reports it)
    try:
        results = _evaluate(inlined(node, ctx.base_dir), arrays, opset)
    except Exception:
        return None
    outs: list[np.ndarray[Any, Any] | None] = []
    for name, r in zip(node.output, results):
        if not name:
            outs.append(None)
            continue
        arr = np.asarray(r)
        if arr.size > FOLD_LIMIT or str(arr.dtype) not in DTYPES:
            return None
        outs.append(arr)
    return outs


def _evaluate(
    node: onnx.NodeProto, arrays: Sequence[np.ndarray[Any, Any] | None], opset: int
) -> list[np.ndarray[Any, Any]]:
    """The node's outputs: numpy for the simplest operators, else onnx's reference evaluator (one
    per distinct operator, opset and attributes, reused)."""
    fast = _numpy(node, arrays, opset)
    if fast is not None:
        return fast
    ev = _evaluator(node, opset)
    feeds = {f"i{k}": a for k, a in enumerate(arrays) if a is not None}
    return [np.asarray(r) for r in ev.run(None, feeds)]


_EVALUATORS: dict[tuple[int, bytes], Any] = {}


def _evaluator(node: onnx.NodeProto, opset: int) -> Any:
    """A reference evaluator of ``node`` with inputs ``i0, i1, ...`` and outputs ``o0, ...``
    (building one costs about a millisecond: nodes that differ in names only share it)."""
    from onnx.reference import ReferenceEvaluator

    canon = onnx.NodeProto()
    canon.CopyFrom(node)
    canon.ClearField("name")
    canon.ClearField("doc_string")
    canon.ClearField("metadata_props")
    del canon.input[:]
    canon.input.extend(f"i{k}" if x else "" for k, x in enumerate(node.input))
    del canon.output[:]
    canon.output.extend(f"o{k}" if x else "" for k, x in enumerate(node.output))
    key = (opset, canon.SerializeToString(deterministic=True))
    ev = _EVALUATORS.get(key)
    if ev is None:
        if len(_EVALUATORS) >= 512:
            _EVALUATORS.clear()
        ev = _EVALUATORS[key] = ReferenceEvaluator(_standalone(canon, opset))
    return ev


def _numpy(
    node: onnx.NodeProto, arrays: Sequence[np.ndarray[Any, Any] | None], opset: int
) -> list[np.ndarray[Any, Any]] | None:
    """``Identity``, ``Concat``, ``Unsqueeze`` and ``Squeeze`` evaluated with numpy (None for any
    other node, or when numpy refuses: the reference evaluator then decides).

    >>> n = onnx.helper.make_node("Unsqueeze", ["x", "axes"], ["y"])
    >>> _numpy(n, [np.array([3, 4]), np.array([0, -1])], 13)[0].shape
    (1, 2, 1)
    """
    op = node.op_type
    if len(node.output) != 1:
        return None
    try:
        if op == "Identity" and arrays[0] is not None:
            return [arrays[0]]
        if op == "Concat":
            attr = _attr_int(node, "axis")
            if attr is None or any(a is None for a in arrays):
                return None
            return [np.concatenate([a for a in arrays if a is not None], axis=attr)]
        if op in ("Unsqueeze", "Squeeze"):
            x = arrays[0]
            if x is None:
                return None
            if opset >= 13:
                axes = (
                    None
                    if len(arrays) < 2 or arrays[1] is None
                    else tuple(int(a) for a in arrays[1].reshape(-1))
                )
            else:
                axes = _attr_ints(node, "axes")
            if op == "Squeeze":
                if axes is None:
                    return [np.squeeze(x)]
                if any(x.shape[a] != 1 for a in axes):
                    return None
                return [np.squeeze(x, axis=axes)]
            if axes is None:
                return None
            r = x.ndim + len(axes)
            norm = sorted(a + r if a < 0 else a for a in axes)
            if len(set(norm)) != len(norm) or not all(0 <= a < r for a in norm):
                return None
            return [np.expand_dims(x, tuple(norm))]
    except Exception:
        return None
    return None


_INT_ELEM_TYPES: Final = frozenset(
    {
        onnx.TensorProto.INT64, onnx.TensorProto.INT32, onnx.TensorProto.INT16, onnx.TensorProto.INT8,
        onnx.TensorProto.UINT64, onnx.TensorProto.UINT32, onnx.TensorProto.UINT16,
        onnx.TensorProto.UINT8, onnx.TensorProto.BOOL,
    }
)  # fmt: skip


def _int_fill(node: onnx.NodeProto) -> bool:
    """Whether a ``ConstantOfShape`` fills with an integer or bool ``value`` (the default is a float
    0), read from the attribute without decoding it."""
    for a in node.attribute:
        if a.name == "value":
            return a.type == onnx.AttributeProto.TENSOR and a.t.data_type in _INT_ELEM_TYPES
    return False


def _attr_int(node: onnx.NodeProto, name: str) -> int | None:
    for a in node.attribute:
        if a.name == name and a.type == onnx.AttributeProto.INT:
            return int(a.i)
    return None


def _attr_ints(node: onnx.NodeProto, name: str) -> tuple[int, ...] | None:
    for a in node.attribute:
        if a.name == name and a.type == onnx.AttributeProto.INTS:
            return tuple(int(x) for x in a.ints)
    return None


def _fold_shape(node: onnx.NodeProto, ctx: NodeContext) -> list[np.ndarray[Any, Any] | None] | None:
    # a shape known without inference (a declared input, a constant); otherwise ``shape_of``
    # carries the shape as its value, and a converter that needs it as a constant asks for it
    shape = ctx.static_shape(0, infer=False)
    if shape is None:
        return None
    if node.op_type == "Size":
        return [np.array(math.prod(shape), dtype=np.int64)]
    r = len(shape)
    start = int(ctx.attr("start", 0)) if ctx.opset >= 15 else 0
    end = ctx.attr("end", None) if ctx.opset >= 15 else None
    s = max(0, min(r, start + r if start < 0 else start))
    e = r if end is None else max(0, min(r, int(end) + r if int(end) < 0 else int(end)))
    return [np.array(shape[s:e], dtype=np.int64)]


def _standalone(node: onnx.NodeProto, opset: int) -> onnx.ModelProto:
    """A one-node model to evaluate ``node`` with the reference implementation of ``opset``."""
    from onnx import helper

    ins = [helper.make_empty_tensor_value_info(i) for i in node.input if i]
    outs = [helper.make_empty_tensor_value_info(o) for o in node.output if o]
    g = helper.make_graph([node], "fold", ins, outs)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _small_output(op: str, arrays: Sequence[np.ndarray[Any, Any] | None]) -> bool:
    """Whether folding ``op`` on these inputs produces small outputs (checked before running the
    operators whose output can be much larger than their inputs)."""
    try:
        if op == "ConstantOfShape":
            a = arrays[0]
            return a is not None and math.prod(int(x) for x in a.reshape(-1)) <= FOLD_LIMIT
        if op == "Expand":
            a, s = arrays[0], arrays[1]
            if a is None or s is None:
                return False
            shape = np.broadcast_shapes(a.shape, tuple(int(x) for x in s.reshape(-1)))
            return math.prod(shape) <= FOLD_LIMIT
        if op == "Tile":
            a, r = arrays[0], arrays[1]
            return (
                a is not None
                and r is not None
                and a.size * math.prod(int(x) for x in r.reshape(-1)) <= FOLD_LIMIT
            )
        if op == "Range":
            start, lim, delta = (float(np.asarray(x).reshape(-1)[0]) for x in arrays[:3] if x is not None)
            return delta != 0 and max(math.ceil((lim - start) / delta), 0) <= FOLD_LIMIT
        if op == "OneHot":
            a, depth = arrays[0], arrays[1]
            return (
                a is not None and depth is not None and a.size * abs(int(depth.reshape(-1)[0])) <= FOLD_LIMIT
            )
    except Exception:
        return False
    return True


def _indices_in_range(node: onnx.NodeProto, arrays: Sequence[np.ndarray[Any, Any] | None]) -> bool:
    """Whether the constant indices of a ``Gather``, ``GatherElements`` or ``GatherND`` are each
    in ``[-d, d)`` of the axis they index (onnxruntime's check; False when not decided here)."""
    data, idx = arrays[0], arrays[1] if len(arrays) > 1 else None
    if data is None or idx is None or idx.dtype.kind not in "iu":
        return False
    if idx.size == 0:
        return True
    if node.op_type == "GatherND":
        b = _attr_int(node, "batch_dims") or 0
        k = idx.shape[-1] if idx.ndim else 0
        if b + k > data.ndim:
            return False
        cols = [(idx[..., j], data.shape[b + j]) for j in range(k)]
    else:
        axis = _attr_int(node, "axis") or 0
        if not -data.ndim <= axis < data.ndim:
            return False
        cols = [(idx, data.shape[axis])]
    return all(c.size == 0 or (int(c.min()) >= -d and int(c.max()) < d) for c, d in cols)
