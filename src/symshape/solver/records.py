"""What the solver keeps of what it makes in bulk, as records until something reads it: the
relation instances of operator calls solved when added (see
:func:`~symshape.solver.instance.add_call`) and the origins of weights' annotations (see
:meth:`SolverRecords.admit_weight`). A model has thousands of both; only explanations and
displays read them, through ``rels``, ``producer`` and ``sources``, which make them then."""

from __future__ import annotations

import copy

from symshape.encoding.leaf_types import plain_copy
from symshape.encoding.types import IncompleteType, TensorType, Type
from symshape.solver.diagnostics import Origin, next_origin_seq
from symshape.solver.instance import (
    RelationInstance,
    RelationState,
    SolvedCall,
    make_instance,
    solved_instance,
)
from symshape.solver.origins import annotation_origin, annotation_origin_at
from symshape.source import Span

__all__ = ["SolverRecords"]

_SOLVED = RelationState.SOLVED


class SolverRecords:
    """The part of :class:`~symshape.solver.solve.TypeSolver` that keeps records (see the module
    docstring); the solver's constructor sets the fields."""

    #: the instances in creation order (an instance's id is its index); an operator call solved
    #: when added is kept as its record until something reads ``rels`` (see add_call)
    _rels: list[RelationInstance | SolvedCall]
    _lazy_from: int  # the index of the first such record (-1: none)
    _producer: dict[IncompleteType, RelationInstance]  # (see ``producer``)
    _sources: dict[int, tuple[Type, Origin]]  # (see ``sources``)
    _lazy_sources: bool  # some of them are a weight's record (see ``admit_weight``)
    _admitted: dict[int, Type]

    def _init_records(self) -> None:
        self._rels = []
        self._lazy_from = -1
        self._producer = {}
        self._sources = {}
        self._lazy_sources = False
        self._rec_index: dict[IncompleteType, int] = {}  # (see ``producer_of``)
        self._rec_upto = 0

    def admit(self, t: Type, origin: Origin) -> Type:  # (the solver's)
        raise NotImplementedError

    @property
    def rels(self) -> list[RelationInstance]:
        """The relation instances, in creation order (an instance's id is its index)."""
        if self._lazy_from >= 0:
            self._make_instances()
        return self._rels  # type: ignore[return-value]  # (records made instances above)

    @property
    def producer(self) -> dict[IncompleteType, RelationInstance]:
        """The relation instance that writes each output hole."""
        if self._lazy_from >= 0:
            self._make_instances()
        return self._producer

    def _make_instances(self) -> None:
        """Make the instances of the operator calls solved when added (kept as records by
        :func:`~symshape.solver.instance.add_call` until read; an explanation reads all of a
        program's)."""
        rels, producer = self._rels, self._producer
        for i in range(self._lazy_from, len(rels)):
            r = rels[i]
            if type(r) is tuple:
                rel = rels[i] = make_instance(r, _SOLVED, 1)
                producer[r[2][-1]] = rel  # type: ignore[index]  # (the output hole)
        self._lazy_from = -1

    def _make_one(self, i: int, r: SolvedCall) -> RelationInstance:
        """The instance of the record ``r``, at index ``i``, put in its place."""
        rel = self._rels[i] = solved_instance(r)
        self._producer[r[2][-1]] = rel  # type: ignore[index]  # (the output hole)
        return rel

    def producer_of(self, h: IncompleteType) -> RelationInstance | None:
        """``producer.get(h)``, making only that instance (a result asks for a few calls' ones,
        e.g. the index checks of ``take``)."""
        rel = self._producer.get(h)
        if rel is not None or self._lazy_from < 0:
            return rel
        rels, index = self._rels, self._rec_index
        n = len(rels)
        for i in range(self._rec_upto, n):  # (the records' outputs, indexed once)
            r = rels[i]
            if type(r) is tuple:
                index[r[2][-1]] = i  # type: ignore[index]
        self._rec_upto = n
        k = index.get(h)
        if k is None:
            return None
        r = rels[k]
        return self._make_one(k, r) if isinstance(r, tuple) else r

    def _rel_at(self, rid: int) -> RelationInstance:
        """The instance of id ``rid`` (made from its record if need be)."""
        r = self._rels[rid]
        return self._make_one(rid, r) if isinstance(r, tuple) else r

    @property
    def sources(self) -> dict[int, tuple[Type, Origin]]:
        """Where each admitted annotation came from: ``id(type) -> (type, origin)``, in admission
        order (a weight's origin made when first read, see :meth:`admit_weight`)."""
        if self._lazy_sources:
            sources = self._sources
            for k, r in sources.items():
                if len(r) != 2:  # (type, name, span, expr, seq)
                    sources[k] = (r[0], annotation_origin_at(r[1], r[0], r[2], r[3], r[4]))
            self._lazy_sources = False
        return self._sources

    def weight_tables(self) -> tuple[dict[int, tuple[Type, Origin]], dict[int, Type]]:
        """The tables :meth:`admit_weight` writes, for a caller that records many weights inline:
        ``sources`` (where a weight's record goes, ``(type, name, span, expr, seq)``, its seq taken
        when admitted) and the admitted types by id."""
        self._lazy_sources = True
        return self._sources, self._admitted

    def admit_weight(self, t: TensorType, name: str, span: Span | None, expr: object) -> Type:
        """``admit_settled(t, annotation_origin(name, t, span, expr))``, the recording inline: the
        annotation of a variable ``name`` (a model's weight, once per weight) by ``t`` of constant
        shape. Its origin, numbered now, is made when ``sources`` is first read (a model has
        hundreds of weights; only an explanation reads their origins): until then its source is
        the record ``(t, name, span, expr, seq)``."""
        if t.value is not None:
            return self.admit(t, annotation_origin(name, t, span, expr))
        sources = self._sources
        seq = next_origin_seq()
        if id(t) in sources:  # it annotates another place already: a copy (see record_annotation)
            t = plain_copy(t) if type(t) is TensorType else copy.copy(t)
        sources[id(t)] = (t, name, span, expr, seq)  # type: ignore[assignment]
        self._lazy_sources = True
        self._admitted[id(t)] = t
        return t

