"""The error-code catalogue and the exception raised for bad API input.

Every diagnostic the solver reports and every :class:`SymshapeError` raised for bad input carries
one code from this catalogue. Codes are short kebab-case strings (as in mypy's ``errorcodes``);
each has a one-line description and an anchor in the README's error catalogue.

This module sits below both ``encoding`` and ``solver`` so that the term layer can reject bad input
with the same codes the solver uses for type errors.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from types import TracebackType
from typing import Any, Final

__all__ = [
    "ErrorCategory",
    "ErrorCode",
    "ERROR_CODES",
    "SymshapeError",
    "user_traceback",
    "expect_mapping",
    "SHAPE_MISMATCH",
    "RANK_MISMATCH",
    "DTYPE_MISMATCH",
    "NOT_BROADCASTABLE",
    "RESHAPE_SIZE",
    "AXIS_OUT_OF_RANGE",
    "ARITY_MISMATCH",
    "KIND_MISMATCH",
    "TYPE_MISMATCH",
    "OCCURS_CHECK",
    "UNRESOLVED",
    "UNPROVEN_GUARD",
    "INCONCLUSIVE",
    "IMPURE_CALL",
    "NOT_NORMALIZED",
    "UNDEFINED_VAR",
    "DUPLICATE_BINDING",
    "NEGATIVE_DIM",
    "BAD_DIM",
    "BAD_DTYPE",
    "BAD_ATTRIBUTE",
    "UNKNOWN_RELATION",
    "PARSE_ERROR",
    "INVALID_ARGUMENT",
    "CONSTRAINT_VIOLATED",
    "UNSUPPORTED_OP",
    "PINNED_SYMBOL",
]

DOCS_URL: Final = "README.md#error-codes"


class ErrorCategory(Enum):
    """What kind of problem an error code names."""

    CONFLICT = "conflict"
    """The program is not well typed: what is known about it conflicts (an unsat core)."""
    UNDECIDED = "undecided"
    """Inference could not decide: a type nothing determines, a guard not proved, a Z3 timeout."""
    PROGRAM = "program"
    """The program is not well formed: scopes, purity, normal form."""
    INPUT = "input"
    """Bad input to the API, raised as :class:`SymshapeError` (relations may report some too)."""
    IMPORT = "import"
    """A model an importer cannot express."""
    WARNING = "warning"
    """Not an error, but often a bug."""


@dataclass(frozen=True)
class ErrorCode:
    """One entry of the catalogue: the code, what it means, its category and its documentation
    anchor.

    >>> SHAPE_MISMATCH.category, str(SHAPE_MISMATCH)
    (<ErrorCategory.CONFLICT: 'conflict'>, 'shape-mismatch')
    """

    code: str
    description: str
    category: ErrorCategory

    @property
    def anchor(self) -> str:
        return f"{DOCS_URL}-{self.code}"

    def __str__(self) -> str:
        return self.code


_CATALOGUE: tuple[tuple[str, str, str], ...] = (
    ("shape-mismatch", "conflict", "Two shapes that must be equal differ"),
    ("rank-mismatch", "conflict", "Two tensors that must have the same rank do not"),
    ("dtype-mismatch", "conflict", "Two tensors that must share a dtype do not"),
    ("not-broadcastable", "conflict", "Shapes cannot be broadcast together"),
    ("reshape-size", "conflict", "A reshape does not preserve the element count"),
    ("axis-out-of-range", "conflict", "An axis attribute is outside the rank"),
    ("arity-mismatch", "conflict", "Wrong number of arguments or tuple fields"),
    ("kind-mismatch", "conflict", "Types of different kinds or forms meet"),
    ("type-mismatch", "conflict", "Two types of different form cannot be unified"),
    ("occurs-check", "conflict", "A type would have to contain itself"),
    ("unresolved", "undecided", "Nothing determines a type; add an annotation"),
    ("unproven-guard", "undecided", "A guard that strict mode requires proved"),
    ("inconclusive", "undecided", "Z3 could not decide a condition in time"),
    ("impure-call", "program", "An impure call inside a pure region"),
    ("not-normalized", "program", "A call that normalization would change"),
    ("undefined-var", "program", "A variable used outside its scope"),
    ("duplicate-binding", "program", "A variable bound twice, or two different symbols of one name"),
    ("negative-dim", "input", "A dimension that is or must be negative"),
    ("bad-dim", "input", "A value that is not a dimension"),
    ("bad-dtype", "input", "A dtype string that is not known"),
    ("bad-attribute", "input", "An operator attribute of the wrong type or value"),
    ("unknown-relation", "input", "A relation or operator name not registered"),
    ("parse-error", "input", "Text that does not parse as a dimension or type"),
    ("invalid-argument", "input", "An API argument of the wrong form"),
    ("constraint-violated", "conflict", "A condition on the symbols that can never hold"),
    ("unsupported-op", "import", "A model operator or value an importer cannot express"),
    (
        "pinned-symbol",
        "warning",
        "A guard that holds for one value of a symbol only (a warning: often a bug)",
    ),
)
"""The catalogue: code, category (an :class:`ErrorCategory` value), description; the README's table
lists it in this order."""

ERROR_CODES: dict[str, ErrorCode] = {c: ErrorCode(c, d, ErrorCategory(k)) for c, k, d in _CATALOGUE}
"""The catalogue, by code."""

SHAPE_MISMATCH: Final = ERROR_CODES["shape-mismatch"]
RANK_MISMATCH: Final = ERROR_CODES["rank-mismatch"]
DTYPE_MISMATCH: Final = ERROR_CODES["dtype-mismatch"]
NOT_BROADCASTABLE: Final = ERROR_CODES["not-broadcastable"]
RESHAPE_SIZE: Final = ERROR_CODES["reshape-size"]
AXIS_OUT_OF_RANGE: Final = ERROR_CODES["axis-out-of-range"]
ARITY_MISMATCH: Final = ERROR_CODES["arity-mismatch"]
KIND_MISMATCH: Final = ERROR_CODES["kind-mismatch"]
TYPE_MISMATCH: Final = ERROR_CODES["type-mismatch"]
OCCURS_CHECK: Final = ERROR_CODES["occurs-check"]
UNRESOLVED: Final = ERROR_CODES["unresolved"]
UNPROVEN_GUARD: Final = ERROR_CODES["unproven-guard"]
INCONCLUSIVE: Final = ERROR_CODES["inconclusive"]
IMPURE_CALL: Final = ERROR_CODES["impure-call"]
NOT_NORMALIZED: Final = ERROR_CODES["not-normalized"]
UNDEFINED_VAR: Final = ERROR_CODES["undefined-var"]
DUPLICATE_BINDING: Final = ERROR_CODES["duplicate-binding"]
NEGATIVE_DIM: Final = ERROR_CODES["negative-dim"]
BAD_DIM: Final = ERROR_CODES["bad-dim"]
BAD_DTYPE: Final = ERROR_CODES["bad-dtype"]
BAD_ATTRIBUTE: Final = ERROR_CODES["bad-attribute"]
UNKNOWN_RELATION: Final = ERROR_CODES["unknown-relation"]
PARSE_ERROR: Final = ERROR_CODES["parse-error"]
INVALID_ARGUMENT: Final = ERROR_CODES["invalid-argument"]
CONSTRAINT_VIOLATED: Final = ERROR_CODES["constraint-violated"]
UNSUPPORTED_OP: Final = ERROR_CODES["unsupported-op"]
PINNED_SYMBOL: Final = ERROR_CODES["pinned-symbol"]


class SymshapeError(Exception):
    """Raised for bad input to the API; ``code`` is a catalogue code such as ``"bad-dtype"``."""

    def __init__(self, code: ErrorCode | str, message: str) -> None:
        self.code: str = code.code if isinstance(code, ErrorCode) else code
        self.message = message
        super().__init__(f"{message}  [{self.code}]")

    def _render_traceback_(self) -> list[str]:
        """IPython's hook for showing an exception: the traceback without symshape's own frames
        (the error is about the caller's code, which is what is shown)."""
        tb = user_traceback(self.__traceback__)
        try:
            from IPython import get_ipython

            shell = get_ipython()
        except ImportError:  # pragma: no cover - only IPython calls this
            shell = None
        if shell is None:
            return "".join(traceback.format_exception(type(self), self, tb)).splitlines()
        return list(shell.InteractiveTB.structured_traceback(type(self), self, tb))


def expect_mapping(x: object, what: str, code: ErrorCode = INVALID_ARGUMENT) -> Mapping[Any, Any]:
    """``x`` when it is a mapping, else a :class:`SymshapeError` with ``code`` saying ``what`` it
    should be (``"an assignment is a mapping of symbols to ints"``) and what it is.

    >>> expect_mapping([1], "attributes must be a mapping")
    Traceback (most recent call last):
    symshape.errors.SymshapeError: attributes must be a mapping, got list [1]  [invalid-argument]
    """
    if not isinstance(x, Mapping):
        raise SymshapeError(code, f"{what}, got {type(x).__name__} {x!r}")
    return x


_PKG_DIR = os.path.dirname(os.path.abspath(__file__))


def user_traceback(tb: TracebackType | None) -> TracebackType | None:
    """``tb`` without the frames of the symshape package and what they call (generated code,
    libraries), keeping the user's frames and any user function symshape called back (a custom
    relation); ``tb`` itself when no frame would remain."""
    keep: list[TracebackType] = []
    inside = False
    t = tb
    while t is not None:
        name = t.tb_frame.f_code.co_filename
        if name.startswith(_PKG_DIR):
            inside = True
        elif not inside:
            keep.append(t)
        elif not name.startswith("<") and "site-packages" not in name:
            keep.append(t)  # a user callback
            inside = False
        t = t.tb_next
    if not keep:
        return tb
    out: TracebackType | None = None
    for t in reversed(keep):
        out = TracebackType(out, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return out
