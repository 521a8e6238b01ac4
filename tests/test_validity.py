"""The sizes a program accepts (issue 19): ``valid_at``, ``why_invalid`` and ``valid_when``.

Table-driven programs with guards, each with a numpy oracle that runs the same computation at
concrete sizes: ``valid_at`` must agree with numpy at every point of a small grid (no false
reject, no false accept), the compiled fast path must agree with guard-by-guard substitution, and
``why_invalid`` must name the operator at fault.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

import symshape as ss
from symshape.encoding.conds import lt
from symshape.ir.validity import cond_text

n, m, h, w = ss.dims("n m h w")


def f32(*shape: Any) -> ss.TensorType:
    return ss.Tensor(shape, "float32")


def runs(fn: Callable[[], Any]) -> bool:
    try:
        fn()
    except (ValueError, IndexError):
        return False
    return True


def _broadcast() -> ss.InferenceResult:
    x = ss.var("x", f32(n))
    return ss.infer(ss.Function([x], ss.ops.add(x, ss.Constant(shape=(5,)))))


def _broadcast2() -> ss.InferenceResult:
    x, y = ss.var("x", f32(n, 3)), ss.var("y", f32(m, 1))
    return ss.infer(ss.Function([x, y], ss.ops.multiply(x, y)))


def _reshape() -> ss.InferenceResult:
    x = ss.var("x", f32(n, 6))
    return ss.infer(ss.Function([x], ss.ops.reshape(x, (-1, 4))))


def _reshape2() -> ss.InferenceResult:
    x = ss.var("x", f32(n, m))
    return ss.infer(ss.Function([x], ss.ops.reshape(x, (-1, 6))))


def _conv() -> ss.InferenceResult:
    x = ss.var("x", f32(1, 3, h, w))
    k = ss.var("k", f32(8, 3, 3, 3))
    return ss.infer(ss.Function([x, k], ss.ops.conv2d(x, k, strides=2)))


def _conv_then_add() -> ss.InferenceResult:
    # conv with stride 2 then a residual add of a (1, 8, 4, 4) tensor: (h - 3)//2 + 1 must be 1 or 4
    x = ss.var("x", f32(1, 3, h, w))
    k = ss.var("k", f32(8, 3, 3, 3))
    r = ss.var("r", f32(1, 8, 4, 4))
    return ss.infer(ss.Function([x, k, r], ss.ops.add(ss.ops.conv2d(x, k, strides=2), r)))


def _conv_out(a: np.ndarray, stride: int) -> np.ndarray:
    return sliding_window_view(a, (3, 3))[::stride, ::stride]


def np_conv(hh: int, ww: int) -> bool:
    return runs(lambda: _conv_out(np.zeros((hh, ww)), 2))


def np_conv_add(hh: int, ww: int) -> bool:
    def go() -> None:
        y = _conv_out(np.zeros((hh, ww)), 2)[..., 0, 0]
        if y.size == 0:
            raise ValueError("empty convolution output")
        np.add(y, np.zeros((4, 4)))

    return runs(go)


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[], ss.InferenceResult]
    symbols: tuple[ss.Dim, ...]
    grid: tuple[range, ...]
    oracle: Callable[..., bool]
    op: str  # what why_invalid must name


CASES = [
    Case("broadcast n vs 5", _broadcast, (n,), (range(1, 9),),
         lambda a: runs(lambda: np.add(np.zeros(a), np.zeros(5))), "add"),
    Case("broadcast (n, 3) * (m, 1)", _broadcast2, (n, m), (range(1, 6), range(1, 6)),
         lambda a, b: runs(lambda: np.multiply(np.zeros((a, 3)), np.zeros((b, 1)))), "multiply"),
    Case("reshape (n, 6) -> (-1, 4)", _reshape, (n,), (range(1, 13),),
         lambda a: runs(lambda: np.zeros((a, 6)).reshape(-1, 4)), "reshape"),
    Case("reshape (n, m) -> (-1, 6)", _reshape2, (n, m), (range(1, 8), range(1, 8)),
         lambda a, b: runs(lambda: np.zeros((a, b)).reshape(-1, 6)), "reshape"),
    Case("conv2d stride 2", _conv, (h, w), (range(1, 8), range(1, 8)), np_conv, "conv2d"),
    Case("conv2d stride 2 + (4, 4)", _conv_then_add, (h, w), (range(1, 12), range(1, 12)),
         np_conv_add, "add"),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_valid_at_agrees_with_numpy(case: Case) -> None:
    res = case.build()
    assert res.status == "guarded", res.report()
    wrong = []
    for point in itertools.product(*case.grid):
        env = dict(zip(case.symbols, point))
        if res.valid_at(env) != case.oracle(*point):
            wrong.append(point)
    assert not wrong, f"{case.name}: valid_at disagrees with numpy at {wrong}; {res.valid_when()}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_fast_path_agrees_with_substitution(case: Case) -> None:
    res = case.build()
    v = res._validity()
    assert v._fn is not None, "these guards compile"
    for point in itertools.product(*case.grid):
        vals = {str(s): p for s, p in zip(case.symbols, point)}
        assert v._fn(vals) == v._decide(vals)[0], point


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_why_invalid_names_the_operator(case: Case) -> None:
    res = case.build()
    bad = [p for p in itertools.product(*case.grid) if not case.oracle(*p)]
    assert bad
    env = dict(zip(case.symbols, bad[0]))
    text = res.why_invalid(env)
    assert text.startswith("invalid at"), text
    assert f"error: {case.op} needs" in text, text
    assert "note: argument 1" in text, text
    good = [p for p in itertools.product(*case.grid) if case.oracle(*p)]
    if good:
        assert res.why_invalid(dict(zip(case.symbols, good[0]))).startswith("valid at")


def test_valid_when_texts() -> None:
    assert _broadcast().valid_when() == "n == 1 or n == 5"
    assert _reshape().valid_when() == "n % 2 == 0"
    assert cond_text(lt(n - 1, 256)) == "n <= 256"
    assert cond_text(lt(1, n)) == "n >= 2"


def test_valid_when_drops_implied_guards() -> None:
    x = ss.var("x", f32(n))
    # stated weaker first: the reported guards (simplified) and valid_when keep only the stronger
    a = ss.ops.reshape(x, (-1, 2))
    b = ss.ops.reshape(x, (-1, 4))
    res = ss.infer(ss.Function([x], ss.Tuple([a, b])))
    assert [str(g) for g in res.guards] == ["n % 4 == 0"]
    assert res.valid_when() == "n % 4 == 0"
    assert [k for k in range(1, 13) if res.valid_at({n: k})] == [4, 8, 12]


def test_declared_ranges_and_names() -> None:
    res = _reshape()
    assert not res.valid_at({n: 0}), "n >= 1 is declared"
    assert "outside the declared range" in res.why_invalid({n: 0})
    assert res.valid_at({"n": 4}) and not res.valid_at({"n": 3})
    k = ss.dim("k", min=0, max=8)
    x = ss.var("x", f32(k, 6))
    res2 = ss.infer(ss.Function([x], ss.ops.reshape(x, (-1, 4))))
    assert res2.valid_at({k: 0}) and not res2.valid_at({k: 10})


def test_ok_and_error_results() -> None:
    x = ss.var("x", f32(n, 3))
    ok = ss.infer(ss.Function([x], ss.ops.relu(x)))
    assert ok.status == "ok" and ok.valid_at({n: 7}) and ok.valid_when() == "True"
    y = ss.var("y", f32(n, 4))
    err = ss.infer(ss.Function([x, y], ss.ops.add(x, y)))
    assert err.status == "error"
    assert not err.valid_at({n: 1}) and err.valid_when() == "False"
    assert "type errors" in err.why_invalid({n: 1})


def test_missing_symbols() -> None:
    res = _broadcast2()
    with pytest.raises(ss.SymshapeError) as e:
        res.valid_at({n: 2})
    assert e.value.code == "invalid-argument" and "m" in e.value.message
    # decided without m: n == 1 satisfies the guard whatever m is
    assert res.valid_at({n: 1})
    assert "give a value for m" in res.why_invalid({n: 2})


def test_bad_assignments() -> None:
    res = _reshape()
    for bad in ([1, 2], {n: "3"}, {n: 2.5}, {2 * n: 4}, {3: 4}, {"N": 4}):
        with pytest.raises(ss.SymshapeError) as e:
            res.valid_at(bad)  # type: ignore[arg-type]
        assert e.value.code == "invalid-argument"


def test_guard_over_a_computed_size_uses_z3() -> None:
    # a size read from a data-dependent op appears in a guard as a given symbol u0 (>= 0):
    # without its value the point is undecided, with it substitution decides
    x = ss.var("x", f32(n))
    u = ss.ops.nonzero(x)
    res = ss.infer(ss.Function([x], ss.ops.add(ss.ops.cast(u, "float32"), ss.Constant(shape=(1, 3)))))
    if not res.guards:
        pytest.skip("no guard over the data-dependent size in this program")
    names = sorted({str(s) for g in res.guards for d in _dims(g) for s in d.symbols})
    assert "u0" in names, names
    with pytest.raises(ss.SymshapeError):
        res.valid_at({n: 4})
    assert res.valid_at({n: 4, "u0": 3}) and not res.valid_at({n: 4, "u0": 2})


def _dims(g: Any) -> list[ss.Dim]:
    from symshape.encoding.conds import cond_dims

    return list(cond_dims(g.cond))


def test_guard_over_a_solver_unknown_goes_to_z3() -> None:
    # a guard over an unknown ``?d`` that a fact of the session defines (``?d == 2*n``): the
    # compiled path cannot read it, substitution leaves it open, Z3 decides it under the fact
    from symshape.encoding.conds import eq, le
    from symshape.encoding.dims import fresh_dimvar
    from symshape.solver.diagnostics import Guard, Origin

    res = _reshape()
    d = fresh_dimvar()
    o = Origin("relation", "test")
    res.solution.solver.session.assume(eq(d, 2 * n), o)
    res.guards.append(Guard(le(d, 10), o))
    v = res._validity()
    assert v._fn is None
    assert [k for k in range(1, 9) if res.valid_at({n: k})] == [2, 4]
    assert "test needs `?d1 <= 10`, which is false" in res.why_invalid({n: 6})
    # without the fact the value of ?d is open: undecided, and said so
    res2 = _reshape()
    res2.guards.append(Guard(le(fresh_dimvar(), 10), o))
    with pytest.raises(ss.SymshapeError) as e:
        res2.valid_at({n: 2})
    assert "depends on sizes the program computes" in e.value.message


def _interval_cases() -> list[tuple[Any, str]]:
    from symshape.encoding.conds import any_of, eq, ge, le, lt
    from symshape.encoding.dims import dmin, floordiv, mod

    k = ss.dim("k", min=0, max=40)
    return [
        (any_of(eq(n, 1), eq(n, 5)), "n == 1 or n == 5"),
        (eq(mod(n, 2), 0), "n % 2 == 0"),
        (lt(n - 1, 256), "n <= 256"),
        (ge(floordiv(n - 1, 16), 1), "n >= 17"),
        (any_of(eq(floordiv(n, 8), 4), eq(floordiv(n, 8), 1)), "n//8 == 4 or n//8 == 1"),
        (any_of(eq(n, dmin(1024, n)), eq(n, 1), eq(dmin(1024, n), 1)), "n <= 1024"),
        (ge(floordiv(k + 3, 2), 2), "k >= 1"),
        (le(floordiv(k + 3, 2), 10), "k <= 18"),
        (all_of_(ge(floordiv(n, 3), 2), le(floordiv(n, 3), 4)), "n >= 6 and n <= 14"),
    ]


def all_of_(*cs: Any) -> Any:
    from symshape.encoding.conds import all_of

    return all_of(*cs)


def test_interval_form_is_equivalent() -> None:
    from symshape.encoding.conds import cond_value
    from symshape.ir.cond_reading import interval_form as _interval_form

    for c, text in _interval_cases():
        f = _interval_form(c)
        assert cond_text(f) == text, (c, cond_text(f))
        sym = next(iter(next(d for d in _dims_of(c) if d.symbols).symbols))
        lo, hi = sym.atom.min, sym.atom.max or 3000  # type: ignore[union-attr]
        for v in range(lo, hi + 1):
            assert cond_value(c, {sym: v}) == cond_value(f, {sym: v}), (c, v)


def _dims_of(c: Any) -> list[ss.Dim]:
    from symshape.encoding.conds import cond_dims

    return list(cond_dims(c))
