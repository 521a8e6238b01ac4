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
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import onnx

import symshape as ss
from symshape import Dataflow, Diagnostic, Dim, Expr, Function, TensorType, Type, Var
from symshape.encoding.values import VALUE_DTYPES
from symshape.errors import INVALID_ARGUMENT, SymshapeError
from symshape.ir.expr import operands
from symshape.onnx.attrs import sparse_value, tensor_value
from symshape.onnx.context import (
    CONTROL_FLOW,
    CORE_OP,
    DTYPE,
    SEQUENCE,
    UNSUPPORTED_OP,
    Cause,
    ConversionError,
    NodeContext,
    Unsupported,
    Value,
)
from symshape.onnx.dtypes import to_dtype
from symshape.onnx.errors import UNSUPPORTED_OP_CODE, Note
from symshape.onnx.folding import FOLD_LIMIT, fold
from symshape.onnx.registry import REGISTRY, ConverterDef, canonical_domain
from symshape.onnx.spans import OnnxSpan, node_what
from symshape.relations.values import constant_type
from symshape.solver.solve import gc_paused

__all__ = ["Importer", "Issue", "CONST_LIMIT", "DTYPE_STAND_IN", "PROBE_TIMEOUT_MS", "load_model"]

#: Initializers and ``Constant`` values with at most this many elements keep their values.
CONST_LIMIT: Final = 1 << 16
#: The name of the parameter whose unknown dtype a value of an element type symshape does not have
#: takes (a ``Cast`` to ``float8e4m3fn``): ``Tensor[(), ?]``, added only when a model needs it.
DTYPE_STAND_IN: Final = "unknown_dtype"
#: The Z3 timeout of the inference a converter's question about a type runs (see ``_probe``).
PROBE_TIMEOUT_MS: Final = 200

_CONTROL: Final = frozenset({"If", "Loop", "Scan", "SequenceMap"})
#: operators whose subgraphs the importer converts (their nodes are named and checked up front)
_SUBGRAPH_OPS: Final = frozenset({"If", "Scan"})
_SEQUENCE_OPS: Final = frozenset(
    """SequenceAt SequenceConstruct SequenceEmpty SequenceErase SequenceInsert SequenceLength
    SplitToSequence ConcatFromSequence Optional OptionalGetElement OptionalHasElement""".split()
)
#: operators without converter because symshape lacks an operator for them
_CORE_OPS: Final[frozenset[str]] = frozenset()
_STRING_OPS: Final = frozenset({"ImageDecoder"})


@dataclass(frozen=True)
class Issue:
    """A node the importer could not convert (or found wrong): its diagnostic, and the cause when
    it is unsupported (None for an error in the model)."""

    diagnostic: Diagnostic
    cause: Cause | None
    op_type: str
    nodes: tuple[str, ...]


def load_model(model_or_path: Any) -> tuple[onnx.ModelProto, str]:
    """The model and its label (the path as given, or the graph's name)."""
    if isinstance(model_or_path, onnx.ModelProto):
        name = model_or_path.graph.name or "onnx"
        return model_or_path, name
    if isinstance(model_or_path, (str, bytes)) or hasattr(model_or_path, "__fspath__"):
        path = model_or_path.decode() if isinstance(model_or_path, bytes) else str(model_or_path)
        try:
            model = onnx.load(path)
        except FileNotFoundError:
            raise SymshapeError(INVALID_ARGUMENT, f"no such ONNX file: {path}") from None
        except Exception as e:  # protobuf's DecodeError and friends
            raise SymshapeError(INVALID_ARGUMENT, f"{path} is not an ONNX model: {e}") from None
        return model, path
    raise SymshapeError(
        INVALID_ARGUMENT,
        f"expected an onnx.ModelProto or a path, got {type(model_or_path).__name__}",
    )


_IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


