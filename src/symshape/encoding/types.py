"""The type language: frozen, hashable types with one printed form that :func:`parse_type` reads.

======================  =========================================================
form                    printed
======================  =========================================================
``TensorType``          ``Tensor[(n, 3), float32]``, ``Tensor[?, ?]``, ``Tensor[(), int32]``
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
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Union

from symshape.encoding.dims import Atom, Dim, DimLike, as_dim, check_nonnegative_constant, parse_dim
from symshape.errors import (
    BAD_ATTRIBUTE,
    BAD_DTYPE,
    INVALID_ARGUMENT,
    KIND_MISMATCH,
    PARSE_ERROR,
    SymshapeError,
)

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
    "TypeData",
    "Constructor",
    "ObjectType",
    "ShapeType",
    "Attrs",
    "DTYPES",
    "KINDS",
    "parse_type",
    "map_dims",
    "map_types",
    "iter_dims",
    "iter_holes",
    "subst_typevars",
    "type_kind",
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
        pairs = dict(items or {})
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
# the types


# notebook display: the type classes delegate to symshape.display (imported lazily)


def _repr_html(self: object) -> str:
    from symshape.display import type_html

    return type_html(self)


def _repr_pretty(self: object, p: object, cycle: bool) -> None:
    from symshape.display import pretty

    pretty(self, p, cycle)


@dataclass(frozen=True)
class TypeVar:
    """A type parameter of kind ``type``, ``shape``, ``dim`` or ``dtype`` (Relay's Type, Shape,
    ShapeVar, BaseType)."""

    name: str
    kind: str = "type"

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise SymshapeError(KIND_MISMATCH, f"unknown kind {self.kind!r}; kinds: {KINDS}")

    _repr_html_ = _repr_html
    _repr_pretty_ = _repr_pretty

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, eq=False, slots=True)
class IncompleteType:
    """A hole, printed ``?t<id>``; holes compare by identity."""

    kind: str = "type"
    id: int = field(default_factory=lambda: next(_hole_ids))

    _repr_html_ = _repr_html
    _repr_pretty_ = _repr_pretty

    def __str__(self) -> str:
        return f"?t{self.id}"


Shape = Union[tuple[Dim, ...], None, TypeVar]
DType = Union[str, None, TypeVar]


@dataclass(frozen=True)
class TensorType:
    """A tensor: ``shape`` is a tuple of dimensions, ``None`` (unknown rank) or a shape-kind
    :class:`TypeVar`; ``dtype`` is a dtype string, ``None`` (unknown) or a dtype-kind TypeVar."""

    shape: Shape
    dtype: DType = "float32"

    def __post_init__(self) -> None:
        sh = self.shape
        if type(sh) is tuple and all(type(d) is Dim for d in sh):
            for d in sh:
                t = d.terms
                if t and not t[0][0] and t[0][1] < 0:
                    check_nonnegative_constant(d)
        elif sh is not None and not isinstance(sh, TypeVar):
            if isinstance(sh, (str, bytes)) or not isinstance(sh, Iterable):
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
        if dt is not None and (dt.__class__ is not str or dt not in DTYPES):
            _check_dtype(dt)
            if isinstance(dt, TypeVar) and dt.kind != "dtype":
                raise SymshapeError(
                    KIND_MISMATCH, f"type variable {dt} of kind {dt.kind} used as a dtype"
                )

    def __hash__(self) -> int:
        # cached: tensor types key the solver's memo of eager results (see solver/eager.py)
        h: int | None = self.__dict__.get("_hash")
        if h is None:
            h = hash((self.shape, self.dtype))
            object.__setattr__(self, "_hash", h)
        return h

    def __getstate__(self) -> dict[str, object]:
        # the cached hash depends on the process's string hashing: never pickle it
        return {"shape": self.shape, "dtype": self.dtype}

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

    _repr_html_ = _repr_html
    _repr_pretty_ = _repr_pretty

    def __str__(self) -> str:
        return _type_str(self)


def Tensor(shape: Iterable[DimLike] | TypeVar | None, dtype: str | TypeVar | None = "float32") -> TensorType:
    """Build a :class:`TensorType`: ``Tensor((n, 3), "float32")``; ``Tensor(None, ...)`` for
    unknown rank; ``dtype=None`` for unknown dtype."""
    if shape is not None and not isinstance(shape, TypeVar):
        if isinstance(shape, (str, bytes)) or not isinstance(shape, Iterable):
            raise SymshapeError(INVALID_ARGUMENT, f"a shape is a tuple of dimensions, got {shape!r}")
        if type(shape) is not tuple:
            shape = tuple(shape)
    return TensorType(shape, dtype)  # type: ignore[arg-type]


@dataclass(frozen=True)
class TupleType:
    """A tuple of types."""

    fields: tuple[Type, ...]

    def __post_init__(self) -> None:
        fs = tuple(self.fields)
        for f in fs:
            _check_type(f)
        object.__setattr__(self, "fields", fs)

    def __len__(self) -> int:
        return len(self.fields)

    def __getitem__(self, i: int) -> Type:
        return self.fields[i]

    def subs(self, mapping: Mapping[Dim | Atom | str, DimLike]) -> Type:
        return map_dims(self, lambda d: d.subs(mapping))

    _repr_html_ = _repr_html
    _repr_pretty_ = _repr_pretty

    def __str__(self) -> str:
        return _type_str(self)


@dataclass(frozen=True)
class TypeRelation:
    """A relation constraint in a function type: ``broadcast(a, b, c)``."""

    name: str
    args: tuple[Type, ...]
    attrs: Attrs = field(default_factory=Attrs)

    def __post_init__(self) -> None:
        object.__setattr__(self, "args", tuple(self.args))
        if not isinstance(self.attrs, Attrs):
            object.__setattr__(self, "attrs", Attrs(self.attrs))

    def __str__(self) -> str:
        inner = ", ".join(_type_str(a) for a in self.args)
        if self.attrs:
            inner += f"; {self.attrs}"
        return f"{self.name}({inner})"


@dataclass(frozen=True)
class FuncType:
    """``fn<type_params>(params) -> ret where relations``; impure when ``pure`` is False."""

    params: tuple[Type, ...]
    ret: Type
    type_params: tuple[TypeVar, ...] = ()
    relations: tuple[TypeRelation, ...] = ()
    pure: bool = True

    def __post_init__(self) -> None:
        ps = tuple(self.params)
        for p in ps:
            _check_type(p)
        _check_type(self.ret)
        object.__setattr__(self, "params", ps)
        object.__setattr__(self, "type_params", tuple(self.type_params))
        object.__setattr__(self, "relations", tuple(self.relations))
        for tp in self.type_params:
            if not isinstance(tp, TypeVar):
                raise SymshapeError(INVALID_ARGUMENT, f"type parameter {tp!r} is not a TypeVar")

    def subs(self, mapping: Mapping[Dim | Atom | str, DimLike]) -> Type:
        return map_dims(self, lambda d: d.subs(mapping))

    _repr_html_ = _repr_html
    _repr_pretty_ = _repr_pretty

    def __str__(self) -> str:
        return _type_str(self)


@dataclass(frozen=True)
class GlobalTypeVar:
    """The name of an algebraic data type (``List``)."""

    name: str
    kind: str = "adt"

    _repr_html_ = _repr_html
    _repr_pretty_ = _repr_pretty

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class TypeCall:
    """An ADT applied to type arguments: ``List[Tensor[(2,), int32]]``."""

    func: GlobalTypeVar | TypeVar
    args: tuple[Type, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "args", tuple(self.args))
        for a in self.args:
            _check_type(a)

    _repr_html_ = _repr_html
    _repr_pretty_ = _repr_pretty

    def __str__(self) -> str:
        return _type_str(self)


@dataclass(frozen=True)
class ObjectType:
    """The top type (Relax ``Object``)."""

    _repr_html_ = _repr_html
    _repr_pretty_ = _repr_pretty

    def __str__(self) -> str:
        return "Object"


@dataclass(frozen=True)
class ShapeType:
    """A shape value of rank ``ndim`` (None: unknown rank)."""

    ndim: int | None = None

    _repr_html_ = _repr_html
    _repr_pretty_ = _repr_pretty

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


def _check_type(t: object) -> None:
    if not isinstance(t, _TYPE_CLASSES):
        raise SymshapeError(INVALID_ARGUMENT, f"expected a type, got {type(t).__name__} {t!r}")


@dataclass(frozen=True)
class Constructor:
    """An ADT constructor: ``Constructor("Cons", [a, TypeCall(L, [a])], L)``.

    Calling it (in a program) builds a value of ``TypeCall(belong_to, type_params)``.
    """

    name: str
    inputs: tuple[Type, ...]
    belong_to: GlobalTypeVar

    def __post_init__(self) -> None:
        object.__setattr__(self, "inputs", tuple(self.inputs))

    def __str__(self) -> str:
        return self.name

    def __call__(self, *args: object) -> object:
        from symshape.ir.expr import Call

        return Call(self, list(args))  # type: ignore[arg-type]


@dataclass(frozen=True)
class TypeData:
    """An ADT definition: header, type parameters and constructors."""

    header: GlobalTypeVar
    type_params: tuple[TypeVar, ...]
    constructors: tuple[Constructor, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "type_params", tuple(self.type_params))
        object.__setattr__(self, "constructors", tuple(self.constructors))

    def __str__(self) -> str:
        params = f"[{', '.join(map(str, self.type_params))}]" if self.type_params else ""
        cons = " | ".join(
            f"{c.name}({', '.join(_type_str(t) for t in c.inputs)})" for c in self.constructors
        )
        return f"type {self.header}{params} = {cons}"


# ----------------------------------------------------------------------------------------------
# traversals


def type_kind(t: Type) -> str:
    """The kind of a type: ``type`` for value types, the declared kind for variables and holes."""
    match t:
        case TypeVar(kind=k) | IncompleteType(kind=k):
            return k
        case GlobalTypeVar():
            return "adt"
        case _:
            return "type"


def map_types(t: Type, f: Callable[[Type], Type | None]) -> Type:
    """Rebuild ``t`` bottom-up... top-down: ``f`` may replace a node (return a type) or decline
    (return None), in which case the children are mapped."""
    r = f(t)
    if r is not None:
        return r
    match t:
        case TupleType(fields):
            new = tuple(map_types(x, f) for x in fields)
            return t if all(a is b for a, b in zip(new, fields)) else TupleType(new)
        case FuncType(params, ret, tps, rels, pure):
            nparams = tuple(map_types(x, f) for x in params)
            nret = map_types(ret, f)
            nrels = tuple(
                TypeRelation(r.name, tuple(map_types(a, f) for a in r.args), r.attrs) for r in rels
            )
            return FuncType(nparams, nret, tps, nrels, pure)
        case TypeCall(func, args):
            return TypeCall(func, tuple(map_types(x, f) for x in args))
        case _:
            return t


def map_dims(t: Type, f: Callable[[Dim], Dim]) -> Type:
    """Apply ``f`` to every dimension in ``t``."""

    def go(x: Type) -> Type | None:
        if isinstance(x, TensorType):
            if isinstance(x.shape, tuple):
                new = tuple(f(d) for d in x.shape)
                if all(a is b for a, b in zip(new, x.shape)):
                    return x
                return TensorType(new, x.dtype)
            return x
        return None

    return map_types(t, go)


def iter_types(t: Type) -> Iterator[Type]:
    """Every node of ``t``, pre-order."""
    yield t
    match t:
        case TupleType(fields):
            for x in fields:
                yield from iter_types(x)
        case FuncType(params, ret, _, rels, _):
            for x in params:
                yield from iter_types(x)
            yield from iter_types(ret)
            for r in rels:
                for a in r.args:
                    yield from iter_types(a)
        case TypeCall(_, args):
            for x in args:
                yield from iter_types(x)
        case _:
            pass


def iter_dims(t: Type) -> Iterator[Dim]:
    for x in iter_types(t):
        if isinstance(x, TensorType) and isinstance(x.shape, tuple):
            yield from x.shape


def iter_holes(t: Type) -> Iterator[IncompleteType]:
    for x in iter_types(t):
        if isinstance(x, IncompleteType):
            yield x


def subst_typevars(t: Type, mapping: Mapping[TypeVar, Type]) -> Type:
    """Replace type variables (of kind type) by types; shape- and dtype-kind variables inside
    tensors are replaced when the mapping holds a tensor (its shape or dtype is taken)."""
    if not mapping:
        return t

    def go(x: Type) -> Type | None:
        if isinstance(x, TypeVar):
            return mapping.get(x, x)
        if isinstance(x, TensorType):
            shape, dtype = x.shape, x.dtype
            if isinstance(shape, TypeVar) and shape in mapping:
                rep = mapping[shape]
                shape = rep.shape if isinstance(rep, TensorType) else shape
            if isinstance(dtype, TypeVar) and dtype in mapping:
                rep = mapping[dtype]
                dtype = rep.dtype if isinstance(rep, TensorType) else dtype
            if shape is x.shape and dtype is x.dtype:
                return x
            return TensorType(shape, dtype)
        if isinstance(x, FuncType) and x.type_params:
            inner = {k: v for k, v in mapping.items() if k not in x.type_params}
            return FuncType(
                tuple(subst_typevars(p, inner) for p in x.params),
                subst_typevars(x.ret, inner),
                x.type_params,
                tuple(
                    TypeRelation(r.name, tuple(subst_typevars(a, inner) for a in r.args), r.attrs)
                    for r in x.relations
                ),
                x.pure,
            )
        return None

    return map_types(t, go)


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


def _type_str(t: Type) -> str:
    match t:
        case TensorType(shape, dtype):
            dt = "?" if dtype is None else str(dtype)
            return f"Tensor[{_shape_str(shape)}, {dt}]"
        case TupleType(fields):
            if len(fields) == 1:
                return f"({_type_str(fields[0])},)"
            return "(" + ", ".join(_type_str(f) for f in fields) + ")"
        case FuncType(params, ret, tps, rels, pure):
            head = "fn" if pure else "fn[impure]"
            if tps:
                head += "<" + ", ".join(
                    tp.name if tp.kind == "type" else f"{tp.name}: {tp.kind}" for tp in tps
                ) + ">"
            r = _type_str(ret)
            if isinstance(ret, FuncType):
                r = f"({r})"
            s = f"{head}({', '.join(_type_str(p) for p in params)}) -> {r}"
            if rels:
                s += " where " + ", ".join(str(rel) for rel in rels)
            return s
        case TypeCall(func, args):
            return f"{func.name}[{', '.join(_type_str(a) for a in args)}]"
        case _:
            return str(t)


# ----------------------------------------------------------------------------------------------
# parsing

_IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_HOLE = re.compile(r"\?t(\d+)")


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
        return SymshapeError(PARSE_ERROR, f"cannot parse type {self.s!r} at {self.i}: {why}")

    def ws(self) -> None:
        while self.i < len(self.s) and self.s[self.i].isspace():
            self.i += 1

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
            if ch in "([" :
                depth += 1
            elif ch in ")]":
                if depth == 0:
                    break
                depth -= 1
            elif ch in stops and depth == 0:
                break
            self.i += 1
        return self.s[start : self.i].strip()

    def type(self) -> Type:
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
                items.append(self.type())
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
            return self.func()
        if name == "Object":
            return ObjectType()
        if name == "Shape":
            self.expect("[")
            if self.eat("?"):
                nd = None
            else:
                txt = self.balanced_until("]")
                if not txt.isdigit():
                    raise self.err("expected a rank")
                nd = int(txt)
            self.expect("]")
            return ShapeType(nd)
        if self.eat("["):
            args: list[Type] = []
            while not self.peek("]"):
                args.append(self.type())
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
                raise SymshapeError(BAD_DTYPE, f"unknown dtype {name!r} in {self.s!r}")
        self.expect("]")
        return TensorType(shape, dtype)

    def func(self) -> FuncType:
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
        self.scopes.append(scope)
        try:
            self.expect("(")
            params: list[Type] = []
            while not self.peek(")"):
                params.append(self.type())
                if not self.eat(","):
                    break
            self.expect(")")
            self.expect("->")
            ret = self.type()
            rels: list[TypeRelation] = []
            if self.peek_ident() == "where":
                self.ident()
                rels.append(self.relation())
                while True:
                    save = self.i
                    if not self.eat(","):
                        break
                    name = self.peek_ident()
                    j = self.i + len(name) if name else self.i
                    rest = self.s[j:].lstrip()
                    if name and name != "fn" and rest.startswith("("):
                        rels.append(self.relation())
                    else:
                        self.i = save
                        break
        finally:
            self.scopes.pop()
        return FuncType(tuple(params), ret, tuple(tps), tuple(rels), pure)

    def relation(self) -> TypeRelation:
        name = self.ident()
        if name is None:
            raise self.err("expected a relation name")
        self.expect("(")
        args: list[Type] = []
        attrs: dict[str, object] = {}
        while not self.peek(")") and not self.peek(";"):
            args.append(self.type())
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
                    attrs[key] = ast.literal_eval(txt)
                except (ValueError, SyntaxError):
                    try:
                        attrs[key] = parse_dim(txt, self.dim_env)
                    except SymshapeError:
                        raise self.err(f"bad attribute value {txt!r}") from None
                if not self.eat(","):
                    break
        self.expect(")")
        return TypeRelation(name, tuple(args), Attrs(attrs))


def parse_type(text: str, env: Mapping[str, object] | None = None) -> Type:
    """Read a type in the printed syntax; ``env`` maps names to dimensions and types.

    >>> from symshape.encoding.dims import dim
    >>> n = dim("n")
    >>> parse_type("Tensor[(n, 3), float32]", {"n": n}) == Tensor((n, 3), "float32")
    True
    """
    if not isinstance(text, str):
        raise SymshapeError(PARSE_ERROR, f"parse_type expects a string, got {type(text).__name__}")
    p = _Parser(text, env or {})
    t = p.type()
    p.ws()
    if p.i != len(p.s):
        raise p.err("trailing text")
    return t


def as_shape(shape: Sequence[DimLike]) -> tuple[Dim, ...]:
    return tuple(as_dim(d) for d in shape)
