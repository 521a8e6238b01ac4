"""Shape operators: flatten, reshape (Relay's special values, normalized to explicit dimensions when
they are known), concatenate/stack/split, transpose/squeeze/expand_dims (negative axes and default
axes made explicit), broadcast_to, pad, zeros/ones/full, tile/expand.

Operators that take a shape accept it literally (an attribute) or as one more input: a 1-d int
tensor whose value is the shape.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from symshape.encoding.conds import BoolConst
from symshape.encoding.dims import AnyDim, Dim
from symshape.encoding.types import Attrs, TensorType, Type
from symshape.ir.expr import Call, Expr
from symshape.ir.op import OPS
from symshape.ops.spec import (
    NO_ATTRS,
    Axes,
    Exprs,
    IntOrInts,
    OpSpec,
    axis_normalizer,
    chk_axis,
    dimlike,
    number_const,
    py_all,
    py_any,
    rank_of,
    rebuild,
    register_ops,
)
from symshape.relations.common import (
    attr_axes,
    attr_bool,
    attr_dtype,
    attr_int,
    attr_shape,
    bad,
)
from symshape.relations.concat import parse_split, parse_total
from symshape.relations.reshape import parse_newshape, reshape_dims
from symshape.relations.sizes import parse_pad_width

__all__ = [
    "flatten",
    "batch_flatten",
    "reshape",
    "reshape_like",
    "concatenate",
    "stack",
    "split",
    "transpose",
    "squeeze",
    "expand_dims",
    "broadcast_to",
    "pad",
    "zeros",
    "ones",
    "full",
    "tile",
    "expand",
]


def _known(d: Dim) -> bool:
    """A dimension that can be written in an attribute: no solver unknown and no anonymous ``?``
    (a ``?`` is renumbered each time a program is inferred, so it names nothing)."""
    return not d.has_unknowns and not py_any(isinstance(a, AnyDim) for a in d.atoms())


def _normalize_reshape(call: Call, types: Sequence[Type]) -> Expr | None:
    """Special values (0, -1, -2, -3, -4) become the explicit output dimensions, symbolic ones
    included, once every output dimension is known and the reshape needs no guard."""
    try:
        spec = parse_newshape(call.attrs)
    except Exception:
        return None
    allowzero = bool(call.attrs.get("allowzero", False))
    if py_all(isinstance(s, Dim) or s > 0 or (allowzero and s == 0) for s in spec):
        return None
    t = types[0] if types else None
    if not isinstance(t, TensorType) or t.ndim is None:
        return None
    dims, conds, err = reshape_dims(t.dims, spec, allowzero)
    if err is not None or py_any(c != BoolConst(True) for c, _ in conds):
        # invalid, or valid only under a guard: the special values say it more plainly than the
        # explicit dimensions would (``-1`` rather than ``12*n//5``), so the call stays as written
        return None
    if not py_all(_known(d) for d in dims):
        return None
    if not allowzero and py_any(d.constant_value == 0 for d in dims):
        return None  # an explicit 0 would mean "copy" again
    newshape = tuple(d.constant_value if d.is_constant else d for d in dims)
    if newshape == tuple(spec):
        return None
    return rebuild(call, {"newshape": newshape})


def _normalize_transpose(call: Call, types: Sequence[Type]) -> Expr | None:
    rank = rank_of(types)
    if rank is None:
        return None
    axes = call.attrs.get("axes")
    if axes is None:
        return rebuild(call, {"axes": tuple(range(rank - 1, -1, -1))})
    return axis_normalizer("axes")(call, types)


def _squeezed_axes(dims: Sequence[Dim], result: Type | None) -> tuple[int, ...] | None:
    """The axes ``squeeze`` without ``axis`` drops: the constant 1s, and the symbolic dimensions
    the relation proved to be 1 (read off its result: the kept dimensions are copied, in order).
    None when that cannot be told."""
    if py_all(d.is_constant for d in dims):
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
                return rebuild(call, {"axis": axes})
        return None
    return axis_normalizer("axis")(call, types)


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
    parse_total(attrs, parse_split(attrs, op), op)
    attr_int(attrs, "axis", 0, op)


def _chk_shape(attrs: Attrs, op: str) -> None:
    attr_shape(attrs, "shape", op)


def _chk_init(attrs: Attrs, op: str) -> None:
    attr_shape(attrs, "shape", op)
    attr_dtype(attrs, "dtype", op)


def _chk_pad(attrs: Attrs, op: str) -> None:
    parse_pad_width(attrs, op)


def _chk_reps(name: str) -> Callable[[Attrs, str], None]:
    def chk(attrs: Attrs, op: str) -> None:
        v = attrs.get(name)
        if isinstance(v, (int, Dim)) and not isinstance(v, bool):
            v = (v,)
        if not isinstance(v, tuple) or not py_all(dimlike(x) for x in v):
            raise bad(op, f"{name} must be a sequence of ints or dimensions, got {v!r}")
        for x in v:
            c = x if isinstance(x, int) else x.constant_value
            if c is not None and c < (-1 if name == "shape" else 0):
                raise bad(op, f"{name} has a negative entry {c}")

    return chk


_axis = axis_normalizer("axis")


SPECS: tuple[OpSpec, ...] = (
    OpSpec("flatten", "flatten", 1, {"axis": "int"}, chk_axis, _axis),
    OpSpec("nn.batch_flatten", "flatten", 1, NO_ATTRS),
    OpSpec(
        "reshape",
        "reshape",
        1,
        {"newshape": "shape", "allowzero": "bool"},
        _chk_reshape,
        _normalize_reshape,
        as_input=("newshape",),
    ),
    OpSpec("reshape_like", "reshape_like", 2, NO_ATTRS),
    OpSpec("concatenate", "concatenate", 1, {"axis": "int"}, chk_axis, _axis),
    OpSpec("stack", "stack", 1, {"axis": "int"}, chk_axis, axis_normalizer("axis", extra=1)),
    OpSpec(
        "split", "split", 1, {"indices_or_sections": "ints", "axis": "int", "total": "int"}, _chk_split, _axis
    ),
    OpSpec("transpose", "transpose", 1, {"axes": "ints"}, _chk_transpose, _normalize_transpose),
    OpSpec("squeeze", "squeeze", 1, {"axis": "ints"}, _chk_squeeze, _normalize_squeeze),
    OpSpec(
        "expand_dims",
        "expand_dims",
        1,
        {"axis": "int", "num_newaxis": "int"},
        _chk_expand,
        axis_normalizer("axis", extra=1),
    ),
    OpSpec("broadcast_to", "broadcast_to", 1, {"shape": "shape"}, _chk_shape, as_input=("shape",)),
    OpSpec("nn.pad", "pad", 1, {"pad_width": "pairs", "pad_value": "float", "pad_mode": "str"}, _chk_pad),
    *(
        OpSpec(n, "init_tensor", 0, {"shape": "shape", "dtype": "dtype"}, _chk_init, as_input=("shape",))
        for n in ("zeros", "ones")
    ),
    OpSpec(
        "full",
        "full",
        1,
        {"shape": "shape", "dtype": "dtype"},
        _chk_init,
        doc="a tensor of a shape filled with a scalar",
        as_input=("shape",),
    ),
    OpSpec("tile", "tile", 1, {"reps": "indices"}, _chk_reps("reps"), doc="numpy tile", as_input=("reps",)),
    OpSpec(
        "expand",
        "expand",
        1,
        {"shape": "indices"},
        _chk_reps("shape"),
        doc="torch/ONNX expand: broadcast with a shape, -1 keeps a dimension",
        as_input=("shape",),
    ),
)


register_ops(SPECS)


def flatten(x: Expr, axis: int = 1) -> Call:
    """``(prod(x.shape[:axis]), prod(x.shape[axis:]))``."""
    return OPS["flatten"].wrapper_call(x, axis=axis)


def batch_flatten(x: Expr) -> Call:
    """``(x.shape[0], prod(x.shape[1:]))`` (``nn.batch_flatten``)."""
    return OPS["nn.batch_flatten"].wrapper_call(x)


def reshape(x: Expr, newshape: Any, allowzero: bool = False) -> Call:
    """Reshape with Relay's special values 0, -1, -2, -3, -4 (element count preserved).

    ``newshape`` may be an expression: a 1-d int tensor whose value is the new shape (0 copies,
    -1 infers; an unknown entry gives a fresh dimension), e.g. built from :func:`shape_of`."""
    if isinstance(newshape, Expr):
        return OPS["reshape"].wrapper_call(x, newshape, allowzero=allowzero)
    return OPS["reshape"].wrapper_call(x, newshape=newshape, allowzero=allowzero)


def reshape_like(x: Expr, like: Expr) -> Call:
    """Reshape ``x`` to ``like``'s shape."""
    return OPS["reshape_like"].wrapper_call(x, like)


