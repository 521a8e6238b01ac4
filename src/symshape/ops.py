"""Operator constructors: ``ss.ops.add(x, y)``, ``ss.ops.conv2d(x, w, ...)``, ...

Each operator is registered once (:func:`symshape.ir.op.register_op`) under Relay's name (with
the ``nn.`` prefix where Relay has one: ``nn.conv2d``, ``nn.relu``, ...) with the relation that
types it, an attribute checker (a bad *literal* attribute raises
:class:`~symshape.errors.SymshapeError` ``bad-attribute`` when the call is built) and, where one
applies, a ``normalize`` hook (seed 003): reshape special values become explicit dimensions when
every output dimension is known, negative axes become non-negative, ``transpose(x)`` and ``squeeze(x)``
get explicit axes. The functions here drop the ``nn.`` prefix.

Every operator declares the attributes it takes (``attr_types``, see :mod:`symshape.ir.op`): a
call with an unknown or misspelt attribute (``Op.get("sum")(x, axes=1)``: "did you mean
`axis`?") or a value of the wrong kind (``layer_norm(..., epsilon="a")``) raises ``bad-attribute``
when it is built.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from symshape.encoding.conds import BoolConst
from symshape.encoding.dims import AnyDim, Dim
from symshape.encoding.types import Attrs, TensorType, TupleType, Type
from symshape.encoding.values import VALUE_DTYPES
from symshape.errors import INVALID_ARGUMENT, SymshapeError
from symshape.ir.expr import Call, Constant, Expr, const
from symshape.ir.op import OPS, Op, register_op
from symshape.relations.common import (
    attr_axes,
    attr_bool,
    attr_dtype,
    attr_int,
    attr_shape,
    attr_str,
    bad,
)
from symshape.relations.dynamic import parse_int_value
from symshape.relations.index import BIG, parse_slice_attrs
from symshape.relations.nn import parse_conv_attrs, parse_layout, parse_output_size, parse_pool_attrs
from symshape.relations.shape import parse_newshape, parse_pad_width, parse_split, reshape_dims

__all__ = [
    # elementwise
    "add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "floor_divide", "mod",
    "logical_and", "logical_or",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "relu", "sigmoid", "tanh", "exp", "log", "sqrt", "negative", "abs", "floor", "ceil", "round",
    "sign", "erf", "rsqrt", "copy", "trunc", "sin", "cos", "log2", "log10", "logical_not",
    "zeros_like", "ones_like", "leaky_relu", "clip", "isnan", "isinf", "isfinite",
    "where", "cast", "cast_like",
    # shape
    "flatten", "batch_flatten", "reshape", "reshape_like", "concatenate", "stack", "split",
    "transpose", "squeeze", "expand_dims", "broadcast_to", "pad", "zeros", "ones", "full",
    "tile", "expand",
    # shape values and data-dependent sizes
    "shape_of", "int_tensor", "arange", "constant_of_shape", "nonzero", "unique", "boolean_mask",
    # reductions
    "sum", "mean", "prod", "max", "min", "all", "any", "argmax", "argmin",
    # indexing
    "take", "strided_slice",
    # linear algebra
    "dense", "matmul", "batch_matmul",
    # nn
    "conv1d", "conv2d", "conv3d",
    "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "global_avg_pool2d", "global_max_pool2d", "adaptive_avg_pool2d", "adaptive_max_pool2d",
    "softmax", "log_softmax", "bias_add", "layer_norm", "batch_norm",
]  # fmt: skip

_py_sum, _py_max, _py_min, _py_abs, _py_all, _py_any = (
    builtins.sum,
    builtins.max,
    builtins.min,
    builtins.abs,
    builtins.all,
    builtins.any,
)

CheckFn = Callable[[Attrs, int], Mapping[str, Any] | None]


# ----------------------------------------------------------------------------------------------
# normalization hooks


def _rank_of(types: Sequence[Type], stacked: bool = False) -> int | None:
    if not types:
        return None
    t = types[0]
    if isinstance(t, TupleType):
        if not t.fields:
            return None
        t = t.fields[0]
    if isinstance(t, TensorType) and t.ndim is not None:
        return t.ndim + (1 if stacked else 0)
    return None


def _rebuild(call: Call, changes: Mapping[str, object]) -> Call:
    attrs = dict(call.attrs)
    attrs.update(changes)
    new = Call(call.callee, call.args, attrs)
    new.span = call.span
    return new


def _axis_normalizer(
    name: str, *, extra: int = 0, default: object = None
) -> Callable[[Call, Sequence[Type]], Expr | None]:
    """Negative axes (an int or a sequence) become non-negative, once the rank is known."""

    def normalize(call: Call, types: Sequence[Type]) -> Expr | None:
        v = call.attrs.get(name, default)
        rank = _rank_of(types)
        if v is None or rank is None:
            return None
        r = rank + extra
        if isinstance(v, int) and not isinstance(v, bool):
            if -r <= v < 0:
                return _rebuild(call, {name: v + r})
            return None
        if isinstance(v, tuple) and _py_any(isinstance(a, int) and -r <= a < 0 for a in v):
            return _rebuild(
                call, {name: tuple(a + r if isinstance(a, int) and -r <= a < 0 else a for a in v)}
            )
        return None

    return normalize


def _known(d: Dim) -> bool:
    """A dimension that can be written in an attribute: no solver unknown and no anonymous ``?``
    (a ``?`` is renumbered each time a program is inferred, so it names nothing)."""
    return not d.has_unknowns and not _py_any(isinstance(a, AnyDim) for a in d.atoms())


def _normalize_reshape(call: Call, types: Sequence[Type]) -> Expr | None:
    """Special values (0, -1, -2, -3, -4) become the explicit output dimensions, symbolic ones
    included, once every output dimension is known and the reshape needs no guard."""
    try:
        spec = parse_newshape(call.attrs)
    except Exception:
        return None
    allowzero = bool(call.attrs.get("allowzero", False))
    if _py_all(isinstance(s, Dim) or s > 0 or (allowzero and s == 0) for s in spec):
        return None
    t = types[0] if types else None
    if not isinstance(t, TensorType) or t.ndim is None:
        return None
    dims, conds, err = reshape_dims(t.dims, spec, allowzero)
    if err is not None or _py_any(c != BoolConst(True) for c, _ in conds):
        # invalid, or valid only under a guard: the special values say it more plainly than the
        # explicit dimensions would (``-1`` rather than ``12*n//5``), so the call stays as written
        return None
    if not _py_all(_known(d) for d in dims):
        return None
    if not allowzero and _py_any(d.constant_value == 0 for d in dims):
        return None  # an explicit 0 would mean "copy" again
    newshape = tuple(d.constant_value if d.is_constant else d for d in dims)
    if newshape == tuple(spec):
        return None
    return _rebuild(call, {"newshape": newshape})


def _normalize_transpose(call: Call, types: Sequence[Type]) -> Expr | None:
    rank = _rank_of(types)
    if rank is None:
        return None
    axes = call.attrs.get("axes")
    if axes is None:
        return _rebuild(call, {"axes": tuple(range(rank - 1, -1, -1))})
    return _axis_normalizer("axes")(call, types)


def _squeezed_axes(dims: Sequence[Dim], result: Type | None) -> tuple[int, ...] | None:
    """The axes ``squeeze`` without ``axis`` drops: the constant 1s, and the symbolic dimensions
    the relation proved to be 1 (read off its result: the kept dimensions are copied, in order).
    None when that cannot be told."""
    if _py_all(d.is_constant for d in dims):
        return tuple(i for i, d in enumerate(dims) if d == 1)
    if not isinstance(result, TensorType) or result.ndim is None:
        return None
    out = result.dims
    drop: list[int] = []
    j = 0
    for i, d in enumerate(dims):
        if d == 1:
            drop.append(i)
        elif j < len(out) and out[j] == d:
            j += 1
        elif d.is_constant:
            return None  # a constant other than 1 is always kept
        else:
            drop.append(i)
    return tuple(drop) if j == len(out) else None


def _normalize_squeeze(call: Call, types: Sequence[Type]) -> Expr | None:
    """``squeeze(x)`` gets the explicit axes of the dimensions it drops (constant 1s and symbols
    proved to be 1; a symbol kept under the guard ``n != 1`` stays); negative axes become
    non-negative. The call's inferred result type, when given as ``types.result``, tells which
    symbols were proved to be 1."""
    t = types[0] if types else None
    if call.attrs.get("axis") is None:
        if isinstance(t, TensorType) and t.ndim is not None:
            axes = _squeezed_axes(t.dims, getattr(types, "result", None))
            if axes is not None:
                return _rebuild(call, {"axis": axes})
        return None
    return _axis_normalizer("axis")(call, types)


# ----------------------------------------------------------------------------------------------
# attribute checkers


def _check(fn: Callable[[Attrs, str], object], op: str) -> CheckFn:
    def check(attrs: Attrs, nargs: int) -> None:
        fn(attrs, op)
        return None

    return check


def _chk_axis(attrs: Attrs, op: str) -> None:
    attr_int(attrs, "axis", None, op)


def _chk_reduce(attrs: Attrs, op: str) -> None:
    attr_axes(attrs, "axis", op)
    attr_bool(attrs, "keepdims", False, op)
    attr_bool(attrs, "exclude", False, op)


def _chk_transpose(attrs: Attrs, op: str) -> None:
    attr_axes(attrs, "axes", op)


def _chk_squeeze(attrs: Attrs, op: str) -> None:
    attr_axes(attrs, "axis", op)


def _chk_reshape(attrs: Attrs, op: str) -> None:
    parse_newshape(attrs, op)
    attr_bool(attrs, "allowzero", False, op)


def _chk_expand(attrs: Attrs, op: str) -> None:
    attr_int(attrs, "axis", None, op)
    attr_int(attrs, "num_newaxis", 1, op, lo=0)


def _chk_split(attrs: Attrs, op: str) -> None:
    parse_split(attrs, op)
    attr_int(attrs, "axis", 0, op)


def _chk_shape(attrs: Attrs, op: str) -> None:
    attr_shape(attrs, "shape", op)


def _chk_init(attrs: Attrs, op: str) -> None:
    attr_shape(attrs, "shape", op)
    attr_dtype(attrs, "dtype", op)


def _chk_cast(attrs: Attrs, op: str) -> None:
    attr_dtype(attrs, "dtype", op, required=True)


def _chk_pad(attrs: Attrs, op: str) -> None:
    parse_pad_width(attrs, op)


def _chk_take(attrs: Attrs, op: str) -> None:
    if attrs.get("axis") is not None:
        attr_int(attrs, "axis", None, op)
    attr_int(attrs, "batch_dims", 0, op)
    attr_str(attrs, "mode", "clip", op, ("clip", "wrap", "fast", "raise"))


def _chk_slice(attrs: Attrs, op: str) -> None:
    parse_slice_attrs(attrs, op)


def _nargs(
    fn: Callable[[Attrs, str], object], op: str, literal: int, dynamic: int, names: Sequence[str]
) -> CheckFn:
    """A checker for an operator that takes its shape (or sizes) either as the attributes
    ``names`` (with ``literal`` inputs) or as one more input tensor (``dynamic`` inputs)."""

    def check(attrs: Attrs, nargs: int) -> None:
        if nargs == literal:
            fn(attrs, op)
        elif nargs == dynamic:
            given = [n for n in names if attrs.get(n) is not None]
            if given:
                raise bad(op, f"{given[0]} is given both as an input and as an attribute")
            if attrs.get("dtype") is not None:
                attr_dtype(attrs, "dtype", op)
            if attrs.get("allowzero") is not None:
                attr_bool(attrs, "allowzero", False, op)
        else:
            raise SymshapeError(
                INVALID_ARGUMENT, f"{op} takes {literal} or {dynamic} inputs, got {nargs}"
            )
        return None

    return check


def _chk_slice_nargs(attrs: Attrs, nargs: int) -> None:
    if nargs == 1:
        parse_slice_attrs(attrs, "strided_slice")
    elif nargs in (3, 4):
        for n in ("begin", "end", "strides"):
            if attrs.get(n) is not None:
                raise bad("strided_slice", f"{n} is given both as an input and as an attribute")
        attr_axes(attrs, "axes", "strided_slice")
        attr_str(attrs, "slice_mode", "end", "strided_slice", ("end", "size"))
    else:
        raise SymshapeError(
            INVALID_ARGUMENT,
            f"strided_slice takes 1 input (x) or 3 or 4 (x, begin, end, strides), got {nargs}",
        )


def _chk_int_tensor(attrs: Attrs, op: str) -> None:
    parse_int_value(attrs, op)
    dt = attr_dtype(attrs, "dtype", op)
    if dt is not None and dt not in VALUE_DTYPES:
        raise bad(op, f"dtype must be int32 or int64, got {dt}")


def _dimlike(x: object) -> bool:
    return isinstance(x, (int, Dim)) and not isinstance(x, bool)


def _chk_reps(name: str) -> Callable[[Attrs, str], None]:
    def chk(attrs: Attrs, op: str) -> None:
        v = attrs.get(name)
        if isinstance(v, (int, Dim)) and not isinstance(v, bool):
            v = (v,)
        if not isinstance(v, tuple) or not _py_all(_dimlike(x) for x in v):
            raise bad(op, f"{name} must be a sequence of ints or dimensions, got {v!r}")
        for x in v:
            c = x if isinstance(x, int) else x.constant_value
            if c is not None and c < (-1 if name == "shape" else 0):
                raise bad(op, f"{name} has a negative entry {c}")

    return chk


def _chk_size(attrs: Attrs, op: str) -> None:
    v = attrs.get("size")
    if v is not None and not (isinstance(v, Dim) and v.is_symbol):
        raise bad(op, f"size must be a symbol (ss.dim('u', min=0)), got {v!r}")


def _chk_dense(attrs: Attrs, op: str) -> None:
    if attrs.get("units") is not None:
        attr_int(attrs, "units", None, op, lo=1)
    attr_dtype(attrs, "out_dtype", op)


def _chk_bmm(attrs: Attrs, op: str) -> None:
    attr_bool(attrs, "transpose_a", False, op)
    attr_bool(attrs, "transpose_b", True, op)
    attr_dtype(attrs, "out_dtype", op)


def _chk_conv(nd: int) -> Callable[[Attrs, str], None]:
    def chk(attrs: Attrs, op: str) -> None:
        parse_conv_attrs(attrs, nd, op)

    return chk


def _chk_pool(nd: int) -> Callable[[Attrs, str], None]:
    def chk(attrs: Attrs, op: str) -> None:
        parse_pool_attrs(attrs, nd, op)

    return chk


def _chk_layout2d(attrs: Attrs, op: str) -> None:
    parse_layout(attrs.get("layout", "NCHW"), "NCHW", op, "layout")


def _chk_adaptive(attrs: Attrs, op: str) -> None:
    _chk_layout2d(attrs, op)
    parse_output_size(attrs, 2, op)


def _chk_like(attrs: Attrs, op: str) -> None:
    attr_dtype(attrs, "dtype", op)


def _chk_norm_axes(attrs: Attrs, op: str) -> None:
    attr_axes(attrs, "axis", op, default=-1)


def _chk_clip(attrs: Attrs, op: str) -> None:
    for k in ("a_min", "a_max"):
        v = attrs.get(k)
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            raise bad(op, f"attribute {k} must be a number, got {v!r}")


def _chk_leaky(attrs: Attrs, op: str) -> None:
    v = attrs.get("alpha", 0.01)
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        raise bad(op, f"attribute alpha must be a number, got {v!r}")


# ----------------------------------------------------------------------------------------------
# registration
#
# Every operator declares the attributes it takes (name -> kind, see ``symshape.ir.op.ATTR_KINDS``):
# a call with an attribute it does not know, or a value of the wrong kind, raises ``bad-attribute``
# when it is built. The checkers validate the values further.

_BINARY = (
    "add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "floor_divide", "mod",
    "logical_and", "logical_or",
)  # fmt: skip
_COMPARE = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")
# Relax registers these as float-only (``require_float_dtype``): an int or bool tensor is an error
_UNARY_FLOAT = (
    "sigmoid", "tanh", "exp", "log", "sqrt", "erf", "rsqrt", "sin", "cos", "log2", "log10",
)  # fmt: skip
_UNARY = (
    "nn.relu", "negative", "abs", "floor", "ceil", "round", "sign", "copy", "trunc", "logical_not",
)  # fmt: skip

_REDUCE_ATTRS = {"axis": "ints", "keepdims": "bool", "exclude": "bool"}
_CONV_ATTRS = {
    "strides": "ints",
    "padding": "ints",
    "dilation": "ints",
    "groups": "int",
    "channels": "int",
    "kernel_size": "ints",
    "data_layout": "str",
    "kernel_layout": "str",
    "out_layout": "str",
    "out_dtype": "dtype",
}
_POOL_ATTRS = {
    "pool_size": "ints",
    "strides": "ints",
    "padding": "ints",
    "dilation": "ints",
    "ceil_mode": "bool",
    "layout": "str",
    "out_layout": "str",
}
_NO_ATTRS: dict[str, str] = {}

# arithmetic that computes shape values has a relation of its own (the broadcast rule plus the
# value of the result: symshape.relations.values); the others share ``broadcast``
_VALUED = ("add", "subtract", "multiply", "divide", "floor_divide", "mod", "maximum", "minimum")
for _n in _BINARY:
    register_op(
        _n,
        _n if _n in _VALUED else "broadcast",
        2,
        doc="numpy-broadcasting elementwise operator",
        attr_types=_NO_ATTRS,
    )
for _n in _COMPARE:
    register_op(_n, "broadcast_bool", 2, doc="comparison with a bool result", attr_types=_NO_ATTRS)
for _n in _UNARY:
    register_op(_n, "unary", 1, doc="elementwise unary operator", attr_types=_NO_ATTRS)
for _n in _UNARY_FLOAT:
    register_op(_n, "unary_float", 1, doc="elementwise unary operator on float tensors", attr_types=_NO_ATTRS)
for _n in ("zeros_like", "ones_like"):
    register_op(
        _n,
        "init_like",
        1,
        check_attrs=_check(_chk_like, _n),
        doc="a constant tensor of the input's shape",
        attr_types={"dtype": "dtype"},
    )
for _n in ("isnan", "isinf", "isfinite"):
    register_op(_n, "identity_bool", 1, doc="elementwise predicate with a bool result", attr_types=_NO_ATTRS)
register_op(
    "nn.leaky_relu",
    "unary_float",
    1,
    check_attrs=_check(_chk_leaky, "nn.leaky_relu"),
    attr_types={"alpha": "float"},
)
register_op(
    "clip", "unary", 1, check_attrs=_check(_chk_clip, "clip"), attr_types={"a_min": "float", "a_max": "float"}
)
register_op("where", "where", 3, attr_types=_NO_ATTRS)
register_op("cast", "cast", 1, check_attrs=_check(_chk_cast, "cast"), attr_types={"dtype": "dtype"})
register_op("cast_like", "cast_like", 2, attr_types=_NO_ATTRS)

register_op(
    "flatten",
    "flatten",
    1,
    check_attrs=_check(_chk_axis, "flatten"),
    normalize=_axis_normalizer("axis"),
    attr_types={"axis": "int"},
)
register_op("nn.batch_flatten", "flatten", 1, attr_types=_NO_ATTRS)
register_op(
    "reshape",
    "reshape",
    -1,
    check_attrs=_nargs(_chk_reshape, "reshape", 1, 2, ("newshape",)),
    normalize=_normalize_reshape,
    attr_types={"newshape": "shape", "allowzero": "bool"},
)
register_op("reshape_like", "reshape_like", 2, attr_types=_NO_ATTRS)
register_op(
    "concatenate",
    "concatenate",
    1,
    check_attrs=_check(_chk_axis, "concatenate"),
    normalize=_axis_normalizer("axis"),
    attr_types={"axis": "int"},
)
register_op(
    "stack",
    "stack",
    1,
    check_attrs=_check(_chk_axis, "stack"),
    normalize=_axis_normalizer("axis", extra=1),
    attr_types={"axis": "int"},
)
register_op(
    "split",
    "split",
    1,
    check_attrs=_check(_chk_split, "split"),
    normalize=_axis_normalizer("axis"),
    attr_types={"indices_or_sections": "ints", "axis": "int"},
)
register_op(
    "transpose",
    "transpose",
    1,
    check_attrs=_check(_chk_transpose, "transpose"),
    normalize=_normalize_transpose,
    attr_types={"axes": "ints"},
)
register_op(
    "squeeze",
    "squeeze",
    1,
    check_attrs=_check(_chk_squeeze, "squeeze"),
    normalize=_normalize_squeeze,
    attr_types={"axis": "ints"},
)
register_op(
    "expand_dims",
    "expand_dims",
    1,
    check_attrs=_check(_chk_expand, "expand_dims"),
    normalize=_axis_normalizer("axis", extra=1),
    attr_types={"axis": "int", "num_newaxis": "int"},
)
register_op(
    "broadcast_to",
    "broadcast_to",
    -1,
    check_attrs=_nargs(_chk_shape, "broadcast_to", 1, 2, ("shape",)),
    attr_types={"shape": "shape"},
)
register_op(
    "nn.pad",
    "pad",
    1,
    check_attrs=_check(_chk_pad, "nn.pad"),
    attr_types={"pad_width": "pairs", "pad_value": "float", "pad_mode": "str"},
)
for _n in ("zeros", "ones"):
    register_op(
        _n,
        "init_tensor",
        -1,
        check_attrs=_nargs(_chk_init, _n, 0, 1, ("shape",)),
        attr_types={"shape": "shape", "dtype": "dtype"},
    )
register_op(
    "constant_of_shape",
    "init_tensor",
    1,
    check_attrs=_check(lambda a, op: attr_dtype(a, "dtype", op), "constant_of_shape"),
    doc="ONNX ConstantOfShape: a tensor of the shape its input holds",
    attr_types={"dtype": "dtype", "value": "float"},
)
register_op(
    "full",
    "full",
    -1,
    check_attrs=_nargs(_chk_init, "full", 1, 2, ("shape",)),
    doc="a tensor of a shape filled with a scalar",
    attr_types={"shape": "shape", "dtype": "dtype"},
)
register_op(
    "shape_of",
    "shape_of",
    1,
    check_attrs=_check(lambda a, op: attr_dtype(a, "dtype", op), "shape_of"),
    doc="the shape of a tensor as a 1-d int tensor carrying it as its value",
    attr_types={"dtype": "dtype"},
)
register_op(
    "int_tensor",
    "int_tensor",
    0,
    check_attrs=_check(_chk_int_tensor, "int_tensor"),
    doc="a 0-d or 1-d int tensor with a known value of ints and dimensions",
    attr_types={"value": "indices", "dtype": "dtype"},
)
register_op(
    "arange",
    "arange",
    3,
    check_attrs=_check(lambda a, op: attr_dtype(a, "dtype", op), "arange"),
    doc="numpy arange / ONNX Range over 0-d tensors start, stop, step",
    attr_types={"dtype": "dtype"},
)
register_op(
    "tile",
    "tile",
    -1,
    check_attrs=_nargs(_chk_reps("reps"), "tile", 1, 2, ("reps",)),
    doc="numpy tile",
    attr_types={"reps": "indices"},
)
register_op(
    "expand",
    "expand",
    -1,
    check_attrs=_nargs(_chk_reps("shape"), "expand", 1, 2, ("shape",)),
    doc="torch/ONNX expand: broadcast with a shape, -1 keeps a dimension",
    attr_types={"shape": "indices"},
)
for _n, _k in (("nonzero", 1), ("unique", 1), ("boolean_mask", 2)):
    register_op(
        _n,
        _n,
        _k,
        check_attrs=_check(_chk_size, _n),
        doc="an operator whose result has a data-dependent size",
        attr_types={"size": "shape", "axis": "int"} if _n == "unique" else {"size": "shape"},
    )

for _n in ("sum", "mean", "prod", "all", "any"):
    register_op(
        _n,
        "reduce",
        1,
        check_attrs=_check(_chk_reduce, _n),
        normalize=_axis_normalizer("axis"),
        attr_types=_REDUCE_ATTRS,
    )
for _n in ("max", "min"):
    register_op(
        _n,
        "reduce_nonempty",
        1,
        check_attrs=_check(_chk_reduce, _n),
        normalize=_axis_normalizer("axis"),
        attr_types=_REDUCE_ATTRS,
    )
for _n in ("argmax", "argmin"):
    register_op(
        _n,
        "arg_reduce",
        1,
        check_attrs=_check(_chk_reduce, _n),
        normalize=_axis_normalizer("axis"),
        attr_types=_REDUCE_ATTRS,
    )

register_op(
    "take",
    "take",
    2,
    check_attrs=_check(_chk_take, "take"),
    normalize=_axis_normalizer("axis"),
    attr_types={"axis": "int", "batch_dims": "int", "mode": "str"},
)
register_op(
    "strided_slice",
    "strided_slice",
    -1,
    check_attrs=_chk_slice_nargs,
    normalize=_axis_normalizer("axes"),
    attr_types={"begin": "indices", "end": "indices", "strides": "ints", "axes": "ints", "slice_mode": "str"},
)

register_op(
    "nn.dense",
    "dense",
    2,
    check_attrs=_check(_chk_dense, "nn.dense"),
    attr_types={"units": "int", "out_dtype": "dtype"},
)
register_op(
    "matmul",
    "matmul",
    2,
    check_attrs=_check(lambda a, op: attr_dtype(a, "out_dtype", op), "matmul"),
    attr_types={"out_dtype": "dtype"},
)
register_op(
    "nn.batch_matmul",
    "batch_matmul",
    2,
    check_attrs=_check(_chk_bmm, "nn.batch_matmul"),
    attr_types={"transpose_a": "bool", "transpose_b": "bool", "out_dtype": "dtype"},
)

for _nd in (1, 2, 3):
    register_op(
        f"nn.conv{_nd}d",
        f"conv{_nd}d",
        2,
        check_attrs=_check(_chk_conv(_nd), f"nn.conv{_nd}d"),
        attr_types=_CONV_ATTRS,
    )
    for _kind in ("max", "avg"):
        _name = f"nn.{_kind}_pool{_nd}d"
        register_op(
            _name,
            f"pool{_nd}d",
            1,
            check_attrs=_check(_chk_pool(_nd), _name),
            attr_types=_POOL_ATTRS if _kind == "max" else {**_POOL_ATTRS, "count_include_pad": "bool"},
        )
for _kind in ("avg", "max"):
    register_op(
        f"nn.global_{_kind}_pool2d",
        "global_pool2d",
        1,
        check_attrs=_check(_chk_layout2d, f"nn.global_{_kind}_pool2d"),
        attr_types={"layout": "str", "out_layout": "str"},
    )
    register_op(
        f"nn.adaptive_{_kind}_pool2d",
        "adaptive_pool2d",
        1,
        check_attrs=_check(_chk_adaptive, f"nn.adaptive_{_kind}_pool2d"),
        attr_types={"output_size": "sizes", "layout": "str", "out_layout": "str"},
    )

for _n in ("nn.softmax", "nn.log_softmax"):
    register_op(
        _n,
        "softmax",
        1,
        check_attrs=_check(_chk_axis, _n),
        normalize=_axis_normalizer("axis", default=-1),
        attr_types={"axis": "int"},
    )
register_op(
    "nn.bias_add",
    "bias_add",
    2,
    check_attrs=_check(_chk_axis, "nn.bias_add"),
    normalize=_axis_normalizer("axis"),
    attr_types={"axis": "int"},
)
register_op(
    "nn.layer_norm",
    "layer_norm",
    3,
    check_attrs=_check(_chk_norm_axes, "nn.layer_norm"),
    normalize=_axis_normalizer("axis"),
    attr_types={"axis": "ints", "epsilon": "float", "center": "bool", "scale": "bool"},
)
register_op(
    "nn.batch_norm",
    "batch_norm",
    5,
    check_attrs=_check(_chk_axis, "nn.batch_norm"),
    normalize=_axis_normalizer("axis"),
    attr_types={"axis": "int", "epsilon": "float", "center": "bool", "scale": "bool"},
)


def _get(name: str) -> Op:
    """The operator registered as ``name`` (looked up at each call: a re-registration counts)."""
    op = OPS.get(name)
    return op if op is not None else Op.get(name)


IntOrInts = int | Sequence[int]
Axes = int | Sequence[int] | None
Exprs = Sequence[Expr] | Expr

# ----------------------------------------------------------------------------------------------
# elementwise


def add(x: Expr, y: Expr) -> Call:
    """Elementwise ``x + y`` with numpy broadcasting."""
    return _get("add")(x, y)


def subtract(x: Expr, y: Expr) -> Call:
    """Elementwise ``x - y`` with numpy broadcasting."""
    return _get("subtract")(x, y)


def multiply(x: Expr, y: Expr) -> Call:
    """Elementwise ``x * y`` with numpy broadcasting."""
    return _get("multiply")(x, y)


def divide(x: Expr, y: Expr) -> Call:
    """Elementwise ``x / y`` with numpy broadcasting."""
    return _get("divide")(x, y)


def power(x: Expr, y: Expr) -> Call:
    """Elementwise ``x ** y`` with numpy broadcasting."""
    return _get("power")(x, y)


def maximum(x: Expr, y: Expr) -> Call:
    """Elementwise maximum with numpy broadcasting."""
    return _get("maximum")(x, y)


def minimum(x: Expr, y: Expr) -> Call:
    """Elementwise minimum with numpy broadcasting."""
    return _get("minimum")(x, y)


def floor_divide(x: Expr, y: Expr) -> Call:
    """Elementwise ``x // y`` with numpy broadcasting."""
    return _get("floor_divide")(x, y)


