"""The leaf types: type variables, holes, tensor types (with their printed form and the map over
their dimensions), ADT names, ``Object`` and ``Shape``. Composite types are in
:mod:`symshape.encoding.composite_types`."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import ClassVar, Union

from symshape.encoding.dims import (
    AnyDim,
    Atom,
    Dim,
    DimLike,
    DimVar,
    Sym,
    as_dim,
    check_nonnegative_constant,
)
from symshape.encoding.dtypes import dtype_name
from symshape.encoding.values import (
    Range,
    Value,
    map_range,
    map_value,
    normalize_range,
    normalize_value,
    range_str,
    value_str,
)
from symshape.errors import (
    BAD_DTYPE,
    INVALID_ARGUMENT,
    KIND_MISMATCH,
    SymshapeError,
)
from symshape.views import Shown

__all__ = [
    "next_hole_id",
    "DTYPES",
    "DType",
    "GlobalTypeVar",
    "IncompleteType",
    "KINDS",
    "ObjectType",
    "Shape",
    "ShapeType",
    "Tensor",
    "TensorType",
    "TypeVar",
    "check_identifier",
    "map_tensor_dims",
    "plain_copy",
    "tensor_settled",
    "tensor_str",
]

DTYPES: frozenset[str] = frozenset(
    "bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 bfloat16 float32 float64 "
    "complex64 complex128".split()
)
KINDS: tuple[str, ...] = ("type", "shape", "dim", "dtype")

_hole_ids = itertools.count(1)


def _check_dtype(dtype: object) -> None:
    if dtype is None or isinstance(dtype, TypeVar):
        return
    if not isinstance(dtype, str) or dtype not in DTYPES:
        raise SymshapeError(BAD_DTYPE, f"unknown dtype {dtype!r}; known: {', '.join(sorted(DTYPES))}")


_TV_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*('\d+)?")


def check_identifier(name: object, what: str) -> None:
    if not isinstance(name, str) or not _TV_NAME.fullmatch(name):
        raise SymshapeError(INVALID_ARGUMENT, f"{what} must be an identifier, got {name!r}")


@dataclass(frozen=True)
class TypeVar(Shown):
    """A type parameter of kind ``type``, ``shape``, ``dim`` or ``dtype`` (Relay's Type, Shape,
    ShapeVar, BaseType)."""

    name: str
    kind: str = "type"

    def __post_init__(self) -> None:
        check_identifier(self.name, "a type variable's name")
        if self.kind not in KINDS:
            raise SymshapeError(KIND_MISMATCH, f"unknown kind {self.kind!r}; kinds: {KINDS}")

    def __str__(self) -> str:
        return self.name


_KIND_SET = frozenset(KINDS)


def _bad_hole(kind: object, id: object) -> None:
    if not isinstance(kind, str) or kind not in _KIND_SET:
        raise SymshapeError(KIND_MISMATCH, f"unknown kind {kind!r}; kinds: {KINDS}")
    raise SymshapeError(INVALID_ARGUMENT, f"a hole's id is an int, got {id!r}")


_set_field = object.__setattr__
next_hole_id = _hole_ids.__next__
"""The id of the next hole (every hole, however made, is numbered by this one counter)."""


@dataclass(frozen=True, eq=False, slots=True, init=False)
class IncompleteType(Shown):
    """A hole, printed ``?t<id>``; holes compare by identity. ``kind`` is one of :data:`KINDS`;
    ``id`` defaults to a fresh number."""

    kind: str
    id: int

    def __init__(self, kind: str = "type", id: int | None = None) -> None:
        # written out (not generated) so that checking the arguments costs nothing extra: holes
        # are made for every operator call
        if kind != "type" and (kind.__class__ is not str or kind not in _KIND_SET):
            _bad_hole(kind, id)
        if id is None:
            id = next_hole_id()
        elif id.__class__ is not int:
            _bad_hole(kind, id)
        _set_field(self, "kind", kind)
        _set_field(self, "id", id)

    def __str__(self) -> str:
        return f"?t{self.id}"


Shape = Union[tuple[Dim, ...], None, TypeVar]
DType = Union[str, None, TypeVar]


@dataclass(frozen=True, init=False)
class TensorType(Shown):
    """A tensor: ``shape`` is a tuple of dimensions, ``None`` (unknown rank) or a shape-kind
    :class:`TypeVar`; ``dtype`` is a dtype string, ``None`` (unknown) or a dtype-kind TypeVar.

    ``value`` is what a 0-d or 1-d ``int32``/``int64`` tensor is known to hold (see
    :mod:`symshape.encoding.values`): a tuple of dimensions (``None`` for an unknown entry) or one
    dimension; ``None`` (the default) when nothing is known. It prints after the type:
    ``Tensor[(3,), int64] = (n, s, 64)``.

    ``range`` is what the entries of an integer tensor of any rank are known to lie in: ``(lo,
    hi)``, inclusive, either side None when unknown (token ids ``in [0, 50256]``; ``arange(t)``
    ``in [0, t - 1]``). It prints last: ``Tensor[(b, t), int64] in [0, 50256]``. A type without
    a range compares and hashes as it did before ranges existed."""

    shape: Shape
    dtype: DType = "float32"
    value: Value | None = None
    range: Range | None = None

    # (not a field) True on a type whose constructor found a tuple of constant dimensions and a
    # dtype string: checked constants (nonnegative), no symbol, no unknown. Read by the walks of
    # hot paths (:func:`tensor_settled`, the eager memo) to skip the walk; a type built without
    # the constructor (a copy, an unpickled one) reads the class's False and is walked
    _cshape = False
    _hash: ClassVar[int | None] = None  # (not a field either: the cached hash, see __hash__)

    def __init__(
        self, shape: Shape, dtype: DType = "float32", value: Value | None = None, range: Range | None = None
    ) -> None:
        # written out (not generated): the generated one sets each field through
        # ``object.__setattr__``; tensor types are made for nearly every operator call
        d = self.__dict__
        d["shape"] = shape
        d["dtype"] = dtype
        d["value"] = value
        d["range"] = range
        if value is not None or range is not None:
            self._check_value()
            return
        if type(shape) is tuple and dtype.__class__ is str and dtype in DTYPES:
            # (the common case, inline: nonnegative constants and a dtype string; anything else
            # takes the checks below)
            for x in shape:
                if x.__class__ is not Dim or not x._nc:
                    break
            else:
                d["_cshape"] = True
                return
        self._check_shape_dtype()

    def __post_init__(self) -> None:
        """The checks the constructor runs (kept for callers that build a tensor type without it)."""
        if self.value is not None or self.range is not None:
            self._check_value()
            return
        self._check_shape_dtype()

    def _check_shape_dtype(self) -> None:
        sh = self.shape
        const = False
        if type(sh) is tuple:
            neg = None  # the first negative constant (one walk over a shape of Dims)
            const = True  # every dimension a constant so far
            for d in sh:
                if type(d) is not Dim:
                    const = False
                    break
                t = d.terms
                if t:
                    if t[0][0]:
                        const = False
                    else:
                        if len(t) > 1:
                            const = False
                        if t[0][1] < 0 and neg is None:
                            neg = d
            else:
                if neg is not None:
                    check_nonnegative_constant(neg)
                sh = None  # (checked)
        if sh is None:
            pass
        elif not isinstance(sh, TypeVar):
            if type(sh) is not tuple and (isinstance(sh, (str, bytes)) or not isinstance(sh, Iterable)):
                raise SymshapeError(
                    INVALID_ARGUMENT, f"a shape is a tuple of dimensions, got {sh!r}"
                )
            dims = tuple(as_dim(d) for d in sh)
            const = type(sh) is tuple
            for d in dims:
                check_nonnegative_constant(d)
                t = d.terms
                if t and (len(t) > 1 or t[0][0]):
                    const = False
            object.__setattr__(self, "shape", dims)
        elif isinstance(sh, TypeVar) and sh.kind != "shape":
            raise SymshapeError(KIND_MISMATCH, f"type variable {sh} of kind {sh.kind} used as a shape")
        dt = self.dtype
        if dt is not None and dt.__class__ is not str and not isinstance(dt, TypeVar):
            # a numpy or torch spelling (np.float32, np.dtype("int64"), torch.float16)
            dt = dtype_name(dt)
            object.__setattr__(self, "dtype", dt)
        if dt is not None and (dt.__class__ is not str or dt not in DTYPES):
            _check_dtype(dt)
            if isinstance(dt, TypeVar) and dt.kind != "dtype":
                raise SymshapeError(
                    KIND_MISMATCH, f"type variable {dt} of kind {dt.kind} used as a dtype"
                )
        elif const and dt is not None:
            self.__dict__["_cshape"] = True

    def _check_value(self) -> None:
        """Validate and normalize ``value`` (run after the shape and dtype are checked)."""
        self._check_shape_dtype()
        if self.value is not None:
            object.__setattr__(self, "value", normalize_value(self.value, self.shape, self.dtype))
        if self.range is not None:
            object.__setattr__(self, "range", normalize_range(self.range, self.dtype))

    def __hash__(self) -> int:
        # cached: tensor types key the solver's memo of eager results (see solver/eager.py)
        h = self._hash
        if h is None:
            v, r = self.value, self.range
            if r is None:
                h = hash((self.shape, self.dtype)) if v is None else hash((self.shape, self.dtype, v))
            else:
                h = hash((self.shape, self.dtype, v, r))
            self.__dict__["_hash"] = h
        return h

    def __getstate__(self) -> dict[str, object]:
        # the cached hash depends on the process's string hashing: never pickle it
        out: dict[str, object] = {"shape": self.shape, "dtype": self.dtype}
        if self.value is not None:
            out["value"] = self.value
        if self.range is not None:
            out["range"] = self.range
        return out

    def __repr__(self) -> str:
        v = "" if self.value is None else f", value={self.value!r}"
        if self.range is not None:
            v += f", range={self.range!r}"
        return f"TensorType(shape={self.shape!r}, dtype={self.dtype!r}{v})"

    @property
    def ndim(self) -> int | None:
        """The rank, or None when unknown."""
        s = self.shape
        return len(s) if s.__class__ is tuple else None  # (a shape is built a tuple, never a subclass)

    @property
    def dims(self) -> tuple[Dim, ...]:
        """The shape as a tuple; raises for unknown rank."""
        s = self.shape
        if s.__class__ is not tuple:
            raise SymshapeError(INVALID_ARGUMENT, f"{self} has no known shape")
        return s

    def subs(self, mapping: Mapping[Dim | Atom | str, DimLike]) -> TensorType:
        return map_tensor_dims(self, lambda d: d.subs(mapping))

    def __str__(self) -> str:
        return tensor_str(self)


def plain_copy(t: TensorType) -> TensorType:
    """A new object equal to ``t``, a tensor type without ``value`` or ``range`` (which passed its
    checks when it was built: they are not run again). For places that need a type object of their
    own many times over (an annotation is admitted per type object), such as an ONNX model's
    weights."""
    if t.value is not None or t.range is not None or type(t) is not TensorType:
        return TensorType(t.shape, t.dtype, t.value, t.range)
    c: TensorType = _new(TensorType)
    d = c.__dict__  # the fields in the order ``__init__`` sets them
    d["shape"], d["dtype"], d["value"], d["range"] = t.shape, t.dtype, None, None
    if t._cshape:
        d["_cshape"] = True
        # the hash too, computed once on ``t`` (``__hash__``'s of the same fields): the copies of
        # one type (a model's weights of one shape) key the solver's memo without each hashing
        # its shape again
        h = t._hash
        d["_hash"] = hash(t) if h is None else h
    return c


_new = object.__new__


def Tensor(
    shape: Iterable[DimLike] | TypeVar | None,
    dtype: str | TypeVar | object | None = "float32",
    value: Iterable[DimLike | None] | DimLike | None = None,
    values: tuple[DimLike | None, DimLike | None] | None = None,
) -> TensorType:
    """Build a :class:`TensorType`: ``Tensor((n, 3), "float32")``; ``Tensor(None, ...)`` for
    unknown rank; ``dtype=None`` for unknown dtype (numpy and torch spellings such as ``np.float32``
    or ``torch.int64`` are accepted); ``value=`` the known value of a 0-d or 1-d
    int tensor (``Tensor((3,), "int64", value=(n, s, 64))``); ``values=(lo, hi)`` the range the
    entries of an integer tensor lie in, inclusive (``Tensor((b, t), "int64", values=(0, 50256))``;
    None for an unknown side)."""
    if value is not None or values is not None:
        if value is not None and not isinstance(value, (Dim, int)) and isinstance(value, Iterable):
            value = tuple(value)
        if shape is not None and not isinstance(shape, TypeVar) and not isinstance(shape, (str, bytes)):
            shape = tuple(shape) if isinstance(shape, Iterable) else shape
        if values is not None and isinstance(values, list):
            values = tuple(values)
        return TensorType(shape, dtype, value, values)  # type: ignore[arg-type]
    if shape is not None and type(shape) is not tuple and not isinstance(shape, TypeVar):
        if type(shape) is list:
            shape = tuple(shape)
        else:
            if isinstance(shape, (str, bytes)) or not isinstance(shape, Iterable):
                raise SymshapeError(INVALID_ARGUMENT, f"a shape is a tuple of dimensions, got {shape!r}")
            shape = tuple(shape)
    return TensorType(shape, dtype)  # type: ignore[arg-type]



@dataclass(frozen=True)
class GlobalTypeVar(Shown):
    """The name of an algebraic data type (``List``)."""

    name: str
    kind: str = "adt"

    def __post_init__(self) -> None:
        check_identifier(self.name, "an ADT's name")
        if self.kind != "adt":
            raise SymshapeError(KIND_MISMATCH, f"a global type variable has kind adt, got {self.kind!r}")

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class ObjectType(Shown):
    """The top type (Relax ``Object``)."""

    def __str__(self) -> str:
        return "Object"


@dataclass(frozen=True)
class ShapeType(Shown):
    """A shape value of rank ``ndim`` (None: unknown rank)."""

    ndim: int | None = None

    def __post_init__(self) -> None:
        nd = self.ndim
        if nd is not None and (not isinstance(nd, int) or isinstance(nd, bool) or nd < 0):
            raise SymshapeError(INVALID_ARGUMENT, f"a shape's rank is an int >= 0 or None, got {nd!r}")

    def __str__(self) -> str:
        return f"Shape[{'?' if self.ndim is None else self.ndim}]"


def _shape_str(shape: Shape) -> str:
    if shape is None:
        return "?"
    if isinstance(shape, TypeVar):
        return shape.name
    if len(shape) == 1:
        return f"({shape[0]},)"
    return "(" + ", ".join(str(d) for d in shape) + ")"


def tensor_str(tt: TensorType) -> str:
    """The printed form of a tensor type: ``Tensor[(n, 3), float32]``, then ``= value`` and ``in
    range`` when known."""
    dt = "?" if tt.dtype is None else str(tt.dtype)
    out = f"Tensor[{_shape_str(tt.shape)}, {dt}]"
    if tt.value is not None:
        out += f" = {value_str(tt.value)}"
    if tt.range is not None:
        out += f" in {range_str(tt.range)}"
    return out


def tensor_settled(x: TensorType) -> bool:
    """Whether admitting tensor type ``x`` into a solver has nothing to do (see
    :func:`~symshape.solver.holes.admission_scan`): it has no value (a shape value is assumed to
    hold a ``?``) and each dimension of its shape is a constant or a positive multiple of a power
    of a symbol, an unknown or a numbered ``?`` without alternatives (nonnegative at a glance)."""
    if x.value is not None:
        return False
    if x._cshape:
        return True
    shape = x.shape
    if type(shape) is tuple:
        for d in shape:
            terms = d.terms
            if len(terms) != 1:
                if terms:
                    return False
                continue  # zero
            m, k = terms[0]
            if m:
                if len(m) != 1 or k <= 0:
                    return False
                a = m[0][0]
                ta = type(a)
                if ta is not Sym and ta is not DimVar and (type(a) is not AnyDim or a.id == 0 or a.alts):
                    return False
    return True


def map_tensor_dims(x: TensorType, f: Callable[[Dim], Dim]) -> TensorType:
    """``x`` with ``f`` applied to every dimension of its shape, value and range (``x`` itself when
    nothing changes)."""
    if isinstance(x.shape, tuple):
        new = tuple(f(d) for d in x.shape)
        v, r = x.value, x.range
        nv = v if v is None else map_value(v, f)
        nr = r if r is None else map_range(r, f)
        if nv is v and nr is r and all(a is b for a, b in zip(new, x.shape)):
            return x
        return TensorType(new, x.dtype, nv, nr)
    if x.range is not None:
        nr = map_range(x.range, f)
        return x if nr is x.range else TensorType(x.shape, x.dtype, x.value, nr)
    return x
