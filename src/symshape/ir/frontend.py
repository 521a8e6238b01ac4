"""The Pythonic front-end's knowledge of expressions: the kind, arity and dtype an expression is
known to have when it is built, how a Python number next to an expression becomes a constant, and
how numpy indexing lowers to operator calls (:mod:`symshape.ir.indexing` plans the steps).

The methods of :class:`~symshape.ir.sugar.ExprSugar` (``x + 1``, ``x[0]``, ``x.sum()``) delegate
here: this module installs itself with :func:`~symshape.ir.sugar.set_frontend` when imported
(:mod:`symshape.ir` imports it). The operators live in the registry of :mod:`symshape.ir.op`,
which sits above this module: it hands its lookup over with :func:`set_operator_lookup`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from symshape.encoding.types import TensorType, TupleType, Type
from symshape.errors import INVALID_ARGUMENT, SymshapeError
from symshape.ir.indexing import ExpandStep, SliceStep, SqueezeStep, TakeStep, index_plan
from symshape.ir.nodes import Call, Callee, Constant, Constructor, Expr, Tuple, TupleGetItem, Var, const
from symshape.ir.sugar import Frontend, set_frontend

__all__ = ["static_kind", "static_arity", "static_dtype", "set_operator_lookup", "op_call", "binary"]

_operator_lookup: Callable[[str], Callable[..., Call]] | None = None


def set_operator_lookup(lookup: Callable[[str], Callable[..., Call]]) -> None:
    """Install the operator lookup the front-end uses (done once by :mod:`symshape.ir.op`)."""
    global _operator_lookup
    _operator_lookup = lookup


def op_call(name: str, args: Sequence[Expr], attrs: Mapping[str, Any] | None = None) -> Call:
    """The call of the registered operator ``name`` on ``args`` with ``attrs``."""
    if _operator_lookup is None:  # pragma: no cover - symshape.ir.op is imported by the package
        raise SymshapeError(INVALID_ARGUMENT, "the operators are not registered: import symshape")
    return _operator_lookup(name)(*args, **(attrs or {}))


# operators whose result has the dtype of their first argument (followed when a scalar operand
# needs a dtype, and to tell a tensor from a tuple)
_SAME_DTYPE = frozenset(
    """add subtract multiply divide power maximum minimum floor_divide mod nn.relu sigmoid tanh exp
    log sqrt negative abs floor ceil round sign erf rsqrt copy trunc sin cos log2 log10
    zeros_like ones_like nn.leaky_relu clip flatten nn.batch_flatten reshape reshape_like
    concatenate stack transpose squeeze expand_dims broadcast_to nn.pad tile expand sum mean prod
    max min take strided_slice nn.dense matmul nn.batch_matmul nn.conv1d nn.conv2d nn.conv3d
    nn.max_pool1d nn.max_pool2d nn.max_pool3d nn.avg_pool1d nn.avg_pool2d nn.avg_pool3d
    nn.global_avg_pool2d nn.global_max_pool2d nn.adaptive_avg_pool2d nn.adaptive_max_pool2d
    nn.softmax nn.log_softmax nn.bias_add nn.layer_norm unique boolean_mask""".split()
)
_BOOL_RESULT = frozenset(
    "equal not_equal less less_equal greater greater_equal logical_and logical_or logical_not "
    "isnan isinf isfinite all any".split()
)
_OTHER_TENSOR = frozenset(
    "cast cast_like where argmax argmin shape_of int_tensor arange constant_of_shape nonzero zeros "
    "ones full".split()
)
_TUPLE_OPS = frozenset(("split", "nn.batch_norm"))


def _op_name(e: Call) -> str | None:
    name = getattr(e.callee, "name", None) if isinstance(e.callee, Callee) else None
    return name if isinstance(name, str) and not isinstance(e.callee, Constructor) else None


def _annotated_type(e: Expr) -> Type | None:
    """The type ``e`` is known to have when it is built: a variable's annotation, a constant's
    type, a field of an annotated tuple; None otherwise (no inference is run)."""
    if isinstance(e, Var):
        return e.type_annotation
    if isinstance(e, Constant):
        return e.type
    if isinstance(e, TupleGetItem):
        t = _annotated_type(e.tuple_value) if isinstance(e.tuple_value, (Var, Constant)) else None
        if isinstance(t, TupleType) and 0 <= e.index < len(t.fields):
            return t.fields[e.index]
    return None


def static_kind(e: Expr) -> str | None:
    """``"tensor"``, ``"tuple"`` or None (not known when ``e`` is built): from an annotation, a
    constant, a :class:`Tuple`, or the operator a call applies (``split`` and ``batch_norm``
    give tuples, the other built-in operators tensors; a custom operator is not known).

    >>> import symshape as ss
    >>> static_kind(ss.var("x")), static_kind(ss.ops.relu(ss.var("x")))
    (None, 'tensor')
    """
    t = _annotated_type(e)
    if isinstance(t, TensorType):
        return "tensor"
    if isinstance(t, TupleType):
        return "tuple"
    if isinstance(e, Tuple):
        return "tuple"
    if isinstance(e, Call):
        name = _op_name(e)
        if name in _TUPLE_OPS:
            return "tuple"
        if name in _SAME_DTYPE or name in _BOOL_RESULT or name in _OTHER_TENSOR:
            return "tensor"
    if isinstance(e, TupleGetItem) and isinstance(e.tuple_value, Call):
        if _op_name(e.tuple_value) in _TUPLE_OPS:
            return "tensor"
    return None


def static_arity(e: Expr) -> int | None:
    """The number of fields of a tuple-valued ``e`` when it is known at build time: an annotated
    tuple, a :class:`Tuple`, ``split`` with a literal number of sections (or literal indices),
    ``batch_norm`` (3). None otherwise."""
    t = _annotated_type(e)
    if isinstance(t, TupleType):
        return len(t.fields)
    if isinstance(e, Tuple):
        return len(e.fields)
    if isinstance(e, Call):
        name = _op_name(e)
        if name == "nn.batch_norm":
            return 3
        if name == "split":
            ios = e.attrs.get("indices_or_sections")
            if isinstance(ios, int) and not isinstance(ios, bool):
                return ios
            if isinstance(ios, tuple):
                return len(ios) + 1
    return None


def static_dtype(e: Expr) -> str | None:
    """The dtype ``e`` is known to have when it is built (following the first argument of
    dtype-preserving operators), or None.

    >>> import symshape as ss
    >>> x = ss.var("x", ss.Tensor((2,), "float16"))
    >>> static_dtype(ss.ops.relu(ss.ops.add(x, x))), static_dtype(ss.ops.less(x, x))
    ('float16', 'bool')
    """
    cur: Expr | None = e
    for _ in range(100_000):  # a chain of calls is followed iteratively
        if cur is None:
            return None
        t = _annotated_type(cur)
        if t is not None:
            return t.dtype if isinstance(t, TensorType) and isinstance(t.dtype, str) else None
        if isinstance(cur, TupleGetItem):
            cur = cur.tuple_value
            continue
        if isinstance(cur, Tuple):
            cur = cur.fields[0] if cur.fields else None
            continue
        if not isinstance(cur, Call):
            return None
        name = _op_name(cur)
        if name in _BOOL_RESULT:
            return "bool"
        if name == "cast":
            v = cur.attrs.get("dtype")
            return v if isinstance(v, str) else None
        if name in ("argmax", "argmin"):
            return "int32"
        if name in ("shape_of", "nonzero"):
            v = cur.attrs.get("dtype", "int64")
            return v if isinstance(v, str) else "int64"
        if name == "cast_like" and len(cur.args) == 2:
            cur = cur.args[1]
            continue
        if name in ("nn.dense", "nn.conv1d", "nn.conv2d", "nn.conv3d", "nn.batch_matmul"):
            v = cur.attrs.get("out_dtype")
            if isinstance(v, str) and v:
                return v
        if name in _SAME_DTYPE or name in _TUPLE_OPS:
            cur = cur.args[0] if cur.args else None
            continue
        return None
    return None  # pragma: no cover


def _is_scalar(v: object) -> bool:
    """A Python (or numpy) number: bool, int or float."""
    if isinstance(v, (bool, int, float)):
        return True
    mod = (getattr(type(v), "__module__", "") or "").split(".")[0]
    return mod == "numpy" and getattr(v, "shape", None) == () and hasattr(v, "dtype")


def _scalar_like(v: Any, other: Expr) -> Expr:
    """The number ``v`` as a 0-d constant of ``other``'s dtype: a :class:`Constant` when that
    dtype is known at build time (a float for an int or bool tensor keeps its own float dtype,
    as numpy would promote), else ``cast_like(v, other)``."""
    import numpy as np

    dt = static_dtype(other)
    is_float = isinstance(v, float) or (not isinstance(v, (bool, int)) and np.asarray(v).dtype.kind == "f")
    if dt is not None and not (is_float and (dt == "bool" or dt.startswith(("int", "uint")))):
        try:
            return const(np.array(v, dtype=dt))
        except (OverflowError, ValueError, TypeError):
            pass
    c = const(v)
    if dt is not None:
        return c
    return op_call("cast_like", [c, other])


def _operand(v: Any, other: Expr, opname: str) -> Expr:
    if isinstance(v, Expr):
        return v
    if _is_scalar(v):
        return _scalar_like(v, other)
    if hasattr(v, "shape") and hasattr(v, "dtype"):  # a numpy array
        return const(v)
    from symshape.encoding.dims import Dim

    if isinstance(v, Dim):
        raise SymshapeError(
            INVALID_ARGUMENT,
            f"{opname}: a dimension ({v}) is not a tensor; make it one with "
            "ss.ops.int_tensor(d) (its value is the dimension)",
        )
    raise SymshapeError(
        INVALID_ARGUMENT, f"{opname}: cannot combine an expression with {type(v).__name__} {v!r}"
    )


def binary(name: str, a: Any, b: Any) -> Call:
    if isinstance(a, Expr):
        ea = a
        eb = _operand(b, a, name)
    else:
        assert isinstance(b, Expr)
        eb = b
        ea = _operand(a, b, name)
    return op_call(name, [ea, eb])


def _is_int_index(v: object) -> bool:
    if isinstance(v, bool) or isinstance(v, Expr):
        return False
    if isinstance(v, int):
        return True
    mod = (getattr(type(v), "__module__", "") or "").split(".")[0]
    return mod == "numpy" and hasattr(v, "__index__")


def _index_tensor(x: Expr, index: Any) -> Expr:
    """numpy indexing of a tensor (see :mod:`symshape.ir.indexing`)."""
    items = index if isinstance(index, tuple) else (index,)
    out: Expr = x
    for step in index_plan(index, lambda v: isinstance(v, Expr)):
        match step:
            case SliceStep(begin, end, strides, axes):
                out = op_call(
                    "strided_slice", [out], {"begin": begin, "end": end, "strides": strides, "axes": axes}
                )
            case SqueezeStep(axes):
                out = op_call("squeeze", [out], {"axis": axes})
            case ExpandStep(axis):
                out = op_call("expand_dims", [out], {"axis": axis, "num_newaxis": 1})
            case TakeStep(item, axis):
                idx = items[item]
                if static_dtype(idx) == "bool":
                    if axis != 0:
                        raise SymshapeError(
                            INVALID_ARGUMENT,
                            "a boolean mask index is supported on the leading axes only "
                            "(x[mask]); use ss.ops.boolean_mask",
                        )
                    out = op_call("boolean_mask", [out, idx], {"size": None})
                else:
                    out = op_call("take", [out, idx], {"axis": axis})
            case _:  # pragma: no cover - the plan has only these steps
                raise TypeError(step)
    return out


def getitem(x: Expr, index: Any) -> Expr:
    """``x[index]`` (see :meth:`~symshape.ir.sugar.ExprSugar.__getitem__`)."""
    kind = static_kind(x)
    if kind == "tuple" or (kind is None and _is_int_index(index)):
        if not _is_int_index(index):
            raise SymshapeError(
                INVALID_ARGUMENT,
                f"a tuple is indexed by an int, got {type(index).__name__} {index!r}",
            )
        i = int(index)
        if i < 0:
            n = static_arity(x)
            if n is None:
                raise SymshapeError(
                    INVALID_ARGUMENT,
                    f"a negative tuple index ({i}) needs the tuple's arity, which is not known "
                    "when the expression is built",
                )
            i += n
        return TupleGetItem(x, i)
    return _index_tensor(x, index)


def iterate(x: Expr) -> Iterator[Expr]:
    """``iter(x)``: the fields of a tuple whose arity is known when it is built."""
    n = static_arity(x)
    if n is None:
        raise SymshapeError(
            INVALID_ARGUMENT,
            f"an expression ({type(x).__name__}) cannot be iterated or unpacked: its arity "
            "is not known when it is built (a tuple annotation, a Tuple, split with a literal "
            "number of sections or batch_norm have one); index it (`e[0]`, `e[1]`) instead",
        )
    return iter([TupleGetItem(x, i) for i in range(n)])


set_frontend(Frontend(binary=binary, op_call=op_call, getitem=getitem, iterate=iterate))
