"""An ONNX graph's nodes as the importer walks them, and what it reports about them up front.

* :func:`load_model` (of :mod:`symshape.onnx.loading`) reads a model (a ``ModelProto`` or a path,
  without its external data) and names it for reports.
* :func:`scan` reads what the importer needs of each node once (:class:`NodeInfo`);
  :func:`ordered_nodes` gives a graph's nodes in graph order, or topologically sorted when the
  graph is not (stable); :func:`all_nodes` includes the nodes of the subgraphs the importer
  converts (:data:`SUBGRAPH_OPS`).
* :func:`reachable` gives the expressions a converted graph's outputs and bindings evaluate
  (but variables and constants).
* :func:`node_key` identifies a node (protobuf hands out new wrapper objects, so ``id`` does not).
* :func:`missing_converter_issues` is the ``unsupported-op`` report of the nodes whose operator has
  no converter: one :class:`Issue` per operator type naming every node that uses it, with the cause
  (control flow, sequences, an element type, ...).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter
from typing import Any, Final, NamedTuple

import onnx

import symshape as ss
from symshape import Dataflow, Diagnostic, Expr, Var
from symshape.ir.expr import operands
from symshape.ir.op import Op
from symshape.onnx.context import CONTROL_FLOW, CORE_OP, DTYPE, SEQUENCE, UNSUPPORTED_OP, Cause
from symshape.onnx.errors import UNSUPPORTED_OP_CODE, Note
from symshape.onnx.loading import load_model  # (re-exported: its home was here)
from symshape.onnx.registry import REGISTRY, ConverterDef, canonical_domain
from symshape.onnx.spans import OnnxSpan, node_what
from symshape.source import user_span

__all__ = [
    "opsets_of",
    "declared_types",
    "reachable",
    "bind_unreached",
    "dataflow",
    "Issue",
    "NodeInfo",
    "SUBGRAPH_OPS",
    "load_model",
    "node_key",
    "ordered_nodes",
    "scan",
    "all_nodes",
    "subgraphs",
    "missing_converter_issues",
]

#: operators whose subgraphs the importer converts (their nodes are named and checked up front)
SUBGRAPH_OPS: Final = frozenset({"If", "Loop", "Scan", "SequenceMap"})
_CONTROL: Final = frozenset({"If", "Loop", "Scan", "SequenceMap"})
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


class NodeInfo(NamedTuple):
    """What the importer reads from a node more than once (protobuf fields cost an access each):
    its name for reports and converter, ``what`` (``node 'Reshape_12' (Reshape)``), its input and
    output names, operator and canonical domain."""

    node: onnx.NodeProto
    ident: str
    cdef: ConverterDef | None
    what: str
    inputs: Sequence[str]
    outputs: Sequence[str]
    op_type: str
    domain: str


def node_key(n: onnx.NodeProto) -> tuple[Any, ...]:
    """A node's identity (protobuf hands out new wrapper objects, so ``id`` is not one); outputs
    are unique in a well-formed graph."""
    return (n.op_type, n.name, tuple(n.input), tuple(n.output))


def scan(
    g: onnx.GraphProto,
    prefix: str,
    converter: Callable[[str, str], ConverterDef | None],
    into: dict[int, NodeInfo],
) -> list[NodeInfo]:
    """What the importer reads of ``g``'s nodes, read from each node once (protobuf fields cost an
    access each): their :class:`NodeInfo`, in graph order. A node is named for reports by its own
    name, else ``#k`` by position after ``prefix`` (``#3/then#0`` inside the ``then_branch`` of node
    3); ``converter(domain, op_type)`` gives its converter. ``into`` gets every node's info by the
    node's ``id``, the nodes of the subgraphs the importer converts (:data:`SUBGRAPH_OPS`) included,
    in the order of :func:`all_nodes`."""
    mine: list[NodeInfo] = []
    plain: dict[str, ConverterDef | None] = {}  # the default domain's converters, by operator
    for k, n in enumerate(g.node[:]):  # (a slice: iterating a repeated field ends in an IndexError)
        op, dom = n.op_type, n.domain
        ident = n.name or f"{prefix}#{k}"
        if dom:
            dom = canonical_domain(dom)
            cdef = converter(dom, op)
            what = node_what(ident, op, dom)
        else:
            cdef = plain.get(op, _UNSEEN)
            if cdef is _UNSEEN:
                cdef = plain[op] = converter("", op)
            what = f"node '{ident}' ({op})"
        info = _new_info(NodeInfo, (n, ident, cdef, what, n.input[:], n.output[:], op, dom))
        mine.append(info)
        into[id(n)] = info
        if op in SUBGRAPH_OPS and not dom:
            for a in subgraphs(n):
                scan(a.g, f"{ident}/{a.name.replace('_branch', '')}", converter, into)
    return mine


_UNSEEN: Final[Any] = object()
#: the field descriptors of the messages the importer reads, kept alive: protobuf's upb backend
#: makes a repeated field's container with its descriptor object, found in its cache of live
#: objects, else made anew and freed with the container (a sixth of what reading a node's inputs
#: costs; a model's nodes, initializers and attributes read thousands of repeated fields)
_FIELDS: Final = tuple(
    f
    for m in (
        onnx.GraphProto,
        onnx.NodeProto,
        onnx.AttributeProto,
        onnx.TensorProto,
        onnx.ValueInfoProto,
        onnx.TypeProto,
        onnx.TypeProto.Tensor,
        onnx.TensorShapeProto,
        onnx.TensorShapeProto.Dimension,
    )
    for f in m.DESCRIPTOR.fields
)
#: ``NodeInfo(...)`` without the Python frame of the named tuple's ``__new__`` (one per node)
_new_info: Final = tuple.__new__


def ordered_nodes(infos: Sequence[NodeInfo], known: set[str]) -> Sequence[NodeInfo]:
    """The nodes of a graph (``infos``, in graph order) in graph order, or topologically sorted
    when the graph is not (stable); ``known``: the values defined before the graph's nodes
    (updated)."""
    known.add("")  # (an empty name is an omitted optional input or output)
    covers, update = known.issuperset, known.update
    for info in infos:
        if not covers(info.inputs):
            break
        update(info.outputs)
    else:
        return infos
    producers: dict[str, int] = {}
    for k, info in enumerate(infos):
        for o in info.outputs:
            if o:
                producers[o] = k
    deps = [
        {producers[i] for i in info.inputs if i in producers and producers[i] != k}
        for k, info in enumerate(infos)
    ]
    done: set[int] = set()
    order: list[int] = []
    while len(order) < len(infos):
        progress = False
        for k in range(len(infos)):
            if k not in done and deps[k] <= done:
                done.add(k)
                order.append(k)
                progress = True
        if not progress:  # a cycle: keep graph order for the rest
            order.extend(k for k in range(len(infos)) if k not in done)
            break
    return [infos[k] for k in order]


def reachable(roots: Iterable[Expr]) -> set[int]:
    """The ids of the expressions ``roots`` evaluate (operands of operands, ...), variables and
    constants left out (leaves: half of a model's expressions, never unbound)."""
    reached: set[int] = set()
    add = reached.add
    stack = list(roots)
    pop, extend = stack.pop, stack.extend
    call, var, constant, tget, op = ss.Call, ss.Var, ss.Constant, ss.TupleGetItem, Op
    while stack:
        e = pop()
        cls = type(e)
        if cls is var or cls is constant:
            continue
        i = id(e)
        if i in reached:
            continue
        add(i)
        if cls is call:
            if type(e.callee) is op:  # type: ignore[attr-defined]
                extend(e.args)  # type: ignore[attr-defined]  # (an operator's operands)
            else:
                extend(operands(e))
        elif cls is tget:
            stack.append(e.tuple_value)  # type: ignore[attr-defined]
        else:
            extend(operands(e))
    return reached


def bind_unreached(
    unbound: Sequence[tuple[str, Expr, OnnxSpan]], body: Expr, bindings: list[tuple[Var, Expr]]
) -> None:
    """Bind (in ``bindings``, to a variable named after the value) the node outputs of ``unbound``
    (a value's name, its call, the node's span) that ``body`` and the ``bindings`` do not
    evaluate (so that they are inferred, and their errors reported, too)."""
    if not unbound:
        return
    reached = reachable(chain((body,), map(_second, bindings)))
    for name, e, span in unbound:
        if id(e) not in reached:
            var = Var(name)
            var.span = span
            bindings.append((var, e))
            reached.add(id(e))  # (stack empty: e's operands need no walk, e is bound now)


def dataflow(bindings: Sequence[tuple[Var, Expr]], body: Expr) -> Dataflow:
    """``Dataflow(bindings, body)`` without the constructor's checks of each binding (a model's
    thousands, pairs of a variable and an expression by construction): the same fields."""
    d: Dataflow = _new(Dataflow)
    d.bindings, d.body, d.span = tuple(bindings), body, user_span()
    return d


_second: Final = itemgetter(1)
_new: Final[Any] = object.__new__


def subgraphs(n: onnx.NodeProto) -> list[onnx.AttributeProto]:
    """The graph attributes of a node whose subgraphs the importer converts (else none)."""
    if n.op_type not in SUBGRAPH_OPS or canonical_domain(n.domain) != "":
        return []
    return [a for a in n.attribute if a.type == onnx.AttributeProto.GRAPH]


def all_nodes(g: onnx.GraphProto) -> list[onnx.NodeProto]:
    """``g``'s nodes, each followed by the nodes of its converted subgraphs."""
    out: list[onnx.NodeProto] = []
    for n in g.node:
        out.append(n)
        for a in subgraphs(n):
            out.extend(all_nodes(a.g))
    return out


def _cause(dom: str, op: str) -> Cause:
    if not dom and op in _CONTROL:
        return CONTROL_FLOW
    if not dom and op in _SEQUENCE_OPS:
        return SEQUENCE
    if not dom and op in _STRING_OPS:
        return DTYPE
    if not dom and op in _CORE_OPS:
        return CORE_OP
    return UNSUPPORTED_OP


def missing_converter_issues(
    infos: Sequence[NodeInfo], opsets: Mapping[str, int], label: str
) -> tuple[set[tuple[Any, ...]], list[Issue]]:
    """The nodes whose operator has no converter (of ``infos``, the nodes in the order of
    :func:`all_nodes`), by :func:`node_key`, and one issue per operator type naming every node that
    uses it."""
    missing: dict[tuple[str, str], list[NodeInfo]] = {}
    for i in infos:
        if i.cdef is None:
            missing.setdefault((i.domain, i.op_type), []).append(i)
    keys: set[tuple[Any, ...]] = set()
    issues: list[Issue] = []
    for (dom, op), ns in missing.items():
        keys.update(node_key(i.node) for i in ns)
        opset = opsets.get(dom)
        op_name = f"{dom}.{op}" if dom else op
        names = [i.ident for i in ns]
        if REGISTRY.knows(dom, op):
            detail = f"{op_name} of opset {opset} is older than every supported version"
        elif opset is None and dom:
            detail = f"the model does not import the domain '{dom}' of {op_name}"
        else:
            detail = f"no converter for the ONNX operator {op_name}"
        count = f"used by {len(ns)} nodes" if len(ns) > 1 else "used by 1 node"
        shown = ", ".join(f"'{x}'" for x in names[:8]) + (", ..." if len(names) > 8 else "")
        spans = [OnnxSpan.at(label, 0, i.what) for i in ns]
        notes = tuple(Note(f"{op_name} node", s) for s in spans[1:8])
        d = Diagnostic(UNSUPPORTED_OP_CODE, f"unsupported: {detail} ({count}: {shown})", spans[0], notes)
        issues.append(Issue(d, _cause(dom, op), op_name, tuple(names)))
    return keys, issues


def opsets_of(model: onnx.ModelProto) -> dict[str, int]:
    """The model's opset version by canonical domain (no default domain's import: version 1 from IR
    version 3 on)."""
    out = {canonical_domain(o.domain): int(o.version) for o in model.opset_import}
    if "" not in out and model.ir_version >= 3:
        out[""] = 1
    return out


def declared_types(g: onnx.GraphProto) -> dict[str, onnx.TypeProto]:
    """The tensor types ``g``'s value_info and outputs declare, by value name (an output's last)."""
    return {vi.name: vi.type for vi in chain(g.value_info, g.output) if vi.type.HasField("tensor_type")}
