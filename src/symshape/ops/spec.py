"""What every operator family module shares: looking an operator up, attribute checkers built from
per-attribute parsers, the normalize hook for negative axes, and the small argument helpers.

An operator is registered once (:func:`symshape.ir.op.register_op`) by the module of its family,
with the relation that types it (in :mod:`symshape.relations` under the family's name), an
attribute checker and, where one applies, a normalize hook; the same module holds its typed
wrapper (``ss.ops.<name>``).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from symshape.encoding.dims import Dim
from symshape.encoding.types import Attrs, TensorType, TupleType, Type
from symshape.errors import INVALID_ARGUMENT, SymshapeError
from symshape.ir.expr import Call, Constant, Expr, const
from symshape.ir.op import OPS, Op
from symshape.relations.common import (
    attr_bool,
    attr_dtype,
    attr_int,
    bad,
)

__all__ = [
    "CheckFn",
    "NO_ATTRS",
    "Axes",
    "Exprs",
    "IntOrInts",
    "rank_of",
    "rebuild",
    "axis_normalizer",
    "checked",
    "chk_axis",
    "by_nargs",
    "dimlike",
    "get_op",
    "number_const",
    "size_arg",
    "py_abs",
    "py_all",
    "py_any",
    "py_max",
    "py_min",
    "py_sum",
]


py_sum, py_max, py_min, py_abs, py_all, py_any = (
    builtins.sum,
    builtins.max,
    builtins.min,
    builtins.abs,
    builtins.all,
    builtins.any,
)


CheckFn = Callable[[Attrs, int], Mapping[str, Any] | None]


def rank_of(types: Sequence[Type], stacked: bool = False) -> int | None:
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


def rebuild(call: Call, changes: Mapping[str, object]) -> Call:
    attrs = dict(call.attrs)
    attrs.update(changes)
    new = Call(call.callee, call.args, attrs)
    new.span = call.span
    return new


def axis_normalizer(
    name: str, *, extra: int = 0, default: object = None
) -> Callable[[Call, Sequence[Type]], Expr | None]:
    """Negative axes (an int or a sequence) become non-negative, once the rank is known."""

    def normalize(call: Call, types: Sequence[Type]) -> Expr | None:
        v = call.attrs.get(name, default)
        rank = rank_of(types)
        if v is None or rank is None:
            return None
        r = rank + extra
        if isinstance(v, int) and not isinstance(v, bool):
            if -r <= v < 0:
                return rebuild(call, {name: v + r})
            return None
        if isinstance(v, tuple) and py_any(isinstance(a, int) and -r <= a < 0 for a in v):
            return rebuild(call, {name: tuple(a + r if isinstance(a, int) and -r <= a < 0 else a for a in v)})
        return None

    return normalize


def checked(fn: Callable[[Attrs, str], object], op: str) -> CheckFn:
    def check(attrs: Attrs, nargs: int) -> None:
        fn(attrs, op)
        return None

    return check


def chk_axis(attrs: Attrs, op: str) -> None:
    attr_int(attrs, "axis", None, op)


def by_nargs(
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
            raise SymshapeError(INVALID_ARGUMENT, f"{op} takes {literal} or {dynamic} inputs, got {nargs}")
        return None

    return check


def dimlike(x: object) -> bool:
    return isinstance(x, (int, Dim)) and not isinstance(x, bool)


NO_ATTRS: dict[str, str] = {}


def get_op(name: str) -> Op:
    """The operator registered as ``name`` (looked up at each call: a re-registration counts)."""
    op = OPS.get(name)
    return op if op is not None else Op.get(name)


IntOrInts = int | Sequence[int]


Axes = int | Sequence[int] | None


Exprs = Sequence[Expr] | Expr


def number_const(v: Any, dtype: str | None) -> Constant:
    import numpy as np

    if dtype is None:
        dtype = "float32" if isinstance(v, float) else "int64" if isinstance(v, int) else None
    return const(np.array(v, dtype=dtype))


def size_arg(v: Any, dtype: str = "int64") -> Expr:
    """A size given literally (an int or a dimension) as a 0-d int tensor carrying it; an
    expression as it is; a float as a float constant (no value)."""
    if isinstance(v, Expr):
        return v
    if isinstance(v, float):
        return number_const(v, None)
    return get_op("int_tensor")(value=v, dtype=dtype)
