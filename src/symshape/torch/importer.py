"""The fx-graph walker: one symshape program per model (the layout of ``torch.fx.Interpreter``).

``graph.nodes`` are visited in order. A node dispatches on ``node.op``:

* ``placeholder``: a model input becomes a parameter of the program, annotated with the user's
  type (its span is the name in ``def forward``); in an exported program, placeholders that stand
  for parameters, buffers and constants become the parameter variables below;
* ``get_attr``: a parameter, buffer or constant tensor of the model;
* ``call_function``, ``call_method``, ``call_module``: the converter for the callable, the method
  name, or the module's class (:mod:`symshape.torch.registry`), called with the node's arguments
  (nodes replaced by their values);
* ``output``: the program's result (a tuple for several outputs).

Model parameters and buffers become program parameters too, named as the model's source spells
them (``self.fc2.weight``), annotated with their concrete shapes and located at the ``__init__``
line that defines them, so an error's notes read ``self.fc2.weight is annotated
Tensor[(10, 3136), float32]`` at ``self.fc2 = nn.Linear(3136, 10)``. Each converted node is bound
with ``Let`` to a variable named after the node; its expressions get the node's span.

A node the importer cannot convert gets one ``unsupported-op`` diagnostic (naming the call and
its line) and stands for a tensor of unknown rank and dtype, so the rest of the model is still
checked; uses that depend on it are not reported again. Nothing a model contains raises from here
except bad API input (a missing input type).
"""

from __future__ import annotations

import functools
import operator
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx

import symshape as ss
from symshape.encoding.values import RANGE_DTYPES, VALUE_DTYPES
from symshape.errors import INVALID_ARGUMENT
from symshape.relations.values import constant_type
from symshape.torch import convert as _convert  # noqa: F401  (registers the converters)
from symshape.torch.context import Cascade, Ctx, dtype_name, module_attr, scalar_dtype
from symshape.torch.dtype_facts import not_bool
from symshape.torch.export_sizes import EXPORT_SIZES, specialised_sizes
from symshape.torch.in_place import in_place_result
from symshape.torch.registry import lookup, target_name
from symshape.torch.spans import SPAN_META, SpanFinder, call_needles, pythonic_path, source_lines
from symshape.torch.values import (
    NeedsShapeValues,
    Opaque,
    Unsupported,
    static_shape,
    unsupported_diagnostic,
)

__all__ = ["Imported", "Importer", "ExportInfo"]

_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__))


@dataclass(frozen=True)
class ExportInfo:
    """What an ``ExportedProgram`` adds to its graph: which placeholders are parameters,
    buffers and constants, their tensors, and which outputs are the user's."""

    placeholder_targets: Mapping[str, str]  # placeholder name -> parameter/buffer/constant path
    tensors: Mapping[str, Any]  # path -> tensor
    user_inputs: tuple[str, ...]  # placeholder names of the user's inputs, in order
    user_outputs: tuple[int, ...] | None  # positions of the user's outputs among the graph's


@dataclass
class Imported:
    """The program built from a graph, and how its nodes map onto it."""

    program: ss.Function
    values: dict[str, Any]  # node name -> value (see symshape.torch.values)
    diagnostics: list[ss.Diagnostic]
    graph: torch.fx.Graph
    root: Any
    params: dict[str, ss.Var] = field(default_factory=dict)  # model path -> variable


