"""The annotated copy :func:`symshape.onnx.infer_shapes` returns, made from a result of
:func:`symshape.onnx.infer`.

Every graph the importer converted is written: the main graph with the values of its scope, and
each subgraph (an ``If`` branch, a ``Scan``, ``Loop`` or ``SequenceMap`` body, each converted in a
scope of its own) with the values its scope had when its conversion ended
(:attr:`Importer.scopes`), so that two sibling branches that both name a value ``out`` each get
their own ``out``. A graph never converted (the branch an ``If`` with a constant condition does not
take) is left as it is. What a body's types say must hold at every run of it:

* a body converted more than once (a ``SequenceMap`` body per element) gets a value's type only
  where every conversion gave the same;
* a ``Loop`` body is converted once, on the initial states: a loop-carried value the body does not
  give back with the type it got (a state that grows) has other types at later iterations, and so
  has every value computed from it (:mod:`~symshape.onnx.body_types`): they are not written (nor
  the graphs of the nodes that compute them); the rest of the body is;
* a symbol that a body's inputs have and the inputs of its node do not (the iteration number of a
  ``Loop``, a size of a sequence element at a position not known) changes from run to run of the
  body: a dimension over it is written unknown (no ``dim_param``: one would name one size for the
  whole run), as onnx writes what it does not know. Graphs inside the body inherit such symbols.

A result the ground walk answered is written from its types (:func:`ground_copy`). All dimensions
are simplified together under the result's guards
(:mod:`symshape.onnx.export_simplify`) and written with the pinned symbols' values
(:func:`~symshape.onnx.export.guard_pins`). The caller's ``dims`` (``{"N": b}``: the model's ``N``
is the caller's ``b``) are written everywhere, graph inputs included (see
:func:`~symshape.onnx.export.write_types`).
"""

from __future__ import annotations

from typing import Any

from symshape.onnx.body_types import BodyGraph, Scope, ValueTypes, converted_graphs, unvarying, written_names
from symshape.onnx.export import GraphTypes, guard_pins, model_names, write_types
from symshape.onnx.export_simplify import simplify_types
from symshape.onnx.result import OnnxInferenceResult
from symshape.onnx.value import Value

__all__ = ["annotated_copy", "ground_copy"]


def _agreed(graph: BodyGraph, types: ValueTypes) -> dict[str, Value]:
    """The values of the graph's names whose type every conversion gave alike (by the last
    conversion's value)."""
    out: dict[str, Value] = {}
    last = graph.scopes[-1]
    for name in written_names(graph.g):
        if name in graph.tainted:
            continue
        v = last.get(name)
        t = types.of(v)
        if v is None or t is None:
            continue
        if all(types.of(s.get(name)) == t for s in graph.scopes[:-1]):
            out[name] = v
    return out


def ground_copy(res: OnnxInferenceResult) -> Any:
    """:func:`annotated_copy` of a result the ground walk answered (:mod:`symshape.onnx.ground`):
    one graph, no guard, every value's type from the walk."""
    g = res._ground
    assert g is not None
    entries = g.entries  # (what write_types writes or replaces: node and graph outputs, value_info)
    graph = g.model.graph
    written = [
        *g.names[g.first_output :],
        *(vi.name for vi in graph.output),
        *(vi.name for vi in graph.value_info),
    ]
    typed: GraphTypes = {name: (res.type_of(name), entries[name][0]) for name in written if name in entries}
    names = model_names(g.dim_names.symbols, g.dim_names.user_dims)
    # (graph is kept alive while written: its id is its key)
    return write_types(g.model, {id(graph): typed}, names, {}, g.dim_names.user_dims)


def annotated_copy(res: OnnxInferenceResult) -> Any:
    """The model of ``res`` (an ``onnx.ModelProto`` copy) with the inferred types written into
    every graph it converted (see the module docstring)."""
    imp = res._importer
    conversions: dict[int, list[Scope]] = {id(imp.graph): [imp.values]}
    for g, values in imp.scopes:  # (each graph kept alive by the importer: its id is its key)
        conversions.setdefault(id(g), []).append(values)
    types = ValueTypes(res.value_type)
    chosen = [(graph, _agreed(graph, types)) for graph in converted_graphs(imp.graph, conversions, types)]
    found = {key: t for key, t in types.found.items() if t is not None}
    simplified, _ = simplify_types(found, [g.cond for g in res.guards])  # (min(16, seq) is seq)
    graph_types: dict[int, GraphTypes] = {
        id(graph.g): {
            name: (unvarying(simplified[id(v)], graph.varying), v.elem_type) for name, v in values.items()
        }
        for graph, values in chosen
    }
    names = model_names(imp.dim_names.symbols, imp.dim_names.user_dims)
    pins = guard_pins(res.guards)  # (the model runs only with these values)
    return write_types(imp.model, graph_types, names, pins, imp.dim_names.user_dims)
