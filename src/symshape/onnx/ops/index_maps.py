"""The value of a 1-d integer input rebuilt through tensors of rank 2 (TorchScript's ``F.pad``).

symshape's shape values are 1-d: a small integer tensor reshaped to rank 2 loses its entries. The
TorchScript exporter writes every ``F.pad`` with pads computed at run time as

    p = Reshape(pads, [-1, 2])                                   # (rank, 2): pairs
    p = Slice(p, starts=[-1], ends=[-huge], axes=[0], steps=[-1])  # the last axis first
    p = Transpose(p, perm=[1, 0]); p = Reshape(p, [-1]); p = Cast(p, int64)
    y = Pad(x, p)

so that ``Pad`` saw unknown pads (fresh dimensions). Every op of such a chain only moves entries:
replayed on ``arange(n)`` (the positions of the 1-d source's ``n`` entries) with the chain's
constant targets, axes and permutations, it gives the positions the 1-d result takes, and the
result is ``take(source, positions)``, whose value inference knows. :func:`flat_value` does that
for a converter that reads an input's value (``Pad``'s pads, ``Reshape``'s target): the chain is
found by walking back from the input through ``Reshape``, ``Slice``, ``Transpose``, ``Squeeze``,
``Unsqueeze``, ``Identity`` and integer ``Cast`` nodes of the outermost graph with constant
parameters, up to a 1-d integer value of at most :data:`MAX_ENTRIES` entries.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, Final

import numpy as np
import onnx
from onnx import helper

import symshape as ss
from symshape import Expr, TensorType
from symshape.onnx.context import NodeContext
from symshape.onnx.dtypes import INT_DTYPES, to_dtype

__all__ = ["flat_value", "MAX_ENTRIES"]

#: the largest 1-d source whose entries are followed
MAX_ENTRIES: Final = 64
#: the operators that only move entries
_MOVES: Final = frozenset({"Reshape", "Slice", "Transpose", "Squeeze", "Unsqueeze", "Identity", "Cast"})

Step = Callable[[np.ndarray[Any, Any]], np.ndarray[Any, Any]]

_PRODUCERS: weakref.WeakKeyDictionary[Any, dict[str, onnx.NodeProto]] = weakref.WeakKeyDictionary()


def _producers(imp: Any) -> dict[str, onnx.NodeProto]:
    """The outermost graph's nodes by output name (built once per importer, when first needed)."""
    hit = _PRODUCERS.get(imp)
    if hit is None:
        hit = _PRODUCERS[imp] = {o: n for n in imp.graph.node for o in n.output if o}
    return hit


def flat_value(ctx: NodeContext, i: int) -> Expr:
    """Input ``i`` as an expression: ``take(source, positions)`` when it is a 1-d integer source
    moved through a tensor of rank 2 or more (see the module docstring), else the input itself."""
    e = _rebuilt(ctx, i)
    return ctx.input(i) if e is None else e


def _rebuilt(ctx: NodeContext, i: int) -> Expr | None:
    imp = ctx._imp
    producers = _producers(imp)
    name = ctx.input_name(i)
    node = producers.get(name)
    if node is None or node.op_type not in _MOVES or node.domain not in ("", "ai.onnx"):
        return None  # (the common case: one look-up)
    opset = ctx.opset
    steps: list[Step] = []
    cast_to: str | None = None
    raised = False
    while node is not None and node.op_type in _MOVES and node.domain in ("", "ai.onnx"):
        step = _step(imp, node, opset)
        if step is None:
            return None
        if node.op_type == "Cast":
            to = to_dtype(_attr(node, "to", 0))
            if to not in INT_DTYPES:
                return None
            cast_to = cast_to or to  # (the last cast decides)
        raised = raised or node.op_type in ("Reshape", "Unsqueeze")
        steps.append(step)
        name = node.input[0]
        node = producers.get(name)
    source = imp.values.get(name)
    if not raised or source is None:
        return None
    t = imp.type_of_value(source)
    if not isinstance(t, TensorType) or t.ndim != 1 or t.dtype not in INT_DTYPES:
        return None
    n = t.dims[0]
    if not n.is_constant or int(n) > MAX_ENTRIES:
        return None
    idx: np.ndarray[Any, Any] = np.arange(int(n), dtype=np.int64)
    try:
        for step in reversed(steps):
            idx = step(idx)
    except (ValueError, IndexError):  # (a malformed chain: the converters say so)
        return None
    if idx.ndim != 1:
        return None
    out = ss.ops.take(source.expr, ss.const(idx.astype(np.int64)), axis=0)
    if cast_to is not None and cast_to != t.dtype:
        out = ss.ops.cast(out, cast_to)
    return out


