"""Relations that keep the elements and change the shape: ``flatten``, ``reshape``, ``reshape_like``.

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
=====================  =========================================================================

An input of unknown rank gives a result of unknown rank, except where the attributes fix the
rank (a ``newshape`` without -2, a ``like`` of known rank): the result then has that rank and
unknown dimensions where the input would decide them. Every operand must be a tensor: anything
else is a ``type-mismatch``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from symshape.encoding.conds import TRUE, eq, ge, ne
from symshape.encoding.dims import Dim, as_dim, bounds, divide_exactly, dmax, fresh_any, mod
from symshape.encoding.types import Attrs, Tensor, TensorType, Type
from symshape.errors import (
    BAD_ATTRIBUTE,
    RESHAPE_SIZE,
)
from symshape.relations.base import Context, Lazy, Message, relation
from symshape.relations.common import (
    Checks,
    attr_bool,
    attr_int,
    bad,
    cancel_common,
    equal_counts,
    exact_div,
    norm_axis,
    product,
    shape_str,
)
from symshape.relations.operands import ranked_or_defer, tensor_args, tensor_or_defer, unknown_rank
from symshape.relations.values import (
    reshape_value,
    size_entries,
    with_value,
)

__all__ = ["flatten_rel", "Spec", "parse_newshape", "reshape_dims", "reshape_rel", "reshape_like_rel"]


@relation("flatten")
def flatten_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out = Tensor((prod(sh[:axis]), prod(sh[axis:])))``."""
    out = args[1]
    axis = attr_int(attrs, "axis", 1, ctx.name)
    x = ranked_or_defer(ctx, args, out, lambda x: Tensor((ctx.fresh_dim(), ctx.fresh_dim()), x.dtype))
    if isinstance(x, bool):
        return x
    sh = x.dims
    if axis != len(sh):  # axis in [-rank, rank]
        axis = norm_axis(ctx, axis, len(sh), "flatten")
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
) -> tuple[tuple[Dim, ...], list[tuple[object, Message]], str | None]:
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
) -> tuple[tuple[Dim, ...], tuple[tuple[object, Message], ...], str | None]:
    dims, conds, err = _reshape_dims_uncached(src, newshape, allowzero)
    return dims, tuple(conds), err


def _may_be_zero(d: Dim) -> bool:
    """Whether ``d`` can be 0 by its bounds (a constant 0, a ``min=0`` symbol, ``n - 1``)."""
    return bounds(d)[0] <= 0


def _reshape_dims_uncached(
    src: Sequence[Dim], newshape: Sequence[Spec], allowzero: bool
) -> tuple[tuple[Dim, ...], list[tuple[object, Message]], str | None]:
    out: list[Dim | None] = []
    conds: list[tuple[object, Message]] = []
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
                    conds.append((ne(known, 0), Lazy("-4 cannot split {} by {} when it is 0", d0, known)))
                    known_div = dmax(known, 1)  # equal to ``known`` wherever the reshape is valid
                else:
                    known_div = known
                conds.append((eq(mod(d0, known_div), 0), Lazy("-4 splits {} into ({}, {})", d0, a, b)))
                rest = exact_div(d0, known_div)
                pair = (rest, known) if a_infer else (known, rest)
            else:
                da, db = as_dim(a), as_dim(b)
                conds.append((eq(da * db, d0), Lazy("-4 splits {} into ({}, {})", d0, a, b)))
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
                conds.append((ne(d, 0), Lazy("-1 cannot be inferred when {} is 0", d)))
        # pin == q*pout identically: -1 is q wherever pout != 0 (required above), nothing to divide
        q = divide_exactly(pin, pout)
        if q is not None:
            out[infer_at] = q
        else:
            # a divisor that may be 0 is written max(pout, 1): the same wherever the reshape is
            # valid, and defined at every value of the symbols
            div = dmax(pout, 1) if _may_be_zero(pout) else pout
            c = eq(mod(pin, div), 0)
            if c != TRUE:
                conds.append((c, Lazy("{} must divide {}", pout, pin)))
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
            conds.append((c, Lazy("{} elements vs {}", total_in, total_out)))
    return tuple(d for d in out if d is not None), conds, None


