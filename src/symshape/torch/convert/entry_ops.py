"""Operators of the importer's own for calls that compute new entries, so that a small integer
tensor's value (a shape value, design.md section 8) is the one torch computes, or none.

symshape tracks the entries of 0-d and 1-d integer tensors (``torch.tensor(x.shape)``, a buffer of
sizes) and the range of any integer tensor's entries. A call that keeps its input's shape but not
its entries must not keep its input's value: the value would become a wrong reshape target or a
wrong index guard. These operators are registered through the public custom-operator API, as
:mod:`symshape.torch.convert.promotion` registers ``torch.promote``:

* ``torch.new_entries(x)``: ``x``'s shape and dtype, nothing known of the entries (no value and,
  being no copy, no range): random fills, writes into a tensor, ``tril``;
* ``torch.cumprod(x, axis=)``: ``x``'s shape, dtype ``int64`` for an integer or bool ``x``
  (torch's rule); the value is the running products of a 0-d or 1-d value, each entry known while
  the ones before it are (``cumsum`` is symshape's own);
* ``torch.sort_indices(x, axis=, descending=)``: ``int64`` of ``x``'s shape (``sort``'s indices,
  ``argsort``); the value is the order of a 0-d or 1-d value whose entries are distinct constants;
* ``torch.bitwise(a, b, op=)``: ``&``/``|``/``^`` of operands promoted to one dtype (``op`` ``not``:
  ``~a``, ``b`` unused), broadcast: a bool result's value as the logical operators compute it,
  an integer one's entry by entry where both are constants (``~e`` is ``-e - 1`` for any ``e``);
* ``torch.fmod(a, b)``: the same for ``torch.fmod`` (C's remainder, of the sign of ``a``; symshape's
  ``mod`` is Python's, of the sign of ``b``);
* ``torch.dtype_refuse(x, rule=, what=)``: ``x``, once its dtype is one torch's kernel takes (an
  error, ``dtype-mismatch``, where torch refuses it): rule ``bool`` for ``abs``, ``-x``, ``round``,
  ``floor``, ``ceil``, ``trunc``, ``relu``, ``clamp``-based activations, ``-`` with a bool operand,
  ``//``/``%`` of bools; rule ``unsigned`` (nor an unsigned integer) for ``hardtanh``; rule
  ``floating`` for ``&``/``|``/``^``/``~`` (also checked by
  ``torch.bitwise`` itself, and ``torch.fmod`` refuses bools);
* ``torch.atleast_1d(x)``: ``x``, a 0-d one as 1-d (``flatten(0, 0)`` of a tensor whose rank only
  inference knows);
* ``torch.divisible(a, b, what=)``: ``a``, once the value of the 0-d integer ``a`` is a multiple of
  ``b``'s, ``b``'s at least 1 (``unflatten``'s ``-1``: torch requires the axis' size to be a
  multiple of the others, and refuses their product 0 as ambiguous);
* ``torch.reduced_dtype(x, rule=)``: ``x`` in the dtype torch gives a reduction's result: rule
  ``truth`` (``all``/``any``): ``bool``, a ``uint8`` ``x`` stays ``uint8``; rule ``floating``
  (``mean``, ``std``, ``var``, ``norm``): ``x`` itself, an error (``dtype-mismatch``) for an
  integer or bool ``x``, which torch refuses.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import symshape as ss
from symshape.encoding.conds import BoolConst, all_of, eq, ge
from symshape.encoding.dims import Dim, as_dim, dmax, mod
from symshape.encoding.values import MAX_VALUE_LEN, value_from_entries
from symshape.errors import DTYPE_MISMATCH, SHAPE_MISMATCH
from symshape.relations.base import Context
from symshape.relations.elementwise import broadcast_shapes, join_dtype
from symshape.relations.operands import tensor_args
from symshape.relations.running import running_entries
from symshape.relations.values import compare_value, entries_of, logical_value, not_value

__all__ = [
    "NEW_ENTRIES", "CUMPROD", "SORT_INDICES", "AXIS", "RANK_IN", "BITWISE", "FMOD", "REDUCED_DTYPE",
    "DTYPE_REFUSE", "DIVISIBLE", "ATLEAST_1D", "INTEGER_DTYPES",
    "fmod_int", "refuse",
]  # fmt: skip

INTEGER_DTYPES = frozenset({"bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64"})

Entries = tuple[Dim | None, ...]


def _entries(t: ss.TensorType) -> Entries | None:
    """The entries of a 0-d (one) or 1-d value of constant length (unknown ones None)."""
    if not isinstance(t.shape, tuple):
        return None
    if len(t.shape) == 0:
        return (t.value if isinstance(t.value, Dim) else None,)
    return entries_of(t)


def _valued(shape: tuple[Dim, ...], dtype: Any, entries: Entries | None) -> ss.TensorType:
    """A tensor type with the value ``entries`` (a 0-d one's single entry)."""
    if entries is None or len(shape) > 1:
        return ss.TensorType(shape, dtype)
    if len(shape) == 0:
        return ss.TensorType(shape, dtype, entries[0])
    return ss.TensorType(shape, dtype, value_from_entries(entries))


def _one(ctx: Context, args: Sequence[ss.Type]) -> ss.TensorType | None:
    got = tensor_args(ctx, args, 1)
    return None if got is None else got[0]


OneRule = Callable[[Context, ss.TensorType, Any], ss.Type]
"""The result's type from the one tensor argument's (known) type and the attributes."""


def _of_one(name: str) -> Callable[[OneRule], OneRule]:
    """Register ``rule`` as the relation ``name`` of one tensor: deferred until the tensor's type
    is known, then the result is ``rule``'s type."""

    def register(rule: OneRule) -> OneRule:
        def rel(ctx: Context, args: Sequence[ss.Type], attrs: Any) -> bool:
            x = _one(ctx, args)
            if x is None:
                return False
            ctx.assign(args[1], rule(ctx, x, attrs))
            return True

        rel.__doc__ = rule.__doc__
        ss.relation(name)(rel)
        return rule

    return register


@_of_one("torch.new_entries")
def _new_entries(ctx: Context, x: ss.TensorType, attrs: Any) -> ss.Type:
    return ss.TensorType(x.shape, x.dtype)


def _check_axis(ctx: Context, x: ss.TensorType, attrs: Any, op: str) -> None:
    """torch's dim check: ``-r <= axis < r`` (a 0-d tensor takes 0 and -1)."""
    axis = attrs.get("axis")
    if isinstance(x.shape, tuple) and isinstance(axis, int):
        r = max(len(x.shape), 1)
        if not -r <= axis < r:
            ctx.fail("axis-out-of-range", f"{op}: dim {axis} is out of range for `{x}` (rank {len(x.shape)})")


@_of_one("torch.axis")
def _axis(ctx: Context, x: ss.TensorType, attrs: Any) -> ss.Type:
    """``x`` itself, once its ``axis`` is in range (a cumulative op's dim)."""
    _check_axis(ctx, x, attrs, str(attrs.get("what") or "dim"))
    return x


@_of_one("torch.rank_in")
def _rank_in(ctx: Context, x: ss.TensorType, attrs: Any) -> ss.Type:
    """``x`` itself, once its rank is in ``lo..hi`` (torch's rule for an op's input rank)."""
    lo, hi = attrs.get("lo"), attrs.get("hi")
    if isinstance(x.shape, tuple) and not lo <= len(x.shape) <= hi:
        what = attrs.get("what")
        ctx.fail("rank-mismatch", f"{what} needs a {lo}-d to {hi}-d input, got `{x}` (rank {len(x.shape)})")
    return x


@_of_one("torch.atleast_1d")
def _atleast_1d(ctx: Context, x: ss.TensorType, attrs: Any) -> ss.Type:
    """``x`` itself, a 0-d ``x`` as a 1-d one of one entry (torch's ``flatten(0, 0)`` of a 0-d
    tensor)."""
    if isinstance(x.shape, tuple) and len(x.shape) == 0:
        return _valued((as_dim(1),), x.dtype, _entries(x))
    return x


@_of_one("torch.cumprod")
def _cumprod(ctx: Context, x: ss.TensorType, attrs: Any) -> ss.Type:
    dtype: Any = "int64" if x.dtype in INTEGER_DTYPES else x.dtype
    _check_axis(ctx, x, attrs, "cumprod")
    if not isinstance(x.shape, tuple):
        return ss.TensorType(None, dtype)
    es = _entries(x)
    return _valued(x.shape, dtype, None if es is None else running_entries(es, prod=True))


def _order(entries: Entries, descending: bool) -> Entries | None:
    """The positions of the entries in sorted order, when all are distinct constants."""
    consts = [e.constant_value if e is not None else None for e in entries]
    if any(c is None for c in consts) or len(set(consts)) != len(consts):
        return None
    keyed = sorted(range(len(consts)), key=lambda i: consts[i], reverse=descending)  # type: ignore[arg-type,return-value]
    return tuple(as_dim(i) for i in keyed)


@_of_one("torch.sort_indices")
def _sort_indices(ctx: Context, x: ss.TensorType, attrs: Any) -> ss.Type:
    _check_axis(ctx, x, attrs, "sort")
    if not isinstance(x.shape, tuple):
        return ss.TensorType(None, "int64")
    es = _entries(x)
    return _valued(x.shape, "int64", None if es is None else _order(es, bool(attrs.get("descending"))))


def fmod_int(a: int, b: int) -> int | None:
    """C's ``fmod`` of integers (the sign of ``a``); None for a zero divisor (torch raises)."""
    if b == 0:
        return None
    q = abs(a) // abs(b)
    return a - b * (q if (a < 0) == (b < 0) else -q)


_INT_OPS: dict[str, Callable[[int, int], int | None]] = {
    "and": lambda a, b: a & b,
    "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b,
    "fmod": fmod_int,
}


def _int_entrywise(op: str, a: ss.TensorType, b: ss.TensorType, shape: tuple[Dim, ...]) -> Entries | None:
    """The entries of an integer ``a op b`` of ``shape`` (rank <= 1): each where both entries
    are constants (``not``: every known entry of ``a``)."""
    if len(shape) > 1:
        return None
    n = 1 if len(shape) == 0 else shape[0].constant_value
    if n is None or n > MAX_VALUE_LEN:
        return None

    def col(t: ss.TensorType) -> Entries | None:
        es = _entries(t)
        if es is None:
            return None
        return es * n if len(es) == 1 else es if len(es) == n else None

    ca = col(a)
    if ca is None:
        return None
    if op == "not":
        return tuple(None if e is None else -e - 1 for e in ca)
    cb = col(b)
    if cb is None:
        return None
    fn = _INT_OPS[op]
    out: list[Dim | None] = []
    for x, y in zip(ca, cb):
        kx = None if x is None else x.constant_value
        ky = None if y is None else y.constant_value
        k = None if kx is None or ky is None else fn(kx, ky)
        out.append(None if k is None else as_dim(k))
    return tuple(out)


@ss.relation("torch.bitwise")
def _bitwise_rel(ctx: Context, args: Sequence[ss.Type], attrs: Any) -> bool:
    return _entrywise_rel(ctx, args, str(attrs.get("op")))


@ss.relation("torch.fmod")
def _fmod_rel(ctx: Context, args: Sequence[ss.Type], attrs: Any) -> bool:
    return _entrywise_rel(ctx, args, "fmod")


def _entrywise_rel(ctx: Context, args: Sequence[ss.Type], op: str) -> bool:
    """``a op b`` broadcast, of their (one) dtype, valued as the module docstring says."""
    got = tensor_args(ctx, args, 2)
    if got is None:
        return False
    a, b = got
    if op == "not":
        b = a
    dtype = join_dtype(ctx, [a.dtype, b.dtype], ctx.name)
    _refuse(ctx, dtype, "bool" if op == "fmod" else "floating", "fmod" if op == "fmod" else f"bitwise {op}")
    if not isinstance(a.shape, tuple) or not isinstance(b.shape, tuple):
        ctx.assign(args[2], ss.TensorType(None, dtype))  # type: ignore[arg-type]
        return True
    shape = broadcast_shapes(ctx, a, b)
    if shape is None:
        return False
    if dtype == "bool" and op != "fmod":
        value = (
            not_value(a)
            if op == "not"
            else compare_value("not_equal", a, b, shape)
            if op == "xor"
            else logical_value(f"logical_{op}", a, b, shape)
        )
        ctx.assign(args[2], ss.TensorType(shape, dtype, value if len(shape) <= 1 else None))
        return True
    ctx.assign(args[2], _valued(shape, dtype, _int_entrywise(op, a, b, shape)))
    return True


@ss.relation("torch.divisible")
def _divisible_rel(ctx: Context, args: Sequence[ss.Type], attrs: Any) -> bool:
    """``a``, once its value is a multiple of ``b``'s and ``b``'s is at least 1 (0-d integer
    values; no claim where either value is unknown)."""
    got = tensor_args(ctx, args, 2)
    if got is None:
        return False
    a, b = got
    va, vb = a.value, b.value
    if isinstance(va, Dim) and isinstance(vb, Dim):
        k = vb.constant_value if vb.is_constant else None
        cond = BoolConst(False) if k is not None and k < 1 else all_of(ge(vb, 1), eq(mod(va, dmax(vb, 1)), 0))
        if cond != BoolConst(True):
            ctx.require(
                cond, SHAPE_MISMATCH, f"{attrs.get('what')}: {va} is not a multiple of {vb} (at least 1)"
            )
    ctx.assign(args[2], a)
    return True


#: the dtypes torch's kernels refuse, by rule (see :data:`DTYPE_REFUSE`)
_REFUSED = {
    "bool": frozenset({"bool"}),
    "floating": frozenset({"float16", "bfloat16", "float32", "float64", "complex64", "complex128"}),
    "unsigned": frozenset({"bool", "uint8", "uint16", "uint32", "uint64"}),
}
_NEEDS = {
    "bool": "a tensor that is not bool",
    "floating": "an integer or bool tensor",
    "unsigned": "a signed or floating tensor",
}


def _refuse(ctx: Context, dtype: Any, rule: str, what: str) -> None:
    """Fail (``dtype-mismatch``) when torch's ``what`` refuses ``dtype`` by ``rule``."""
    if isinstance(dtype, str) and dtype in _REFUSED[rule]:
        ctx.fail(DTYPE_MISMATCH, f"torch's {what} needs {_NEEDS[rule]}, got {dtype} (torch refuses it)")


@_of_one("torch.dtype_refuse")
def _dtype_refuse(ctx: Context, x: ss.TensorType, attrs: Any) -> ss.Type:
    """``x`` itself, once its dtype is one torch's ``what`` takes (rule ``bool``: not bool; rule
    ``floating``: not floating or complex; ``unsigned``: neither bool nor unsigned)."""
    _refuse(ctx, x.dtype, str(attrs.get("rule")), str(attrs.get("what")))
    return x


@_of_one("torch.reduced_dtype")
def _reduced_dtype(ctx: Context, x: ss.TensorType, attrs: Any) -> ss.Type:
    rule = attrs.get("rule")
    if rule in ("floating", "ordered"):
        if x.dtype in (INTEGER_DTYPES if rule == "floating" else ("bool",)):
            needs = "a floating tensor" if rule == "floating" else "a tensor that is not bool"
            ctx.fail(DTYPE_MISMATCH, f"torch's {attrs.get('what')} needs {needs}, got `{x}`")
        return x
    # rule truth: bool; a uint8 x stays uint8
    return x if x.dtype in ("bool", "uint8") else ss.TensorType(x.shape, None if x.dtype is None else "bool")


_OPS: dict[str, tuple[int, str, dict[str, str]]] = {
    "torch.new_entries": (1, "x's shape and dtype; its entries unknown (no value, no range)", {}),
    "torch.cumprod": (1, "cumprod along axis; int64 for an integer x", {"axis": "int"}),
    "torch.atleast_1d": (1, "x; a 0-d x as a 1-d one of one entry", {}),
    "torch.sort_indices": (
        1,
        "the int64 positions that sort x along axis (torch.sort's indices)",
        {"axis": "int", "descending": "bool"},
    ),
    "torch.axis": (1, "x, once axis is in range for it (torch's dim check)", {"axis": "int", "what": "str"}),
    "torch.rank_in": (
        1, "x, once its rank is in lo..hi (torch's rule)", {"lo": "int", "hi": "int", "what": "str"}
    ),
    "torch.fmod": (2, "torch.fmod(a, b) of one dtype, broadcast (the remainder has the sign of a)", {}),
    "torch.bitwise": (
        2,
        "a & b, a | b, a ^ b (op and/or/xor) of one dtype, broadcast; op not: ~a",
        {"op": "str"},
    ),
    "torch.reduced_dtype": (
        1,
        "x in the dtype of torch's reduction (rule truth: bool, uint8 stays; floating: x, ints refused;"
        " ordered: x, bools refused)",
        {"rule": "str", "what": "str"},
    ),
    "torch.divisible": (
        2, "a, once its value is a multiple of b's, b >= 1 (0-d integer values)", {"what": "str"}
    ),
    "torch.dtype_refuse": (
        1,
        "x, once torch takes its dtype (rule bool: not bool; floating: not floating or complex; "
        "unsigned: not bool or unsigned)",
        {"rule": "str", "what": "str"},
    ),
}
(
    NEW_ENTRIES, CUMPROD, ATLEAST_1D, SORT_INDICES, AXIS, RANK_IN, FMOD, BITWISE, REDUCED_DTYPE, DIVISIBLE,
    DTYPE_REFUSE,
) = (
    ss.register_op(name, name, n, doc=doc, attr_types=types) for name, (n, doc, types) in _OPS.items()
)


#: the attributes of each (rule, what), the same objects at every call
_REFUSE_ATTRS: dict[tuple[str, str], dict[str, str]] = {}


def refuse(x: ss.Expr, rule: str, what: str) -> ss.Expr:
    """``x`` through ``torch.dtype_refuse`` (see the module docstring)."""
    attrs = _REFUSE_ATTRS.get((rule, what))
    if attrs is None:
        attrs = _REFUSE_ATTRS[(rule, what)] = {"rule": rule, "what": what}
    return DTYPE_REFUSE(x, **attrs)
