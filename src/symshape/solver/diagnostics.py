"""Diagnostics: origins, error records with notes, guards, and their renderings.

The catalogue of codes lives in :mod:`symshape.errors` (it is needed below the solver too) and is
re-exported here. A :class:`Diagnostic` is one error: a code, a message, the primary span, and one
:class:`Note` per other member of its unsat core. Messages that show two types come from
:func:`conflict_message`, which prints both sides and the first place they differ, so look-alike
types stay distinguishable (``dimension 1: 4 vs 5``).

Conventions every message and note follows (what a numpy or PyTorch user expects):

* **Indexing.** A dimension or axis is named by its **0-based index counted from the left of the
  tensor printed next to it**: in ``Tensor[(n, 3, 4), float32]`` dimension 2 is ``4``. Negative
  axes appear only where the user wrote them (``axis -1 is out of range``). Broadcasting aligns
  shapes from the right, so when the two tensors have different ranks each side is named in its
  own indexing: ``cannot broadcast `Tensor[(n, 3, 4), float32]` and `Tensor[(5,), float32]`:
  dimension 2 of the first is 4, dimension 0 of the second is 5``; with equal ranks it reads like
  a unification, ``dimension 1: 4 vs 5``. Notes use the same words (``flatten gives `...`
  (dimension 1 is `12`)``).
* **Operator names.** An operator is named as the user calls it (``dense``, ``relu``,
  ``max_pool2d``, ``sum``), not by its registry name (``nn.dense``) or its relation (``pool2d``,
  ``reduce``): the relation's context name, the origin's label, and so every message prefix,
  note and chain come from :func:`symshape.solver.instance.op_display_name`, in one place.
"""

from __future__ import annotations

import functools
import itertools
import json
import linecache
import re
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, NoReturn, ParamSpec, TypeVar

from symshape.encoding.conds import BoolConst, BoolOp, Cmp, Cond, Not, cond_dims, decide, map_cond
from symshape.encoding.dims import AnyDim, Atom, Dim, DimLike, DimVar, Sym, _atom_dim
from symshape.errors import ERROR_CODES, INVALID_ARGUMENT, ErrorCode, SymshapeError
from symshape.source import Span
from symshape.views import Shown

__all__ = [
    "next_origin_seq",
    "TextEnum",
    "OriginKind",
    "assert_never",
    "Origin",
    "Note",
    "Diagnostic",
    "Guard",
    "Evidence",
    "ERROR_CODES",
    "ErrorCode",
    "conflict_message",
    "cond_holds_at",
    "render_all",
    "renumber_ids",
    "IdNumbering",
    "numbered",
    "raw_ids",
    "ids_are_raw",
]

if sys.version_info >= (3, 11):
    from typing import assert_never
else:  # pragma: no cover - Python 3.10

    def assert_never(value: NoReturn) -> NoReturn:
        """Mark a branch a ``match`` never reaches: mypy checks that every member was handled."""
        raise AssertionError(f"unhandled value: {value!r}")


_ID_RE = re.compile(r"\?(t|d)(\d+)")


class IdNumbering:
    """Numbers holes (``?t12``) and unknown dimensions (``?d7``) by first appearance over every
    text it is given (``?t1``, ``?t2``, ...; one sequence per letter), so the texts of one output
    name the same hole alike and do not depend on process-global counters."""

    def __init__(self) -> None:
        self._seen: dict[str, str] = {}
        self._counts = {"t": 0, "d": 0}

    def _sub(self, m: re.Match[str]) -> str:
        key = m.group(0)
        hit = self._seen.get(key)
        if hit is None:
            letter = m.group(1)
            self._counts[letter] += 1
            hit = self._seen[key] = f"?{letter}{self._counts[letter]}"
        return hit

    def __call__(self, text: str) -> str:
        return _ID_RE.sub(self._sub, text) if "?" in text else text

    def json(self, obj: Any) -> Any:
        """``obj`` (JSON-like: dicts, lists, strings, ...) with every string numbered, in order."""
        if isinstance(obj, str):
            return self(obj)
        if isinstance(obj, dict):
            return {self.json(k): self.json(v) for k, v in obj.items()}
        if isinstance(obj, (list, tuple)):
            return type(obj)(self.json(x) for x in obj)
        return obj