class Importer:
    """Converts one model; :meth:`run` builds the function (see the module docstring)."""

    def __init__(
        self,
        model: onnx.ModelProto,
        label: str = "onnx",
        dims: Mapping[str, Any] | None = None,
        timeout_ms: int = 2000,
    ) -> None:
        self.model = model
        self.graph = model.graph
        self.label = label
        self.timeout_ms = timeout_ms
        self.opsets: dict[str, int] = {}
        for o in model.opset_import:
            self.opsets[canonical_domain(o.domain)] = int(o.version)
        if "" not in self.opsets and model.ir_version >= 3:
            self.opsets[""] = 1
        self.user_dims: dict[str, Dim] = {}
        for k, v in (dims or {}).items():
            if not isinstance(k, str):
                raise SymshapeError(INVALID_ARGUMENT, f"dims keys must be dim_param names, got {k!r}")
            try:
                self.user_dims[k] = ss.parse_dim(str(v)) if isinstance(v, int) else v
            except SymshapeError:
                raise
            if not isinstance(self.user_dims[k], Dim):
                raise SymshapeError(
                    INVALID_ARGUMENT, f"dims[{k!r}] must be a symshape Dim or an int, got {v!r}"
                )
        self.symbols: dict[str, Dim] = {}
        self.values: dict[str, Value] = {}  # the values in scope
        self.named: dict[str, Value] = {}  # every value defined, subgraphs included
        self.params: list[Var] = []
        self._scopes: list[list[tuple[Var, Expr]]] = [[]]
        self._node_ids: dict[tuple[Any, ...], str] | None = None  # by _key, built when needed
        self.missing: set[tuple[Any, ...]] = set()
        # per node (by id, the node object kept alive): its name for reports and converter; protobuf
        # may hand out a new wrapper for the same node, then the key (_key) finds it
        self._info: dict[int, tuple[onnx.NodeProto, str, ConverterDef | None]] = {}
        self._cdefs: dict[tuple[str, str], ConverterDef | None] = {}
        self._types: dict[tuple[tuple[int, ...], str], Type] = {}
        self._unbound: list[tuple[str, Expr, OnnxSpan]] = []
        self.issues: list[Issue] = []
        self.position = 0
        self.declared: dict[str, onnx.TypeProto] = {}
        for vi in list(self.graph.value_info) + list(self.graph.output):
            if vi.type.HasField("tensor_type"):
                self.declared[vi.name] = vi.type
        self._probed: dict[int, Type] = {}
        self._probed_upto = -1
        self.probes = 0
        self.folded = 0
        self._fresh = 0
        self._dtype_stand_in: Var | None = None
        self.function: Function | None = None

    @property
    def bindings(self) -> list[tuple[Var, Expr]]:
        """The bindings of the graph being converted (a subgraph's while one is)."""
        return self._scopes[-1]

    def _all_bindings(self) -> list[tuple[Var, Expr]]:
        return [b for scope in self._scopes for b in scope]

    def define(self, v: Value) -> Value:
        self.values[v.name] = v
        self.named[v.name] = v
        return v

    # -- places -----------------------------------------------------------------------------------
    def span(self, what: str) -> OnnxSpan:
        self.position += 1
        return OnnxSpan.at(self.label, self.position, what)

    # -- dimensions and types ---------------------------------------------------------------------
    def symbol(self, name: str) -> Dim:
        """The dimension of a ``dim_param``: the caller's, else one symbol per name."""
        hit = self.symbols.get(name)
        if hit is not None:
            return hit
        if name in self.user_dims:
            d = self.user_dims[name]
        elif _IDENT.fullmatch(name):
            d = ss.dim(name)
        else:
            d = self._expression_dim(name)
        self.symbols[name] = d
        return d

    def _expression_dim(self, text: str) -> Dim:
        """A ``dim_param`` that is not an identifier: an expression over symbols (as
        :func:`infer_shapes` writes them, ``2*N``), else a symbol named after it."""
        names = {m for m in _IDENT.findall(text)}
        try:
            env = {n: self.symbol(n) for n in names}
            return ss.parse_dim(text, env)
        except SymshapeError:
            safe = re.sub(r"\W", "_", text)
            if not safe or not (safe[0].isalpha() or safe[0] == "_"):
                safe = "d_" + safe
            return ss.dim(safe)

    def fresh_symbol(self, hint: str) -> Dim:
        base = re.sub(r"\W", "_", hint) or "d"
        while True:
            self._fresh += 1
            name = f"{base}_{self._fresh}"
            if name not in self.symbols:
                d = ss.dim(name, min=0)
                self.symbols[name] = d
                return d

    def tensor_type(self, shape: tuple[int, ...], dtype: str) -> Type:
        """``Tensor[shape, dtype]`` for a constant shape (types are immutable: one per shape)."""
        key = (shape, dtype)
        t = self._types.get(key)
        if t is None:
            t = self._types[key] = ss.Tensor(shape, dtype)
        return t

    def type_from_proto(self, tp: onnx.TypeProto, what: str) -> tuple[Type, int]:
        """A declared ONNX type as a symshape type, with the ONNX element type."""
        if not tp.HasField("tensor_type"):
            kind = tp.WhichOneof("value") or "unknown"
            raise Unsupported(SEQUENCE, f"{what} has a {kind.replace('_type', '')} type")
        tt = tp.tensor_type
        dtype = to_dtype(tt.elem_type)
        if not tt.HasField("shape"):
            return ss.Tensor(None, dtype), int(tt.elem_type)
        dims: list[Dim | int] = []
        for d in tt.shape.dim:
            if d.HasField("dim_value"):
                if d.dim_value < 0:
                    dims.append(ss.parse_dim("?"))
                else:
                    dims.append(int(d.dim_value))
            elif d.HasField("dim_param") and d.dim_param:
                dims.append(self.symbol(d.dim_param))
            else:
                dims.append(ss.parse_dim("?"))
        return ss.Tensor(tuple(dims), dtype), int(tt.elem_type)

    def type_of_value(self, v: Value) -> Type | None:
        """``v``'s type: known without inference, else inferred from the program so far."""
        if v.type is not None:
            return v.type
        hit = self._probed.get(id(v.expr))
        if hit is not None:
            return hit
        if self._probed_upto == self._program_size():
            return None
        self._probe()
        return self._probed.get(id(v.expr))

    def value_of_value(self, v: Value) -> np.ndarray[Any, Any] | None:
        """``v``'s shape value as an int64 array when inference knows every entry as a constant
        (``Shape`` of a tensor whose shape is static only after inference), else None."""
        t = self.type_of_value(v)
        if not isinstance(t, TensorType) or t.value is None:
            return None
        entries = (t.value,) if isinstance(t.value, Dim) else t.value
        if not all(d is not None and d.is_constant for d in entries):
            return None
        arr = np.array([int(d) for d in entries if d is not None], dtype=np.int64)
        return arr.reshape(()) if isinstance(t.value, Dim) else arr

    def _probe(self) -> None:
        """Infer the program converted so far and remember every bound variable's type. Only the
        types matter here (guards and errors are reported by the final inference): Z3 gets a
        short timeout, so a hard condition costs the probe little."""
        self.probes += 1
        bindings = self._all_bindings()
        self._probed_upto = self._program_size()
        exprs: list[Expr] = [v for v, _ in bindings] + [e for _, e, _ in self._unbound]
        if not exprs:
            return
        prog = Function(list(self.params), Dataflow(bindings, ss.Tuple(exprs)))
        try:
            res = ss.infer(prog, timeout_ms=min(self.timeout_ms, PROBE_TIMEOUT_MS))
        except SymshapeError:
            return
        for v in exprs:
            try:
                t = res.type_of(v)
            except SymshapeError:
                continue
            self._probed[id(v)] = t

    def _program_size(self) -> int:
        return sum(len(b) for b in self._scopes) + len(self._unbound)

    # -- the walk ---------------------------------------------------------------------------------
    def run(self) -> Function:
        with gc_paused():  # like inference: many small acyclic objects, collections only cost
            return self._run()

    def _run(self) -> Function:
        g = self.graph
        init_names = {t.name for t in g.initializer}
        constant_inits = self.model.ir_version < 4
        for vi in g.input:
            if vi.name in init_names and constant_inits:
                continue
            if vi.name in self.values:
                continue
            self._add_input(vi, init_names)
        for t in g.initializer:
            if t.name in self.values:
                continue
            self._add_initializer(t)
        for t in g.sparse_initializer:
            if t.values.name not in self.values:
                self._add_constant(t.values.name, sparse_value(t), "sparse initializer")
        self._name_nodes(g, "")
        self._missing_converters(g)
        outs = self._convert_graph(g)
        body: Expr = outs[0] if len(outs) == 1 else ss.Tuple(outs)
        self._bind_unreached(body)
        fn = Function(list(self.params), Dataflow(list(self.bindings), body))
        fn.span = OnnxSpan.at(self.label, 0, f"graph '{g.name}'" if g.name else "graph")
        self.function = fn
        return fn

    def _convert_graph(self, g: onnx.GraphProto) -> list[Expr]:
        """Convert ``g``'s nodes into the current scope; the expressions of its outputs."""
        for node in self._ordered_nodes(g):
            self._convert(node)
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
            return self._convert_graph(g)
        finally:
            self.values = outer

    def subgraph_block(self, g: onnx.GraphProto) -> Expr:
        """A subgraph as one expression: a dataflow block whose value is its output (or the tuple
        of its outputs). Its inputs (``Loop``/``Scan`` bodies) are not supported here."""
        outer = dict(self.values)
        self._scopes.append([])
        try:
            outs = self._convert_graph(g)
            bindings = self.bindings
        finally:
            self._scopes.pop()
            self.values = outer
        body: Expr = outs[0] if len(outs) == 1 else ss.Tuple(outs)
        return Dataflow(bindings, body) if bindings else body

    def subgraph_apply(self, g: onnx.GraphProto, inputs: Sequence[Expr]) -> list[Expr]:
        """Subgraph ``g`` with its graph inputs bound to ``inputs`` (one iteration of a ``Scan``
        body): the expressions of its outputs, parts of one dataflow block."""
        if len(inputs) != len(g.input):
            raise ConversionError(
                INVALID_ARGUMENT.code, f"the body has {len(g.input)} inputs, the node gives {len(inputs)}"
            )
        outer = dict(self.values)
        self._scopes.append([])
        try:
            for vi, e in zip(g.input, inputs):
                self.define(Value(vi.name, e))
            outs = self._convert_graph(g)
            bindings = self.bindings
        finally:
            self._scopes.pop()
            self.values = outer
        tup = ss.Tuple(outs)
        block: Expr = Dataflow(bindings, tup) if bindings else tup
        return [ss.TupleGetItem(block, i) for i in range(len(outs))]

    def _add_input(self, vi: onnx.ValueInfoProto, init_names: set[str]) -> None:
        what = f"graph input '{vi.name}'"
        span = self.span(what)
        try:
            t, et = self.type_from_proto(vi.type, what)
        except Unsupported as u:
            self._unsupported(u.cause, f"{what}: {u.detail}", span, "", ())
            self._stand_in(vi.name, what, span=span)
            return
        v = ss.var(vi.name, t)
        v.span = span
        self.params.append(v)
        self.define(Value(vi.name, v, None, t, et))

    def _add_initializer(self, t: onnx.TensorProto) -> None:
        shape = tuple(t.dims)
        et = t.data_type
        arr: np.ndarray[Any, Any] | None = None
        n = math.prod(shape)
        if t.data_location != _EXTERNAL and n <= (CONST_LIMIT if et in _INT_TYPES else FOLD_LIMIT):
            try:
                arr = tensor_value(t)
            except Exception:
                arr = None
        dtype = to_dtype(et)
        what = f"initializer '{t.name}'"
        if dtype is None:
            self._typed_stand_in(t.name, ss.Tensor(shape, None), et, self.span(what))
            return
        if arr is not None and arr.dtype != _NP_DTYPES.get(dtype):
            arr = arr.astype(dtype, copy=False)
        self._bind_constant(t.name, shape, dtype, arr, what, et)

    def _bind_constant(
        self,
        name: str,
        shape: tuple[int, ...],
        dtype: str,
        arr: np.ndarray[Any, Any] | None,
        what: str,
        et: int,
    ) -> None:
        """A constant, bound to a variable annotated with its type (so that an error involving it
        has a note naming it) when a converter first uses it as an expression: a constant whose
        value only is read never enters the program."""
        self.position += 1
        position = self.position

        base = self.tensor_type(shape, dtype)

        def typ() -> Type:
            t = base
            if arr is not None and len(shape) <= 1 and dtype in VALUE_DTYPES and isinstance(t, TensorType):
                t = constant_type(t, arr)  # a small int tensor: its entries are its value
            return t

        def make() -> Expr:
            span = OnnxSpan.at(self.label, position, what)
            c = ss.Constant(shape=shape, dtype=dtype)
            c.data = arr  # what ss.const(arr) makes, without inspecting the array again
            c.span = span
            v = ss.var(name, value.type)
            v.span = span
            self._scopes[0].append((v, c))  # the outermost graph: in scope everywhere
            return v

        value = self.define(Value(name, None, arr, None, et, _make=make, _type_fn=typ))

    def _add_constant(self, name: str, arr: np.ndarray[Any, Any], kind: str) -> None:
        what = f"{kind} '{name}'"
        dtype = str(arr.dtype)
        if dtype not in _DTYPES:
            self._typed_stand_in(name, ss.Tensor(arr.shape, None), 0, self.span(what))
            return
        self._bind_constant(name, tuple(arr.shape), dtype, arr, what, 0)

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

    def _ordered_nodes(self, g: onnx.GraphProto) -> list[onnx.NodeProto]:
        """``g``'s nodes in graph order, or topologically sorted when the graph is not (stable)."""
        nodes = list(g.node)
        known = set(self.values)
        ok = True
        for n in nodes:
            if any(i and i not in known for i in n.input):
                ok = False
                break
            known.update(o for o in n.output if o)
        if ok:
            return nodes
        producers: dict[str, int] = {}
        for k, n in enumerate(nodes):
            for o in n.output:
                if o:
                    producers[o] = k
        deps = [
            {producers[i] for i in n.input if i in producers and producers[i] != k}
            for k, n in enumerate(nodes)
        ]
        done: set[int] = set()
        order: list[int] = []
        while len(order) < len(nodes):
            progress = False
            for k in range(len(nodes)):
                if k not in done and deps[k] <= done:
                    done.add(k)
                    order.append(k)
                    progress = True
            if not progress:  # a cycle: keep graph order for the rest
                order.extend(k for k in range(len(nodes)) if k not in done)
                break
        return [nodes[k] for k in order]

    def _name_nodes(self, g: onnx.GraphProto, prefix: str) -> None:
        """Names for reports: the node's own, else ``#k`` by position (``#3/then#0`` inside the
        ``then_branch`` of node 3); the branches of ``If`` nodes are named too."""
        for k, n in enumerate(g.node):
            ident = n.name or f"{prefix}#{k}"
            self._info[id(n)] = (n, ident, self.converter_for(n))
            if n.op_type in _SUBGRAPH_OPS and canonical_domain(n.domain) == "":
                for a in n.attribute:
                    if a.type == onnx.AttributeProto.GRAPH:
                        self._name_nodes(a.g, f"{ident}/{a.name.replace('_branch', '')}")

    def _all_nodes(self, g: onnx.GraphProto) -> list[onnx.NodeProto]:
        out: list[onnx.NodeProto] = []
        for n in g.node:
            out.append(n)
            if n.op_type in _SUBGRAPH_OPS and canonical_domain(n.domain) == "":
                for a in n.attribute:
                    if a.type == onnx.AttributeProto.GRAPH:
                        out.extend(self._all_nodes(a.g))
        return out

    def _node_info(self, node: onnx.NodeProto) -> tuple[str, ConverterDef | None]:
        """The node's name for reports and its converter."""
        hit = self._info.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1], hit[2]
        if self._node_ids is None:
            self._node_ids = {_key(n): ident for n, ident, _ in self._info.values()}
        return self._node_ids.get(_key(node), node.name), self.converter_for(node)

    def what(self, node: onnx.NodeProto) -> str:
        return node_what(self._node_info(node)[0], node.op_type, canonical_domain(node.domain))

    def _missing_converters(self, g: onnx.GraphProto) -> None:
        """Nodes whose operator has no converter (``If`` branches included), reported before
        conversion starts: one error per operator type naming every node that uses it."""
        nodes = self._all_nodes(g)
        missing: dict[tuple[str, str], list[onnx.NodeProto]] = {}
        for n in nodes:
            if self._node_info(n)[1] is None:
                missing.setdefault((canonical_domain(n.domain), n.op_type), []).append(n)
        for (dom, op), ns in missing.items():
            self.missing.update(_key(n) for n in ns)
            opset = self.opsets.get(dom)
            op_name = f"{dom}.{op}" if dom else op
            names = [self._node_info(n)[0] for n in ns]
            if REGISTRY.knows(dom, op):
                detail = f"{op_name} of opset {opset} is older than every supported version"
            elif opset is None and dom:
                detail = f"the model does not import the domain '{dom}' of {op_name}"
            else:
                detail = f"no converter for the ONNX operator {op_name}"
            count = f"used by {len(ns)} nodes" if len(ns) > 1 else "used by 1 node"
            shown = ", ".join(f"'{x}'" for x in names[:8]) + (", ..." if len(names) > 8 else "")
            cause = UNSUPPORTED_OP
            if not dom and op in _CONTROL:
                cause = CONTROL_FLOW
            elif not dom and op in _SEQUENCE_OPS:
                cause = SEQUENCE
            elif not dom and op in _STRING_OPS:
                cause = DTYPE
            elif not dom and op in _CORE_OPS:
                cause = CORE_OP
            notes = tuple(Note(f"{op_name} node", OnnxSpan.at(self.label, 0, self.what(n))) for n in ns[1:8])
            d = Diagnostic(
                UNSUPPORTED_OP_CODE,
                f"unsupported: {detail} ({count}: {shown})",
                OnnxSpan.at(self.label, 0, self.what(ns[0])),
                notes,
            )
            self.issues.append(Issue(d, cause, op_name, tuple(names)))

    def converter_for(self, node: onnx.NodeProto) -> ConverterDef | None:
        dom = canonical_domain(node.domain)
        key = (dom, node.op_type)
        try:
            return self._cdefs[key]
        except KeyError:
            pass
        opset = self.opsets.get(dom)
        cdef = None if opset is None else REGISTRY.lookup(dom, node.op_type, opset)
        self._cdefs[key] = cdef
        return cdef

    def _convert(self, node: onnx.NodeProto) -> None:
        ident, cdef = self._node_info(node)
        dom = canonical_domain(node.domain)
        what = node_what(ident, node.op_type, dom)
        span = self.span(what)
        if cdef is None:
            self._stand_ins(node, span)
            return
        inputs: list[Value | None] = []
        for name in node.input:
            if not name:
                inputs.append(None)
                continue
            v = self.values.get(name)
            if v is None:
                self._error(
                    "undefined-var",
                    f"{what}: input '{name}' is not produced by any node, graph input or initializer",
                    span,
                )
                self._stand_ins(node, span)
                return
            inputs.append(v)
        ctx = NodeContext(self, node, self.opsets[dom], span, inputs)
        folded = fold(node, ctx, [None if v is None else v.const for v in inputs], self.opsets.get("", 1))
        if folded is not None:
            self.folded += 1
            self._bind(node, [None if a is None else ss.const(a) for a in folded], inputs, span)
            return
        try:
            result = cdef.fn(ctx)
            outs = self._outputs(node, result)
        except Unsupported as u:
            self._unsupported(
                u.cause,
                f"{what}: {u.detail}",
                span,
                node.op_type,
                (ident,),
            )
            self._stand_ins(node, span)
            return
        except ConversionError as e:
            self._error(e.code, f"{what}: {e.message}", span)
            self._stand_ins(node, span)
            return
        except SymshapeError as e:
            self._error(e.code, f"{what}: {e.message}", span)
            self._stand_ins(node, span)
            return
        except Exception as e:  # a malformed node the converter did not foresee: never a crash
            self._error(INVALID_ARGUMENT.code, f"{what}: cannot convert: {type(e).__name__}: {e}", span)
            self._stand_ins(node, span)
            return
        self._bind(node, outs, inputs, span)
        for i, et in ctx.elem_types.items():  # dtypes symshape does not have: the ONNX type stays
            if i < len(node.output) and node.output[i] in self.named:
                self.named[node.output[i]].elem_type = et

    def _outputs(self, node: onnx.NodeProto, result: Any) -> list[Expr | None]:
        if isinstance(result, Expr):
            outs: list[Expr | None] = [result]
        else:
            outs = list(result)
        wanted = [o for o in node.output]
        if len(outs) < len(wanted):
            outs.extend([None] * (len(wanted) - len(outs)))
        for i, name in enumerate(wanted):
            if name and outs[i] is None:
                raise Unsupported(UNSUPPORTED_OP, f"output {i} ('{name}') is not supported")
        return outs[: len(wanted)]

    def _bind(
        self,
        node: onnx.NodeProto,
        outs: Sequence[Expr | None],
        inputs: Sequence[Value | None],
        span: OnnxSpan,
    ) -> None:
        existing = {id(v._expr) for v in inputs if v is not None and v._expr is not None}
        _stamp(outs, existing, span)
        top = len(self._scopes) == 1
        for name, e in zip(node.output, outs):
            if not name or e is None:
                continue
            if top and type(e) is ss.Call:
                # the expression itself stands for the value (no variable): a node output of the
                # outermost graph that the outputs do not reach is bound at the end
                self._unbound.append((name, e, span))
                self.define(Value(name, e))
                continue
            # a constant's variable is annotated with its type (and value), so that notes name it
            known = (
                constant_type(e.type, e.data)
                if isinstance(e, ss.Constant) and isinstance(e.type, TensorType)
                else None
            )
            var = ss.var(name, known) if known is not None else Var(name)
            var.span = span
            self.bindings.append((var, e))
            const = e.data if isinstance(e, ss.Constant) and e.data is not None else None
            self.define(Value(name, var, _small(const), known, 0))

    def _bind_unreached(self, body: Expr) -> None:
        """Bind the node outputs the graph's outputs do not depend on (so that they are inferred,
        and their errors reported, too)."""
        if not self._unbound:
            return
        reached: set[int] = set()
        stack: list[Expr] = [body] + [e for _, e in self.bindings]
        while stack:
            e = stack.pop()
            if id(e) in reached:
                continue
            reached.add(id(e))
            stack.extend(operands(e))
        for name, e, span in self._unbound:
            if id(e) not in reached:
                var = Var(name)
                var.span = span
                self.bindings.append((var, e))
                reached.add(id(e))  # (stack empty: e's operands need no walk, e is bound now)

    def _stand_ins(self, node: onnx.NodeProto, span: OnnxSpan) -> None:
        for o in node.output:
            if o:
                self._stand_in(o, f"output '{o}' of {span.what}", span)

    # -- constant folding -------------------------------------------------------------------------
    # -- reports ----------------------------------------------------------------------------------
    def _unsupported(
        self, cause: Cause, message: str, span: OnnxSpan, op: str, nodes: tuple[str, ...]
    ) -> None:
        d = Diagnostic(UNSUPPORTED_OP_CODE, f"unsupported: {message} ({cause.phrase})", span)
        self.issues.append(Issue(d, cause, op, nodes))

    def _error(self, code: str, message: str, span: OnnxSpan) -> None:
        self.issues.append(Issue(Diagnostic(code, message, span), None, "", ()))


