"""A broadcast whose guard the session already knows (``Context.known_verdict``) skips the proofs
of its disjuncts: the result and the report are those of the path that tries them first.

The oracle is the same program inferred with the broadcast of two dimensions as it was before
the shortcut (:func:`_pair_before`: the three proofs, then the guard), over generated programs of
blocks that broadcast against fresh and shared symbols, with facts that make some disjuncts
provable."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.hole_names import number_by_appearance

import symshape as ss
from symshape.encoding.conds import all_of, any_of, eq, ge
from symshape.encoding.dims import Dim, bounds, dmax, dmin
from symshape.encoding.types import TensorType
from symshape.errors import NOT_BROADCASTABLE
from symshape.relations import elementwise
from symshape.relations.base import Context, Lazy
from symshape.solver.session import Session

# one block: which dimension the bias has in front (a fresh symbol, one >= 2, the previous
# block's, the shared one, a multiple of a fresh one, a constant) and whether the block reshapes
# back after; the shared ``n`` may be >= 2 (then ``n`` against a fresh ``m >= 2`` is the guard
# ``n == m``, and the next block's ``n`` against the same ``m`` is proved by its first disjunct)
fronts = st.sampled_from(["fresh", "big", "again", "shared", "twice", "one", "five"])
blocks = st.lists(st.tuples(fronts, st.booleans()), min_size=1, max_size=8)


def _program(spec: list[tuple[str, bool]], n_min: int) -> Any:
    n, s = ss.dim("n", min=n_min), ss.dim("s")
    x = ss.var("x", ss.Tensor((n, s, 4), "float32"))
    params = [x]
    y: Any = x
    m = n
    for i, (front, back) in enumerate(spec):
        prev = m
        m = ss.dim(f"m{i}", min=2 if front == "big" else 1)
        d = {"fresh": m, "big": m, "again": prev, "shared": n, "twice": 2 * m, "one": 1, "five": 5}[front]
        b = ss.var(f"b{i}", ss.Tensor((d, 1, 4), "float32"))
        params.append(b)
        y = ss.ops.add(y, b)
        if back:
            y = ss.ops.reshape(y, (n, s, 4))
        y = ss.ops.relu(y)
    return ss.Function(params, y)


def _outcome(spec: list[tuple[str, bool]], n_min: int) -> tuple[str, str, list[str]]:
    """The status, the report (errors with their notes) and the result type, the guards."""
    f = _program(spec, n_min)
    res = ss.infer(f)
    # (holes and unknowns renumbered: their ids come from a process-wide counter)
    shown = number_by_appearance(f"{res.report()}\n{res.type_of(f)}")
    return str(res.status), shown, [str(g) for g in res.guards]


def _pair_before(ctx: Context, x: Dim, y: Dim, i: int, ta: TensorType, tb: TensorType) -> Dim | None:
    """``elementwise._pair`` before ``known_verdict``: every proof is tried first."""
    if x == y:
        return x
    if x == 1:
        return y
    if y == 1:
        return x
    cx, cy = x.constant_value, y.constant_value
    if cx is not None and cy is not None:
        ctx.fail(NOT_BROADCASTABLE, elementwise._not_broadcastable(ta, tb, i, cx, cy))
    if x.has_unknowns or y.has_unknowns:
        if not ctx.final:
            return None
        return ctx.unify_dim(x, y)
    if ctx.prove(eq(x, y)):
        return x
    if ctx.prove(eq(x, 1)):
        return y
    if ctx.prove(eq(y, 1)):
        return x
    if cy is not None:
        cond = any_of(eq(x, 1), eq(x, y))
    elif cx is not None:
        cond = any_of(eq(y, 1), eq(y, x))
    else:
        cond = any_of(eq(x, y), eq(x, 1), eq(y, 1))
    ctx.require(cond, NOT_BROADCASTABLE, Lazy(elementwise._not_broadcastable, ta, tb, i, x, y))
    if cy is not None:
        return y
    if cx is not None:
        return x
    if (bounds(x)[0] >= 1 and bounds(y)[0] >= 1) or ctx.prove(all_of(ge(x, 1), ge(y, 1))):
        return dmax(x, y)
    return dmin(dmax(x, y), x * y)


@given(blocks, st.integers(1, 2))
def test_known_verdict_keeps_results(spec: list[tuple[str, bool]], n_min: int) -> None:
    fast = _outcome(spec, n_min)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(elementwise, "_pair", _pair_before)
        slow = _outcome(spec, n_min)
    assert fast == slow


def test_known_verdict_is_remembered_check() -> None:
    """A verdict the session hands out is the one :meth:`Session.check` gives, and check finds
    it: the guard of a renamed block is known before it is checked."""
    n, m0, m1 = ss.dims("n m0 m1")
    from symshape.encoding.conds import any_of, eq
    from symshape.solver.diagnostics import Origin, OriginKind

    sess = Session()
    first = any_of(eq(n, m0), eq(n, 1), eq(m0, 1))
    assert sess.known_verdict(first) is None  # nothing asked yet
    assert sess.check(first).kind == "guard"
    sess.assume(first, Origin(OriginKind.RELATION, "add", None))
    renamed = any_of(eq(n, m1), eq(n, 1), eq(m1, 1))
    hits = sess.alpha_hits
    assert sess.known_verdict(renamed) == "guard"
    assert sess.alpha_hits == hits + 1
    assert sess.check(renamed).kind == "guard"
    assert sess.alpha_hits == hits + 1  # found where known_verdict left it
    assert sess.known_verdict(eq(n, n)) == "proved"
    assert sess.known_verdict(eq(n + 1, n)) == "refuted"
