"""What a converter sees: the node, its called module, parameters, and argument coercions.

:class:`Ctx` is the only interface between the importer and the converters (as in the ONNX
reference implementation's ``ShapeInferenceContext``). Converters build symshape expressions with
``ss.ops`` and ask the context for

* ``ctx.param("weight")``: the typed variable of a parameter or buffer of the called module (or
  ``ctx.param("fc2.weight", absolute=True)`` of the model), named after its path in the model's
  source (``self.fc2.weight``) and annotated with its shape;
* ``ctx.tensor(v)``, ``ctx.operand(v, like)``: an argument as a tensor expression (a Python number
  becomes a 0-d tensor of ``like``'s dtype; arithmetic promotes both operands as torch does,
  :mod:`symshape.torch.convert.promotion`);
* ``ctx.size(v)``, ``ctx.sizes(v)``, ``ctx.ints(v)``, ``ctx.axis(v)``, ``ctx.static(v)``: arguments
  the converter must know at import time; an :class:`~symshape.torch.values.Opaque` size raises
  :class:`~symshape.torch.values.NeedsShapeValues` (converters that take run-time sizes read
  their shape values first, :mod:`symshape.torch.shape_values`), a tensor where a Python value
  is needed raises :class:`~symshape.torch.values.Unsupported`;
* ``ctx.let(e, suffix)``: bind an expression used more than once (a shape value) to a variable;
* ``ctx.num_outputs`` / ``ctx.items_used``: how many results an exported node has / how many a
  traced graph uses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, NoReturn, Protocol

import symshape as ss
from symshape.torch.values import NeedsShapeValues, Opaque, Unsupported

__all__ = ["Ctx", "Host", "Cascade", "DTYPES", "by_name", "dtype_name", "module_attr", "scalar_dtype"]

#: torch dtype names (``str(torch.float32)`` without ``torch.``) -> symshape dtypes
DTYPES: dict[str, str] = {
    "float32": "float32",
    "float": "float32",
    "float64": "float64",
    "double": "float64",
    "float16": "float16",
    "half": "float16",
    "bfloat16": "bfloat16",
    "int8": "int8",
    "int16": "int16",
    "short": "int16",
    "int32": "int32",
    "int": "int32",
    "int64": "int64",
    "long": "int64",
    "uint8": "uint8",
    "uint16": "uint16",
    "uint32": "uint32",
    "uint64": "uint64",
    "bool": "bool",
    "complex64": "complex64",
    "complex128": "complex128",
}


def dtype_name(dtype: Any) -> str:
    """The symshape dtype of a ``torch.dtype`` (or of its name)."""
    name = str(dtype).removeprefix("torch.")
    out = DTYPES.get(name)
    if out is None:
        raise Unsupported(f"dtype {dtype} is not supported")
    return out


def by_name(order: Sequence[str], args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """A call's optional arguments by name: the positional ones in torch's ``order``, then the
    keywords (for calls whose spellings order them differently)."""
    return {**dict(zip(order, args)), **kwargs}


def scalar_dtype(v: object) -> str:
    """The dtype torch gives a Python scalar of this kind."""
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, float):
        return "float32"
    if isinstance(v, Opaque):
        return {"float": "float32", "bool": "bool"}.get(v.kind, "int64")
    return "int64"


class Cascade(Exception):
    """A use of the result of a node that was already reported as unsupported (not reported
    again)."""


class Host(Protocol):
    """What the importer provides to a :class:`Ctx`."""

    def param(self, path: str) -> ss.Var | None: ...

    def unknown_tensor(self, value: Opaque) -> ss.Var: ...

    def let(self, name: str, e: ss.Expr, span: ss.Span | None) -> ss.Var: ...

    def rank_of(self, e: ss.Expr) -> int | None: ...

    def is_bool(self, e: ss.Expr) -> bool: ...

    def not_bool(self, e: ss.Expr) -> bool: ...


@dataclass(frozen=True, slots=True)
class Ctx:
    """The converter's view of one node (see the module docstring)."""

    host: Host
    node_name: str
    span: ss.Span | None
    #: the called module (``call_module`` nodes) and its path in the model
    module: Any = None
    module_path: str = ""
    node_target: Any = None
    #: how many results the graph says the node has (exported programs record it), or None
    num_outputs: int | None = None
    #: in a traced graph, one past the largest index of the node's result used (every use is
    #: ``result[i]``, as unpacking ``q, k, v = ...`` gives), or None
    items_used: int | None = None

    def for_module(self, module: Any, module_path: str) -> Ctx:
        """The same node's context for a module inside the called one (``layer.activation``)."""
        return replace(self, module=module, module_path=module_path)

    def let(self, e: ss.Expr, suffix: str) -> ss.Var:
        """Bind an intermediate expression that is used more than once to a variable
        (``<node>.<suffix>``), so the program stays a tree of bindings."""
        return self.host.let(f"{self.node_name}.{suffix}", e, self.span)

    # -- parameters ----------------------------------------------------------------------------
    def param(self, name: str, absolute: bool = False) -> ss.Var | None:
        """The variable of parameter/buffer ``name`` of the called module (None if it is None,
        as a ``bias=False`` layer's bias)."""
        path = name if absolute or not self.module_path else f"{self.module_path}.{name}"
        return self.host.param(path)

    def alike_params(self, *names: str) -> tuple[ss.Var | None, ...]:
        """The called module's parameters ``names`` (None where it has none). When all present
        ones have one concrete shape and dtype (a batch norm's weight, bias and running
        statistics), the first present one stands for all: checking it against the input
        checks them all, and the program binds one variable instead of several."""
        tensors = [module_attr(self.module, n) for n in names]
        present = [t for t in tensors if t is not None and hasattr(t, "shape")]
        first = present[0] if present else None
        if first is not None and all(t.shape == first.shape and t.dtype == first.dtype for t in present):
            one = self.param(names[tensors.index(first)])
            return tuple(one if t is not None and hasattr(t, "shape") else None for t in tensors)
        return tuple(self.param(n) for n in names)

    def need_param(self, name: str) -> ss.Var:
        p = self.param(name)
        if p is None:
            raise Unsupported(f"the module has no parameter `{name}`")
        return p

    def rank(self, x: ss.Expr) -> int | None:
        """The rank of ``x`` when the importer knows it without inference: an input or parameter
        annotation, or (in an exported program) the rank torch recorded for the node."""
        return self.host.rank_of(x)

    # -- tensors -------------------------------------------------------------------------------
    def tensor(self, v: object, what: str = "the argument") -> ss.Expr:
        """``v`` as a tensor expression (it must be one)."""
        if isinstance(v, ss.Expr):
            return v
        if isinstance(v, Opaque) and v.cascade:
            return self.host.unknown_tensor(v)
        raise Unsupported(f"{what} must be a tensor, got {_show(v)}")

    def operand(self, v: object, like: ss.Expr) -> ss.Expr:
        """A tensor operand of arithmetic with ``like``: a Python number (or a run-time size)
        becomes a 0-d tensor of ``like``'s dtype."""
        if isinstance(v, ss.Expr):
            return v
        if isinstance(v, Opaque) and v.cascade:
            return self.host.unknown_tensor(v)
        if isinstance(v, (bool, int, float, ss.Dim, Opaque)):
            return ss.ops.cast_like(ss.Constant(shape=(), dtype=scalar_dtype(v)), like)
        raise Unsupported(f"an operand must be a tensor or a number, got {_show(v)}")

    def scalar_tensor(self, v: object) -> ss.Expr:
        """A Python number as a 0-d tensor of torch's dtype for it."""
        if isinstance(v, ss.Expr):
            return v
        if isinstance(v, (bool, int, float, ss.Dim, Opaque)):
            return ss.Constant(shape=(), dtype=scalar_dtype(v))
        raise Unsupported(f"expected a number, got {_show(v)}")

    # -- static arguments ----------------------------------------------------------------------
    def static(self, v: object, what: str) -> Any:
        """``v`` as a Python value known at import time."""
        if isinstance(v, Opaque) and v.cascade:
            raise Cascade()
        if isinstance(v, Opaque):
            raise NeedsShapeValues(what, v)
        if isinstance(v, ss.Expr):
            raise Unsupported(f"{what} must be known at import time, got a tensor")
        if isinstance(v, (list, tuple)):
            return (
                type(v)(self.static(x, what) for x in v)
                if isinstance(v, list)
                else tuple(self.static(x, what) for x in v)
            )
        return v

    def size(self, v: object, what: str) -> int | ss.Dim:
        """A size (an int, or a dimension read from an annotation)."""
        s = self.static(v, what)
        if isinstance(s, ss.Dim):
            c = s.constant_value if s.is_constant else None
            return int(c) if c is not None else s
        if isinstance(s, int) and not isinstance(s, bool):
            return s
        if hasattr(s, "__index__") and not isinstance(s, bool):
            return int(s.__index__())
        raise Unsupported(f"{what} must be an integer, got {_show(s)}")

    def sizes(self, v: object, what: str) -> tuple[int | ss.Dim, ...]:
        """A shape: one size, or a tuple/list/``torch.Size`` of sizes (``x.view(b, -1)`` and
        ``x.view((b, -1))`` both arrive here as a tuple)."""
        if isinstance(v, Opaque):
            self.static(v, what)
        if isinstance(v, (list, tuple)):
            if len(v) == 1 and isinstance(v[0], (list, tuple, Opaque)):
                return self.sizes(v[0], what)
            return tuple(self.size(x, what) for x in v)
        return (self.size(v, what),)

    def ints(self, v: object, what: str) -> tuple[int, ...]:
        """Constant ints (kernel sizes, strides, axes): one int or a sequence."""
        seq = v if isinstance(v, (list, tuple)) else (v,)
        out = []
        for x in seq:
            s = self.size(x, what)
            if not isinstance(s, int):
                raise Unsupported(f"{what} must be constant integers, got {s}")
            out.append(s)
        return tuple(out)

    def integer(self, v: object, what: str) -> int:
        """One constant int (a one-element sequence is accepted too)."""
        return self.ints(v, what)[0]

    def axis(self, v: object, what: str = "dim") -> int:
        return self.integer(v, what)

    def unsupported(self, message: str) -> NoReturn:
        raise Unsupported(message)


def _show(v: object) -> str:
    if isinstance(v, Opaque):
        return v.describe()
    if isinstance(v, Sequence) and not isinstance(v, str):
        return f"a {type(v).__name__} of {len(v)}"
    return type(v).__name__ if not isinstance(v, (int, float, str, type(None))) else repr(v)


_NO_TABLE: Mapping[str, Any] = {}


def module_attr(module: Any, name: str) -> Any:
    """``getattr(module, name, None)``, looked up first among a module's registered parameters
    and buffers (where ``nn.Module.__getattr__``, slower, finds them: a registered name cannot
    also be a plain attribute)."""
    d = getattr(module, "__dict__", None)
    if d is not None:
        hit = d.get("_parameters", _NO_TABLE).get(name)
        if hit is None:
            hit = d.get("_buffers", _NO_TABLE).get(name)
        if hit is not None:
            return hit
    return getattr(module, name, None)
