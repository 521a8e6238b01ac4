"""torch's type promotion for arithmetic and comparisons: an operator of the importer's own.

``torch.promote(x, other, scalar=False, other_scalar=False, floating=False)`` is ``x`` converted
to the dtype torch computes ``x op other`` in (``torch.result_type``), registered through the
public custom-operator API as :mod:`symshape.torch.convert.axes` registers ``torch.swapaxes``;
symshape's own binary operators require equal dtypes. The rule is torch's: operands are ranked
dimensioned tensors > 0-d tensors > Python scalars (``scalar``), and a lower rank only decides
the dtype when its category (bool < integer < floating) is higher: ``int64 tensor * 0.5`` is
``float32`` (the default float), ``int64 tensor * float64 0-d tensor`` is ``float64``,
``float16 tensor * float64 0-d tensor`` stays ``float16``. ``floating`` (true division) makes
an integer or bool result ``float32``. A dtype that does not change keeps ``x``'s type as it is
(its value too).

>>> result_dtype([("int64", 2), ("float32", 0)])
'float32'
>>> result_dtype([("int64", 2), ("float64", 1)])
'float64'
>>> result_dtype([("float16", 2), ("float64", 1)])
'float16'
>>> result_dtype([("uint8", 2), ("int8", 2)])
'int16'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import symshape as ss
from symshape.relations.values import cast_value

__all__ = ["PROMOTE", "result_dtype", "promote_types", "accumulated", "as_floating"]

_INTS = ("uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64")
_FLOATS = ("float16", "bfloat16", "float32", "float64")
_BITS = {
    "bool": 1,
    "uint8": 8,
    "int8": 8,
    "int16": 16,
    "uint16": 16,
    "int32": 32,
    "uint32": 32,
    "int64": 64,
    "uint64": 64,
    "float16": 16,
    "bfloat16": 16,
    "float32": 32,
    "float64": 64,
}


def _category(dt: str) -> int:
    return 0 if dt == "bool" else 1 if dt in _INTS else 2 if dt in _FLOATS else 3


def promote_types(a: str | None, b: str | None) -> str | None:
    """``torch.promote_types`` on the dtypes symshape knows (None: no operand, or complex)."""
    if a is None or b is None:
        return a if b is None else b
    if a == b:
        return a
    ca, cb = _category(a), _category(b)
    if 3 in (ca, cb):
        return None
    if ca != cb:
        return a if ca > cb else b
    if ca == 2:
        if {a, b} == {"float16", "bfloat16"}:
            return "float32"
        return a if _BITS[a] >= _BITS[b] else b
    signed_a, signed_b = not a.startswith("u"), not b.startswith("u")
    if signed_a == signed_b:
        return a if _BITS[a] >= _BITS[b] else b
    signed, unsigned = (a, b) if signed_a else (b, a)
    if _BITS[signed] > _BITS[unsigned]:
        return signed
    return {8: "int16", 16: "int32", 32: "int64"}.get(_BITS[unsigned], "int64")


def _combine(higher: str | None, lower: str | None) -> str | None:
    """torch's ``combine_categories``: a lower-ranked dtype counts only in a higher category."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if _category(higher) == 2:
        return higher
    if higher == "bool" or _category(lower) == 2:
        return promote_types(higher, lower)
    return higher


def _scalar_dtype(dt: str) -> str:
    """A Python scalar's dtype as torch sees a wrapped number (floats: the default float)."""
    return "float32" if _category(dt) == 2 else dt


def result_dtype(operands: Sequence[tuple[str, int]]) -> str | None:
    """``torch.result_type`` of ``(dtype, rank)`` pairs, rank 2 for a dimensioned tensor, 1 for
    a 0-d tensor, 0 for a Python scalar."""
    state: list[str | None] = [None, None, None]
    for dt, rank in operands:
        state[rank] = promote_types(state[rank], _scalar_dtype(dt) if rank == 0 else dt)
    return _combine(state[2], _combine(state[1], state[0]))


def _rank(t: ss.TensorType, scalar: bool) -> int:
    if scalar:
        return 0
    return 1 if t.ndim == 0 else 2


@ss.relation("torch.promote")
def _promote_rel(ctx: Any, args: Sequence[ss.Type], attrs: Any) -> bool:
    x, other, out = args[0], args[1], args[2]
    if not isinstance(x, ss.TensorType) or not isinstance(other, ss.TensorType):
        return False
    known = isinstance(x.dtype, str) and isinstance(other.dtype, str)
    ranks_known = (x.ndim is not None or attrs.get("scalar")) and (
        other.ndim is not None or attrs.get("other_scalar")
    )
    if not known or not ranks_known:
        if not ctx.final:
            return False
        ctx.assign(out, x if x.dtype is None else ss.Tensor(x.shape, None))  # dtype unknown
        return True
    xd, od = x.dtype, other.dtype
    assert isinstance(xd, str) and isinstance(od, str)
    dt = result_dtype(
        [(xd, _rank(x, bool(attrs.get("scalar")))), (od, _rank(other, bool(attrs.get("other_scalar"))))]
    )
    if dt is not None and attrs.get("floating") and _category(dt) < 2:
        dt = "float32"
    if dt is None or dt == x.dtype:
        ctx.assign(out, x)
    else:  # a widened integer (or a bool made an integer) keeps its value
        ctx.assign(out, ss.TensorType(x.shape, dt, cast_value(x, dt)))
    return True


#: ``torch.promote(x, other, scalar=..., other_scalar=..., floating=...)`` (see the module docstring)
PROMOTE = ss.register_op(
    "torch.promote",
    "torch.promote",
    2,
    doc="x converted to the dtype torch computes `x op other` in (torch.result_type)",
    attr_types={"scalar": "bool", "other_scalar": "bool", "floating": "bool"},
)


def accumulated(x: ss.Expr) -> ss.Expr:
    """``x`` in the dtype torch sums it in (``sum``, ``prod``, ``cumsum``): promoted with an
    ``int64`` tensor with a dimension (integers and bools become ``int64``, keeping their value;
    floats stay)."""
    return PROMOTE(x, ss.const(np.zeros(1, "int64")))


def as_floating(x: ss.Expr) -> ss.Expr:
    """``x`` in the dtype of an op that makes integers floats (``logsumexp``): an integer or bool
    ``x`` becomes ``float32`` (torch's default dtype), a float stays."""
    return PROMOTE(x, x, floating=True)
