"""``reshape(x, shape)``: the new shape read from the value of a tensor (ONNX's ``Reshape`` with
a target computed at run time), for :func:`~symshape.relations.reshape.reshape_rel`.

Each entry of the target is a constant (0 copies the input's size at its place unless
``allowzero``, -1 infers), a symbolic size, or unknown (a ``?`` the run decides). Without
``allowzero`` a symbolic entry that may be 0 has two readings: a size (when it is >= 1) or a copy
(when it is 0); one that may be -1 (``N - 2``) has one more, inferred (when it is -1, unless
another entry is -1), and must not be below -1. The reading is decided where it can be, cheaply:
by the entry's bounds, by the entry being the input's size at its place (both readings give that
size), or by the solver from the facts (``e >= 1``, ``e == 0``, ``e == -1``, or ``e == 0`` only
where the copied size is 0 too, so the readings agree). An entry left open gives one case per
reading: a case no size reaches (the literal count ``3*N == 3*(N - 1)``, or a copy past the
input's rank) is dropped, the one left states its reading as a guard (``N - 1 == 0``: exactly
the sizes where the model runs), and several left give the disjunction of their conditions; where
their results differ, an entry's two readings are one dimension, ``max(e, c*(1 - min(1, e)))``
(:func:`size_or_copy`, ``c`` the copied size), so the result is exact at every size (a ``?``, the
run's, only where an entry may also be -1). More entries left open than get a case each are read
that way directly.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import cast

from symshape.encoding.conds import FALSE, TRUE, Cond, all_of, any_of, eq, ge, lt, negate
from symshape.encoding.dims import Dim, Sym, as_dim, bounds, dmax, dmin, fresh_any, mod
from symshape.encoding.types import Tensor, TensorType, Type
from symshape.errors import BAD_ATTRIBUTE, RESHAPE_SIZE
from symshape.relations.base import Context, Lazy, Message
from symshape.relations.common import Checks, cancel_common, product, shape_str
from symshape.relations.newshape import Spec, may_be_zero, rank_only, reshape_dims
from symshape.relations.operands import tensor_or_defer, unknown_rank
from symshape.relations.values import reshape_value, size_entries, with_value

__all__ = ["require_reshape", "reshape_by_value", "reshape_unknown_rank", "size_or_copy"]

#: the most entries left open (two readings each) that get one case per reading; beyond, each
#: is read by :func:`size_or_copy` (a run-time entry, a ``?``, where one may be -1)
_MOST_OPEN = 3


def reshape_by_value(ctx: Context, args: Sequence[Type], allowzero: bool) -> bool:
    """``reshape(x, shape)`` with the new shape the value of ``shape`` (False: defer)."""
    out = args[2]
    x = tensor_or_defer(args[0], ctx, 0)
    extra: list[tuple[object, Message]] = []
    got = _dynamic_spec(ctx, args[1], allowzero, extra)
    if got is None or x is None:
        return False
    if isinstance(got, str):  # the new shape's length is unknown
        ctx.assign(out, Tensor(None, x.dtype))
        return True
    spec, unknown, open_, infer = got
    if open_:
        open_ = _settle(ctx, x, spec, open_, infer, allowzero, extra)
    if len(open_) > _MOST_OPEN and not unknown and _closable(x, spec, open_, infer, allowzero):
        # too many for a case each: each entry's size as one dimension (its size or its copy)
        assert x.ndim is not None
        for i in open_:
            spec[i] = size_or_copy(cast(Dim, spec[i]), x.dims[i])
        open_ = []
    if open_ and (unknown or x.ndim is None or len(open_) > _MOST_OPEN):
        # the run decides them (a size or a copy): run-time entries as the unknown ones are
        unknown = sorted([*unknown, *open_])
        for i in open_:
            spec[i] = 1
        open_ = []
    if len(unknown) == 1 and -1 not in spec:
        # the one unknown entry is whatever makes the element counts agree: inferred, as -1 is
        spec[unknown[0]] = -1
        unknown = []
    if unknown:
        return _reshape_unknown(ctx, x, spec, unknown, allowzero, out, extra)
    if x.ndim is None:
        return reshape_unknown_rank(ctx, x, spec, allowzero, out)
    if open_:
        return _reshape_cases(ctx, x, spec, open_, infer, allowzero, extra, out)
    dims, conds, err = reshape_dims(x.dims, spec, allowzero)
    if err is not None:
        ctx.fail(RESHAPE_SIZE, f"reshape of `{x}` to {tuple(map(str, spec))}: {err}")
    if not require_reshape(ctx, x, Lazy(shape_str, spec), [*extra, *conds]):
        return False
    ctx.assign(out, with_value(Tensor(dims, x.dtype), reshape_value(x, dims)))
    return True


def reshape_unknown_rank(
    ctx: Context, x: TensorType, spec: Sequence[Spec], allowzero: bool, out: Type
) -> bool:
    """The reshape of ``x`` of unknown rank to ``spec``: its sizes where ``spec`` gives them all,
    else (on the last run, without -2) the new shape's rank with a ``?`` where the input decides."""
    if all(isinstance(s, Dim) or s > 0 for s in spec):
        ctx.assign(out, Tensor(tuple(as_dim(s) for s in spec), x.dtype))
        return True
    if -2 in spec or not ctx.final:
        return unknown_rank(ctx, out, x.dtype)
    # without -2 the new shape fixes the result's rank: what it gives literally is known,
    # what it copies (0, -3, -4's -1) or infers (-1) from the unknown input is not
    ctx.assign(out, Tensor(rank_only(spec, allowzero), x.dtype))
    return True


