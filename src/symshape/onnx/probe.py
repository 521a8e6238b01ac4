"""Types a converter asks for before inference runs: the program converted so far, inferred.

A converter that needs a type the model does not declare (the rank of a computed value, a static
shape) gets it from :class:`Probes`. Each probe infers only the part of the program added since the
last one (:func:`part_types`): what the new part uses of the earlier parts becomes parameters
annotated with the types the earlier probes gave (their shape values included), so a model of
``n`` probing nodes costs ``O(n)`` and not ``O(n**2)``. An earlier expression whose type is not
settled (a hole, an unknown dimension: later constraints may still determine it) is inferred again
with the new part instead, up to :data:`REINFER_LIMIT` of them per probe. A probe answers as the
inference of the whole program so far, :func:`bound_types`, wherever that gives a type (the tests
compare them); a part that cannot be cut out is inferred with the whole program.

Probes run with a short Z3 timeout, :data:`PROBE_TIMEOUT_MS`: only the types matter, guards and
errors are the final inference's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

import symshape as ss
from symshape import Expr, TensorType, Type
from symshape.encoding.leaf_types import IncompleteType, TypeVar
from symshape.encoding.type_walks import iter_types, iter_value_dims
from symshape.encoding.types import FuncType
from symshape.errors import SymshapeError
from symshape.ir.visit import operands, pattern_vars, rebuild
from symshape.solver.outcome import guards_as_stated

if TYPE_CHECKING:
    from symshape.onnx.context import NodeContext

__all__ = [
    "PROBE_TIMEOUT_MS", "REINFER_LIMIT", "Probes", "bound_types", "part_types", "probe_types", "settled"
]

#: The Z3 timeout of the inference a converter's question about a type runs.
PROBE_TIMEOUT_MS = 200

#: How many earlier expressions whose types are not settled one probe infers again with its new
#: part (past it, such an expression is a parameter annotated with its open type: its holes and
#: unknown dimensions are the new part's unknowns, shared between the parameters that have them).
REINFER_LIMIT: Final = 64

Binding = tuple[ss.Var, Expr]
Scopes = Sequence[Sequence[Binding]]


class Probes:
    """The types the probes gave (by the id of each expression), the program size the last one
    was run at, and how many probes ran (``count``). ``incremental=False``: each probe infers the
    whole program so far (:func:`bound_types`; the oracle of the tests)."""

    __slots__ = ("types", "size", "count", "incremental", "inferred", "_part")

    def __init__(self, incremental: bool = True) -> None:
        self.types: dict[int, Type] = {}
        self.size = -1
        self.count = 0
        self.incremental = incremental
        #: how many bindings and calls the probes inferred, all told (linear in the program)
        self.inferred = 0
        self._part = _Parts()

    def type_of(
        self,
        e: Expr,
        params: Sequence[ss.Var],
        scopes: Scopes,
        unbound: Sequence[tuple[str, Expr, object]],
        timeout_ms: int,
    ) -> Type | None:
        """``e``'s type in the program (see :func:`bound_types`; ``unbound``: the calls not bound
        yet, each the second of its triple), inferred again only when the program grew since the
        last probe (None when not known)."""
        hit = self.types.get(id(e))
        size = sum(len(b) for b in scopes) + len(unbound)
        if hit is not None or self.size == size:
            return hit
        self.count += 1
        self.size = size
        timeout = min(timeout_ms, PROBE_TIMEOUT_MS)
        if self.incremental:
            got, n = self._part.infer(params, scopes, unbound, self.types, timeout)
        else:
            calls = [c for _, c, _ in unbound]
            got, n = bound_types(params, scopes, calls, timeout), size
        self.inferred += n
        self.types.update(got)
        return self.types.get(id(e))

    def types_of_new(
        self,
        exprs: Sequence[Expr],
        params: Sequence[ss.Var],
        scopes: Scopes,
        unbound: Sequence[tuple[str, Expr, object]],
        timeout_ms: int,
    ) -> list[Type | None]:
        """The types of ``exprs``, expressions a converter built that the program does not hold
        yet (a ``Loop`` body's outputs), inferred as calls not bound yet along with the part of
        the program added since the last probe (None where not known)."""
        if not exprs:
            return []
        self.size = -1  # (the program holds more than it did: these)
        self.type_of(exprs[0], params, scopes, [*unbound, *(("", e, None) for e in exprs)], timeout_ms)
        self.size = -1  # (the next probe is of the program without them)
        return [self.types.get(id(e)) for e in exprs]


def probe_types(ctx: NodeContext, exprs: Sequence[Expr]) -> list[Type | None]:
    """The types of ``exprs``, expressions the converter of ``ctx``'s node built that the program
    does not hold yet (:meth:`Probes.types_of_new` with the importer's program so far)."""
    imp = ctx._imp
    return imp._probes.types_of_new(exprs, imp.params, imp._scopes, imp._unbound, imp.timeout_ms)


def bound_types(
    params: Sequence[ss.Var],
    scopes: Scopes,
    unbound: Sequence[Expr],
    timeout_ms: int,
) -> dict[int, Type]:
    """The types of a program converted so far (``params``; the bindings of the graph and of the
    subgraphs being converted, ``scopes``; the calls not bound yet, ``unbound``), by the id of each
    bound variable and call: what a converter asks of a type before inference runs. Only the types
    matter (guards and errors are reported by the final inference): Z3 gets a short timeout, so a
    hard condition costs little."""
    bindings = [b for scope in scopes for b in scope]
    exprs: list[Expr] = [v for v, _ in bindings] + list(unbound)
    return _types_of(list(params), bindings, exprs, exprs, timeout_ms)


def _types_of(
    params: list[ss.Var], bindings: list[Binding], exprs: list[Expr], keys: Sequence[Expr], timeout_ms: int
) -> dict[int, Type]:
    """The types of ``exprs`` in ``fn(params) { bindings; (exprs) }``, by the id of the expression
    of ``keys`` at the same position."""
    if not exprs:
        return {}
    prog = ss.Function(params, ss.Dataflow(bindings, ss.Tuple(exprs)))
    try:
        with guards_as_stated():  # (only types are read: no simplified guards for a report)
            res = ss.infer(prog, timeout_ms=timeout_ms)
    except SymshapeError:
        return {}
    out: dict[int, Type] = {}
    for k, v in zip(keys, exprs):
        try:
            out[id(k)] = res.type_of(v)
        except SymshapeError:
            continue
    return out


def settled(t: Type) -> bool:
    """Whether nothing in ``t`` can still be determined by constraints on it: no hole, no type
    variable, no unknown dimension (in a shape or a shape value), no function type. An unknown rank
    or dtype is settled (a later operator does not refine it)."""
    for x in iter_types(t):
        if isinstance(x, (IncompleteType, TypeVar, FuncType)):
            return False
        if isinstance(x, TensorType):
            shape = x.shape
            if isinstance(shape, TypeVar) or isinstance(x.dtype, TypeVar):
                return False
            if shape is not None and any(d.has_unknowns for d in shape):
                return False
            valued = x.value is not None or x.range is not None
            if valued and any(d.has_unknowns for d in iter_value_dims(x)):
                return False
    return True


class _Parts:
    """What the incremental probes have seen of the program: the scopes (each list with the number
    of its bindings inferred), the calls not bound yet, the parameters, and the value bound to each
    variable seen (for an earlier binding inferred again)."""

    __slots__ = ("scopes", "unbound", "params", "nparams", "defs", "calls")

    def __init__(self) -> None:
        self.scopes: list[tuple[Sequence[Binding], int]] = []
        self.unbound: tuple[Sequence[object] | None, int] = (None, 0)
        self.params: set[int] = set()
        self.nparams = 0
        #: id of a variable bound in a scope -> (its order, the variable, its value)
        self.defs: dict[int, tuple[int, ss.Var, Expr]] = {}
        #: the calls not bound seen (by id; kept, so that no id is reused while ``types`` has it)
        self.calls: dict[int, Expr] = {}

    def infer(
        self,
        params: Sequence[ss.Var],
        scopes: Scopes,
        unbound: Sequence[tuple[str, Expr, object]],
        types: dict[int, Type],
        timeout_ms: int,
    ) -> tuple[dict[int, Type], int]:
        """The types of the part added since the last call (see :func:`part_types`) and the
        number of bindings and calls inferred."""
        new: list[Binding] = []
        seen = self.scopes
        for i, scope in enumerate(scopes):
            start = seen[i][1] if i < len(seen) and seen[i][0] is scope else 0
            new.extend(scope[start:])
        self.scopes = [(s, len(s)) for s in scopes]
        ub, done = self.unbound
        calls = [c for _, c, _ in unbound[done if ub is unbound else 0 :]]
        self.unbound = (unbound, len(unbound))
        for p in params[self.nparams :]:
            self.params.add(id(p))
        self.nparams = len(params)
        defs = self.defs
        for v, x in new:
            defs[id(v)] = (len(defs), v, x)
        try:
            out = _part_types(self.params, defs, self.calls, new, calls, types, timeout_ms)
        except SymshapeError:  # (a part that cannot be cut out: the whole program, as a rule)
            every = [c for _, c, _ in unbound]
            out = bound_types(params, scopes, every, timeout_ms), sum(map(len, scopes)) + len(every)
        for c in calls:
            self.calls[id(c)] = c
        return out


def part_types(
    param_ids: set[int],
    defs: dict[int, tuple[int, ss.Var, Expr]],
    earlier: dict[int, Expr],
    new: Sequence[Binding],
    calls: Sequence[Expr],
    types: dict[int, Type],
    timeout_ms: int,
) -> tuple[dict[int, Type], int]:
    """The types of a new part of a program (bindings ``new``, calls not bound ``calls``) whose
    earlier parts' bound variables and calls have the types ``types``; ``defs``: the value bound
    to each variable of every part; ``earlier``: the calls of the earlier parts. What the part
    uses of the earlier parts becomes a parameter annotated with its type when that is settled
    (:func:`settled`), else is inferred again with the part (an earlier binding, an earlier call),
    :data:`REINFER_LIMIT` at most. Returns the types by the id of each expression inferred (the
    new ones, and the earlier ones inferred again) and how many bindings and calls were."""
    cut = _Cut(param_ids, defs, earlier, types, new)
    roots = [x for _, x in new] + list(calls)
    cut.copy(roots)
    again = sorted(cut.again, key=lambda k: defs[k][0])
    bindings = [(defs[k][1], cut.image(defs[k][2])) for k in again]
    bindings += [(v, cut.image(x)) for v, x in new]
    keys: list[Expr] = [v for v, _ in bindings] + list(calls) + cut.calls_again
    exprs: list[Expr] = [v for v, _ in bindings] + [cut.image(c) for c in (*calls, *cut.calls_again)]
    ps = cut.used_params + cut.new_params
    return _types_of(ps, bindings, exprs, keys, timeout_ms), len(keys)


_part_types = part_types  # (what _Parts calls: a test makes it fail)


class _Cut:
    """Copies a new part's expressions, each earlier variable or call it reads replaced by a
    parameter annotated with its type (or inferred again, see :func:`part_types`)."""

    def __init__(
        self,
        param_ids: set[int],
        defs: dict[int, tuple[int, ss.Var, Expr]],
        earlier: dict[int, Expr],
        types: dict[int, Type],
        new: Sequence[Binding],
    ) -> None:
        self.param_ids, self.defs, self.earlier, self.types = param_ids, defs, earlier, types
        self.memo: dict[int, Expr] = {}  # id of an expression -> its copy
        #: variables bound by the new part or inside the copied expressions
        self.local: set[int] = {id(v) for v, _ in new}
        self.used_params: list[ss.Var] = []  # the graph's parameters the part reads
        self.new_params: list[ss.Var] = []
        self.again: set[int] = set()  # earlier bound variables inferred again (by id)
        self.calls_again: list[Expr] = []  # earlier calls inferred again
        self.budget = REINFER_LIMIT
        self._pending: list[Expr] = []

    def image(self, e: Expr) -> Expr:
        return self.memo.get(id(e), e)

    def _leaf(self, e: Expr) -> bool:
        """Settle ``e`` without copying its operands (True) when it is a variable, or an earlier
        bound variable or call that becomes a parameter; False: copy it, its operands first."""
        memo, i = self.memo, id(e)
        if i not in self.local and (i in self.defs or i in self.earlier):
            t = self.types.get(i)
            if (t is not None and settled(t)) or self.budget <= 0:
                name = e.name if isinstance(e, ss.Var) else "probed"
                p = ss.var(name, t) if t is not None else ss.Var(name)
                self.new_params.append(p)
                memo[i] = p
                return True
            self.budget -= 1  # (inferred again: its type may be determined by the new part)
            if not isinstance(e, ss.Var):
                self.calls_again.append(e)
                return False
            self.again.add(i)
            self.local.add(i)
            self._pending.append(self.defs[i][2])
        if isinstance(e, ss.Var):
            memo[i] = e
            if i in self.param_ids:
                self.used_params.append(e)
            return True
        return False

    def copy(self, roots: Sequence[Expr]) -> None:
        """Copy ``roots`` (and the earlier values to infer again that they reach) into ``memo``."""
        self._pending = list(roots)
        memo = self.memo
        while self._pending:
            stack: list[tuple[Expr, bool]] = [(self._pending.pop(), False)]
            while stack:
                e, expanded = stack.pop()
                if id(e) in memo:
                    continue
                if expanded:
                    ops = operands(e)
                    new = [memo[id(o)] for o in ops]
                    memo[id(e)] = rebuild(e, new) if any(a is not b for a, b in zip(new, ops)) else e
                    continue
                if self._leaf(e):
                    continue
                self.local.update(_binds(e))
                stack.append((e, True))
                stack.extend((o, False) for o in reversed(operands(e)) if id(o) not in memo)


def _binds(e: Expr) -> list[int]:
    """The ids of the variables ``e`` binds itself."""
    match e:
        case ss.Let() | ss.MatchCast():
            return [id(e.var)]
        case ss.Function():
            return [id(p) for p in e.params]
        case ss.Dataflow():
            return [id(v) for v, _ in e.bindings]
        case ss.Match():
            return [id(v) for c in e.clauses for v in pattern_vars(c.pattern)]
        case _:
            return []
