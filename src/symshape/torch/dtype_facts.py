"""What the importer knows of a tensor's dtype without inference: enough to leave out a dtype
check that cannot fail (``torch.dtype_refuse`` beside every ``relu`` of a float network).

:func:`not_bool` follows the importer's bindings: a variable or constant annotated with another
dtype; a convolution, normalization, pooling, activation or view of such a tensor (their result
has their input's dtype); an arithmetic result of promoted operands one of which is not bool
(torch's promotion of bool with any other dtype is that dtype); a cast to another dtype.
Anything else is not known (the check stays, and inference decides it).
"""

from __future__ import annotations

from collections.abc import Callable

import symshape as ss

__all__ = ["not_bool"]

#: relations whose result has their first operand's dtype
_KEEPING = frozenset(
    {"unary", "negative", "conv1d", "conv2d", "conv3d", "pool1d", "pool2d", "pool3d", "adaptive_pool2d",
     "bias_add", "softmax", "layer_norm", "reshape", "strided_slice", "transpose", "expand_dims",
     "squeeze", "concatenate", "torch.nonempty", "torch.conv_transpose", "torch.batched",
     "torch.unbatched", "dense", "matmul", "batch_matmul"}
)  # fmt: skip
#: relations of promoted operands: not bool when one of them is not
_PROMOTED = frozenset({"torch.promote", "add", "subtract", "multiply", "maximum", "minimum"})
#: relations whose result is floating whatever their operands
_FLOATING = frozenset({"unary_float", "divide"})


def _relation(e: ss.Call) -> str | None:
    rel = e.callee.relation if isinstance(e.callee, ss.Op) else None
    return rel if isinstance(rel, str) else getattr(rel, "name", None)


def not_bool(e: ss.Expr, resolve: Callable[[ss.Expr], ss.Expr], depth: int = 0) -> bool:
    """Whether ``e`` is known not to be a bool tensor (``resolve``: a variable to the expression
    it is bound to, else itself)."""
    if depth > 64:
        return False
    e = resolve(e)
    if isinstance(e, (ss.Var, ss.Constant)):
        t = e.type_annotation if isinstance(e, ss.Var) else e.type
        return isinstance(t, ss.TensorType) and isinstance(t.dtype, str) and t.dtype != "bool"
    if isinstance(e, ss.TupleGetItem):
        tv = e.tuple_value
        return (
            e.index == 0
            and isinstance(tv, ss.Call)
            and _relation(tv) == "batch_norm"
            and not_bool(tv.args[0], resolve, depth + 1)
        )
    if not isinstance(e, ss.Call) or not e.args:
        return False
    name = _relation(e)
    if name in _FLOATING:
        return True
    if name in _KEEPING:
        return not_bool(e.args[0], resolve, depth + 1)
    if name in _PROMOTED:
        return any(not_bool(a, resolve, depth + 1) for a in e.args)
    if name == "cast":
        return str(e.attrs.get("dtype")) not in ("bool", "None")
    return False