class Importer:
    """Walks one fx graph (see the module docstring)."""

    def __init__(
        self,
        graph: torch.fx.Graph,
        root: Any,
        input_types: Mapping[str, ss.Type],
        *,
        classes: Mapping[str, type] | None = None,
        forward: Any = None,
        export: ExportInfo | None = None,
        constants: Mapping[str, Any] | None = None,
    ) -> None:
        self.graph = graph
        self.constants = dict(constants or {})  # placeholder -> a concrete argument's value
        self.root = root
        self.input_types = dict(input_types)
        self.export = export
        #: module path -> module (filled from named_modules, or per lookup)
        self._modules: dict[str, Any] = {}
        # every module of the root is known by its path: the module stacks of its graph (named
        # from the same named_modules) add nothing
        self._all_modules = classes is None and root is not None
        if self._all_modules:
            self._modules = dict(root.named_modules())
        if classes is None:
            classes = {name: type(m) for name, m in self._modules.items()}
        self.spans = SpanFinder(classes, _TORCH_DIR)
        self.forward_spans = self.spans.forward_args(forward) if forward is not None else {}
        self.forward_span = _def_span(forward)
        self.env: dict[str, Any] = {}
        self.bindings: list[tuple[ss.Var, ss.Expr]] = []
        self._bound: dict[int, ss.Expr] = {}  # a node's variable -> the expression it binds
        self.inputs: list[ss.Var] = []
        self.unknowns: list[ss.Var] = []
        self.params: dict[str, ss.Var] = {}
        self._param_none: set[str] = set()
        self.owned: set[int] = set()  # ids of expressions whose span is final
        self.diagnostics: list[ss.Diagnostic] = []
        self._unknown_of: dict[str, ss.Var] = {}
        self._ranks: dict[int, int] = {}  # id(var) -> rank torch recorded (exported programs)
        self._output: ss.Expr = ss.Tuple([])

    # -- entry ---------------------------------------------------------------------------------
    def run(self) -> Imported:
        # every expression built here gets its span from the graph (a node's, a parameter's
        # definition, forward's signature), never from the Python frames building it
        with ss.span_scope(None):
            return self._run()

    def _run(self) -> Imported:
        if not self._all_modules:
            for node in self.graph.nodes:
                self.spans.learn_module_stack(node.meta.get("nn_module_stack"))
        for node in self.graph.nodes:
            self._visit(node)
        body: ss.Expr = self._output
        for v, e in reversed(self.bindings):
            let = ss.Let(v, e, body)
            let.span = v.span
            body = let
        params = [*self.inputs, *self.unknowns, *self.params.values()]
        fn = ss.Function(params, body)
        fn.span = self.forward_span
        return Imported(fn, self.env, self.diagnostics, self.graph, self.root, dict(self.params))

    def _visit(self, node: torch.fx.Node) -> None:
        match node.op:
            case "placeholder":
                self.env[node.name] = self._placeholder(node)
            case "get_attr":
                self.env[node.name] = self._get_attr(node)
            case "call_function" | "call_method" | "call_module":
                value = self.env[node.name] = self._call(node)
                val = node.meta.get("val")
                if isinstance(value, ss.Var) and isinstance(val, torch.Tensor):
                    self._ranks[id(value)] = val.dim()
                elif isinstance(value, ss.Var) and id(value) in self._bound:
                    r = _rank(self._bound[id(value)], self.rank_of)
                    if r is not None:
                        self._ranks[id(value)] = r
            case "output":
                self._output = self._output_expr(node)
                self.env[node.name] = self._output
            case other:  # pragma: no cover - fx has no other opcodes
                raise AssertionError(other)

    # -- inputs and parameters -----------------------------------------------------------------
    def _placeholder(self, node: torch.fx.Node) -> Any:
        if self.export is not None and node.name in self.export.placeholder_targets:
            var = self.param(self.export.placeholder_targets[node.name])
            return var if var is not None else None
        name = str(node.target)
        if name in self.constants:
            return self.constants[name]
        t = self.input_types.get(name)
        if t is None:
            if node.args:  # a forward argument with a default value: that value
                return node.args[0]
            raise ss.SymshapeError(INVALID_ARGUMENT, f"no type given for the model input {name!r}")
        v = ss.var(name, t)
        v.span = self.forward_spans.get(name, self.forward_span)
        self.inputs.append(v)
        self.owned.add(id(v))
        sizes = specialised_sizes(node.meta.get("val"), t) if self.export is not None else None
        if sizes is not None:  # an exported program runs only at the sizes it was specialised to
            self.let(f"{name}.exported", EXPORT_SIZES(v, sizes=sizes), v.span)  # (a check beside it)
        return v

    def _module(self, path: str) -> Any:
        """The submodule of the root at ``path`` (None if there is none)."""
        hit = self._modules.get(path)
        if hit is None and self.root is not None:
            try:
                hit = self._modules[path] = self.root.get_submodule(path)
            except AttributeError:
                return None
        return hit

    def _tensor_at(self, path: str) -> Any:
        if self.export is not None:
            return self.export.tensors.get(path)
        owner, _, name = path.rpartition(".")
        module = self._module(owner)
        if module is not None:
            return module_attr(module, name)
        obj = self.root
        for part in path.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                return None
        return obj

    def param(self, path: str) -> ss.Var | None:
        """The variable of the model's parameter/buffer/constant tensor at ``path``."""
        hit = self.params.get(path)
        if hit is not None or path in self._param_none:
            return hit
        t = self._tensor_at(path)
        if not isinstance(t, torch.Tensor):
            self._param_none.add(path)
            return None
        v = ss.var(pythonic_path(path), _tensor_type(t))
        v.span = self.spans.definition(path)
        self.owned.add(id(v))
        self.params[path] = v
        return v

    def _get_attr(self, node: torch.fx.Node) -> Any:
        path = str(node.target)
        v = self.param(path)
        if v is not None:
            return v
        obj = self._tensor_at(path)
        if isinstance(obj, (int, float, bool, str)) or obj is None:
            return obj
        return self._fail(node, f"attribute `{pythonic_path(path)}` ({type(obj).__name__}) is not supported")

    # -- calls ---------------------------------------------------------------------------------
    def _node_span(self, node: torch.fx.Node) -> ss.Span | None:
        if SPAN_META in node.meta:
            span: ss.Span | None = node.meta[SPAN_META]
            return span
        stack = node.meta.get("nn_module_stack")
        inner = None
        if stack:
            last = list(stack.values())[-1]
            inner = last[0] if isinstance(last, tuple) else None
        return self.spans.node(node.stack_trace, call_needles(node.op, node.target, inner))

    def _call(self, node: torch.fx.Node) -> Any:
        span = self._node_span(node)
        module = None
        path = ""
        if node.op == "call_module":
            path = str(node.target)
            module = self._module(path)
            if module is None:
                module = self.root.get_submodule(path)  # raises torch's error
            key: Any = type(module)
        else:
            key = node.target
        conv = lookup(node.op, key)
        args = torch.fx.node.map_arg(node.args, lambda n: self.env[n.name])
        kwargs = torch.fx.node.map_arg(node.kwargs, lambda n: self.env[n.name])
        if conv is None:
            name = target_name(node.op, key)  # (how messages name the call: made on need)
            if node.op == "call_module":
                msg = f"unsupported module `{name}` (`{pythonic_path(path)}`)"
            else:
                msg = f"unsupported call `{name}`"
            return self._fail(node, msg, span)
        val = node.meta.get("val")
        outputs = len(val) if isinstance(val, (list, tuple)) else None
        ctx = Ctx(self, node.name, span, module, path, node.target, outputs, _items_used(node))
        n_bindings = len(self.bindings)
        try:
            # every expression the converter builds gets the node's span (_own below), so it is
            # built in the node's span scope: no frame walk per expression
            with ss.span_scope(span):
                value = conv(ctx, *args, **kwargs)
                if args and _in_place(node) and isinstance(args[0], ss.Expr) and isinstance(value, ss.Expr):
                    value = in_place_result(ctx, args[0], value)
        except Cascade:
            del self.bindings[n_bindings:]
            return self._unknown(node)
        except NeedsShapeValues as e:
            del self.bindings[n_bindings:]
            if e.value.cascade:
                return self._unknown(node)
            return self._fail(node, f"`{target_name(node.op, key)}`: {e.message}", span, e.notes)
        except Unsupported as e:
            del self.bindings[n_bindings:]
            return self._fail(node, f"`{target_name(node.op, key)}`: {e.message}", span, e.notes)
        except ss.SymshapeError as e:
            del self.bindings[n_bindings:]
            msg = f"`{target_name(node.op, key)}`: {e.message}"
            self.diagnostics.append(ss.Diagnostic(e.code, msg, span))
            return self._unknown(node)
        except Exception as e:  # never a traceback from inside a converter
            del self.bindings[n_bindings:]
            what = f"{type(e).__name__}: {e}"
            return self._fail(
                node, f"`{target_name(node.op, key)}` with these arguments is not supported ({what})", span
            )
        for _, bound in self.bindings[n_bindings:]:
            self._own(bound, span)
        return self._bind(node.name, value, span)

    def _bind(self, name: str, value: Any, span: ss.Span | None) -> Any:
        if isinstance(value, ss.Expr):
            if isinstance(value, ss.Var) or id(value) in self.owned:
                return value
            self._own(value, span)
            v = ss.var(name)
            v.span = span
            self.owned.add(id(v))
            self.bindings.append((v, value))
            self._bound[id(v)] = value
            return v
        if isinstance(value, (tuple, list)):
            items = [self._bind(f"{name}_{i}", x, span) for i, x in enumerate(value)]
            return tuple(items) if isinstance(value, tuple) else items
        return value

    def _own(self, e: ss.Expr, span: ss.Span | None) -> None:
        """Give ``e`` and its new sub-expressions the node's span."""
        stack = [e]
        while stack:
            x = stack.pop()
            if id(x) in self.owned:
                continue
            self.owned.add(id(x))
            x.span = span
            stack.extend(_operands(x))

    def _fail(
        self,
        node: torch.fx.Node,
        message: str,
        span: ss.Span | None = None,
        notes: Sequence[tuple[str, ss.Span | None]] = (),
    ) -> Any:
        span = span if span is not None else self._node_span(node)
        self.diagnostics.append(unsupported_diagnostic(f"{message} (fx node `{node.name}`)", span, notes))
        return self._unknown(node)

    def _unknown(self, node: torch.fx.Node) -> Opaque:
        """The value of a node that could not be converted: it may be a tensor or a number."""
        return Opaque(node.name, f"the result of `{node.name}`", None, "any", cascade=True)

    def let(self, name: str, e: ss.Expr, span: ss.Span | None) -> ss.Var:
        v = ss.var(name)
        v.span = span
        self.owned.add(id(v))
        self.bindings.append((v, e))
        return v

    def is_bool(self, e: ss.Expr) -> bool:
        """Whether ``e`` is known to be a bool tensor without inference: a bool input, or (through
        the nodes' variables) a comparison, a logical operation or a cast to bool."""
        while isinstance(e, ss.Var) and id(e) in self._bound:
            e = self._bound[id(e)]
        if isinstance(e, (ss.Var, ss.Constant)):
            t = e.type_annotation if isinstance(e, ss.Var) else e.type
            return isinstance(t, ss.TensorType) and t.dtype == "bool"
        if isinstance(e, ss.Call) and isinstance(e.callee, ss.Op):
            name = e.callee.name
            if name in ("torch.bitwise", "torch.promote", "multiply"):  # (bool when every operand is)
                return all(self.is_bool(a) for a in e.args)
            if name in _DTYPE_KEEPING and e.args:  # a view or selection of a bool tensor
                return self.is_bool(e.args[0])
            if name == "where" and len(e.args) == 3:
                return self.is_bool(e.args[1]) and self.is_bool(e.args[2])
            return name in _BOOL_OPS or (name == "cast" and str(e.attrs.get("dtype")) == "bool")
        return False

    def not_bool(self, e: ss.Expr) -> bool:
        """Whether ``e`` is known not to be a bool tensor without inference
        (:func:`symshape.torch.dtype_facts.not_bool`)."""
        return not_bool(e, self._resolved)

    def _resolved(self, e: ss.Expr) -> ss.Expr:
        while isinstance(e, ss.Var) and id(e) in self._bound:
            e = self._bound[id(e)]
        return e

    def rank_of(self, e: ss.Expr) -> int | None:
        """The rank of ``e`` known at import: an annotation's, the rank torch recorded for an
        exported node, or one that follows from the operators (:func:`_rank`)."""
        shape = static_shape(e)
        if shape is not None:
            return len(shape)
        if isinstance(e, ss.Var):
            return self._ranks.get(id(e))
        return _rank(e, self.rank_of)

    def unknown_tensor(self, value: Opaque) -> ss.Var:
        """A tensor of unknown rank and dtype standing for a node that could not be converted."""
        v = self._unknown_of.get(value.origin)
        if v is None:
            v = ss.var(value.origin, ss.Tensor(None, None))
            v.span = value.span
            self.owned.add(id(v))
            self.unknowns.append(v)
            self._unknown_of[value.origin] = v
        return v

    # -- output --------------------------------------------------------------------------------
    def _output_expr(self, node: torch.fx.Node) -> ss.Expr:
        value = torch.fx.node.map_arg(node.args[0], lambda n: self.env[n.name])
        if (
            self.export is not None
            and self.export.user_outputs is not None
            and isinstance(value, (tuple, list))
        ):
            value = tuple(value[i] for i in self.export.user_outputs)
            if len(value) == 1:
                value = value[0]
        e = self._as_expr(value)
        self._own(e, self._node_span(node))
        return e

    def _as_expr(self, value: Any) -> ss.Expr:
        if isinstance(value, ss.Expr):
            return value
        if isinstance(value, Opaque) and value.cascade:
            return self.unknown_tensor(value)
        if isinstance(value, Mapping):
            return ss.Tuple([self._as_expr(v) for v in value.values()])
        if isinstance(value, (tuple, list)):
            return ss.Tuple([self._as_expr(v) for v in value])
        if isinstance(value, (bool, int, float, ss.Dim, Opaque)):
            return ss.Constant(shape=(), dtype=scalar_dtype(value))
        return ss.Tuple([])


