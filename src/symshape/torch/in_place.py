"""In-place methods (``x.add_(y)``): torch writes the result into ``x``, which cannot grow (torch:
"output with shape [...] doesn't match the broadcast shape") and keeps its dtype, into which the
result type must cast by ``torch.can_cast`` ("result type Float can't be cast to the desired
output type Long" for ``int_x.mul_(0.5)``; ``bool_x.add_(1)`` likewise): the importer's operator
``torch.in_place_cast`` states that once inference knows the dtypes. ``copy_``, ``fill_``,
``masked_fill_`` and the random fills cast without the check; ``float_power_`` needs a float64
``x``. (``x += y`` is traced by ``torch.fx`` as ``add``: not seen.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

import symshape as ss
from symshape.errors import DTYPE_MISMATCH
from symshape.relations.base import Context
from symshape.torch.context import Ctx
from symshape.torch.values import Unsupported

__all__ = ["IN_PLACE_CAST", "can_cast", "in_place_result"]


def in_place_result(ctx: Ctx, x: ss.Expr, out: ss.Expr) -> ss.Expr:
    """The result of ``x.op_(...)``: ``out`` written into ``x``, which cannot grow (torch: "output
    with shape [...] doesn't match the broadcast shape"): ``out`` must have ``x``'s shape, and the
    result has ``x``'s dtype, which ``out``'s must cast to by torch's rule (``int_x.mul_(0.5)``:
    "result type Float can't be cast to the desired output type Long"; :data:`IN_PLACE_CAST`)."""
    method = str(ctx.node_target)
    if not hasattr(torch.Tensor, method):
        raise Unsupported(f"torch.Tensor has no method `{method}` (torch raises AttributeError)")
    if method not in _CASTING_IN_PLACE:
        x = x if isinstance(x, ss.Var) else ctx.let(x, "self")
        out = out if isinstance(out, ss.Var) else ctx.let(out, "out")
        if method == "float_power_":  # (a float64 result, whatever the converter returned)
            ctx.let(IN_PLACE_CAST(ss.Constant(shape=(), dtype="float64"), x, exact=True), "check_cast")
        else:
            ctx.let(IN_PLACE_CAST(out, x), "check_cast")
    res = ctx.let(ss.ops.cast_like(out, x), "in_place")
    ctx.let(ss.ops.stack([res, x], axis=0), "check_in_place")
    return res


#: in-place methods that write any dtype into ``self`` (a cast, no check) or have their own rules
_CASTING_IN_PLACE = frozenset(
    {"copy_", "fill_", "zero_", "masked_fill_", "detach_", "random_", "uniform_", "normal_",
     "bernoulli_", "exponential_"}
)  # fmt: skip
_FLOATS = frozenset({"float16", "bfloat16", "float32", "float64"})


def can_cast(src: str, dst: str) -> bool:
    """``torch.can_cast(src, dst)``: no float to an integer or bool, no complex to a real, nothing
    but a bool to a bool.

    >>> can_cast("float32", "int64"), can_cast("int64", "float16"), can_cast("int64", "bool")
    (False, True, False)
    """
    if src.startswith("complex") and not dst.startswith("complex"):
        return False
    if src in _FLOATS and not (dst in _FLOATS or dst.startswith("complex")):
        return False
    return src == "bool" or dst != "bool"


@ss.relation("torch.in_place_cast")
def _in_place_cast_rel(ctx: Context, args: Sequence[ss.Type], attrs: Any) -> bool:
    out, x, res = args
    if not isinstance(out, ss.TensorType) or not isinstance(x, ss.TensorType):
        return False
    if out.dtype is None or x.dtype is None:
        if not ctx.final:
            return False
    elif attrs.get("exact") and out.dtype != x.dtype:
        ctx.fail(
            DTYPE_MISMATCH,
            f"the base given to float_power_ is `{x}` but the result requires {out.dtype} (torch)",
        )
    elif not can_cast(str(out.dtype), str(x.dtype)):
        ctx.fail(
            DTYPE_MISMATCH,
            f"in-place: result type {out.dtype} can't be cast to the desired output type {x.dtype}"
            f" of `{x}` (torch)",
        )
    ctx.assign(res, ss.Tensor(None, x.dtype))
    return True


#: ``torch.in_place_cast(out, x, exact=False)``: torch's check that an in-place method's result
#: ``out`` may be written into ``x`` (its dtype casts to ``x``'s; ``exact``: is ``x``'s)
IN_PLACE_CAST = ss.register_op(
    "torch.in_place_cast",
    "torch.in_place_cast",
    2,
    doc="torch's check that an in-place result's dtype casts to self's (exact: equals it)",
    attr_types={"exact": "bool"},
)
