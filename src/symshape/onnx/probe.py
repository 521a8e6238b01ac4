"""Types a converter asks for before inference runs: the program converted so far, inferred.

A converter that needs a type the model does not declare (the rank of a computed value, a static
shape) gets it from :class:`Probes`: the program converted so far is inferred (with a short Z3
timeout, :data:`PROBE_TIMEOUT_MS`: only the types matter, guards and errors are the final
inference's), and the types of every bound variable and call are kept until the program grows.
"""

from __future__ import annotations

from collections.abc import Sequence

import symshape as ss
from symshape import Expr, Type
from symshape.errors import SymshapeError

__all__ = ["PROBE_TIMEOUT_MS", "Probes", "bound_types"]

#: The Z3 timeout of the inference a converter's question about a type runs.
PROBE_TIMEOUT_MS = 200


class Probes:
    """The types the last probe gave (by the id of each expression), the program size it was run
    at, and how many probes ran (``count``)."""

    __slots__ = ("types", "size", "count")

    def __init__(self) -> None:
        self.types: dict[int, Type] = {}
        self.size = -1
        self.count = 0

    def type_of(
        self,
        e: Expr,
        params: Sequence[ss.Var],
        scopes: Sequence[Sequence[tuple[ss.Var, Expr]]],
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
        calls = [c for _, c, _ in unbound]
        self.types.update(bound_types(params, scopes, calls, min(timeout_ms, PROBE_TIMEOUT_MS)))
        return self.types.get(id(e))


def bound_types(
    params: Sequence[ss.Var],
    scopes: Sequence[Sequence[tuple[ss.Var, Expr]]],
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
    if not exprs:
        return {}
    prog = ss.Function(list(params), ss.Dataflow(bindings, ss.Tuple(exprs)))
    try:
        res = ss.infer(prog, timeout_ms=timeout_ms)
    except SymshapeError:
        return {}
    out: dict[int, Type] = {}
    for v in exprs:
        try:
            out[id(v)] = res.type_of(v)
        except SymshapeError:
            continue
    return out
