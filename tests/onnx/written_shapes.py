"""What ``infer_shapes`` (symshape's or onnx's) wrote into a model, and a written dimension at
given sizes: a ``dim_param`` is read back with symshape's own parser (``ss.parse_dim``)."""

from __future__ import annotations

from collections.abc import Mapping

import onnx

import symshape as ss

__all__ = ["Written", "dims_of", "written", "at"]

Written = list[int | str | None] | None


def dims_of(vi: onnx.ValueInfoProto) -> Written:
    """A value's written shape: ``dim_value``, ``dim_param`` or None per dimension; None without a
    shape (an unknown rank)."""
    tt = vi.type.tensor_type
    if not tt.HasField("shape"):
        return None
    out: list[int | str | None] = []
    for d in tt.shape.dim:
        which = d.WhichOneof("value")
        out.append(d.dim_value if which == "dim_value" else d.dim_param if which == "dim_param" else None)
    return out


def written(m: onnx.ModelProto) -> dict[str, Written]:
    """The shapes of the tensor values in ``value_info`` and the graph outputs, by name."""
    return {
        vi.name: dims_of(vi)
        for vi in (*m.graph.value_info, *m.graph.output)
        if vi.type.HasField("tensor_type")
    }


def at(d: int | str | None, sizes: Mapping[str, int]) -> int | None:
    """A written dimension with ``sizes`` (symbol name to value) substituted; None when unknown
    (empty, or over a symbol ``sizes`` does not give)."""
    if d is None or isinstance(d, int):
        return d
    syms = {k: ss.dim(k) for k in sizes}
    value = ss.parse_dim(d, syms).subs({syms[k]: v for k, v in sizes.items()})
    return int(value) if value.is_constant else None