def mod(x: Expr, y: Expr) -> Call:
    """Elementwise ``x % y`` with numpy broadcasting."""
    return _get("mod")(x, y)


def logical_and(x: Expr, y: Expr) -> Call:
    """Elementwise logical and with numpy broadcasting."""
    return _get("logical_and")(x, y)


def logical_or(x: Expr, y: Expr) -> Call:
    """Elementwise logical or with numpy broadcasting."""
    return _get("logical_or")(x, y)


def equal(x: Expr, y: Expr) -> Call:
    """Elementwise ``x == y`` (bool) with numpy broadcasting."""
    return _get("equal")(x, y)


def not_equal(x: Expr, y: Expr) -> Call:
    """Elementwise ``x != y`` (bool) with numpy broadcasting."""
    return _get("not_equal")(x, y)


def less(x: Expr, y: Expr) -> Call:
    """Elementwise ``x < y`` (bool) with numpy broadcasting."""
    return _get("less")(x, y)


def less_equal(x: Expr, y: Expr) -> Call:
    """Elementwise ``x <= y`` (bool) with numpy broadcasting."""
    return _get("less_equal")(x, y)


def greater(x: Expr, y: Expr) -> Call:
    """Elementwise ``x > y`` (bool) with numpy broadcasting."""
    return _get("greater")(x, y)


