"""Value ranges of integer tensors, and the index bounds they give (issue 19).

After inference, the integer tensors of a program get a **range** for their entries (see
:mod:`symshape.encoding.values`): an interval ``[lo, hi]`` of dimensions, either side unknown. It
is computed forward over the calls in program order (arguments before calls). Float tensors carry
integer bounds too where their entries come from ranged ones (OPT computes its positions from a
float mask): float constants round outward, ``mod`` and ``clip`` round outward on floats, and a
cast back to an integer truncates into the same bounds. Ranges come from

=========================  =======================================================================
source                     range of the entries
=========================  =======================================================================
annotation                 the declared one: ``Tensor((b, t), "int64", values=(0, 50256))``
constant array             its smallest and largest entry
exact value                the hull of its entries (``shape_of(x)`` holds ``x``'s dimensions)
``arange(a, b, s)``        ``[a, a + s*(len - 1)]`` (``s > 0``; reversed for ``s < 0``)
``add``/``subtract``       interval arithmetic (a 0-d exact value is a point)
``multiply``               by a point ``c`` (a constant, a size) of known sign: scaled
                           (swapped when ``c <= 0``); two non-negative ranges: ``[lo*lo', hi*hi']``
``cumsum``                 its own value's hull where it has one; else along an axis of
                           length ``L``: ``[min(lo, L*lo), max(hi, L*hi)]``; exclusive:
                           ``[min(0, (L-1)*lo), max(0, (L-1)*hi)]`` (each side by its sign where
                           known); reverse: the same
fills                      a point: ``zeros``/``ones``(``_like``), ``full``, ``constant_of_shape``
``negative``               ``[-hi, -lo]``
``floor_divide``/``mod``   by a positive constant ``c``: ``[lo//c, hi//c]``; ``[0, c - 1]``
``trunc_divide``           by a point ``c`` of known sign: ``[trunc(lo/c), trunc(hi/c)]`` (swapped
                           when ``c < 0``); ``divide`` of ints (which truncates) the same
``maximum``/``minimum``    the max/min of the bounds (one known side suffices where it bounds)
``clip``                   ``[max(lo, a_min), min(hi, a_max)]``
``nn.relu``/``abs``        ``[max(lo, 0), max(hi, 0)]``; ``[0, max(-lo, hi)]`` (tighter by sign)
``cast``, ``cast_like``     the same; a bool's ``[0, 1]``
moves and copies           the same (the result's own exact value where it has one, as
                           ``caps[1]``): ``expand_dims``, ``squeeze``, ``reshape``,
                           ``broadcast_to``, ``expand``, ``strided_slice``, ``transpose``,
                           ``flatten``, ``copy``, ``tile``, ``take`` (of a ranged tensor)
columns                    ``take(concatenate(xs, a), j, axis=a)`` (or of ``stack``) by constant
                           ``j``: the hull of the fields ``j`` picks (GatherND's index columns)
joins                      the hull: ``concatenate``, ``stack``, ``where`` (of its branches; a
                           branch that its integer condition compares with a point ``k``,
                           ``where(r < k, r, ...)``, bounded by its side of ``k`` first)
=========================  =======================================================================

Index bounds from these ranges: :mod:`symshape.ir.index_bounds`; the interval arithmetic of the
rules: :mod:`symshape.ir.range_arith`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from symshape.encoding.dims import Dim, as_dim, bounds, dmax, dmin, floordiv
from symshape.encoding.types import TensorType
from symshape.encoding.values import RANGE_DTYPES, Range, hull_ranges, meet_ranges, range_str, value_range
from symshape.ir.index_bounds import INDEX_MODES, IndexCheck, index_checks
from symshape.ir.module import program_roots
from symshape.ir.nodes import Call, Constant, Expr, Tuple, Var
from symshape.ir.op import Op
from symshape.ir.range_arith import extent, int_bound, nonneg_product, pinned, scale, sign_of, trunc_divide
from symshape.ir.visit import bound_values
from symshape.source import Span

if TYPE_CHECKING:
    from symshape.ir.result import InferenceResult

__all__ = ["RangeFact", "Ranges", "IndexCheck", "index_checks", "INDEX_MODES"]

_SAME = frozenset(
    {
        "expand_dims", "squeeze", "reshape", "reshape_like", "broadcast_to", "expand",
        "strided_slice", "transpose", "flatten", "nn.batch_flatten", "copy", "tile", "take",
        "repeat", "torch.promote", "torch.movedim", "torch.swapaxes", "torch.atleast_1d",
        "torch.nonempty",
    }
)  # fmt: skip
"""Operators whose result's entries are entries of their first argument (``torch.promote``, the
torch importer's type promotion, only widens: an integer keeps its value; ``torch.movedim`` and
``torch.swapaxes`` are its transposes of a tensor of any rank; ``torch.atleast_1d`` a reshape,
``torch.nonempty`` its check of empty axes)."""


_ARITH = frozenset(
    {
        "add",
        "subtract",
        "multiply",
        "floor_divide",
        "trunc_divide",
        "divide",
        "mod",
        "floor_mod",
        "maximum",
        "minimum",
    }
)
"""Binary arithmetic with a range rule (:meth:`Ranges._binary`)."""

_SIDES: dict[str, tuple[tuple[str, int], tuple[str, int]]] = {
    "less": (("hi", -1), ("lo", 0)),
    "less_equal": (("hi", 0), ("lo", 1)),
    "greater": (("lo", 1), ("hi", 0)),
    "greater_equal": (("lo", 0), ("hi", -1)),
}
"""``x op k`` of integers: the side of ``x`` it bounds and ``k``'s offset there, where true and
where false."""
_SWAPPED = {
    "less": "greater", "less_equal": "greater_equal", "greater": "less", "greater_equal": "less_equal",
}  # fmt: skip

_FILLS: dict[str, int | None] = {
    "zeros": 0, "zeros_like": 0, "ones": 1, "ones_like": 1, "constant_of_shape": None, "full": None,
}  # fmt: skip
"""Operators whose entries are all one value: a constant, ``constant_of_shape``'s ``value``
attribute, ``full``'s fill (its first argument)."""


