"""A ``Loop`` body's checks where the trip count may be 0: the body runs only where it is ``>= 1``
(onnxruntime and the reference evaluator give the initial states and run none of the body), so
each condition the body's operators state holds where the loop runs: ``M == 0 or cond``.

:func:`premised` rebuilds the body's application (the block :meth:`NodeContext.apply` gives) with
each operator call ``op(*args, **attrs)`` replaced by ``op'(*args, **attrs, when_run=M)``:
``op'`` has ``op``'s name, arguments and attributes (what reads calls by name, the value ranges
and the index bounds among them, reads them as before) and a relation that runs ``op``'s with a
context whose :meth:`~symshape.relations.base.Context.require`, ``prove``, ``known_verdict`` and
``assume`` see each condition under the premise ``M >= 1`` (``M`` the trip count's value, a
size that may be 0). Structural failures (a rank, a dtype), the equalities a unification makes
and the index bounds of the value ranges (:mod:`symshape.ir.index_bounds`) stay unconditional.
The calls of a data-dependent size (``nonzero``, ``unique``) are left as they are (a copy would
be a second size), and so are nested functions, ``If`` and ``Match`` (a nested ``Loop`` or
``Scan`` body is a ``Dataflow`` block: rebuilt). The expressions of the outer graph the body
reads are not copied.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Collection, Sequence
from typing import Any, Final, NoReturn, cast

from symshape import Expr
from symshape.encoding.conds import Cond, any_of, eq, lt
from symshape.encoding.dims import Dim, bounds, dmin
from symshape.encoding.types import Attrs, IncompleteType, TensorType, Type
from symshape.errors import ErrorCode
from symshape.ir.index_bounds import WHEN_RUN
from symshape.ir.nodes import Call, Constant, Dataflow, Tuple, TupleGetItem, Var
from symshape.ir.op import Op
from symshape.relations.base import RELATIONS, Context, Message, RelationFn, get_relation, register_relation
from symshape.relations.dynamic import SIZE_OPS
from symshape.relations.values import entries_of

__all__ = ["KEY", "premised", "trip_size"]

#: the relation name prefix of an operator's premised form
_PREFIX: Final = "onnx.when_run:"
#: premised operators by the original (one per operator, made on first use)
_OPS: dict[Op, Op] = {}
#: the expressions a rebuilt body replaced, kept while their importer lives (its probes remember
#: types by ``id``: a freed expression's id must not come back as another's)
_KEPT: weakref.WeakKeyDictionary[Any, list[object]] = weakref.WeakKeyDictionary()


class _Premised(Context):
    """The context a premised relation gives the original: each condition stated, proved or
    assumed as ``M == 0 or cond`` (``M < 1`` where the trip count ``M`` may be negative)."""

    __slots__ = ("_c", "_not")

    def __init__(self, inner: Context, m: Dim) -> None:
        self._c = inner
        self._not = eq(m, 0) if bounds(m)[0] >= 0 else lt(m, 1)  # (the loop does not run)
        self.num_inputs = inner.num_inputs
        self.final = inner.final
        self.name = inner.name

    def _under(self, cond: Cond) -> Cond:
        return any_of(self._not, cond)

    def resolve(self, t: Type) -> Type:
        return self._c.resolve(t)

    def resolve_dim(self, d: Dim) -> Dim:
        return self._c.resolve_dim(d)

    def unify(self, a: Type, b: Type) -> Type:
        return self._c.unify(a, b)

    def unify_dim(self, a: Dim, b: Dim) -> Dim:
        return self._c.unify_dim(a, b)

    def assign(self, out: Type, value: Type) -> Type:
        return self._c.assign(out, value)

    def require(self, cond: Cond, code: ErrorCode | str, message: Message) -> str:
        return self._c.require(self._under(cond), code, message)

    def prove(self, cond: Cond) -> bool | None:
        return self._c.prove(self._under(cond))

    def known_verdict(self, cond: Cond) -> str | None:
        return self._c.known_verdict(self._under(cond))

    def assume(self, cond: Cond) -> None:
        self._c.assume(self._under(cond))

    def fresh_dim(self) -> Dim:
        return self._c.fresh_dim()

    def fresh_hole(self) -> IncompleteType:
        return self._c.fresh_hole()

    def fail(self, code: ErrorCode | str, message: str) -> NoReturn:
        self._c.fail(code, message)


#: the attribute of a premised call that holds the trip count (a size)
KEY: Final = WHEN_RUN  # (the index bounds of such a call are required only where it runs too)


def _premised_relation(inner: RelationFn) -> RelationFn:
    def rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
        m = attrs[KEY]
        assert isinstance(m, Dim)
        rest = Attrs({k: v for k, v in attrs.items() if k != KEY})
        return inner(_Premised(ctx, m), args, rest)

    rel.__doc__ = f"(where the Loop runs) {inner.__doc__ or ''}"
    return rel


def _premised_op(op: Op) -> Op:
    hit = _OPS.get(op)
    if hit is None:
        name = _PREFIX + op.relation
        if name not in RELATIONS:
            register_relation(name, _premised_relation(get_relation(op.relation).fn))
        hit = _OPS[op] = Op(op.name, name, op.num_inputs, op.pure, None, None, op.doc, None)
    return hit


def trip_size(t: Type | None) -> Dim | None:
    """The trip count's value (of its type ``t``) where it is a size that may be 0, else None."""
    if not isinstance(t, TensorType):
        return None
    es = (t.value,) if t.shape == () else entries_of(t)
    m = es[0] if es and len(es) == 1 else None
    return m if isinstance(m, Dim) and bounds(m)[0] < 1 else None


