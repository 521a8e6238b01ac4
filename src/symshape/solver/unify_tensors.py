"""Unifying tensor types: dtypes, ranks and dimensions, and the values that refine them.

Dimensions unify by *equating* them (see :mod:`symshape.solver.unify`): identical canonical forms
agree; an unknown dimension binds (also when it occurs linearly: ``?d + 1 == n`` binds
``?d := n - 1``, ``2*?d == n`` binds ``?d := n//2`` under ``n % 2 == 0``; an unknown is ``>= 0``,
so a value that may be negative states ``value >= 0``); two different constants conflict; anything
else is a condition handed to the solver through :attr:`TensorUnifier.on_condition`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sized

from symshape.encoding.conds import Cond, eq, ge
from symshape.encoding.dims import ZERO, Dim, DimVar, bounds, const, floordiv, mod
from symshape.encoding.types import IncompleteType, TensorType, Type, TypeVar
from symshape.encoding.values import RANGE_DTYPES, Range, Value, meet_ranges, range_str, value_str
from symshape.errors import DTYPE_MISMATCH, NEGATIVE_DIM, RANK_MISMATCH, SHAPE_MISMATCH, ErrorCode
from symshape.solver.bindings import Bindings
from symshape.solver.diagnostics import Origin, conflict_message

__all__ = ["Mismatch", "TensorUnifier"]

_ALWAYS = (True,)  # non-empty: on_refine is always called


class Mismatch(Exception):
    """Raised inside structural unification; caught at the top and reported once."""

    def __init__(self, code: ErrorCode, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


def _tensor_checked(shape: tuple[Dim, ...] | TypeVar | None, dtype: str | TypeVar | None) -> TensorType:
    """``TensorType(shape, dtype)`` from unified parts (dimensions of valid types, or what unify_dim
    agreed on), without ``__post_init__``'s checks but for the one that can fail: a negative
    constant dimension (a bound unknown resolved to it) is built the checking way, which raises."""
    if type(shape) is tuple:
        for d in shape:
            terms = d.terms
            if terms and not terms[0][0] and terms[0][1] < 0:
                return TensorType(shape, dtype)
    t: TensorType = _new(TensorType)
    attrs = t.__dict__  # (item stores: cheaper than ``update`` with keywords)
    attrs["shape"] = shape
    attrs["dtype"] = dtype
    attrs["value"] = None
    attrs["range"] = None
    return t


def _tensor_plain(shape: tuple[Dim, ...] | TypeVar | None, dtype: str | TypeVar | None) -> TensorType:
    return TensorType(shape, dtype)


_new = object.__new__
# the fast constructor sets the fields as the dataclass does, while they are these four
tensor_of_checked = (
    _tensor_checked
    if tuple(f.name for f in dataclasses.fields(TensorType)) == ("shape", "dtype", "value", "range")
    else _tensor_plain
)


class TensorUnifier(Bindings):
    """Unification of tensor types and dimensions over :class:`Bindings`; reports a refinement
    through :attr:`on_refine` and a condition through :attr:`on_condition` (hooks the solver sets)."""

    def __init__(self) -> None:
        super().__init__()
        self.on_refine: Callable[[Iterable[IncompleteType], Iterable[DimVar]], None] = (
            lambda holes, dvars: None
        )
        self.on_condition: Callable[[Cond, Origin, ErrorCode, str], None] = (
            lambda c, o, code, msg: None
        )
        self._frame: tuple[Type, Type] | None = None  # the outermost pair (messages name it)
        # :attr:`on_refine` is called only while one of these is non-empty (see watch_refine);
        # by default, always
        self._watch_a: Sized = _ALWAYS
        self._watch_b: Sized = _ALWAYS

    def watch_refine(self, a: Sized, b: Sized) -> None:
        """Call :attr:`on_refine` only while ``a`` or ``b`` is non-empty (the hook has nothing
        to do otherwise): a cheap test instead of a call per refinement."""
        self._watch_a, self._watch_b = a, b

    def _unify_tensor(self, a: TensorType, b: TensorType, origin: Origin) -> TensorType:
        if self.flex:
            # bind instantiated shape/dtype parameters first (they stand for whatever they meet)
            fa = TensorType(self._flex(a.shape), self._flex(a.dtype), a.value, a.range)
            fb = TensorType(self._flex(b.shape), self._flex(b.dtype), b.value, b.range)
            for x, y in ((fa, fb), (fb, fa)):
                if x.shape in self.flex and y.shape is not None and y.shape != x.shape:
                    self.flex[x.shape] = y.shape
                if x.dtype in self.flex and y.dtype is not None and y.dtype != x.dtype:
                    self.flex[x.dtype] = y.dtype
            fa = TensorType(self._flex(a.shape), self._flex(a.dtype), a.value, a.range)
            fb = TensorType(self._flex(b.shape), self._flex(b.dtype), b.value, b.range)
            if fa != a or fb != b:
                return self._unify_tensor_plain(fa, fb, origin)
        return self._unify_tensor_plain(a, b, origin)

    def _unify_tensor_plain(self, a: TensorType, b: TensorType, origin: Origin) -> TensorType:
        da, db = a.dtype, b.dtype
        if da is not None and db is not None and da != db:
            raise Mismatch(DTYPE_MISMATCH, f"dtype {da} vs {db}")
        dtype = da if da is not None else db
        sa, sb = a.shape, b.shape
        shape: tuple[Dim, ...] | TypeVar | None
        if sa is None:
            shape = sb
        elif sb is None:
            shape = sa
        elif isinstance(sa, TypeVar) or isinstance(sb, TypeVar):
            if sa != sb:
                raise Mismatch(SHAPE_MISMATCH, f"shape {_shape(sa)} vs {_shape(sb)}")
            shape = sa
        else:
            if len(sa) != len(sb):
                raise Mismatch(RANK_MISMATCH, f"rank {len(sa)} vs {len(sb)}")
            out = []
            bound = self.dim_bind
            new_a = new_b = False  # whether a dimension differs from ``a``'s (``b``'s) object
            for x, y in zip(sa, sb):
                if x is y and (not bound or x._hv is False or not x.has_unknowns):
                    out.append(x)  # what unify_dim gives: nothing to resolve, equal
                    continue
                d = self.unify_dim(x, y, origin, len(out))
                out.append(d)
                if d is not x:
                    new_a = True
                if d is not y:
                    new_b = True
            # one side's own shape when every agreed dimension is that side's (no new tuple)
            shape = sa if not new_a else sb if not new_b else tuple(out)
        va, vb = a.value, b.value
        ra, rb = a.range, b.range
        if va is None and vb is None and ra is None and rb is None:
            if shape is sa and dtype == da:
                return a
            if shape is sb and dtype == db:
                return b
            return tensor_of_checked(shape, dtype)
        value = self._meet_values(va, vb, origin)
        rng = _meet_ranges(ra, rb, dtype)
        if shape is sa and dtype == da and value is va and rng is ra:
            return a
        if shape is sb and dtype == db and value is vb and rng is rb:
            return b
        return TensorType(shape, dtype, value, rng)

    def _meet_values(self, va: Value | None, vb: Value | None, origin: Origin) -> Value | None:
        """The meet of two values (a value refines its type): an unknown entry takes the other
        side's, two known entries are equated as dimensions are (different constants conflict,
        symbolic ones become a condition)."""
        if va is None or va == vb:
            return vb
        if vb is None:
            return va
        if isinstance(va, Dim) and isinstance(vb, Dim):
            return self._meet_entry(va, vb, origin, None)
        if isinstance(va, Dim) or isinstance(vb, Dim) or len(va) != len(vb):
            raise Mismatch(SHAPE_MISMATCH, f"value {value_str(va)} vs {value_str(vb)}")
        out: list[Dim | None] = []
        for i, (x, y) in enumerate(zip(va, vb)):
            if x is None:
                out.append(y)
            elif y is None:
                out.append(x)
            else:
                out.append(self._meet_entry(x, y, origin, i))
        if all(p is q for p, q in zip(out, va)):
            return va
        if all(p is q for p, q in zip(out, vb)):
            return vb
        return tuple(out)

    def _meet_entry(self, x: Dim, y: Dim, origin: Origin, index: int | None) -> Dim:
        x, y = self.resolve_dim(x), self.resolve_dim(y)
        if x == y:
            return x
        cx, cy = x.constant_value, y.constant_value
        if cx is not None and cy is not None:
            where = "value" if index is None else f"value entry {index}"
            raise Mismatch(SHAPE_MISMATCH, f"{where}: {cx} vs {cy}")
        return self.unify_dim(x, y, origin)

    def unify_dim(self, x: Dim, y: Dim, origin: Origin, index: int | None = None) -> Dim:
        """Equate two dimensions (see the module docstring); returns the agreed dimension."""
        # (``_hv``: whether a dimension has unknowns, cached in it; None until asked)
        if x._hv is not False:
            x = self.resolve_dim(x)
        if y._hv is not False:
            y = self.resolve_dim(y)
        if x is y or x._key == y._key:  # (``x == y``)
            return x
        for u, v in ((x, y), (y, x)):
            t = u.terms
            if len(t) == 1:  # ``u.atom``, written out: is ``u`` a lone unknown?
                m, k = t[0]
                if k == 1 and len(m) == 1:
                    at, p = m[0]
                    if p == 1 and isinstance(at, DimVar):
                        hv = v._hv
                        if not (v.has_unknowns if hv is None else hv) or at not in v.unknowns:
                            self._bind(at, v, origin)
                            return v
        cx, cy = x.constant_value, y.constant_value
        where = f"dimension {index}: " if index is not None else ""
        if cx is not None and cy is not None:
            raise Mismatch(SHAPE_MISMATCH, f"{where}{cx} vs {cy}")
        solved = _solve_linear(x - y)
        if solved is not None:
            var, val, rem = solved
            if rem.is_constant and rem != 0:
                raise Mismatch(SHAPE_MISMATCH, f"{where}{x} vs {y}")
            if rem != 0:
                msg = f"{where}`{x}` and `{y}` are equal only when `{rem}` is 0"
                self.on_condition(eq(rem, 0), origin, SHAPE_MISMATCH, msg)
            self._bind(var, val, origin)
            # the agreed dimension is the side the unknown was solved from
            return self.resolve_dim(y if var in x.unknowns else x)
        frame = self._frame
        if frame is not None:
            msg = conflict_message(
                "cannot unify", self.resolve(frame[0]), self.resolve(frame[1]), f"{where}{x} vs {y}"
            )
        else:
            msg = f"dimensions `{x}` and `{y}` must be equal"
        self.on_condition(eq(x, y), origin, SHAPE_MISMATCH, msg)
        # prefer the simpler side as the agreed dimension
        return x if _size(x) <= _size(y) else y

    def _bind(self, var: DimVar, val: Dim, origin: Origin) -> None:
        # an unknown dimension is >= 0: binding it to a value that may be negative states that
        t = val.terms
        c = (t[0][1] if not t[0][0] else None) if len(t) == 1 else (None if t else 0)  # constant_value
        if (c < 0) if c is not None else (bounds(val)[0] < 0):
            msg = f"dimension `{val}` (the value of `?d{var.id}`) may be negative"
            self.on_condition(ge(val, 0), origin, NEGATIVE_DIM, msg)
        self.dim_bind[var] = val
        if self._watch_a or self._watch_b:
            self.on_refine((), (var,))


def _meet_ranges(ra: Range | None, rb: Range | None, dtype: str | TypeVar | None) -> Range | None:
    """The range of the unified tensor: what both sides' ranges say (one side's own object when
    the other says nothing more); a range met with a dtype that carries none is a conflict."""
    if rb is None or rb == ra:
        rng = ra
    elif ra is None:
        rng = rb
    else:
        rng = meet_ranges(ra, rb)
    if rng is not None and type(dtype) is str and dtype not in RANGE_DTYPES:
        raise Mismatch(DTYPE_MISMATCH, f"dtype {dtype} vs the integer range {range_str(rng)}")
    return rng


def _shape(s: object) -> str:
    return str(s)


def _size(d: Dim) -> int:
    return len(str(d))


def _solve_linear(diff: Dim) -> tuple[DimVar, Dim, Dim] | None:
    """If ``diff == 0`` determines an unknown ``v`` occurring once, linearly, as ``k*v``, return
    ``(v, value, remainder)``: ``v == value`` holds exactly when ``remainder == 0`` (the remainder
    is the canonical ``0`` when ``k`` divides the rest, as for ``?d + 1 == n``; for ``2*?d == n`` it
    is ``n % 2``)."""
    for m, k in diff.terms:
        if len(m) == 1 and m[0][1] == 1 and isinstance(m[0][0], DimVar):
            v = m[0][0]
            rest = diff - const(k) * Dim(((m, 1),))
            if v in rest.unknowns:
                continue
            # k*v + rest == 0  <=>  v == num / den with den > 0
            num, den = (ZERO - rest, k) if k > 0 else (rest, -k)
            return v, floordiv(num, den), mod(num, den)
    return None