@dataclass(frozen=True)
class RangeFact:
    """A range and where it was born: ``source`` (an expression with a span) and ``how`` (what
    made it: ``arange``, an annotation, a constant)."""

    range: Range
    source: Any
    how: str

    @property
    def span(self) -> Span | None:
        s = getattr(self.source, "span", None)
        return s if isinstance(s, Span) else None


def _numeric(dtype: object) -> bool:
    """An integer dtype, or a float one (whose entries may lie in integer bounds: OPT computes its
    positions from an all-ones float mask)."""
    return dtype in RANGE_DTYPES or (isinstance(dtype, str) and dtype.startswith(("float", "bfloat")))


def _const_range(c: Constant) -> Range | None:
    """An integer constant's least and greatest entry; a float one's rounded outward (finite)."""
    data = c.data
    if data is None or not _numeric(c.type.dtype):
        return None
    try:
        if data.size == 0:
            return None
        lo, hi = data.min(), data.max()
        if c.type.dtype in RANGE_DTYPES:
            return (as_dim(int(lo)), as_dim(int(hi)))
        if not (math.isfinite(lo) and math.isfinite(hi)):
            return None
        return (as_dim(math.floor(lo)), as_dim(math.ceil(hi)))
    except (AttributeError, TypeError, ValueError, OverflowError):
        return None


def _point(t: Any) -> Dim | None:
    """The one value a 0-d (or one-entry) tensor type holds, if known."""
    if not isinstance(t, TensorType) or t.value is None:
        return None
    if isinstance(t.value, Dim):
        return t.value
    return t.value[0] if len(t.value) == 1 else None