def concatenate(xs: Exprs, axis: int = 0) -> Call:
    """Join a tuple of tensors along ``axis``."""
    return OPS["concatenate"].wrapper_call(xs, axis=axis)


def stack(xs: Exprs, axis: int = 0) -> Call:
    """Stack equal-shaped tensors along a new ``axis``."""
    return OPS["stack"].wrapper_call(xs, axis=axis)


def split(x: Expr, indices_or_sections: IntOrInts, axis: int = 0, total: int | None = None) -> Call:
    """A tuple of pieces of ``x`` along ``axis`` (equal sections or at split indices; with
    ``total``, the last piece ends there and the axis must be ``total`` long)."""
    if total is None:
        return OPS["split"].wrapper_call(x, indices_or_sections=indices_or_sections, axis=axis)
    return OPS["split"].wrapper_call(x, indices_or_sections=indices_or_sections, axis=axis, total=total)


def transpose(x: Expr, axes: Sequence[int] | None = None) -> Call:
    """Permute the axes (default: reverse them)."""
    return OPS["transpose"].wrapper_call(x, axes=axes)


def squeeze(x: Expr, axis: Axes = None) -> Call:
    """Remove axes of size 1 (``axis=None``: every provable 1)."""
    return OPS["squeeze"].wrapper_call(x, axis=axis)


