"""Where things come from: source spans, and the spans of the code that builds a program.

A :class:`Span` is a file, a 1-based line and column. A span may carry a ``context`` instead of a
readable source line: a place in a model file that has no lines (an ONNX node) prints as
``model.onnx: node 'Reshape_12' (Reshape)``, and a report quotes no source excerpt for it.

Every expression records the span of the Python code that built it: the first frame outside the
``symshape`` package (:func:`user_span`, cached per call site; no ``inspect.stack``). A front-end
that builds thousands of expressions from a model gives them the model's places instead, with
:func:`span_scope`, which also skips the frame walk:

>>> import symshape as ss
>>> at = ss.Span("model.onnx", 13, context="node 'Reshape_12' (Reshape)")
>>> with ss.span_scope(at):
...     x = ss.var("x")
>>> str(x.span)
"model.onnx: node 'Reshape_12' (Reshape)"
"""

from __future__ import annotations

import itertools
import linecache
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from operator import itemgetter
from types import CodeType, FrameType
from typing import Any

from symshape.errors import INVALID_ARGUMENT, SymshapeError

__all__ = [
    "Span",
    "span_scope",
    "enter_span_scope",
    "exit_span_scope",
    "user_span",
    "span_scope_get",
    "span_scope_set",
    "SPAN_SCOPE_UNSET",
    "caller_span",
    "frame_span",
    "notebook_cell_name",
]


@dataclass(frozen=True, order=True)
class Span:
    """A source location: file, 1-based line and column, and optionally a ``context`` that names
    the place where the file has no readable lines (``str`` is then ``file: context``).

    The context describes a place; it does not tell places apart (file, line and column do).

    >>> str(Span("model.py", 3, 5)), str(Span("model.onnx", 13, context="node 'a' (Relu)"))
    ('model.py:3:5', "model.onnx: node 'a' (Relu)")
    """

    file: str
    line: int
    column: int = 1
    context: str | None = field(default=None, compare=False, kw_only=True)

    def __str__(self) -> str:
        if self.context is not None:
            return f"{self.file}: {self.context}"
        return f"{self.file}:{self.line}:{self.column}"

    def to_json(self) -> dict[str, Any]:
        """``{"file", "line", "column"}``, and ``"context"`` when the span has one."""
        out: dict[str, Any] = {"file": self.file, "line": self.line, "column": self.column}
        if self.context is not None:
            out["context"] = self.context
        return out


# -- spans of the code that builds a program ----------------------------------------------------

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))

_UNSCOPED: Any = object()
_SCOPE: ContextVar[Span | None] = ContextVar("symshape_span_scope", default=_UNSCOPED)
#: the innermost span scope's span (``ContextVar.get``), :data:`SPAN_SCOPE_UNSET` outside every
#: scope: what :func:`user_span` reads first, for a caller that reads it itself (a call's builder)
span_scope_get: Callable[[], Span | None] = _SCOPE.get
SPAN_SCOPE_UNSET: Any = _UNSCOPED
#: what :func:`enter_span_scope` does, for a front-end's per-node loop that runs inside a
#: :func:`span_scope` (entered, so the module knows scopes are in use): the node's scope replaces
#: the previous node's, and the enclosing ``with`` block restores the outer one at its end
span_scope_set: Callable[[Span | None], Token[Span | None]] = _SCOPE.set
# Set (for good) when a scope is first entered: until then no context holds a scope, and
# :func:`user_span` skips reading the context variable.
_scoped = False


def span_scope(span: Span | None) -> AbstractContextManager[Span | None]:
    """Every expression built inside the ``with`` block takes ``span`` (None: no span) instead of
    the span of the Python code that builds it; scopes nest, the innermost wins.

    >>> import symshape as ss
    >>> with ss.span_scope(ss.Span("model.onnx", 2, context="graph input 'x'")):
    ...     x = ss.var("x", ss.Tensor((3,), "float32"))
    ...     y = ss.ops.relu(x)
    >>> str(y.span)
    "model.onnx: graph input 'x'"
    """
    if span is not None and not isinstance(span, Span):
        raise SymshapeError(
            INVALID_ARGUMENT, f"span_scope takes a Span or None, got {type(span).__name__} {span!r}"
        )
    return _Scope(span)


def enter_span_scope(span: Span | None) -> Token[Span | None]:
    """What ``with span_scope(span):`` does on entry, without the context manager (a front-end's
    per-node loop); give the token to :func:`exit_span_scope` when done, in a ``finally``."""
    global _scoped
    _scoped = True
    return _SCOPE.set(span)


def exit_span_scope(token: Token[Span | None]) -> None:
    """Leave the scope :func:`enter_span_scope` entered."""
    _SCOPE.reset(token)


class _Scope(AbstractContextManager["Span | None"]):
    __slots__ = ("span", "tokens")

    def __init__(self, span: Span | None) -> None:
        self.span = span
        self.tokens: list[Token[Span | None]] = []

    def __enter__(self) -> Span | None:
        self.tokens.append(enter_span_scope(self.span))
        return self.span

    def __exit__(self, *exc: object) -> None:
        _SCOPE.reset(self.tokens.pop())


_getframe = sys._getframe


