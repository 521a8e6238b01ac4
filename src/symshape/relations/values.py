"""Shape values through operators: how each operator computes the value of its result, and how
an operator that takes a shape or sizes reads them from a valued tensor.

The rules (numpy semantics; an entry that a dimension cannot represent exactly is unknown, never
wrong):

=======================  ==========================================================================
operator                 value of the result
=======================  ==========================================================================
``shape_of(x)``          ``x``'s shape
constant int array       its entries (0-d or 1-d, at most ``MAX_VALUE_LEN`` entries)
``take(v, i)``           ``v[i]`` for constant indices (``mode``: ``raise``/``fast`` read a negative
                         index from the end, ``clip`` clamps, ``wrap`` wraps; out of range: unknown)
``strided_slice(v)``     ``v[b:e:s]`` for constant bounds (Python slicing)
``concatenate``          the entries one after the other (a field without value: unknown entries)
``expand_dims``          ``d`` -> ``(d,)``; ``squeeze``: ``(d,)`` -> ``d``
``reshape``              the same entries, when the result is 0-d or 1-d
``cast``                 the same value between ``int32`` and ``int64``
``zeros``, ``full`` ...  the fill repeated, for an integer fill
``add`` ...              entrywise ``+ - * // % max min``, a 0-d value broadcast against a 1-d one;
                         ``//`` and ``%`` by a divisor of unknown sign (or 0): unknown
``divide``               on ints (C, ONNX ``Div``), and ``trunc_divide`` (torch's
                         ``rounding_mode="trunc"``): division truncated toward zero, when the
                         divisor's sign is known (a dividend of either sign)
``equal`` ...            entrywise comparisons as bool values 0/1: constants where bounds decide
                         them, else exact 0/1 expressions (``a == b``: ``1 - min(1, max(0, a - b,
                         b - a))``; ``a < b``: ``min(1, max(0, b - a))``)
``where(c, x, y)``       ``x``'s entry where ``c``'s is 1, ``y``'s where it is 0; for a symbolic 0/1
                         entry ``c``: ``c*x + (1 - c)*y``
``logical_and`` ...      on 0/1 entries: ``min``; ``logical_or``: ``max``; ``logical_not``: ``1 - c``
``cast``                 to ``bool``: each entry ``!= 0``; from ``bool``: the same 0/1
=======================  ==========================================================================

>>> import symshape as ss
>>> n = ss.dim("n")
>>> v = ss.Tensor((2,), "int64", value=(n, 6))
>>> [str(d) for d in binary_value("floor_divide", v, ss.Tensor((), "int64", value=-4), v.shape)]
['(-n)//4', '-2']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from symshape.encoding.conds import Cond, cond_value, eq, ge, gt, le, lt, ne
from symshape.encoding.dims import Dim, as_dim, bounds, dmax, dmin, floordiv, mod
from symshape.encoding.types import IncompleteType, TensorType, Type, TypeVar
from symshape.encoding.values import (
    MAX_VALUE_LEN,
    VALUE_DTYPES,
    Value,
    value_entries,
    value_from_entries,
)
from symshape.errors import DTYPE_MISMATCH, RANK_MISMATCH
from symshape.relations.base import Context

__all__ = [
    "array_value",
    "constant_type",
    "with_value",
    "filled_value",
    "entries_of",
    "binary_value",
    "compare_value",
    "compare_entry",
    "EXACT_COMPARE",
    "step",
    "where_value",
    "logical_value",
    "not_value",
    "negative_value",
    "LOGICAL_VALUE_OPS",
    "cast_value",
    "COMPARE_VALUE_OPS",
    "take_value",
    "slice_value",
    "concat_value",
    "reshape_value",
    "BINARY_VALUE_OPS",
    "floor_div_dim",
    "floor_mod_dim",
    "trunc_divide_dim",
    "size_entries",
    "scalar_entry",
    "UNKNOWN_LENGTH",
]

UNKNOWN_LENGTH = "unknown-length"
"""What :func:`size_entries` answers for a size tensor whose length is not known."""


def array_value(data: object, t: TensorType) -> Value | None:
    """The value of a constant array of type ``t`` (None when it carries none)."""
    if t.dtype not in VALUE_DTYPES or not isinstance(t.shape, tuple) or len(t.shape) > 1:
        return None
    if data is None:
        return None
    try:
        items = data.tolist()  # type: ignore[attr-defined]
    except AttributeError:
        return None
    if isinstance(items, list):
        if len(items) > MAX_VALUE_LEN:
            return None
        return tuple(as_dim(int(i)) for i in items)
    return as_dim(int(items))


def constant_type(t: TensorType, data: object) -> TensorType:
    """The type of a constant: its declared type, with its entries as the value when it is a
    small int array."""
    v = array_value(data, t)
    return t if v is None else TensorType(t.shape, t.dtype, v)


def with_value(t: TensorType, value: Value | None) -> TensorType:
    """``t`` with ``value`` when it can carry one (an int32/int64 0-d or 1-d tensor whose length
    matches), else ``t``."""
    if value is None or t.dtype not in VALUE_DTYPES or not isinstance(t.shape, tuple):
        return t
    if len(t.shape) == 0:
        if not isinstance(value, Dim):
            return t
    elif len(t.shape) == 1:
        if isinstance(value, Dim) or t.shape[0].constant_value != len(value):
            return t
    else:
        return t
    return TensorType(t.shape, t.dtype, value)


def filled_value(t: TensorType, fill: object) -> TensorType:
    """``t`` (an int tensor of rank 0 or 1 with a constant length) with the value of a tensor
    filled with ``fill``, when ``fill`` is an integer or a dimension (a float with an integral value
    counts)."""
    if t.dtype not in VALUE_DTYPES or not isinstance(t.shape, tuple) or len(t.shape) > 1:
        return t
    if isinstance(fill, Dim):
        d = fill
    elif isinstance(fill, bool) or not isinstance(fill, (int, float)):
        return t
    elif isinstance(fill, float):
        if not fill.is_integer():
            return t
        d = as_dim(int(fill))
    else:
        d = as_dim(fill)
    if len(t.shape) == 0:
        return with_value(t, d)
    k = t.shape[0].constant_value
    if k is None or k > MAX_VALUE_LEN:
        return t
    return with_value(t, value_from_entries((d,) * k))


def entries_of(t: TensorType) -> tuple[Dim | None, ...] | None:
    """The entries of a 1-d tensor with a constant length (unknown ones None), or None when the
    tensor is not 1-d of a known length."""
    if not isinstance(t.shape, tuple) or len(t.shape) != 1:
        return None
    k = t.shape[0].constant_value
    if k is None or k > MAX_VALUE_LEN:
        return None
    return value_entries(t.value, k)


# ----------------------------------------------------------------------------------------------
# elementwise arithmetic


def floor_div_dim(x: Dim, y: Dim) -> Dim | None:
    """``x // y`` (floor division) when a dimension represents it exactly: a divisor of known
    sign and non-zero; else None."""
    lo, hi = bounds(y)
    if lo >= 1:
        return floordiv(x, y)
    if hi <= -1:
        return floordiv(-x, -y)
    return None


def floor_mod_dim(x: Dim, y: Dim) -> Dim | None:
    """``x % y`` (Python/numpy: the sign of the divisor) when a dimension represents it exactly."""
    lo, hi = bounds(y)
    if lo >= 1:
        return mod(x, y)
    if hi <= -1:
        return -mod(-x, -y)
    return None


def trunc_divide_dim(x: Dim, y: Dim) -> Dim | None:
    """``x / y`` truncated toward zero (integer ``divide`` and ``trunc_divide``: C, ONNX ``Div``
    and torch's ``rounding_mode="trunc"`` on integers) for a divisor of known sign, non-zero; else None. A
    dividend of unknown sign is ``max(x, 0) // y - max(-x, 0) // y`` (``y >= 1``).

    >>> from symshape.encoding.dims import as_dim
    >>> import symshape as ss
    >>> [str(trunc_divide_dim(as_dim(a), as_dim(b))) for a, b in ((7, 2), (-7, 2), (7, -2), (-7, -2))]
    ['3', '-3', '-3', '3']
    >>> str(trunc_divide_dim(ss.dim("n") - 5, as_dim(2)))
    'max(0, n - 5)//2 - max(0, -n + 5)//2'
    """
    ylo, yhi = bounds(y)
    if yhi <= -1:
        q = trunc_divide_dim(x, -y)
        return None if q is None else -q
    if ylo < 1:
        return None
    xlo, xhi = bounds(x)
    if xlo >= 0:
        return floordiv(x, y)
    if xhi <= 0:
        return -floordiv(-x, y)
    return floordiv(dmax(x, 0), y) - floordiv(dmax(-x, 0), y)


BINARY_VALUE_OPS: dict[str, Callable[[Dim, Dim], Dim | None]] = {
    "add": lambda x, y: x + y,
    "subtract": lambda x, y: x - y,
    "multiply": lambda x, y: x * y,
    "floor_divide": floor_div_dim,
    "divide": trunc_divide_dim,  # values are ints: C's truncation
    "trunc_divide": trunc_divide_dim,
    "mod": floor_mod_dim,
    "floor_mod": floor_mod_dim,
    "maximum": lambda x, y: dmax(x, y),
    "minimum": lambda x, y: dmin(x, y),
}
"""Entrywise arithmetic of values by operator name."""


def _operand(t: TensorType, length: int) -> tuple[Dim | None, ...] | None:
    """``t``'s value broadcast to ``length`` entries (a 0-d or one-entry value repeats)."""
    if not isinstance(t.shape, tuple):
        return None
    if len(t.shape) == 0:
        return (t.value,) * length if isinstance(t.value, Dim) else (None,) * length
    es = entries_of(t)
    if es is None:
        return None
    if len(es) == length:
        return es
    if len(es) == 1:
        return es * length
    return None


def _entrywise(
    fn: Callable[..., Dim | None], operands: Sequence[TensorType], out_shape: Sequence[Dim]
) -> Value | None:
    """``fn`` applied to the operands' entries (numpy broadcasting: a 0-d or one-entry value
    repeats) for a result of ``out_shape`` (rank 0 or 1); an unknown entry reaches ``fn`` as None."""
    if len(out_shape) > 1:
        return None
    if len(out_shape) == 0:  # every operand is 0-d
        return fn(*(t.value if isinstance(t.value, Dim) else None for t in operands))
    k = out_shape[0].constant_value
    if k is None or k > MAX_VALUE_LEN:
        return None
    cols = [_operand(t, k) for t in operands]
    if any(c is None for c in cols):
        return None
    return value_from_entries(fn(*es) for es in zip(*cols))


def binary_value(op: str, a: TensorType, b: TensorType, out_shape: Sequence[Dim]) -> Value | None:
    """The value of ``op(a, b)`` (numpy broadcasting) for a result of ``out_shape``."""
    fn = BINARY_VALUE_OPS.get(op)
    if fn is None or (a.value is None and b.value is None):
        return None
    return _entrywise(lambda x, y: None if x is None or y is None else fn(x, y), (a, b), out_shape)


COMPARE_VALUE_OPS: dict[str, Callable[[Dim, Dim], Cond]] = {
    "equal": eq,
    "not_equal": ne,
    "less": lt,
    "less_equal": le,
    "greater": gt,
    "greater_equal": ge,
}
"""Entrywise comparisons of values by operator name (an entry is 1 or 0 where the dimensions'
canonical forms and bounds decide it, else the exact 0/1 expression of :data:`EXACT_COMPARE`)."""


def step(d: Dim) -> Dim:
    """``1`` where the integer ``d`` is at least 1, ``0`` where it is at most 0:
    ``min(1, max(0, d))``."""
    return dmin(1, dmax(0, d))


def _differ(x: Dim, y: Dim) -> Dim:
    """``x != y`` as 0/1 for integers: ``min(1, max(0, x - y, y - x))`` (``|x - y|`` capped)."""
    return dmin(1, dmax(0, x - y, y - x))


EXACT_COMPARE: dict[str, Callable[[Dim, Dim], Dim]] = {
    "equal": lambda x, y: 1 - _differ(x, y),
    "not_equal": _differ,
    "less": lambda x, y: step(y - x),
    "less_equal": lambda x, y: step(y - x + 1),
    "greater": lambda x, y: step(x - y),
    "greater_equal": lambda x, y: step(x - y + 1),
}
"""Each comparison of two integers as an exact dimension that is 0 or 1 (for any integer values of
its symbols): the value of an entry that bounds do not decide.

>>> import symshape as ss
>>> a, b = ss.dims("a b")
>>> str(EXACT_COMPARE["equal"](a, b)), str(EXACT_COMPARE["less"](a, b))
('-min(1, max(0, -a + b, a - b)) + 1', 'min(1, max(0, -a + b))')
"""


def _truth(c: Cond) -> Dim | None:
    v = cond_value(c, {})
    return None if v is None else as_dim(1 if v else 0)


def compare_entry(op: str, x: Dim, y: Dim) -> Dim:
    """The comparison ``op(x, y)`` as 0/1: the constant where bounds decide it, else the exact
    expression (:data:`EXACT_COMPARE`)."""
    t = _truth(COMPARE_VALUE_OPS[op](x, y))
    return EXACT_COMPARE[op](x, y) if t is None else t


def compare_value(op: str, a: TensorType, b: TensorType, out_shape: Sequence[Dim]) -> Value | None:
    """The value of the comparison ``op(a, b)`` (a bool tensor: entries 0/1): ``(b, -1, -1) == -1``
    is ``(0, 1, 1)`` since ``b >= 1``; ``a == b`` for two symbols is ``1 - min(1, max(0, a - b,
    b - a))``."""
    COMPARE_VALUE_OPS[op]  # an unknown operator name: KeyError
    if a.value is None and b.value is None:
        return None
    return _entrywise(
        lambda x, y: None if x is None or y is None else compare_entry(op, x, y), (a, b), out_shape
    )


def _pick(c: Dim | None, x: Dim | None, y: Dim | None) -> Dim | None:
    """``x`` where the 0/1 entry ``c`` is 1, ``y`` where it is 0; for a symbolic ``c``,
    ``c*x + (1 - c)*y``."""
    if c is None:
        return None
    cv = c.constant_value
    if cv is not None:
        return x if cv else y
    if x is None or y is None:
        return None
    if x == y:
        return x
    return c * x + (1 - c) * y


def where_value(c: TensorType, x: TensorType, y: TensorType, out_shape: Sequence[Dim]) -> Value | None:
    """The value of ``where(c, x, y)``: ``x``'s entry where ``c``'s is 1, ``y``'s where it is 0,
    ``c*x + (1 - c)*y`` where ``c``'s entry is a symbolic 0/1 expression (a ``bool`` value)."""
    if c.value is None or (x.value is None and y.value is None):
        return None
    if c.dtype != "bool":  # only a bool value's entries are known to be 0 or 1
        return _entrywise(
            lambda ce, xe, ye: None if ce is None or ce.constant_value is None else _pick(ce, xe, ye),
            (c, x, y),
            out_shape,
        )
    return _entrywise(_pick, (c, x, y), out_shape)


def _truthy(t: TensorType, e: Dim) -> Dim:
    """An entry of ``t`` as 0/1: itself for a bool value, else ``e != 0``."""
    return e if t.dtype == "bool" else compare_entry("not_equal", e, as_dim(0))


LOGICAL_VALUE_OPS: dict[str, Callable[[Dim, Dim], Dim]] = {
    "logical_and": lambda x, y: dmin(x, y),
    "logical_or": lambda x, y: dmax(x, y),
}
"""Logical operators on 0/1 entries by operator name: ``and`` is ``min``, ``or`` is ``max``."""


def logical_value(op: str, a: TensorType, b: TensorType, out_shape: Sequence[Dim]) -> Value | None:
    """The value of ``logical_and``/``logical_or`` (entries 0/1; a non-bool entry counts as
    ``!= 0``)."""
    fn = LOGICAL_VALUE_OPS[op]
    if a.value is None and b.value is None:
        return None
    return _entrywise(
        lambda x, y: None if x is None or y is None else fn(_truthy(a, x), _truthy(b, y)), (a, b), out_shape
    )


def not_value(x: TensorType) -> Value | None:
    """The value of ``logical_not(x)``: ``1 - e`` for each 0/1 entry ``e`` (a non-bool entry
    counts as ``!= 0``)."""
    if x.value is None or x.dtype not in VALUE_DTYPES:
        return None
    if isinstance(x.value, Dim):
        return 1 - _truthy(x, x.value)
    return value_from_entries(None if e is None else 1 - _truthy(x, e) for e in x.value)


def negative_value(x: TensorType) -> Value | None:
    """The value of ``negative(x)``: ``-e`` for each entry ``e`` of a signed integer tensor (a
    bool's or an unsigned one's is not tracked: numpy refuses the one, wraps the other)."""
    if x.value is None or x.dtype not in VALUE_DTYPES or not str(x.dtype).startswith("int"):
        return None
    if isinstance(x.value, Dim):
        return -x.value
    return value_from_entries(None if e is None else -e for e in x.value)


def cast_value(x: TensorType, dtype: str) -> Value | None:
    """The value of ``cast(x, dtype)``: the same between int32/int64 and from bool; to bool, each
    entry ``!= 0`` where that is decided."""
    if x.value is None or dtype not in VALUE_DTYPES or x.dtype not in VALUE_DTYPES:
        return None
    if dtype != "bool" or x.dtype == "bool":
        return x.value
    if isinstance(x.value, Dim):
        return compare_entry("not_equal", x.value, as_dim(0))
    return value_from_entries(
        None if e is None else compare_entry("not_equal", e, as_dim(0)) for e in x.value
    )


# ----------------------------------------------------------------------------------------------
# indexing and joining


def _index(i: Dim | None, k: int, mode: str) -> int | None:
    """The position a constant index reads in a length-``k`` axis, by ``take``'s mode."""
    if i is None or k == 0:
        return None
    c = i.constant_value
    if c is None:
        return None
    if mode == "clip":
        return min(max(c, 0), k - 1)
    if mode == "wrap":
        return c % k
    if c < 0 and mode != "nonnegative":
        c += k
    return c if 0 <= c < k else None


def take_value(x: TensorType, ind: TensorType, mode: str) -> Value | None:
    """The value of ``take(x, ind)`` along the only axis of a 1-d ``x``."""
    es = entries_of(x)
    if es is None or ind.value is None:
        return None
    k = len(es)
    if isinstance(ind.value, Dim):
        p = _index(ind.value, k, mode)
        return None if p is None else es[p]
    out: list[Dim | None] = []
    for i in ind.value:
        p = _index(i, k, mode)
        out.append(None if p is None else es[p])
    return value_from_entries(out)


def slice_value(
    x: TensorType, begin: int | Dim | None, end: int | Dim | None, stride: int, size_mode: bool
) -> Value | None:
    """The value of ``x[begin:end:stride]`` for a 1-d ``x`` and constant bounds (``size_mode``:
    ``end`` is a size, ``-1`` meaning to the end)."""
    es = entries_of(x)
    if es is None:
        return None
    b = _int(begin)
    e = _int(end)
    if (begin is not None and b is None) or (end is not None and e is None):
        return None
    if size_mode:
        start = slice(b, None).indices(len(es))[0]
        stop = None if e is None or e < 0 else start + e
        return value_from_entries(es[start:stop])
    return value_from_entries(es[b:e:stride])


def _int(v: int | Dim | None) -> int | None:
    if v is None:
        return None
    if isinstance(v, Dim):
        return v.constant_value
    return v


def concat_value(fields: Sequence[TensorType]) -> Value | None:
    """The value of the concatenation of 1-d tensors (a field without a value contributes unknown
    entries; a field of unknown length makes the whole value unknown)."""
    out: list[Dim | None] = []
    for f in fields:
        es = entries_of(f)
        if es is None:
            return None
        out.extend(es)
    return value_from_entries(out)


def reshape_value(x: TensorType, out_shape: Sequence[Dim]) -> Value | None:
    """The value of a reshape of a 0-d or 1-d ``x`` to a 0-d or 1-d result (the same entries)."""
    if x.value is None or len(out_shape) > 1:
        return None
    es = (x.value,) if isinstance(x.value, Dim) else x.value
    if len(out_shape) == 0:
        return es[0] if len(es) == 1 else None
    if out_shape[0].constant_value != len(es):
        return None
    return value_from_entries(es)


# ----------------------------------------------------------------------------------------------
# reading sizes from a valued tensor


def size_entries(ctx: Context, t: Type, what: str, index: int) -> tuple[Dim | None, ...] | str | None:
    """The entries of the size tensor ``t`` (argument ``index`` of the call): a 1-d (or 0-d, one
    entry) integer tensor; an unknown entry is None. None means: defer (``t`` is still a hole);
    :data:`UNKNOWN_LENGTH` when its length is unknown on the final run. A tensor that is not an
    integer tensor of rank 0 or 1 fails the relation (``dtype-mismatch``, ``rank-mismatch``)."""
    if not isinstance(t, TensorType):
        if isinstance(t, (IncompleteType, TypeVar)):
            return None
        msg = f"{what} (argument {index + 1}) must be an integer tensor, found `{t}`"
        ctx.fail(DTYPE_MISMATCH, f"{ctx.name}: {msg}")
    if t.dtype is not None and (not isinstance(t.dtype, str) or not t.dtype.startswith(("int", "uint"))):
        ctx.fail(DTYPE_MISMATCH, f"{ctx.name}: {what} must be an integer tensor, got `{t}`")
    if not isinstance(t.shape, tuple):
        return UNKNOWN_LENGTH if ctx.final else None
    if len(t.shape) == 0:
        return (t.value,) if isinstance(t.value, Dim) else (None,)
    if len(t.shape) > 1:
        ctx.fail(RANK_MISMATCH, f"{ctx.name}: {what} must be a 1-d tensor, got `{t}`")
    es = entries_of(t)
    if es is None:
        if t.shape[0].has_unknowns and not ctx.final:
            return None
        return UNKNOWN_LENGTH
    return es


def scalar_entry(ctx: Context, t: Type, what: str, index: int) -> tuple[Dim | None] | None:
    """The value of a 0-d (or one-entry 1-d) integer tensor as a one-tuple (None inside when
    unknown); None: defer. A float scalar has no value (``(None,)``)."""
    if (
        isinstance(t, TensorType)
        and t.dtype is not None
        and isinstance(t.dtype, str)
        and t.dtype.startswith(("float", "bfloat"))
    ):
        if isinstance(t.shape, tuple) and len(t.shape) > 1:
            ctx.fail(RANK_MISMATCH, f"{ctx.name}: {what} must be a scalar, got `{t}`")
        return (None,)
    es = size_entries(ctx, t, what, index)
    if es is None:
        return None
    if isinstance(es, str) or len(es) != 1:
        if isinstance(es, str) and not ctx.final:
            return None
        if isinstance(es, tuple):
            ctx.fail(RANK_MISMATCH, f"{ctx.name}: {what} must be a scalar, got `{t}`")
        return (None,)
    return (es[0],)
