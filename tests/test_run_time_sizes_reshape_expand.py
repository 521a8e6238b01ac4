"""Reshape and broadcast_to/expand to a shape whose entries only the run decides (the value of a
tensor the checker cannot compute): each such size of the result is a given ``?``, never a solver
unknown that a later unification binds silently. Before, ``reshape(x, concat([v, [-1]]))`` with
``x`` of ``(s,)`` added to ``y`` of ``(t, 1)`` was ``ok`` with the reshape claimed ``(t, ?d2)``
(the run gives ``(v, s/v)`` whatever ``t`` is), and ``expand(x, v) + z`` with ``z`` of ``(t,)``
claimed ``(t,)``. Now the later broadcast states its guard ``t == ? or t == 1 or ? == 1``.

What the entries known before the run decide stays exact: a single run-time entry is what makes
the element counts agree (as -1 is), -1 beside run-time entries is the input's count over the
product of the others, a broadcast_to target entry facing an input size that cannot be 1 is that
size (expand too: the entry is 1 or that size). What the run needs of its own values (the count
equation over them, an entry that broadcasts) is not stated: some values always run. The sizes a
reshape copies or infers from an input of unknown rank are ``?`` as well: the checker does not
know them either.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

import symshape as ss

s, t = ss.dims("s t")
s2 = ss.dim("s2", min=2)  # a size that is never 1: the only target size it broadcasts to is itself
x = ss.var("x", ss.Tensor((s,), "float32"))
x4 = ss.var("x4", ss.Tensor((s, 4), "float32"))
x8 = ss.var("x8", ss.Tensor((8,), "float32"))
xs2 = ss.var("xs2", ss.Tensor((s2,), "float32"))
ones = ss.var("ones", ss.Tensor((1,), "float32"))
xu = ss.var("xu", ss.Tensor(None, "float32"))  # sizes not known either: the input decides them
v = ss.var("v", ss.Tensor((1,), "int64"))  # one run-time size
w = ss.var("w", ss.Tensor((2,), "int64"))  # two run-time sizes
y = ss.var("y", ss.Tensor((t, 1), "float32"))
y3 = ss.var("y3", ss.Tensor((t, 4, 1), "float32"))
z = ss.var("z", ss.Tensor((t,), "float32"))
PARAMS = [x, x4, x8, xs2, ones, xu, v, w, y, y3, z]


def _cat(*parts: ss.Expr) -> ss.Expr:
    return ss.ops.concatenate(list(parts), axis=0)


# name: (the sized expression, what it is added to, the axes of its result the run decides)
CASES: dict[str, tuple[Callable[[], ss.Expr], ss.Var, tuple[int, ...]]] = {
    "reshape-entry-beside-minus-one": (lambda: ss.ops.reshape(x, _cat(v, ss.ops.int_tensor([-1]))), y, (0,)),
    "reshape-two-entries": (lambda: ss.ops.reshape(x, w), y, (0, 1)),
    "reshape-two-entries-and-a-copy": (
        lambda: ss.ops.reshape(x4, _cat(v, ss.ops.int_tensor([0]), v)), y3, (0, 2)),
    "reshape-unknown-rank-copy": (lambda: ss.ops.reshape(xu, (0, 4)), y, (0,)),
    "reshape-unknown-rank-minus-one": (lambda: ss.ops.reshape(xu, (-1, 4)), y, (0,)),
    "reshape-unknown-rank-run-time": (
        lambda: ss.ops.reshape(xu, _cat(w, ss.ops.int_tensor([-1]))), y3, (0, 2)),
    "broadcast_to": (lambda: ss.ops.broadcast_to(x, v), z, (0,)),
    "broadcast_to-one": (lambda: ss.ops.broadcast_to(ones, v), z, (0,)),
    "expand": (lambda: ss.ops.expand(x, v), z, (0,)),
    "expand-one": (lambda: ss.ops.expand(ones, v), z, (0,)),
    "expand-new-axes": (lambda: ss.ops.expand(x, w), y, (0, 1)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_run_time_entry_meeting_a_symbol_is_a_guard(name: str) -> None:
    make, other, run_axes = CASES[name]
    sized = make()
    res = ss.infer(ss.Function(PARAMS, ss.Tuple([sized, ss.ops.add(sized, other)])))
    assert res.status == "guarded", res.report()
    # the add states the run-time condition: ``? == t or ? == 1 or t == 1`` (expand: ``max(s, ?)``)
    assert any("?" in str(g) and re.search(r"\bt\b", str(g)) for g in res.guards), res.report()
    ty = res.type_of(sized)
    assert isinstance(ty, ss.TensorType) and ty.ndim is not None, ty
    for a in run_axes:
        assert "?" in str(ty.dims[a]), ty  # never claimed to be t
    assert all(t not in d.symbols for d in ty.dims), ty
    assert all(not d.has_unknowns for d in ty.dims), ty


# name: (the expression, the type it has: what the known entries decide)
EXACT: dict[str, tuple[Callable[[], ss.Expr], str]] = {
    # one run-time entry: the count decides it (0 copying, -1 inferring or a size alike)
    "reshape-one-entry": (lambda: ss.ops.reshape(x4, _cat(ss.ops.int_tensor([2]), v)), "(2, 2*s)"),
    # -1 beside a run-time entry: the count over the product of the others
    "reshape-minus-one-beside": (
        lambda: ss.ops.reshape(x4, _cat(v, ss.ops.int_tensor([4, -1]))), "(?, 4, s//?)"),
    # an input size that is not 1 is the only size it broadcasts to
    "broadcast_to-constant": (lambda: ss.ops.broadcast_to(x8, v), "(8,)"),
    "broadcast_to-never-one": (lambda: ss.ops.broadcast_to(xs2, v), "(s2,)"),
    # expand (both ways): an input size that is not 1 stays (the target entry is 1 or that size)
    "expand-constant": (lambda: ss.ops.expand(x8, v), "(8,)"),
    "expand-never-one": (lambda: ss.ops.expand(xs2, v), "(s2,)"),
}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_what_the_known_entries_decide_stays_exact(name: str) -> None:
    make, want = EXACT[name]
    e = make()
    res = ss.infer(ss.Function(PARAMS, e))
    assert res.ok, res.report()
    ty = res.type_of(e)
    assert isinstance(ty, ss.TensorType) and ty.ndim is not None, ty
    assert "(" + ", ".join(str(d) for d in ty.dims) + ("," if ty.ndim == 1 else "") + ")" == want, ty


def test_the_known_part_of_the_count_must_divide_the_input_count() -> None:
    """A reshape of ``(s, 4)`` to ``(3, ?, ?)``: no run-time values make it run unless 3 divides
    ``4*s``; the guard says so, over the symbols only (the count equation over the run's sizes is
    not the checker's to state: as for the other sizes the run decides, some values of them
    always run), and the run-time sizes are ``?``."""
    e = ss.ops.reshape(x4, _cat(ss.ops.int_tensor([3]), w))
    res = ss.infer(ss.Function(PARAMS, e))
    assert res.status == "guarded" and [str(g) for g in res.guards] == ["s % 3 == 0"], res.report()
    assert str(res.type_of(e)) == "Tensor[(3, ?, ?), float32]"
    assert res.valid_at({s: 6}) and not res.valid_at({s: 4})


def test_the_report_says_which_size_each_run_time_question_mark_is() -> None:
    """Every ``?`` prints alike; under a guard over one the report says which size it is: the
    operator call whose result has it first (the run decided it there), and the axis. Two of
    them in one guard are told apart by their order in it."""
    r = ss.ops.reshape(x, w)  # (?, ?)
    q = ss.ops.reshape(ss.ops.zeros((6,), "float32"), _cat(ss.ops.int_tensor([-1]), v))  # (6//?, ?)
    res = ss.infer(ss.Function(PARAMS, ss.ops.add(ss.ops.add(r, y), q)))
    lines = res.report().splitlines()
    r_at, q_at = (f"reshape at {e.span}" for e in (r, q))
    first = next(i for i, ln in enumerate(lines) if "needs `? == t or ? == 1 or t == 1`" in ln)
    assert lines[first + 1] == f"    where `?` is axis 0 of the result of {r_at}, which the run decides"
    # (a size the run decides may be 0: the broadcast of `?` and t is then t*?; beside -1 it is
    # at least 1)
    both = next(i for i, ln in enumerate(lines) if "needs `min(t*?, max(t, ?)) == 6//? or" in ln)
    assert lines[both + 1 : both + 3] == [
        f"    where the first `?` is axis 0 of the result of {r_at}, which the run decides",
        f"    where the second `?` is axis 1 of the result of {q_at}, which the run decides",
    ], res.report()
    # a `?` of an annotation is no call's: no line
    a = ss.var("a", ss.Tensor((ss.parse_dim("?"),), "float32"))
    plain = ss.infer(ss.Function([a, z], ss.ops.add(a, z)))
    assert plain.status == "guarded" and "where" not in plain.report(), plain.report()
