"""``infer_shapes``: a copy of the model with every value's inferred type written into it.

Like ``onnx.shape_inference.infer_shapes``: ``graph.value_info`` gets one entry per node output
(replacing the entries it had for those values) and the graph outputs get their types. Constant
dimensions are written as ``dim_value``; symbolic ones as ``dim_param`` in symshape's canonical
syntax (``N``, ``2*N``, ``(H - 1)//2 + 1``), which :func:`symshape.onnx.from_onnx` reads back; an
unknown dimension is left empty and an unknown rank leaves the shape out. A ``dim_param`` of the
model that is not a name symshape can print (``seq len``, ``N:0``: read as the symbols ``seq_len``,
``N_0``) is written as the model spelled it where a dimension is that symbol, as onnx propagates it
(:func:`model_names`); inside an expression the symbol's name stands for it (``2*seq_len``). A
symbol a guard pins to one value (``N == 1``: the model runs only then) is written as that value
(:func:`guard_pins`), as onnx writes what it knows from a constant.

>>> from symshape.onnx.export import dim_proto_text
>>> import symshape as ss
>>> n = ss.dim("N")
>>> dim_proto_text(2 * n + 1), dim_proto_text(ss.parse_dim("7"))
('2*N + 1', 7)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from itertools import chain
from typing import Any

import onnx

from symshape import Dim, Guard, SymshapeError, TensorType, Type
from symshape.encoding.dim_atoms import Atom
from symshape.encoding.dim_expr import DimLike
from symshape.errors import INVALID_ARGUMENT
from symshape.onnx.dtypes import to_elem_type
from symshape.solver.simplify import pinned_symbol

__all__ = [
    "write_types",
    "dim_proto_text",
    "set_type",
    "model_names",
    "guard_pins",
    "graphs_within",
    "GraphTypes",
]

_NO_NAMES: Mapping[str, str] = {}
Pins = Mapping[Dim | Atom | str, DimLike]
_NO_PINS: Pins = {}
_NO_GIVEN: Mapping[str, Dim] = {}
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def model_names(symbols: Mapping[str, Dim], given: Mapping[str, Dim]) -> dict[str, str]:
    """The model's own ``dim_param`` for each symbol the importer named otherwise: ``symbols`` maps
    each ``dim_param`` to its dimension, ``given`` the caller's (kept as they are). A symbol two
    spellings map to, or one the model also names itself, keeps its own name; a symbol named
    after another ``dim_param`` (``a_b_2`` for the model's ``a_b`` beside its ``a.b``) is written
    as its own.

    >>> import symshape as ss
    >>> model_names({"seq len": ss.dim("seq_len"), "N": ss.dim("N"), "N + 1": ss.parse_dim("N + 1")}, {})
    {'seq_len': 'seq len'}
    >>> model_names({"a.b": ss.dim("a_b"), "a_b": ss.dim("a_b_2")}, {})
    {'a_b': 'a.b', 'a_b_2': 'a_b'}
    """
    out: dict[str, str] = {}
    clash: set[str] = set()
    for name, d in symbols.items():
        text = str(d)
        if name in given or text == name or not text.isidentifier() or symbols.get(text) == d:
            continue
        if text in out:
            clash.add(text)
        out[text] = name
    return {k: v for k, v in out.items() if k not in clash}


def guard_pins(guards: Sequence[Guard]) -> Pins:
    """The symbols the guards pin to one value (a guard ``N == 1``), with that value."""
    out: dict[Dim | Atom | str, DimLike] = {}
    for g in guards:
        pin = pinned_symbol(g.cond)
        if pin is not None:
            out[pin[0]] = pin[1]
    return out


def dim_proto_text(d: Dim, names: Mapping[str, str] = _NO_NAMES) -> int | str | None:
    """``dim_value`` (an int), ``dim_param`` (a str), or None for an unknown dimension; ``names``
    maps a symbol's name to the model's (:func:`model_names`)."""
    if d.is_constant:
        return int(d)
    text = str(d)
    if "?" in text:
        return None
    return names.get(text, text)


def set_type(
    vi: onnx.ValueInfoProto,
    t: Type,
    elem_type: int,
    names: Mapping[str, str] = _NO_NAMES,
    pins: Pins = _NO_PINS,
) -> bool:
    """Write ``t`` into ``vi`` (keeping ``elem_type`` when symshape's dtype is unknown), with the
    pinned symbols' values (:func:`guard_pins`) substituted; False when ``t`` is not a tensor
    type. A constant dimension outside int64 (``dim_value``'s type) is a ``SymshapeError``
    (``invalid-argument``): a model whose sizes overflow cannot be written."""
    if not isinstance(t, TensorType):
        return False
    if pins and t.ndim is not None:
        t = t.subs(pins)
    tt = vi.type.tensor_type
    et = to_elem_type(t.dtype) or elem_type or tt.elem_type
    tt.elem_type = et
    if t.ndim is None:
        tt.ClearField("shape")
        return True
    tt.ClearField("shape")
    shape = tt.shape
    shape.SetInParent()  # (a scalar's shape has no dims but is there: its rank 0 is known)
    for d in t.dims:
        dp = shape.dim.add()
        v = dim_proto_text(d, names)
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


#: what is written for the values of one graph: name -> (type, ONNX element type or 0)
GraphTypes = Mapping[str, tuple[Type, int]]


def graphs_within(g: onnx.GraphProto) -> Iterator[onnx.GraphProto]:
    """The graphs of ``g``'s nodes' attributes (``If``'s branches, ``Loop``'s and ``Scan``'s
    bodies), each followed by its own, in node order."""
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield a.g
                yield from graphs_within(a.g)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for sub in a.graphs:
                    yield sub
                    yield from graphs_within(sub)


def write_types(
    model: onnx.ModelProto,
    graph_types: Mapping[int, GraphTypes],
    names: Mapping[str, str] = _NO_NAMES,
    pins: Pins = _NO_PINS,
    given: Mapping[str, Dim] = _NO_GIVEN,
) -> onnx.ModelProto:
    """A copy of ``model`` with ``value_info`` and the outputs filled, in the main graph and in
    every subgraph: ``graph_types`` gives the types of a graph's values by the ``id`` of the
    graph (of ``model``: each kept alive by the caller); a graph it does not name (a branch never
    taken) is left as it is. ``names``: :func:`model_names`; ``pins``: :func:`guard_pins`;
    ``given``: the caller's dimensions for ``dim_param`` names (``dims={"N": b}``): every
    ``dim_param`` of the model so named is written as the caller's dimension, so that the graph
    inputs say what the values computed from them say."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    pairs = list(zip([model.graph, *graphs_within(model.graph)], [out.graph, *graphs_within(out.graph)]))
    for k, (orig, g) in enumerate(pairs):
        if given:
            _rename(g, given, names)
        typed = graph_types.get(id(orig))
        if typed is not None:
            _write_graph(g, typed, names, pins, subgraph=k > 0)
    return out


def _write_graph(
    g: onnx.GraphProto, typed: GraphTypes, names: Mapping[str, str], pins: Pins, subgraph: bool
) -> None:
    """``g``'s value_info of its node outputs (replacing the entries it had for the values of
    ``typed``) and its outputs written (:func:`_merge`: a dimension symshape does not know keeps
    the declared one); a subgraph's inputs (a body's) get the dimensions they do not declare
    (``subgraph``)."""
    inputs = {vi.name for vi in g.input} | {t.name for t in g.initializer}
    outputs = {vi.name for vi in g.output}
    produced = [o for n in g.node for o in n.output if o]
    keep: list[Any] = [vi for vi in g.value_info if vi.name not in typed]
    del g.value_info[:]
    g.value_info.extend(keep)
    for name in produced:
        if name in inputs or name in outputs or name not in typed:
            continue
        vi = onnx.ValueInfoProto()
        vi.name = name
        t, et = typed[name]
        if set_type(vi, t, et, names, pins):
            g.value_info.append(vi)
    for vi in g.output:
        hit = typed.get(vi.name)
        if hit is not None:
            _merge(vi, hit[0], hit[1], names, pins, ours_first=True)
    if subgraph:
        for vi in g.input:
            hit = typed.get(vi.name)
            if hit is not None:
                _merge(vi, hit[0], hit[1], names, pins, ours_first=False)


def _merge(
    vi: onnx.ValueInfoProto, t: Type, elem_type: int, names: Mapping[str, str], pins: Pins, ours_first: bool
) -> None:
    """``t`` written into ``vi`` over what it declares, as onnx merges what it infers: a dimension
    (or a shape) ``t`` leaves unknown keeps the declared one. ``ours_first`` (an output): a known
    dimension of ``t`` replaces the declared one, and ``t``'s shape a declared one of another rank;
    else (a body input) the declaration stays where it has something (its ``dim_param`` is the
    body's own name) and ``t`` fills the rest."""
    if vi.type.WhichOneof("value") not in (None, "tensor_type"):
        return  # (a sequence or optional: not a tensor)
    ours = onnx.ValueInfoProto()
    tt = vi.type.tensor_type
    if not set_type(ours, t, elem_type or tt.elem_type, names, pins):
        return
    mine = ours.type.tensor_type
    if mine.elem_type and (ours_first or not tt.elem_type):
        tt.elem_type = mine.elem_type
    if not mine.HasField("shape"):
        return
    if not tt.HasField("shape") or (ours_first and len(tt.shape.dim) != len(mine.shape.dim)):
        tt.shape.CopyFrom(mine.shape)
        return
    if len(tt.shape.dim) != len(mine.shape.dim):
        return
    for d, m in zip(tt.shape.dim, mine.shape.dim):
        if m.WhichOneof("value") is not None and (ours_first or d.WhichOneof("value") is None):
            d.CopyFrom(m)


def _rename(g: onnx.GraphProto, given: Mapping[str, Dim], names: Mapping[str, str]) -> None:
    """Every ``dim_param`` of ``g``'s inputs, outputs and value_info that ``given`` names written as
    the caller's dimension (a ``dim_value`` when it is a constant, empty when unknown)."""
    for vi in chain(g.input, g.output, g.value_info):
        if not vi.type.HasField("tensor_type"):
            continue
        for d in vi.type.tensor_type.shape.dim:
            if d.WhichOneof("value") != "dim_param" or d.dim_param not in given:
                continue
            v = dim_proto_text(given[d.dim_param], names)
            if isinstance(v, str):
                d.dim_param = v
            elif v is None:
                d.Clear()
            elif _INT64_MIN <= v <= _INT64_MAX:
                d.dim_value = v
