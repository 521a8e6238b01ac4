"""Indexing: ``take`` and ``strided_slice``.

``take(x, indices, axis=None, batch_dims=0)``: ``indices`` must have an integer dtype. Without
``axis`` the result has the indices' shape (``x`` is flattened); otherwise
``x.shape[:axis] + indices.shape[batch_dims:] + x.shape[axis+1:]`` (the leading ``batch_dims``
dimensions of ``x`` and ``indices`` must agree). Reading from an empty extent fails in every mode
(numpy raises): an extent that may be 0 needs ``d >= 1`` unless the result has no elements.

``strided_slice(x, begin, end, strides=None, axes=None, slice_mode="end")`` follows Python/numpy
slicing per axis (``x[b:e:s]``): negative indices count from the end, indices are clamped, empty
slices have size 0, a ``None`` begin/end means "from the start/to the end" (as do values of
magnitude ``>= 2**31``, Relay's sentinels). With symbolic dimensions the size is an exact formula,
e.g. ``x[1:-1]`` on ``n`` gives ``max(n - 2, 0)``. ``slice_mode="size"`` reads ``end`` as sizes
(``-1``: to the end) and ignores ``strides``. Without ``axes`` the lists cover the leading axes.

``begin`` and ``end`` may hold dimensions (Relax's symbolic ``begin``/``end``): a symbolic index
counts from the start and is clamped like a literal one, so ``x[b:e]`` on ``n`` gives
``max(min(e, n) - min(b, n), 0)`` (simplified where the bounds decide it). As dimensions have no
conditional, a symbolic index must be ``>= 0`` (a ``negative-dim`` guard when its bounds do not
show it: ``n - 5``); Relax instead reads a negative value from the end.
"""

from __future__ import annotations

from collections.abc import Sequence

from symshape.encoding.conds import any_of, eq, ge
from symshape.encoding.dims import ZERO, Dim, as_dim, bounds, dmax, dmin, floordiv, fresh_any
from symshape.encoding.types import Attrs, Tensor, TensorType, Type
from symshape.errors import AXIS_OUT_OF_RANGE, DTYPE_MISMATCH, NEGATIVE_DIM, SHAPE_MISMATCH, SymshapeError
from symshape.relations.base import Context, relation
from symshape.relations.common import Checks, attr_int, attr_str, bad, is_int_dtype, norm_axis, product
from symshape.relations.operands import ranked_or_defer, tensor_args, tensor_or_defer, unknown_rank
from symshape.relations.values import size_entries, slice_value, take_value, with_value

__all__ = ["take_rel", "strided_slice_rel", "slice_len", "parse_slice_attrs", "SliceSpec", "TAKE_MODES"]

TAKE_MODES: tuple[str, ...] = ("clip", "wrap", "fast", "raise", "nonnegative")
"""``take``'s modes for an index out of range: ``clip`` to the ends, ``wrap`` around, ``fast`` and
``raise`` (an error; numpy's and Python's reading, ``-d <= i < d``), ``nonnegative`` (an error
below 0 too: ``0 <= i < d``, torch's ``embedding``)."""

BIG = 2**31


