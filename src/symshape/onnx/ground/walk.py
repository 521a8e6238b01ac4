"""The ground walk: every value's element type and shape, node by node, without the program.

:func:`ground_types` reads the model once, in graph order: the graph inputs (each dimension a
``dim_value`` of at least 1 or a ``dim_param``, whose symbol, or the caller's dimension, must be at
least 1), the initializers (their shapes; an int64 vector's entries where a
rule reads them), then each node through its rule (:data:`RULES`, by operator type), which maps
the inputs' ``(element type, shape)`` pairs and the node's attributes to its outputs' pairs. Last,
every graph output must be produced and every declared type (graph outputs, ``value_info``) must be
the computed one.

Anything a rule does not settle outright raises :class:`Fallback`, and the model takes the full
path (the importer, inference, explained errors): an operator or domain without a rule, an opset
outside a rule's range, an attribute a rule does not read, an element type but ``float``,
``float16`` or ``double`` where a rule computes, element types the operator's schema does not
allow (:mod:`symshape.onnx.type_constraints`), a size of 0 anywhere (or a symbol that may be 0), a
condition on symbols (:mod:`symshape.onnx.ground.node`), a run-time value a rule would need, a size
that does not fit, a declared type that differs, nodes out of order, subgraphs, sparse or external
initializers. A ground answer is therefore only ever an ``ok`` with no guard, and the full path
gives the same types (``tests/onnx/test_onnx_ground_agrees.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import onnx

from symshape.encoding.dim_atoms import Sym
from symshape.encoding.dim_expr import Dim
from symshape.onnx.declared import DimNames
from symshape.onnx.ground.node import (
    FLOAT,
    FLOATS,
    KNOWN_TYPES,
    NEWEST,
    PLAIN_UNARY,
    RULES,
    Entry,
    Fallback,
    Node,
    Size,
)
from symshape.onnx.lazy_constant import raw_int64s
from symshape.onnx.type_constraints import schema_rule, violations
from symshape.solver.gc_pause import gc_paused

__all__ = ["GroundTypes", "ground_types"]


@dataclass(slots=True)
class GroundTypes:
    """The ground answer for a model: every value's name in the order the importer defines them
    (graph inputs, initializers, node outputs), its entry, the initializers of other than float
    types (a small int one's type carries its entries: made when asked, as the importer makes
    them), the model, the ``dim_param`` names' dimensions, and where in ``names`` the node outputs
    start."""

    names: list[str]
    entries: dict[str, Entry]
    int_inits: dict[str, onnx.TensorProto]
    model: onnx.ModelProto
    dim_names: DimNames
    first_output: int


_INT64: Final = onnx.TensorProto.INT64
_INT32: Final = onnx.TensorProto.INT32
_EXTERNAL: Final = onnx.TensorProto.EXTERNAL
_NONE: Final[frozenset[int]] = frozenset()
#: the unary operators without attributes (their rule, :func:`symshape.onnx.ground.elementwise._unary`,
#: inline in the walk)
_PLAIN: Final = frozenset(PLAIN_UNARY)
#: the attribute kinds a rule may read: FLOAT, INT, STRING, TENSOR, FLOATS, INTS
_KINDS: Final = frozenset({1, 2, 3, 4, 6, 7})


def _int_vector(t: onnx.TensorProto, n: int) -> tuple[int, ...]:
    """The entries of an int64 vector initializer of length ``n`` (stored in the model)."""
    raw = t.raw_data
    if raw:
        got = raw_int64s(raw, n)
        if got is None:
            raise Fallback
        return got
    data = t.int64_data[:]
    if len(data) != n:
        raise Fallback
    return tuple(data)


def _vector(
    name: str,
    vectors: dict[str, onnx.TensorProto],
    values: dict[str, tuple[int, ...]],
    entries: dict[str, Entry],
) -> tuple[int, ...]:
    """The entries of the int64 vector initializer ``name`` (read once, into ``values``)."""
    v = values.get(name)
    if v is None:
        v = values[name] = _int_vector(vectors[name], int(entries[name][1][0]))
    return v


def _weight(
    node: onnx.NodeProto,
    shape_name: str,
    vectors: dict[str, onnx.TensorProto],
    values: dict[str, tuple[int, ...]],
    entries: dict[str, Entry],
) -> Entry:
    """``ConstantOfShape`` of an int64 vector initializer (``shape_name``) filled with a float (its
    ``value`` attribute: one entry), or none (float zeros)."""
    if shape_name not in vectors:
        raise Fallback
    shape = _vector(shape_name, vectors, values, entries)
    for d in shape:
        if d < 1:
            raise Fallback
    attrs = node.attribute[:]
    if not attrs:
        return (1, shape)
    t = _value_tensor(attrs)
    et = t.data_type
    dims = tuple(t.dims[:])
    if et not in FLOATS or len(dims) > 1 or (dims and dims[0] != 1):
        raise Fallback
    _float_data(t, et, dims)  # (one entry, well formed: the full path reads it)
    return (et, shape)


def _value_tensor(attrs: list[onnx.AttributeProto]) -> onnx.TensorProto:
    """The tensor of a node whose one attribute is ``value`` (a TENSOR), else :class:`Fallback`."""
    if len(attrs) != 1:
        raise Fallback
    a = attrs[0]
    if a.name != "value" or a.type != 4 or a.ref_attr_name:
        raise Fallback
    return a.t


#: the bytes per entry of the float element types, and the field their entries are in otherwise
_FLOAT_DATA: Final = {1: (4, "float_data"), 10: (2, "int32_data"), 11: (8, "double_data")}


def _constant(
    node: onnx.NodeProto,
    out: str,
    int_inits: dict[str, onnx.TensorProto],
    vectors: dict[str, onnx.TensorProto],
    opset: int,
) -> Entry:
    """A ``Constant`` node's value tensor (its ``value`` attribute): a float tensor whose data has
    its size, or from opset 9 an int64 vector (a value rules read, entered in ``int_inits`` and
    ``vectors``)."""
    t = _value_tensor(node.attribute[:])
    et = t.data_type
    dims = tuple(t.dims[:])
    if 0 in dims or t.data_location == _EXTERNAL or t.HasField("segment"):
        raise Fallback
    if et == _INT64 and len(dims) == 1 and opset >= 9:
        _int_vector(t, dims[0])  # (well formed: the full path reads it at once)
        int_inits[out] = vectors[out] = t
        return (et, dims)
    _float_data(t, et, dims)
    return (et, dims)


def _float_data(t: onnx.TensorProto, et: int, dims: tuple[int, ...]) -> None:
    """Fall back unless ``t`` (``et``, ``dims``: its element type and dimensions, read already) is
    a float tensor stored in the model whose data has its size."""
    layout = _FLOAT_DATA.get(et)
    if layout is None or t.data_location == _EXTERNAL or t.HasField("segment"):
        raise Fallback
    count = 1
    for d in dims:
        count *= d
    raw = t.raw_data
    if (len(raw) != layout[0] * count) if raw else (len(getattr(t, layout[1])) != count):
        raise Fallback


def _attrs(attributes: list[onnx.AttributeProto]) -> dict[str, Any]:
    """A node's attributes by name: an INT an int, INTS a tuple of ints, STRING bytes, TENSOR the
    proto; a FLOAT or FLOATS one :data:`~symshape.onnx.ground.node.FLOAT` (no rule reads a float
    value, and ``1.0 == 1`` must not pass for an int)."""
    out: dict[str, Any] = {}
    for a in attributes:
        k = a.type
        if k not in _KINDS or a.ref_attr_name:
            raise Fallback
        name = a.name
        if name in out:
            raise Fallback
        if k == 2:
            out[name] = a.i
        elif k == 7:
            out[name] = tuple(a.ints[:])
        elif k == 1 or k == 6:
            out[name] = FLOAT
        elif k == 3:
            out[name] = a.s
        else:
            out[name] = a.t
    return out


def _declared(tp: onnx.TypeProto, entry: Entry) -> bool:
    """Whether a declared type says nothing against ``entry`` (an unknown dimension, an unset
    element type or shape are silent; a ``dim_param`` is not: the full path names it)."""
    if not tp.HasField("tensor_type"):
        return tp.WhichOneof("value") is None
    tt = tp.tensor_type
    et = tt.elem_type
    if et and et != entry[0]:
        return False
    if not tt.HasField("shape"):
        return True
    dims = tt.shape.dim[:]
    if len(dims) != len(entry[1]):
        return False
    for d, n in zip(dims, entry[1]):
        p = d.dim_param
        if p:  # (the same symbol: its name, the canonical text of the size)
            if type(n) is not Dim or str(n) != p:
                return False
        elif d.HasField("dim_value") and d.dim_value != n:
            return False
    return True


def ground_types(model: onnx.ModelProto, dims: Mapping[str, Any] | None = None) -> GroundTypes | None:
    """The ground answer for ``model`` (``dims``: the caller's dimensions of ``dim_param`` names,
    as :func:`symshape.onnx.infer` takes them), or None where the full path must answer (see the
    module docstring). Bad ``dims`` raise ``SymshapeError`` as the full path's."""
    names = DimNames(dims)
    try:
        with gc_paused():  # (as the importer: many small acyclic objects, collections only cost)
            return _walk(model, names)
    except (Fallback, IndexError, KeyError, ValueError, TypeError, OverflowError, ZeroDivisionError):
        # (a rule reads what the node has: an input or attribute missing is the full path's to
        # report)
        return None


