"""Relay's new shape of a ``reshape`` over symbolic dimensions (no relation): the special values
(0 copies the input's size at its place unless ``allowzero``, -1 infers, -2, -3, -4) and the
conditions that make the reshape valid. :mod:`~symshape.relations.reshape` holds the relations,
:mod:`~symshape.relations.reshape_target` a new shape read from a tensor's value.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from symshape.encoding.conds import TRUE, eq, ne
from symshape.encoding.dims import Dim, as_dim, bounds, divide_exactly, dmax, fresh_any, mod
from symshape.encoding.types import Attrs
from symshape.relations.base import Lazy, Message
from symshape.relations.common import bad, equal_counts, exact_div, product

__all__ = ["Spec", "may_be_zero", "parse_newshape", "rank_only", "reshape_dims"]


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


def may_be_zero(d: Dim) -> bool:
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
                if may_be_zero(known):
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
            if may_be_zero(d):
                conds.append((ne(d, 0), Lazy("-1 cannot be inferred when {} is 0", d)))
        # pin == q*pout identically: -1 is q wherever pout != 0 (required above), nothing to divide
        q = divide_exactly(pin, pout)
        if q is not None:
            out[infer_at] = q
        else:
            # a divisor that may be 0 is written max(pout, 1): the same wherever the reshape is
            # valid, and defined at every value of the symbols
            div = dmax(pout, 1) if may_be_zero(pout) else pout
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


def rank_only(spec: Sequence[Spec], allowzero: bool) -> tuple[Dim, ...]:
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