@relation("take")
def take_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """Gather along ``axis`` (or from the flattened tensor)."""
    out = args[2]
    axis_v = attrs.get("axis")
    axis = None if axis_v is None else attr_int(attrs, "axis", None, ctx.name)
    bd = attr_int(attrs, "batch_dims", 0, ctx.name)
    mode = attr_str(attrs, "mode", "clip", ctx.name, TAKE_MODES) or "clip"
    ts = tensor_args(ctx, args, 2)
    if ts is None:
        return False
    x, ind = ts
    if is_int_dtype(ind.dtype) is False:
        ctx.fail(DTYPE_MISMATCH, f"take: indices must have an integer dtype, got `{ind}`")
    if axis is None:
        if x.ndim is not None and ind.ndim is not None:
            chk0 = Checks()
            msg = f"take: cannot take from `{x}`, which may be empty"
            _nonempty_source(chk0, product(x.dims), ind.dims, msg)
            if not chk0.commit(ctx):
                return False
        result = TensorType(ind.shape, x.dtype)
        if x.value is not None and x.ndim == 1:
            result = with_value(result, take_value(x, ind, mode))
        ctx.assign(out, result)
        return True
    if x.ndim is None or ind.ndim is None:
        return unknown_rank(ctx, out, x.dtype)
    ax = norm_axis(ctx, axis, x.ndim, "take")
    if bd < 0:
        bd += ind.ndim
    if not 0 <= bd <= ind.ndim:
        ctx.fail(AXIS_OUT_OF_RANGE, f"take: batch_dims {bd} is out of range for indices `{ind}`")
    if bd > ax:
        ctx.fail(AXIS_OUT_OF_RANGE, f"take: batch_dims {bd} must be <= axis {ax}")
    chk = Checks()
    for i in range(bd):
        chk.equal(
            x.dims[i],
            ind.dims[i],
            SHAPE_MISMATCH,
            f"take: batch dimension {i} differs: {x.dims[i]} vs {ind.dims[i]}",
        )
    shape = (*x.dims[:ax], *ind.dims[bd:], *x.dims[ax + 1 :])
    msg = f"take: cannot take from axis {ax} of `{x}`, which may be empty"
    _nonempty_source(chk, x.dims[ax], shape, msg)
    if not chk.commit(ctx):
        return False
    result = Tensor(shape, x.dtype)
    if x.value is not None and x.ndim == 1 and bd == 0:
        result = with_value(result, take_value(x, ind, mode))
    ctx.assign(out, result)
    return True


def _nonempty_source(chk: Checks, d: Dim, result: Sequence[Dim], message: str) -> None:
    """Reading from an extent ``d`` that may be 0 fails in every mode (numpy raises "cannot do a
    non-empty take from an empty axes"): ``d >= 1`` unless the result has no elements."""
    if bounds(d)[0] >= 1:
        return
    chk.require(any_of(ge(d, 1), eq(product(result), 0)), SHAPE_MISMATCH, message)


def _clamp(v: Dim, lo: Dim, hi: Dim) -> Dim:
    return dmin(dmax(v, lo), hi)


Index = int | Dim | None


def slice_len(d: Dim, b: Index, e: Index, s: int) -> Dim:
    """The length of ``range(d)[b:e:s]`` for a (symbolic) ``d >= 0`` (Python's slice.indices); a
    symbolic index is taken as non-negative (counted from the start)."""
    if s > 0:
        start = ZERO if b is None else _norm_index(d, b, ZERO, d)
        stop = d if e is None else _norm_index(d, e, ZERO, d)
        return dmax(floordiv(stop - start + (s - 1), s), 0)
    m1 = as_dim(-1)
    start = d - 1 if b is None else _norm_index(d, b, m1, d - 1)
    stop = m1 if e is None else _norm_index(d, e, m1, d - 1)
    return dmax(floordiv(start - stop + (-s - 1), -s), 0)


def _norm_index(d: Dim, i: int | Dim, lo: Dim, hi: Dim) -> Dim:
    if isinstance(i, Dim):
        return _clamp(i, lo, hi)
    if abs(i) >= BIG:  # Relay's sentinels: past either end
        return hi if i > 0 else lo
    v = d + i if i < 0 else as_dim(i)
    return _clamp(v, lo, hi)


class SliceSpec:
    """Validated ``strided_slice`` attributes."""

    __slots__ = ("axes", "begin", "end", "mode", "strides")

    def __init__(self, attrs: Attrs, op: str) -> None:
        self.begin = _opt_ints(attrs.get("begin"), "begin", op)
        self.end = _opt_ints(attrs.get("end"), "end", op)
        st = attrs.get("strides")
        self.strides = None if st is None else _ints(st, "strides", op)
        if self.strides is not None and any(x == 0 for x in self.strides):
            raise bad(op, "strides must be non-zero")
        self.axes, self.mode = _axes_mode(attrs, op, self.begin, self.end, self.strides)


