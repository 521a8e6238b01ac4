"""Which of a subgraph's inferred types hold at every run of it.

The importer converts a ``Loop`` body once, on the initial states, and an ``If`` branch, a
``Scan`` or ``SequenceMap`` body in a scope of its own (:attr:`Importer.scopes`). What a body's
types say holds at every run of it except where:

* a loop-carried value the body does not give back with the type it got (a state that grows) has
  other types at later iterations, and so has every value computed from it (*tainted* names);
* a symbol that a body's inputs have and the inputs of its node do not (the iteration number of a
  ``Loop``, a size of a sequence element at a position not known) changes from run to run of the
  body (*varying* symbols): a dimension over it is one size per run, not one for the whole run.

:func:`converted_graphs` finds both for every converted graph. ``infer_shapes``
(:mod:`~symshape.onnx.export_model`) writes neither (a dimension over a varying symbol is written
unknown); :meth:`OnnxInferenceResult.type_of` gives a tainted value the type it may have at any
iteration (:func:`any_iteration_type`) and keeps a varying symbol (the type holds for each of its
values: the iteration number ``j`` is one given symbol).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import onnx

import symshape as ss
from symshape import Dim, SymshapeError, TensorType, TupleType, Type
from symshape.onnx.value import Value

__all__ = [
    "BodyGraph",
    "Scope",
    "ValueTypes",
    "converted_graphs",
    "any_iteration_type",
    "changing_values",
    "unvarying",
    "written_names",
]

Scope = Mapping[str, Value]


@dataclass(frozen=True)
class BodyGraph:
    """A converted graph to write: its proto, the scopes of its conversions (the last one last),
    the node that holds it (None for the main graph), the symbols that vary from run to run of it
    and the names whose types do."""

    g: onnx.GraphProto
    scopes: list[Scope]
    owner: onnx.NodeProto | None
    varying: frozenset[Dim]
    tainted: frozenset[str]  # (names not written: computed from a loop-carried value that changes)


def written_names(g: onnx.GraphProto) -> list[str]:
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


class ValueTypes:
    """The inferred type of each importer value, asked once (None where inference has none)."""

    def __init__(self, value_type: Callable[[Value], Type]) -> None:
        self._value_type = value_type
        self.found: dict[int, Type | None] = {}
        self.values: dict[int, Value] = {}

    def of(self, v: Value | None) -> Type | None:
        if v is None:
            return None
        key = id(v)
        if key not in self.found:
            self.values[key] = v
            try:
                self.found[key] = self._value_type(v)
            except SymshapeError:  # (a value inference did not type)
                self.found[key] = None
        return self.found[key]

    def of_names(self, scope: Scope, names: Iterable[str]) -> list[Type | None]:
        return [self.of(scope.get(n)) for n in names]


def _changing(body: onnx.GraphProto, scope: Scope, types: ValueTypes) -> set[str]:
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


def converted_graphs(
    g: onnx.GraphProto,
    conversions: Mapping[int, list[Scope]],
    types: ValueTypes,
    owner: onnx.NodeProto | None = None,
    varying: frozenset[Dim] = frozenset(),
) -> Iterator[BodyGraph]:
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
    yield BodyGraph(g, scopes, owner, varying, frozenset(tainted))
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
            yield from converted_graphs(sub, conversions, types, n, varying | frozenset(inner - outer))


def unvarying(t: Type, varying: frozenset[Dim]) -> Type:
    """``t`` with each dimension that mentions a symbol of ``varying`` made unknown."""
    if not varying or not isinstance(t, TensorType) or not isinstance(t.shape, tuple):
        return t
    if not any(d.symbols & varying for d in t.shape):
        return t
    return TensorType(tuple(ss.parse_dim("?") if d.symbols & varying else d for d in t.shape), t.dtype)


def changing_values(
    graph: onnx.GraphProto,
    values: Scope,
    scopes: Sequence[tuple[onnx.GraphProto, Scope]],
    value_type: Callable[[Value], Type],
) -> set[int]:
    """The values (by ``id``) of the ``Loop`` bodies whose types change from one iteration to the
    next (the tainted names of every conversion of a body). ``values`` is the main graph's scope,
    ``scopes`` the importer's (every subgraph conversion)."""
    if not scopes:
        return set()
    conversions: dict[int, list[Scope]] = {id(graph): [values]}
    for g, vals in scopes:
        conversions.setdefault(id(g), []).append(vals)
    out: set[int] = set()
    for body in converted_graphs(graph, conversions, ValueTypes(value_type)):
        for name in body.tainted:
            out.update(id(v) for v in (scope.get(name) for scope in body.scopes) if v is not None)
    return out


def any_iteration_type(t: Type) -> Type:
    """What a value of type ``t`` (its first iteration's) computed from a changing loop-carried
    value may be at any iteration: a tensor of its dtype and a rank not known; anything else, the
    top type."""
    if isinstance(t, TensorType):
        return ss.Tensor(None, t.dtype)
    return ss.ObjectType()
