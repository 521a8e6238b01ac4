"""Eager evaluation of relations over ground inputs, memoized.

Most relation instances in a real program see *ground* inputs — tensor types (or tuples of them)
whose dimensions mention no solver unknowns — and compute their outputs without any reasoning:
every condition they state is decided by the canonical forms. For them the general machinery
(unifying the output hole, tracking conditions, trigger lists) does nothing useful, and the
result depends on nothing but the relation, its inputs and its attributes.

:func:`eager_outputs` runs a relation in a pure context that *only* accepts that case: output
holes receive values, any other unification must already hold structurally, a condition must
decide to ``True`` on its canonical form, and anything else — an unknown, a fresh hole, a condition
that needs Z3 or is false, a failure, a deferral — abandons the eager run (:class:`NotEager`), and
the solver runs the relation the general way, which then reports exactly what it reported before.
Because an eager result is a pure function of ``(relation, inputs, attributes)``, :class:`EagerMemo`
caches it: a model that repeats a layer computes each distinct output type once.

>>> import symshape as ss
>>> from symshape.relations import get_relation
>>> n = ss.dim("n")
>>> out = eager_outputs(get_relation("broadcast"), (ss.Tensor((n, 1)), ss.Tensor((1, 4))), ss.Attrs(), 1)
>>> out is not None and str(out[0])
'Tensor[(n, 4), float32]'
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Final, NoReturn

from symshape.encoding.conds import BoolConst, Cond, decide
from symshape.encoding.dim_atoms import AnyDim
from symshape.encoding.dims import Dim, bounds
from symshape.encoding.type_walks import iter_dims, iter_value_dims
from symshape.encoding.types import Attrs, IncompleteType, TensorType, TupleType, Type
from symshape.errors import ErrorCode
from symshape.relations.base import Context, RelationDef
from symshape.solver.alpha import alpha_types_key
from symshape.solver.eager_fast import FAST

__all__ = ["NotEager", "is_ground", "eager_outputs", "EagerMemo"]


class NotEager(Exception):
    """The relation asked for something only the general solver can give."""


def _give_up() -> NoReturn:
    raise NotEager


def is_ground(t: Type) -> bool:
    """Whether ``t`` is a tensor type with a known shape of unknown-free dimensions and a known
    dtype, or a tuple of such types (the inputs an eager run accepts). Iterative: nested tuples
    of any depth."""
    stack = [t]
    while stack:
        cur = stack.pop()
        cls = type(cur)
        if cls is TupleType:
            stack.extend(cur.fields)  # type: ignore[union-attr]
            continue
        if cls is not TensorType:
            return False
        if cur._cshape:  # type: ignore[union-attr]
            continue
        shape = cur.shape  # type: ignore[union-attr]
        if type(shape) is not tuple or type(cur.dtype) is not str:  # type: ignore[union-attr]
            if not (shape is None and type(cur.dtype) is str):  # type: ignore[union-attr]
                return False
            continue
        for d in shape:
            if d._hv is not False and d.has_unknowns:
                return False
    return True


def _symbolic_dims(t: Type) -> Iterator[Dim | None]:
    """The dimensions of ``t``'s tensors (a tuple's fields, nested) that are not constants; None
    for a part that is not a tensor of known rank."""
    stack = [t]
    while stack:
        cur = stack.pop()
        if type(cur) is TupleType:
            stack.extend(cur.fields)
            continue
        if type(cur) is not TensorType or type(cur.shape) is not tuple:
            yield None
            continue
        for d in cur.shape:
            terms = d.terms
            if terms and (len(terms) > 1 or terms[0][0]):
                yield d


def _constant_shape(t: Type) -> bool:
    """Whether ``t`` (ground) is a tensor type whose dimensions are all constants, or a tuple of
    such types."""
    return next(_symbolic_dims(t), _NONE) is _NONE


def _nonnegative(t: Type) -> bool:
    """Whether every dimension of a ground output is provably >= 0 by its bounds (else the
    general path states the condition)."""
    # (the common cases without a generator: a tensor, a tuple of tensors, of known ranks)
    if type(t) is TensorType and t._cshape:
        return True
    for x in t.fields if type(t) is TupleType else (t,):
        if type(x) is not TensorType or type(x.shape) is not tuple:
            break
        if x._cshape:
            continue  # (constants: checked nonnegative when built)
        for d in x.shape:
            terms = d.terms
            if terms and (len(terms) > 1 or terms[0][0]) and bounds(d)[0] < 0:
                return False
    else:
        return True
    return all(d is None or bounds(d)[0] >= 0 for d in _symbolic_dims(t))


def _anys(ts: Sequence[Type]) -> set[AnyDim]:
    """The numbered ``?`` atoms of ``ts``' shapes and values."""
    out: set[AnyDim] = set()
    for t in ts:
        if type(t) is TensorType and t._cshape and t.value is None:
            continue
        if type(t) is TupleType and _settled_fields(t):
            continue  # (a ``batch_norm``'s tuple: nothing to walk)
        for d in (*iter_dims(t), *iter_value_dims(t)):
            terms = d.terms
            if terms and (len(terms) > 1 or terms[0][0]):
                out.update(a for a in d.atoms() if type(a) is AnyDim)
    return out