def greater_equal(x: Expr, y: Expr) -> Call:
    """Elementwise ``x >= y`` (bool) with numpy broadcasting."""
    return _get("greater_equal")(x, y)


def relu(x: Expr) -> Call:
    """``max(x, 0)`` elementwise (``nn.relu``)."""
    return _get("nn.relu")(x)


def sigmoid(x: Expr) -> Call:
    """Logistic sigmoid, elementwise."""
    return _get("sigmoid")(x)


def tanh(x: Expr) -> Call:
    """Hyperbolic tangent, elementwise."""
    return _get("tanh")(x)


def exp(x: Expr) -> Call:
    """Exponential, elementwise."""
    return _get("exp")(x)


def log(x: Expr) -> Call:
    """Natural logarithm, elementwise."""
    return _get("log")(x)


def sqrt(x: Expr) -> Call:
    """Square root, elementwise."""
    return _get("sqrt")(x)


def negative(x: Expr) -> Call:
    """``-x`` elementwise."""
    return _get("negative")(x)


def abs(x: Expr) -> Call:
    """Absolute value, elementwise."""
    return _get("abs")(x)


def floor(x: Expr) -> Call:
    """Floor, elementwise."""
    return _get("floor")(x)


def ceil(x: Expr) -> Call:
    """Ceiling, elementwise."""
    return _get("ceil")(x)


