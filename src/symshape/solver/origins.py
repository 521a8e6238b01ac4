"""Origins made on the solver's hot path: one per operator call and per unification.

:func:`make_origin` and :func:`relation_origin` build the same :class:`Origin` objects as its
constructor, numbered from the same counter, without the frozen dataclass's ``__init__`` (which
sets each slot through ``object.__setattr__``, twice the time). Should ``Origin`` change shape,
they fall back to the plain constructor.

>>> o = relation_origin("add", None, 3)
>>> (o.kind, o.label, o.payload, o.expr)
('relation', 'add', 3, None)
"""

from __future__ import annotations

import dataclasses
from typing import Any, cast

from symshape.solver import diagnostics as _diagnostics
from symshape.solver.diagnostics import Origin, OriginKind
from symshape.source import Span

__all__ = ["annotation_origin", "annotation_origin_at", "make_origin", "relation_origin", "AnnotationOrigin"]


_ORIGIN_FIELDS = ("kind", "label", "span", "seq", "payload", "expr")


def _origin_fast(
    kind: str, label: str, span: Span | None, payload: object = None, expr: object = None
) -> Origin:
    """``Origin(kind, label, span, payload=payload, expr=expr)`` without the dataclass ``__init__``."""
    o: Origin = _new(Origin)
    _set_kind(o, kind)
    _set_label(o, label)
    _set_span(o, span)
    _set_seq(o, _next_origin())
    _set_payload(o, payload)
    _set_expr(o, expr)
    return o


def _origin_plain(
    kind: str, label: str, span: Span | None, payload: object = None, expr: object = None
) -> Origin:
    return Origin(kind, label, span, payload=payload, expr=expr)


class _RecordField:
    """A field of an :class:`AnnotationOrigin` kept in its record, at index ``i``."""

    __slots__ = ("i",)

    def __init__(self, i: int) -> None:
        self.i = i

    def __get__(self, o: AnnotationOrigin | None, owner: type | None = None) -> Any:
        return self if o is None else o._src[self.i]

    def __set__(self, o: AnnotationOrigin, value: object) -> None:
        _record(o)[self.i] = value


class AnnotationOrigin(Origin):
    """The origin of a variable's annotation, ``"`x` is annotated `Tensor[(n, 3), float32]`"``,
    whose label is printed when first read (a model binds hundreds of weights to annotated
    variables, and their labels are read only when a report names them). The variable's name and
    its annotation are taken when the origin is made, so the label is what an eager one reads.

    Made at a weight's admission, it sets two of its fields as :class:`Origin`'s slots (``kind``,
    read on admission, and ``seq``) and keeps the others in one record (a list, set by one call:
    each slot of a frozen dataclass is set through a descriptor's wrapper): ``label`` (None until
    printed), ``span``, ``payload``, ``expr``, the name and the annotation, each field read and
    written through a descriptor of this class. It is as frozen as every origin
    (``Origin.__setattr__`` refuses each field); ``object.__setattr__``, ``copy``, ``pickle`` and
    :func:`dataclasses.replace` go through the descriptors' setters."""

    __slots__ = ("_src",)
    _src: list[Any]  # [label or None, span, payload, expr, name, annotation]

    @property
    def label(self) -> str:
        r = self._src
        text: str | None = r[0]
        if text is None:
            text = r[0] = f"`{r[4]}` is annotated `{r[5]}`"
        return text

    @label.setter
    def label(self, value: str) -> None:  # (``copy``/``pickle`` restore the printed label)
        _record(self)[0] = value

    # (typed as the fields they stand for)
    span = cast("Span | None", _RecordField(1))
    payload = cast(object, _RecordField(2))
    expr = cast(object, _RecordField(3))


def _record(o: AnnotationOrigin) -> list[Any]:
    """``o``'s record, made empty first when ``o`` is being restored (``copy``, ``pickle``,
    :func:`dataclasses.replace` set the fields one by one on a fresh object)."""
    try:
        return o._src
    except AttributeError:
        r: list[Any] = [None] * 6
        _set_src(o, r)
        return r


def _annotation_origin_fast(name: str, ann: object, span: Span | None, expr: object) -> Origin:
    """``Origin("annotation", f"`{name}` is annotated `{ann}`", span, expr=expr)``, the label
    printed when first read (see :class:`AnnotationOrigin`)."""
    o: AnnotationOrigin = _new(AnnotationOrigin)
    _set_kind(o, "annotation")
    _set_seq(o, _next_origin())
    _set_src(o, [None, span, None, expr, name, ann])
    return o


def _annotation_origin_plain(name: str, ann: object, span: Span | None, expr: object) -> Origin:
    return Origin("annotation", f"`{name}` is annotated `{ann}`", span, expr=expr)


def _annotation_origin_at_fast(name: str, ann: object, span: Span | None, expr: object, seq: int) -> Origin:
    """:func:`annotation_origin` numbered ``seq`` (a number taken from the counter before: the
    origin of a weight's annotation is made when first read, see ``TypeSolver.sources``)."""
    o: AnnotationOrigin = _new(AnnotationOrigin)
    _set_kind(o, "annotation")
    _set_seq(o, seq)
    _set_src(o, [None, span, None, expr, name, ann])
    return o


def _annotation_origin_at_plain(name: str, ann: object, span: Span | None, expr: object, seq: int) -> Origin:
    return Origin("annotation", f"`{name}` is annotated `{ann}`", span, seq, expr=expr)


def _relation_origin_fast(op: str, span: Span | None, rid: int) -> Origin:
    return _origin_fast(OriginKind.RELATION, op, span, rid)


def _relation_origin_plain(op: str, span: Span | None, rid: int) -> Origin:
    return Origin(OriginKind.RELATION, op, span, payload=rid)


_new = object.__new__
_set_src = AnnotationOrigin.__dict__["_src"].__set__
_next_origin = _diagnostics.next_origin_seq
if tuple(f.name for f in dataclasses.fields(Origin)) == _ORIGIN_FIELDS and all(
    f.default is None for f in dataclasses.fields(Origin)[4:]
):
    _set_kind, _set_label, _set_span, _set_seq, _set_payload, _set_expr = (
        Origin.__dict__[f].__set__ for f in _ORIGIN_FIELDS
    )
    relation_origin = _relation_origin_fast
    make_origin = _origin_fast
    annotation_origin = _annotation_origin_fast
    annotation_origin_at = _annotation_origin_at_fast
else:  # Origin changed shape: the plain constructor
    relation_origin = _relation_origin_plain
    make_origin = _origin_plain
    annotation_origin = _annotation_origin_plain
    annotation_origin_at = _annotation_origin_at_plain
