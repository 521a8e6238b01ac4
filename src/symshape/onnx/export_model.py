"""The annotated copy :func:`symshape.onnx.infer_shapes` returns, made from a result of
:func:`symshape.onnx.infer`.

Every graph the importer converted is written: the main graph with the values of its scope, and
each subgraph (an ``If`` branch, a ``Scan`` body, each converted in a scope of its own) with the
values its scope had when its conversion ended (:attr:`Importer.scopes`), so that two sibling
branches that both name a value ``out`` each get their own ``out``. A subgraph converted more than
once is written from its last conversion; one never converted (the branch an ``If`` with a
constant condition does not take) is left as it is. All dimensions are simplified together under
the result's guards (:mod:`symshape.onnx.export_simplify`) and written with the pinned symbols'
values (:func:`~symshape.onnx.export.guard_pins`).

The caller's ``dims`` (``{"N": b}``: the model's ``N`` is the caller's ``b``) are written
everywhere, graph inputs included: a value computed from an input of size ``b`` says ``b``, and so
does the input (see :func:`~symshape.onnx.export.write_types`).
"""

from __future__ import annotations

from itertools import chain
from typing import Any

import onnx

from symshape import SymshapeError, Type
from symshape.onnx.export import GraphTypes, graphs_within, guard_pins, model_names, write_types
from symshape.onnx.export_simplify import simplify_types
from symshape.onnx.result import OnnxInferenceResult
from symshape.onnx.value import Value

__all__ = ["annotated_copy"]


def _written_names(g: onnx.GraphProto) -> list[str]:
    """The names of ``g``'s values: its inputs and initializers (a subgraph's inputs are written,
    the main graph's replace the value_info entries the model had for them), node outputs and
    outputs."""
    return [
        *(vi.name for vi in g.input),
        *(t.name for t in g.initializer),
        *(o for n in g.node for o in n.output if o),
        *(vi.name for vi in g.output),
    ]


def annotated_copy(res: OnnxInferenceResult) -> Any:
    """The model of ``res`` (an ``onnx.ModelProto`` copy) with the inferred types written into
    every graph it converted (see the module docstring)."""
    imp = res._importer
    scopes: dict[int, dict[str, Value]] = {id(imp.graph): imp.values}
    for g, values in imp.scopes:
        scopes[id(g)] = values
    values_of: dict[int, dict[str, Value]] = {}  # graph id -> written name -> value
    wanted: dict[int, Value] = {}
    for g in chain((imp.graph,), graphs_within(imp.graph)):
        scope = scopes.get(id(g))
        if scope is None:
            continue
        mine = values_of[id(g)] = {}
        for name in _written_names(g):
            v = scope.get(name)
            if v is not None:
                mine[name] = v
                wanted[id(v)] = v
    found: dict[int, Type] = {}
    for key, v in wanted.items():
        try:
            found[key] = res.value_type(v)
        except SymshapeError:  # (a value inference did not type)
            continue
    types, _ = simplify_types(found, [g.cond for g in res.guards])  # (min(16, seq) is seq)
    graph_types: dict[int, GraphTypes] = {
        gid: {name: (types[id(v)], v.elem_type) for name, v in mine.items() if id(v) in types}
        for gid, mine in values_of.items()
    }
    names = model_names(imp.dim_names.symbols, imp.dim_names.user_dims)
    pins = guard_pins(res.guards)  # (the model runs only with these values)
    return write_types(imp.model, graph_types, names, pins, imp.dim_names.user_dims)