def _tensor_type(t: torch.Tensor) -> ss.TensorType:
    """The annotation of the model's tensor ``t``: a buffer or constant that is a small integer
    tensor of rank 0 or 1 (a cap, a table of sizes, ``torch.tensor(9)`` in ``forward``) carries its
    entries as its value, as an ONNX initializer does, so that index ranges and reshape targets
    through it stay exact; a larger integer one carries the range of its entries (index tensors
    that symbolic tracing folds to constants: ``x[torch.arange(2)[:, None], torch.arange(3)]``);
    parameters (trained, so not constants of the model) and the rest are typed by shape and dtype
    only."""
    base = _param_type(tuple(t.shape), t.dtype)
    if (
        isinstance(t, torch.nn.Parameter)
        or t.device.type == "meta"
        or type(t) is not torch.Tensor  # a fake or otherwise subclassed tensor has no entries
    ):
        return base
    if base.dtype in VALUE_DTYPES and t.dim() <= 1:
        return constant_type(base, t.detach().cpu())
    if base.dtype in RANGE_DTYPES and t.numel() > 0:
        return ss.Tensor(base.shape, base.dtype, values=(int(t.min()), int(t.max())))
    return base


@functools.lru_cache(maxsize=4096)
def _param_type(shape: tuple[int, ...], dtype: Any) -> ss.TensorType:
    """The annotation of a parameter tensor (one object per shape and dtype: parameters of the
    same shape share their type, and its cached hash)."""
    return ss.Tensor(tuple(int(s) for s in shape), dtype_name(dtype))


