"""The running count of a padded mask: ``CumSum(Cast(Not(Equal(Pad(ids, pads, v), v))), axis)``
(transformers' position ids of a sequence padded to a multiple of a window: Longformer's
``create_position_ids_from_input_ids`` after ``F.pad(input_ids, ..., value=pad_token_id)``).

The padded entries equal ``v``, so the mask is 0 there, and the running count along ``axis`` is at
most the number of entries of ``ids`` along it (``ids.shape[axis]``; negative pads crop, which
only lowers it), where the value ranges (:mod:`symshape.ir.ranges`) bound it by the padded length.
:func:`unpadded_length` finds the pattern in the ONNX graph (a ``Cast`` may stand anywhere
between, and the ``Equal``'s operands may be either way round); ``CumSum`` is then
``minimum(cumsum(mask), ids.shape[axis])``, the same values, whose range is the tighter one.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, Final

import numpy as np

import symshape as ss
from symshape import Expr

if TYPE_CHECKING:
    import onnx

    from symshape.onnx.context import NodeContext

__all__ = ["unpadded_length"]

#: each importer's nodes by output name (the graph and its subgraphs), made on first use
_PRODUCERS: weakref.WeakKeyDictionary[Any, dict[str, onnx.NodeProto]] = weakref.WeakKeyDictionary()
#: the operators a mask may pass through unchanged (entries 0 stay 0)
_CASTS: Final = frozenset({"Cast", "Identity"})


def _producers(ctx: NodeContext) -> dict[str, onnx.NodeProto]:
    imp = ctx.importer()
    hit = _PRODUCERS.get(imp)
    if hit is None:
        hit = {}
        stack = [ctx.model().graph]
        while stack:
            g = stack.pop()
            for n in g.node:
                for o in n.output:
                    hit.setdefault(o, n)
                for a in n.attribute:
                    stack.extend([a.g] if a.HasField("g") else list(a.graphs))
        _PRODUCERS[imp] = hit
    return hit


def _const(ctx: NodeContext, name: str) -> np.ndarray[Any, Any] | None:
    v = ctx.value_named(name)
    c = None if v is None else v.const
    return c if isinstance(c, np.ndarray) and c.size == 1 else None


def _pad_value(ctx: NodeContext, pad: onnx.NodeProto) -> Any:
    """The constant a ``Pad`` of mode ``constant`` writes (None: another mode, or not known)."""
    import onnx

    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in pad.attribute}
    mode = attrs.get("mode", b"constant")
    if (mode.decode() if isinstance(mode, bytes) else mode) != "constant":
        return None
    if "value" in attrs:  # (opset < 11)
        return attrs["value"]
    if len(pad.input) < 3 or not pad.input[2]:
        return 0
    c = _const(ctx, pad.input[2])
    return None if c is None else c.reshape(-1)[0].item()


def unpadded_length(ctx: NodeContext, axis: int) -> Expr | None:
    """``ids.shape[axis]`` (an int64 scalar) where input 0 of the node (a ``CumSum``) is the mask
    ``ids`` padded with ``v`` is not ``v`` (see the module docstring), else None."""
    prod = _producers(ctx)
    n = prod.get(ctx.input_name(0))
    while n is not None and n.op_type in _CASTS and not n.domain:
        n = prod.get(n.input[0])
    if n is None or n.op_type != "Not" or n.domain:
        return None
    eq = prod.get(n.input[0])
    while eq is not None and eq.op_type in _CASTS and not eq.domain:
        eq = prod.get(eq.input[0])
    if eq is None or eq.op_type != "Equal" or eq.domain or len(eq.input) != 2:
        return None
    for a, b in (eq.input, eq.input[::-1]):
        pad = prod.get(a)
        c = _const(ctx, b)
        if pad is None or c is None or pad.op_type != "Pad" or pad.domain:
            continue
        v = _pad_value(ctx, pad)
        if v is None or v != c.reshape(-1)[0].item():
            continue
        ids = ctx.value_named(pad.input[0])
        if ids is None:
            return None
        rank = ctx.rank(0)
        if rank is None or not -rank <= axis < rank:
            return None
        return ss.ops.take(ss.ops.shape_of(ids.expr), ctx.constant(axis % rank, "int64"))
    return None