def _attr(node: onnx.NodeProto, name: str, default: Any) -> Any:
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def _ints(imp: Any, node: onnx.NodeProto, k: int) -> tuple[int, ...] | None:
    """Input ``k``'s constant entries (None when absent or not constant)."""
    if k >= len(node.input) or not node.input[k]:
        return None
    v = imp.values.get(node.input[k])
    return None if v is None else v.int_vector()


def _step(imp: Any, node: onnx.NodeProto, opset: int) -> Step | None:
    """What ``node`` does to the positions, when its parameters are constants."""
    op = node.op_type
    if op in ("Identity", "Cast"):
        return lambda a: a
    if op == "Transpose":
        perm = _attr(node, "perm", None)
        return lambda a: np.transpose(a, None if perm is None else tuple(perm))
    new = opset >= 13 or (op in ("Reshape", "Slice") and opset >= (5 if op == "Reshape" else 10))
    if op == "Reshape":
        shape = _ints(imp, node, 1) if new else tuple(_attr(node, "shape", ()))
        return None if shape is None else _reshape(shape, bool(_attr(node, "allowzero", 0)))
    if op in ("Squeeze", "Unsqueeze"):
        axes = _ints(imp, node, 1) if new else _attr(node, "axes", None)
        if op == "Unsqueeze":
            return None if axes is None else _unsqueeze(tuple(axes))
        return lambda a: np.squeeze(a, axis=None if axes is None else tuple(int(x) for x in axes))
    if op == "Slice":
        return _slice(imp, node, new)
    return None


def _reshape(shape: tuple[int, ...], allowzero: bool) -> Step:
    def step(a: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        target = [a.shape[j] if s == 0 and not allowzero else s for j, s in enumerate(shape)]
        return a.reshape(target)

    return step


def _unsqueeze(axes: tuple[int, ...]) -> Step:
    def step(a: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        r = a.ndim + len(axes)
        return np.expand_dims(a, tuple(sorted(x + r if x < 0 else x for x in axes)))

    return step


def _slice(imp: Any, node: onnx.NodeProto, new: bool) -> Step | None:
    if new:
        starts, ends = _ints(imp, node, 1), _ints(imp, node, 2)
        axes, strides = _ints(imp, node, 3), _ints(imp, node, 4)
        if starts is None or ends is None:
            return None
        if (len(node.input) > 3 and node.input[3] and axes is None) or (
            len(node.input) > 4 and node.input[4] and strides is None
        ):
            return None  # (given, but computed at run time)
    else:
        starts, ends = tuple(_attr(node, "starts", ())), tuple(_attr(node, "ends", ()))
        axes, strides = _attr(node, "axes", None), None
    b, e = tuple(starts), tuple(ends)
    ax = tuple(range(len(b))) if axes is None else tuple(axes)
    st = (1,) * len(b) if strides is None else tuple(strides)
    if not len(b) == len(e) == len(ax) == len(st) or 0 in st:
        return None

    def step(a: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        index = [slice(None)] * a.ndim
        for s0, e0, x, k in zip(b, e, ax, st):
            index[x + a.ndim if x < 0 else x] = slice(s0, e0, k)
        return a[tuple(index)]

    return step
