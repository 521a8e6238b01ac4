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
from types import TracebackType
from typing import Any, Final

__all__ = [
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


@dataclass(frozen=True)
class ErrorCode:
    """One entry of the catalogue: the code, what it means, and its documentation anchor."""

    code: str
    description: str

    @property
    def anchor(self) -> str:
        return f"{DOCS_URL}-{self.code}"

    def __str__(self) -> str:
        return self.code


ERROR_CODES: dict[str, ErrorCode] = {}


def _code(code: str, description: str) -> ErrorCode:
    entry = ErrorCode(code, description)
    ERROR_CODES[code] = entry
    return entry


SHAPE_MISMATCH: Final = _code("shape-mismatch", "Two shapes that must be equal differ")
RANK_MISMATCH: Final = _code("rank-mismatch", "Two tensors that must have the same rank do not")
DTYPE_MISMATCH: Final = _code("dtype-mismatch", "Two tensors that must share a dtype do not")
NOT_BROADCASTABLE: Final = _code("not-broadcastable", "Shapes cannot be broadcast together")
RESHAPE_SIZE: Final = _code("reshape-size", "A reshape does not preserve the element count")
AXIS_OUT_OF_RANGE: Final = _code("axis-out-of-range", "An axis attribute is outside the rank")
ARITY_MISMATCH: Final = _code("arity-mismatch", "Wrong number of arguments or tuple fields")
KIND_MISMATCH: Final = _code("kind-mismatch", "Types of different kinds or forms meet")
TYPE_MISMATCH: Final = _code("type-mismatch", "Two types of different form cannot be unified")
OCCURS_CHECK: Final = _code("occurs-check", "A type would have to contain itself")
UNRESOLVED: Final = _code("unresolved", "Nothing determines a type; add an annotation")
UNPROVEN_GUARD: Final = _code("unproven-guard", "A guard that strict mode requires proved")
INCONCLUSIVE: Final = _code("inconclusive", "Z3 could not decide a condition in time")
IMPURE_CALL: Final = _code("impure-call", "An impure call inside a pure region")
NOT_NORMALIZED: Final = _code("not-normalized", "A call that normalization would change")
UNDEFINED_VAR: Final = _code("undefined-var", "A variable used outside its scope")
DUPLICATE_BINDING: Final = _code(
    "duplicate-binding", "A variable bound twice, or two different symbols of one name"
)
NEGATIVE_DIM: Final = _code("negative-dim", "A dimension that is or must be negative")
BAD_DIM: Final = _code("bad-dim", "A value that is not a dimension")
BAD_DTYPE: Final = _code("bad-dtype", "A dtype string that is not known")
BAD_ATTRIBUTE: Final = _code("bad-attribute", "An operator attribute of the wrong type or value")
UNKNOWN_RELATION: Final = _code("unknown-relation", "A relation or operator name not registered")
PARSE_ERROR: Final = _code("parse-error", "Text that does not parse as a dimension or type")
INVALID_ARGUMENT: Final = _code("invalid-argument", "An API argument of the wrong form")
CONSTRAINT_VIOLATED: Final = _code(
    "constraint-violated", "A condition on the symbols that can never hold"
)
UNSUPPORTED_OP: Final = _code("unsupported-op", "A model operator or value an importer cannot express")
PINNED_SYMBOL: Final = _code(
    "pinned-symbol", "A guard that holds for one value of a symbol only (a warning: often a bug)"
)


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
