"""Helpers shared by the relation families: attribute parsing, axes, deferred checks.

Attribute parsers raise :class:`~symshape.errors.SymshapeError` with code ``bad-attribute``; the
same parser serves an operator's ``check_attrs`` hook (so a bad literal raises at the call site)
and its relation (so :meth:`TypeSolver.add_relation` with bad attributes reports an error).

:class:`Checks` collects the conditions a relation states. A relation computes its result and its
conditions, then :meth:`Checks.commit` either defers (a condition mentions an unknown dimension and
this is not the final run) or states them: equalities with unknowns are unified (binding the
unknown), the rest go to :meth:`Context.require` (decided on the spot, proved, refuted or a guard).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from symshape.encoding.conds import BoolConst, BoolOp, Cmp, Cond, Not, all_of, any_of, cond_dims, eq, negate
from symshape.encoding.dims import ONE, Atom, Dim, as_dim, bounds, floordiv
from symshape.encoding.types import Attrs, TensorType, Type
from symshape.errors import AXIS_OUT_OF_RANGE, BAD_ATTRIBUTE, DTYPE_MISMATCH, ErrorCode, SymshapeError
from symshape.relations.base import Context, Message

__all__ = [
    "Checks",
    "product",
    "exact_div",
    "norm_axis",
    "tensors_or_none",
    "attr_int",
    "attr_bool",
    "attr_str",
    "attr_ints",
    "attr_axes",
    "attr_shape",
    "attr_dtype",
    "bad",
    "is_int_dtype",
    "is_float_dtype",
    "require_float",
    "cancel_common",
    "equal_counts",
    "resolve_cond",
    "INT_DTYPES",
    "shape_str",
]

INT_DTYPES = frozenset("int8 int16 int32 int64 uint8 uint16 uint32 uint64".split())
FLOAT_DTYPES = frozenset("float16 bfloat16 float32 float64".split())
COMPLEX_DTYPES = frozenset("complex64 complex128".split())


def is_int_dtype(dtype: object) -> bool | None:
    """Whether ``dtype`` is an integer dtype; None when unknown."""
    if not isinstance(dtype, str):
        return None
    return dtype in INT_DTYPES


def is_float_dtype(dtype: object, complex_ok: bool = False) -> bool | None:
    """Whether ``dtype`` is a floating-point dtype (or complex, with ``complex_ok``); None when
    unknown."""
    if not isinstance(dtype, str):
        return None
    return dtype in FLOAT_DTYPES or (complex_ok and dtype in COMPLEX_DTYPES)


def require_float(ctx: Context, x: TensorType, what: str = "", *, complex_ok: bool = False) -> None:
    """Fail with ``dtype-mismatch`` unless ``x`` has a float dtype (an unknown dtype passes): the
    operators Relax registers as float-only (``exp``, ``sqrt``, ``softmax``, ``layer_norm``, ...)."""
    if is_float_dtype(x.dtype, complex_ok) is False:
        name = what or ctx.name
        ctx.fail(DTYPE_MISMATCH, f"{name} requires a float tensor, got `{x}`")


def product(dims: Iterable[Dim]) -> Dim:
    """The product of dimensions (``1`` for none)."""
    out: Dim | None = None
    for d in dims:
        out = as_dim(d) if out is None else out * d
    return ONE if out is None else out


def _content(d: Dim) -> int:
    g = 0
    for _, c in d.terms:
        g = math.gcd(g, c)
    return g


def exact_div(a: Dim, b: Dim) -> Dim:
    """``a // b`` for a division expected to be exact: common constant factors are cancelled first,
    so ``(6*n)//4`` becomes ``(3*n)//2`` and ``(6*n*m)//n`` becomes ``6*m``."""
    cb = b.constant_value
    if cb is not None and cb > 0:
        g = math.gcd(_content(a), cb) if a.terms else cb
        if g > 1:
            a = floordiv(a, g)
            cb //= g
        return floordiv(a, cb)
    return floordiv(a, b)


def cancel_common(a: Dim, b: Dim) -> tuple[Dim, Dim]:
    """``a`` and ``b`` divided by their common factor that is provably positive: the gcd of all
    coefficients times every atom that each term of both has and whose bounds are ``>= 1``. The
    quotients are equal exactly when ``a`` and ``b`` are, so ``a == b`` can be stated on them. A
    factor that may be 0 (a ``min=0`` symbol) is kept: ``z*a == z*b`` also holds at ``z = 0``.

    >>> import symshape as ss
    >>> n, s = ss.dims("n s")
    >>> [str(d) for d in cancel_common(512 * n * s, 256 * n * s)]
    ['2', '1']
    """
    terms = (*a.terms, *b.terms)
    if not terms:
        return a, b
    g = 0
    common: dict[Atom, int] | None = None
    for m, c in terms:
        g = math.gcd(g, c)
        if common is None:
            common = dict(m)
        else:
            mono = dict(m)
            common = {at: min(e, mono[at]) for at, e in common.items() if at in mono}
    factor = as_dim(g)
    for at, e in sorted((common or {}).items(), key=lambda ae: ae[0]._key):
        ad = Dim(((((at, 1),), 1),))
        if bounds(ad)[0] >= 1:
            for _ in range(e):
                factor = factor * ad
    if factor == 1:
        return a, b
    return exact_div(a, factor), exact_div(b, factor)


