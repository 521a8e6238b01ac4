"""The types of a model's inputs: given as symshape types, or from example tensors.

``inputs`` is either a mapping from forward-argument names to symshape types
(``{"x": ss.Tensor((b, 3, h, w), "float32")}``), or a tuple of example tensors (one per forward
argument, in order) with ``dynamic={"x": {0: "batch"}}`` naming the dimensions that are symbols;
the other dimensions keep the example's sizes. A symbol is named by a string (the same name in
two places is the same symbol) or given as an ``ss.Dim``.

>>> import symshape as ss
>>> from symshape.torch.inputs import example_type
>>> str(example_type((2, 3, 32, 32), "float32", {0: "b", 2: "h", 3: "h"}, "x"))
'Tensor[(b, 3, h, h), float32]'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import symshape as ss
from symshape.errors import INVALID_ARGUMENT

__all__ = ["InputSpec", "example_type", "input_types"]

InputSpec = Mapping[str, Any] | Sequence[Any]

_TYPES = (ss.TensorType, ss.TupleType, ss.FuncType, ss.ObjectType, ss.TypeVar, ss.TypeCall, ss.ShapeType)


def _symbol(v: object, where: str) -> ss.Dim:
    if isinstance(v, ss.Dim):
        return v
    if isinstance(v, str) and v.isidentifier():
        return ss.dim(v)
    name = getattr(v, "__name__", None)  # torch.export.Dim("batch")
    if isinstance(name, str) and name.isidentifier():
        return ss.dim(name)
    raise ss.SymshapeError(INVALID_ARGUMENT, f"{where}: a dynamic dimension is named by a string, got {v!r}")


def example_type(
    shape: Sequence[int], dtype: str, dynamic: Mapping[int, Any] | None, where: str
) -> ss.TensorType:
    """The type of an example tensor of ``shape`` with the ``dynamic`` axes made symbols."""
    dims: list[ss.Dim | int] = [int(s) for s in shape]
    for axis, name in (dynamic or {}).items():
        if not isinstance(axis, int) or not -len(dims) <= axis < len(dims):
            raise ss.SymshapeError(
                INVALID_ARGUMENT, f"{where}: dynamic axis {axis!r} is outside rank {len(dims)}"
            )
        dims[axis] = _symbol(name, where)
    return ss.Tensor(tuple(dims), dtype)


def input_types(
    names: Sequence[str],
    inputs: InputSpec | None,
    dynamic: Mapping[str, Mapping[int, Any]] | None,
) -> dict[str, ss.Type]:
    """Types by argument name from ``inputs`` (see the module docstring)."""
    from symshape.torch.context import dtype_name

    if inputs is None:
        return {}
    if isinstance(inputs, Mapping):
        if dynamic:
            raise ss.SymshapeError(
                INVALID_ARGUMENT, "dynamic= goes with example tensors; types already name their symbols"
            )
        out: dict[str, ss.Type] = {}
        for k, t in inputs.items():
            if k not in names:
                raise ss.SymshapeError(
                    INVALID_ARGUMENT, f"the model has no input {k!r} (its inputs: {', '.join(names)})"
                )
            if not isinstance(t, _TYPES):
                raise ss.SymshapeError(
                    INVALID_ARGUMENT, f"input {k!r}: expected a symshape type, got {type(t).__name__}"
                )
            out[k] = t
        return out
    if isinstance(inputs, (str, bytes)) or not isinstance(inputs, Sequence):
        inputs = (inputs,)
    if len(inputs) > len(names):
        raise ss.SymshapeError(
            INVALID_ARGUMENT,
            f"{len(inputs)} example inputs for {len(names)} model inputs ({', '.join(names)})",
        )
    dyn = dict(dynamic or {})
    for k in dyn:
        if k not in names[: len(inputs)]:
            raise ss.SymshapeError(INVALID_ARGUMENT, f"dynamic= names {k!r}, which is not an example input")
    out = {}
    for name, ex in zip(names, inputs):
        shape = getattr(ex, "shape", None)
        dtype = getattr(ex, "dtype", None)
        if shape is None or dtype is None:
            raise ss.SymshapeError(
                INVALID_ARGUMENT, f"input {name!r}: expected an example tensor, got {type(ex).__name__}"
            )
        out[name] = example_type(tuple(shape), dtype_name(dtype), dyn.get(name), f"input {name!r}")
    return out