def premised(outs: Sequence[Expr], trip: Dim, outer: Collection[int], importer: object) -> list[Expr]:
    """``outs`` (a body's outputs, as :meth:`NodeContext.apply` gives them) with each operator call
    made ``Loop``'s own under the premise that the trip count ``trip`` is ``>= 1``; ``outer``: the
    ids of the expressions of the enclosing graphs and of the body's inputs (not copied)."""
    memo: dict[int, Expr] = {}
    kept: list[object] = []

    def walk(e: Expr) -> Expr:
        hit = memo.get(id(e))
        if hit is not None:
            return hit
        new = _rebuilt(e, walk, trip, outer)
        if new is not e:
            new.span = e.span
            kept.append(e)
        memo[id(e)] = new
        return new

    got = [walk(o) for o in outs]
    if kept:
        _KEPT.setdefault(importer, []).extend(kept)
    return got


def _rebuilt(e: Expr, walk: Callable[[Expr], Expr], trip: Dim, outer: Collection[int]) -> Expr:
    """``e`` with its operator calls premised (``e`` itself where nothing changes)."""
    if id(e) in outer or isinstance(e, (Var, Constant)):
        return e
    if isinstance(e, Call):
        c = e.callee
        if not isinstance(c, Op) or c.relation in SIZE_OPS:
            return e  # (a premised call of a nested Loop's body is premised again: both run it)
        if KEY in e.attrs:  # (a nested Loop's body: it runs where both trip counts are >= 1)
            both = dmin(cast(Dim, e.attrs[KEY]), trip)
            return Call(c, list(map(walk, e.args)), {**dict(e.attrs), KEY: both})
        return Call(_premised_op(c), list(map(walk, e.args)), {**dict(e.attrs), KEY: trip})
    if isinstance(e, TupleGetItem):
        t = walk(e.tuple_value)
        return e if t is e.tuple_value else TupleGetItem(t, e.index)
    if isinstance(e, Tuple):
        fs = [walk(f) for f in e.fields]
        return e if all(a is b for a, b in zip(fs, e.fields)) else Tuple(fs)
    if isinstance(e, Dataflow):
        bs = [(v, walk(x)) for v, x in e.bindings]
        body = walk(e.body)
        same = body is e.body and all(a[1] is b[1] for a, b in zip(bs, e.bindings))
        return e if same else Dataflow(bs, body)
    return e
