"""The relation protocol and the registry.

A relation is a Python function ``rel(ctx, args, attrs) -> bool`` over the *resolved* argument
types (inputs first, then outputs; ``ctx.num_inputs`` says where outputs start). It

* returns ``True`` (*solved*) once it has stated everything it knows (it will not run again),
* returns ``False`` (*defer*) when it needs more information (it re-runs when a hole or unknown
  dimension in its arguments is refined; after the fixpoint it gets one last run with
  ``ctx.final`` set, and a relation that still defers leaves the program *unresolved*),
* fails through :meth:`Context.fail` (a structural error with a catalogue code).

Through ``ctx`` it unifies types (``ctx.unify``), equates dimensions (``ctx.unify_dim``), creates
unknowns (``ctx.fresh_dim``) and states conditions (``ctx.require``): a condition that the canonical
forms decide costs nothing, a provable one is silent, an impossible one is an error whose unsat core
points at the call sites involved, and the rest become guards.

>>> from symshape.relations.base import get_relation
>>> get_relation("broadcast").name
'broadcast'
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NoReturn

from symshape.encoding.conds import Cond
from symshape.encoding.dims import Dim
from symshape.encoding.types import Attrs, IncompleteType, Tensor, TensorType, Type, TypeVar
from symshape.errors import INVALID_ARGUMENT, TYPE_MISMATCH, UNKNOWN_RELATION, ErrorCode, SymshapeError

__all__ = [
    "Context",
    "RelationFn",
    "RelationDef",
    "RelationFailure",
    "RELATIONS",
    "register_relation",
    "relation",
    "get_relation",
    "tensor_or_defer",
    "tensor_args",
    "ranked_or_defer",
    "unknown_rank",
]


class RelationFailure(Exception):
    """Raised by :meth:`Context.fail`; the solver turns it into a diagnostic."""

    def __init__(self, code: ErrorCode | str, message: str) -> None:
        super().__init__(message)
        self.code = code.code if isinstance(code, ErrorCode) else code
        self.message = message


class Context(ABC):
    """What a relation may do (Relay's TypeReporter, with conditions decided by Z3)."""

    num_inputs: int
    final: bool
    name: str

    @abstractmethod
    def resolve(self, t: Type) -> Type: ...

    @abstractmethod
    def resolve_dim(self, d: Dim) -> Dim: ...

    @abstractmethod
    def unify(self, a: Type, b: Type) -> Type: ...

    @abstractmethod
    def unify_dim(self, a: Dim, b: Dim) -> Dim: ...

    @abstractmethod
    def require(self, cond: Cond, code: ErrorCode | str, message: str) -> str:
        """State ``cond``; returns ``"proved"``, ``"guard"``, ``"refuted"`` or ``"unknown"``."""

    @abstractmethod
    def prove(self, cond: Cond) -> bool | None:
        """Whether ``cond`` follows from the declarations and facts (no recording)."""

    def assume(self, cond: Cond) -> None:
        """Take ``cond`` as given (a definition, as when ``match_cast`` binds a new symbol)."""
        raise NotImplementedError

    @abstractmethod
    def fresh_dim(self) -> Dim: ...

    @abstractmethod
    def fresh_hole(self) -> IncompleteType: ...

    def fail(self, code: ErrorCode | str, message: str) -> NoReturn:
        raise RelationFailure(code, message)

    def assign(self, out: Type, value: Type) -> Type:
        """Relay's ``Assign``: unify an output with the computed type."""
        return self.unify(out, value)


RelationFn = Callable[[Context, Sequence[Type], Attrs], bool]


@dataclass(frozen=True, eq=False)
class RelationDef:
    """A registered relation (compared and hashed by identity)."""

    name: str
    fn: RelationFn
    doc: str = ""


RELATIONS: dict[str, RelationDef] = {}


def register_relation(name: str, fn: RelationFn, *, overwrite: bool = True) -> RelationDef:
    """Register ``fn`` as relation ``name``."""
    if not isinstance(name, str) or not name:
        raise SymshapeError(INVALID_ARGUMENT, f"a relation name must be a string, got {name!r}")
    if not callable(fn):
        raise SymshapeError(INVALID_ARGUMENT, f"relation {name} must be callable")
    if name in RELATIONS and not overwrite:
        raise SymshapeError(INVALID_ARGUMENT, f"relation {name} is already registered")
    d = RelationDef(name, fn, (fn.__doc__ or "").strip().split("\n")[0])
    RELATIONS[name] = d
    return d


def relation(name: str) -> Callable[[RelationFn], RelationFn]:
    """Decorator: ``@relation("my_rel")`` registers a Python function as a relation.

    >>> @relation("doc_identity")
    ... def doc_identity(ctx, args, attrs):
    ...     ctx.unify(args[1], args[0])
    ...     return True
    """

    def deco(fn: RelationFn) -> RelationFn:
        register_relation(name, fn)
        return fn

    return deco


def get_relation(name: str) -> RelationDef:
    """The registered relation ``name``; an unknown name is an ``unknown-relation`` error."""
    try:
        return RELATIONS[name]
    except (KeyError, TypeError):
        known = ", ".join(sorted(RELATIONS)[:12])
        raise SymshapeError(
            UNKNOWN_RELATION, f"no relation named {name!r} (known include: {known}, ...)"
        ) from None


def tensor_or_defer(t: Type, ctx: Context | None = None, index: int = 0) -> TensorType | None:
    """The tensor type of a resolved argument, or None while it is still a hole (defer).

    With ``ctx``, an argument that can never become a tensor — a tuple, a function, an ADT value,
    ``Object``, a shape — fails the relation with ``type-mismatch`` (``index`` is its position
    among the arguments, counted from 0 and printed from 1), so that a wrong operand is an error
    and not an unresolved program. A hole, or a type parameter of an enclosing polymorphic
    function, defers.

    >>> import symshape as ss
    >>> tensor_or_defer(ss.IncompleteType()) is None
    True
    """
    if isinstance(t, TensorType):
        return t
    if ctx is not None and not isinstance(t, (IncompleteType, TypeVar)):
        ctx.fail(TYPE_MISMATCH, f"{ctx.name}: argument {index + 1} must be a tensor, found `{t}`")
    return None


def tensor_args(ctx: Context, args: Sequence[Type], count: int | None = None) -> list[TensorType] | None:
    """The first ``count`` arguments (default: every input) as tensors (see
    :func:`tensor_or_defer`): every one is checked before the relation defers on a hole, so a
    non-tensor operand fails even while another operand is still unknown."""
    n = ctx.num_inputs if count is None else count
    out: list[TensorType] = []
    ready = True
    for i in range(n):
        t = tensor_or_defer(args[i], ctx, i)
        if t is None:
            ready = False
        else:
            out.append(t)
    return out if ready else None


def unknown_rank(ctx: Context, out: Type, dtype: object) -> bool:
    """The answer of a relation whose input has unknown rank: defer; on the final run ``out`` is
    a tensor of unknown rank and ``dtype``."""
    if not ctx.final:
        return False
    ctx.assign(out, Tensor(None, dtype))
    return True


def ranked_or_defer(
    ctx: Context,
    args: Sequence[Type],
    out: Type,
    unranked: Callable[[TensorType], Type] | None = None,
    index: int = 0,
) -> TensorType | bool:
    """The shared prologue of a relation over one tensor: argument ``index`` as a tensor of known
    rank (see :func:`tensor_or_defer`), or the relation's answer without one. That is False (defer)
    while the argument is a hole, or has unknown rank before the final run; on the final run an
    argument of unknown rank makes ``out`` ``unranked(x)`` (default: a tensor of unknown rank and
    ``x``'s dtype), and the answer True. A relation starts::

        x = ranked_or_defer(ctx, args, out)
        if isinstance(x, bool):
            return x
    """
    x = tensor_or_defer(args[index], ctx, index)
    if x is None:
        return False
    if x.ndim is not None:
        return x
    if not ctx.final:
        return False
    ctx.assign(out, Tensor(None, x.dtype) if unranked is None else unranked(x))
    return True
