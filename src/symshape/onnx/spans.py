"""Spans that name a place in an ONNX model: a node, a graph input, an initializer.

A :class:`~symshape.Span` is a file, a line and a column: the place in the Python source that built
an expression. An ONNX model has no source lines, so :class:`OnnxSpan` keeps the three fields for
ordering (``line`` is the position of the place in the model: graph inputs first, then
initializers, then nodes in graph order) and adds ``what``, which is what a report prints:

>>> s = OnnxSpan.at("model.onnx", 13, "node 'Reshape_12' (Reshape)")
>>> str(s)
"model.onnx: node 'Reshape_12' (Reshape)"
>>> s.file
'<model.onnx>'

``file`` is the model's label in angle brackets, the convention for sources that are not text files:
the report renderer never tries to print a source line from it (a binary ``.onnx`` file has none).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any, Final

import symshape as ss
from symshape import Expr, Function, Span, Var

__all__ = ["OnnxSpan", "node_what", "stamp"]


def node_what(name: str, op_type: str, domain: str = "") -> str:
    """How a report names a node: ``node 'Reshape_12' (Reshape)``; unnamed nodes by op and index
    are named by the caller (``node #3 (Reshape)``).

    >>> node_what("mm", "FusedMatMul", "com.microsoft")
    "node 'mm' (com.microsoft.FusedMatMul)"
    """
    op = f"{domain}.{op_type}" if domain and domain != "ai.onnx" else op_type
    return f"node '{name}' ({op})" if name else f"node ({op})"


@dataclass(frozen=True, order=True)
class OnnxSpan(Span):
    """A place in an ONNX model (see the module docstring)."""

    what: str = ""

    @staticmethod
    def at(model: str, position: int, what: str) -> OnnxSpan:
        """The span of the ``position``-th place (1-based) of ``model``, described by ``what``."""
        return OnnxSpan.in_file(f"<{model}>", position, what)

    @staticmethod
    def in_file(file: str, position: int, what: str) -> OnnxSpan:
        """:meth:`at` with the ``file`` field (``<model>``) made by the caller (once per model)."""
        if not _FAST:
            return OnnxSpan(file, position, 1, what)
        # one per node, initializer and input: built without the frozen dataclass's ``__init__``
        # (which sets each field through ``object.__setattr__``), the same fields in the same order
        s: OnnxSpan = _new(OnnxSpan)
        d = s.__dict__
        d["file"] = file
        d["line"] = position
        d["column"] = 1
        d["context"] = None
        d["what"] = what
        return s

    @property
    def model(self) -> str:
        """The model's label (its path as given, or ``onnx`` for an in-memory model)."""
        f = self.file
        return f[1:-1] if f.startswith("<") and f.endswith(">") else f

    def __str__(self) -> str:
        return f"{self.model}: {self.what}"

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "column": self.column, "what": self.what}


_new: Final[Any] = object.__new__
#: whether :meth:`OnnxSpan.at` may fill the fields itself (else ``Span`` changed shape: the constructor)
_FAST: Final = tuple(f.name for f in fields(OnnxSpan)) == ("file", "line", "column", "context", "what")


def stamp(outs: Sequence[Expr | None], inputs: Callable[[], set[int]], span: OnnxSpan) -> None:
    """Give every expression a converter built the node's span (stopping at its inputs: the ids of
    their expressions, asked for only when needed). Expressions that have an ``OnnxSpan``
    already (built in the node's :func:`~symshape.source.span_scope`) are not walked."""
    stack: list[Expr] = [e for e in outs if e is not None and type(e.span) is not OnnxSpan]
    if not stack:
        return
    existing = inputs()
    seen: set[int] = set()
    while stack:
        e = stack.pop()
        if (
            id(e) in existing
            or id(e) in seen
            or isinstance(e, (Var, Function))
            or isinstance(e.span, OnnxSpan)
        ):
            continue
        seen.add(id(e))
        e.span = span
        if isinstance(e, ss.Call):
            stack.extend(a for a in e.args)
        elif isinstance(e, ss.Tuple):
            stack.extend(e.fields)
        elif isinstance(e, ss.TupleGetItem):
            stack.append(e.tuple_value)
