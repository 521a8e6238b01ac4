"""The type language: frozen, hashable types with one printed form that :func:`parse_type` reads.

======================  =========================================================
form                    printed
======================  =========================================================
``TensorType``          ``Tensor[(n, 3), float32]``, ``Tensor[?, ?]``, ``Tensor[(), int32]``;
                        with a known value ``Tensor[(3,), int64] = (n, s, 64)``; with a range
                        of its entries ``Tensor[(b, t), int64] in [0, 50256]``
``TupleType``           ``(Tensor[...], Tensor[...])``, ``(Tensor[...],)``, ``()``
``FuncType``            ``fn<a, b>(a, b) -> c where broadcast(a, b, c)``; ``fn[impure](...)``
``TypeVar``             ``a`` (declared ``a: shape`` in a ``fn<...>`` header)
``IncompleteType``      ``?t3``
``GlobalTypeVar``       ``List``
``TypeCall``            ``List[Tensor[(2,), int32]]``
``ObjectType``          ``Object``
``ShapeType``           ``Shape[2]``, ``Shape[?]``
======================  =========================================================

Incomplete types (holes) compare by identity, as Relay's do; everything else is structural.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Union

from symshape.encoding.dim_parse import parse_dim
from symshape.encoding.dims import Atom, Dim, DimLike, as_dim, check_nonnegative_constant
from symshape.encoding.dtypes import dtype_name
from symshape.encoding.values import (
    Range,
    Value,
    map_range,
    map_value,
    normalize_range,
    normalize_value,
    range_dims,
    range_str,
    value_dims,
    value_str,
)
from symshape.errors import (
    BAD_ATTRIBUTE,
    BAD_DTYPE,
    INVALID_ARGUMENT,
    KIND_MISMATCH,
    PARSE_ERROR,
    SymshapeError,
)
from symshape.views import Shown

__all__ = [
    "Type",
    "TensorType",
    "Tensor",
    "TupleType",
    "FuncType",
    "TypeRelation",
    "TypeVar",
    "IncompleteType",
    "GlobalTypeVar",
    "TypeCall",
    "ObjectType",
    "ShapeType",
    "Attrs",
    "DTYPES",
    "KINDS",
    "parse_type",
    "map_dims",
    "map_types",
    "type_children",
    "type_rebuild",
    "iter_types",
    "iter_dims",
    "iter_value_dims",
    "iter_holes",
    "subst_typevars",
    "type_kind",
    "check_type",
    "check_identifier",
    "type_tuple",
    "type_str",
    "tuple_of_checked",
    "func_of_checked",
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


class Attrs(Mapping[str, object]):
    """An immutable, hashable attribute mapping (lists become tuples)."""

    __slots__ = ("_items", "_hash")

    def __init__(self, items: Mapping[str, object] | Iterable[tuple[str, object]] | None = None):
        if isinstance(items, Attrs):  # already frozen, sorted and hashed
            self._items: tuple[tuple[str, object], ...] = items._items
            self._hash: int = items._hash
            return
        try:
            pairs = dict(items or {})
        except (TypeError, ValueError):
            raise SymshapeError(
                BAD_ATTRIBUTE, f"attributes are a mapping or (name, value) pairs, got {items!r}"
            ) from None
        for k in pairs:
            if not isinstance(k, str):
                raise SymshapeError(BAD_ATTRIBUTE, f"attribute names must be strings, got {k!r}")
        frozen = tuple([(k, _freeze(pairs[k])) for k in sorted(pairs)])
        self._items = frozen
        try:
            self._hash = hash(frozen)
        except TypeError:
            raise SymshapeError(BAD_ATTRIBUTE, f"attribute values must be hashable: {pairs!r}") from None

    def __getitem__(self, key: str) -> object:
        for k, v in self._items:
            if k == key:
                return v
        raise KeyError(key)

    def get(self, key: str, default: object = None) -> object:
        for k, v in self._items:
            if k == key:
                return v
        return default

    def __iter__(self) -> Iterator[str]:
        return (k for k, _ in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Attrs):
            return self._items == other._items
        if isinstance(other, Mapping):
            return dict(self._items) == dict(other)
        return False

    def __repr__(self) -> str:
        return f"Attrs({dict(self._items)!r})"

    def __str__(self) -> str:
        return ", ".join(f"{k}={_attr_str(v)}" for k, v in self._items)


_ATOMIC = frozenset({int, float, str, bool, type(None)})


def _freeze(v: object) -> object:
    if type(v) in _ATOMIC:
        return v
    if isinstance(v, (list, tuple)):
        return tuple(_freeze(x) for x in v)
    if isinstance(v, dict):
        return Attrs(v)
    return v


def _attr_str(v: object) -> str:
    if isinstance(v, tuple):
        inner = ", ".join(_attr_str(x) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    if isinstance(v, Dim):
        return str(v)
    return repr(v)


# ----------------------------------------------------------------------------------------------
# ----------------------------------------------------------------------------------------------
# the types


_TV_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*('\d+)?")


def check_identifier(name: object, what: str) -> None:
    if not isinstance(name, str) or not _TV_NAME.fullmatch(name):
        raise SymshapeError(INVALID_ARGUMENT, f"{what} must be an identifier, got {name!r}")


def type_tuple(items: object, what: str) -> tuple[Type, ...]:
    """``items`` (a list or tuple of types) as a tuple; anything else is ``invalid-argument``."""
    if type(items) is tuple:
        seq: tuple[object, ...] = items
    elif type(items) is list:  # the common spelling: no abstract-base-class check needed
        seq = tuple(items)
    elif isinstance(items, (str, bytes)) or isinstance(items, _TYPE_CLASSES) or not isinstance(
        items, Iterable
    ):
        raise SymshapeError(
            INVALID_ARGUMENT, f"{what} must be a list of types, got {type(items).__name__} {items!r}"
        )
    else:
        seq = tuple(items)
    for x in seq:
        check_type(x)
    return seq  # type: ignore[return-value]


class _Structural(Shown):
    """Composite types: ``==`` and ``hash`` are structural and iterative (a type nested thousands
    deep compares, hashes and prints), the hash is computed once; ``repr`` is the dataclass form."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(other) is not type(self):
            return NotImplemented
        return _type_eq(self, other)  # type: ignore[arg-type]

    def __hash__(self) -> int:
        h: int | None = self.__dict__.get("_hash")
        return h if h is not None else _type_hash(self)  # type: ignore[arg-type]

    def __getstate__(self) -> dict[str, object]:
        # the cached hash depends on the process's string hashing: never pickle it
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}

    def __repr__(self) -> str:
        return _type_repr(self)


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
_next_hole_id = _hole_ids.__next__


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
            id = _next_hole_id()
        elif id.__class__ is not int:
            _bad_hole(kind, id)
        _set_field(self, "kind", kind)
        _set_field(self, "id", id)

    def __str__(self) -> str:
        return f"?t{self.id}"