def _symbol(names: DimNames, param: str) -> Size:
    """The size of a ``dim_param``: its symbol (or the caller's dimension), which must be at least
    1 (a constant: read as an int)."""
    d = names.symbol(param)
    if d.is_constant:
        n = int(d)
        if n < 1:
            raise Fallback
        return n
    atom = d.atom
    if not d.is_symbol or not isinstance(atom, Sym) or atom.min < 1:
        raise Fallback
    return d


def _walk(model: onnx.ModelProto, dim_names: DimNames) -> GroundTypes:
    opset = 0
    for o in model.opset_import[:]:
        if o.domain in ("", "ai.onnx"):
            if opset:
                raise Fallback
            opset = o.version
    if not 7 <= opset <= NEWEST or model.functions:
        raise Fallback
    g = model.graph
    if g.sparse_initializer:
        raise Fallback
    entries: dict[str, Entry] = {}
    names: list[str] = []
    inits = g.initializer[:]
    init_names = [t.name for t in inits]
    skip = set(init_names) if model.ir_version < 4 else set()
    for vi in g.input[:]:
        name = vi.name
        if name in skip or name in entries:
            continue
        if not name:  # (a node's input "" is an omitted one, never this)
            raise Fallback
        tp = vi.type
        if not tp.HasField("tensor_type"):
            raise Fallback
        tt = tp.tensor_type
        et = tt.elem_type
        if et not in KNOWN_TYPES or not tt.HasField("shape"):
            raise Fallback
        shape: list[Size] = []
        for d in tt.shape.dim[:]:
            n = d.dim_value
            if n < 1:
                p = d.dim_param
                if not p or n:
                    raise Fallback
                shape.append(_symbol(dim_names, p))
            else:
                shape.append(n)
        entries[name] = (et, tuple(shape))
        names.append(name)
    int_inits: dict[str, onnx.TensorProto] = {}
    vectors: dict[str, onnx.TensorProto] = {}
    if len(set(init_names)) != len(init_names):  # (two of one name: the full path's question)
        raise Fallback
    for t, name in zip(inits, init_names):
        if name in entries:
            continue
        et = t.data_type
        dims = tuple(t.dims[:])
        if et not in KNOWN_TYPES or t.data_location == _EXTERNAL or min(dims, default=1) < 1 or not name:
            raise Fallback
        if t.HasField("segment"):  # (its data the full path does not read)
            raise Fallback
        entries[name] = (et, dims)
        names.append(name)
        if et not in FLOATS:
            int_inits[name] = t
            if et == _INT64 and len(dims) == 1:
                vectors[name] = t
    values: dict[str, tuple[int, ...]] = {}
    first_output = len(names)
    get, rules = entries.get, RULES.get
    weights = opset >= 9
    typed: dict[tuple[str, tuple[int, ...], tuple[int, ...]], bool] = {}
    for node in g.node[:]:
        op = node.op_type
        ins = node.input[:]
        outs = node.output[:]
        dom = node.domain
        if dom and dom != "ai.onnx":
            raise Fallback
        if len(outs) == 1:
            out = outs[0]
            if not out or out in entries:
                raise Fallback
            if op == "ConstantOfShape" and weights and len(ins) == 1:
                # a weight, as a rule (half the nodes of some models): the rule, inline
                entries[out] = _weight(node, ins[0], vectors, values, entries)
                names.append(out)
                continue
            if op == "Constant" and not ins:
                entries[out] = _constant(node, out, int_inits, vectors, opset)
                names.append(out)
                continue
            if op in _PLAIN and len(ins) == 1 and not node.attribute:
                # (a plain unary operator: its rule, inline)
                e = get(ins[0])
                if e is None or e[0] not in FLOATS:
                    raise Fallback
                entries[out] = e
                names.append(out)
                continue
        r = rules(op)
        if r is None or opset < r[0] or not outs:
            raise Fallback
        args: list[Entry | None] = [get(n) if n else None for n in ins]
        if None in args:
            for n, a in zip(ins, args):
                if a is None and n:
                    raise Fallback  # (not defined yet: an order the full path sorts out, or an error)
        known: dict[int, tuple[int, ...]] = {}
        consts = _NONE
        if not int_inits.keys().isdisjoint(ins):
            consts = frozenset(i for i, n in enumerate(ins) if n in int_inits)
            for i, n in enumerate(ins):
                if n in vectors:
                    known[i] = _vector(n, vectors, values, entries)
        attrs = node.attribute[:]
        res = r[1](Node(op, args, known, consts, _attrs(attrs) if attrs else {}, len(outs), opset))
        if len(res) != len(outs):
            raise Fallback
        key = (op, tuple([0 if a is None else a[0] for a in args]), tuple([e[0] for e in res]))
        fits = typed.get(key)
        if (
            fits is None
        ):  # the schema's type constraints (Flatten-1: floats only), as the full path checks them
            schema = schema_rule("", op, opset)
            fits = typed[key] = schema is None or not violations(schema, key[1], key[2]).broken
        if not fits:
            raise Fallback
        for n, e in zip(outs, res):
            if not n or n in entries:
                raise Fallback
            entries[n] = e
            names.append(n)
    for vi in g.output[:]:
        out = get(vi.name)
        if out is None or not _declared(vi.type, out):
            raise Fallback
    for vi in g.value_info[:]:
        out = get(vi.name)
        if out is not None and not _declared(vi.type, out):
            raise Fallback
    return GroundTypes(names, entries, int_inits, model, dim_names, first_output)