def expand_dims(x: Expr, axis: int, num_newaxis: int = 1) -> Call:
    """Insert ``num_newaxis`` axes of size 1 at ``axis``."""
    return OPS["expand_dims"].wrapper_call(x, axis=axis, num_newaxis=num_newaxis)


def broadcast_to(x: Expr, shape: Sequence[Any] | Expr) -> Call:
    """Broadcast ``x`` to ``shape`` (numpy rules); ``shape`` may be a valued int tensor."""
    if isinstance(shape, Expr):
        return OPS["broadcast_to"].wrapper_call(x, shape)
    return OPS["broadcast_to"].wrapper_call(x, shape=shape)


def pad(x: Expr, pad_width: Any, pad_value: float = 0.0, pad_mode: str = "constant") -> Call:
    """Pad every axis by ``(before, after)`` (``nn.pad``)."""
    return OPS["nn.pad"].wrapper_call(x, pad_width=pad_width, pad_value=pad_value, pad_mode=pad_mode)


def zeros(shape: Sequence[Any] | Expr, dtype: str = "float32") -> Call:
    """A tensor of zeros of ``shape`` and ``dtype`` (no inputs; or the shape as a valued int
    tensor)."""
    if isinstance(shape, Expr):
        return OPS["zeros"].wrapper_call(shape, dtype=dtype)
    return OPS["zeros"].wrapper_call(shape=shape, dtype=dtype)


def ones(shape: Sequence[Any] | Expr, dtype: str = "float32") -> Call:
    """A tensor of ones of ``shape`` and ``dtype`` (no inputs; or the shape as a valued int
    tensor)."""
    if isinstance(shape, Expr):
        return OPS["ones"].wrapper_call(shape, dtype=dtype)
    return OPS["ones"].wrapper_call(shape=shape, dtype=dtype)


def full(fill_value: Expr | float, shape: Sequence[Any] | Expr, dtype: str | None = None) -> Call:
    """A tensor of ``shape`` filled with the scalar ``fill_value`` (an expression or a number);
    the dtype is ``dtype`` or the fill's."""
    fill = fill_value if isinstance(fill_value, Expr) else number_const(fill_value, dtype)
    if isinstance(shape, Expr):
        return OPS["full"].wrapper_call(fill, shape, dtype=dtype)
    return OPS["full"].wrapper_call(fill, shape=shape, dtype=dtype)


def tile(x: Expr, reps: Sequence[Any] | Expr) -> Call:
    """numpy ``tile``: repeat ``x`` ``reps[i]`` times along each axis (``reps`` literal or a valued
    int tensor)."""
    if isinstance(reps, Expr):
        return OPS["tile"].wrapper_call(x, reps)
    return OPS["tile"].wrapper_call(x, reps=tuple(reps) if not isinstance(reps, (int, Dim)) else reps)


def expand(x: Expr, shape: Sequence[Any] | Expr) -> Call:
    """torch/ONNX ``expand``: broadcast ``x`` with ``shape`` (``-1`` keeps ``x``'s dimension)."""
    if isinstance(shape, Expr):
        return OPS["expand"].wrapper_call(x, shape)
    return OPS["expand"].wrapper_call(x, shape=tuple(shape) if not isinstance(shape, (int, Dim)) else shape)