def _axes_mode(
    attrs: Attrs, op: str, begin: Sequence[object], end: Sequence[object], strides: Sequence[object] | None
) -> tuple[tuple[int, ...] | None, str]:
    """``axes`` (distinct) and ``slice_mode`` of a ``strided_slice``, and the lengths of its bounds
    checked: ``begin`` and ``end`` alike, ``strides`` one value or one per bound, ``axes`` one per
    bound."""
    ax = attrs.get("axes")
    axes = None if ax is None else _ints(ax, "axes", op)
    if axes is not None and len(set(axes)) != len(axes):
        raise bad(op, f"duplicate axes {axes}")
    mode = attr_str(attrs, "slice_mode", "end", op, ("end", "size"))
    assert mode is not None
    n = len(begin)
    if n != len(end):
        raise bad(op, f"begin and end must have the same length, got {n} and {len(end)}")
    if strides is not None and len(strides) not in (1, n):
        want = "1 value" if n == 1 else f"1 or {n} values"
        raise bad(op, f"strides must have {want}, got {len(strides)}")
    if axes is not None and len(axes) != n:
        raise bad(op, f"axes must have {n} values")
    return axes, mode


def parse_slice_attrs(attrs: Attrs, op: str = "strided_slice") -> SliceSpec:
    return SliceSpec(attrs, op)


def _ints(v: object, name: str, op: str) -> tuple[int, ...]:
    if isinstance(v, int) and not isinstance(v, bool):
        return (v,)
    if isinstance(v, tuple) and all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        return tuple(int(x) for x in v)
    raise bad(op, f"{name} must be a sequence of ints, got {v!r}")


def _index(x: object) -> bool:
    return x is None or (isinstance(x, int) and not isinstance(x, bool)) or isinstance(x, Dim)


def _opt_ints(v: object, name: str, op: str) -> tuple[Index, ...]:
    """Indices: ints, dimensions (a constant one becomes its int) or None."""
    if (isinstance(v, int) and not isinstance(v, bool)) or isinstance(v, Dim):
        v = (v,)
    if isinstance(v, tuple) and all(_index(x) for x in v):
        out: list[Index] = []
        for x in v:
            if isinstance(x, Dim) and x.constant_value is not None:
                out.append(x.constant_value)
            else:
                out.append(x)
        return tuple(out)
    raise bad(op, f"{name} must be a sequence of ints, dimensions or None, got {v!r}")


class _DynSpec:
    """``strided_slice`` bounds read from the values of its ``begin``, ``end`` (and ``strides``)
    inputs: an unknown entry is None (the axis gets a fresh size)."""

    __slots__ = ("axes", "begin", "end", "mode", "strides", "unknown")

    def __init__(
        self,
        attrs: Attrs,
        op: str,
        begin: Sequence[Dim | None],
        end: Sequence[Dim | None],
        strides: Sequence[Dim | None] | None,
    ) -> None:
        self.axes, self.mode = _axes_mode(attrs, op, begin, end, strides)
        self.unknown: set[int] = set()
        self.begin: list[Index] = []
        self.end: list[Index] = []
        for j, (b, e) in enumerate(zip(begin, end)):
            if b is None or e is None:
                self.unknown.add(j)
            self.begin.append(_entry(b))
            self.end.append(_entry(e))
        st: list[int] | None = None
        if strides is not None:
            st = []
            for j, v in enumerate(strides):
                c = None if v is None else v.constant_value
                if c == 0:
                    raise bad(op, "strides must be non-zero")
                if c is None:  # a stride of unknown value (or sign): the size is not known
                    if len(strides) == 1:
                        self.unknown.update(range(len(begin)))
                    else:
                        self.unknown.add(j)
                st.append(1 if c is None else c)
        self.strides = None if st is None else tuple(st)