def round(x: Expr) -> Call:
    """Round to nearest, elementwise."""
    return _get("round")(x)


def sign(x: Expr) -> Call:
    """Sign (-1, 0, 1), elementwise."""
    return _get("sign")(x)


def erf(x: Expr) -> Call:
    """Error function, elementwise."""
    return _get("erf")(x)


def rsqrt(x: Expr) -> Call:
    """``1 / sqrt(x)`` elementwise."""
    return _get("rsqrt")(x)


def copy(x: Expr) -> Call:
    """A copy of ``x``."""
    return _get("copy")(x)


def trunc(x: Expr) -> Call:
    """Truncation toward zero, elementwise."""
    return _get("trunc")(x)


def sin(x: Expr) -> Call:
    """Sine, elementwise."""
    return _get("sin")(x)


def cos(x: Expr) -> Call:
    """Cosine, elementwise."""
    return _get("cos")(x)


def log2(x: Expr) -> Call:
    """Base-2 logarithm, elementwise."""
    return _get("log2")(x)


def log10(x: Expr) -> Call:
    """Base-10 logarithm, elementwise."""
    return _get("log10")(x)


def logical_not(x: Expr) -> Call:
    """Logical not, elementwise."""
    return _get("logical_not")(x)


def zeros_like(x: Expr, dtype: str | None = None) -> Call:
    """Zeros of ``x``'s shape and ``dtype`` (None: ``x``'s dtype)."""
    if dtype is None:
        return _get("zeros_like")(x)
    return _get("zeros_like")(x, dtype=dtype)


