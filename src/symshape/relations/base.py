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
from typing import NoReturn, Union

from symshape.encoding.conds import Cond
from symshape.encoding.dims import Dim
from symshape.encoding.types import Attrs, IncompleteType, Type
from symshape.errors import INVALID_ARGUMENT, UNKNOWN_RELATION, ErrorCode, SymshapeError

__all__ = [
    "Context",
    "Lazy",
    "Message",
    "message_text",
    "RelationFn",
    "RelationDef",
    "RelationFailure",
    "RELATIONS",
    "register_relation",
    "relation",
    "get_relation",
]


class Lazy:
    """A message formatted only when a diagnostic reads it: ``fmt.format(*args)`` for a string
    ``fmt``, else ``fmt(*args)``; an argument that is itself a :class:`Lazy` is read first. A
    relation states many conditions and few of them are refuted, so most messages are never read.

    ``Lazy("{} elements vs {}", a, b)()`` is ``f"{a} elements vs {b}"``: both format each
    argument with ``format(arg, "")``.

    >>> Lazy("cannot reshape `{}`: {}", "x", Lazy("{} vs {}", 6, 8))()
    'cannot reshape `x`: 6 vs 8'
    """

    __slots__ = ("fmt", "args")

    def __init__(self, fmt: str | Callable[..., str], *args: object) -> None:
        self.fmt = fmt
        self.args = args

    def __call__(self) -> str:
        args = [a() if type(a) is Lazy else a for a in self.args]
        fmt = self.fmt
        return fmt.format(*args) if type(fmt) is str else fmt(*args)  # type: ignore[operator]

    def __str__(self) -> str:
        return self()

    def __repr__(self) -> str:
        return f"Lazy({self()!r})"


Message = Union[str, Callable[[], str]]
"""What :meth:`Context.require` takes as a message: the text, or a function that makes it (a
:class:`Lazy`), called only when the condition is refuted and reported."""


def message_text(message: Message) -> str:
    """The text of ``message`` (see :data:`Message`)."""
    if type(message) is str:
        return message
    return message() if callable(message) else f"{message}"


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
    def require(self, cond: Cond, code: ErrorCode | str, message: Message) -> str:
        """State ``cond``; returns ``"proved"``, ``"guard"``, ``"refuted"`` or ``"unknown"``.
        ``message`` (the text, or a :class:`Lazy` that makes it) is read only when ``cond`` is
        refuted."""

    @abstractmethod
    def prove(self, cond: Cond) -> bool | None:
        """Whether ``cond`` follows from the declarations and facts (no recording)."""

    def known_verdict(self, cond: Cond) -> str | None:
        """What :meth:`require` would answer for ``cond``, when the solver knows it without
        reasoning anew (decided by canonical forms, or the same question asked before, up to a
        renaming of symbols); None otherwise. States nothing."""
        return None

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
