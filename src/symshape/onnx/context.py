"""The conversion context: everything a converter sees of its node and of the model.

A converter gets one :class:`NodeContext` and returns the symshape expressions of the node's
outputs. Through the context it reads

* the node: ``name``, ``op_type``, ``domain``, the model's ``opset`` for that domain, ``span``;
* its inputs as symshape expressions (``input(i)``; ``has_input(i)`` for optional ones) and, where
  the model knows them, their constant values as numpy arrays (``const(i)``, ``ints(i)``:
  initializers, ``Constant`` nodes and constant-folded nodes);
* its attributes, parsed per ``AttributeProto`` type and checked (``attr_int``, ``attr_ints``, ...;
  a wrong attribute is a ``bad-attribute`` error at the node);
* types where a conversion needs one before inference runs (``rank(i)``, ``static_shape(i)``: from
  the declarations, else from inferring the program converted so far);

and it reports what it cannot do: ``unsupported(cause, detail)`` (an ``unsupported-op`` error that
says why: the node needs shape values, a new core operator, ...) or ``fail(code, message)`` (the
model is wrong). Converters never see the importer, the graph or other nodes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, NoReturn

import numpy as np

import symshape as ss
from symshape import Dim, Expr, TensorType, Type
from symshape.errors import BAD_ATTRIBUTE, ErrorCode
from symshape.onnx.attrs import HASHABLE_TYPES, fields_after_op_type, parse_attribute
from symshape.onnx.dtypes import elem_type_name, to_dtype
from symshape.onnx.spans import OnnxSpan
from symshape.onnx.value import Value
from symshape.source import Span, span_scope

if TYPE_CHECKING:
    import onnx

    from symshape.onnx.importer import Importer

__all__ = [
    "Cause",
    "CAUSES",
    "UNSUPPORTED_OP",
    "SHAPE_VALUES",
    "CORE_OP",
    "CONTROL_FLOW",
    "DTYPE",
    "SEQUENCE",
    "LEGACY",
    "Unsupported",
    "ConversionError",
    "Value",
    "NodeContext",
    "node_outputs",
]


@dataclass(frozen=True)
class Cause:
    """Why a node cannot be converted: a short key and the phrase a report uses."""

    key: str
    phrase: str


UNSUPPORTED_OP: Final = Cause("unsupported-op", "no converter for this operator")
SHAPE_VALUES: Final = Cause("shape-values", "needs shape values (a size computed at run time)")
CORE_OP: Final = Cause("core-op", "needs a symshape operator that does not exist yet")
CONTROL_FLOW: Final = Cause("control-flow", "control flow (subgraphs) is not converted yet")
DTYPE: Final = Cause("dtype", "an element type symshape does not have")
SEQUENCE: Final = Cause("sequence", "sequence, optional and map values are not supported")
LEGACY: Final = Cause("legacy", "this operator version is not supported")
CAUSES: Final = (UNSUPPORTED_OP, SHAPE_VALUES, CORE_OP, CONTROL_FLOW, DTYPE, SEQUENCE, LEGACY)


class Unsupported(Exception):
    """Raised by a converter for a node it cannot express (an ``unsupported-op`` error)."""

    def __init__(self, cause: Cause, detail: str) -> None:
        self.cause = cause
        self.detail = detail
        super().__init__(f"{detail} ({cause.phrase})")


class ConversionError(Exception):
    """Raised by a converter for a node that is wrong (a bad attribute, an impossible value)."""

    def __init__(self, code: ErrorCode | str, message: str) -> None:
        self.code = code.code if isinstance(code, ErrorCode) else code
        self.message = message
        super().__init__(message)


class _NodeField:
    """A string field of a context's node, read when asked (a descriptor, not a ``__getattr__``
    hook: with one, every attribute read of a context goes through the hook, and the
    interpreter's attribute caches do not apply)."""

    __slots__ = ("field",)

    def __init__(self, field: str) -> None:
        self.field = field

    def __get__(self, ctx: NodeContext, owner: type | None = None) -> str:
        value: str = getattr(ctx.node, self.field)
        return value


