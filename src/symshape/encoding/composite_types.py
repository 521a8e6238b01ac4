"""The composite types (tuples, function types with their relations, ADT applications), the
:data:`Type` union, and the one traversal every walker over types uses: :func:`type_children` and
:func:`type_rebuild`, with the structural hash, equality, ``repr``, :func:`map_types` and the
printed form built on them, all iterative."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TypeVar as TypeVar_
from typing import Union, get_args

from symshape.encoding.attrs import Attrs
from symshape.encoding.dims import Atom, Dim, DimLike
from symshape.encoding.leaf_types import (
    GlobalTypeVar,
    IncompleteType,
    ObjectType,
    ShapeType,
    TensorType,
    TypeVar,
    _set_field,
    check_identifier,
    map_tensor_dims,
    tensor_settled,
    tensor_str,
)
from symshape.errors import (
    BAD_ATTRIBUTE,
    INVALID_ARGUMENT,
    SymshapeError,
)
from symshape.views import Shown

__all__ = [
    "FuncType",
    "TupleType",
    "Type",
    "TypeCall",
    "TypeRelation",
    "check_type",
    "map_dims",
    "map_types",
    "type_children",
    "type_rebuild",
    "type_settled",
    "type_str",
    "type_tuple",
]


def type_tuple(items: object, what: str) -> tuple[Type, ...]:
    """``items`` (a list or tuple of types) as a tuple; anything else is ``invalid-argument``."""
    seq = _as_tuple(items, what)
    for x in seq:
        check_type(x)
    return seq


def _as_tuple(items: object, what: str) -> tuple[Type, ...]:
    """``items`` (a list or tuple) as a tuple, its items not checked yet (see :func:`type_tuple`)."""
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
        # the cached hash depends on the process's string hashing: never pickle it (nor the cached
        # flag of :func:`type_settled`: a copy computes it again)
        return {k: v for k, v in self.__dict__.items() if k != "_hash" and k != "_settled"}

    def __repr__(self) -> str:
        return _type_repr(self)


class _Composite(_Structural):
    """A type with sub-types (tuple, function type, type call): substitution and the printed form."""

    __slots__ = ()
    #: :func:`type_settled`, kept when built (None: not yet). Read as an attribute: reading
    #: ``__dict__`` turns the inline attribute values into a dictionary (slower reads after)
    _settled: bool | None = None

    def subs(self, mapping: Mapping[Dim | Atom | str, DimLike]) -> Type:
        return map_dims(self, lambda d: d.subs(mapping))  # type: ignore[arg-type]

    def __str__(self) -> str:
        return type_str(self)  # type: ignore[arg-type]


@dataclass(frozen=True, eq=False, repr=False)
class TupleType(_Composite):
    """A tuple of types."""

    fields: tuple[Type, ...]

    def __post_init__(self) -> None:
        fs = _as_tuple(self.fields, "a tuple type's fields")
        _set_field(self, "fields", fs)
        _set_field(self, "_settled", _checked_settled(fs))

    def __len__(self) -> int:
        return len(self.fields)

    def __getitem__(self, i: int) -> Type:
        return self.fields[i]

    def __iter__(self) -> Iterator[Type]:
        return iter(self.fields)


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


_T = TypeVar_("_T")


def _tuple_of(items: object, cls: type[_T], what: str) -> tuple[_T, ...]:
    """``items`` (a list or tuple) as a tuple of ``cls`` instances; else ``invalid-argument``
    (``what`` names one item: ``type parameter`` says ``type parameters must be a list``)."""
    if type(items) is not tuple:
        if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
            raise SymshapeError(INVALID_ARGUMENT, f"{what}s must be a list, got {items!r}")
        items = tuple(items)
    for x in items:
        if not isinstance(x, cls):
            raise SymshapeError(INVALID_ARGUMENT, f"{what} {x!r} is not a {cls.__name__}")
    return items


@dataclass(frozen=True, eq=False, repr=False)
class FuncType(_Composite):
    """``fn<type_params>(params) -> ret where relations``; impure when ``pure`` is False."""

    params: tuple[Type, ...]
    ret: Type
    type_params: tuple[TypeVar, ...] = ()
    relations: tuple[TypeRelation, ...] = ()
    pure: bool = True

    def __post_init__(self) -> None:
        ps = _as_tuple(self.params, "a function type's parameters")
        _set_field(self, "params", ps)
        settled = _checked_settled(ps)
        settled = _checked_settled((self.ret,)) and settled
        tps, rels = self.type_params, self.relations
        if type(tps) is not tuple or tps:  # (``()``, the default, needs no check)
            _set_field(self, "type_params", _tuple_of(tps, TypeVar, "type parameter"))
        if type(rels) is not tuple or rels:
            _set_field(self, "relations", _tuple_of(rels, TypeRelation, "relation"))
        if not isinstance(self.pure, bool):
            raise SymshapeError(INVALID_ARGUMENT, f"pure must be a bool, got {self.pure!r}")
        for r in self.relations:
            settled = settled and _checked_settled(r.args)
        _set_field(self, "_settled", settled)


@dataclass(frozen=True, eq=False, repr=False)
class TypeCall(_Composite):
    """An ADT applied to type arguments: ``List[Tensor[(2,), int32]]``."""

    func: GlobalTypeVar | TypeVar
    args: tuple[Type, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.func, (GlobalTypeVar, TypeVar)):
            raise SymshapeError(
                INVALID_ARGUMENT, f"a type call applies a GlobalTypeVar or TypeVar, got {self.func!r}"
            )
        args = _as_tuple(self.args, "a type call's arguments")
        _set_field(self, "args", args)
        _set_field(self, "_settled", _checked_settled(args))


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
_TYPE_CLASSES = get_args(Type)


def check_type(t: object) -> None:
    if not isinstance(t, _TYPE_CLASSES):
        raise SymshapeError(INVALID_ARGUMENT, f"expected a type, got {type(t).__name__} {t!r}")


# ----------------------------------------------------------------------------------------------
# traversals: one generic children/rebuild pair; every walk below is iterative


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


def type_settled(t: Type) -> bool:
    """Whether admitting ``t`` into a solver has nothing to do: no ``?`` dimension may occur in it
    and every dimension of its shapes is nonnegative at a glance (:func:`tensor_settled` for each
    tensor type in it; see :func:`~symshape.solver.holes.admission_scan`, which skips such parts).

    Composite types compute the flag from their children's when they are built (kept in the node;
    the solver's unchecked constructors leave it to be computed here, iteratively, on demand).
    """
    cls = t.__class__
    if cls is TensorType:
        return tensor_settled(t)  # type: ignore[arg-type]
    if cls not in _COMPOSITE:
        return True
    hit = t._settled  # type: ignore[union-attr]
    if hit is not None:
        return hit
    stack: list[tuple[Type, bool]] = [(t, False)]
    while stack:
        x, post = stack.pop()
        if post:
            _set_field(x, "_settled", _checked_settled(type_children(x)))  # (each kid's flag is set)
        elif x._settled is None:  # type: ignore[union-attr]
            stack.append((x, True))
            stack.extend((k, False) for k in type_children(x) if k.__class__ in _COMPOSITE)
    return t._settled is True  # type: ignore[union-attr]


def _checked_settled(kids: tuple[Type, ...]) -> bool:
    """Check that each of ``kids`` is a type (as :func:`check_type`), and return whether every one
    is settled (see :func:`type_settled`): one pass, as a composite type is built."""
    settled = True
    for x in kids:
        form = _FORM.get(x.__class__)
        if form is _TENSOR:
            if settled and not tensor_settled(x):  # type: ignore[arg-type]
                settled = False
        elif form is _NODE:
            if settled:
                s = x._settled  # type: ignore[union-attr]
                settled = type_settled(x) if s is None else s
        elif form is None:
            check_type(x)  # raises, unless a subclass of a type's class (then a leaf, as for the walks)
    return settled


_TENSOR, _NODE, _LEAF = "tensor", "node", "leaf"
_FORM: dict[type, str] = {TensorType: _TENSOR, TupleType: _NODE, FuncType: _NODE, TypeCall: _NODE}
_FORM.update(dict.fromkeys((TypeVar, IncompleteType, GlobalTypeVar, ObjectType, ShapeType), _LEAF))


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
    if root.__class__ is TupleType:  # (a tuple of tensor types, inline: a relation's outputs)
        kids = []
        for f in root.fields:
            if f.__class__ is not TensorType:
                break
            kids.append(hash(f))
        else:
            h = hash((1, tuple(kids)))  # (``_local_hash`` of a tuple)
            object.__setattr__(root, "_hash", h)
            return h
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
        return map_tensor_dims(x, f) if isinstance(x, TensorType) else None

    return map_types(t, go)


# ----------------------------------------------------------------------------------------------
# printing


def _leaf_str(t: Type) -> str:
    return tensor_str(t) if t.__class__ is TensorType else str(t)


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
