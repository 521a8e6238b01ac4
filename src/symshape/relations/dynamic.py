"""Operators of shapes computed at run time: shape values and data-dependent sizes.

======================  ==========================================================================
relation                rule
======================  ==========================================================================
``shape_of``            ``x: (d1, ..., dk)`` -> ``Tensor[(k,), int64] = (d1, ..., dk)`` (``dtype``
                        int32 or int64)
``int_tensor``          no inputs: the ``value`` attribute (ints and dimensions) as a 0-d or 1-d
                        int tensor carrying it — how a program writes a literal shape or size
                        that contains symbols
``arange``              ``arange(start, stop, step)`` (numpy/ONNX ``Range``): length
                        ``max(ceil((stop - start) / step), 0)``, exact for a constant ``step``
                        (or a symbolic one known to be positive); the entries as the value when
                        the length is a small constant
``tile``                numpy ``tile(x, reps)``: the shorter of ``x.shape`` and ``reps`` is
                        padded with leading 1s, the result is their product entrywise
``expand``              torch/ONNX ``expand(x, shape)``: the numpy broadcast of ``x`` and
                        ``shape``; ``-1`` keeps ``x``'s dimension at that position
``constant_of_shape``   ONNX ``ConstantOfShape``: a tensor of the shape the input holds
``full``                ``full(fill_value, shape)``: a tensor of ``shape``, the fill's dtype (an
                        int fill's value repeated as the value of a small int result)
``nonzero``             ``(rank(x), u)`` int64, ``u`` a fresh size (ONNX/Relax layout)
``unique``              ``(u,)`` of ``x``'s dtype (``axis``: ``x.shape`` with that axis ``u``)
``boolean_mask``        ``x[mask]``: ``(u, *x.shape[mask.ndim:])``; the mask's shape must equal the
                        leading dimensions of ``x``
======================  ==========================================================================

A size read from a tensor is its value (:mod:`symshape.relations.values`); an unknown entry gives
a fresh dimension, an unknown length an unknown rank. The size ``u`` of a data-dependent result is
a given symbol ``>= 0`` (PyTorch's *unbacked* symbols) named by the ``size`` attribute; ``infer``
names them ``u0, u1, ...`` in program order and reports where each was born.
"""

from __future__ import annotations

from collections.abc import Sequence

from symshape.encoding.conds import le
from symshape.encoding.dims import ONE, Dim, as_dim, bounds, dmax, floordiv, fresh_any
from symshape.encoding.types import Attrs, Tensor, TensorType, Type
from symshape.encoding.values import MAX_VALUE_LEN, SIZE_DTYPES
from symshape.errors import BAD_ATTRIBUTE, DTYPE_MISMATCH, RANK_MISMATCH, SHAPE_MISMATCH
from symshape.relations.base import Context, relation
from symshape.relations.common import Checks, attr_dtype, attr_int, bad, norm_axis, product
from symshape.relations.elementwise import broadcast_shapes
from symshape.relations.operands import ranked_or_defer, tensor_args, tensor_or_defer, unknown_rank
from symshape.relations.sizes import dynamic_sizes, fill_unknown
from symshape.relations.values import filled_value, scalar_entry, with_value

__all__ = [
    "shape_of_rel",
    "int_tensor_rel",
    "arange_rel",
    "arange_len",
    "tile_rel",
    "expand_rel",
    "full_rel",
    "nonzero_rel",
    "unique_rel",
    "boolean_mask_rel",
    "parse_int_value",
    "SIZE_OPS",
]

SIZE_OPS: frozenset[str] = frozenset({"nonzero", "unique", "boolean_mask"})
"""The relations whose result has a data-dependent size (a ``size`` attribute names it)."""