def require_reshape(
    ctx: Context, x: TensorType, newshape: Message, conds: Sequence[tuple[object, Message]]
) -> bool:
    """Commits the conditions of reshaping ``x`` to ``newshape`` (``reshape-size``; False: defer)."""
    if not conds:
        return True
    chk = Checks()
    for c, msg in conds:
        chk.require(c, RESHAPE_SIZE, Lazy("cannot reshape `{}` to newshape {}: {}", x, newshape, msg))  # type: ignore[arg-type]
    return chk.commit(ctx)


def _dynamic_spec(
    ctx: Context, t: Type, allowzero: bool, conds: list[tuple[object, Message]]
) -> tuple[list[Spec], list[int], list[int], set[int]] | str | None:
    """The new shape of ``reshape(x, shape)`` read from the value of ``shape``: the spec (a
    constant entry is an int: 0 copies, -1 infers; a symbolic one is a dimension), the positions of
    unknown entries (a placeholder 1 in the spec), those of symbolic entries that may be 0
    without ``allowzero`` (a size or a copy: see :func:`_settle`) or -1 (inferred), and the set of
    the latter. A symbolic entry that may be below -1 gets the condition that it is not (or not
    negative, beside a constant -1: a second -1 is invalid); the other special values of Relay
    (-2, -3, -4) and entries below -1 are an error, as more than one -1 is. None: defer;
    :data:`UNKNOWN_LENGTH`: the length is unknown."""
    es = size_entries(ctx, t, "the new shape", 1)
    if es is None or isinstance(es, str):
        return es
    spec: list[Spec] = []
    unknown: list[int] = []
    open_: list[int] = []
    infer: set[int] = set()
    minus = any(d is not None and d.constant_value == -1 for d in es)
    for i, d in enumerate(es):
        if d is None:
            unknown.append(i)
            spec.append(1)
            continue
        c = d.constant_value
        if c is None:
            lo, hi = bounds(d)
            if lo < 0 and (minus or hi < -1):
                why = f"entry {i} (`{d}`) may be negative, which reshape would read as a special value"
                conds.append((ge(d, 0), why))
            elif lo < 0:  # -1 infers (a reading of its own), below is invalid
                if lo < -1:
                    conds.append((ge(d, -1), f"entry {i} (`{d}`) may be below -1, which reshape refuses"))
                infer.add(i)
            if (lo < 1 and not allowzero) or i in infer:
                open_.append(i)
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
    return spec, unknown, open_, infer