def equal_counts(a: Dim, b: Dim) -> Cond:
    """``a == b`` for two element counts, stated on their quotients by the common positive factor
    (:func:`cancel_common`) unless that refutes it: a refuted condition keeps the counts
    themselves, so that the explanation names what they depend on."""
    c = eq(*cancel_common(a, b))
    if c == BoolConst(False):
        return eq(a, b)
    return c


def shape_str(shape: Sequence[object]) -> str:
    """A shape (or a reshape's new shape) as Python prints a tuple: ``(3,)``, ``(n, -1)``."""
    inner = ", ".join(str(s) for s in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


def bad(op: str, message: str) -> SymshapeError:
    """A ``bad-attribute`` error for operator ``op``."""
    return SymshapeError(BAD_ATTRIBUTE, f"{op}: {message}")


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def attr_int(attrs: Attrs, name: str, default: int | None, op: str, *, lo: int | None = None) -> int:
    """An int attribute (``>= lo`` when given); None means "not given" (the default)."""
    v = attrs.get(name)
    if v is None:
        v = default
    if type(v) is not int and not _is_int(v):  # (an int, the common case, without a call)
        raise bad(op, f"attribute {name} must be an int, got {v!r}")
    assert isinstance(v, int)
    if lo is not None and v < lo:
        raise bad(op, f"attribute {name} must be >= {lo}, got {v}")
    return v


def attr_bool(attrs: Attrs, name: str, default: bool, op: str) -> bool:
    """A bool attribute (0/1 accepted); None means "not given" (the default)."""
    v = attrs.get(name)
    if v is None:
        v = default
    if isinstance(v, bool):
        return v
    if v in (0, 1) and _is_int(v):
        return bool(v)
    raise bad(op, f"attribute {name} must be a bool, got {v!r}")


def attr_str(
    attrs: Attrs, name: str, default: str | None, op: str, choices: Sequence[str] = ()
) -> str | None:
    """A string attribute (one of ``choices`` when given); None means "not given" (the default)."""
    v = attrs.get(name)
    if v is None:
        v = default
    if v is None:
        return None
    if not isinstance(v, str):
        raise bad(op, f"attribute {name} must be a string, got {v!r}")
    if choices and v not in choices:
        raise bad(op, f"attribute {name} must be one of {', '.join(choices)}; got {v!r}")
    return v


def attr_dtype(attrs: Attrs, name: str, op: str, *, required: bool = False) -> str | None:
    """A dtype attribute; ``""``/None mean "same as the input" unless ``required``."""
    from symshape.encoding.types import DTYPES

    v = attrs.get(name)
    if v in (None, ""):
        if required:
            raise bad(op, f"attribute {name} (a dtype) is required")
        return None
    if not isinstance(v, str) or v not in DTYPES:
        raise bad(op, f"attribute {name} must be a dtype, got {v!r}")
    return v


def attr_ints(
    attrs: Attrs,
    name: str,
    default: object,
    op: str,
    *,
    lengths: Sequence[int] = (),
    lo: int | None = None,
    allow_none: bool = False,
) -> tuple[int, ...] | None:
    """An int or a sequence of ints as a tuple; the length must be one of ``lengths`` when given
    (a single int is then repeated to the first length)."""
    v = attrs.get(name, default)
    if v is None:
        if allow_none:
            return None
        raise bad(op, f"attribute {name} is required")
    if _is_int(v):
        assert isinstance(v, int)
        vals: tuple[int, ...] = (v,) * (lengths[0] if lengths else 1)
    elif isinstance(v, tuple) and all(_is_int(x) for x in v):
        vals = tuple(int(x) for x in v)
        if lengths and len(vals) not in lengths:
            want = " or ".join(str(n) for n in lengths)
            raise bad(op, f"attribute {name} must have {want} values, got {len(vals)}")
    else:
        raise bad(op, f"attribute {name} must be an int or a sequence of ints, got {v!r}")
    if lo is not None:
        for x in vals:
            if x < lo:
                raise bad(op, f"attribute {name} values must be >= {lo}, got {v!r}")
    return vals


def attr_axes(attrs: Attrs, name: str, op: str, *, default: object = None) -> tuple[int, ...] | None:
    """``None``, an int or a sequence of ints; duplicates among literal axes of the same sign are an
    error (``(0, -2)`` can only be judged once the rank is known)."""
    v = attrs.get(name, default)
    if v is None:
        return None
    vals = attr_ints(Attrs({name: v}), name, None, op)
    assert vals is not None
    if len(set(vals)) != len(vals):
        raise bad(op, f"duplicate axes in {name}={v!r}")
    return vals


def attr_shape(attrs: Attrs, name: str, op: str, *, allow_negative: bool = False) -> tuple[Dim, ...]:
    """A shape attribute: a sequence of ints or dimensions (symbolic dimensions allowed)."""
    v = attrs.get(name)
    if _is_int(v) or isinstance(v, Dim):
        v = (v,)
    if not isinstance(v, tuple):
        raise bad(op, f"attribute {name} must be a sequence of dimensions, got {v!r}")
    out = []
    for x in v:
        if not (_is_int(x) or isinstance(x, Dim)):
            raise bad(op, f"attribute {name} must contain ints or dimensions, got {x!r}")
        d = as_dim(x)
        c = d.constant_value
        if c is not None and c < 0 and not allow_negative:
            raise bad(op, f"attribute {name} has a negative dimension {c}")
        out.append(d)
    return tuple(out)


def norm_axis(ctx: Context, axis: int, ndim: int, what: str, *, extra: int = 0) -> int:
    """``axis`` made non-negative for a rank-``ndim`` tensor (``extra`` widens the range, e.g. 1 for
    an insertion point); out of range is an ``axis-out-of-range`` failure."""
    r = ndim + extra
    if not -r <= axis < r:
        ctx.fail(
            AXIS_OUT_OF_RANGE,
            f"{what}: axis {axis} is out of range for rank {ndim} (allowed [{-r}, {r}))",
        )
    return axis + r if axis < 0 else axis


def tensors_or_none(args: Sequence[Type]) -> list[TensorType] | None:
    """The arguments as tensors, or None when one is not a tensor yet (defer)."""
    out = []
    for t in args:
        if not isinstance(t, TensorType):
            return None
        out.append(t)
    return out


def resolve_cond(ctx: Context, c: Cond) -> Cond:
    """``c`` with bound unknown dimensions replaced (and re-simplified)."""
    from symshape.encoding.conds import ge, gt, le, lt, ne

    match c:
        case BoolConst():
            return c
        case Cmp(op, a, b):
            x, y = ctx.resolve_dim(a), ctx.resolve_dim(b)
            if x is a and y is b:
                return c
            fn = {"==": eq, "!=": ne, "<=": le, "<": lt, ">=": ge, ">": gt}[op]
            return fn(x, y)
        case BoolOp("and", xs):
            return all_of(*(resolve_cond(ctx, x) for x in xs))
        case BoolOp(_, xs):
            return any_of(*(resolve_cond(ctx, x) for x in xs))
        case Not(x):
            return negate(resolve_cond(ctx, x))
    return c


class Checks:
    """Conditions a relation states, committed together (see the module docstring)."""

    __slots__ = ("conds", "eqs")

    def __init__(self) -> None:
        self.eqs: list[tuple[Dim, Dim, ErrorCode, Message]] = []
        self.conds: list[tuple[Cond, ErrorCode, Message]] = []

    def equal(self, a: Dim, b: Dim, code: ErrorCode, message: Message) -> None:
        """``a == b`` (an unknown on either side is bound by unification)."""
        if a != b:
            self.eqs.append((a, b, code, message))

    def require(self, cond: Cond, code: ErrorCode, message: Message) -> None:
        """State ``cond`` (an unknown inside makes the relation defer until the final run)."""
        if cond != BoolConst(True):
            self.conds.append((cond, code, message))

    def commit(self, ctx: Context) -> bool:
        """State everything; False means: defer (and nothing was stated)."""
        known = not ctx.final  # every condition is then without unknowns (checked here)
        if known:
            for c, _, _ in self.conds:
                if any(d.has_unknowns for d in cond_dims(c)):
                    return False
        for a, b, code, msg in self.eqs:
            a, b = ctx.resolve_dim(a), ctx.resolve_dim(b)
            if a == b:
                continue
            if a.has_unknowns or b.has_unknowns:
                ctx.unify_dim(a, b)
            else:
                ctx.require(eq(a, b), code, msg)
        for c, code, msg in self.conds:
            # (a comparison without unknowns resolves to itself)
            ctx.require(c if known and type(c) is Cmp else resolve_cond(ctx, c), code, msg)
        return True