@relation("shape_of")
def shape_of_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``Tensor[(rank,), int64] = x.shape``."""
    dtype = attr_dtype(attrs, "dtype", ctx.name) or "int64"
    if dtype not in SIZE_DTYPES:
        ctx.fail(BAD_ATTRIBUTE, f"{ctx.name}: dtype must be int32 or int64, got {dtype}")
    x = ranked_or_defer(ctx, args, args[1], lambda _: Tensor((ctx.fresh_dim(),), dtype))
    if isinstance(x, bool):
        return x
    ctx.assign(args[1], with_value(Tensor((as_dim(len(x.dims)),), dtype), x.dims))
    return True


def parse_int_value(attrs: Attrs, op: str) -> tuple[Dim, ...] | Dim:
    """``int_tensor``'s ``value``: an int or dimension (0-d) or a sequence of them (1-d)."""
    v = attrs.get("value")
    if isinstance(v, (int, Dim)) and not isinstance(v, bool):
        return as_dim(v)
    if isinstance(v, tuple) and all(isinstance(x, (int, Dim)) and not isinstance(x, bool) for x in v):
        if len(v) > MAX_VALUE_LEN:
            raise bad(op, f"value has {len(v)} entries (at most {MAX_VALUE_LEN})")
        return tuple(as_dim(x) for x in v)
    raise bad(op, f"value must be an int, a dimension or a sequence of them, got {v!r}")


@relation("int_tensor")
def int_tensor_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """A 0-d or 1-d int tensor holding the ``value`` attribute."""
    v = parse_int_value(attrs, ctx.name)
    dtype = attr_dtype(attrs, "dtype", ctx.name) or "int64"
    if dtype not in SIZE_DTYPES:
        ctx.fail(BAD_ATTRIBUTE, f"{ctx.name}: dtype must be int32 or int64, got {dtype}")
    shape: tuple[Dim, ...] = () if isinstance(v, Dim) else (as_dim(len(v)),)
    ctx.assign(args[0], TensorType(shape, dtype, v))
    return True


# ----------------------------------------------------------------------------------------------
# arange


def arange_len(start: Dim, stop: Dim, step: Dim) -> Dim | None:
    """``max(ceil((stop - start) / step), 0)`` when a dimension states it exactly: ``step`` a
    non-zero constant or a symbol of known sign."""
    lo, hi = bounds(step)
    diff = stop - start
    if lo >= 1 or hi <= -1:
        q = floordiv(diff, step) if lo >= 1 else floordiv(-diff, -step)
        if q * step == diff:  # an exact division needs no rounding
            return dmax(q, 0)
    if lo >= 1:
        return dmax(floordiv(stop - start + step - 1, step), 0)
    if hi <= -1:
        return dmax(floordiv(start - stop - step - 1, -step), 0)
    return None