#: the operators whose result is a bool tensor whatever their operands
_BOOL_OPS = frozenset(
    {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and",
     "logical_or", "logical_not", "isnan", "isinf", "isfinite", "any", "all"}
)  # fmt: skip

#: operators whose result has their first operand's dtype (views, selections, copies)
_DTYPE_KEEPING = frozenset(
    {"strided_slice", "dyn_strided_slice", "reshape", "squeeze", "expand_dims", "transpose", "broadcast_to",
     "expand", "take", "copy", "flatten", "batch_flatten", "reshape_like", "concatenate", "stack", "tile",
     "torch.reduced_dtype", "torch.nonempty", "torch.dtype_refuse"}
)  # fmt: skip

#: in-place methods that change ``self``'s shape (every other ``x.op_(...)`` keeps it)
_RESHAPING_IN_PLACE = frozenset(
    {"resize_", "resize_as_", "unsqueeze_", "squeeze_", "transpose_", "t_", "swapaxes_", "swapdims_",
     "as_strided_", "set_", "requires_grad_", "share_memory_"}
)  # fmt: skip


#: relations whose result has their first operand's rank
_SAME_RANK = frozenset(
    {"unary", "unary_float", "negative", "identity_bool", "init_like", "pool1d", "pool2d", "pool3d",
     "softmax",
     "adaptive_pool2d", "conv1d", "conv2d", "conv3d", "bias_add", "cast", "cast_like", "layer_norm",
     "torch.promote", "torch.nonempty", "torch.conv_transpose", "torch.dtype_refuse"}
)  # fmt: skip
#: relations whose result has the largest rank of their operands (broadcasting)
_BROADCAST = frozenset(
    {"add", "subtract", "multiply", "divide", "maximum", "minimum", "broadcast", "where", "greater",
     "less", "greater_equal", "less_equal", "equal", "not_equal", "logical_and", "logical_or"}
)  # fmt: skip


