"""Shape-manipulation relations.

=====================  =========================================================================
relation               rule (Relay semantics; every optimistic Relay check is a condition here)
=====================  =========================================================================
``flatten``            ``(prod(sh[:axis]), prod(sh[axis:]))``, ``axis`` in ``[-rank, rank]``
``reshape``            ``newshape`` with Relay's 0, -1, -2, -3, -4; the element count must be
                       preserved (``reshape-size``): ``(n, 6) -> (-1, 4)`` gives ``((3*n)//2, 4)``
                       and the guard ``n % 2 == 0``; ``(2, 3) -> (7,)`` is an error. Counts are
                       compared in full (``(0, 5, 0) -> (0, 5, 0, 2)`` is valid: 0 elements
                       each), cancelling only factors known to be positive; -1 needs the other
                       result dimensions to be non-zero (numpy), a guard where they may be 0
``reshape_like``       ``like``'s shape, same element count
``concatenate``        a tuple of tensors; sizes add up on ``axis``, the other axes must agree
``stack``              all shapes equal; a new axis of size ``len(xs)``
``split``              ``sections`` (must divide the axis) or ascending ``indices`` -> a tuple
``transpose``          permutation (default: reversed); duplicate axes are an error
``squeeze``            drop axes of size 1 (a symbol needs the guard ``n == 1``); with
                       ``axis=None`` drop the provable 1s and require every other symbolic
                       dimension ``!= 1`` (otherwise the result rank would depend on its value)
``expand_dims``        insert ``num_newaxis`` ones at ``axis`` in ``[-rank-1, rank]``
``broadcast_to``       numpy ``broadcast_to``: each input dimension is 1 or the target's
``pad``                ``d + before + after`` per axis
``init_tensor``        ``zeros``/``ones``: the ``shape`` and ``dtype`` attributes, no inputs
=====================  =========================================================================

An input of unknown rank gives a result of unknown rank, except where the attributes fix the
rank (a ``newshape`` without -2, ``transpose`` with ``axes``, a concatenation or stack with one
field of known rank): the result then has that rank and unknown dimensions where the input would
decide them. Every operand must be a tensor (a tuple of tensors for ``concatenate``/``stack``):
anything else is a ``type-mismatch``.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence

from symshape.encoding.conds import TRUE, any_of, eq, ge, le, ne
from symshape.encoding.dims import ZERO, Dim, as_dim, bounds, dmax, mod
from symshape.encoding.types import Attrs, IncompleteType, Tensor, TensorType, TupleType, Type, TypeVar
from symshape.errors import (
    ARITY_MISMATCH,
    AXIS_OUT_OF_RANGE,
    BAD_ATTRIBUTE,
    DTYPE_MISMATCH,
    NEGATIVE_DIM,
    NOT_BROADCASTABLE,
    RANK_MISMATCH,
    RESHAPE_SIZE,
    SHAPE_MISMATCH,
    TYPE_MISMATCH,
)
from symshape.relations.base import Context, relation, tensor_args, tensor_or_defer
from symshape.relations.common import (
    Checks,
    attr_axes,
    attr_bool,
    attr_dtype,
    attr_int,
    attr_ints,
    attr_shape,
    bad,
    equal_counts,
    exact_div,
    norm_axis,
    product,
)
from symshape.relations.elementwise import join_dtype
from symshape.relations.values import (
    concat_value,
    filled_value,
    reshape_value,
    size_entries,
    with_value,
)

__all__ = [
    "flatten_rel",
    "product",
    "int_attr",
    "reshape_rel",
    "reshape_like_rel",
    "concatenate_rel",
    "stack_rel",
    "split_rel",
    "transpose_rel",
    "squeeze_rel",
    "expand_dims_rel",
    "broadcast_to_rel",
    "pad_rel",
    "init_tensor_rel",
    "parse_newshape",
    "reshape_dims",
    "parse_split",
    "parse_pad_width",
    "dynamic_sizes",
]


def int_attr(ctx: Context, attrs: Attrs, name: str, default: int) -> int:
    return attr_int(attrs, name, default, ctx.name)


def _unknown_rank(ctx: Context, out: Type, dtype: object) -> bool:
    """Unknown input rank: defer; on the final run the output has unknown rank too."""
    if not ctx.final:
        return False
    ctx.assign(out, Tensor(None, dtype))
    return True


@relation("flatten")
def flatten_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out = Tensor((prod(sh[:axis]), prod(sh[axis:])))``."""
    out = args[1]
    axis = attr_int(attrs, "axis", 1, ctx.name)
    x = tensor_or_defer(args[0], ctx, 0)
    if x is None:
        return False
    if x.ndim is None:
        if not ctx.final:
            return False
        ctx.assign(out, Tensor((ctx.fresh_dim(), ctx.fresh_dim()), x.dtype))
        return True
    if axis != x.ndim:  # axis in [-rank, rank]
        axis = norm_axis(ctx, axis, x.ndim, "flatten")
    sh = x.dims
    ctx.assign(out, Tensor((product(sh[:axis]), product(sh[axis:])), x.dtype))
    return True