def _settled_fields(t: TupleType) -> bool:
    """Whether every field of ``t`` is a tensor type of constant shape without a value (a ``?``
    lives in no such field)."""
    for f in t.fields:
        if type(f) is not TensorType or not f._cshape or f.value is not None:
            return False
    return True


def _made_anys(outputs: Sequence[Type], inputs: Sequence[Type]) -> bool:
    """Whether ``outputs`` hold a ``?`` that ``inputs`` do not: a size the run decides, made by
    this run of the relation (another call with the same inputs decides its own)."""
    made = _anys(outputs)
    return bool(made) and not made <= _anys(inputs)


def _ground_tensor(t: Type) -> int:
    """What :func:`is_ground` and :func:`_constant_shape` say of ``t`` in one walk, for a tensor
    type of known rank and dtype or a tuple of them: 0 not ground, 1 ground with a symbolic
    dimension, 2 ground of constant shape; -1 for any other type (ask them)."""
    if type(t) is TensorType:  # (the common case first: a tensor of constant shape)
        if t._cshape:
            return 2
        shape = t.shape
        if type(shape) is tuple and type(t.dtype) is str:
            for d in shape:
                terms = d.terms
                if terms and (len(terms) > 1 or terms[0][0]):  # not a constant: the loop below
                    break
            else:
                return 2
    out = 2
    for x in t.fields if type(t) is TupleType else (t,):
        if type(x) is not TensorType:
            return -1
        if x._cshape:
            continue  # (a constant shape of a known dtype)
        shape = x.shape
        if type(shape) is not tuple or type(x.dtype) is not str:
            return -1
        for d in shape:
            terms = d.terms
            if terms and (len(terms) > 1 or terms[0][0]):  # not a constant
                if d._hv is not False and d.has_unknowns:
                    return 0
                out = 1
    return out


_NONE: Final = object()
_new: Final = object.__new__