Shape = Union[tuple[Dim, ...], None, TypeVar]
DType = Union[str, None, TypeVar]


@dataclass(frozen=True)
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

    def __post_init__(self) -> None:
        if self.value is not None or self.range is not None:
            self._check_value()
            return
        self._check_shape_dtype()

    def _check_shape_dtype(self) -> None:
        sh = self.shape
        if type(sh) is tuple and all(type(d) is Dim for d in sh):
            for d in sh:
                t = d.terms
                if t and not t[0][0] and t[0][1] < 0:
                    check_nonnegative_constant(d)
        elif sh is not None and not isinstance(sh, TypeVar):
            if type(sh) is not tuple and (isinstance(sh, (str, bytes)) or not isinstance(sh, Iterable)):
                raise SymshapeError(
                    INVALID_ARGUMENT, f"a shape is a tuple of dimensions, got {sh!r}"
                )
            dims = tuple(as_dim(d) for d in sh)
            for d in dims:
                check_nonnegative_constant(d)
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

    def _check_value(self) -> None:
        """Validate and normalize ``value`` (run after the shape and dtype are checked)."""
        self._check_shape_dtype()
        if self.value is not None:
            object.__setattr__(self, "value", normalize_value(self.value, self.shape, self.dtype))
        if self.range is not None:
            object.__setattr__(self, "range", normalize_range(self.range, self.dtype))

    def __hash__(self) -> int:
        # cached: tensor types key the solver's memo of eager results (see solver/eager.py)
        h: int | None = self.__dict__.get("_hash")
        if h is None:
            v, r = self.value, self.range
            if r is None:
                h = hash((self.shape, self.dtype)) if v is None else hash((self.shape, self.dtype, v))
            else:
                h = hash((self.shape, self.dtype, v, r))
            object.__setattr__(self, "_hash", h)
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
        return len(self.shape) if isinstance(self.shape, tuple) else None

    @property
    def dims(self) -> tuple[Dim, ...]:
        """The shape as a tuple; raises for unknown rank."""
        if not isinstance(self.shape, tuple):
            raise SymshapeError(INVALID_ARGUMENT, f"{self} has no known shape")
        return self.shape

    def subs(self, mapping: Mapping[Dim | Atom | str, DimLike]) -> TensorType:
        return map_dims(self, lambda d: d.subs(mapping))  # type: ignore[return-value]

    def __str__(self) -> str:
        return type_str(self)


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