@relation("arange")
def arange_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``(max(ceil((stop - start)/step), 0),)``; the inputs are 0-d tensors (their values)."""
    dtype = attr_dtype(attrs, "dtype", ctx.name)
    vals: list[Dim | None] = []
    dts: list[object] = []
    for i, what in enumerate(("start", "stop", "step")):
        e = scalar_entry(ctx, args[i], what, i)
        if e is None:
            return False
        vals.append(e[0])
        t = args[i]
        dts.append(t.dtype if isinstance(t, TensorType) else None)
    out_dtype = dtype or (dts[0] if all(d == dts[0] for d in dts) else None) or "int64"
    start, stop, step = vals
    if step is not None and step == 0:
        ctx.fail(BAD_ATTRIBUTE, f"{ctx.name}: step must not be 0")
    n = None if start is None or stop is None or step is None else arange_len(start, stop, step)
    if n is None:
        ctx.assign(args[3], Tensor((fresh_any(0),), out_dtype))  # (the run's values decide it)
        return True
    result = Tensor((n,), out_dtype)
    k = n.constant_value
    if k is not None and k <= MAX_VALUE_LEN and out_dtype in SIZE_DTYPES:
        assert start is not None and step is not None
        result = with_value(result, tuple(start + step * i for i in range(k)))
    ctx.assign(args[3], result)
    return True


# ----------------------------------------------------------------------------------------------
# tile, expand, full


def _reps(ctx: Context, args: Sequence[Type], attrs: Attrs, name: str) -> tuple[Dim | None, ...] | str | None:
    if ctx.num_inputs == 2:
        return dynamic_sizes(ctx, args[1], f"the {name}", 1)
    v = attrs.get(name)
    if isinstance(v, (int, Dim)) and not isinstance(v, bool):
        v = (v,)
    if not isinstance(v, tuple):
        raise bad(ctx.name, f"{name} must be a sequence of ints or dimensions, got {v!r}")
    out: list[Dim | None] = []
    for x in v:
        if not isinstance(x, (int, Dim)) or isinstance(x, bool):
            raise bad(ctx.name, f"{name} must contain ints or dimensions, got {x!r}")
        out.append(as_dim(x))
    return tuple(out)


@relation("tile")
def tile_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """numpy ``tile``: ``x.shape`` and ``reps`` padded with leading 1s to one length, multiplied."""
    out = args[ctx.num_inputs]
    reps = _reps(ctx, args, attrs, "reps")
    x = tensor_or_defer(args[0], ctx, 0)
    if reps is None or x is None:
        return False
    if x.ndim is None or isinstance(reps, str):
        if not ctx.final:
            return False
        ctx.assign(out, Tensor(None, x.dtype))
        return True
    for i, r in enumerate(reps):
        if r is not None and r.constant_value is not None and r.constant_value < 0:
            ctx.fail(BAD_ATTRIBUTE, f"{ctx.name}: reps has a negative entry {r} (entry {i})")
    k = max(x.ndim, len(reps))
    sh = (ONE,) * (k - x.ndim) + x.dims
    rp = (ONE,) * (k - len(reps)) + tuple(reps)
    dims = tuple(fresh_any(0) if r is None else d * r for d, r in zip(sh, rp))  # (a rep the run gives)
    ctx.assign(out, Tensor(dims, x.dtype))
    return True


@relation("expand")
def expand_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """torch/ONNX ``expand``: the broadcast of ``x`` and ``shape``, ``-1`` keeping ``x``'s dim."""
    out = args[ctx.num_inputs]
    x = tensor_or_defer(args[0], ctx, 0)
    if ctx.num_inputs == 2:
        from symshape.relations.values import size_entries

        es = size_entries(ctx, args[1], "the shape", 1)
    else:
        es = _reps(ctx, args, attrs, "shape")
    if es is None or x is None:
        return False
    if isinstance(es, str) or x.ndim is None:
        return unknown_rank(ctx, out, x.dtype)
    target: list[Dim | None] = []
    k = len(es)
    for i, d in enumerate(es):
        j = x.ndim - k + i
        if d is not None and d == -1:
            if j < 0:
                msg = f"-1 at entry {i} of the shape has no dimension of `{x}` to keep"
                ctx.fail(BAD_ATTRIBUTE, f"{ctx.name}: {msg}")
            target.append(x.dims[j])
            continue
        if d is not None and d.constant_value is not None and d.constant_value < 0:
            ctx.fail(BAD_ATTRIBUTE, f"{ctx.name}: the shape has a negative size {d} (entry {i})")
        target.append(d)
    full, fresh = fill_unknown(ctx, x, target)
    # where the target is unknown, the result is the filled dimension (no condition): both sides
    # of the pair stand for it
    xs = list(x.dims)
    for i in fresh:
        j = x.ndim - k + i
        if j >= 0:
            xs[j] = full[i]
    shape = broadcast_shapes(ctx, Tensor(tuple(xs), x.dtype), Tensor(full, x.dtype))
    if shape is None:
        return False
    ctx.assign(out, Tensor(shape, x.dtype))
    return True