def _rank(e: ss.Expr, rank_of: Any) -> int | None:
    """The rank of ``e`` as its operators give it (None when it does not follow without
    inference): rank-keeping operators (activations, convolutions, pools, casts, ...) have their
    first operand's, broadcasting ones the largest of theirs, a batch norm's value its input's."""
    if isinstance(e, ss.TupleGetItem):
        t = e.tuple_value
        if e.index == 0 and isinstance(t, ss.Call) and getattr(t.callee, "name", None) == "nn.batch_norm":
            return rank_of(t.args[0])  # type: ignore[no-any-return]
        return None
    if not isinstance(e, ss.Call) or not isinstance(e.callee, ss.Op) or not e.args:
        return None
    rel = e.callee.relation
    name = rel if isinstance(rel, str) else getattr(rel, "name", None)
    if name in _SAME_RANK:
        return rank_of(e.args[0])  # type: ignore[no-any-return]
    if name == "reshape":  # (a literal target without Relay's special values: view(-1, 1))
        target = e.attrs.get("newshape")
        if isinstance(target, tuple) and all(isinstance(v, int) and v >= -1 for v in target):
            return len(target)
        return None
    if name == "expand_dims":  # (unsqueeze: flatten's merges need the rank)
        r = rank_of(e.args[0])
        n = e.attrs.get("num_newaxis", 1)
        return None if r is None or not isinstance(n, int) else r + n
    if name in _BROADCAST:
        ranks = [rank_of(a) for a in e.args]
        return None if None in ranks else max(ranks)
    return None


