"""What a converted fx node stands for, and the importer's own diagnostics.

Every fx node becomes one *value*:

* a symshape expression (:class:`symshape.Expr`) for a tensor,
* a Python tuple or list of values for a node with several results (``split``, ``lstm``) and for
  the Python containers a model builds,
* a *static* Python value the importer knows without inference: ints, floats, bools, None,
  strings, dtypes, slices, and :class:`symshape.Dim` for sizes read from an input annotation or
  a parameter (``x.shape[0]`` of an input annotated ``(b, 3, h, w)`` is the dimension ``b``),
* an :class:`Opaque` value: a Python number or size tuple the program computes from the shape of
  a tensor whose shape only inference knows (``x.size(0)`` of an intermediate tensor). Those are
  *shape values*: each int (or size tuple) carries an int64 expression whose value is the size
  (:mod:`symshape.torch.shape_values`), which the converters pass to the operators that read
  sizes from values (``view``, ``expand``, ``zeros``, ``arange``, slicing). A size without a
  value (a float, ``x.dim()``) used as a size gives an ``unsupported-op`` diagnostic that names
  where it came from; used as a scalar operand of tensor arithmetic an opaque value is a 0-d
  tensor (its value does not matter to the types).

>>> o = Opaque("size", "relu.size()", None, "sizes")
>>> o.item(0).describe()
'`relu.size()[0]` (a run-time shape value)'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import symshape as ss

__all__ = [
    "UNSUPPORTED_OP",
    "DtypeOf",
    "Opaque",
    "static_shape",
    "Unsupported",
    "NeedsShapeValues",
    "unsupported_diagnostic",
]

#: The catalogue code of an operator or node the importer does not support (design.md section 8).
#: The ONNX importer adds it to ``symshape.errors``; until then it is referenced here, by string.
UNSUPPORTED_OP = "unsupported-op"


@dataclass(frozen=True)
class Opaque:
    """A Python value computed from a run-time shape (see the module docstring).

    ``origin`` is the fx node it was born at, ``what`` says how (for messages), ``span`` where;
    ``kind`` is ``"int"``, ``"float"``, ``"bool"``, ``"sizes"`` (a ``torch.Size``) or ``"any"``;
    ``cascade`` marks values that stand for the result of an unsupported node, whose use is
    not reported again. ``of`` and ``index`` say which tensor's which dimension a size is
    (``x.size(0)``), when it is exactly that: ``x.view(x.size(0), -1)`` needs no value, as
    reshape can copy a dimension (Relay's ``0``). ``value`` is the int64 expression that carries
    the size as a shape value (0-d for an int, 1-d for sizes; see
    :mod:`symshape.torch.shape_values`), None where there is none (floats, ``x.dim()``).
    ``negates`` is the size this value is the negative of (``-t`` of ``t = x.size(1)``): a slice
    bound ``x[:, -t:]`` counts it from the end.
    """

    origin: str
    what: str
    span: ss.Span | None
    kind: str = "int"
    cascade: bool = False
    of: ss.Expr | None = field(default=None, compare=False)
    index: int | None = None
    value: ss.Expr | None = field(default=None, compare=False)
    negates: Opaque | None = field(default=None, compare=False)

    def describe(self) -> str:
        return f"`{self.what}` (a run-time shape value)" if self.kind != "any" else self.what

    def item(self, index: object) -> Opaque:
        """An entry (or a slice, which stays a size tuple) of an opaque size tuple."""
        base = self.index or 0
        if isinstance(index, slice):
            start = index.start if isinstance(index.start, int) else None
            keep = self.of is not None and index.step in (None, 1) and start is not None and start >= 0
            return Opaque(
                self.origin,
                f"{self.what}[{_slice_str(index)}]",
                self.span,
                "sizes",
                self.cascade,
                self.of if keep else None,
                base + start if keep and start is not None else None,
            )
        exact = self.of is not None and isinstance(index, int) and index >= 0
        return Opaque(
            self.origin,
            f"{self.what}[{index}]",
            self.span,
            "int",
            self.cascade,
            self.of if exact else None,
            base + index if exact and isinstance(index, int) else None,
        )

    def derived(self, kind: str) -> Opaque:
        """A value computed from this one (arithmetic keeps the origin)."""
        return Opaque(self.origin, self.what, self.span, kind, self.cascade)


@dataclass(frozen=True)
class DtypeOf:
    """``x.dtype`` of a tensor whose dtype only inference knows (``y.to(x.dtype)`` casts like x)."""

    of: ss.Expr = field(compare=False)


def static_shape(e: object) -> tuple[ss.Dim, ...] | None:
    """The shape of a tensor the importer knows without inference: a model input or parameter
    (an annotated variable of known rank); None for anything computed."""
    if isinstance(e, ss.Var) and isinstance(e.type_annotation, ss.TensorType):
        t = e.type_annotation
        if t.ndim is not None:
            return tuple(t.dims)
    return None


def _slice_str(s: slice) -> str:
    parts = ["" if v is None else str(v) for v in (s.start, s.stop, s.step)]
    return ":".join(parts[:2]) if s.step is None else ":".join(parts)


class Unsupported(Exception):
    """Raised by a converter for a call (or argument form) the importer does not support."""

    def __init__(self, message: str, notes: Sequence[tuple[str, ss.Span | None]] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.notes = tuple(notes)


class NeedsShapeValues(Unsupported):
    """A size the converter needs is a run-time value it cannot use (:class:`Opaque`): one without
    a shape value (a float, ``x.dim()``), or a converter that needs the number at import time."""

    def __init__(self, what: str, value: Opaque) -> None:
        why = (
            "symshape follows run-time sizes as values only through integer arithmetic"
            if value.value is None
            else "this call needs it as a number at import time"
        )
        super().__init__(
            f"{what} needs a size known at import time, but it is computed from a tensor's shape "
            f"at run time ({why})",
            [(f"the size comes from {value.describe()}", value.span)],
        )
        self.value = value


def unsupported_diagnostic(
    message: str, span: ss.Span | None, notes: Sequence[tuple[str, ss.Span | None]] = ()
) -> ss.Diagnostic:
    """An ``unsupported-op`` error diagnostic."""
    from symshape.solver import Note

    return ss.Diagnostic(UNSUPPORTED_OP, message, span, tuple(Note(m, s) for m, s in notes))