def _entry(d: Dim | None) -> Index:
    if d is None:
        return 0
    c = d.constant_value
    return d if c is None else c


def _dyn_spec(ctx: Context, args: Sequence[Type], attrs: Attrs) -> _DynSpec | str | None:
    """The dynamic bounds (None: defer; a string: a bound's length is unknown)."""
    got: list[tuple[Dim | None, ...]] = []
    for i, what in ((1, "begin"), (2, "end"), (3, "strides")):
        if i >= ctx.num_inputs:
            break
        es = size_entries(ctx, args[i], what, i)
        if es is None or isinstance(es, str):
            return es
        got.append(es)
    try:
        return _DynSpec(attrs, ctx.name, got[0], got[1], got[2] if len(got) > 2 else None)
    except SymshapeError as e:
        ctx.fail(e.code, e.message)


@relation("strided_slice")
def strided_slice_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """numpy slicing per axis (see the module docstring); with 3 or 4 inputs the bounds (and
    strides) are the values of the inputs ``begin``, ``end`` (and ``strides``)."""
    out = args[ctx.num_inputs]
    spec: SliceSpec | _DynSpec
    if ctx.num_inputs >= 3:
        got = _dyn_spec(ctx, args, attrs)
        if got is None:
            return False
        x0 = tensor_or_defer(args[0], ctx, 0)
        if x0 is None:
            return False
        if isinstance(got, str):
            fresh = None if x0.ndim is None else tuple(fresh_any(0) for _ in range(x0.ndim))
            ctx.assign(out, Tensor(fresh, x0.dtype))
            return True
        spec = got
    else:
        spec = SliceSpec(attrs, ctx.name)
    x = ranked_or_defer(ctx, args, out)
    if isinstance(x, bool):
        return x
    r = len(x.dims)
    k = len(spec.begin)
    if spec.axes is None:
        if k > r:
            ctx.fail(AXIS_OUT_OF_RANGE, f"strided_slice: {k} axes sliced but `{x}` has rank {r}")
        axes = list(range(k))
    else:
        axes = [norm_axis(ctx, a, r, "strided_slice") for a in spec.axes]
        if len(set(axes)) != len(axes):
            ctx.fail(AXIS_OUT_OF_RANGE, f"strided_slice: duplicate axes {spec.axes} for rank {r}")
    shape = list(x.dims)
    chk = Checks()
    unknown = spec.unknown if isinstance(spec, _DynSpec) else ()
    for j, ax in enumerate(axes):
        d = x.dims[ax]
        b, e = spec.begin[j], spec.end[j]
        if j in unknown:  # a size the run's values decide: given, not solved for
            shape[ax] = fresh_any(0)  # (it may be empty)
            continue
        for what, v in (("begin", b), ("end", e)):
            if isinstance(v, Dim) and bounds(v)[0] < 0:
                chk.require(
                    ge(v, 0),
                    NEGATIVE_DIM,
                    f"strided_slice: the symbolic {what} {v} on axis {ax} may be negative "
                    "(a symbolic index counts from the start)",
                )
        if spec.mode == "size":
            # Relay: end = canonical begin + size (a negative size: to the end); strides ignored
            start = ZERO if b is None else _norm_index(d, b, ZERO, d)
            if e is None or (isinstance(e, int) and e < 0):
                shape[ax] = d - start
            else:
                shape[ax] = dmax(dmin(as_dim(e), d - start), 0)
            continue
        s = 1 if spec.strides is None else spec.strides[j if len(spec.strides) > 1 else 0]
        shape[ax] = slice_len(d, b, e, s)
    if not chk.commit(ctx):
        return False
    result = Tensor(tuple(shape), x.dtype)
    if x.value is not None and r == 1 and len(axes) == 1 and not unknown:
        s = 1 if spec.strides is None else spec.strides[0]
        result = with_value(result, slice_value(x, spec.begin[0], spec.end[0], s, spec.mode == "size"))
    ctx.assign(out, result)
    return True