# ----------------------------------------------------------------------------------------------
# reshape

Spec = int | Dim


def parse_newshape(attrs: Attrs, op: str = "reshape") -> tuple[Spec, ...]:
    """Validate ``newshape``: ints >= -4 (or dimensions), at most one top-level -1, and each -4
    followed by two values of which at most one is -1."""
    v = attrs.get("newshape")
    if isinstance(v, int) and not isinstance(v, bool):
        v = (v,)
    if not isinstance(v, tuple):
        raise bad(op, f"newshape must be a sequence of ints, got {v!r}")
    out: list[Spec] = []
    for x in v:
        if isinstance(x, Dim):
            c = x.constant_value
            out.append(c if c is not None else x)
        elif isinstance(x, int) and not isinstance(x, bool):
            out.append(x)
        else:
            raise bad(op, f"newshape must contain ints, got {x!r}")
    i = 0
    infer = 0
    while i < len(out):
        s = out[i]
        if isinstance(s, int):
            if s < -4:
                raise bad(op, f"unsupported special value {s} in newshape")
            if s == -1:
                infer += 1
            elif s == -4:
                pair = out[i + 1 : i + 3]
                if len(pair) < 2:
                    raise bad(op, "-4 in newshape must be followed by two values")
                if pair.count(-1) > 1:
                    raise bad(op, "split dims of -4 cannot both be -1")
                for p in pair:
                    if isinstance(p, int) and p < -1:
                        raise bad(op, f"a value after -4 must be -1 or a dimension, got {p}")
                i += 3
                continue
        i += 1
    if infer > 1:
        raise bad(op, "at most one dimension of newshape can be -1")
    return tuple(out)


def reshape_dims(
    src: Sequence[Dim], newshape: Sequence[Spec], allowzero: bool
) -> tuple[tuple[Dim, ...], list[tuple[object, str]], str | None]:
    """Relay's InferNewShape over (possibly symbolic) dimensions.

    Returns the output dimensions, the conditions ``(cond, message)`` that make the reshape valid,
    and an error message when the special values do not fit the input rank. Memoized: a model
    reshapes the same shapes over and over.
    """
    dims, conds, err = _reshape_dims(tuple(src), tuple(newshape), bool(allowzero))
    return dims, list(conds), err


@functools.lru_cache(maxsize=4096)
def _reshape_dims(
    src: tuple[Dim, ...], newshape: tuple[Spec, ...], allowzero: bool
) -> tuple[tuple[Dim, ...], tuple[tuple[object, str], ...], str | None]:
    dims, conds, err = _reshape_dims_uncached(src, newshape, allowzero)
    return dims, tuple(conds), err


def _may_be_zero(d: Dim) -> bool:
    """Whether ``d`` can be 0 by its bounds (a constant 0, a ``min=0`` symbol, ``n - 1``)."""
    return bounds(d)[0] <= 0