def renumber_ids(text: str) -> str:
    """Number holes (``?t12``) and unknown dimensions (``?d7``) by first appearance in ``text``
    (``?t1``, ``?t2``, ...), so a report does not depend on process-global counters."""
    return IdNumbering()(text)


# True while an output is being built: the outputs it is made of (a diagnostic's rendering inside a
# report) keep the raw ids, and the outermost numbers the whole once (see ``numbered``)
_RAW_IDS: ContextVar[bool] = ContextVar("symshape_raw_ids", default=False)


def ids_are_raw() -> bool:
    """Whether outputs are being built for an enclosing output that numbers them (see
    :func:`numbered`)."""
    return _RAW_IDS.get()


@contextmanager
def raw_ids() -> Iterator[None]:
    """Inside, every :func:`numbered` output keeps the raw ids (``?t465``), for the caller to
    number the whole text it builds of them once (:func:`renumber_ids`)."""
    token = _RAW_IDS.set(True)
    try:
        yield
    finally:
        _RAW_IDS.reset(token)


_P = ParamSpec("_P")
_R = TypeVar("_R")


def numbered(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """An output (a text, or a JSON-like object) whose holes and unknowns are numbered by first
    appearance in it (:class:`IdNumbering`), once for the whole: an output built inside another
    (a diagnostic inside a report, a report inside the CLI's output) keeps the raw ids, so one
    hole has one name throughout, and the same program gives the same output in any process,
    however many inferences ran before."""

    @functools.wraps(fn)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        if _RAW_IDS.get():
            return fn(*args, **kwargs)
        token = _RAW_IDS.set(True)
        try:
            out = fn(*args, **kwargs)
        finally:
            _RAW_IDS.reset(token)
        result: _R = IdNumbering().json(out)
        return result

    return wrapper


class TextEnum(str, Enum):
    """An enum whose members are their strings: ``str()``, ``repr()``, ``format()`` and JSON give
    the value, and a member equals (and hashes as) its value, so code and reports written for the
    plain strings read the same.

    >>> OriginKind.RELATION == "relation", str(OriginKind.RELATION), repr(OriginKind.UNIFY)
    (True, 'relation', "'unify'")
    """

    def __str__(self) -> str:
        return str(self.value)

    def __repr__(self) -> str:
        return repr(self.value)


class OriginKind(TextEnum):
    """What an :class:`Origin` is."""

    RELATION = "relation"  # a relation instance: an operator call, a join of branches, ...
    UNIFY = "unify"  # a unification: a binding, an argument, a pattern
    ANNOTATION = "annotation"  # a type annotation (a variable's, a return type, a match_cast)
    HOLE = "hole"  # a hole made through the solver's API
    EXPR = "expr"  # an expression constraint generation found wrong itself


_origin_ids = itertools.count(1)
next_origin_seq = _origin_ids.__next__
"""The sequence number of the next origin (every origin, however made, is numbered by it)."""


@dataclass(frozen=True, eq=False, slots=True)
class Origin:
    """Where a constraint came from: a relation instance, a unification, an annotation.

    ``label`` says what it is (``"broadcast"``, ``"`x` is annotated Tensor[(n, 3), float32]"``);
    ``span`` where (None when unknown). Origins compare by identity; ``seq`` orders them in the
    order they were created, which is program order for constraints generated from a program.
    ``expr`` is the program expression it came from (a variable for an annotation, the call for
    a call's relation) when there is one, so that views find it by identity, never by its text.
    ``kind`` is an :class:`OriginKind` (a plain string of one of its values compares equal).
    """

    kind: str
    label: str
    span: Span | None = None
    seq: int = field(default_factory=next_origin_seq)
    payload: object = None
    expr: object = None

    def describe(self) -> str:
        return f"{self.label} at {self.span}" if self.span else self.label

    def sort_key(self) -> tuple[int, str, int, int, int]:
        if self.span is None:
            return (1, "", 0, 0, self.seq)
        return (0, self.span.file, self.span.line, self.span.column, self.seq)

    def __str__(self) -> str:
        return self.describe()


@dataclass(frozen=True)
class Note:
    """A secondary location of a diagnostic: one core member and what it contributed."""

    message: str
    span: Span | None = None

    def to_json(self) -> dict[str, Any]:
        return {"message": self.message, "span": self.span.to_json() if self.span else None}


@dataclass(frozen=True, eq=False)
class Evidence(ABC):
    """The Z3 formulas behind an explained error (see :mod:`symshape.solver.explain`).

    ``members[i]`` is what ``Diagnostic.core[i]`` contributes (the primary first, then the notes'
    members in order); ``axioms`` are the untracked facts (symbol ranges, non-negative dimensions,
    type sizes). The core is *minimal*: ``axioms`` and all members are unsatisfiable, and leaving
    out any one member makes the rest satisfiable (:meth:`check_minimal` re-checks that) — unless
    ``minimized`` is False: the explainer ran out of time (or Z3 could not decide) while
    minimizing, and the diagnostic says so in a note.

    The formulas are Z3's, so the solver layer implements the check
    (:class:`symshape.solver.evidence.Z3Evidence`); this layer imports no Z3.
    """

    members: tuple[Any, ...]
    axioms: tuple[Any, ...]
    ctx: Any = None
    minimized: bool = True

    @abstractmethod
    def check_minimal(self, members: tuple[Any, ...] | None = None) -> list[str]:
        """Problems with ``members`` (default: this core) as a minimal unsat core; [] if none."""


@dataclass(frozen=True)
class Diagnostic(Shown):
    """One error: ``code``, ``message``, primary ``span``, and ``notes`` (one per core member).

    ``core`` lists the members of the error's unsat core (the primary origin first, then one per
    note); ``evidence`` holds their Z3 formulas when the core was computed and minimized.
    """

    code: str
    message: str
    span: Span | None = None
    notes: tuple[Note, ...] = ()
    severity: str = "error"
    origin: Origin | None = field(default=None, compare=False, repr=False)
    core: tuple[Origin, ...] = field(default=(), compare=False, repr=False)
    evidence: Evidence | None = field(default=None, compare=False, repr=False)

    @property
    def description(self) -> str:
        e = ERROR_CODES.get(self.code)
        return e.description if e else ""

    @numbered
    def render(self, source: bool = True) -> str:
        """``file:line:col: error: message  [code]``, the source line with a caret, then notes."""
        lines = [_header(self.span, self.severity, self.message, self.code)]
        if source and self.span is not None:
            lines.extend(_source_excerpt(self.span))
        for n in self.notes:
            lines.append(_header(n.span, "note", n.message, None))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render(source=False)

    @numbered
    def to_json(self) -> dict[str, Any]:
        """A stable JSON-ready dict: code, severity, message, span, notes."""
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "span": self.span.to_json() if self.span else None,
            "notes": [n.to_json() for n in self.notes],
        }

    @numbered
    def to_json_str(self) -> str:
        return json.dumps(self.to_json(), sort_keys=True)