_EXTERNAL: Final = onnx.TensorProto.EXTERNAL
_NP_DTYPES: Final = {
    d: np.dtype(d)
    for d in "bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 float32 float64 complex64 "
    "complex128".split()
}
_TP = onnx.TensorProto
#: element types whose initializers keep their values up to CONST_LIMIT elements (the others: up to
#: FOLD_LIMIT, enough for what converters read of them: scales, bounds, fill values)
_INT_TYPES: Final = frozenset(
    {_TP.INT64, _TP.INT32, _TP.INT16, _TP.INT8, _TP.UINT64, _TP.UINT32, _TP.UINT16, _TP.UINT8, _TP.BOOL}
)
_DTYPES: Final = frozenset(
    "bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 bfloat16 float32 float64 "
    "complex64 complex128".split()
)


def _key(n: onnx.NodeProto) -> tuple[Any, ...]:
    """A node's identity (protobuf hands out new wrapper objects, so ``id`` is not one); outputs
    are unique in a well-formed graph."""
    return (n.op_type, n.name, tuple(n.input), tuple(n.output))


def _small(a: Any) -> np.ndarray[Any, Any] | None:
    if isinstance(a, np.ndarray) and a.size <= CONST_LIMIT:
        return a
    return None


def _stamp(outs: Sequence[Expr | None], existing: set[int], span: OnnxSpan) -> None:
    """Give every expression a converter built the node's span (stopping at its inputs)."""
    stack: list[Expr] = [e for e in outs if e is not None]
    seen: set[int] = set()
    while stack:
        e = stack.pop()
        if (
            id(e) in existing
            or id(e) in seen
            or isinstance(e, (Var, Function))
            or isinstance(e.span, OnnxSpan)
        ):
            continue
        seen.add(id(e))
        e.span = span
        if isinstance(e, ss.Call):
            stack.extend(a for a in e.args)
        elif isinstance(e, ss.Tuple):
            stack.extend(e.fields)
        elif isinstance(e, ss.TupleGetItem):
            stack.append(e.tuple_value)