class _EagerCtx(Context):
    """A context in which a relation either computes its outputs from ground inputs or gives up."""

    __slots__ = ("outs", "values", "final", "num_inputs", "name")

    def __init__(self, name: str, num_inputs: int, outs: tuple[IncompleteType, ...]) -> None:
        self.name = name
        self.num_inputs = num_inputs
        self.final = False
        self.outs = outs
        self.values: list[Type | None] = [None] * len(outs)

    def _slot(self, t: Type) -> int:
        if type(t) is IncompleteType:
            for i, h in enumerate(self.outs):
                if h is t:
                    return i
            _give_up()
        return -1

    def resolve(self, t: Type) -> Type:
        if type(t) is IncompleteType:
            i = self._slot(t)
            v = self.values[i]
            return t if v is None else v
        return t

    def resolve_dim(self, d: Dim) -> Dim:
        return d

    def unify(self, a: Type, b: Type) -> Type:
        if type(a) is not IncompleteType:
            if type(b) is not IncompleteType:
                # two types (a relation checking a parameter): they must be equal already (two
                # tensor types compared as their dataclass does, inline)
                if a is b:
                    return a
                if type(a) is TensorType and type(b) is TensorType:
                    if (
                        a.shape == b.shape
                        and a.dtype == b.dtype
                        and a.value == b.value
                        and a.range == b.range
                    ):
                        return a
                elif a == b:
                    return a
                _give_up()
            a, b = b, a
        elif type(b) is IncompleteType:
            _give_up()  # two holes: a placeholder unified with another hole, or a foreign hole
        # ``a`` is a hole: one of the outputs' placeholders, or the run gives up; ``b`` its value
        # (``_slot``, inline: holes compare by identity)
        try:
            k = self.outs.index(a)
        except ValueError:
            _give_up()
        v = b
        if type(v) is not TensorType or not v._cshape:  # (a constant shape is ground)
            g = _ground_tensor(v)  # (a tensor or a tuple of them: is_ground in one loop)
            if g == 0 or (g < 0 and not is_ground(v)):
                _give_up()
        prev = self.values[k]
        if prev is None:
            self.values[k] = v
            return v
        if prev == v:
            return prev
        _give_up()

    # (Relay's ``Assign`` is unification: without Context.assign's extra call)
    assign = unify  # type: ignore[assignment]  # (positional: how relations call it)

    def unify_dim(self, a: Dim, b: Dim) -> Dim:
        if a == b:
            return a
        _give_up()

    def require(self, cond: Cond, code: ErrorCode | str, message: object) -> str:
        if type(cond) is BoolConst and cond.value:
            return "proved"
        _give_up()

    def prove(self, cond: Cond) -> bool | None:
        r = decide(cond)
        if r is None:
            _give_up()
        return r

    def assume(self, cond: Cond) -> None:
        _give_up()

    def fresh_dim(self) -> Dim:
        _give_up()

    def fresh_hole(self) -> IncompleteType:
        _give_up()


def _placeholders(n: int) -> tuple[IncompleteType, ...]:
    return tuple(IncompleteType("type", -1 - i) for i in range(n))


_PLACEHOLDERS: Final = tuple(_placeholders(n) for n in range(8))


def eager_outputs(
    rdef: RelationDef, inputs: Sequence[Type], attrs: Attrs, num_outputs: int
) -> tuple[Type, ...] | None:
    """The outputs of ``rdef`` over ground ``inputs`` when it needs no reasoning, else None."""
    # placeholders with their own ids, so eager runs leave the numbering of holes alone (made
    # once: a placeholder never leaves a run, whose values are ground)
    outs = _PLACEHOLDERS[num_outputs] if num_outputs < len(_PLACEHOLDERS) else _placeholders(num_outputs)
    ctx: _EagerCtx = _new(_EagerCtx)  # (``_EagerCtx(rdef.name, len(inputs), outs)``, inline)
    ctx.name = rdef.name
    ctx.num_inputs = len(inputs)
    ctx.final = False
    ctx.outs = outs
    ctx.values = [None] * len(outs)
    try:
        done: object = rdef.fn(ctx, (*inputs, *outs), attrs)
    except Exception:  # NotEager, a failure, a bad attribute: the general run reports it
        return None
    if done is not True and done != "solved":
        return None
    values = ctx.values
    for v in values:
        if v is None or ((type(v) is not TensorType or not v._cshape) and not _nonnegative(v)):
            return None
    return tuple(values)  # type: ignore[arg-type]  # (none is None)