@relation("full")
def full_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``full(fill_value, shape)``: a tensor of ``shape`` (an attribute, or the value of the
    second input) with the ``dtype`` attribute or the fill's dtype; the fill must be 0-d."""
    out = args[ctx.num_inputs]
    fill = tensor_or_defer(args[0], ctx, 0)
    if fill is None:
        return False
    if fill.ndim is not None and fill.ndim != 0:
        ctx.fail(RANK_MISMATCH, f"{ctx.name}: the fill value must be a scalar, got `{fill}`")
    dtype = attr_dtype(attrs, "dtype", ctx.name) or fill.dtype
    if ctx.num_inputs == 2:
        es = dynamic_sizes(ctx, args[1], "the shape", 1)
        if es is None:
            return False
        if isinstance(es, str):
            ctx.assign(out, Tensor(None, dtype))
            return True
        t = Tensor(tuple(fresh_any(0) if d is None else d for d in es), dtype)  # (an entry the run gives)
    else:
        from symshape.relations.common import attr_shape

        t = Tensor(attr_shape(attrs, "shape", ctx.name), dtype)
    # an int fill of known value: a small int result holds it repeated
    ctx.assign(out, filled_value(t, fill.value if isinstance(fill.value, Dim) else None))
    return True


# ----------------------------------------------------------------------------------------------
# data-dependent sizes


def _at_most(ctx: Context, u: Dim, count: Dim) -> None:
    """State that the data-dependent size ``u`` is at most ``count`` (the elements or slices it
    is drawn from): a fact of every run, so an assignment beyond it is no run at all."""
    ctx.assume(le(u, count))


def _size(ctx: Context, attrs: Attrs) -> Dim:
    v = attrs.get("size")
    if not isinstance(v, Dim) or not v.is_symbol:
        ctx.fail(
            BAD_ATTRIBUTE,
            f"{ctx.name}: the data-dependent size needs a symbol (attribute size, e.g. "
            f"ss.dim('u0', min=0)); got {v!r}",
        )
    return v


@relation("nonzero")
def nonzero_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``(rank(x), u)`` int64: the indices of the ``u`` non-zero elements."""
    u = _size(ctx, attrs)
    x = ranked_or_defer(ctx, args, args[1], lambda _: Tensor((ctx.fresh_dim(), u), "int64"))
    if isinstance(x, bool):
        return x
    _at_most(ctx, u, product(x.dims))
    ctx.assign(args[1], Tensor((as_dim(len(x.dims)), u), "int64"))
    return True


@relation("unique")
def unique_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``(u,)`` (the sorted distinct elements of the flattened ``x``), or with ``axis`` the
    distinct slices along it."""
    u = _size(ctx, attrs)
    x = tensor_or_defer(args[0], ctx, 0)
    if x is None:
        return False
    axis = attrs.get("axis")
    if axis is None:
        if x.ndim is not None:
            _at_most(ctx, u, product(x.dims))
        ctx.assign(args[1], Tensor((u,), x.dtype))
        return True
    a = attr_int(attrs, "axis", None, ctx.name)
    if x.ndim is None:
        return unknown_rank(ctx, args[1], x.dtype)
    ax = norm_axis(ctx, a, x.ndim, ctx.name)
    sh = list(x.dims)
    _at_most(ctx, u, sh[ax])
    sh[ax] = u
    ctx.assign(args[1], Tensor(tuple(sh), x.dtype))
    return True


@relation("boolean_mask")
def boolean_mask_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``x[mask]`` (numpy boolean indexing): ``(u, *x.shape[mask.ndim:])``."""
    u = _size(ctx, attrs)
    ts = tensor_args(ctx, args, 2)
    if ts is None:
        return False
    x, mask = ts
    if mask.dtype is not None and mask.dtype != "bool":
        ctx.fail(DTYPE_MISMATCH, f"{ctx.name}: the mask must be bool, got `{mask}`")
    if x.ndim is None or mask.ndim is None:
        return unknown_rank(ctx, args[2], x.dtype)
    if mask.ndim > x.ndim:
        ctx.fail(RANK_MISMATCH, f"{ctx.name}: the mask `{mask}` has more dimensions than `{x}`")
    chk = Checks()
    for i, (d, m) in enumerate(zip(x.dims, mask.dims)):
        chk.equal(d, m, SHAPE_MISMATCH, f"{ctx.name}: dimension {i} of the mask is {m}, of `{x}` {d}")
    if not chk.commit(ctx):
        return False
    _at_most(ctx, u, product(mask.dims))
    ctx.assign(args[2], Tensor((u, *x.dims[mask.ndim :]), x.dtype))
    return True