def ones_like(x: Expr, dtype: str | None = None) -> Call:
    """Ones of ``x``'s shape and ``dtype`` (None: ``x``'s dtype)."""
    if dtype is None:
        return _get("ones_like")(x)
    return _get("ones_like")(x, dtype=dtype)


def leaky_relu(x: Expr, alpha: float = 0.01) -> Call:
    """``x if x > 0 else alpha * x`` elementwise (``nn.leaky_relu``)."""
    return _get("nn.leaky_relu")(x, alpha=alpha)


def clip(x: Expr, a_min: float, a_max: float) -> Call:
    """Clamp every element to ``[a_min, a_max]``."""
    return _get("clip")(x, a_min=a_min, a_max=a_max)


def isnan(x: Expr) -> Call:
    """Elementwise NaN test (bool)."""
    return _get("isnan")(x)


def isinf(x: Expr) -> Call:
    """Elementwise infinity test (bool)."""
    return _get("isinf")(x)


def isfinite(x: Expr) -> Call:
    """Elementwise finiteness test (bool)."""
    return _get("isfinite")(x)


def where(cond: Expr, x: Expr, y: Expr) -> Call:
    """``x`` where ``cond`` else ``y``; the three shapes broadcast; ``cond`` is bool."""
    return _get("where")(cond, x, y)


def cast(x: Expr, dtype: str) -> Call:
    """``x`` converted to ``dtype``."""
    return _get("cast")(x, dtype=dtype)


def cast_like(x: Expr, like: Expr) -> Call:
    """``x`` converted to ``like``'s dtype."""
    return _get("cast_like")(x, like)


# ----------------------------------------------------------------------------------------------
# shape


def flatten(x: Expr, axis: int = 1) -> Call:
    """``(prod(x.shape[:axis]), prod(x.shape[axis:]))``."""
    return _get("flatten")(x, axis=axis)


def batch_flatten(x: Expr) -> Call:
    """``(x.shape[0], prod(x.shape[1:]))`` (``nn.batch_flatten``)."""
    return _get("nn.batch_flatten")(x)


def reshape(x: Expr, newshape: Any, allowzero: bool = False) -> Call:
    """Reshape with Relay's special values 0, -1, -2, -3, -4 (element count preserved).

    ``newshape`` may be an expression: a 1-d int tensor whose value is the new shape (0 copies,
    -1 infers; an unknown entry gives a fresh dimension), e.g. built from :func:`shape_of`."""
    if isinstance(newshape, Expr):
        return _get("reshape")(x, newshape, allowzero=allowzero)
    return _get("reshape")(x, newshape=newshape, allowzero=allowzero)


def reshape_like(x: Expr, like: Expr) -> Call:
    """Reshape ``x`` to ``like``'s shape."""
    return _get("reshape_like")(x, like)


def concatenate(xs: Exprs, axis: int = 0) -> Call:
    """Join a tuple of tensors along ``axis``."""
    return _get("concatenate")(xs, axis=axis)


def stack(xs: Exprs, axis: int = 0) -> Call:
    """Stack equal-shaped tensors along a new ``axis``."""
    return _get("stack")(xs, axis=axis)