def _settle(
    ctx: Context,
    x: TensorType,
    spec: list[Spec],
    open_: Sequence[int],
    infer: set[int],
    allowzero: bool,
    conds: list[tuple[object, Message]],
) -> list[int]:
    """Decides the reading of each entry of ``open_`` (symbolic, may be 0 without ``allowzero``,
    or -1: ``infer``) where that is cheap, in place in ``spec`` (and ``infer``): -1 where it is
    -1, not -1 where it is ``>= 0`` (by the solver, from the facts); a size where it is ``>= 1``,
    or where it is the input's size at its place, or 0 only where that size is 0 (both readings
    agree); a copy (0) where it is 0. Past the input's rank a 0 has nothing to copy (the run
    fails): a size, by a guard. Returns the entries left open."""
    left: list[int] = []
    for i in open_:
        e = spec[i]
        assert isinstance(e, Dim)
        if i in infer:
            if ctx.prove(eq(e, -1)) and -1 not in spec:
                spec[i] = -1
                infer.discard(i)
                continue
            if not ctx.prove(ge(e, 0)):
                left.append(i)
                continue
            infer.discard(i)
            if allowzero or ctx.prove(ge(e, 1)):
                continue  # (a size: 0 is one with allowzero)
        if x.ndim is not None and i >= x.ndim:
            conds.append((ge(e, 1), f"entry {i} (`{e}`) may be 0, which reshape would read as a copy "
                          f"of the input's size at {i}, which `{x}` does not have"))
            continue
        if x.ndim is None:
            if ctx.prove(ge(e, 1)):
                continue
        else:
            d = x.dims[i]
            if e == d:
                continue
            # (an entry that may be negative is >= 0 by its guard, not known to the solver)
            same = any_of(ge(e, 1), eq(e, d), lt(e, 0)) if bounds(e)[0] < 0 else any_of(ge(e, 1), eq(e, d))
            if ctx.prove(same):
                continue
        if ctx.prove(eq(e, 0)):
            spec[i] = 0
            continue
        left.append(i)
    return left


def _reshape_cases(
    ctx: Context, x: TensorType, spec: Sequence[Spec], open_: Sequence[int], infer: set[int],
    allowzero: bool, extra: Sequence[tuple[object, Message]], out: Type,
) -> bool:
    """The reshape of ranked ``x`` with the entries ``open_`` of ``spec`` read every way they may
    be: one case per choice of readings (a size, ``e >= 1``, or ``e >= 0`` with ``allowzero``; a
    copy, ``e == 0``, without it; inferred, ``e == -1``, for the entries of ``infer``, one at most);
    the cases no size reaches are dropped (their conditions are false, or the solver refutes
    them)."""
    cases: list[tuple[tuple[Dim, ...], list[tuple[object, Message]], Cond]] = []
    ways = [("size",) + (() if allowzero else ("copy",)) + (("infer",) if i in infer else ()) for i in open_]
    minus = sum(1 for s in spec if isinstance(s, int) and s == -1)
    for choice in itertools.product(*ways):
        if minus + choice.count("infer") > 1:
            continue
        sp = list(spec)
        reading: list[tuple[object, Message]] = []
        for i, way in zip(open_, choice):
            e = spec[i]
            assert isinstance(e, Dim)
            at = x.dims[i] if i < len(x.dims) else "nothing"
            if way == "copy":
                sp[i] = 0
                reading.append((eq(e, 0), Lazy(
                    "entry {} (`{}`) must be 0 (a copy of the input's `{}`): as a size it does not fit",
                    i, e, at)))
            elif way == "infer":
                sp[i] = -1
                reading.append((eq(e, -1), Lazy(
                    "entry {} (`{}`) must be -1 (inferred): as a size it does not fit", i, e)))
            else:
                reading.append((ge(e, 0 if allowzero else 1), Lazy(
                    "entry {} (`{}`) must be a size: as 0 or -1 it copies or infers, which does not fit",
                    i, e)))
        dims, conds, err = reshape_dims(x.dims, sp, allowzero)
        if err is not None:
            continue
        whole = all_of(*(cast(Cond, c) for c, _ in (*reading, *conds)))
        if whole != FALSE:
            cases.append((dims, [*reading, *conds], whole))
    if len(cases) > 1:
        cases = [c for c in cases if ctx.prove(negate(c[2])) is not True]
    shown = Lazy(shape_str, spec)
    if not cases:
        ctx.fail(RESHAPE_SIZE, f"cannot reshape `{x}` to newshape {shape_str(spec)}: it fits at no size, "
                 "whichever of its entries that may be 0 or -1 are read as sizes, 0 (a copy) or -1")
    if len(cases) == 1:
        dims, conds, _ = cases[0]
        if not require_reshape(ctx, x, shown, [*extra, *conds]):
            return False
        ctx.assign(out, with_value(Tensor(dims, x.dtype), reshape_value(x, dims)))
        return True
    which = ", ".join(str(i) for i in open_)
    cond = any_of(*(c[2] for c in cases))
    msg = f"it fits at these sizes with entries {which} read neither as sizes nor as 0 (copies) or -1"
    if not require_reshape(ctx, x, shown, [*extra, (cond, msg)]):
        return False
    closed = _closed_dims(x, spec, open_, infer, allowzero)
    got: list[Dim] = []
    for k, d in enumerate(cases[0][0]):
        alts = [c[0][k] for c in cases]
        if all(a == d for a in alts):
            got.append(d)
        elif closed is not None:
            got.append(closed[k])
        else:  # the run decides which
            got.append(fresh_any(1 if all(bounds(a)[0] >= 1 for a in alts) else 0))
    ctx.assign(out, Tensor(tuple(got), x.dtype))
    return True