def _in_place(node: torch.fx.Node) -> bool:
    """Whether ``node`` is an in-place method call, ``x.add_(y)``, that keeps ``x``'s shape
    (``x += y`` is traced as ``add``: not seen)."""
    t = node.target
    return (
        node.op == "call_method" and isinstance(t, str) and t.endswith("_") and not t.startswith("_")
        and t not in _RESHAPING_IN_PLACE
    )  # fmt: skip


def _items_used(node: torch.fx.Node) -> int | None:
    """How many results a node of a symbolically traced graph has, when every use takes one by a
    constant index (``q, k, v = x.split(n, 2)`` unpacks into three ``getitem`` nodes): one past
    the largest index. torch's unpacking checks the count at run time; the graph keeps only the
    ``getitem`` nodes."""
    found: list[int] = []
    for user in node.users:
        if user.op != "call_function" or user.target is not operator.getitem or len(user.args) != 2:
            return None
        i = user.args[1]
        if not isinstance(i, int) or isinstance(i, bool) or i < 0:
            return None
        found.append(i)
    return max(found) + 1 if found else None


def _operands(e: ss.Expr) -> Iterator[ss.Expr]:
    if isinstance(e, ss.Call):
        yield from e.args
    elif isinstance(e, ss.Tuple):
        yield from e.fields
    elif isinstance(e, ss.TupleGetItem):
        yield e.tuple_value


def _def_span(fn: Any) -> ss.Span | None:
    src = source_lines(fn) if fn is not None else None
    if src is None or src[0].startswith(_TORCH_DIR):
        return None
    return ss.Span(src[0], src[2], 1)
