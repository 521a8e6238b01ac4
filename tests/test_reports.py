"""Trustworthy reports (issue 11): guards decide what an assignment decides, one indexing
convention and the user's operator names in messages and notes, explanations that never vanish,
minimal cores without duplicate notes, recursive functions whose shape grows."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symshape as ss

n, m = ss.dims("n m")
T = ss.Tensor


def _guard(a: Any, b: Any) -> ss.Guard:
    solver = ss.TypeSolver()
    out = solver.hole()
    solver.add_relation("broadcast", [T(a), T(b), out])
    sol = solver.solve()
    assert sol.status == "guarded", sol
    [g] = sol.guards
    return g


# -- Guard.holds -----------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6))
def test_holds_agrees_with_numpy_broadcasting(a: int, b: int) -> None:
    import numpy as np

    g = _guard((n,), (m,))
    try:
        np.broadcast_shapes((a,), (b,))
        expect = True
    except ValueError:
        expect = False
    assert g.holds({n: a, m: b}) is expect
    assert g.holds({"n": a, "m": b}) is expect  # symbols by name


def test_holds_decides_what_a_partial_assignment_decides() -> None:
    g = _guard((n,), (m,))  # n == m or n == 1 or m == 1
    assert g.holds({n: 1}) is True  # whatever m is
    assert g.holds({m: 1}) is True
    with pytest.raises(ss.SymshapeError) as e:
        g.holds({n: 3})
    assert e.value.code == "invalid-argument"
    assert "depends on m, which has no value" in e.value.message
    with pytest.raises(ss.SymshapeError) as e:
        g.holds({})
    assert "depends on m, n, which have no value" in e.value.message


@pytest.mark.parametrize("env", [5, None, "n=1", [(n, 1)], {n: "a"}, {n: 1.5}, {n: True}, {3: 1}])
def test_holds_rejects_what_is_not_an_assignment(env: Any) -> None:
    g = _guard((n,), (5,))
    with pytest.raises(ss.SymshapeError) as e:
        g.holds(env)
    assert e.value.code == "invalid-argument"


def test_holds_names_an_anonymous_dimension_it_needs() -> None:
    g = _guard((n,), ss.parse_type("Tensor[(?,), float32]").shape)
    assert g.holds({n: 1}) is True
    with pytest.raises(ss.SymshapeError, match=r"depends on \?"):
        g.holds({n: 4})


# -- explanations never vanish ---------------------------------------------------------------------


def _blocks(count: int, bad: int) -> ss.Function:
    """``count`` transformer blocks built in a loop; block ``bad`` has a (64, 65) value weight."""
    b, s = ss.dims("b s")
    x = ss.var("x", T((b, s, 64), "float32"))
    params, h = [x], x
    for i in range(count):
        ws = [ss.var(f"{k}{i}", T(shape, "float32")) for k, shape in (
            ("wq", (64, 64)), ("wk", (64, 64)), ("wv", (64, 65 if i == bad else 64)),
            ("w1", (256, 64)), ("w2", (64, 256)),
        )]  # fmt: skip
        params += ws
        wq, wk, wv, w1, w2 = ws
        q, k, v = ss.ops.dense(h, wq), ss.ops.dense(h, wk), ss.ops.dense(h, wv)
        a = ss.ops.softmax(ss.ops.batch_matmul(q, k), axis=-1)
        h = ss.ops.add(h, ss.ops.batch_matmul(a, ss.ops.transpose(v, (0, 2, 1))))
        h = ss.ops.add(h, ss.ops.dense(ss.ops.relu(ss.ops.dense(h, w1)), w2))
    return ss.Function(params, h)


@pytest.mark.parametrize("count", [1, 2, 15, 16, 17, 30, 60])
def test_explanation_of_a_loop_built_model_does_not_vanish(count: int) -> None:
    """The issue's cliff: N = 1-15 gave 3 notes, N = 17-60 none. The explanation is local (the
    bad block), so it is the same, and costs the same number of Z3 checks, for every N."""
    res = ss.infer(_blocks(count, bad=count // 2))
    [d] = res.errors
    located = [n.message for n in d.notes if n.span is not None]
    # the input of the bad block: `x` itself in the first block, else what a sibling dense fixes
    assert len(located) == (2 if count // 2 == 0 else 3), d.render()
    assert f"`wv{count // 2}` is annotated `Tensor[(64, 65), float32]`" in located
    assert d.evidence is not None and d.evidence.minimized
    assert d.evidence.check_minimal() == []
    assert res.z3_explain_calls <= 25


def test_explanation_found_when_it_lies_far_away() -> None:
    """No cap on the candidates: the dimension that conflicts comes from an annotation 260
    operators back (the old explainer looked at the nearest 240 at most), and the explanation
    still reaches it."""
    n = ss.dim("n")
    x = ss.var("x", T((n, 7)))
    w = ss.var("w", T((8, 3)))
    h = x
    for _ in range(130):
        h = ss.ops.transpose(ss.ops.transpose(h))
    res = ss.infer(ss.Function([x, w], ss.ops.matmul(h, w)))
    [d] = res.errors
    assert [n.message for n in d.notes if n.span is not None][:2] == [
        "`x` is annotated `Tensor[(n, 7), float32]`",
        "`w` is annotated `Tensor[(8, 3), float32]`",
    ]
    assert d.evidence is not None and d.evidence.minimized


def test_explanation_that_is_not_minimized_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """When minimizing runs out of time the report says so, and still shows the core it has."""
    import symshape.solver.explain as explain

    class NoTimeToMinimize(explain._Budget):
        def out(self) -> bool:
            return self.phase == "minimize"

    monkeypatch.setattr(explain, "_budget", lambda solver: NoTimeToMinimize(1.0))
    res = ss.infer(_blocks(3, bad=1))
    [d] = res.errors
    assert d.notes[-1].message == "the explanation was not minimized: the time limit of 1 s was reached"
    assert d.evidence is not None and not d.evidence.minimized
    # the core shown is still a conflict (all members together are unsatisfiable)
    assert "the members together are satisfiable" not in d.evidence.check_minimal()
    assert any("`wv1` is annotated" in n.message for n in d.notes)


def test_explanation_that_is_not_found_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    import symshape.solver.explain as explain

    class NoTime(explain._Budget):
        def out(self) -> bool:
            return True

    monkeypatch.setattr(explain, "_budget", lambda solver: NoTime(1.0))
    res = ss.infer(_blocks(3, bad=1))
    [d] = res.errors
    assert d.notes[-1].message.startswith("the explanation was not found: ")
    assert d.evidence is None
