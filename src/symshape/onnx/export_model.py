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
  has every value computed from it (:func:`_tainted`): they are not written (nor the graphs of the
  nodes that compute them); the rest of the body is;
* a symbol that a body's inputs have and the inputs of its node do not (the iteration number of a
  ``Loop``, a size of a sequence element at a position not known) changes from run to run of the
  body: a dimension over it is written unknown (no ``dim_param``: one would name one size for the
  whole run), as onnx writes what it does not know. Graphs inside the body inherit such symbols.

All dimensions are simplified together under the result's guards
(:mod:`symshape.onnx.export_simplify`) and written with the pinned symbols' values
(:func:`~symshape.onnx.export.guard_pins`). The caller's ``dims`` (``{"N": b}``: the model's ``N``
is the caller's ``b``) are written everywhere, graph inputs included (see
:func:`~symshape.onnx.export.write_types`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import onnx

import symshape as ss
from symshape import Dim, SymshapeError, TensorType, TupleType, Type
from symshape.onnx.export import GraphTypes, guard_pins, model_names, write_types
from symshape.onnx.export_simplify import simplify_types
from symshape.onnx.result import OnnxInferenceResult
from symshape.onnx.value import Value

__all__ = ["annotated_copy"]

Scope = Mapping[str, Value]


@dataclass(frozen=True)
class _Graph:
    """A converted graph to write: its proto, the scopes of its conversions (the last one last),
    the node that holds it (None for the main graph), the symbols that vary from run to run of it
    and the names whose types do."""

    g: onnx.GraphProto
    scopes: list[Scope]
    owner: onnx.NodeProto | None
    varying: frozenset[Dim]
    tainted: frozenset[str]  # (names not written: computed from a loop-carried value that changes)


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


def _symbols(t: Type | None) -> set[Dim]:
    """The symbols ``t`` mentions (dimensions, a shape value, a range; a tuple's fields)."""
    out: set[Dim] = set()
    if isinstance(t, TupleType):
        for f in t.fields:
            out |= _symbols(f)
    elif isinstance(t, TensorType):
        dims: list[Dim | None] = list(t.shape) if isinstance(t.shape, tuple) else []
        v = t.value
        dims.extend(v if isinstance(v, tuple) else [v])
        dims.extend(t.range or ())
        for d in dims:
            if isinstance(d, Dim):
                out |= d.symbols
    return out


class _Types:
    """The inferred type of each importer value, asked once (None where inference has none)."""

    def __init__(self, res: OnnxInferenceResult) -> None:
        self._res = res
        self.found: dict[int, Type | None] = {}
        self.values: dict[int, Value] = {}

    def of(self, v: Value | None) -> Type | None:
        if v is None:
            return None
        key = id(v)
        if key not in self.found:
            self.values[key] = v
            try:
                self.found[key] = self._res.value_type(v)
            except SymshapeError:  # (a value inference did not type)
                self.found[key] = None
        return self.found[key]

    def of_names(self, scope: Scope, names: Iterable[str]) -> list[Type | None]:
        return [self.of(scope.get(n)) for n in names]


def _changing(body: onnx.GraphProto, scope: Scope, types: _Types) -> set[str]:
    """The loop-carried inputs of a ``Loop`` body (inputs 2...) that the body does not give back
    (outputs 1...) with the type they got: their types change from one iteration to the next."""
    ins = [vi.name for vi in body.input[2:]]
    outs = [vi.name for vi in body.output[1 : 1 + len(ins)]]
    out: set[str] = set()
    for i, name in enumerate(ins):
        t = types.of(scope.get(name))
        if t is None or i >= len(outs) or types.of(scope.get(outs[i])) != t:
            out.add(name)
    return out


def _names_used(g: onnx.GraphProto) -> Iterator[str]:
    """The names ``g``'s nodes read, those of the graphs inside them included."""
    for n in g.node:
        yield from n.input
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from _names_used(a.g)