@relation("reshape")
def reshape_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """Relay's reshape with special values; the element count is preserved. With two inputs the
    new shape is the value of the second (see :func:`_dynamic_spec`)."""
    out = args[ctx.num_inputs]
    allowzero = attr_bool(attrs, "allowzero", False, ctx.name)
    x = tensor_or_defer(args[0], ctx, 0)
    extra: list[tuple[object, Message]] = []
    if ctx.num_inputs == 2:
        got = _dynamic_spec(ctx, args[1], allowzero, extra)
        if got is None or x is None:
            return False
        if isinstance(got, str):  # the new shape's length is unknown
            ctx.assign(out, Tensor(None, x.dtype))
            return True
        spec, unknown = got
        if unknown:
            return _reshape_unknown(ctx, x, spec, unknown, allowzero, out, extra)
    else:
        spec = parse_newshape(attrs, ctx.name)
    if x is None:
        return False
    if x.ndim is None:
        if all(isinstance(s, Dim) or s > 0 for s in spec):
            ctx.assign(out, Tensor(tuple(as_dim(s) for s in spec), x.dtype))
            return True
        if -2 in spec or not ctx.final:
            return unknown_rank(ctx, out, x.dtype)
        # without -2 the new shape fixes the result's rank: what it gives literally is known,
        # what it copies (0, -3, -4's -1) or infers (-1) from the unknown input is not
        ctx.assign(out, Tensor(_rank_only(spec, allowzero), x.dtype))
        return True
    dims, conds, err = reshape_dims(x.dims, spec, allowzero)
    if err is not None:
        ctx.fail(RESHAPE_SIZE, f"reshape of `{x}` to {tuple(map(str, spec))}: {err}")
    if not _require(ctx, x, Lazy(shape_str, spec), [*extra, *conds]):
        return False
    ctx.assign(out, with_value(Tensor(dims, x.dtype), reshape_value(x, dims)))
    return True


def _require(ctx: Context, x: TensorType, newshape: Message, conds: Sequence[tuple[object, Message]]) -> bool:
    """Commits the conditions of reshaping ``x`` to ``newshape`` (``reshape-size``; False: defer)."""
    if not conds:
        return True
    chk = Checks()
    for c, msg in conds:
        chk.require(c, RESHAPE_SIZE, Lazy("cannot reshape `{}` to newshape {}: {}", x, newshape, msg))  # type: ignore[arg-type]
    return chk.commit(ctx)


def _dynamic_spec(
    ctx: Context, t: Type, allowzero: bool, conds: list[tuple[object, Message]]
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
    ctx: Context,
    x: TensorType,
    spec: Sequence[Spec],
    unknown: Sequence[int],
    allowzero: bool,
    out: Type,
    extra: Sequence[tuple[object, Message]] = (),
) -> bool:
    """A reshape to a new shape with several unknown entries (or one beside a -1): the result has
    the new shape's rank; known sizes and copied dimensions are known, the size at each unknown
    entry is a given ``?`` (the run decides it: a size, 0 to copy, -1 to infer; a solver unknown
    would be bound silently by whatever the result meets later), and a -1 is the input's count
    over the product of the others. Whatever the unknown entries are at run time, the known part
    of the result's count divides the input's count: a guard (:func:`_known_part_divides`), false
    exactly where no value of the unknown entries makes the reshape run (the count equation
    itself is over the run's values: not stated). An input of unknown rank waits for the last
    run (its rank may still come), then gives ``?`` wherever the input would decide."""
    if x.ndim is None:
        if not ctx.final:
            return False
        dims = tuple(
            as_dim(s) if i not in unknown and (isinstance(s, Dim) or s > 0 or (s == 0 and allowzero))
            else fresh_any(0)
            for i, s in enumerate(spec)
        )
        ctx.assign(out, Tensor(dims, x.dtype))
        return True
    shown = shape_str(["?" if i in unknown else s for i, s in enumerate(spec)])
    # (beside -1 a run-time entry is >= 1: a 0 there makes the reshape fail, or is invalid (ONNX))
    least = 1 if any(isinstance(s, int) and s == -1 for s in spec) else 0
    given: tuple[Spec, ...] = tuple(fresh_any(least) if i in unknown else s for i, s in enumerate(spec))
    got, _, err = reshape_dims(x.dims, given, allowzero)  # (its conditions: over the run's values)
    if err is not None:
        ctx.fail(RESHAPE_SIZE, f"reshape of `{x}` to {shown}: {err}")
    if not _require(ctx, x, shown, [*extra, *_known_part_divides(x, spec, unknown, allowzero)]):
        return False
    ctx.assign(out, Tensor(got, x.dtype))
    return True


