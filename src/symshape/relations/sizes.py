"""Relations whose result sizes are given: ``broadcast_to`` (a target shape), ``pad`` (widths),
``zeros``/``ones``/``constant_of_shape`` (a shape). A shape may be an attribute or the value of
one more input (a 1-d int tensor, see :func:`dynamic_sizes`).

=====================  =========================================================================
relation               rule (Relay semantics; every optimistic Relay check is a condition here)
=====================  =========================================================================
``broadcast_to``       numpy ``broadcast_to``: each input dimension is 1 or the target's
``pad``                ``d + before + after`` per axis
``init_tensor``        ``zeros``/``ones``: the ``shape`` and ``dtype`` attributes, no inputs
=====================  =========================================================================

An input of unknown rank gives a result of unknown rank (``broadcast_to``: the target's shape).
Every operand must be a tensor: anything else is a ``type-mismatch``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from symshape.encoding.conds import Cond, any_of, cond_dims, eq, ge
from symshape.encoding.dims import AnyDim, Dim, bounds, fresh_any
from symshape.encoding.types import Attrs, Tensor, TensorType, TupleType, Type
from symshape.errors import (
    BAD_ATTRIBUTE,
    NEGATIVE_DIM,
    NOT_BROADCASTABLE,
    RANK_MISMATCH,
)
from symshape.relations.base import Context, relation
from symshape.relations.common import (
    Checks,
    attr_dtype,
    attr_shape,
    bad,
    shape_str,
)
from symshape.relations.operands import ranked_or_defer, tensor_or_defer
from symshape.relations.values import (
    filled_value,
    size_entries,
)

__all__ = [
    "dynamic_sizes",
    "fill_unknown",
    "broadcast_to_rel",
    "parse_pad_width",
    "pad_rel",
    "init_tensor_rel",
    "run_time_notes",
]


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
    dimension where that cannot be 1 (the only size it broadcasts to), else a given ``?``
    (:func:`fill_unknown`)."""
    out = args[ctx.num_inputs]
    x = tensor_or_defer(args[0], ctx, 0)
    if ctx.num_inputs == 2:
        es = dynamic_sizes(ctx, args[1], "the target shape", 1)
        if es is None or x is None:
            return False
        if isinstance(es, str):
            ctx.assign(out, Tensor(None, x.dtype))
            return True
        shape, unknown = fill_unknown(ctx, x, es)
    else:
        shape, unknown = attr_shape(attrs, "shape", ctx.name), []
    if x is None:
        return False
    if x.ndim is not None:
        if x.ndim > len(shape):
            ctx.fail(
                NOT_BROADCASTABLE,
                f"broadcast_to: `{x}` has more dimensions than the target shape {shape_str(shape)}",
            )
        chk = Checks()
        for i in range(1, x.ndim + 1):
            d, t = x.dims[-i], shape[-i]
            if d == 1 or d == t or len(shape) - i in unknown:
                continue  # (an unknown target size: the result is a given `?` there)
            if d.has_unknowns and ctx.final:
                chk.equal(d, t, NOT_BROADCASTABLE, "")
                continue
            chk.require(
                any_of(eq(d, 1), eq(d, t)),
                NOT_BROADCASTABLE,
                f"cannot broadcast `{x}` to shape {shape_str(shape)}: dimension {x.ndim - i} is {d}, "
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
    x = ranked_or_defer(ctx, args, out)
    if isinstance(x, bool):
        return x
    pairs = [(pw, pw)] * len(x.dims) if isinstance(pw, int) else list(pw)
    if len(pairs) != len(x.dims):
        ctx.fail(RANK_MISMATCH, f"pad: pad_width has {len(pairs)} pairs, but `{x}` has rank {x.ndim}")
    ctx.assign(out, Tensor(tuple(d + a + b for d, (a, b) in zip(x.dims, pairs)), x.dtype))
    return True


def fill_unknown(
    ctx: Context, x: TensorType, es: Sequence[Dim | None]
) -> tuple[tuple[Dim, ...], list[int]]:
    """A broadcast target with its unknown entries filled, and their positions: the input's
    aligned dimension when it cannot be 1 (a constant other than 1, a symbol ``>= 2``: the only
    size it broadcasts to, one way or both, is itself), else a given ``?`` (the run decides the
    result's size there; a solver unknown would be bound silently by whatever the result meets
    later). What the run needs of the entry is not stated: some value of it always runs."""
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
        if xd is not None and not xd.has_unknowns and _never_one(xd):
            out.append(xd)
        else:
            out.append(fresh_any(0))
    return tuple(out), unknown


def _never_one(d: Dim) -> bool:
    """Whether ``d`` cannot be 1 by its bounds (``8``, ``0``, a symbol declared ``min=2``)."""
    lo, hi = bounds(d)
    return lo >= 2 or hi <= 0


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
            tuple(fresh_any(0) if d is None else d for d in es), dtype  # (an entry the run gives)
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


# ----------------------------------------------------------------------------------------------
# where a given ``?`` comes from (for reports)


def _tensor_dims(t: Type) -> Iterable[tuple[str, int, Dim]]:
    """``(which output, axis, size)`` for each size of ``t`` (a tensor or a tuple of them)."""
    if isinstance(t, TensorType) and t.ndim is not None:
        for i, d in enumerate(t.dims):
            yield "", i, d
    elif isinstance(t, TupleType):
        for k, f in enumerate(t.fields):
            for _, i, d in _tensor_dims(f):
                yield f" {k}", i, d


def run_time_notes(cond: Cond, calls: Iterable[tuple[str, Sequence[Type], Sequence[Type]]]) -> list[str]:
    """One line per given ``?`` of ``cond`` (a guard), in the order they appear in it, saying
    which size it is: the first call (``calls``: each one's description, input types and output
    types, in program order) with that ``?`` in an output's size and in none of its inputs
    (where the run decided it). A ``?`` that no call makes (an annotation's) gets no line.

    >>> import symshape as ss
    >>> s = ss.dim("s")
    >>> x = ss.var("x", ss.Tensor((s,), "float32"))
    >>> v = ss.var("v", ss.Tensor((1,), "int64"))
    >>> res = ss.infer(ss.Function([x, v], ss.ops.add(x, ss.ops.constant_of_shape(v))))
    >>> print(res.report())  # doctest: +ELLIPSIS
    status: guarded
    guards:
      add at ... needs `s == ? or s == 1 or ? == 1`
        where `?` is axis 0 of the result of constant_of_shape at ..., which the run decides
    """
    anys: list[AnyDim] = []
    for d in cond_dims(cond):
        for a in d.atoms():
            if isinstance(a, AnyDim) and not a.alts and a not in anys:
                anys.append(a)
    if not anys:
        return []
    found: dict[AnyDim, str] = {}
    for desc, ins, outs in calls:
        seen = {a for t in ins for _, _, d in _tensor_dims(t) for a in d.atoms() if isinstance(a, AnyDim)}
        sizes = [(f"output {k}{w}" if len(outs) > 1 or w else "the result", axis, d)
                 for k, t in enumerate(outs) for w, axis, d in _tensor_dims(t)]  # fmt: skip
        for exact in (True, False):  # (a size that is the `?` itself, else one made of it)
            for whose, axis, d in sizes:
                atoms: Iterable[object] = (d.atom,) if exact else d.atoms()
                for b in atoms:
                    if isinstance(b, AnyDim) and b in anys and b not in found and b not in seen:
                        size = f"axis {axis}" if exact else f"in axis {axis} (`{d}`)"
                        found[b] = f"{size} of {whose} of {desc}"
        if len(found) == len(anys):
            break
    lines = []
    many = len(anys) > 1
    for n, a in enumerate(anys):
        if a in found:
            which = f"the {_ORDINALS[n] if n < len(_ORDINALS) else f'#{n + 1}'} `?`" if many else "`?`"
            lines.append(f"where {which} is {found[a]}, which the run decides")
    return lines


_ORDINALS = ("first", "second", "third", "fourth", "fifth")