def user_span(depth: int = 2) -> Span | None:
    """The span an expression built now takes: the span of the innermost :func:`span_scope`, else
    the span of the first caller frame outside the symshape package (the column is that of the
    call being executed: Python 3.11+; else 1). The search starts ``depth`` frames up (2: the
    caller of the function calling ``user_span``), so the frames it skips must be the package's."""
    if _scoped:
        scoped = _SCOPE.get()
        if scoped is not _UNSCOPED:
            return scoped
    try:
        first = _getframe(depth)
    except ValueError:  # called with fewer frames above (from C)
        return None
    try:  # the common case: the frame is the user's, at the site met last at this instruction
        last: tuple[CodeType, Span] = _SITE_SPANS[~first.f_lasti]
        if last[0] is first.f_code:
            return last[1]
    except KeyError:
        pass
    f: FrameType | None = first
    while f is not None:
        code = f.f_code
        try:
            site: _CodeSites = _SITE_SPANS[id(code)]  # the entry keeps its code alive: the id is its code's
        except KeyError:
            site = _code_sites(code)
        if site.outside:
            lasti = f.f_lasti
            span = site.spans.get(lasti)
            if span is None:
                span = frame_span(f)
            if f is first:
                _SITE_SPANS[~lasti] = (code, span)
            return span
        f = f.f_back
    return None


class _CodeSites:
    """What the spans of one code object need: whether it is outside the package, the spans of
    its call sites by ``f_lasti`` (with their column; column 1 in ``line_spans``), and the columns
    of its instructions read so far from ``co_positions``."""

    __slots__ = ("code", "outside", "spans", "line_spans", "columns", "positions")

    def __init__(self, code: CodeType) -> None:
        self.code = code  # kept, so that its id (the key) is not reused meanwhile
        self.outside = not code.co_filename.startswith(_PKG_DIR)
        self.spans: dict[int, Span] = {}
        self.line_spans: dict[int, Span] = {}
        self.columns: list[int | None] = []
        self.positions: Iterator[tuple[int | None, ...]] | None = None

    def column(self, lasti: int) -> int:
        """The 1-based column of the instruction at ``lasti`` (``co_positions``, Python 3.11+;
        else 1); the positions are read once, up to the last instruction asked for."""
        if lasti < 0:
            return 1
        i = lasti // 2
        columns = self.columns
        if i >= len(columns):
            if self.positions is None:
                positions = getattr(self.code, "co_positions", None)
                if positions is None:
                    return 1
                self.positions = positions()
            columns.extend(map(_third, itertools.islice(self.positions, i + 1 - len(columns))))
            if i >= len(columns):
                return 1
        col = columns[i]
        return 1 if col is None else int(col) + 1


_third = itemgetter(2)

# id(code) -> the spans of its call sites, each computed once (``f_lineno`` decodes the line
# table, the column reads ``co_positions``); keyed by id, as hashing a code object costs time
# proportional to its size. And ~f_lasti (a negative key) -> (code, span): the user's call site
# met last at that instruction, which :func:`user_span` reads without the id (the entry keeps
# its code alive, so an identical code is that code).
_SITE_SPANS: dict[int, Any] = {}


def _code_sites(code: CodeType) -> _CodeSites:
    if len(_SITE_SPANS) >= 4096:
        _SITE_SPANS.clear()
    site = _SITE_SPANS[id(code)] = _CodeSites(code)
    return site


def frame_span(f: FrameType, column: bool = True) -> Span:
    """The span of the call executing in frame ``f`` (column 1 unless ``column``), cached per
    call site; spans are frozen, so call sites share them."""
    code = f.f_code
    site = _SITE_SPANS.get(id(code))
    if site is None:
        site = _code_sites(code)
    lasti = f.f_lasti
    spans = site.spans if column else site.line_spans
    hit = spans.get(lasti)
    if hit is not None:
        return hit
    filename = code.co_filename
    if "IPython" in sys.modules:
        filename = notebook_cell_name(filename) or filename
    span = spans[lasti] = Span(filename, f.f_lineno, site.column(lasti) if column else 1)
    return span


def caller_span(depth: int = 2) -> Span | None:
    """The span of the Python caller ``depth`` frames up, column 1 (the solver API's origins)."""
    try:
        f = sys._getframe(depth)
    except ValueError:
        return None
    return frame_span(f, column=False)


# -- notebooks: cells named as IPython names them ----------------------------------------------


def _shell() -> Any:
    """The running IPython shell, or None (IPython is never imported here)."""
    ip = sys.modules.get("IPython")
    get = getattr(ip, "get_ipython", None) if ip is not None else None
    try:
        return get() if get is not None else None
    except Exception:  # pragma: no cover - a broken IPython must not break spans
        return None


def notebook_cell_name(filename: str) -> str | None:
    """``In[3]`` for the file IPython compiled cell 3 into (a temporary file name in Jupyter),
    None for any other file. The cell's lines are made readable under the new name, so a report
    still quotes the source line."""
    shell = _shell()
    if shell is None:
        return None
    try:
        named = shell.compile.format_code_name(filename)
    except Exception:
        return None
    if not named or not isinstance(named[1], str):
        return None
    name = str(named[1])
    if name not in linecache.cache:
        lines = linecache.getlines(filename)
        if lines:
            # no mtime: linecache.checkcache keeps the entry (the cell has no file to check)
            linecache.cache[name] = (sum(map(len, lines)), None, lines, name)
    return name