class Ranges:
    """The ranges of a program's integer tensors (computed once, forward over its calls).

    Computed on demand: the calls' facts forward in program order up to the last call asked
    about (each fact reads only those of calls before it, so a prefix is what the whole pass
    gives there); the variables' bound values when first followed."""

    def __init__(self, res: InferenceResult) -> None:
        self.res = res
        self.facts: dict[int, RangeFact] = {}
        self._calls = res.calls
        self._done = 0  # the facts of ``_calls[:_done]`` are computed
        self._pos: dict[int, int] | None = None
        self._lets: dict[int, Expr] | None = None

    @property
    def lets(self) -> dict[int, Expr]:
        """The value bound to each let and dataflow variable, by the variable's id."""
        lets = self._lets
        if lets is None:
            lets = self._lets = bound_values(program_roots(self.res.program))
        return lets

    def _bound(self, v: Var) -> Expr | None:
        """The value bound to ``v`` (None for a parameter or a free variable). A parameter of a
        program without errors is bound by nothing else (a second binder is an error): the bound
        values need not be collected for it."""
        if self._lets is None and not self.res.errors and self.res._gen.bound_by.get(id(v)) == "a parameter":
            return None
        return self.lets.get(id(v))

    def _upto(self, e: Call) -> None:
        """Compute the facts forward through the call ``e`` (when it is one of the program's)."""
        pos = self._pos
        if pos is None:
            pos = self._pos = {id(c): i for i, c in enumerate(self._calls)}
        end = pos.get(id(e), -1) + 1
        calls, facts = self._calls, self.facts
        while (k := self._done) < end:
            c = calls[k]
            self._done = len(calls)  # (no nested advance: a fact reads only earlier calls)
            try:
                if isinstance(c.callee, Op):
                    f = self._call(c, c.callee.name)
                    if f is not None:
                        facts[id(c)] = f
            finally:
                self._done = k
            self._done = k + 1

    def _type(self, e: Any) -> Any:
        try:
            return self.res._plain_type_of(e)
        except Exception:
            return None

    def of(self, e: Any) -> RangeFact | None:
        """The range of ``e``'s entries, with where it was born; None when not known."""
        for _ in range(10_000):  # follow let-bound variables
            hit = self.facts.get(id(e))
            if hit is None and self._done < len(self._calls) and isinstance(e, Call):
                self._upto(e)
                hit = self.facts.get(id(e))
            if hit is not None:
                return hit
            if isinstance(e, Var):
                ann = e.type_annotation
                if isinstance(ann, TensorType) and ann.range is not None:
                    return RangeFact(ann.range, e, f"`{e.name}` is declared `{ann}`")
                nxt = self._bound(e)
                if nxt is None:
                    break
                e = nxt
                continue
            break
        if isinstance(e, Constant):
            r = _const_range(e)
            if r is not None:
                return RangeFact(r, e, "a constant")
        t = self._type(e)
        if isinstance(t, TensorType):
            if t.range is not None and isinstance(e, Var):
                return RangeFact(t.range, e, f"`{e.name}` is `{t}`")
            r = value_range(t.value)
            if r is not None:
                return RangeFact(r, e, f"the value `{t}`")
        return None

    def _call(self, c: Call, name: str) -> RangeFact | None:
        args = c.args
        if name == "arange":
            return self._arange(c)
        if name in ("cast", "cast_like") and args:
            return self._cast(c)
        if name == "cumsum" and args:
            return self._cumsum(c)
        if name in _FILLS:
            return self._fill(c, name)
        if name in _SAME and args:
            t = self._type(c)  # a part of a tensor of known entries (`caps[1]`): its own value
            r = value_range(t.value) if isinstance(t, TensorType) else None
            if r is not None:
                return RangeFact(r, c, f"the value `{t}`")
            f = self._take_field(c) if name == "take" and len(args) == 2 else None
            return self.of(args[0]) if f is None else f
        if name in _ARITH:
            return self._binary(c, name)
        if name == "negative" and args:
            f = self.of(args[0])
            if f is None:
                return None
            lo, hi = f.range
            return RangeFact((None if hi is None else -hi, None if lo is None else -lo), f.source, f.how)
        if name == "clip" and args:
            return self._clip(c)
        if name in ("nn.relu", "abs") and args:
            return self._magnitude(c, name)
        if name in ("concatenate", "stack") and args:
            fields = args[0].fields if isinstance(args[0], Tuple) else args
            return self._hull([self.of(x) for x in fields])
        if name == "where" and len(args) == 3:
            return self._hull([self._branch(args[0], args[i], i == 1) for i in (1, 2)])
        return None

    def _branch(self, cond: Expr, x: Expr, then: bool) -> RangeFact | None:
        """``x``'s range where ``cond`` is ``then``: a condition comparing ``x`` itself with a point
        (``where(r < 4, r, ...)``: ``r <= 3`` there; T5's relative position buckets) bounds it."""
        f = self.of(x)
        c = self._producer(cond)
        if not (isinstance(c, Call) and isinstance(c.callee, Op) and len(c.args) == 2):
            return f
        name, (a, b) = c.callee.name, c.args
        if self._origin(b) is self._origin(x) and name in _SWAPPED:
            name, (a, b) = _SWAPPED[name], (b, a)
        k = self.of(b) if name in _SIDES and self._origin(a) is self._origin(x) else None
        if k is None or k.range[0] is None or k.range[0] != k.range[1] or not self._integral(c.args[0]):
            return f
        side, offset = _SIDES[name][0 if then else 1]
        bound = k.range[0] + offset
        r = meet_ranges(None if f is None else f.range, (bound, None) if side == "lo" else (None, bound))
        assert r is not None
        return RangeFact(r, x if f is None else f.source, f"`{x}` where {c.callee.name} is {then}")

    def _origin(self, e: Expr) -> Expr:
        """``e`` with let-bound variables and ``torch.promote`` (an integer kept) followed."""
        for _ in range(10_000):
            e = self._producer(e)
            if not (isinstance(e, Call) and isinstance(e.callee, Op) and e.callee.name == "torch.promote"):
                break
            e = e.args[0]
        return e

    def _producer(self, e: Expr) -> Expr:
        """``e`` with let-bound variables followed to the expression bound."""
        for _ in range(10_000):
            nxt = self._bound(e) if isinstance(e, Var) else None
            if nxt is None:
                break
            e = nxt
        return e

    def _take_field(self, c: Call) -> RangeFact | None:
        """``take(concatenate(xs, a), j, axis=a)`` (or of ``stack(xs, a)``) by constant indices
        reads only the fields holding entries ``j`` along ``a`` (each field's extent there a
        constant): the hull of their ranges (GatherND's index columns, one per data axis)."""
        x, t = self._producer(c.args[0]), self._type(c.args[0])
        i, axis = self._type(c.args[1]), c.attrs.get("axis")
        if not (isinstance(x, Call) and isinstance(x.callee, Op) and x.args and isinstance(x.args[0], Tuple)):
            return None
        if x.callee.name not in ("concatenate", "stack") or not isinstance(t, TensorType):
            return None
        rank = t.ndim
        at = x.attrs.get("axis")
        if rank is None or not isinstance(axis, int) or not isinstance(at, int) or i is None:
            return None
        if (axis - at) % rank or not isinstance(i, TensorType) or i.value is None:
            return None
        js = [i.value] if isinstance(i.value, Dim) else list(i.value)
        fields, starts = x.args[0].fields, [0]
        for fd in fields:  # each field's extent along the axis: 1 (stacked) or a constant
            ext = 1 if x.callee.name == "stack" else extent(self._type(fd), axis % rank, rank)
            if ext is None:
                return None
            starts.append(starts[-1] + ext)
        picked: list[RangeFact | None] = []
        for j in js:
            k = None if j is None else j.constant_value
            if k is None or not -starts[-1] <= k < starts[-1]:
                return None
            k %= starts[-1]
            picked.append(self.of(fields[next(n for n in range(len(fields)) if k < starts[n + 1])]))
        return self._hull(picked)

    def _hull(self, fs: Sequence[RangeFact | None]) -> RangeFact | None:
        if not fs or any(f is None for f in fs):
            return None
        r = hull_ranges(f.range for f in fs if f is not None)
        first = fs[0]
        assert first is not None
        return None if r is None else RangeFact(r, first.source, first.how)

    def _arange(self, c: Call) -> RangeFact | None:
        t = self._type(c)
        if not isinstance(t, TensorType) or not isinstance(t.shape, tuple) or len(t.shape) != 1:
            return None
        if t.dtype not in RANGE_DTYPES:
            return None
        start, stop, step = (_point(self._type(a)) for a in c.args[:3])
        if start is None or step is None:
            return None
        n = t.shape[0]
        s = step.constant_value
        if s is None or s == 0:
            return None
        last = start + step * (n - 1)
        r: Range = (start, last) if s > 0 else (last, start)
        args = ", ".join(str(x) for x in (start, stop, step) if x is not None)
        return RangeFact(r, c, f"`arange({args})`")

    def _operand(self, e: Expr) -> RangeFact | None:
        return self.of(e)

    def _binary(self, c: Call, name: str) -> RangeFact | None:
        if len(c.args) != 2:
            return None
        fa, fb = self.of(c.args[0]), self.of(c.args[1])
        if fa is None and fb is None:
            return None
        src = fa if fa is not None else fb
        assert src is not None
        a = fa.range if fa is not None else (None, None)
        b = fb.range if fb is not None else (None, None)

        def add(x: Dim | None, y: Dim | None) -> Dim | None:
            return None if x is None or y is None else x + y

        r: Range | None = None
        if name == "add":
            r = (add(a[0], b[0]), add(a[1], b[1]))
        elif name == "subtract":
            r = (
                None if a[0] is None or b[1] is None else a[0] - b[1],
                None if a[1] is None or b[0] is None else a[1] - b[0],
            )
        elif name == "multiply":
            r = scale(a, b) or scale(b, a) or nonneg_product(a, b)
        elif name == "maximum":
            lo = dmax(a[0], b[0]) if a[0] is not None and b[0] is not None else a[0] or b[0]
            hi = dmax(a[1], b[1]) if a[1] is not None and b[1] is not None else None
            r = (lo, hi)
        elif name == "minimum":
            lo = dmin(a[0], b[0]) if a[0] is not None and b[0] is not None else None
            hi = dmin(a[1], b[1]) if a[1] is not None and b[1] is not None else a[1] or b[1]
            r = (lo, hi)
        elif name == "floor_divide":
            k = pinned(b)
            if k is not None and k > 0:
                r = (
                    None if a[0] is None else floordiv(a[0], as_dim(k)),
                    None if a[1] is None else floordiv(a[1], as_dim(k)),
                )
        elif name == "trunc_divide" or (name == "divide" and self._integral(c)):
            r = trunc_divide(a, b)
        elif name in ("mod", "floor_mod"):
            k = pinned(b)
            if k is not None and k > 0:  # a float's remainder lies in [0, k)
                r = (as_dim(0), as_dim(k - 1 if self._integral(c) else k))
        if r is None or (r[0] is None and r[1] is None):
            return None
        return RangeFact(r, src.source, src.how)

    def _integral(self, c: Expr) -> bool:
        t = self._type(c)
        return isinstance(t, TensorType) and t.dtype in RANGE_DTYPES

    def _fill(self, c: Call, name: str) -> RangeFact | None:
        """A tensor of one value of an integer or float dtype: the point ``[v, v]`` (an integral
        one)."""
        t = self._type(c)
        if not isinstance(t, TensorType) or not _numeric(t.dtype):
            return None
        k = _FILLS[name]
        if name == "full":
            f = self.of(c.args[0]) if c.args else None
            return None if f is None else RangeFact(f.range, c, f"`full` of {range_str(f.range)}")
        if name == "constant_of_shape":
            v = int_bound(c.attrs.get("value", 0.0), ceil=False)
            if v is None or v != c.attrs.get("value", 0.0):
                return None
            k = v
        assert k is not None
        return RangeFact((as_dim(k), as_dim(k)), c, f"`{name}` (all {k})")

    def _cast(self, c: Call) -> RangeFact | None:
        """The result's own value where known; a bool's entries are 0 or 1; others keep their
        range (``cast`` and ``cast_like``: torch's ``type_as``, RoBERTa's position ids)."""
        t = self._type(c)
        r = value_range(t.value) if isinstance(t, TensorType) else None
        if r is not None:
            return RangeFact(r, c, f"the value `{t}`")
        x = self._type(c.args[0])
        if isinstance(x, TensorType) and x.dtype == "bool":
            to = t.dtype if isinstance(t, TensorType) else "another dtype"
            return RangeFact((as_dim(0), as_dim(1)), c, f"a bool cast to {to}")
        return self.of(c.args[0])

    def _cumsum(self, c: Call) -> RangeFact | None:
        """Running sums of ``k`` entries in ``[lo, hi]`` along an axis of length ``L``: ``k`` is
        ``1..L`` (``0..L-1`` when exclusive), so ``[min(lo, L*lo), max(hi, L*hi)]``
        (exclusive: ``[min(0, (L-1)*lo), max(0, (L-1)*hi)]``), each side by its bound's sign where
        known; ``reverse`` sums from the other end, the same counts. A result with a value (the
        running sums of a shape value): the hull of its entries."""
        own = self._type(c)  # the running sums of a valued input: the hull of its own value
        r0 = value_range(own.value) if isinstance(own, TensorType) else None
        if r0 is not None:
            return RangeFact(r0, c, f"the value `{own}`")
        f = self.of(c.args[0])
        t = self._type(c.args[0])
        axis = c.attrs.get("axis")
        if f is None or not isinstance(t, TensorType) or not isinstance(t.shape, tuple):
            return None
        if not isinstance(axis, int) or not -len(t.shape) <= axis < len(t.shape):
            return None
        n = t.shape[axis % len(t.shape)]
        excl = bool(c.attrs.get("exclusive", False))
        one, most = (as_dim(0), n - 1) if excl else (None, n)

        def side(b: Dim | None, low: bool) -> Dim | None:
            if b is None:
                return None
            first = b if one is None else one  # the sum of the fewest entries (1 or 0)
            sign = sign_of(b)
            if sign is not None and (sign > 0) == low:  # the fewest entries give the bound
                return first
            if sign is not None:  # the most entries do
                return most * b
            return dmin(first, most * b) if low else dmax(first, most * b)

        r: Range = (side(f.range[0], True), side(f.range[1], False))
        if r == (None, None):
            return None
        return RangeFact(r, f.source, f"{f.how}, summed along axis {axis} (`cumsum`)")

    def _magnitude(self, c: Call, name: str) -> RangeFact | None:
        """``relu``: ``[max(lo, 0), max(hi, 0)]``; ``abs``: the same range where ``lo >= 0``,
        ``[-hi, -lo]`` where ``hi <= 0``, else ``[0, max(-lo, hi)]`` (each side where known)."""
        f = self.of(c.args[0])
        if f is None:
            return None
        lo, hi = f.range
        zero = as_dim(0)
        if name == "nn.relu":
            r: Range = (zero if lo is None else dmax(lo, zero), None if hi is None else dmax(hi, zero))
        elif lo is not None and bounds(lo)[0] >= 0:
            r = (lo, hi)
        elif hi is not None and bounds(hi)[1] <= 0:
            r = (-hi, None if lo is None else -lo)
        else:
            r = (zero, None if lo is None or hi is None else dmax(-lo, hi))
        return RangeFact(r, f.source, f.how)

    def _clip(self, c: Call) -> RangeFact | None:
        f = self.of(c.args[0])
        a_min, a_max = c.attrs.get("a_min"), c.attrs.get("a_max")
        integral = self._integral(c)  # a float's bounds round outward: [floor(a_min), ceil(a_max)]

        def bound(v: object, ceil: bool) -> Dim | None:
            k = int_bound(v, ceil=ceil)
            return None if k is None else as_dim(k)

        clip: Range = (bound(a_min, integral), bound(a_max, not integral))
        r = meet_ranges(f.range if f is not None else None, clip if clip != (None, None) else None)
        if r is None:
            return None
        # every entry is at least a_min and at most a_max, also where the input's range lies
        # wholly outside them (the meet's side would cross: clip(arange(t) - 1, 0) at t = 1 is [0];
        # a float clipped to a_max = 2.5 may be 2.5: the lower side is at most floor(a_max))
        top, bottom = bound(a_max, False), bound(a_min, True)
        r = (
            r[0] if r[0] is None or top is None else dmin(r[0], top),
            r[1] if r[1] is None or bottom is None else dmax(r[1], bottom),
        )
        if f is None:
            return RangeFact(r, c, "`clip`")
        return RangeFact(r, f.source, f.how)
