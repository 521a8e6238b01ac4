"""Indexing: ``take`` (gather along an axis) and ``strided_slice`` (numpy slicing; bounds literal or
as valued int tensors)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from symshape.encoding.types import Attrs
from symshape.errors import INVALID_ARGUMENT, SymshapeError
from symshape.ir.expr import Call, Expr
from symshape.ir.op import OPS
from symshape.ops.spec import OpSpec, axis_normalizer, py_any, register_ops
from symshape.relations.common import (
    attr_axes,
    attr_int,
    attr_str,
    bad,
)
from symshape.relations.index import BIG, TAKE_MODES, parse_slice_attrs

__all__ = ["take", "strided_slice"]


def _chk_take(attrs: Attrs, op: str) -> None:
    if attrs.get("axis") is not None:
        attr_int(attrs, "axis", None, op)
    attr_int(attrs, "batch_dims", 0, op)
    attr_str(attrs, "mode", "clip", op, TAKE_MODES)


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


_TAKE_ATTRS = {"axis": "int", "batch_dims": "int", "mode": "str"}


SPECS: tuple[OpSpec, ...] = (
    OpSpec("take", "take", 2, _TAKE_ATTRS, _chk_take, axis_normalizer("axis")),
    OpSpec(
        "strided_slice",
        "strided_slice",
        -1,
        {"begin": "indices", "end": "indices", "strides": "ints", "axes": "ints", "slice_mode": "str"},
        normalize=axis_normalizer("axes"),
        check_nargs=_chk_slice_nargs,
    ),
)


register_ops(SPECS)


def take(x: Expr, indices: Expr, axis: int | None = None, batch_dims: int = 0, mode: str = "clip") -> Call:
    """Gather ``x`` at integer ``indices`` along ``axis`` (None: from the flattened tensor)."""
    return OPS["take"].wrapper_call(x, indices, axis=axis, batch_dims=batch_dims, mode=mode)


def strided_slice(
    x: Expr,
    begin: Sequence[int | None] | Expr,
    end: Sequence[int | None] | Expr,
    strides: Sequence[int] | Expr | None = None,
    axes: Sequence[int] | None = None,
    slice_mode: str = "end",
) -> Call:
    """numpy-style ``x[b:e:s]`` per axis (negative strides, clamping). ``begin``, ``end`` and
    ``strides`` may be 1-d int tensors (their values are read; the others are made tensors)."""
    if py_any(isinstance(v, Expr) for v in (begin, end, strides)):
        return _dyn_slice(x, begin, end, strides, axes, slice_mode)
    return OPS["strided_slice"].wrapper_call(
        x, begin=begin, end=end, strides=strides, axes=axes, slice_mode=slice_mode
    )


def _dyn_slice(x: Expr, begin: Any, end: Any, strides: Any, axes: Any, slice_mode: str) -> Call:
    """``strided_slice`` with its bounds as tensors: literal bounds become valued int tensors; an
    open bound (None) becomes the sentinel past that end (which needs a literal stride)."""
    st = None if strides is None or isinstance(strides, Expr) else tuple(strides)
    if isinstance(strides, Expr):
        st_expr: Expr | None = strides
    elif strides is None:
        st_expr = None
    else:
        st_expr = OPS["int_tensor"].wrapper_call(value=st)

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
        return OPS["int_tensor"].wrapper_call(value=tuple(out))

    args = [x, bound(begin, True), bound(end, False)]
    if st_expr is not None:
        args.append(st_expr)
    return OPS["strided_slice"].wrapper_call(*args, axes=axes, slice_mode=slice_mode)