def _header(span: Span | None, severity: str, message: str, code: str | None) -> str:
    where = f"{span}: " if span else ""
    tail = f"  [{code}]" if code else ""
    return f"{where}{severity}: {message}{tail}"


def _source_excerpt(span: Span) -> list[str]:
    if span.context is not None:
        return []  # a place without source lines (a model's node)
    text = linecache.getline(span.file, span.line)
    if not text:
        return []
    text = text.rstrip("\n")
    caret = " " * max(span.column - 1, 0) + "^"
    return [f"    {text}", f"    {caret}"]


@dataclass(frozen=True, eq=False)
class Guard:
    """A condition on the symbols under which the program is well typed.

    ``str(g)`` is the condition (``n == 1 or n == 5``); ``g.holds({n: 5})`` evaluates it;
    ``g.origin`` is the relation instance or unification that needs it.
    """

    cond: Cond
    origin: Origin | None = None
    code: str = "unproven-guard"

    def __str__(self) -> str:
        return str(self.cond)

    def __repr__(self) -> str:
        return f"Guard({self.cond})"

    def holds(self, env: Mapping[Dim | Atom | str, DimLike]) -> bool:
        """Whether the condition holds where the symbols take the values of ``env`` (keys:
        symbols, their atoms or names; values: ints).

        It is decided as far as the assignment decides it: ``n == 1 or m == 1`` holds at
        ``{n: 1}`` whatever ``m`` is. A ``SymshapeError`` (``invalid-argument``) says when
        ``env`` is not a mapping of symbols to ints, or names the symbols the answer depends on
        that have no value (an anonymous ``?`` or a solver unknown ``?d`` can never be given one).

        >>> import symshape as ss
        >>> n, m = ss.dims("n m")
        >>> from symshape.encoding.conds import any_of, eq
        >>> g = Guard(any_of(eq(n, 1), eq(m, 1)))
        >>> g.holds({n: 1}), g.holds({"n": 2, "m": 1}), g.holds({n: 2, m: 3})
        (True, True, False)
        """
        return cond_holds_at(self.cond, env)

    def describe(self) -> str:
        who = self.origin.describe() if self.origin else "the program"
        return f"{who} needs `{self.cond}`"

    def to_json(self) -> dict[str, Any]:
        return {
            "condition": str(self.cond),
            "origin": self.origin.label if self.origin else None,
            "span": self.origin.span.to_json() if self.origin and self.origin.span else None,
        }