def _tainted(g: onnx.GraphProto, changing: set[str]) -> set[str]:
    """The names of ``g`` computed from ``changing`` (in graph order; a node with subgraphs is
    tainted by what they read too)."""
    out = set(changing)
    if not out:
        return out
    for n in g.node:
        reads = list(n.input)
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                reads.extend(_names_used(a.g))
        if out.intersection(reads):
            out.update(o for o in n.output if o)
    return out


def _graphs(
    g: onnx.GraphProto,
    conversions: Mapping[int, list[Scope]],
    types: _Types,
    owner: onnx.NodeProto | None = None,
    varying: frozenset[Dim] = frozenset(),
) -> Iterator[_Graph]:
    """The converted graphs within ``g`` (``g`` first), each with what varies from run to run of
    it; in a ``Loop`` body, the values computed from a loop-carried value whose type changes from
    one iteration to the next are left out, with the graphs of the nodes that compute them."""
    scopes = conversions.get(id(g))
    if not scopes:
        return
    last = scopes[-1]
    tainted: set[str] = set()
    if owner is not None and owner.op_type == "Loop" and not owner.domain:
        tainted = _tainted(g, set().union(*(_changing(g, s, types) for s in scopes)))
    yield _Graph(g, scopes, owner, varying, frozenset(tainted))
    for n in g.node:
        subs = [a.g for a in n.attribute if a.type == onnx.AttributeProto.GRAPH]
        if not subs or tainted.intersection(n.output):
            continue
        outer: set[Dim] = set()
        for t in types.of_names(last, [i for i in n.input if i]):
            outer |= _symbols(t)
        for sub in subs:
            inner: set[Dim] = set()
            for s in conversions.get(id(sub), ()):
                for t in types.of_names(s, [vi.name for vi in sub.input]):
                    inner |= _symbols(t)
            yield from _graphs(sub, conversions, types, n, varying | frozenset(inner - outer))


def _agreed(graph: _Graph, types: _Types) -> dict[str, Value]:
    """The values of the graph's names whose type every conversion gave alike (by the last
    conversion's value)."""
    out: dict[str, Value] = {}
    last = graph.scopes[-1]
    for name in _written_names(graph.g):
        if name in graph.tainted:
            continue
        v = last.get(name)
        t = types.of(v)
        if v is None or t is None:
            continue
        if all(types.of(s.get(name)) == t for s in graph.scopes[:-1]):
            out[name] = v
    return out


def _unvarying(t: Type, varying: frozenset[Dim]) -> Type:
    """``t`` with each dimension that mentions a symbol of ``varying`` made unknown."""
    if not varying or not isinstance(t, TensorType) or not isinstance(t.shape, tuple):
        return t
    if not any(d.symbols & varying for d in t.shape):
        return t
    return TensorType(tuple(ss.parse_dim("?") if d.symbols & varying else d for d in t.shape), t.dtype)


def annotated_copy(res: OnnxInferenceResult) -> Any:
    """The model of ``res`` (an ``onnx.ModelProto`` copy) with the inferred types written into
    every graph it converted (see the module docstring)."""
    imp = res._importer
    conversions: dict[int, list[Scope]] = {id(imp.graph): [imp.values]}
    for g, values in imp.scopes:  # (each graph kept alive by the importer: its id is its key)
        conversions.setdefault(id(g), []).append(values)
    types = _Types(res)
    chosen = [(graph, _agreed(graph, types)) for graph in _graphs(imp.graph, conversions, types)]
    found = {key: t for key, t in types.found.items() if t is not None}
    simplified, _ = simplify_types(found, [g.cond for g in res.guards])  # (min(16, seq) is seq)
    graph_types: dict[int, GraphTypes] = {
        id(graph.g): {
            name: (_unvarying(simplified[id(v)], graph.varying), v.elem_type) for name, v in values.items()
        }
        for graph, values in chosen
    }
    names = model_names(imp.dim_names.symbols, imp.dim_names.user_dims)
    pins = guard_pins(res.guards)  # (the model runs only with these values)
    return write_types(imp.model, graph_types, names, pins, imp.dim_names.user_dims)