def _reshape_dims_uncached(
    src: Sequence[Dim], newshape: Sequence[Spec], allowzero: bool
) -> tuple[tuple[Dim, ...], list[tuple[object, str]], str | None]:
    out: list[Dim | None] = []
    conds: list[tuple[object, str]] = []
    free_out: list[Dim] = []  # output dimensions given literally
    copied: list[Dim] = []  # output dimensions made of input dimensions (0, -2, -3, -4)
    infer_at = -1
    si = 0
    i = 0
    n = len(src)
    used = [False] * n
    while i < len(newshape):
        s = newshape[i]
        if isinstance(s, Dim) or s > 0 or (s == 0 and allowzero):
            d = as_dim(s)
            out.append(d)
            free_out.append(d)
            si += 1
        elif s == 0:
            if si >= n:
                return (), [], f"newshape value 0 at position {i} has no input dimension to copy"
            out.append(src[si])
            copied.append(src[si])
            used[si] = True
            si += 1
        elif s == -1:
            infer_at = len(out)
            out.append(None)
            si += 1
        elif s == -2:
            for k in range(si, n):
                out.append(src[k])
                copied.append(src[k])
                used[k] = True
            si = n
        elif s == -3:
            if si + 1 >= n:
                return (), [], f"newshape value -3 at position {i} needs two input dimensions"
            out.append(src[si] * src[si + 1])
            copied.append(src[si] * src[si + 1])
            used[si] = used[si + 1] = True
            si += 2
        else:  # -4
            if si >= n:
                return (), [], f"newshape value -4 at position {i} has no input dimension to split"
            d0 = src[si]
            used[si] = True
            a, b = newshape[i + 1], newshape[i + 2]
            a_infer = isinstance(a, int) and a == -1
            if a_infer or (isinstance(b, int) and b == -1):
                known = as_dim(b if a_infer else a)
                if known == 0:
                    return (), [], f"-4 cannot split {d0} by a zero dimension"
                if _may_be_zero(known):
                    conds.append((ne(known, 0), f"-4 cannot split {d0} by {known} when it is 0"))
                    known_div = dmax(known, 1)  # equal to ``known`` wherever the reshape is valid
                else:
                    known_div = known
                conds.append((eq(mod(d0, known_div), 0), f"-4 splits {d0} into ({a}, {b})"))
                rest = exact_div(d0, known_div)
                pair = (rest, known) if a_infer else (known, rest)
            else:
                da, db = as_dim(a), as_dim(b)
                conds.append((eq(da * db, d0), f"-4 splits {d0} into ({a}, {b})"))
                pair = (da, db)
            out.extend(pair)
            copied.append(d0)
            si += 1
            i += 3
            continue
        i += 1
    free_in = [d for k, d in enumerate(src) if not used[k]]
    pin, pout = product(free_in), product(free_out)
    if infer_at >= 0:
        # numpy: -1 is the total size over the product of the other output dimensions, which
        # must not be 0 (then -1 is undetermined, and numpy raises) and must divide the total. The
        # copied dimensions cancel out of the division once they are known to be non-zero.
        if pout == 0 or any(c == 0 for c in copied):
            return (), [], "cannot infer -1 when another dimension of the result is 0"
        for d in (*copied, *free_out):
            if _may_be_zero(d):
                conds.append((ne(d, 0), f"-1 cannot be inferred when {d} is 0"))
        # a divisor that may be 0 is written max(pout, 1): the same wherever the reshape is
        # valid, and defined at every value of the symbols
        div = dmax(pout, 1) if _may_be_zero(pout) else pout
        c = eq(mod(pin, div), 0)
        if c != TRUE:
            conds.append((c, f"{pout} must divide {pin}"))
        out[infer_at] = exact_div(pin, div)
    else:
        # the element counts are compared in full: a copied dimension that may be 0 does not
        # cancel out (then ``0 == 0`` holds whatever the other dimensions are); common factors
        # that are provably positive do (see ``equal_counts``), and the message shows the counts
        # exactly as the explicit form of the same reshape does
        total_in = product(src)
        total_out = product(d for d in out if d is not None)
        c = equal_counts(total_in, total_out)
        if c != TRUE:
            conds.append((c, f"{total_in} elements vs {total_out}"))
    return tuple(d for d in out if d is not None), conds, None


@relation("reshape")
def reshape_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """Relay's reshape with special values; the element count is preserved. With two inputs the
    new shape is the value of the second (see :func:`_dynamic_spec`)."""
    out = args[ctx.num_inputs]
    allowzero = attr_bool(attrs, "allowzero", False, ctx.name)
    x = tensor_or_defer(args[0], ctx, 0)
    extra: list[tuple[object, str]] = []
    if ctx.num_inputs == 2:
        got = _dynamic_spec(ctx, args[1], allowzero, extra)
        if got is None or x is None:
            return False
        if isinstance(got, str):  # the new shape's length is unknown
            ctx.assign(out, Tensor(None, x.dtype))
            return True
        spec, unknown = got
        if unknown:
            return _reshape_unknown(ctx, x, spec, unknown, allowzero, out)
    else:
        spec = parse_newshape(attrs, ctx.name)
    if x is None:
        return False
    if x.ndim is None:
        if all(isinstance(s, Dim) or s > 0 for s in spec):
            ctx.assign(out, Tensor(tuple(as_dim(s) for s in spec), x.dtype))
            return True
        if -2 in spec or not ctx.final:
            return _unknown_rank(ctx, out, x.dtype)
        # without -2 the new shape fixes the result's rank: what it gives literally is known,
        # what it copies (0, -3, -4's -1) or infers (-1) from the unknown input is not
        ctx.assign(out, Tensor(_rank_only(ctx, spec, allowzero), x.dtype))
        return True
    dims, conds, err = reshape_dims(x.dims, spec, allowzero)
    if err is not None:
        ctx.fail(RESHAPE_SIZE, f"reshape of `{x}` to {tuple(map(str, spec))}: {err}")
    conds = [*extra, *conds]
    if conds:
        chk = Checks()
        for c, msg in conds:
            chk.require(
                c,  # type: ignore[arg-type]
                RESHAPE_SIZE,
                f"cannot reshape `{x}` to newshape {_spec_str(spec)}: {msg}",
            )
        if not chk.commit(ctx):
            return False
    ctx.assign(out, with_value(Tensor(dims, x.dtype), reshape_value(x, dims)))
    return True