def split(x: Expr, indices_or_sections: IntOrInts, axis: int = 0) -> Call:
    """A tuple of pieces of ``x`` along ``axis`` (equal sections or at split indices)."""
    return _get("split")(x, indices_or_sections=indices_or_sections, axis=axis)


def transpose(x: Expr, axes: Sequence[int] | None = None) -> Call:
    """Permute the axes (default: reverse them)."""
    return _get("transpose")(x, axes=axes)


def squeeze(x: Expr, axis: Axes = None) -> Call:
    """Remove axes of size 1 (``axis=None``: every provable 1)."""
    return _get("squeeze")(x, axis=axis)


def expand_dims(x: Expr, axis: int, num_newaxis: int = 1) -> Call:
    """Insert ``num_newaxis`` axes of size 1 at ``axis``."""
    return _get("expand_dims")(x, axis=axis, num_newaxis=num_newaxis)


def broadcast_to(x: Expr, shape: Sequence[Any] | Expr) -> Call:
    """Broadcast ``x`` to ``shape`` (numpy rules); ``shape`` may be a valued int tensor."""
    if isinstance(shape, Expr):
        return _get("broadcast_to")(x, shape)
    return _get("broadcast_to")(x, shape=shape)


def pad(x: Expr, pad_width: Any, pad_value: float = 0.0, pad_mode: str = "constant") -> Call:
    """Pad every axis by ``(before, after)`` (``nn.pad``)."""
    return _get("nn.pad")(x, pad_width=pad_width, pad_value=pad_value, pad_mode=pad_mode)


def zeros(shape: Sequence[Any] | Expr, dtype: str = "float32") -> Call:
    """A tensor of zeros of ``shape`` and ``dtype`` (no inputs; or the shape as a valued int
    tensor)."""
    if isinstance(shape, Expr):
        return _get("zeros")(shape, dtype=dtype)
    return _get("zeros")(shape=shape, dtype=dtype)


def ones(shape: Sequence[Any] | Expr, dtype: str = "float32") -> Call:
    """A tensor of ones of ``shape`` and ``dtype`` (no inputs; or the shape as a valued int
    tensor)."""
    if isinstance(shape, Expr):
        return _get("ones")(shape, dtype=dtype)
    return _get("ones")(shape=shape, dtype=dtype)


def full(fill_value: Expr | float, shape: Sequence[Any] | Expr, dtype: str | None = None) -> Call:
    """A tensor of ``shape`` filled with the scalar ``fill_value`` (an expression or a number);
    the dtype is ``dtype`` or the fill's."""
    fill = fill_value if isinstance(fill_value, Expr) else _number(fill_value, dtype)
    if isinstance(shape, Expr):
        return _get("full")(fill, shape, dtype=dtype)
    return _get("full")(fill, shape=shape, dtype=dtype)


def constant_of_shape(shape: Expr, value: float = 0.0, dtype: str = "float32") -> Call:
    """ONNX ``ConstantOfShape``: a tensor of the shape the 1-d int tensor ``shape`` holds."""
    return _get("constant_of_shape")(shape, dtype=dtype, value=value)


def _number(v: Any, dtype: str | None) -> Constant:
    import numpy as np

    if dtype is None:
        dtype = "float32" if isinstance(v, float) else "int64" if isinstance(v, int) else None
    return const(np.array(v, dtype=dtype))


def _size_arg(v: Any, dtype: str = "int64") -> Expr:
    """A size given literally (an int or a dimension) as a 0-d int tensor carrying it; an
    expression as it is; a float as a float constant (no value)."""
    if isinstance(v, Expr):
        return v
    if isinstance(v, float):
        return _number(v, None)
    return _get("int_tensor")(value=v, dtype=dtype)


# ----------------------------------------------------------------------------------------------
# shape values and data-dependent sizes


def shape_of(x: Expr, dtype: str = "int64") -> Call:
    """``x``'s shape as a 1-d int tensor whose value is the shape: ``x: (n, s, 64)`` gives
    ``Tensor[(3,), int64] = (n, s, 64)``."""
    return _get("shape_of")(x, dtype=dtype)


def int_tensor(value: Any, dtype: str = "int64") -> Call:
    """A literal int tensor whose entries may be dimensions: ``int_tensor((n, -1, 64))`` is
    ``Tensor[(3,), int64] = (n, -1, 64)``, ``int_tensor(n)`` is ``Tensor[(), int64] = n``."""
    return _get("int_tensor")(value=value, dtype=dtype)


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: str | None = None) -> Call:
    """numpy ``arange`` / ONNX ``Range``: ``arange(stop)`` or ``arange(start, stop, step)``; each
    bound an int, a dimension or a 0-d tensor expression. The length is
    ``max(ceil((stop - start)/step), 0)`` (exact when ``step`` is a constant)."""
    if stop is None:
        start, stop = 0, start
    dt = dtype if dtype in VALUE_DTYPES else "int64"
    args = [_size_arg(v, dt) for v in (start, stop, step)]
    return _get("arange")(*args, dtype=dtype)


def tile(x: Expr, reps: Sequence[Any] | Expr) -> Call:
    """numpy ``tile``: repeat ``x`` ``reps[i]`` times along each axis (``reps`` literal or a valued
    int tensor)."""
    if isinstance(reps, Expr):
        return _get("tile")(x, reps)
    return _get("tile")(x, reps=tuple(reps) if not isinstance(reps, (int, Dim)) else reps)


def expand(x: Expr, shape: Sequence[Any] | Expr) -> Call:
    """torch/ONNX ``expand``: broadcast ``x`` with ``shape`` (``-1`` keeps ``x``'s dimension)."""
    if isinstance(shape, Expr):
        return _get("expand")(x, shape)
    return _get("expand")(x, shape=tuple(shape) if not isinstance(shape, (int, Dim)) else shape)


def nonzero(x: Expr, size: Dim | None = None) -> Call:
    """The indices of the non-zero elements, ``(rank(x), u)`` int64 (ONNX ``NonZero``); ``u`` is a
    fresh size (``size``, or named ``u0, u1, ...`` by :func:`symshape.infer`)."""
    return _get("nonzero")(x, size=size)


def unique(x: Expr, axis: int | None = None, size: Dim | None = None) -> Call:
    """The distinct elements of ``x`` (flattened; or slices along ``axis``): a fresh size ``u``."""
    return _get("unique")(x, axis=axis, size=size)


def boolean_mask(x: Expr, mask: Expr, size: Dim | None = None) -> Call:
    """``x[mask]`` for a bool ``mask`` of ``x``'s leading shape: ``(u, *x.shape[mask.ndim:])``."""
    return _get("boolean_mask")(x, mask, size=size)


# ----------------------------------------------------------------------------------------------
# reductions


def _reduce(name: str, x: Expr, axis: Axes, keepdims: bool, exclude: bool) -> Call:
    return _get(name)(x, axis=axis, keepdims=keepdims, exclude=exclude)


def sum(x: Expr, axis: Axes = None, keepdims: bool = False, exclude: bool = False) -> Call:
    """Sum over ``axis`` (None: all axes)."""
    return _reduce("sum", x, axis, keepdims, exclude)


def mean(x: Expr, axis: Axes = None, keepdims: bool = False, exclude: bool = False) -> Call:
    """Mean over ``axis`` (None: all axes)."""
    return _reduce("mean", x, axis, keepdims, exclude)


def prod(x: Expr, axis: Axes = None, keepdims: bool = False, exclude: bool = False) -> Call:
    """Product over ``axis`` (None: all axes)."""
    return _reduce("prod", x, axis, keepdims, exclude)