class EagerMemo:
    """Eager results by ``(relation, attributes, number of outputs, inputs)`` (one per solver).

    An eager run that gives up is also remembered by its inputs *up to renaming the symbols*
    (:func:`~symshape.solver.alpha.alpha_types_key`): a block repeated over fresh symbols (a
    broadcast against a new batch ``m_i``) gives up again, so later instances go straight to the
    general path. That only saves time: the general path computes what an eager run would.
    """

    __slots__ = ("cache", "by_id", "_gave_up", "hits", "misses", "skipped")

    def __init__(self) -> None:
        #: ``(relation, attributes, number of outputs, inputs)`` -> a one-item list holding the
        #: outputs (None: not eager); the list is stored before the run fills it, so that a miss
        #: hashes its key once (``setdefault``)
        self.cache: dict[tuple[object, ...], list[tuple[Type, ...] | None]] = {}
        #: what :meth:`lookup_ids` remembered: ``(relation, id(attributes), *map(id, inputs))`` ->
        #: ``(attributes, inputs, outputs)``. The entry keeps the objects whose ids its key holds,
        #: so a key that matches names the very same objects; no type is hashed or compared (the
        #: solver reads a hit here itself, counting it in ``hits``)
        self.by_id: dict[tuple[object, ...], tuple[Attrs, tuple[Type, ...], tuple[Type, ...] | None]] = {}
        self._gave_up: set[tuple[object, ...]] = set()
        self.hits = 0
        self.misses = 0
        self.skipped = 0

    def lookup(
        self, rdef: RelationDef, inputs: tuple[Type, ...], attrs: Attrs, num_outputs: int
    ) -> tuple[Type, ...] | None:
        """The eager outputs (computed once per distinct key), or None."""
        return self.lookup_ids(rdef, inputs, attrs, None, num_outputs)

    def lookup_ids(
        self,
        rdef: RelationDef,
        inputs: tuple[Type, ...],
        attrs: Attrs,
        ids: tuple[object, ...] | None,
        num_outputs: int = 1,
    ) -> tuple[Type, ...] | None:
        """:meth:`lookup` (of one output unless told), also remembered by ``ids`` (``(rdef,
        id(attrs), *map(id, inputs))``, see ``by_id``) when given and the memo keeps the result."""
        key = (rdef, attrs, num_outputs, inputs)
        cell: list[tuple[Type, ...] | None] = [None]
        try:
            got = self.cache.setdefault(key, cell)
        except TypeError:  # an unhashable attribute value
            return None
        if got is cell:
            val, kept = self._compute(rdef, inputs, attrs, num_outputs)
            if not kept:
                del self.cache[key]
                return val
            cell[0] = val
        else:
            val = got[0]
            self.hits += 1
        if ids is not None:
            self.by_id[ids] = (attrs, inputs, val)
        return val

    def _compute(
        self, rdef: RelationDef, inputs: tuple[Type, ...], attrs: Attrs, num_outputs: int
    ) -> tuple[tuple[Type, ...] | None, bool]:
        """:meth:`lookup_ids` of a key the cache does not hold: the outputs, and whether the memo
        keeps them (the caller stores them)."""
        symbolic = False
        for t in inputs:
            if type(t) is TensorType and t._cshape:
                continue  # (a constant shape: ground, no symbol)
            g = _ground_tensor(t)  # (a tensor: both walks in one)
            if g == 2:
                continue
            if g == 1:
                symbolic = True
                continue
            if g == 0 or not is_ground(t):
                return None, False  # not cached: a key with holes never recurs
            if not symbolic and not _constant_shape(t):
                symbolic = True
        # inputs of constant shapes are their own key up to renaming (no leaves to rename): the
        # cache above has seen them if any run had. The key up to renaming is built only when a
        # run has given up (to look it up) or this one does (to remember it): most runs succeed
        shape_key: tuple[object, ...] | None = None
        gave_up = self._gave_up
        if symbolic and gave_up:
            akey = alpha_types_key(inputs)
            if akey is not None:
                shape_key = (rdef, attrs, num_outputs, akey)
                if shape_key in gave_up:
                    self.skipped += 1
                    return None, False
        self.misses += 1
        fast = FAST.get(rdef) if not symbolic and num_outputs == 1 else None
        out = None if fast is None else fast(inputs, attrs)
        if out is not None and type(out) is TensorType and out._cshape and out.value is None:
            return (out,), True  # (a tensor of constant shape holds no ``?``: see _made_anys)
        val = (out,) if out is not None else eager_outputs(rdef, inputs, attrs, num_outputs)
        if val is None and symbolic:
            if shape_key is None and not gave_up:
                akey = alpha_types_key(inputs)
                shape_key = None if akey is None else (rdef, attrs, num_outputs, akey)
            if shape_key is not None:
                gave_up.add(shape_key)
        if val is not None and _made_anys(val, inputs):
            return val, False  # (each call its own `?`: not kept, so never handed to another)
        return val, True