@dataclass(frozen=True, eq=False, repr=False)
class TupleType(_Structural):
    """A tuple of types."""

    fields: tuple[Type, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", type_tuple(self.fields, "a tuple type's fields"))

    def __len__(self) -> int:
        return len(self.fields)

    def __getitem__(self, i: int) -> Type:
        return self.fields[i]

    def __iter__(self) -> Iterator[Type]:
        return iter(self.fields)

    def subs(self, mapping: Mapping[Dim | Atom | str, DimLike]) -> Type:
        return map_dims(self, lambda d: d.subs(mapping))

    def __str__(self) -> str:
        return type_str(self)


@dataclass(frozen=True, eq=False, repr=False)
class TypeRelation(_Structural):
    """A relation constraint in a function type: ``broadcast(a, b, c)``."""

    name: str
    args: tuple[Type, ...]
    attrs: Attrs = field(default_factory=Attrs)

    def __post_init__(self) -> None:
        check_identifier(self.name, "a relation's name")
        object.__setattr__(self, "args", type_tuple(self.args, f"the arguments of relation {self.name}"))
        if not isinstance(self.attrs, Attrs):
            if self.attrs is not None and not isinstance(self.attrs, Mapping):
                raise SymshapeError(BAD_ATTRIBUTE, f"attributes must be a mapping, got {self.attrs!r}")
            object.__setattr__(self, "attrs", Attrs(self.attrs))

    def __hash__(self) -> int:
        h: int | None = self.__dict__.get("_hash")
        if h is None:
            h = hash((self.name, tuple(hash(a) for a in self.args), self.attrs))
            object.__setattr__(self, "_hash", h)
        return h

    def __str__(self) -> str:
        inner = ", ".join(type_str(a) for a in self.args)
        if self.attrs:
            inner += f"; {self.attrs}"
        return f"{self.name}({inner})"


@dataclass(frozen=True, eq=False, repr=False)
class FuncType(_Structural):
    """``fn<type_params>(params) -> ret where relations``; impure when ``pure`` is False."""

    params: tuple[Type, ...]
    ret: Type
    type_params: tuple[TypeVar, ...] = ()
    relations: tuple[TypeRelation, ...] = ()
    pure: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", type_tuple(self.params, "a function type's parameters"))
        check_type(self.ret)
        tps = self.type_params
        if type(tps) is list:  # type: ignore[comparison-overlap]
            object.__setattr__(self, "type_params", tuple(tps))
        elif type(tps) is not tuple:
            if isinstance(tps, (str, bytes)) or not isinstance(tps, Iterable):
                raise SymshapeError(INVALID_ARGUMENT, f"type parameters must be a list, got {tps!r}")
            object.__setattr__(self, "type_params", tuple(tps))
        for tp in self.type_params:
            if not isinstance(tp, TypeVar):
                raise SymshapeError(INVALID_ARGUMENT, f"type parameter {tp!r} is not a TypeVar")
        rels = self.relations
        if type(rels) is not tuple:
            if isinstance(rels, (str, bytes)) or not isinstance(rels, Iterable):
                raise SymshapeError(INVALID_ARGUMENT, f"relations must be a list, got {rels!r}")
            object.__setattr__(self, "relations", tuple(rels))
        for r in self.relations:
            if not isinstance(r, TypeRelation):
                raise SymshapeError(INVALID_ARGUMENT, f"relation {r!r} is not a TypeRelation")
        if not isinstance(self.pure, bool):
            raise SymshapeError(INVALID_ARGUMENT, f"pure must be a bool, got {self.pure!r}")

    def subs(self, mapping: Mapping[Dim | Atom | str, DimLike]) -> Type:
        return map_dims(self, lambda d: d.subs(mapping))

    def __str__(self) -> str:
        return type_str(self)


def tuple_of_checked(fields: tuple[Type, ...]) -> TupleType:
    """``TupleType(fields)`` for a tuple of values already known to be types (the solver
    rebuilding a type from unified parts): the same object, without re-validating the fields."""
    t: TupleType = object.__new__(TupleType)
    _set_field(t, "fields", fields)
    return t


def func_of_checked(
    params: tuple[Type, ...],
    ret: Type,
    type_params: tuple[TypeVar, ...],
    relations: tuple[TypeRelation, ...],
    pure: bool,
) -> FuncType:
    """``FuncType(...)`` from parts already known to be valid (tuples of types, type variables and
    relations; a bool), without re-validating them (see :func:`tuple_of_checked`)."""
    t: FuncType = object.__new__(FuncType)
    _set_field(t, "params", params)
    _set_field(t, "ret", ret)
    _set_field(t, "type_params", type_params)
    _set_field(t, "relations", relations)
    _set_field(t, "pure", pure)
    return t


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


@dataclass(frozen=True, eq=False, repr=False)
class TypeCall(_Structural):
    """An ADT applied to type arguments: ``List[Tensor[(2,), int32]]``."""

    func: GlobalTypeVar | TypeVar
    args: tuple[Type, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.func, (GlobalTypeVar, TypeVar)):
            raise SymshapeError(
                INVALID_ARGUMENT, f"a type call applies a GlobalTypeVar or TypeVar, got {self.func!r}"
            )
        object.__setattr__(self, "args", type_tuple(self.args, "a type call's arguments"))

    def subs(self, mapping: Mapping[Dim | Atom | str, DimLike]) -> Type:
        return map_dims(self, lambda d: d.subs(mapping))

    def __str__(self) -> str:
        return type_str(self)


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


Type = Union[
    TensorType,
    TupleType,
    FuncType,
    TypeVar,
    IncompleteType,
    GlobalTypeVar,
    TypeCall,
    ObjectType,
    ShapeType,
]
_TYPE_CLASSES = (
    TensorType,
    TupleType,
    FuncType,
    TypeVar,
    IncompleteType,
    GlobalTypeVar,
    TypeCall,
    ObjectType,
    ShapeType,
)


def check_type(t: object) -> None:
    if not isinstance(t, _TYPE_CLASSES):
        raise SymshapeError(INVALID_ARGUMENT, f"expected a type, got {type(t).__name__} {t!r}")


# ----------------------------------------------------------------------------------------------
# traversals: one generic children/rebuild pair; every walk below is iterative


def type_kind(t: Type) -> str:
    """The kind of a type: ``type`` for value types, the declared kind for variables and holes."""
    match t:
        case TypeVar(kind=k) | IncompleteType(kind=k):
            return k
        case GlobalTypeVar():
            return "adt"
        case _:
            return "type"


def type_children(t: Type) -> tuple[Type, ...]:
    """The direct sub-types of ``t``: a tuple's fields; a function's parameters, return type and
    the arguments of its relations (in that order); a type call's arguments; else ``()``.

    >>> str(type_children(FuncType([TypeVar("a")], TypeVar("b")))[1])
    'b'
    """
    cls = t.__class__
    if cls is TupleType:
        return t.fields  # type: ignore[union-attr]
    if cls is FuncType:
        ft: FuncType = t  # type: ignore[assignment]
        if not ft.relations:
            return (*ft.params, ft.ret)
        return (*ft.params, ft.ret, *[a for r in ft.relations for a in r.args])
    if cls is TypeCall:
        return t.args  # type: ignore[union-attr]
    return ()


def type_rebuild(t: Type, kids: Sequence[Type]) -> Type:
    """``t`` with its children (as :func:`type_children` lists them) replaced by ``kids``."""
    cls = t.__class__
    if cls is TupleType:
        return TupleType(tuple(kids))
    if cls is FuncType:
        ft: FuncType = t  # type: ignore[assignment]
        np_ = len(ft.params)
        rels: list[TypeRelation] = []
        i = np_ + 1
        for r in ft.relations:
            k = len(r.args)
            rels.append(TypeRelation(r.name, tuple(kids[i : i + k]), r.attrs))
            i += k
        return FuncType(tuple(kids[:np_]), kids[np_], ft.type_params, tuple(rels), ft.pure)
    if cls is TypeCall:
        return TypeCall(t.func, tuple(kids))  # type: ignore[union-attr]
    return t


_COMPOSITE = (TupleType, FuncType, TypeCall)


def _child_hash(t: Type) -> int:
    if t.__class__ in _COMPOSITE:
        return t.__dict__["_hash"]  # type: ignore[no-any-return]
    return hash(t)


def _local_hash(t: Type, kids: tuple[int, ...]) -> int:
    cls = t.__class__
    if cls is TupleType:
        return hash((1, kids))
    if cls is FuncType:
        ft: FuncType = t  # type: ignore[assignment]
        rels = tuple((r.name, len(r.args), r.attrs) for r in ft.relations)
        return hash((2, len(ft.params), kids, ft.type_params, rels, ft.pure))
    return hash((3, t.func, kids))  # type: ignore[union-attr]


def _type_hash(root: Type) -> int:
    """The structural hash of a composite type, computed bottom-up without recursion and cached in
    every node."""
    stack: list[tuple[Type, bool]] = [(root, False)]
    while stack:
        x, post = stack.pop()
        if post:
            h = _local_hash(x, tuple(_child_hash(k) for k in type_children(x)))
            object.__setattr__(x, "_hash", h)
            continue
        if x.__class__ not in _COMPOSITE or "_hash" in x.__dict__:
            continue
        stack.append((x, True))
        stack.extend((k, False) for k in type_children(x))
    return root.__dict__["_hash"]  # type: ignore[no-any-return]


def _local_eq(x: Type, y: Type) -> bool:
    cls = x.__class__
    if cls is FuncType:
        fx: FuncType = x  # type: ignore[assignment]
        fy: FuncType = y  # type: ignore[assignment]
        if (
            len(fx.params) != len(fy.params)
            or fx.pure != fy.pure
            or fx.type_params != fy.type_params
            or len(fx.relations) != len(fy.relations)
        ):
            return False
        for r, s in zip(fx.relations, fy.relations):
            if r.name != s.name or len(r.args) != len(s.args) or r.attrs != s.attrs:
                return False
        return True
    if cls is TypeCall:
        return x.func == y.func  # type: ignore[union-attr]
    return True


def _type_eq(a: Type | TypeRelation, b: Type | TypeRelation) -> bool:
    """Structural equality, iterative; each pair of shared sub-types is compared once."""
    if a.__class__ is TypeRelation:
        ra: TypeRelation = a
        rb: TypeRelation = b  # type: ignore[assignment]
        if ra.name != rb.name or ra.attrs != rb.attrs or len(ra.args) != len(rb.args):
            return False
        return all(_type_eq(x, y) for x, y in zip(ra.args, rb.args))
    stack: list[tuple[Type, Type]] = [(a, b)]  # type: ignore[list-item]
    seen: set[tuple[int, int]] = set()
    while stack:
        x, y = stack.pop()
        if x is y:
            continue
        cls = x.__class__
        if cls is not y.__class__:
            return False
        if cls not in _COMPOSITE:
            if x != y:
                return False
            continue
        hx, hy = x.__dict__.get("_hash"), y.__dict__.get("_hash")
        if hx is not None and hy is not None and hx != hy:
            return False
        key = (id(x), id(y))
        if key in seen:
            continue
        seen.add(key)
        if not _local_eq(x, y):
            return False
        kx, ky = type_children(x), type_children(y)
        if len(kx) != len(ky):
            return False
        stack.extend(zip(kx, ky))
    return True


_REPR_CLASSES = (TupleType, FuncType, TypeCall, TypeRelation)


def _type_repr(root: object) -> str:
    """The dataclass ``repr`` of a type, produced without recursion."""
    out: list[str] = []
    stack: list[tuple[bool, object]] = [(False, root)]
    while stack:
        lit, x = stack.pop()
        if lit:
            out.append(x)  # type: ignore[arg-type]
            continue
        items: list[tuple[bool, object]]
        if isinstance(x, _REPR_CLASSES):
            items = [(True, f"{type(x).__name__}(")]
            for i, f in enumerate(fields(x)):
                if i:
                    items.append((True, ", "))
                items.append((True, f"{f.name}="))
                items.append((False, getattr(x, f.name)))
            items.append((True, ")"))
            stack.extend(reversed(items))
        elif type(x) is tuple and x:
            items = [(True, "(")]
            for i, v in enumerate(x):
                if i:
                    items.append((True, ", "))
                items.append((False, v))
            items.append((True, ",)" if len(x) == 1 else ")"))
            stack.extend(reversed(items))
        else:
            out.append(repr(x))
    return "".join(out)


def map_types(t: Type, f: Callable[[Type], Type | None]) -> Type:
    """Rebuild ``t`` top-down: ``f`` may replace a node (return a type) or decline (return None),
    in which case the node's children are mapped and the node rebuilt when one of them changed.
    Iterative; a sub-type shared by several parents is mapped once."""
    r = f(t)
    if r is not None:
        return r
    if t.__class__ not in _COMPOSITE:
        return t
    done: dict[int, Type] = {}
    stack: list[tuple[Type, bool]] = [(t, True)]
    stack.extend((k, False) for k in type_children(t))
    while stack:
        x, post = stack.pop()
        if post:
            kids = type_children(x)
            new = [done[id(k)] for k in kids]
            if any(a is not b for a, b in zip(new, kids)):
                done[id(x)] = type_rebuild(x, new)
            else:
                done[id(x)] = x
            continue
        if id(x) in done:
            continue
        r = f(x)
        if r is not None:
            done[id(x)] = r
            continue
        if x.__class__ not in _COMPOSITE:
            done[id(x)] = x
            continue
        stack.append((x, True))
        stack.extend((k, False) for k in type_children(x))
    return done[id(t)]


def map_dims(t: Type, f: Callable[[Dim], Dim]) -> Type:
    """Apply ``f`` to every dimension in ``t``."""

    def go(x: Type) -> Type | None:
        if isinstance(x, TensorType):
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
        return None

    return map_types(t, go)


def iter_types(t: Type) -> Iterator[Type]:
    """Every node of ``t``, pre-order (iterative)."""
    stack: list[Type] = [t]
    while stack:
        x = stack.pop()
        yield x
        if x.__class__ in _COMPOSITE:
            stack.extend(reversed(type_children(x)))


def iter_dims(t: Type) -> Iterator[Dim]:
    for x in iter_types(t):
        if isinstance(x, TensorType) and isinstance(x.shape, tuple):
            yield from x.shape


def iter_value_dims(t: Type) -> Iterator[Dim]:
    """The known entries of the values, and the known bounds of the ranges, of the tensors in
    ``t`` (:func:`iter_dims` gives the dimensions of their shapes)."""
    for x in iter_types(t):
        if isinstance(x, TensorType):
            if x.value is not None:
                yield from value_dims(x.value)
            if x.range is not None:
                yield from range_dims(x.range)


def iter_holes(t: Type) -> Iterator[IncompleteType]:
    for x in iter_types(t):
        if isinstance(x, IncompleteType):
            yield x


def subst_typevars(t: Type, mapping: Mapping[TypeVar, Type]) -> Type:
    """Replace type variables (of kind type) by types; shape- and dtype-kind variables inside
    tensors are replaced when the mapping holds a tensor (its shape or dtype is taken). A function
    type's own type parameters shadow the mapping inside it. Iterative."""
    if not mapping:
        return t

    def leaf(x: Type, env: Mapping[TypeVar, Type]) -> Type:
        if isinstance(x, TypeVar):
            return env.get(x, x)
        if isinstance(x, TensorType):
            shape, dtype = x.shape, x.dtype
            if isinstance(shape, TypeVar) and shape in env:
                rep = env[shape]
                shape = rep.shape if isinstance(rep, TensorType) else shape
            if isinstance(dtype, TypeVar) and dtype in env:
                rep = env[dtype]
                dtype = rep.dtype if isinstance(rep, TensorType) else dtype
            if shape is x.shape and dtype is x.dtype:
                return x
            return TensorType(shape, dtype)
        return x

    if t.__class__ not in _COMPOSITE:
        return leaf(t, mapping)
    # environments by id: a function type's own type parameters shadow the mapping inside it
    envs: dict[int, Mapping[TypeVar, Type]] = {id(mapping): mapping}
    inner_of: dict[tuple[int, int], Mapping[TypeVar, Type]] = {}

    def inner_env(x: Type, env: Mapping[TypeVar, Type]) -> Mapping[TypeVar, Type]:
        if not (isinstance(x, FuncType) and x.type_params):
            return env
        hit = inner_of.get((id(x), id(env)))
        if hit is None:
            hit = {k: v for k, v in env.items() if k not in x.type_params}
            if len(hit) == len(env):
                hit = env
            envs[id(hit)] = hit
            inner_of[(id(x), id(env))] = hit
        return hit

    done: dict[tuple[int, int], Type] = {}
    stack: list[tuple[Type, Mapping[TypeVar, Type], bool]] = [(t, mapping, False)]
    while stack:
        x, env, post = stack.pop()
        key = (id(x), id(env))
        if post:
            kids = type_children(x)
            ienv = id(inner_env(x, env))
            new = [done[(id(k), ienv)] for k in kids]
            done[key] = x if all(a is b for a, b in zip(new, kids)) else type_rebuild(x, new)
            continue
        if key in done:
            continue
        if x.__class__ not in _COMPOSITE:
            done[key] = leaf(x, env)
            continue
        inner = inner_env(x, env)
        if not inner:
            done[key] = x
            continue
        stack.append((x, env, True))
        stack.extend((k, inner, False) for k in type_children(x))
    return done[(id(t), id(mapping))]


# ----------------------------------------------------------------------------------------------
# printing


def _shape_str(shape: Shape) -> str:
    if shape is None:
        return "?"
    if isinstance(shape, TypeVar):
        return shape.name
    if len(shape) == 1:
        return f"({shape[0]},)"
    return "(" + ", ".join(str(d) for d in shape) + ")"


def _leaf_str(t: Type) -> str:
    if t.__class__ is TensorType:
        tt: TensorType = t
        dt = "?" if tt.dtype is None else str(tt.dtype)
        out = f"Tensor[{_shape_str(tt.shape)}, {dt}]"
        if tt.value is not None:
            out += f" = {value_str(tt.value)}"
        if tt.range is not None:
            out += f" in {range_str(tt.range)}"
        return out
    return str(t)


_Piece = Union[str, "Type"]


def _pieces(t: Type) -> list[_Piece]:
    """The printed form of a composite type as text pieces and sub-types, left to right."""
    out: list[_Piece] = []

    def joined(items: Sequence[Type]) -> None:
        for i, x in enumerate(items):
            if i:
                out.append(", ")
            out.append(x)

    cls = t.__class__
    if cls is TupleType:
        fs = t.fields  # type: ignore[union-attr]
        out.append("(")
        joined(fs)
        out.append(",)" if len(fs) == 1 else ")")
        return out
    if cls is FuncType:
        ft: FuncType = t  # type: ignore[assignment]
        head = "fn" if ft.pure else "fn[impure]"
        if ft.type_params:
            head += "<" + ", ".join(
                tp.name if tp.kind == "type" else f"{tp.name}: {tp.kind}" for tp in ft.type_params
            ) + ">"
        out.append(head + "(")
        joined(ft.params)
        out.append(") -> ")
        if isinstance(ft.ret, FuncType):
            out.extend(("(", ft.ret, ")"))
        else:
            out.append(ft.ret)
        for i, rel in enumerate(ft.relations):
            out.append((" where " if i == 0 else ", ") + rel.name + "(")
            joined(rel.args)
            out.append(f"; {rel.attrs})" if rel.attrs else ")")
        return out
    tc: TypeCall = t  # type: ignore[assignment]
    out.append(f"{tc.func.name}[")
    joined(tc.args)
    out.append("]")
    return out


def type_str(t: Type) -> str:
    """The printed form: pieces emitted left to right from a stack (iterative, linear in the
    length of the text)."""
    if t.__class__ not in _COMPOSITE:
        return _leaf_str(t)
    out: list[str] = []
    stack: list[_Piece] = [t]
    while stack:
        x = stack.pop()
        if isinstance(x, str):
            out.append(x)
        elif x.__class__ in _COMPOSITE:
            stack.extend(reversed(_pieces(x)))
        else:
            out.append(_leaf_str(x))
    return "".join(out)


# ----------------------------------------------------------------------------------------------
# parsing: a recursive-descent parser whose recursion is a stack of generators (a nested type
# asks for its parts by yielding), so any depth parses without Python recursion

_IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_HOLE = re.compile(r"\?t(\d+)")
_WS = re.compile(r"\s+")

MAX_TYPE_TEXT = 10_000_000
"""The longest text :func:`parse_type` reads."""

_Sub = Generator[None, Type, Type]


class _Parser:
    def __init__(self, text: str, env: Mapping[str, object]) -> None:
        self.s = text
        self.i = 0
        self.dim_env: dict[str, Dim] = {k: v for k, v in env.items() if isinstance(v, Dim)}
        self.type_env: dict[str, object] = {
            k: v for k, v in env.items() if not isinstance(v, Dim)
        }
        self.holes: dict[int, IncompleteType] = {}
        self.scopes: list[dict[str, TypeVar]] = []

    def err(self, why: str) -> SymshapeError:
        shown = self.s if len(self.s) <= 120 else self.s[:117] + "..."
        return SymshapeError(PARSE_ERROR, f"cannot parse type {shown!r} at {self.i}: {why}")

    def ws(self) -> None:
        m = _WS.match(self.s, self.i)
        if m is not None:
            self.i = m.end()

    def peek(self, tok: str) -> bool:
        self.ws()
        return self.s.startswith(tok, self.i)

    def eat(self, tok: str) -> bool:
        if self.peek(tok):
            self.i += len(tok)
            return True
        return False

    def expect(self, tok: str) -> None:
        if not self.eat(tok):
            raise self.err(f"expected {tok!r}")

    def ident(self) -> str | None:
        self.ws()
        m = _IDENT.match(self.s, self.i)
        if not m:
            return None
        self.i = m.end()
        return m.group(0)

    def peek_ident(self) -> str | None:
        self.ws()
        m = _IDENT.match(self.s, self.i)
        return m.group(0) if m else None

    def lookup_var(self, name: str) -> TypeVar | None:
        for sc in reversed(self.scopes):
            if name in sc:
                return sc[name]
        v = self.type_env.get(name)
        return v if isinstance(v, TypeVar) else None

    def balanced_until(self, stops: str) -> str:
        """Raw text up to the next top-level character in ``stops``."""
        self.ws()
        depth = 0
        start = self.i
        while self.i < len(self.s):
            ch = self.s[self.i]
            if ch in "([":
                depth += 1
            elif ch in ")]":
                if depth == 0:
                    break
                depth -= 1
            elif ch in stops and depth == 0:
                break
            self.i += 1
        return self.s[start : self.i].strip()

    def parse(self) -> Type:
        """Drive the generators: each ``yield`` asks for one nested type."""
        stack: list[_Sub] = [self.type()]
        sent: Type | None = None
        while True:
            top = stack[-1]
            try:
                if sent is None:
                    next(top)
                else:
                    top.send(sent)
            except StopIteration as stop:
                stack.pop()
                if not stack:
                    return stop.value  # type: ignore[no-any-return]
                sent = stop.value
                continue
            sent = None
            stack.append(self.type())

    def type(self) -> _Sub:
        self.ws()
        m = _HOLE.match(self.s, self.i)
        if m:
            self.i = m.end()
            hid = int(m.group(1))
            return self.holes.setdefault(hid, IncompleteType("type", hid))
        if self.eat("("):
            items: list[Type] = []
            trailing = False
            while not self.peek(")"):
                items.append((yield))
                trailing = self.eat(",")
                if not trailing:
                    break
            self.expect(")")
            if len(items) == 1 and not trailing:
                return items[0]
            return TupleType(tuple(items))
        name = self.ident()
        if name is None:
            raise self.err("expected a type")
        if name == "Tensor":
            return self.tensor()
        if name == "fn":
            return (yield from self.func())
        if name == "Object":
            return ObjectType()
        if name == "Shape":
            self.expect("[")
            if self.eat("?"):
                nd = None
            else:
                txt = self.balanced_until("]")
                if not txt.isdigit() or len(txt) > 18:
                    raise self.err("expected a rank")
                nd = int(txt)
            self.expect("]")
            return ShapeType(nd)
        if self.eat("["):
            args: list[Type] = []
            while not self.peek("]"):
                args.append((yield))
                if not self.eat(","):
                    break
            self.expect("]")
            tv = self.lookup_var(name)
            g = self.type_env.get(name)
            func: GlobalTypeVar | TypeVar = tv if tv is not None else (
                g if isinstance(g, GlobalTypeVar) else GlobalTypeVar(name)
            )
            return TypeCall(func, tuple(args))
        tv = self.lookup_var(name)
        if tv is not None:
            return tv
        g = self.type_env.get(name)
        if isinstance(g, _TYPE_CLASSES):
            return g
        return TypeVar(name)

    def tensor(self) -> TensorType:
        self.expect("[")
        shape: Shape
        if self.eat("?"):
            shape = None
        elif self.eat("("):
            dims: list[Dim] = []
            while not self.peek(")"):
                txt = self.balanced_until(",")
                if not txt:
                    raise self.err("empty dimension")
                dims.append(parse_dim(txt, self.dim_env))
                if not self.eat(","):
                    break
            self.expect(")")
            shape = tuple(dims)
        else:
            name = self.ident()
            if name is None:
                raise self.err("expected a shape")
            tv = self.lookup_var(name)
            shape = tv if tv is not None else TypeVar(name, "shape")
        self.expect(",")
        dtype: DType
        if self.eat("?"):
            dtype = None
        else:
            name = self.ident()
            if name is None:
                raise self.err("expected a dtype")
            tv = self.lookup_var(name)
            if tv is not None:
                dtype = tv
            elif name in DTYPES:
                dtype = name
            else:
                raise SymshapeError(BAD_DTYPE, f"unknown dtype {name!r} in {self.s[:120]!r}")
        self.expect("]")
        value: Value | None = None
        rng: Range | None = None
        if self.eat("="):
            value = self.value()
        if self.eat_word("in"):
            rng = self.range()
        if value is None and rng is None:
            return TensorType(shape, dtype)
        try:
            return TensorType(shape, dtype, value, rng)
        except SymshapeError as e:
            raise self.err(e.message) from None

    def eat_word(self, word: str) -> bool:
        """Consume ``word`` when it comes next as a whole word."""
        self.ws()
        m = re.compile(rf"{word}\b").match(self.s, self.i)
        if m is None:
            return False
        self.i = m.end()
        return True

    def range(self) -> Range:
        """A range after ``in``: ``[lo, hi]``, ``?`` for an unknown side."""
        self.expect("[")
        bounds: list[Dim | None] = []
        for stop in (",", "]"):
            txt = self.balanced_until(stop)
            if not txt:
                raise self.err("empty range bound")
            bounds.append(None if txt == "?" else parse_dim(txt, self.dim_env))
            self.expect(stop)
        return (bounds[0], bounds[1])

    def value(self) -> Value:
        """A value after ``=``: ``(d, ?, ...)`` or one dimension (up to the next top-level ``,``,
        ``)``, ``]``, ``;`` or ``where``)."""
        if self.eat("("):
            entries: list[Dim | None] = []
            while not self.peek(")"):
                txt = self.balanced_until(",")
                if not txt:
                    raise self.err("empty value entry")
                entries.append(None if txt == "?" else parse_dim(txt, self.dim_env))
                if not self.eat(","):
                    break
            self.expect(")")
            return tuple(entries)
        self.ws()
        start = self.i
        txt = self.balanced_until(",;")
        cut = re.search(r"\s(where|in)\b", txt)
        if cut is not None:
            txt = txt[: cut.start()].rstrip()
            self.i = start + cut.start()
        if not txt:
            raise self.err("expected a value")
        return parse_dim(txt, self.dim_env)

    def func(self) -> _Sub:
        pure = True
        if self.eat("[impure]"):
            pure = False
        tps: list[TypeVar] = []
        scope: dict[str, TypeVar] = {}
        if self.eat("<"):
            while not self.peek(">"):
                name = self.ident()
                if name is None:
                    raise self.err("expected a type parameter")
                kind = "type"
                if self.eat(":"):
                    k = self.ident()
                    if k is None:
                        raise self.err("expected a kind")
                    kind = k
                tv = TypeVar(name, kind)
                tps.append(tv)
                scope[name] = tv
                if not self.eat(","):
                    break
            self.expect(">")
        if scope:  # only non-empty scopes: a lookup walks them
            self.scopes.append(scope)
        try:
            self.expect("(")
            params: list[Type] = []
            while not self.peek(")"):
                params.append((yield))
                if not self.eat(","):
                    break
            self.expect(")")
            self.expect("->")
            ret = yield
            rels: list[TypeRelation] = []
            if self.peek_ident() == "where":
                self.ident()
                rels.append((yield from self.relation()))
                while True:
                    save = self.i
                    if not self.eat(","):
                        break
                    name = self.peek_ident()
                    j = self.i + len(name) if name else self.i
                    rest = self.s[j:j + 64].lstrip()
                    if name and name != "fn" and rest.startswith("("):
                        rels.append((yield from self.relation()))
                    else:
                        self.i = save
                        break
        finally:
            if scope:
                self.scopes.pop()
        return FuncType(tuple(params), ret, tuple(tps), tuple(rels), pure)

    def relation(self) -> Generator[None, Type, TypeRelation]:
        name = self.ident()
        if name is None:
            raise self.err("expected a relation name")
        self.expect("(")
        args: list[Type] = []
        attrs: dict[str, object] = {}
        while not self.peek(")") and not self.peek(";"):
            args.append((yield))
            if not self.eat(","):
                break
        if self.eat(";"):
            while not self.peek(")"):
                key = self.ident()
                if key is None:
                    raise self.err("expected an attribute name")
                self.expect("=")
                txt = self.balanced_until(",")
                try:
                    attrs[key] = _literal(txt)
                except (ValueError, SyntaxError, MemoryError, RecursionError):
                    try:
                        attrs[key] = parse_dim(txt, self.dim_env)
                    except SymshapeError:
                        raise self.err(f"bad attribute value {txt!r}") from None
                if not self.eat(","):
                    break
        self.expect(")")
        return TypeRelation(name, tuple(args), Attrs(attrs))


def _literal(txt: str) -> object:
    if len(txt) > 10_000:
        raise ValueError("attribute too long")
    return ast.literal_eval(txt)


def parse_type(text: str, env: Mapping[str, object] | None = None) -> Type:
    """Read a type in the printed syntax; ``env`` maps names to dimensions and types.

    Iterative: a type nested any number of levels deep reads back.

    >>> from symshape.encoding.dims import dim
    >>> n = dim("n")
    >>> parse_type("Tensor[(n, 3), float32]", {"n": n}) == Tensor((n, 3), "float32")
    True
    """
    if not isinstance(text, str):
        raise SymshapeError(PARSE_ERROR, f"parse_type expects a string, got {type(text).__name__}")
    if env is not None and not isinstance(env, Mapping):
        raise SymshapeError(
            INVALID_ARGUMENT, f"parse_type's env must be a mapping of names, got {env!r}"
        )
    if len(text) > MAX_TYPE_TEXT:
        raise SymshapeError(PARSE_ERROR, f"cannot parse type: the text has {len(text)} characters")
    p = _Parser(text, env or {})
    t = p.parse()
    p.ws()
    if p.i != len(p.s):
        raise p.err("trailing text")
    return t


def as_shape(shape: Sequence[DimLike]) -> tuple[Dim, ...]:
    return tuple(as_dim(d) for d in shape)