def max(x: Expr, axis: Axes = None, keepdims: bool = False, exclude: bool = False) -> Call:
    """Maximum over ``axis`` (None: all axes); the reduced extent must be non-empty."""
    return _reduce("max", x, axis, keepdims, exclude)


def min(x: Expr, axis: Axes = None, keepdims: bool = False, exclude: bool = False) -> Call:
    """Minimum over ``axis`` (None: all axes); the reduced extent must be non-empty."""
    return _reduce("min", x, axis, keepdims, exclude)


def all(x: Expr, axis: Axes = None, keepdims: bool = False, exclude: bool = False) -> Call:
    """Logical and over ``axis``."""
    return _reduce("all", x, axis, keepdims, exclude)


def any(x: Expr, axis: Axes = None, keepdims: bool = False, exclude: bool = False) -> Call:
    """Logical or over ``axis``."""
    return _reduce("any", x, axis, keepdims, exclude)


def argmax(x: Expr, axis: Axes = None, keepdims: bool = False, exclude: bool = False) -> Call:
    """Index of the maximum over ``axis`` (int32)."""
    return _reduce("argmax", x, axis, keepdims, exclude)


def argmin(x: Expr, axis: Axes = None, keepdims: bool = False, exclude: bool = False) -> Call:
    """Index of the minimum over ``axis`` (int32)."""
    return _reduce("argmin", x, axis, keepdims, exclude)


# ----------------------------------------------------------------------------------------------
# indexing


def take(x: Expr, indices: Expr, axis: int | None = None, batch_dims: int = 0, mode: str = "clip") -> Call:
    """Gather ``x`` at integer ``indices`` along ``axis`` (None: from the flattened tensor)."""
    return _get("take")(x, indices, axis=axis, batch_dims=batch_dims, mode=mode)


def strided_slice(
    x: Expr,
    begin: Sequence[int | None],
    end: Sequence[int | None],
    strides: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    slice_mode: str = "end",
) -> Call:
    """numpy-style ``x[b:e:s]`` per axis (negative strides, clamping). ``begin``, ``end`` and
    ``strides`` may be 1-d int tensors (their values are read; the others are made tensors)."""
    if _py_any(isinstance(v, Expr) for v in (begin, end, strides)):
        return _dyn_slice(x, begin, end, strides, axes, slice_mode)
    return _get("strided_slice")(x, begin=begin, end=end, strides=strides, axes=axes, slice_mode=slice_mode)


def _dyn_slice(x: Expr, begin: Any, end: Any, strides: Any, axes: Any, slice_mode: str) -> Call:
    """``strided_slice`` with its bounds as tensors: literal bounds become valued int tensors; an
    open bound (None) becomes the sentinel past that end (which needs a literal stride)."""
    st = None if strides is None or isinstance(strides, Expr) else tuple(strides)
    if isinstance(strides, Expr):
        st_expr: Expr | None = strides
    elif strides is None:
        st_expr = None
    else:
        st_expr = _get("int_tensor")(value=st)

    def sign(j: int) -> int:
        if strides is None:
            return 1
        if st is None:
            raise bad("strided_slice", "an open bound (None) needs literal strides; give the bound")
        return 1 if st[j if len(st) > 1 else 0] > 0 else -1

    def bound(v: Any, is_begin: bool) -> Expr:
        if isinstance(v, Expr):
            return v
        out = []
        for j, b in enumerate(v):
            if b is None:
                past = -BIG if is_begin else BIG
                out.append(past * sign(j))
            else:
                out.append(b)
        return _get("int_tensor")(value=tuple(out))

    args = [x, bound(begin, True), bound(end, False)]
    if st_expr is not None:
        args.append(st_expr)
    return _get("strided_slice")(*args, axes=axes, slice_mode=slice_mode)


# ----------------------------------------------------------------------------------------------
# linear algebra


def dense(x: Expr, w: Expr, units: int | None = None, out_dtype: str = "") -> Call:
    """``x @ w.T`` with ``w`` of shape ``(units, K)`` (``nn.dense``)."""
    return _get("nn.dense")(x, w, units=units, out_dtype=out_dtype)


def matmul(a: Expr, b: Expr, out_dtype: str | None = None) -> Call:
    """numpy ``matmul`` (1-d promotion, broadcast batch dimensions); ``out_dtype`` (Relax) sets the
    result's dtype."""
    if out_dtype is None:
        return _get("matmul")(a, b)
    return _get("matmul")(a, b, out_dtype=out_dtype)


def batch_matmul(
    x: Expr, y: Expr, transpose_a: bool = False, transpose_b: bool = True, out_dtype: str = ""
) -> Call:
    """Batched ``(B, I, K) x (B, J, K) -> (B, I, J)`` (``nn.batch_matmul``)."""
    return _get("nn.batch_matmul")(
        x, y, transpose_a=transpose_a, transpose_b=transpose_b, out_dtype=out_dtype
    )


# ----------------------------------------------------------------------------------------------
# convolution and pooling


def _conv(
    nd: int,
    x: Expr,
    w: Expr,
    strides: IntOrInts,
    padding: IntOrInts,
    dilation: IntOrInts,
    groups: int,
    channels: int | None,
    kernel_size: IntOrInts | None,
    data_layout: str | None,
    kernel_layout: str | None,
    out_dtype: str,
    out_layout: str,
) -> Call:
    dl = data_layout or {1: "NCW", 2: "NCHW", 3: "NCDHW"}[nd]
    kl = kernel_layout or {1: "OIW", 2: "OIHW", 3: "OIDHW"}[nd]
    extra = {"out_layout": out_layout} if out_layout else {}
    return _get(f"nn.conv{nd}d")(
        x,
        w,
        strides=strides,
        padding=padding,
        dilation=dilation,
        groups=groups,
        channels=channels,
        kernel_size=kernel_size,
        data_layout=dl,
        kernel_layout=kl,
        out_dtype=out_dtype,
        **extra,
    )


def conv1d(
    x: Expr,
    w: Expr,
    strides: IntOrInts = 1,
    padding: IntOrInts = 0,
    dilation: IntOrInts = 1,
    groups: int = 1,
    channels: int | None = None,
    kernel_size: IntOrInts | None = None,
    data_layout: str = "NCW",
    kernel_layout: str = "OIW",
    out_dtype: str = "",
    out_layout: str = "",
) -> Call:
    """1-d convolution (``nn.conv1d``)."""
    return _conv(
        1,
        x,
        w,
        strides,
        padding,
        dilation,
        groups,
        channels,
        kernel_size,
        data_layout,
        kernel_layout,
        out_dtype,
        out_layout,
    )


def conv2d(
    x: Expr,
    w: Expr,
    strides: IntOrInts = 1,
    padding: IntOrInts = 0,
    dilation: IntOrInts = 1,
    groups: int = 1,
    channels: int | None = None,
    kernel_size: IntOrInts | None = None,
    data_layout: str = "NCHW",
    kernel_layout: str = "OIHW",
    out_dtype: str = "",
    out_layout: str = "",
) -> Call:
    """2-d convolution (``nn.conv2d``)."""
    return _conv(
        2,
        x,
        w,
        strides,
        padding,
        dilation,
        groups,
        channels,
        kernel_size,
        data_layout,
        kernel_layout,
        out_dtype,
        out_layout,
    )