def cond_holds_at(c: Cond, env: Mapping[Dim | Atom | str, DimLike]) -> bool:
    """``c`` evaluated at ``env`` as far as the values decide it (see :meth:`Guard.holds`)."""
    if not isinstance(env, Mapping):
        raise SymshapeError(
            INVALID_ARGUMENT, f"the values of the symbols must be a mapping, got {type(env).__name__}"
        )
    for k, v in env.items():
        if isinstance(v, bool) or not isinstance(v, (int, Dim)):
            raise SymshapeError(
                INVALID_ARGUMENT, f"the value of {k} must be an int, got {type(v).__name__} {v!r}"
            )
    try:
        sub = map_cond(c, lambda d: d.subs(env))
        r: bool | None = decide(sub)
        if r is None:
            r = _eval3(sub)
    except SymshapeError:
        raise
    except (TypeError, ValueError, KeyError) as e:
        raise SymshapeError(INVALID_ARGUMENT, f"cannot evaluate `{c}` at {dict(env)!r}: {e}") from None
    if r is not None:
        return r
    missing = sorted({str(_atom_dim(x)) for x in _open_atoms(sub)})
    which = "which has" if len(missing) == 1 else "which have"
    raise SymshapeError(
        INVALID_ARGUMENT,
        f"`{c}` is not decided by the values given: it depends on {', '.join(missing)}, "
        f"{which} no value",
    )


def _eval3(c: Cond) -> bool | None:
    """Three-valued evaluation: True, False, or None when ``c`` still depends on its atoms."""
    match c:
        case BoolConst(v):
            return v
        case Cmp():
            return decide(c)
        case BoolOp(op, xs):
            vals = [_eval3(x) for x in xs]
            if op == "and":
                return False if False in vals else True if all(v is True for v in vals) else None
            return True if True in vals else False if all(v is False for v in vals) else None
        case Not(x):
            inner = _eval3(x)
            return None if inner is None else not inner
    return None


def _open_atoms(c: Cond) -> list[Atom]:
    out: list[Atom] = []
    for d in cond_dims(c):
        for a in d.atoms():
            if isinstance(a, (Sym, AnyDim, DimVar)) and a not in out:
                out.append(a)
    return out


def conflict_message(what: str, left: object, right: object, detail: str = "") -> str:
    """The one message builder for two-sided conflicts.

    >>> conflict_message("cannot unify", "Tensor[(n, 4), float32]", "Tensor[(n, 5), float32]",
    ...                  "dimension 1: 4 vs 5")
    'cannot unify `Tensor[(n, 4), float32]` and `Tensor[(n, 5), float32]`: dimension 1: 4 vs 5'
    """
    ls, rs = str(left), str(right)
    if ls == rs:
        ls, rs = f"{ls} (left)", f"{rs} (right)"
    msg = f"{what} `{ls}` and `{rs}`"
    return f"{msg}: {detail}" if detail else msg


@numbered
def render_all(diags: list[Diagnostic]) -> str:
    return "\n".join(d.render() for d in diags)