def size_or_copy(e: Dim, c: Dim) -> Dim:
    """The size an entry ``e >= 0`` of a new shape gives without ``allowzero``: ``e`` itself where
    it is ``>= 1``, the input's size ``c`` at its place where it is 0 (a copy), as one dimension,
    ``max(e, c*(1 - min(1, e)))`` (an atom: a product of such sizes stays one monomial)."""
    return dmax(e, c * (1 - dmin(e, 1)))


def _closable(
    x: TensorType, spec: Sequence[Spec], open_: Sequence[int], infer: set[int], allowzero: bool
) -> bool:
    """Whether each entry of ``open_`` is a size or a copy (none may be -1) of an axis ``x`` has,
    and a symbol of ``x`` or ``spec`` may be 0 (declared ``min=0``): where every symbol is at least
    1, a copy fits only with sizes the other facts rule out (the case split of the final inference
    drops it; a probe of the program's first part, without those facts, gets a ``?`` as before,
    whose conditions cost the solver less than the closed form's)."""
    if allowzero or x.ndim is None or any(i in infer or i >= x.ndim for i in open_):
        return False
    dims = [*x.dims, *(s for s in spec if isinstance(s, Dim))]
    return any(isinstance(a, Sym) and a.min < 1 for d in dims for a in d.atoms())


def _closed_dims(
    x: TensorType, spec: Sequence[Spec], open_: Sequence[int], infer: set[int], allowzero: bool
) -> tuple[Dim, ...] | None:
    """The result of reshaping ``x`` to ``spec`` with each entry of ``open_`` (a size or a copy, none
    inferred) read by :func:`size_or_copy`: the result of every case at once (None where an entry
    may be -1 or the reshape does not fit)."""
    if not _closable(x, spec, open_, infer, allowzero):
        return None
    sp = list(spec)
    for i in open_:
        e = spec[i]
        assert isinstance(e, Dim)
        sp[i] = size_or_copy(e, x.dims[i])
    dims, _, err = reshape_dims(x.dims, sp, allowzero)
    return None if err is not None else dims


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
    # (beside -1 a run-time entry is >= 1: a 0 there makes the reshape fail, or is invalid with
    # ``allowzero`` (ONNX), or fails past the input's rank, or copies the input's size, which is
    # >= 1 if its bounds say so)
    infers = any(isinstance(s, int) and s == -1 for s in spec)

    def least(i: int) -> int:
        return int(infers and (allowzero or i >= len(x.dims) or bounds(x.dims[i])[0] >= 1))

    given: tuple[Spec, ...] = tuple(fresh_any(least(i)) if i in unknown else s for i, s in enumerate(spec))
    got, _, err = reshape_dims(x.dims, given, allowzero)  # (its conditions: over the run's values)
    if err is not None:
        ctx.fail(RESHAPE_SIZE, f"reshape of `{x}` to {shown}: {err}")
    if not require_reshape(ctx, x, shown, [*extra, *_known_part_divides(x, spec, unknown, allowzero)]):
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
        c = eq(mod(total, dmax(part, 1) if may_be_zero(part) else part), 0)
    out: list[tuple[object, Message]] = []
    if any(isinstance(s, int) and s == -1 for s in spec):  # (-1 divides by the others' product)
        nz = ge(product(known), 1)
        if nz != TRUE:
            out.append((nz, f"the known entries beside -1 multiply to {product(known)}, which must not be 0"))
    if c != TRUE:
        out.append((c, f"the known entries multiply to {product(known)}, which must divide {product(x.dims)}"
                    " (the run-time entries multiply to the quotient)"))
    return out