def conv3d(
    x: Expr,
    w: Expr,
    strides: IntOrInts = 1,
    padding: IntOrInts = 0,
    dilation: IntOrInts = 1,
    groups: int = 1,
    channels: int | None = None,
    kernel_size: IntOrInts | None = None,
    data_layout: str = "NCDHW",
    kernel_layout: str = "OIDHW",
    out_dtype: str = "",
    out_layout: str = "",
) -> Call:
    """3-d convolution (``nn.conv3d``)."""
    return _conv(
        3,
        x,
        w,
        strides,
        padding,
        dilation,
        groups,
        channels,
        kernel_size,
        data_layout,
        kernel_layout,
        out_dtype,
        out_layout,
    )


def _pool(
    name: str,
    x: Expr,
    pool_size: IntOrInts,
    strides: IntOrInts,
    padding: IntOrInts,
    dilation: IntOrInts,
    ceil_mode: bool,
    layout: str,
    out_layout: str = "",
) -> Call:
    extra = {"out_layout": out_layout} if out_layout else {}
    return _get(name)(
        x,
        pool_size=pool_size,
        strides=strides,
        padding=padding,
        dilation=dilation,
        ceil_mode=ceil_mode,
        layout=layout,
        **extra,
    )


def max_pool1d(
    x: Expr, pool_size: IntOrInts = 1, strides: IntOrInts = 1, padding: IntOrInts = 0,
    dilation: IntOrInts = 1, ceil_mode: bool = False, layout: str = "NCW", out_layout: str = "",
) -> Call:  # fmt: skip
    """1-d max pooling (``nn.max_pool1d``); ``out_layout`` (Relax) is the result's
    layout (default: ``layout``)."""
    return _pool("nn.max_pool1d", x, pool_size, strides, padding, dilation, ceil_mode, layout, out_layout)


def max_pool2d(
    x: Expr, pool_size: IntOrInts = 1, strides: IntOrInts = 1, padding: IntOrInts = 0,
    dilation: IntOrInts = 1, ceil_mode: bool = False, layout: str = "NCHW", out_layout: str = "",
) -> Call:  # fmt: skip
    """2-d max pooling (``nn.max_pool2d``); ``out_layout`` (Relax) is the result's
    layout (default: ``layout``)."""
    return _pool("nn.max_pool2d", x, pool_size, strides, padding, dilation, ceil_mode, layout, out_layout)


def max_pool3d(
    x: Expr, pool_size: IntOrInts = 1, strides: IntOrInts = 1, padding: IntOrInts = 0,
    dilation: IntOrInts = 1, ceil_mode: bool = False, layout: str = "NCDHW", out_layout: str = "",
) -> Call:  # fmt: skip
    """3-d max pooling (``nn.max_pool3d``); ``out_layout`` (Relax) is the result's
    layout (default: ``layout``)."""
    return _pool("nn.max_pool3d", x, pool_size, strides, padding, dilation, ceil_mode, layout, out_layout)


def avg_pool1d(
    x: Expr, pool_size: IntOrInts = 1, strides: IntOrInts = 1, padding: IntOrInts = 0,
    dilation: IntOrInts = 1, ceil_mode: bool = False, layout: str = "NCW", out_layout: str = "",
) -> Call:  # fmt: skip
    """1-d average pooling (``nn.avg_pool1d``); ``out_layout`` (Relax) is the result's
    layout (default: ``layout``)."""
    return _pool("nn.avg_pool1d", x, pool_size, strides, padding, dilation, ceil_mode, layout, out_layout)


def avg_pool2d(
    x: Expr, pool_size: IntOrInts = 1, strides: IntOrInts = 1, padding: IntOrInts = 0,
    dilation: IntOrInts = 1, ceil_mode: bool = False, layout: str = "NCHW", out_layout: str = "",
) -> Call:  # fmt: skip
    """2-d average pooling (``nn.avg_pool2d``); ``out_layout`` (Relax) is the result's
    layout (default: ``layout``)."""
    return _pool("nn.avg_pool2d", x, pool_size, strides, padding, dilation, ceil_mode, layout, out_layout)


def avg_pool3d(
    x: Expr, pool_size: IntOrInts = 1, strides: IntOrInts = 1, padding: IntOrInts = 0,
    dilation: IntOrInts = 1, ceil_mode: bool = False, layout: str = "NCDHW", out_layout: str = "",
) -> Call:  # fmt: skip
    """3-d average pooling (``nn.avg_pool3d``); ``out_layout`` (Relax) is the result's
    layout (default: ``layout``)."""
    return _pool("nn.avg_pool3d", x, pool_size, strides, padding, dilation, ceil_mode, layout, out_layout)


def global_avg_pool2d(x: Expr, layout: str = "NCHW", out_layout: str = "") -> Call:
    """Average over the spatial axes, which become 1 (``nn.global_avg_pool2d``)."""
    extra = {"out_layout": out_layout} if out_layout else {}
    return _get("nn.global_avg_pool2d")(x, layout=layout, **extra)


def global_max_pool2d(x: Expr, layout: str = "NCHW", out_layout: str = "") -> Call:
    """Maximum over the spatial axes, which become 1 (``nn.global_max_pool2d``)."""
    extra = {"out_layout": out_layout} if out_layout else {}
    return _get("nn.global_max_pool2d")(x, layout=layout, **extra)


def adaptive_avg_pool2d(
    x: Expr, output_size: Any = None, layout: str = "NCHW", out_layout: str = ""
) -> Call:
    """Average pooling to a fixed spatial ``output_size`` (``nn.adaptive_avg_pool2d``)."""
    extra = {"out_layout": out_layout} if out_layout else {}
    return _get("nn.adaptive_avg_pool2d")(x, output_size=output_size, layout=layout, **extra)


def adaptive_max_pool2d(
    x: Expr, output_size: Any = None, layout: str = "NCHW", out_layout: str = ""
) -> Call:
    """Max pooling to a fixed spatial ``output_size`` (``nn.adaptive_max_pool2d``)."""
    extra = {"out_layout": out_layout} if out_layout else {}
    return _get("nn.adaptive_max_pool2d")(x, output_size=output_size, layout=layout, **extra)


# ----------------------------------------------------------------------------------------------
# normalization


def softmax(x: Expr, axis: int = -1) -> Call:
    """Softmax along ``axis`` (``nn.softmax``)."""
    return _get("nn.softmax")(x, axis=axis)


def log_softmax(x: Expr, axis: int = -1) -> Call:
    """Log-softmax along ``axis`` (``nn.log_softmax``)."""
    return _get("nn.log_softmax")(x, axis=axis)


def bias_add(x: Expr, b: Expr, axis: int = 1) -> Call:
    """``x + b`` with the vector ``b`` along ``axis`` (``nn.bias_add``)."""
    return _get("nn.bias_add")(x, b, axis=axis)


def layer_norm(x: Expr, gamma: Expr, beta: Expr, axis: Axes = -1, epsilon: float = 1e-5) -> Call:
    """Layer normalization over ``axis``, an axis or a sequence of axes (Relax's ``axes``);
    ``gamma`` and ``beta`` have the shape of those axes (``nn.layer_norm``)."""
    return _get("nn.layer_norm")(x, gamma, beta, axis=axis, epsilon=epsilon)


def batch_norm(
    x: Expr,
    gamma: Expr,
    beta: Expr,
    moving_mean: Expr,
    moving_var: Expr,
    axis: int = 1,
    epsilon: float = 1e-5,
) -> Call:
    """Batch normalization over ``axis``; a tuple ``(out, mean, var)`` (``nn.batch_norm``)."""
    return _get("nn.batch_norm")(x, gamma, beta, moving_mean, moving_var, axis=axis, epsilon=epsilon)


_ = (_py_sum, _py_max, _py_min, _py_abs)
