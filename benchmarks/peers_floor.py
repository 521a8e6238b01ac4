"""A floor for workload (f), not a peer: what any Python importer built on the ``onnx`` package pays.

``read_floor(path)`` loads the model from its file as symshape's loader does
(``symshape.onnx.loading.read_model_file``: what ``onnx.load(path, load_external_data=False)``
gives, parsed from a memory map of a file of 1 MiB or more; parsing only, without onnx's Python
walk over every tensor for external data; a floor is the least any reader must do, and a reader
that copied the file first would pay 0.9 ms more on ``transformer12``'s 10 MB) and reads, once,
every field a shape inference must look at: each graph input's declared dimensions, each
initializer's data type and dimensions, and each node's op type, domain, input and output names
and attributes (name, kind and value; a tensor attribute's data type and dimensions). It computes
nothing. A Python importer cannot take less time than this, so ``ss/read-floor`` says how much of
symshape's time is its own work, and a target below this floor is out of reach for any Python
implementation.
"""

from __future__ import annotations

from typing import Any

__all__ = ["NAME", "version", "read_floor"]

NAME = "read-floor"


def version() -> str | None:
    """``onnx``'s version when it imports (the floor is measured with it)."""
    try:
        import onnx
    except Exception:
        return None
    return f"onnx {onnx.__version__}"


def _attribute(a: Any) -> Any:
    k = a.type
    if k == 1:
        return a.f
    if k == 2:
        return a.i
    if k == 3:
        return a.s
    if k == 4:
        return (a.t.data_type, a.t.dims[:])
    if k == 6:
        return a.floats[:]
    if k == 7:
        return a.ints[:]
    if k == 8:
        return a.strings[:]
    return None


def read_floor(path: str) -> dict[str, Any]:
    """Load ``path`` and read every node's fields (see the module docstring)."""
    from symshape.onnx.loading import read_model_file

    model = read_model_file(path)
    g = model.graph
    n = 0
    # (slices: iterating a protobuf repeated field ends by raising an IndexError, which costs)
    for vi in g.input[:]:
        for d in vi.type.tensor_type.shape.dim[:]:
            n += len(d.dim_param) if d.dim_param else d.dim_value
    for t in g.initializer[:]:
        n += t.data_type + len(t.dims[:])
    for node in g.node[:]:
        fields = (node.op_type, node.domain, node.input[:], node.output[:])
        attrs = [(a.name, _attribute(a)) for a in node.attribute[:]]
        n += len(fields) + len(attrs)
    return {"status": "ok", "type": f"{n} fields"}
