"""Shared harness for the relation tests (imported by the other ``test_relations_*`` modules), and
tests of the helpers in :mod:`symshape.relations.common`.

* :func:`run` solves one relation instance and returns the status, the printed output(s), the
  guards and the error codes.
* :func:`check_row` checks one row of a family's table: an expected output type string or
  ``"!code"`` for an expected error, and optionally the expected guards.
* :func:`against_numpy` is the property oracle: ``np_fn`` computes numpy's result shape(s) (or
  raises) for concrete shapes; symshape must agree concretely, and with some dimensions replaced by
  symbols every guard must hold exactly when numpy accepts the concrete values, and the resolved
  shape at those values must be numpy's.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import assume
from hypothesis import strategies as st

import symshape as ss
from symshape.encoding.dims import Dim
from symshape.relations.common import exact_div, product

ENV = {k: ss.dim(k) for k in "n m t h w c b k".split()}
Shape = tuple[int, ...]


def T(text: str) -> ss.Type:
    """A type from its printed form; ``"?"`` is a hole."""
    if text == "?":
        return ss.IncompleteType()
    return ss.parse_type(text, ENV)


def run(
    rel: str,
    ins: Sequence[ss.Type | str],
    attrs: Mapping[str, Any] | None = None,
    nout: int = 1,
    strict: bool = False,
) -> tuple[ss.Solution, list[ss.Type], list[ss.Type]]:
    solver = ss.TypeSolver(strict=strict)
    tins = [T(x) if isinstance(x, str) else x for x in ins]
    outs = [solver.hole() for _ in range(nout)]
    solver.add_relation(rel, [*tins, *outs], attrs, num_inputs=len(tins))
    sol = solver.solve()
    return sol, [sol.resolve(o) for o in outs], [sol.resolve(t) for t in tins]


def check_row(
    rel: str,
    ins: Sequence[Any],
    attrs: Mapping[str, Any] | None,
    expected: str,
    guards: Sequence[str] | None = None,
    inputs: Sequence[str] | None = None,
) -> None:
    sol, outs, tins = run(rel, ins, attrs)
    if expected.startswith("!"):
        assert sol.status == "error", (sol, [str(o) for o in outs])
        codes = [e.code for e in sol.errors]
        assert expected[1:] in codes, codes
        return
    assert sol.ok, (sol, [d.message for d in sol.diagnostics])
    assert str(outs[0]) == expected
    if guards is not None:
        assert sorted(str(g) for g in sol.guards) == sorted(guards)
    if inputs is not None:
        assert [str(t) for t in tins] == list(inputs)


def rows(table: Sequence[tuple[Any, ...]]) -> Any:
    """Parametrize rows ``(rel, ins, attrs, expected[, guards[, inputs]])`` with readable ids."""
    ids = [f"{r[0]}-{i}" for i, r in enumerate(table)]
    return pytest.mark.parametrize("row", table, ids=ids)


# ----------------------------------------------------------------------------------------------
# the numpy oracle


def _np_shapes(res: Any) -> list[Shape]:
    if isinstance(res, (list, tuple)):
        return [tuple(int(x) for x in np.shape(r)) for r in res]
    return [tuple(int(x) for x in np.shape(res))]


def _type_shapes(t: ss.Type, env: Mapping[Dim, int]) -> list[Shape] | None:
    if isinstance(t, ss.TupleType):
        out: list[Shape] = []
        for f in t.fields:
            s = _type_shapes(f, env)
            if s is None:
                return None
            out.extend(s)
        return out
    if isinstance(t, ss.TensorType) and isinstance(t.shape, tuple):
        vals = []
        for d in t.shape:
            v = d.subs(env).constant_value  # type: ignore[arg-type]
            if v is None:
                return None
            vals.append(v)
        return [tuple(vals)]
    return None


def numpy_result(
    np_fn: Callable[..., Any], shapes: Sequence[Shape], dtypes: Sequence[str]
) -> list[Shape] | None:
    arrays = [np.zeros(s, dtype=d) for s, d in zip(shapes, dtypes)]  # zeros: valid indices
    try:
        with np.errstate(all="ignore"):
            return _np_shapes(np_fn(*arrays))
    except (ValueError, IndexError, TypeError, np.exceptions.AxisError):
        return None


@st.composite
def symbolize(draw: st.DrawFn, shapes: Sequence[Shape]) -> tuple[list[tuple[Dim | int, ...]], dict[Dim, int]]:
    """Replace some dimensions by symbols: distinct symbols, or one symbol per value (so equal
    sizes share a symbol)."""
    by_value = draw(st.booleans())
    env: dict[Dim, int] = {}
    out = []
    counter = itertools.count()
    for s in shapes:
        dims: list[Dim | int] = []
        for v in s:
            if draw(st.booleans()):
                name = f"v{v}" if by_value else f"s{next(counter)}"
                sym = ss.dim(name)
                env[sym] = v
                dims.append(sym)
            else:
                dims.append(v)
        out.append(tuple(dims))
    return out, env


def against_numpy(
    data: st.DataObject,
    rel: str,
    shapes: Sequence[Shape],
    attrs: Mapping[str, Any] | None,
    np_fn: Callable[..., Any],
    dtypes: Sequence[str] | None = None,
    nout: int = 1,
    symbolic: bool = True,
    lenient_guard: bool = False,
) -> None:
    """The property (see the module docstring)."""
    dts = list(dtypes or ["float32"] * len(shapes))
    expect = numpy_result(np_fn, shapes, dts)
    sol, outs, _ = run(rel, [ss.Tensor(s, d) for s, d in zip(shapes, dts)], attrs, nout)
    if expect is None:
        assert sol.status == "error", (sol, [str(o) for o in outs])
    else:
        assert sol.status == "ok", (sol, [d.message for d in sol.diagnostics])
        got = [s for o in outs for s in (_type_shapes(o, {}) or [])]
        assert got == expect, (got, expect)
    if not symbolic:
        return
    sym_shapes, env = data.draw(symbolize(shapes), label="symbolized")
    sol, outs, _ = run(rel, [ss.Tensor(s, d) for s, d in zip(sym_shapes, dts)], attrs, nout)
    assume(sol.status != "inconclusive")
    if sol.status == "error":
        assert expect is None, (sol, [e.message for e in sol.errors], sym_shapes, env)
        return
    assert sol.ok, (sol, [d.message for d in sol.diagnostics])
    holds = all(g.holds(env) for g in sol.guards)
    if not lenient_guard:
        assert holds == (expect is not None), ([str(g) for g in sol.guards], env, expect)
    if holds and expect is not None:
        got = [s for o in outs for s in (_type_shapes(o, env) or [])]
        assert got == expect, ([str(o) for o in outs], env, got, expect)


def small_shape(min_rank: int = 0, max_rank: int = 4, lo: int = 1, hi: int = 6) -> st.SearchStrategy[Shape]:
    return st.lists(st.integers(lo, hi), min_size=min_rank, max_size=max_rank).map(tuple)


# ----------------------------------------------------------------------------------------------
# tests of the helpers


def test_exact_div_cancels_common_factors() -> None:
    n, m = ENV["n"], ENV["m"]
    assert str(exact_div(6 * n, ss.parse_dim("4"))) == "3*n//2"
    assert exact_div(6 * n * m, n) == 6 * m
    assert exact_div(12 * n, ss.parse_dim("4")) == 3 * n
    assert product([]) == 1


def test_attribute_parsers_raise_bad_attribute() -> None:
    from symshape.encoding.types import Attrs
    from symshape.relations.common import attr_axes, attr_int, attr_ints

    with pytest.raises(ss.SymshapeError) as e:
        attr_int(Attrs({"axis": "1"}), "axis", 0, "op")
    assert e.value.code == "bad-attribute"
    with pytest.raises(ss.SymshapeError):
        attr_ints(Attrs({"strides": (1, 0)}), "strides", 1, "op", lo=1)
    with pytest.raises(ss.SymshapeError):
        attr_axes(Attrs({"axis": (1, 1)}), "axis", "op")
    assert attr_ints(Attrs({}), "strides", 2, "op", lengths=(3,)) == (2, 2, 2)
