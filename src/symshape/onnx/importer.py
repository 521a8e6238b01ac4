"""The graph walk: an ONNX ``ModelProto`` becomes a symshape ``Function``.

* **Graph inputs** become parameters, annotated with their declared types: a ``dim_value`` is a
  constant, each distinct ``dim_param`` one symbol of that name (``dims={"N": n}`` maps a name to the
  caller's own symbol or to an int), an unnamed unknown dimension ``?``, a missing shape an unknown
  rank. An element type symshape has no dtype for gives an unknown dtype.
* **Initializers** become constants. Small ones (integer ones of at most :data:`CONST_LIMIT`
  elements, others of at most ``FOLD_LIMIT``) keep their values as numpy arrays, so a ``Reshape``
  target or ``Slice`` bounds are literal. An initializer enters the program (a constant bound to a
  variable annotated with its type) when a converter first uses it as an expression; one whose value
  only is read never does. In IR version 3 every initializer is also listed as an input and is a
  constant; from IR version 4 on, an input with an initializer is an overridable default and stays a
  parameter.
* **Nodes**, in graph order, go through their converters (:mod:`symshape.onnx.registry`), in one
  ``Dataflow`` block (ONNX operators are pure); the importer keeps every ONNX value's expression, so
  the result of inference answers ``type_of("value_name")``. An output of the outermost graph that is
  an operator call is that call itself (no variable: a graph is a DAG of calls), unless no graph
  output depends on it: then it is bound to a variable named after the value at the end, so that it
  is inferred (and its errors reported) too. Other outputs (constants, tuples, control flow, a
  subgraph's values) are bound to a variable named after the value. A node that computes
  sizes from constants is evaluated instead (:mod:`symshape.onnx.folding`), as are ``Shape`` and
  ``Size`` of a tensor whose shape is static: its outputs are constants with values.
* **Outputs**: the body is the single graph output, or a tuple of them.

Every expression a converter builds gets the node's :class:`~symshape.onnx.spans.OnnxSpan`, so
reports say ``model.onnx: node 'Reshape_12' (Reshape)``.

Nodes that cannot be converted are collected, not raised: operators without a converter are grouped
into one ``unsupported-op`` error per operator type naming every node (found before conversion
starts), and nodes a converter gives up on (a value computed at run time, a missing core operator)
get one error each saying why. Their outputs are stand-ins: parameters typed as the model declares
them (``value_info``), else with unknown rank and dtype, so the rest of the model is still inferred.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import numpy as np
import onnx

import symshape as ss
from symshape import Dataflow, Diagnostic, Expr, Function, Span, TensorType, Type, Var
from symshape.errors import INVALID_ARGUMENT, SymshapeError
from symshape.onnx.attrs import SPARSE_DENSE_MAX, sparse_value
from symshape.onnx.context import Cause, ConversionError, NodeContext, Unsupported, Value, node_outputs
from symshape.onnx.declared import DimNames
from symshape.onnx.dtypes import DTYPES, to_dtype
from symshape.onnx.errors import UNSUPPORTED_OP_CODE
from symshape.onnx.folding import FOLDABLE, FOLDED_WITHOUT_VALUES, fold_node
from symshape.onnx.graph import (
    Issue,
    NodeInfo,
    bind_unreached,
    dataflow,
    declared_types,
    load_model,
    missing_converter_issues,
    node_key,
    opsets_of,
    ordered_nodes,
    scan,
)
from symshape.onnx.lazy_constant import (
    CONST_LIMIT,
    ConstantHome,
    LazyConstant,
    add_initializers,
    own_initializers,
    static_tensor_type,
)
from symshape.onnx.probe import PROBE_TIMEOUT_MS, Probes
from symshape.onnx.registry import ConverterDef, ConverterTable, canonical_domain
from symshape.onnx.spans import OnnxSpan, node_what, stamp
from symshape.onnx.weights import Weights
from symshape.relations.values import constant_type
from symshape.solver.solve import gc_paused
from symshape.source import enter_span_scope, span_scope, span_scope_set, user_span

__all__ = ["Importer", "Issue", "CONST_LIMIT", "DTYPE_STAND_IN", "PROBE_TIMEOUT_MS", "load_model"]

#: The name of the parameter whose unknown dtype a value of an element type symshape does not have
#: takes (a ``Cast`` to ``float8e4m3fn``): ``Tensor[(), ?]``, added only when a model needs it.
DTYPE_STAND_IN: Final = "unknown_dtype"


class Importer:
    """Converts one model; :meth:`run` builds the function (see the module docstring)."""

    def __init__(
        self,
        model: onnx.ModelProto,
        label: str = "onnx",
        dims: Mapping[str, Any] | None = None,
        timeout_ms: int = 2000,
        base_dir: str | None = None,
    ) -> None:
        """``base_dir``: the folder of the model's file, where its external data is (None for a
        ``ModelProto`` given: its external data is as the caller loaded it; see
        :mod:`symshape.onnx.external`)."""
        self.model = model
        self.base_dir = base_dir
        self._files: dict[str, bool] = {}  # the external data files checked
        self.graph = model.graph
        self.label = label
        self._file = f"<{label}>"  # (the file field of the model's spans)
        self.timeout_ms = timeout_ms
        self.opsets = opsets_of(model)
        self.dim_names = DimNames(dims)
        self.values: dict[str, Value] = {}  # the values in scope
        self.named: dict[str, Value] = {}  # every value defined, subgraphs included
        #: each subgraph converted (the graph, kept alive: its id is its key) with its scope's
        #: values (outer ones included) at the end of its conversion, in the order converted
        self.scopes: list[tuple[onnx.GraphProto, dict[str, Value]]] = []
        self.params: list[Var] = []
        self._scopes: list[list[tuple[Var, Expr]]] = [[]]
        self._node_ids: dict[tuple[Any, ...], str] | None = None  # by node_key, built when needed
        self.missing: set[tuple[Any, ...]] = set()
        # per node (by id, the node object kept alive): its name for reports and converter; protobuf
        # may hand out a new wrapper for the same node, then the key (node_key) finds it
        self._info: dict[int, NodeInfo] = {}
        self._top: list[NodeInfo] = []  # the outermost graph's nodes
        self._converter = ConverterTable(self.opsets)  # (by domain and op_type)
        self._types: dict[tuple[tuple[int, ...], str], TensorType] = {}
        self._weights = Weights(self.tensor_type, self.define, base_dir)
        self._unbound: list[tuple[str, Expr, OnnxSpan]] = []
        self.issues: list[Issue] = []
        self.converted: list[tuple[NodeInfo, OnnxSpan, list[Value | None]]] = []  # (type checks)
        self.position = 0
        self.declared = declared_types(self.graph)
        self._probes = Probes()
        self.folded = 0
        #: Loops' iteration symbols bounded (to the Loop), Loops left unknown (NodeContext.iteration_symbol)
        self.iteration_symbols: dict[str, str] = {}
        self.unknown_iterations: frozenset[str] = frozenset()
        self._dtype_stand_in: Var | None = None
        self.function: Function | None = None
        self._outer: Span | None = None
        self._scope: Span | None = None  # the span scope the walk entered last

    @property
    def bindings(self) -> list[tuple[Var, Expr]]:
        """The bindings of the graph being converted (a subgraph's while one is)."""
        return self._scopes[-1]

    def define(self, v: Value) -> Value:
        self.values[v.name] = v
        self.named[v.name] = v
        return v

    def span(self, what: str) -> OnnxSpan:
        self.position += 1
        return OnnxSpan.at(self.label, self.position, what)

    # -- dimensions and types ---------------------------------------------------------------------
    def tensor_type(self, shape: tuple[int, ...], dtype: str) -> TensorType:
        """``Tensor[shape, dtype]`` for a constant shape (types are immutable: one per shape)."""
        key = (shape, dtype)
        t = self._types.get(key)
        if t is None:
            t = self._types[key] = static_tensor_type(shape, dtype)
        return t

    def type_from_proto(self, tp: onnx.TypeProto, what: str) -> tuple[Type, int]:
        return self.dim_names.type_from_proto(tp, what)

    def type_of_value(self, v: Value) -> Type | None:
        """``v``'s type: known without inference, else inferred from the program so far (a probe,
        :class:`~symshape.onnx.probe.Probes`, when the program grew since the last)."""
        if v.type is not None:
            return v.type
        return self._probes.type_of(v.expr, self.params, self._scopes, self._unbound, self.timeout_ms)

    # -- the walk ---------------------------------------------------------------------------------
    def run(self) -> Function:
        # like inference: many small acyclic objects, collections only cost. Every expression
        # built here would take the span of the same caller frame (the first outside symshape):
        # it is looked up once; a node's converter runs in a scope of the node's span
        self._outer = self._scope = user_span()
        with gc_paused(), span_scope(self._outer):
            return self._run()

    def _run(self) -> Function:
        g = self.graph
        inits = g.initializer[:]  # (a slice: iterating a repeated field ends in a costly IndexError)
        names = [t.name for t in inits]  # (protobuf fields cost an access each: read once)
        init_names = set(names)
        constant_inits = self.model.ir_version < 4
        values = self.values
        for vi in g.input[:]:
            name = vi.name
            if (constant_inits and name in init_names) or name in values:
                continue
            self._add_input(vi, name)
        self._add_initializers(zip(inits, names))
        for t in g.sparse_initializer:
            if t.values.name not in self.values:
                self._add_sparse(t)
        self._top = scan(g, "", self._converter, self._info)
        self._missing_converters()
        outs = self._convert_graph(g)
        body: Expr = outs[0] if len(outs) == 1 else ss.Tuple(outs)
        bind_unreached(self._unbound, body, self.bindings)
        fn = Function(list(self.params), dataflow(self.bindings, body))
        fn.span = OnnxSpan.at(self.label, 0, f"graph '{g.name}'" if g.name else "graph")
        self.function = fn
        # the per-node records are done with: released while the collector is paused, so that its
        # first collection does not walk them (a model has thousands); _node_info reads them again
        self._info, self._top, self._unbound = {}, [], []
        return fn

    def _convert_graph(self, g: onnx.GraphProto) -> list[Expr]:
        """Convert ``g``'s nodes into the current scope; the expressions of its outputs."""
        infos = self._top if g is self.graph else [self._info_of(n) for n in g.node]
        if g is not self.graph:  # a subgraph's own constants (shadowing outer values of their names)
            self._add_initializers(own_initializers(g, self.values))
        outer = self._scope
        try:
            # in graph order while every node's inputs are defined before it (as a rule: no
            # ordering pass); from the first that is not, in the order of ordered_nodes
            for k, info in enumerate(infos):
                if not self._convert(info):
                    for later in ordered_nodes(infos[k:], set(self.values)):
                        self._convert(later, in_order=True)
                    break
        finally:  # (the span scope of the last node converted is left)
            enter_span_scope(outer)
            self._scope = outer
        outs: list[Expr] = []
        for vi in g.output:
            v = self.values.get(vi.name)
            if v is None:
                self._error(
                    "undefined-var",
                    f"graph output '{vi.name}' is not produced by any node, input or initializer",
                    self.span(f"graph output '{vi.name}'"),
                )
                v = self._stand_in(vi.name, f"graph output '{vi.name}'")
            outs.append(v.expr)
        return outs

    def inline_subgraph(self, g: onnx.GraphProto) -> list[Expr]:
        """Convert a subgraph's nodes into the current scope (a branch taken for sure)."""
        outer = dict(self.values)
        try:
            outs = self._convert_graph(g)
            self.scopes.append((g, self.values))
            return outs
        finally:
            self.values = outer

    def subgraph_block(self, g: onnx.GraphProto) -> Expr:
        """A subgraph as one expression: a dataflow block whose value is its output (or the tuple
        of its outputs). Its inputs (``Loop``/``Scan`` bodies) are not supported here."""
        outs, bindings = self._in_scope(g, ())
        with span_scope(self._outer):  # (not the span of the node that has the subgraph)
            body: Expr = outs[0] if len(outs) == 1 else ss.Tuple(outs)
            return Dataflow(bindings, body) if bindings else body

    def subgraph_apply(self, g: onnx.GraphProto, inputs: Sequence[Expr]) -> list[Expr]:
        """Subgraph ``g`` with its graph inputs bound to ``inputs`` (one iteration of a ``Scan``
        body): the expressions of its outputs, parts of one dataflow block."""
        if len(inputs) != len(g.input):
            raise ConversionError(
                INVALID_ARGUMENT.code, f"the body has {len(g.input)} inputs, the node gives {len(inputs)}"
            )
        outs, bindings = self._in_scope(g, inputs)
        with span_scope(self._outer):  # (not the span of the node that has the subgraph)
            tup = ss.Tuple(outs)
            block: Expr = Dataflow(bindings, tup) if bindings else tup
            return [ss.TupleGetItem(block, i) for i in range(len(outs))]

    def _in_scope(
        self, g: onnx.GraphProto, inputs: Sequence[Expr]
    ) -> tuple[list[Expr], list[tuple[Var, Expr]]]:
        """Convert ``g`` in a scope of its own (its inputs bound to ``inputs``): the expressions of
        its outputs and its bindings."""
        outer = dict(self.values)
        self._scopes.append([])
        try:
            for vi, e in zip(g.input, inputs):
                self.define(Value(vi.name, e))
            outs = self._convert_graph(g)
            self.scopes.append((g, self.values))
            return outs, self.bindings
        finally:
            self._scopes.pop()
            self.values = outer

    def _add_input(self, vi: onnx.ValueInfoProto, name: str) -> None:
        what = f"graph input '{name}'"
        span = self.span(what)
        try:
            t, et = self.type_from_proto(vi.type, what)
        except Unsupported as u:
            self._unsupported(u.cause, f"{what}: {u.detail}", span, "", ())
            self._stand_in(name, what, span=span)
            return
        v = ss.var(name, t)
        v.span = span
        self.params.append(v)
        self.define(Value(name, v, None, t, et))

    def _add_initializers(self, inits: Iterable[tuple[onnx.TensorProto, str]]) -> None:
        """The initializers (with their names) as constants, each as :meth:`_bind_constant` binds
        one, but a name defined already (see :func:`~symshape.onnx.lazy_constant.add_initializers`)."""
        home = ConstantHome(self.label, self._scopes[0], self.base_dir)
        values, named, types, stand_in = self.values, self.named, self._types, self._init_stand_in
        self.position = add_initializers(
            inits, values, named, types, self.tensor_type, home, self.position, self._files, stand_in
        )

    def _init_stand_in(self, name: str, shape: tuple[int, ...], et: int, position: int) -> None:
        span = OnnxSpan.at(self.label, position, f"initializer '{name}'")
        self._typed_stand_in(name, ss.Tensor(shape, None), et, span)

    def _bind_constant(
        self,
        name: str,
        shape: tuple[int, ...],
        dtype: str,
        arr: np.ndarray[Any, Any] | None,
        kind: str,
        et: int,
        source: onnx.TensorProto | None = None,
    ) -> None:
        """A constant (``kind``: what it is in the model, ``initializer``), bound to a variable
        annotated with its type (so that an error involving it has a note naming it) when a
        converter first uses it as an expression: a constant whose value only is read never
        enters the program. ``source``: the int64 vector initializer ``arr`` is decoded from
        when first read."""
        self.position += 1
        base = self._types.get((shape, dtype))
        if base is None:
            base = self.tensor_type(shape, dtype)
        at, outer, d = self.position, self._scopes[0], self.base_dir
        v = LazyConstant(name, shape, dtype, base, arr, kind, self.label, at, outer, et, source, d)
        self.values[name] = self.named[name] = v

    def _add_constant(self, name: str, arr: np.ndarray[Any, Any], kind: str) -> None:
        what = f"{kind} '{name}'"
        dtype = str(arr.dtype)
        if dtype not in DTYPES:
            self._typed_stand_in(name, ss.Tensor(arr.shape, None), 0, self.span(what))
            return
        self._bind_constant(name, tuple(arr.shape), dtype, arr, kind, 0)

    def _add_sparse(self, t: onnx.SparseTensorProto) -> None:
        """A sparse initializer: a constant; a value of its type past SPARSE_DENSE_MAX elements."""
        what, et, typ = f"sparse initializer '{t.values.name}'", t.values.data_type, ss.Tensor(None, None)
        try:
            if math.prod(t.dims) <= SPARSE_DENSE_MAX:
                return self._add_constant(t.values.name, sparse_value(t, self.base_dir), "sparse initializer")
            typ = ss.Tensor(tuple(t.dims), to_dtype(et))
        except SymshapeError as e:  # malformed
            self._error(e.code, e.message, self.span(what))
        self._typed_stand_in(t.values.name, typ, et, self.span(what))

    def dtype_stand_in(self) -> Expr:
        """The parameter :data:`DTYPE_STAND_IN` (``Tensor[(), ?]``, added on first use): what a
        value of an element type symshape does not have takes its unknown dtype from."""
        if self._dtype_stand_in is None:
            v = ss.var(DTYPE_STAND_IN, ss.Tensor((), None))
            v.span = OnnxSpan.at(self.label, 0, "an element type symshape does not have")
            self.params.append(v)
            self._dtype_stand_in = v
        return self._dtype_stand_in

    def _typed_stand_in(self, name: str, t: Type, et: int, span: OnnxSpan) -> Value:
        """A parameter standing for a value symshape cannot build as an expression."""
        v = ss.var(name, t)
        v.span = span
        self.params.append(v)
        return self.define(Value(name, v, None, t, et, synthetic=True))

    def _stand_in(self, name: str, what: str, span: OnnxSpan | None = None) -> Value:
        """A stand-in for an output that could not be converted: its declared type, else unknown."""
        t: Type = ss.Tensor(None, None)
        et = 0
        tp = self.declared.get(name)
        if tp is not None:
            try:
                t, et = self.type_from_proto(tp, what)
            except Unsupported:
                pass
        return self._typed_stand_in(name, t, et, span or self.span(what))

    def _info_of(self, node: onnx.NodeProto) -> NodeInfo:
        """What :func:`~symshape.onnx.graph.scan` read of ``node`` (read again when protobuf handed
        out a new wrapper for it)."""
        info = self._info.get(id(node))
        if info is not None and info.node is node:
            return info
        ident, cdef = self._node_info(node)
        op, dom = node.op_type, canonical_domain(node.domain)
        return NodeInfo(node, ident, cdef, node_what(ident, op, dom), node.input[:], node.output[:], op, dom)

    def _node_info(self, node: onnx.NodeProto) -> tuple[str, ConverterDef | None]:
        """The node's name for reports and its converter."""
        if not self._info and self.function is not None:  # (released at the end of run)
            scan(self.graph, "", self._converter, self._info)
        hit = self._info.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1], hit[2]
        if self._node_ids is None:
            self._node_ids = {node_key(i.node): i.ident for i in self._info.values()}
        return self._node_ids.get(node_key(node), node.name), self.converter_for(node)

    def what(self, node: onnx.NodeProto) -> str:
        return node_what(self._node_info(node)[0], node.op_type, canonical_domain(node.domain))

    def _missing_converters(self) -> None:
        """Nodes whose operator has no converter (``If`` branches included), reported before
        conversion starts: one error per operator type naming every node that uses it (picked by
        index: as a rule none of a model's thousands of nodes)."""
        none = [i for i in self._info.values() if i[2] is None]
        if not none:
            return
        keys, issues = missing_converter_issues(none, self.opsets, self.label)
        self.missing.update(keys)
        self.issues.extend(issues)

    def converter_for(self, node: onnx.NodeProto) -> ConverterDef | None:
        return self._converter(canonical_domain(node.domain), node.op_type)

    def _convert(self, info: NodeInfo, in_order: bool = False) -> bool:
        """Convert one node; False (and nothing done) when an input is not defined yet, unless
        ``in_order`` (the nodes come in an order that suits them: the input is an error)."""
        node, ident, cdef, what, names, outputs, op, dom = info
        values = self.values
        if op == "ConstantOfShape" and not dom and cdef is not None and len(names) == 1 and len(outputs) == 1:
            # a weight, as a rule (half the nodes of some models): made by Weights, else converted
            # below (the same position and span)
            shape = values.get(names[0]) if names[0] else None
            if shape is not None:
                at = self.position + 1
                w = self._weights.make(node, outputs[0], shape, self._file, at, what, self._scopes[-1])
                if w is not None:
                    self.position = at
                    name = outputs[0]
                    values[name] = self.named[name] = w
                    return True
        inputs: list[Value | None] = list(map(values.get, names))
        missing = ""
        if None in inputs or "" in values:  # (an omitted optional input, or a missing one)
            missing = next((n for n in names if n and n not in values), "")
            if missing and not in_order:
                return False
            inputs = [values.get(n) if n else None for n in names]
        self.position = at = self.position + 1
        span = _span(self._file, at, what)
        if cdef is None:
            self._stand_ins(outputs, span)
            return True
        if missing:
            self._error(
                "undefined-var",
                f"{what}: input '{missing}' is not produced by any node, graph input or initializer",
                span,
            )
            self._stand_ins(outputs, span)
            return True
        foldable = False
        if not dom:
            first = inputs[0] if inputs else None  # (folding needs every input's value known)
            foldable = op in _FOLDING and (
                first is None or first.const is not None or op in FOLDED_WITHOUT_VALUES
            )
        ctx = _context(self, node, self.opsets[dom], span, inputs, op, outputs)
        self.converted.append((info, span, inputs))
        # what the converter builds takes the node's span: the scope is left by the next node's,
        # and at the end of the graph (_convert_graph), not here (a context variable set costs);
        # the walk runs inside the scope run() entered, so the variable is set directly
        _scope_set(span)
        self._scope = span
        if foldable:
            folded = fold_node(node, ctx, inputs, self.opsets.get("", 1))
            if folded is not None:  # (evaluated: its outputs are constants)
                self.folded += 1
                self._bind(outputs, [None if a is None else ss.const(a) for a in folded], inputs, span)
                return True
        try:
            result = cdef.fn(ctx)
            name = outputs[0] if len(outputs) == 1 else ""
            if type(result) is _CALL and name and type(result.span) is OnnxSpan and len(self._scopes) == 1:
                # (the most common case of _bind_one, inline: a call of the outermost graph)
                self._unbound.append((name, result, span))
                self.values[name] = self.named[name] = _value_of(name, result)
                outs = None
            else:
                one = name and self._bind_one(name, result, span)
                outs = None if one else node_outputs(outputs, result)
        except Unsupported as u:
            self._unsupported(u.cause, f"{what}: {u.detail}", span, op, (ident,))
            self._stand_ins(outputs, span)
            return True
        except (ConversionError, SymshapeError) as e:
            self._error(e.code, f"{what}: {e.message}", span)
            self._stand_ins(outputs, span)
            return True
        except Exception as e:  # a malformed node the converter did not foresee: never a crash
            self._error(INVALID_ARGUMENT.code, f"{what}: cannot convert: {type(e).__name__}: {e}", span)
            self._stand_ins(outputs, span)
            return True
        if outs is not None:
            self._bind(outputs, outs, inputs, span)
        if ctx.elem_types:  # (as a rule none)
            for i, et in ctx.elem_types.items():  # dtypes symshape does not have: the type stays
                if i < len(outputs) and outputs[i] in self.named:
                    self.named[outputs[i]].elem_type = et
        return True

    def _bind_one(self, name: str, result: Any, span: OnnxSpan) -> bool:
        """The common case of ``_outputs`` and ``_bind``: the one output ``name`` of a node is an
        expression built in the node's span scope (``result``, or a list of it) and not a constant.
        Bound as ``_bind`` binds it (True), else nothing is done (False)."""
        e = result[0] if type(result) is list and len(result) == 1 else result
        cls = type(e)
        if cls is _CALL:
            if type(e.span) is not OnnxSpan:
                return False
            if len(self._scopes) == 1:
                self._unbound.append((name, e, span))
                self.values[name] = self.named[name] = Value.of(name, e)
                return True
        elif not isinstance(e, Expr) or isinstance(e, ss.Constant) or type(e.span) is not OnnxSpan:
            return False
        self._bind_var(name, e, span)
        return True

    def _bind_var(self, name: str, e: Expr, span: OnnxSpan) -> None:
        """``e`` bound to a variable named ``name`` (an output that is not a constant): made as
        ``Var(name)`` makes it (a name is a string), with the node's span."""
        var: Var = _new_var(Var)
        var.name, var.type_annotation, var.span = name, None, span
        self._scopes[-1].append((var, e))
        self.values[name] = self.named[name] = Value.of(name, var)

    def _bind(
        self,
        outputs: Sequence[str],
        outs: Sequence[Expr | None],
        inputs: Sequence[Value | None],
        span: OnnxSpan,
    ) -> None:
        for e in outs:  # (usually none: what the converter built has the node's span already)
            if e is not None and type(e.span) is not OnnxSpan:
                stamp(
                    outs, lambda: {id(v._expr) for v in inputs if v is not None and v._expr is not None}, span
                )
                break
        top = len(self._scopes) == 1
        for name, e in zip(outputs, outs):
            if not name or e is None:
                continue
            if top and type(e) is _CALL:
                # the expression itself stands for the value (no variable): a node output of the
                # outermost graph that the outputs do not reach is bound at the end
                self._unbound.append((name, e, span))
                self.define(Value.of(name, e))
                continue
            if not isinstance(e, ss.Constant):
                self._bind_var(name, e, span)
                continue
            # a constant's variable is annotated with its type (and value), so that notes name it
            known = constant_type(e.type, e.data) if isinstance(e.type, TensorType) else None
            var = ss.var(name, known) if known is not None else Var(name)
            var.span = span
            self.bindings.append((var, e))
            data = e.data
            small = data if isinstance(data, np.ndarray) and data.size <= CONST_LIMIT else None
            self.define(Value(name, var, small, known, 0))

    def _stand_ins(self, outputs: Sequence[str], span: OnnxSpan) -> None:
        for o in outputs:
            if o:
                self._stand_in(o, f"output '{o}' of {span.what}", span)

    # -- reports ----------------------------------------------------------------------------------
    def _unsupported(
        self, cause: Cause, message: str, span: OnnxSpan, op: str, nodes: tuple[str, ...]
    ) -> None:
        d = Diagnostic(UNSUPPORTED_OP_CODE, f"unsupported: {message} ({cause.phrase})", span)
        self.issues.append(Issue(d, cause, op, nodes))

    def _error(self, code: str, message: str, span: OnnxSpan) -> None:
        self.issues.append(Issue(Diagnostic(code, message, span), None, "", ()))


_CALL: Final = ss.Call
_new_var: Final[Any] = object.__new__
_context: Final = NodeContext.of
_span: Final = OnnxSpan.in_file
_value_of: Final = Value.of
_scope_set: Final = span_scope_set
#: the default domain's operators the importer tries to fold (see symshape.onnx.folding)
_FOLDING: Final = FOLDED_WITHOUT_VALUES | FOLDABLE