class NodeContext:
    """The interface of one converter call (see the module docstring)."""

    # (defaults of fields a context made by ``of`` sets only when it differs: a model has a
    # context per node)
    _raw_attrs: dict[str, onnx.AttributeProto] | None = None
    _parsed: dict[str, Any]  # (``_NO_PARSED`` until an attribute is parsed, see ``of``)
    _given = False
    _dir: str | None = None
    elem_types: Mapping[int, int]

    def __init__(
        self,
        importer: Importer,
        node: onnx.NodeProto,
        opset: int,
        span: OnnxSpan,
        inputs: Sequence[Value | None],
        attrs: Mapping[str, Any] | None = None,
        *,
        op_type: str | None = None,
        outputs: Sequence[str] | None = None,
    ) -> None:
        """``op_type`` and ``outputs`` (the output names), when given, are the node's (read by
        the caller already)."""
        self._imp = importer
        self.node = node
        self.op_type: str = node.op_type if op_type is None else op_type
        self._outputs: Sequence[str] = node.output if outputs is None else outputs
        self.opset = opset
        self.span = span
        self._inputs = inputs
        self._raw_attrs: dict[str, onnx.AttributeProto] | None = None
        self._parsed: dict[str, Any] = dict(attrs) if attrs is not None else {}
        self._given = attrs is not None
        self._dir: str | None = None if importer is None else importer.base_dir
        #: the ONNX element types of outputs whose dtype symshape does not have (by output index;
        #: empty as a rule: one dict shared until an entry is written)
        self.elem_types: Mapping[int, int] = _NO_ELEM_TYPES

    @staticmethod
    def of(
        importer: Importer,
        node: onnx.NodeProto,
        opset: int,
        span: OnnxSpan,
        inputs: Sequence[Value | None],
        op_type: str,
        outputs: Sequence[str],
    ) -> NodeContext:
        """``NodeContext(importer, node, opset, span, inputs, op_type=op_type, outputs=outputs)``
        made without the keyword call of ``__init__`` (one per node of a model): the same fields."""
        c: NodeContext = _new(NodeContext)
        c._imp, c.node, c.op_type, c._outputs, c.opset, c.span = importer, node, op_type, outputs, opset, span
        c._inputs = inputs
        d = importer.base_dir
        if d is not None:
            c._dir = d
        return c

    @property
    def _raw(self) -> dict[str, onnx.AttributeProto]:
        """The node's attributes by name (read from the node on first use)."""
        raw = self._raw_attrs
        if raw is None:
            # (a slice: iterating a protobuf repeated field ends in an IndexError, costly)
            raw = self._raw_attrs = {a.name: a for a in self.node.attribute[:]}
        return raw

    @property
    def base_dir(self) -> str | None:
        """The folder the model's external data is read from (None: a ``ModelProto`` given, see
        :mod:`symshape.onnx.external`)."""
        return self._dir

    @property
    def attrs(self) -> _Attrs:
        """The attributes by name, parsed on first use (see :mod:`symshape.onnx.attrs`)."""
        return _Attrs(self)

    def _attribute(self, name: str, default: Any) -> Any:
        parsed = self._parsed
        if name in parsed:
            return parsed[name]
        a = self._raw.get(name)
        if a is None:
            return default
        try:
            v = parse_attribute(a, self._dir)
        except Exception as e:
            self.fail(BAD_ATTRIBUTE, f"attribute '{name}' cannot be read: {e}")
        if parsed is _NO_PARSED:
            parsed = self._parsed = {}
        parsed[name] = v
        return v

    # -- the node ---------------------------------------------------------------------------------
    #: the node's own name (empty when it has none) and its operator's domain as the model writes
    #: it: read from the node when asked (converters seldom do; protobuf fields cost an access each)
    name: Final = _NodeField("name")
    domain: Final = _NodeField("domain")

    @property
    def what(self) -> str:
        """How reports name the node: ``node 'Reshape_12' (Reshape)``."""
        return self.span.what

    def checking(self, text: str) -> AbstractContextManager[Span | None]:
        """A ``with`` block whose expressions check a condition of the node that the converter
        builds out of internal operators (``take``, ``stack``, ...): they take the node's span with
        ``text`` added (``node 'MU' (MaxUnpool): <text>``), so the guards and errors of those
        operators say in ONNX terms what they check (``text``: which input or attribute, which
        axis, the condition)."""
        s = self.span
        return span_scope(OnnxSpan.in_file(s.file, s.line, f"{s.what}: {text}"))

    @property
    def num_inputs(self) -> int:
        """The number of input slots, including empty (omitted optional) ones."""
        return len(self._inputs)

    @property
    def num_outputs(self) -> int:
        """The number of output slots, including empty ones."""
        return len(self._outputs)

    def has_output(self, i: int) -> bool:
        """Whether output ``i`` is wanted (present and not the empty name)."""
        return i < len(self._outputs) and bool(self._outputs[i])

    # -- inputs -----------------------------------------------------------------------------------
    def has_input(self, i: int) -> bool:
        """Whether input ``i`` is given (present and not the empty name)."""
        return i < len(self._inputs) and self._inputs[i] is not None

    def _value(self, i: int) -> Value:
        v = self._inputs[i] if i < len(self._inputs) else None
        if v is None:
            self.fail(BAD_ATTRIBUTE, f"{self.op_type} needs input {i}, which is missing")
        return v

    def input(self, i: int) -> Expr:
        """The expression of input ``i`` (a missing required input is an error)."""
        inputs = self._inputs
        v = inputs[i] if i < len(inputs) else None
        if v is None:
            return self._value(i).expr  # (raises)
        e = v._expr  # (built already, as a rule: else the value's maker builds it)
        return v.expr if e is None else e

    def inputs(self) -> list[Expr]:
        """The expressions of all given inputs (for variadic operators)."""
        out: list[Expr] = []
        for v in self._inputs:
            if v is not None:
                e = v._expr  # (built already, as a rule: else the value's maker builds it)
                out.append(v.expr if e is None else e)
        return out

    def input_name(self, i: int) -> str:
        return self._value(i).name

    def const(self, i: int) -> np.ndarray[Any, Any] | None:
        """The constant value of input ``i``, or None when it is absent or not known."""
        if not self.has_input(i):
            return None
        return self._value(i).const

    def value_of(self, i: int) -> np.ndarray[Any, Any] | None:
        """Input ``i``'s shape value as an array when inference knows every entry as a constant
        (see :meth:`require_const`), else None."""
        if not self.has_input(i):
            return None
        return _constant_entries(self._imp.type_of_value(self._value(i)))

    def require_const(self, i: int, what: str) -> np.ndarray[Any, Any]:
        """The constant value of input ``i``: a constant's, else the shape value inference gives
        it when every entry is a constant (the shape of a static tensor, gathered and
        concatenated); not known is an ``unsupported-op`` (shape values)."""
        c = self.const(i)
        if c is None and self.has_input(i):
            c = _constant_entries(self._imp.type_of_value(self._value(i)))
        if c is None:
            self.unsupported(
                SHAPE_VALUES,
                f"{what} (input {i}, '{self.input_name(i)}') is computed at run time",
            )
        return c

    def ints(self, i: int, what: str) -> tuple[int, ...]:
        """Input ``i``'s constant value as a flat tuple of ints (see :meth:`require_const`)."""
        c = self.require_const(i, what)
        if c.dtype.kind not in "iub":
            self.fail(BAD_ATTRIBUTE, f"{what} must be integers, got {c.dtype}")
        return tuple(int(x) for x in c.reshape(-1))

    def sizes(self, i: int, what: str) -> tuple[int, ...]:
        """Like :meth:`ints`, for sizes: a negative entry is a ``bad-attribute`` error."""
        vals = self.ints(i, what)
        if any(v < 0 for v in vals):
            self.fail(BAD_ATTRIBUTE, f"{what} {list(vals)} has a negative value")
        return vals

    def opt_ints(self, i: int, what: str) -> tuple[int, ...] | None:
        """Like :meth:`ints`, None when the input is absent."""
        return self.ints(i, what) if self.has_input(i) else None

    # -- types ------------------------------------------------------------------------------------
    def type_of(self, i: int) -> Type | None:
        """Input ``i``'s type: declared, or inferred from the program converted so far; None when
        not known."""
        return self._imp.type_of_value(self._value(i))

    def tensor_type(self, i: int) -> TensorType | None:
        t = self.type_of(i)
        return t if isinstance(t, TensorType) else None

    def rank(self, i: int) -> int | None:
        """Input ``i``'s rank when known."""
        t = self.tensor_type(i)
        return t.ndim if t is not None else None

    def need_rank(self, i: int, why: str) -> int:
        """Input ``i``'s rank; not known is an ``unsupported-op`` (the conversion needs it)."""
        r = self.rank(i)
        if r is None:
            self.unsupported(CORE_OP, f"the rank of input {i} is not known, and {why} needs it")
        return r

    def static_shape(self, i: int, infer: bool = True) -> tuple[int, ...] | None:
        """Input ``i``'s shape when every dimension is a constant (``infer=False``: only when
        known without inferring the program converted so far)."""
        if infer:
            t = self.tensor_type(i)
        else:
            k = self._value(i).type
            t = k if isinstance(k, TensorType) else None
        if t is None or t.ndim is None or not all(d.is_constant for d in t.dims):
            return None
        return tuple(int(d) for d in t.dims)

    def dtype_of(self, i: int) -> str | None:
        """Input ``i``'s dtype when known."""
        v = self._value(i)
        if v.elem_type:
            return to_dtype(v.elem_type)
        t = self.tensor_type(i)
        return t.dtype if t is not None and isinstance(t.dtype, str) else None

    # -- attributes -------------------------------------------------------------------------------
    def attr_key(self) -> tuple[object, ...] | None:
        """The node's attributes as one hashable key: ``(name, type, value)`` for each, in node
        order, parsed (and remembered, as by the ``attr_*`` methods). A converter may remember
        what it computes from the attributes alone under it. None when an attribute is not a
        number, a string or a list of them, cannot be read, or the attributes were given."""
        if self._given:
            return None
        parsed = self._parsed
        if parsed is _NO_PARSED:
            parsed = self._parsed = {}
        out: list[object] = []
        for name, a in self._raw.items():
            t = a.type
            if t not in HASHABLE_TYPES:
                return None
            v = parsed.get(name, _ABSENT)
            if v is _ABSENT:
                try:
                    v = parsed[name] = parse_attribute(a, None, t)  # (no tensors: HASHABLE_TYPES)
                except Exception:
                    return None
            out += (name, t, v)
        return tuple(out)

    def attribute_bytes(self) -> bytes | None:
        """The node's attributes (then its ``doc_string``, ``domain``, ... where set) as protobuf
        serializes them (:func:`~symshape.onnx.attrs.fields_after_op_type`): equal bytes are equal
        attributes, a key of what follows from them alone that reads none of them (one
        serialization). None when the attributes were given, or a name is long."""
        if self._given:
            return None
        return fields_after_op_type(self.node.SerializeToString(), self.op_type)

    def has_attr(self, name: str) -> bool:
        return name in self._parsed or name in self._raw

    def attr(self, name: str, default: Any = None) -> Any:
        """The parsed attribute (see :mod:`symshape.onnx.attrs`), or ``default``."""
        return self._attribute(name, default)

    def attr_int(self, name: str, default: int | None = None) -> int:
        v = self._attribute(name, default)
        if not isinstance(v, int) or isinstance(v, bool):
            if v is None:
                self.fail(BAD_ATTRIBUTE, f"attribute '{name}' is required")
            self.fail(BAD_ATTRIBUTE, f"attribute '{name}' must be an int, got {v!r}")
        return v

    def attr_float(self, name: str, default: float | None = None) -> float:
        v = self._attribute(name, default)
        if isinstance(v, int) and not isinstance(v, bool):
            return float(v)
        if not isinstance(v, float):
            if v is None:
                self.fail(BAD_ATTRIBUTE, f"attribute '{name}' is required")
            self.fail(BAD_ATTRIBUTE, f"attribute '{name}' must be a float, got {v!r}")
        return v

    def attr_ints(self, name: str, default: Sequence[int] | None = None) -> tuple[int, ...] | None:
        """An ``INTS`` attribute as a tuple (None when absent and no default)."""
        v = self._attribute(name, None)
        if v is None:
            return None if default is None else tuple(default)
        if type(v) is tuple and _PLAIN_INT.issuperset(map(type, v)):
            return v  # (the common case, an INTS attribute: checked without a generator)
        if isinstance(v, int) and not isinstance(v, bool):
            return (v,)
        if not isinstance(v, tuple) or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
            self.fail(BAD_ATTRIBUTE, f"attribute '{name}' must be a list of ints, got {v!r}")
        return v

    def attr_str(self, name: str, default: str | None = None, choices: Sequence[str] | None = None) -> str:
        v = self._attribute(name, default)
        if not isinstance(v, str):
            if v is None:
                self.fail(BAD_ATTRIBUTE, f"attribute '{name}' is required")
            self.fail(BAD_ATTRIBUTE, f"attribute '{name}' must be a string, got {v!r}")
        if choices is not None and v not in choices:
            self.fail(BAD_ATTRIBUTE, f"attribute '{name}' must be one of {', '.join(choices)}, got {v!r}")
        return v

    def attr_dtype(self, name: str, default: int | None = None) -> str:
        """An element-type attribute (``to``, ``dtype``, ...) as a symshape dtype."""
        et = self.attr_int(name, default)
        dt = to_dtype(et)
        if dt is None:
            self.unsupported(DTYPE, f"attribute '{name}' is {elem_type_name(et)}")
        return dt

    # -- subgraphs --------------------------------------------------------------------------------
    def graph_attr(self, name: str) -> onnx.GraphProto:
        """A ``GRAPH`` attribute (``If``'s branches, ``Loop``'s body)."""
        import onnx

        g = self._attribute(name, None)
        if not isinstance(g, onnx.GraphProto):
            self.fail(BAD_ATTRIBUTE, f"attribute '{name}' must be a graph")
        return g

    def inline(self, g: onnx.GraphProto) -> list[Expr]:
        """Convert subgraph ``g`` into the enclosing graph (a branch that is taken for sure); the
        expressions of its outputs."""
        return self._imp.inline_subgraph(g)

    def apply(self, g: onnx.GraphProto, inputs: Sequence[Expr]) -> list[Expr]:
        """Subgraph ``g`` with its inputs bound to ``inputs`` (a ``Scan`` body's iteration): the
        expressions of its outputs."""
        return self._imp.subgraph_apply(g, inputs)

    def visible_exprs(self) -> set[int]:
        """The ids of the expressions of the values this node's graph sees (its own and those of
        the graphs around it), made so far."""
        return {id(e) for v in self._imp.values.values() if (e := v._expr) is not None}

    def value_named(self, name: str) -> Value | None:
        """The value ``name`` as this node's graph sees it (None: none of that name)."""
        return self._imp.values.get(name)

    def model(self) -> onnx.ModelProto:
        """The model being converted."""
        return self._imp.model

    def importer(self) -> object:
        """The importer converting this node (an owner for what lives as long as it)."""
        return self._imp

    def block(self, g: onnx.GraphProto) -> Expr:
        """Subgraph ``g`` as one expression (its output, or the tuple of its outputs)."""
        return self._imp.subgraph_block(g)

    # -- reporting --------------------------------------------------------------------------------
    def unsupported(self, cause: Cause, detail: str) -> NoReturn:
        """Give up on this node: an ``unsupported-op`` error naming it, with the cause."""
        raise Unsupported(cause, detail)

    def fail(self, code: ErrorCode | str, message: str) -> NoReturn:
        """The node is wrong: an error with ``code`` at the node."""
        raise ConversionError(code, message)

    # -- building ---------------------------------------------------------------------------------
    def constant(self, value: Any, dtype: str | None = None) -> Expr:
        """A constant expression from a numpy value (its dtype kept: ``int64`` stays ``int64``)."""
        return ss.const(np.asarray(value, dtype=dtype))

    def with_unknown_dtype(self, x: Expr, elem_type: int, output: int = 0) -> Expr:
        """``x`` with an unknown dtype (``Tensor[..., ?]``), as output ``output``: for an element
        type symshape does not have (``float8e4m3fn``, ``int4``, ...), the shape is still known,
        and the ONNX ``elem_type`` is kept for :func:`~symshape.onnx.infer_shapes`. The unknown
        dtype comes from the model's one stand-in parameter of that type
        (``Importer.dtype_stand_in``)."""
        if self.elem_types is _NO_ELEM_TYPES:
            self.elem_types = {}
        self.elem_types[output] = elem_type  # type: ignore[index]
        return ss.ops.cast_like(x, self._imp.dtype_stand_in())

    def fresh_dim(self, hint: str, least: int = 0) -> ss.Dim:
        """A new given symbol (``>= least``), unique in the model, for a size only known at run
        time."""
        return self._imp.dim_names.fresh(hint, least)

    def iteration_symbol(self) -> ss.Dim | None:
        """A new symbol (from 0) for a ``Loop``'s iteration number that its converter bounds by the
        trip count, or None when the importer leaves this node's unknown (a guard over it would
        be read as one value: see :func:`symshape.onnx.infer`). The node is known by its output
        names (unique in the model, subgraphs included)."""
        key = "\x00".join(self._outputs)
        if key in self._imp.unknown_iterations:
            return None
        name = str(self.fresh_dim("iteration"))
        self._imp.iteration_symbols[name] = key
        return ss.dim(name, min=0)