def _known_part_divides(
    x: TensorType, spec: Sequence[Spec], unknown: Sequence[int], allowzero: bool
) -> list[tuple[object, Message]]:
    """The condition that the entries of the new shape known before run time (sizes, and the
    input dimensions a 0 copies) multiply to a divisor of ``x``'s element count: each unknown
    entry is a positive size at run time (or 0 with ``allowzero``, then both counts are 0), so the
    result's count is that product times a positive integer. Copied dimensions cancel where they
    are provably positive (:func:`cancel_common`)."""
    known: list[Dim] = []
    for i, s in enumerate(spec):
        if i in unknown or (isinstance(s, int) and s == -1):
            continue
        if isinstance(s, Dim) or s > 0 or (s == 0 and allowzero):
            known.append(as_dim(s))
        elif i < len(x.dims):  # 0 copies (past the rank: an error the result reports)
            known.append(x.dims[i])
    total, part = cancel_common(product(x.dims), product(known))
    if part == 0:
        c = eq(total, 0)
    else:
        c = eq(mod(total, dmax(part, 1) if _may_be_zero(part) else part), 0)
    out: list[tuple[object, Message]] = []
    if any(isinstance(s, int) and s == -1 for s in spec):  # (-1 divides by the others' product)
        nz = ge(product(known), 1)
        if nz != TRUE:
            out.append((nz, f"the known entries beside -1 multiply to {product(known)}, which must not be 0"))
    if c != TRUE:
        out.append((c, f"the known entries multiply to {product(known)}, which must divide {product(x.dims)}"
                    " (the run-time entries multiply to the quotient)"))
    return out


def _rank_only(spec: Sequence[Spec], allowzero: bool) -> tuple[Dim, ...]:
    """The result of a reshape without -2 of an input of unknown rank: one dimension per value
    (two for -4), a given ``?`` where the input decides it (its sizes are not known: a solver
    unknown would be bound silently by whatever the result meets later)."""
    out: list[Dim] = []
    i = 0
    while i < len(spec):
        s = spec[i]
        if isinstance(s, Dim) or s > 0 or (s == 0 and allowzero):
            out.append(as_dim(s))
        elif s == -4:
            for p in spec[i + 1 : i + 3]:
                out.append(fresh_any(0) if isinstance(p, int) and p == -1 else as_dim(p))
            i += 3
            continue
        else:  # 0, -1, -3
            out.append(fresh_any(0))
        i += 1
    return tuple(out)


@relation("reshape_like")
def reshape_like_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out = Tensor(like.shape, x.dtype)`` with the same number of elements (a condition); on
    the last run a ``like`` of known rank gives that shape even when ``x``'s rank is unknown."""
    out = args[2]
    ts = tensor_args(ctx, args, 2)
    if ts is None:
        return False
    x, like = ts
    if x.ndim is None or like.ndim is None:
        if like.ndim is not None and ctx.final:
            ctx.assign(out, TensorType(like.shape, x.dtype))
            return True
        return unknown_rank(ctx, out, x.dtype)
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