def _dynamic_spec(
    ctx: Context, t: Type, allowzero: bool, conds: list[tuple[object, str]]
) -> tuple[tuple[Spec, ...], list[int]] | str | None:
    """The new shape of ``reshape(x, shape)`` read from the value of ``shape``: the spec (a
    constant entry is an int: 0 copies, -1 infers; a symbolic one is a dimension) and the
    positions of unknown entries (a placeholder 1 in the spec). A symbolic entry that may be 0 or
    negative gets the condition that it is not (it would be read as a special value at run time);
    the other special values of Relay (-2, -3, -4) and entries below -1 are an error, as more than
    one -1 is. None: defer; :data:`UNKNOWN_LENGTH`: the length is unknown."""
    es = size_entries(ctx, t, "the new shape", 1)
    if es is None or isinstance(es, str):
        return es
    spec: list[Spec] = []
    unknown: list[int] = []
    for i, d in enumerate(es):
        if d is None:
            unknown.append(i)
            spec.append(1)
            continue
        c = d.constant_value
        if c is None:
            lo = 0 if allowzero else 1
            if bounds(d)[0] < lo:
                conds.append(
                    (ge(d, lo), f"entry {i} (`{d}`) may be {'negative' if allowzero else '0 or negative'}, "
                     "which reshape would read as a special value")
                )
            spec.append(d)
        elif c < -1:
            ctx.fail(
                BAD_ATTRIBUTE,
                f"{ctx.name}: the new shape `{t}` has entry {i} = {c}; "
                "only 0 (copy) and -1 (infer) are special in a shape tensor",
            )
        else:
            spec.append(c)
    if sum(1 for x in spec if isinstance(x, int) and x == -1) > 1:
        ctx.fail(BAD_ATTRIBUTE, f"{ctx.name}: at most one entry of the new shape `{t}` can be -1")
    if len(unknown) == 1 and -1 not in spec:
        # the one unknown entry is whatever makes the element counts agree: inferred, as -1 is
        spec[unknown[0]] = -1
        unknown = []
    return tuple(spec), unknown


def _reshape_unknown(
    ctx: Context, x: TensorType, spec: Sequence[Spec], unknown: Sequence[int], allowzero: bool, out: Type
) -> bool:
    """A reshape to a new shape with several unknown entries (or one beside a -1): the result has
    the new shape's rank; known sizes and copied dimensions are known, the rest fresh."""
    dims: list[Dim] = []
    for i, s in enumerate(spec):
        if i in unknown or (isinstance(s, int) and s == -1):
            dims.append(ctx.fresh_dim())
        elif isinstance(s, Dim) or s > 0 or (s == 0 and allowzero):
            dims.append(as_dim(s))
        elif x.ndim is not None and i < x.ndim:  # 0 copies
            dims.append(x.dims[i])
        elif x.ndim is None:
            dims.append(ctx.fresh_dim())
        else:
            msg = f"newshape value 0 at position {i} has no input dimension to copy"
            ctx.fail(RESHAPE_SIZE, f"reshape of `{x}`: {msg}")
    ctx.assign(out, Tensor(tuple(dims), x.dtype))
    return True


def _rank_only(ctx: Context, spec: Sequence[Spec], allowzero: bool) -> tuple[Dim, ...]:
    """The result of a reshape without -2 of an input of unknown rank: one dimension per value
    (two for -4), unknown where the input decides it."""
    out: list[Dim] = []
    i = 0
    while i < len(spec):
        s = spec[i]
        if isinstance(s, Dim) or s > 0 or (s == 0 and allowzero):
            out.append(as_dim(s))
        elif s == -4:
            for p in spec[i + 1 : i + 3]:
                out.append(ctx.fresh_dim() if isinstance(p, int) and p == -1 else as_dim(p))
            i += 3
            continue
        else:  # 0, -1, -3
            out.append(ctx.fresh_dim())
        i += 1
    return tuple(out)


def _spec_str(spec: Sequence[Spec]) -> str:
    inner = ", ".join(str(s) for s in spec)
    return f"({inner},)" if len(spec) == 1 else f"({inner})"