#: the type of the entries of an ``INTS`` attribute as parsed (``attr_ints`` accepts them unchecked)
_PLAIN_INT: Final = frozenset({int})
_ABSENT: Final = object()
_new: Final[Any] = object.__new__
#: the ``elem_types`` of a context that has none (never written: see ``with_unknown_dtype``)
_NO_ELEM_TYPES: Final[Mapping[int, int]] = MappingProxyType({})
#: the ``_parsed`` of a context made by ``of`` until it parses an attribute (never written: see
#: ``_attribute`` and ``attr_key``, which replace it by a dict of the context's own)
_NO_PARSED: Final[dict[str, Any]] = {}
NodeContext._parsed = _NO_PARSED
NodeContext.elem_types = _NO_ELEM_TYPES


def _constant_entries(t: Type | None) -> np.ndarray[Any, Any] | None:
    """The shape value of a type as an int64 array when every entry is a constant (``Shape`` of a
    tensor whose shape is static only after inference), else None."""
    if not isinstance(t, TensorType) or t.value is None:
        return None
    entries = (t.value,) if isinstance(t.value, Dim) else t.value
    if not all(d is not None and d.is_constant for d in entries):
        return None
    arr = np.array([int(d) for d in entries if d is not None], dtype=np.int64)
    return arr.reshape(()) if isinstance(t.value, Dim) else arr


class _Attrs(Mapping[str, Any]):
    """A read-only view of a node's attributes, parsed on access."""

    def __init__(self, ctx: NodeContext) -> None:
        self._ctx = ctx

    def __getitem__(self, name: str) -> Any:
        if not self._ctx.has_attr(name):
            raise KeyError(name)
        return self._ctx._attribute(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._ctx._raw)

    def __len__(self) -> int:
        return len(self._ctx._raw)


def node_outputs(wanted: Sequence[str], result: Any) -> list[Expr | None]:
    """A converter's ``result`` (an expression, or a list with None for an output it does not
    make) as one expression or None per output of ``wanted`` (the node's output names); a wanted
    output it does not make is an ``unsupported-op``."""
    if isinstance(result, Expr):
        if len(wanted) == 1 and wanted[0]:
            return [result]  # (the common case)
        outs: list[Expr | None] = [result]
    else:
        outs = list(result)
    if len(outs) < len(wanted):
        outs.extend([None] * (len(wanted) - len(outs)))
    for i, name in enumerate(wanted):
        if name and outs[i] is None:
            raise Unsupported(UNSUPPORTED_OP, f"output {i} ('{name}') is not supported")
    return outs[: len(wanted)]
