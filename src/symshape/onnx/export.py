"""``infer_shapes``: a copy of the model with every value's inferred type written into it.

Like ``onnx.shape_inference.infer_shapes``: ``graph.value_info`` gets one entry per node output
(replacing the entries it had for those values) and the graph outputs get their types. Constant
dimensions are written as ``dim_value``; symbolic ones as ``dim_param`` in symshape's canonical
syntax (``N``, ``2*N``, ``(H - 1)//2 + 1``), which :func:`symshape.onnx.from_onnx` reads back; an
unknown dimension is left empty and an unknown rank leaves the shape out.

>>> from symshape.onnx.export import dim_proto_text
>>> import symshape as ss
>>> n = ss.dim("N")
>>> dim_proto_text(2 * n + 1), dim_proto_text(ss.parse_dim("7"))
('2*N + 1', 7)
"""

from __future__ import annotations

from typing import Any

import onnx

from symshape import Dim, SymshapeError, TensorType, Type
from symshape.errors import INVALID_ARGUMENT
from symshape.onnx.dtypes import to_elem_type

__all__ = ["write_types", "dim_proto_text", "set_type"]


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def dim_proto_text(d: Dim) -> int | str | None:
    """``dim_value`` (an int), ``dim_param`` (a str), or None for an unknown dimension."""
    if d.is_constant:
        return int(d)
    text = str(d)
    if "?" in text:
        return None
    return text


def set_type(vi: onnx.ValueInfoProto, t: Type, elem_type: int) -> bool:
    """Write ``t`` into ``vi`` (keeping ``elem_type`` when symshape's dtype is unknown); False when
    ``t`` is not a tensor type. A constant dimension outside int64 (``dim_value``'s type) is a
    ``SymshapeError`` (``invalid-argument``): a model whose sizes overflow cannot be written."""
    if not isinstance(t, TensorType):
        return False
    tt = vi.type.tensor_type
    et = to_elem_type(t.dtype) or elem_type or tt.elem_type
    tt.elem_type = et
    if t.ndim is None:
        tt.ClearField("shape")
        return True
    tt.ClearField("shape")
    shape = tt.shape
    for d in t.dims:
        dp = shape.dim.add()
        v = dim_proto_text(d)
        if isinstance(v, int):
            if not _INT64_MIN <= v <= _INT64_MAX:
                raise SymshapeError(
                    INVALID_ARGUMENT,
                    f"{vi.name}: dimension {v} of {t} does not fit an ONNX dim_value (int64)",
                )
            dp.dim_value = v
        elif isinstance(v, str):
            dp.dim_param = v
    return True


def write_types(
    model: onnx.ModelProto, types: dict[str, Type], elem_types: dict[str, int]
) -> onnx.ModelProto:
    """A copy of ``model`` with ``value_info`` and the graph outputs filled from ``types``."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    g = out.graph
    inputs = {vi.name for vi in g.input} | {t.name for t in g.initializer}
    outputs = {vi.name for vi in g.output}
    produced = [o for n in g.node for o in n.output if o]
    keep: list[Any] = [vi for vi in g.value_info if vi.name not in types]
    del g.value_info[:]
    g.value_info.extend(keep)
    for name in produced:
        if name in inputs or name in outputs or name not in types:
            continue
        vi = onnx.ValueInfoProto()
        vi.name = name
        if set_type(vi, types[name], elem_types.get(name, 0)):
            g.value_info.append(vi)
    for vi in g.output:
        t = types.get(vi.name)
        if t is not None:
            set_type(vi, t, elem_types.get(vi.name, 0))
    return out