@relation("reshape_like")
def reshape_like_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out = Tensor(like.shape, x.dtype)`` with the same number of elements."""
    out = args[2]
    ts = tensor_args(ctx, args, 2)
    if ts is None:
        return False
    x, like = ts
    if x.ndim is None or like.ndim is None:
        if like.ndim is not None and ctx.final:
            ctx.assign(out, TensorType(like.shape, x.dtype))
            return True
        return _unknown_rank(ctx, out, x.dtype)
    chk = Checks()
    chk.require(
        equal_counts(product(x.dims), product(like.dims)),
        RESHAPE_SIZE,
        f"reshape_like: `{x}` and `{like}` have different numbers of elements",
    )
    if not chk.commit(ctx):
        return False
    ctx.assign(out, TensorType(like.shape, x.dtype))
    return True


# ----------------------------------------------------------------------------------------------
# concatenate, stack, split


def _tuple_fields(ctx: Context, t: Type, what: str) -> list[TensorType] | None:
    """The fields of a tuple of tensors; None while the tuple or a field is still a hole."""
    if not isinstance(t, TupleType):
        if isinstance(t, (IncompleteType, TypeVar)):
            return None
        ctx.fail(TYPE_MISMATCH, f"{what} requires a tuple of tensors, found `{t}`")
    if not t.fields:
        ctx.fail(ARITY_MISMATCH, f"{what} requires at least one tensor")
    fs = []
    for f in t.fields:
        if not isinstance(f, TensorType):
            if not isinstance(f, (IncompleteType, TypeVar)):
                ctx.fail(TYPE_MISMATCH, f"{what} requires a tuple of tensors, found `{t}`")
            continue
        fs.append(f)
    return fs if len(fs) == len(t.fields) else None


def _same_rank_dtype(ctx: Context, fs: Sequence[TensorType], what: str) -> tuple[int | None, object]:
    """The common rank (None when every field's rank is unknown) and dtype of the fields."""
    dtype = None
    known = [f.dtype for f in fs if f.dtype is not None]
    for d in known[1:]:
        if d != known[0]:
            ctx.fail(DTYPE_MISMATCH, f"{what} requires all tensors to have the same dtype: {known[0]} vs {d}")
    dtype = known[0] if known else None
    ranks = {f.ndim for f in fs if f.ndim is not None}
    if len(ranks) > 1:
        ctx.fail(RANK_MISMATCH, f"{what} requires all tensors to have the same rank: {sorted(ranks)}")
    return (ranks.pop() if ranks else None), dtype


def _agree(
    ctx: Context, fs: Sequence[TensorType], rank: int, skip: int, what: str
) -> tuple[Dim, ...] | None:
    """The shape the ranked fields share (every axis but ``skip``, checked), or None to defer.
    Fields of unknown rank have the rank of the others, and nothing more is known of them."""
    ranked = [(k, f.dims) for k, f in enumerate(fs) if f.ndim is not None]
    j0, first = ranked[0]
    chk = Checks()
    for k, dims in ranked[1:]:
        for i in range(rank):
            if i != skip:
                chk.equal(
                    first[i],
                    dims[i],
                    SHAPE_MISMATCH,
                    f"{what}: tensors {j0} and {k} differ on {'non-concatenated ' if skip >= 0 else ''}"
                    f"axis {i}: {first[i]} vs {dims[i]}",
                )
    if not chk.commit(ctx):
        return None
    return first


@relation("concatenate")
def concatenate_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """Sizes add up on ``axis``; the other axes must agree (``n`` vs ``m``: guard ``n == m``). One
    field of known rank fixes the result's rank (the others' sizes on ``axis`` are unknown)."""
    axis = attr_int(attrs, "axis", 0, ctx.name)
    fs = _tuple_fields(ctx, args[0], "concatenate")
    if fs is None:
        return False
    rank, dtype = _same_rank_dtype(ctx, fs, "concatenate")
    if rank is None:
        return _unknown_rank(ctx, args[1], dtype)
    if rank == 0:
        ctx.fail(RANK_MISMATCH, "concatenate: zero-dimensional tensors cannot be concatenated")
    ax = norm_axis(ctx, axis, rank, "concatenate")
    partial = any(f.ndim is None for f in fs)
    if partial and not ctx.final:
        return False  # a field of unknown rank may still be refined through a hole
    first = _agree(ctx, fs, rank, ax, "concatenate")
    if first is None:
        return False
    shape = list(first)
    shape[ax] = sum((f.dims[ax] if f.ndim is not None else ctx.fresh_dim() for f in fs), ZERO)
    result = Tensor(tuple(shape), dtype)
    if rank == 1 and any(f.value is not None for f in fs):
        result = with_value(result, concat_value(fs))
    ctx.assign(args[1], result)
    return True


@relation("stack")
def stack_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """All shapes equal; a new axis of size ``len(xs)`` at ``axis`` in ``[-rank-1, rank]``."""
    axis = attr_int(attrs, "axis", 0, ctx.name)
    fs = _tuple_fields(ctx, args[0], "stack")
    if fs is None:
        return False
    rank, dtype = _same_rank_dtype(ctx, fs, "stack")
    if rank is None:
        return _unknown_rank(ctx, args[1], dtype)
    ax = norm_axis(ctx, axis, rank, "stack", extra=1)
    if any(f.ndim is None for f in fs) and not ctx.final:
        return False
    first = _agree(ctx, fs, rank, -1, "stack")
    if first is None:
        return False
    shape = list(first)
    shape.insert(ax, as_dim(len(fs)))
    ctx.assign(args[1], Tensor(tuple(shape), dtype))
    return True


def parse_split(attrs: Attrs, op: str = "split") -> int | tuple[int, ...]:
    """``indices_or_sections``: an int ``>= 1`` (sections) or a non-decreasing sequence of
    non-negative ints (split points)."""
    v = attrs.get("indices_or_sections")
    if isinstance(v, int) and not isinstance(v, bool):
        if v < 1:
            raise bad(op, f"the number of sections must be >= 1, got {v}")
        return v
    if isinstance(v, tuple) and all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        idx = tuple(int(x) for x in v)
        if any(x < 0 for x in idx):
            raise bad(op, f"split indices must be non-negative, got {v!r}")
        if any(b < a for a, b in itertools.pairwise(idx)):
            raise bad(op, f"split indices must be sorted ascending, got {v!r}")
        return idx
    raise bad(op, f"indices_or_sections must be an int or a sequence of ints, got {v!r}")


@relation("split")
def split_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """A tuple of pieces along ``axis``: ``N`` equal sections or pieces between split indices."""
    out = args[1]
    ios = parse_split(attrs, ctx.name)
    axis = attr_int(attrs, "axis", 0, ctx.name)
    x = tensor_or_defer(args[0], ctx, 0)
    if x is None:
        return False
    npieces = ios if isinstance(ios, int) else len(ios) + 1
    if x.ndim is None:
        if not ctx.final:
            return False
        ctx.assign(out, TupleType(tuple(Tensor(None, x.dtype) for _ in range(npieces))))
        return True
    ax = norm_axis(ctx, axis, x.ndim, "split")
    d = x.dims[ax]
    chk = Checks()
    sizes: list[Dim]
    if isinstance(ios, int):
        chk.require(
            eq(mod(d, ios), 0),
            SHAPE_MISMATCH,
            f"split: {ios} sections do not divide axis {ax} of `{x}`",
        )
        sizes = [exact_div(d, as_dim(ios))] * ios
    else:
        if ios:
            chk.require(
                le(ios[-1], d),
                SHAPE_MISMATCH,
                f"split: index {ios[-1]} is beyond axis {ax} of `{x}`",
            )
        prev = 0
        sizes = []
        for k in ios:
            sizes.append(as_dim(k - prev))
            prev = k
        sizes.append(d - prev)
    if not chk.commit(ctx):
        return False
    fields = []
    for s in sizes:
        sh = list(x.dims)
        sh[ax] = s
        fields.append(Tensor(tuple(sh), x.dtype))
    ctx.assign(out, TupleType(tuple(fields)))
    return True


# ----------------------------------------------------------------------------------------------
# transpose, squeeze, expand_dims


@relation("transpose")
def transpose_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """Permute the dimensions by ``axes`` (default: reversed)."""
    out = args[1]
    axes = attr_axes(attrs, "axes", ctx.name)
    x = tensor_or_defer(args[0], ctx, 0)
    if x is None:
        return False
    if x.ndim is None:
        if axes is None or not ctx.final:
            return _unknown_rank(ctx, out, x.dtype)
        # explicit axes fix the rank (Relax); the dimensions are unknown
        r = len(axes)
        if len({norm_axis(ctx, a, r, "transpose") for a in axes}) != r:
            ctx.fail(BAD_ATTRIBUTE, f"transpose: duplicate axes in {axes} for rank {r}")
        ctx.assign(out, Tensor(tuple(ctx.fresh_dim() for _ in range(r)), x.dtype))
        return True
    r = x.ndim
    if axes is None:
        perm = list(range(r - 1, -1, -1))
    else:
        if len(axes) != r:
            ctx.fail(
                RANK_MISMATCH, f"transpose: axes {axes} has {len(axes)} elements, but `{x}` has rank {r}"
            )
        perm = [norm_axis(ctx, a, r, "transpose") for a in axes]
        if len(set(perm)) != r:
            ctx.fail(BAD_ATTRIBUTE, f"transpose: duplicate axes in {axes} for rank {r}")
    ctx.assign(out, Tensor(tuple(x.dims[p] for p in perm), x.dtype))
    return True


@relation("squeeze")
def squeeze_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """Drop axes of size 1 (see the module docstring for ``axis=None``)."""
    out = args[1]
    axes = attr_axes(attrs, "axis", ctx.name)
    x = tensor_or_defer(args[0], ctx, 0)
    if x is None:
        return False
    if x.ndim is None:
        return _unknown_rank(ctx, out, x.dtype)
    r = x.ndim
    chk = Checks()
    drop: set[int] = set()
    if axes is None:
        for i, d in enumerate(x.dims):
            if d == 1:
                drop.add(i)
            elif d.is_constant:
                continue
            elif d.has_unknowns and not ctx.final:
                return False
            elif ctx.prove(eq(d, 1)):
                drop.add(i)
            else:
                chk.require(
                    ne(d, 1),
                    SHAPE_MISMATCH,
                    f"squeeze without axis: dimension {i} of `{x}` ({d}) might be 1, "
                    "which would change the result's rank; pass axis",
                )
    else:
        for a in axes:
            i = norm_axis(ctx, a, r, "squeeze")
            if i in drop:
                ctx.fail(BAD_ATTRIBUTE, f"squeeze: duplicate axes in {axes} for rank {r}")
            drop.add(i)
            chk.equal(
                x.dims[i],
                as_dim(1),
                SHAPE_MISMATCH,
                f"squeeze: axis {i} of `{x}` has size {x.dims[i]}, not 1",
            )
    if not chk.commit(ctx):
        return False
    result = Tensor(tuple(d for i, d in enumerate(x.dims) if i not in drop), x.dtype)
    if x.value is not None and r == 1 and drop:  # (d,) -> d
        result = with_value(result, reshape_value(x, ()))
    ctx.assign(out, result)
    return True


@relation("expand_dims")
def expand_dims_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """Insert ``num_newaxis`` ones at ``axis`` (in ``[-rank-1, rank]``)."""
    out = args[1]
    axis = attr_int(attrs, "axis", None, ctx.name)
    k = attr_int(attrs, "num_newaxis", 1, ctx.name, lo=0)
    x = tensor_or_defer(args[0], ctx, 0)
    if x is None:
        return False
    if x.ndim is None:
        return _unknown_rank(ctx, out, x.dtype)
    ax = norm_axis(ctx, axis, x.ndim, "expand_dims", extra=1)
    sh = list(x.dims)
    sh[ax:ax] = [as_dim(1)] * k
    result = Tensor(tuple(sh), x.dtype)
    if x.value is not None and len(sh) <= 1:  # d -> (d,), or no new axis
        result = with_value(result, reshape_value(x, sh))
    ctx.assign(out, result)
    return True


# ----------------------------------------------------------------------------------------------
# broadcast_to, pad, zeros/ones


def dynamic_sizes(ctx: Context, t: Type, what: str, index: int) -> tuple[Dim | None, ...] | str | None:
    """Sizes read from the value of ``t`` (see :func:`size_entries`): a constant entry must be
    ``>= 0`` (else ``bad-attribute``, as for a literal), a symbolic one that may be negative gets
    the condition ``>= 0`` (``negative-dim``), an unknown one is None."""
    es = size_entries(ctx, t, what, index)
    if es is None or isinstance(es, str):
        return es
    chk = Checks()
    for i, d in enumerate(es):
        if d is None:
            continue
        c = d.constant_value
        if c is not None and c < 0:
            ctx.fail(BAD_ATTRIBUTE, f"{ctx.name}: {what} `{t}` has a negative size {c} (entry {i})")
        if c is None and bounds(d)[0] < 0:
            chk.require(ge(d, 0), NEGATIVE_DIM, f"{ctx.name}: entry {i} of {what} (`{d}`) may be negative")
    if not chk.commit(ctx):
        return None
    return es


@relation("broadcast_to")
def broadcast_to_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out = Tensor(shape, x.dtype)``; each input dimension (right-aligned) is 1 or the target's.
    With two inputs the target is the value of the second; an unknown entry of it is the input's
    dimension where that is a constant other than 1 (the only size that broadcasts), else a fresh
    dimension."""
    out = args[ctx.num_inputs]
    x = tensor_or_defer(args[0], ctx, 0)
    if ctx.num_inputs == 2:
        es = dynamic_sizes(ctx, args[1], "the target shape", 1)
        if es is None or x is None:
            return False
        if isinstance(es, str):
            ctx.assign(out, Tensor(None, x.dtype))
            return True
        shape, unknown = _fill_unknown(ctx, x, es)
    else:
        shape, unknown = attr_shape(attrs, "shape", ctx.name), []
    if x is None:
        return False
    if x.ndim is not None:
        if x.ndim > len(shape):
            ctx.fail(
                NOT_BROADCASTABLE,
                f"broadcast_to: `{x}` has more dimensions than the target shape {_spec_str(shape)}",
            )
        chk = Checks()
        for i in range(1, x.ndim + 1):
            d, t = x.dims[-i], shape[-i]
            if d == 1 or d == t or len(shape) - i in unknown:
                continue  # (an unknown target size: the result is a fresh dimension there)
            if d.has_unknowns and ctx.final:
                chk.equal(d, t, NOT_BROADCASTABLE, "")
                continue
            chk.require(
                any_of(eq(d, 1), eq(d, t)),
                NOT_BROADCASTABLE,
                f"cannot broadcast `{x}` to shape {_spec_str(shape)}: dimension {x.ndim - i} is {d}, "
                f"dimension {len(shape) - i} of the target is {t}",
            )
        if not chk.commit(ctx):
            return False
    ctx.assign(out, Tensor(shape, x.dtype))
    return True


def parse_pad_width(attrs: Attrs, op: str = "nn.pad") -> int | tuple[tuple[int, int], ...]:
    """``pad_width``: an int (every side of every axis) or one ``(before, after)`` pair per axis;
    values are non-negative ints."""
    v = attrs.get("pad_width")
    if isinstance(v, int) and not isinstance(v, bool):
        if v < 0:
            raise bad(op, f"pad_width must be non-negative, got {v}")
        return v
    if not isinstance(v, tuple):
        raise bad(op, f"pad_width must be a sequence of (before, after) pairs, got {v!r}")
    pairs = []
    for p in v:
        if (
            not isinstance(p, tuple)
            or len(p) != 2
            or not all(isinstance(q, int) and not isinstance(q, bool) and q >= 0 for q in p)
        ):
            raise bad(op, f"pad_width entries must be pairs of non-negative ints, got {p!r}")
        pairs.append((int(p[0]), int(p[1])))
    return tuple(pairs)


@relation("pad")
def pad_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out[i] = x[i] + before_i + after_i``; one pair per axis."""
    out = args[-1]
    pw = parse_pad_width(attrs, ctx.name)
    x = tensor_or_defer(args[0], ctx, 0)
    if x is None:
        return False
    if x.ndim is None:
        return _unknown_rank(ctx, out, x.dtype)
    pairs = [(pw, pw)] * x.ndim if isinstance(pw, int) else list(pw)
    if len(pairs) != x.ndim:
        ctx.fail(RANK_MISMATCH, f"pad: pad_width has {len(pairs)} pairs, but `{x}` has rank {x.ndim}")
    ctx.assign(out, Tensor(tuple(d + a + b for d, (a, b) in zip(x.dims, pairs)), x.dtype))
    return True


def _fill_unknown(
    ctx: Context, x: TensorType, es: Sequence[Dim | None]
) -> tuple[tuple[Dim, ...], list[int]]:
    """A broadcast target with its unknown entries filled, and their positions: the input's
    aligned dimension when it is a constant other than 1 (a valid target has that size there),
    else a fresh dimension (the result's size there is not known)."""
    out: list[Dim] = []
    unknown: list[int] = []
    k = len(es)
    for i, d in enumerate(es):
        if d is not None:
            out.append(d)
            continue
        unknown.append(i)
        j = (x.ndim or 0) - k + i
        xd = x.dims[j] if x.ndim is not None and j >= 0 else None
        if xd is not None and xd.is_constant and xd != 1:
            out.append(xd)
        else:
            out.append(ctx.fresh_dim())
    return tuple(out), unknown


@relation("init_tensor")
def init_tensor_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``zeros``/``ones``/``constant_of_shape``: ``out = Tensor(shape, dtype)``; with an input,
    the shape is its value (an unknown entry gives a fresh dimension). A small int result of
    ``constant_of_shape`` carries its value (the fill repeated: ``(7, 7, 7)``)."""
    dtype = attr_dtype(attrs, "dtype", ctx.name) or "float32"
    if ctx.num_inputs == 1:
        es = dynamic_sizes(ctx, args[0], "the shape", 0)
        if es is None:
            return False
        shape_t = Tensor(None, dtype) if isinstance(es, str) else Tensor(
            tuple(ctx.fresh_dim() if d is None else d for d in es), dtype
        )
    else:
        shape_t = Tensor(attr_shape(attrs, "shape", ctx.name), dtype)
    # constant_of_shape (a ``value`` attribute): a small int result holds the fill repeated
    # (``zeros`` and ``ones`` share this relation and its memo without an attribute telling them
    # apart, so they carry no value)
    if "value" in attrs:
        shape_t = filled_value(shape_t, attrs.get("value"))
    for o in args[ctx.num_inputs :]:
        ctx.assign(o, shape_t)
    return True


_ = (AXIS_OUT_OF_RANGE, attr_ints, join_dtype)
