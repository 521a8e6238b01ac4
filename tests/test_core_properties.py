"""Property tests (hypothesis) for the foundation: canonical dimensions agree with Python integer
arithmetic, printing and parsing round-trip, and broadcasting agrees with numpy."""

from __future__ import annotations

import os
from typing import Any, Union

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import symshape as ss
from symshape.encoding.dims import dmax, dmin, floordiv, mod

# SYMSHAPE_HYPOTHESIS_SCALE=20 multiplies every example budget (a long randomized bug hunt)
_SCALE = int(os.environ.get("SYMSHAPE_HYPOTHESIS_SCALE", "1"))


def examples(k: int) -> Any:
    return settings(max_examples=k * _SCALE)


N, M, K = ss.dims("n m k")
B = ss.dim("b", min=0)
C = ss.dim("c", min=2, max=5)
SYMS = {"n": N, "m": M, "k": K, "b": B, "c": C}

# -- random dimension expressions ---------------------------------------------------------------

Tree = Union[str, int, tuple[Any, ...]]

# b may be 0 (never a divisor); c lies in [2, 5]
leaves = st.one_of(st.sampled_from(["n", "m", "k", "b", "c"]), st.integers(-4, 9))
divisors = st.one_of(st.integers(1, 7), st.sampled_from(["n", "m", "c"]))


def _extend(children: st.SearchStrategy[Tree]) -> st.SearchStrategy[Tree]:
    return st.one_of(
        st.tuples(st.sampled_from(["+", "-", "*", "max", "min"]), children, children),
        st.tuples(st.sampled_from(["//", "%"]), children, divisors),
        st.tuples(st.just("neg"), children),
        st.tuples(st.just("**"), children, st.integers(0, 3)),
    )


trees = st.recursive(leaves, _extend, max_leaves=10)


def eval_py(t: Tree, env: dict[str, int]) -> int:
    """The value of a tree with Python ints (floor division and modulo as Python has them)."""
    if isinstance(t, str):
        return env[t]
    if isinstance(t, int):
        return t
    op = t[0]
    if op == "neg":
        return -eval_py(t[1], env)
    x = eval_py(t[1], env)
    if op == "**":
        return int(x ** t[2])
    y = eval_py(t[2], env)
    if op == "+":
        return x + y
    if op == "-":
        return x - y
    if op == "*":
        return x * y
    if op == "//":
        return x // y
    if op == "%":
        return x % y
    if op == "max":
        return max(x, y)
    assert op == "min"
    return min(x, y)


def build(t: Tree) -> ss.Dim:
    """The same tree built with symshape's smart constructors."""
    if isinstance(t, str):
        return SYMS[t]
    if isinstance(t, int):
        return ss.parse_dim(str(t))
    op = t[0]
    if op == "neg":
        return -build(t[1])
    x = build(t[1])
    if op == "**":
        return x ** int(t[2])
    y = build(t[2])
    if op == "+":
        return x + y
    if op == "-":
        return x - y
    if op == "*":
        return x * y
    if op == "//":
        return floordiv(x, y)
    if op == "%":
        return mod(x, y)
    if op == "max":
        return dmax(x, y)
    assert op == "min"
    return dmin(x, y)


values = st.fixed_dictionaries(
    {
        "n": st.integers(1, 30),
        "m": st.integers(1, 30),
        "k": st.integers(1, 30),
        "b": st.integers(0, 30),
        "c": st.integers(2, 5),
    }
)


@examples(300)
@given(trees, values)
def test_canonical_dim_agrees_with_python(t: Tree, env: dict[str, int]) -> None:
    d = build(t)
    expected = eval_py(t, env)
    by_dim = d.subs({SYMS[k]: v for k, v in env.items()})
    assert by_dim.is_constant, (t, str(d), str(by_dim))
    assert by_dim == expected, (t, str(d))
    assert d.evaluate(env) == expected
    # substituting by name gives the same value
    assert d.subs(env) == expected


@examples(300)
@given(trees)
def test_parse_dim_round_trip(t: Tree) -> None:
    d = build(t)
    back = ss.parse_dim(str(d), SYMS)
    assert back == d, (t, str(d), str(back))
    assert hash(back) == hash(d)
    assert str(back) == str(d)


@examples(100)
@given(trees, trees)
def test_equality_is_consistent_with_hash(t1: Tree, t2: Tree) -> None:
    d1, d2 = build(t1), build(t2)
    if d1 == d2:
        assert hash(d1) == hash(d2)
        assert str(d1) == str(d2)
    assert (d1 + d2) == (d2 + d1)
    assert (d1 * d2) == (d2 * d1)
    assert (d1 - d1) == 0


@examples(100)
@given(trees, values)
def test_parsed_expression_text_agrees_with_python(t: Tree, env: dict[str, int]) -> None:
    """Printing keeps Python's meaning: ``eval`` of the printed text at values is the value."""
    d = build(t)
    text = str(d)
    py_env: dict[str, Any] = {**env, "max": max, "min": min}
    assert eval(text, {"__builtins__": {}}, py_env) == eval_py(t, env)


# -- random types ---------------------------------------------------------------------------------

small_dims = st.one_of(
    st.integers(0, 16).map(lambda v: ss.parse_dim(str(v))),
    st.sampled_from([N, M, K, B]),
    st.builds(lambda a, b: a * b + 1, st.sampled_from([N, M]), st.sampled_from([K, N])),
    st.builds(lambda a, c: (a - 1) // c + 1, st.sampled_from([N, M, K]), st.integers(1, 4)),
    st.builds(lambda a, b: dmax(a, b), st.sampled_from([N, M]), st.sampled_from([K, B])),
    st.builds(lambda a, c: a % c, st.sampled_from([N, M, K]), st.integers(2, 5)),
)
dtypes = st.sampled_from(["float32", "float16", "int32", "int64", "bool", "uint8", None])
shapes = st.one_of(st.none(), st.lists(small_dims, max_size=4).map(tuple))
tensors = st.builds(ss.Tensor, shapes, dtypes)
TV = [ss.TypeVar("a"), ss.TypeVar("b"), ss.TypeVar("c")]


def _types_extend(children: st.SearchStrategy[ss.Type]) -> st.SearchStrategy[ss.Type]:
    funcs = st.builds(
        lambda ps, r, tps, pure: ss.FuncType(ps, r, tps, (), pure),
        st.lists(children, max_size=3),
        children,
        st.lists(st.sampled_from(TV), unique=True, max_size=3),
        st.booleans(),
    )
    funcs_with_rel = st.builds(
        lambda ps, r, name, axis: ss.FuncType(
            ps, r, TV[:2], [ss.TypeRelation(name, [*ps, r], {"axis": axis} if axis is not None else {})]
        ),
        st.lists(children, min_size=1, max_size=2),
        children,
        st.sampled_from(["broadcast", "identity", "flatten"]),
        st.one_of(st.none(), st.integers(-2, 3)),
    )
    return st.one_of(
        st.lists(children, max_size=3).map(ss.TupleType),
        funcs,
        funcs_with_rel,
        st.builds(
            lambda args: ss.TypeCall(ss.GlobalTypeVar("List"), args),
            st.lists(children, min_size=1, max_size=2),
        ),
    )


type_leaves = st.one_of(
    tensors,
    st.sampled_from(TV),
    st.just(ss.ObjectType()),
    st.builds(ss.ShapeType, st.one_of(st.none(), st.integers(0, 4))),
)
types = st.recursive(type_leaves, _types_extend, max_leaves=8)


@examples(200)
@given(types)
def test_parse_type_round_trip(t: ss.Type) -> None:
    text = str(t)
    back = ss.parse_type(text, {**SYMS, "List": ss.GlobalTypeVar("List")})
    assert back == t, text
    assert str(back) == text


# -- broadcasting agrees with numpy ---------------------------------------------------------------

concrete_shapes = st.lists(st.integers(1, 4), max_size=4).map(tuple)


def _numpy_broadcast(*shapes: tuple[int, ...]) -> tuple[int, ...] | None:
    try:
        return tuple(int(x) for x in np.broadcast_shapes(*shapes))
    except ValueError:
        return None


def _solve_broadcast(*shapes: tuple[Any, ...]) -> tuple[ss.Solution, ss.Type]:
    solver = ss.TypeSolver()
    out = solver.hole()
    solver.add_relation("broadcast", [*(ss.Tensor(s, "float32") for s in shapes), out])
    sol = solver.solve()
    return sol, sol.resolve(out)


@examples(150)
@given(concrete_shapes, concrete_shapes)
def test_broadcast_agrees_with_numpy_on_concrete_shapes(a: tuple[int, ...], b: tuple[int, ...]) -> None:
    expected = _numpy_broadcast(a, b)
    sol, out = _solve_broadcast(a, b)
    if expected is None:
        assert sol.status == "error"
        assert [d.code for d in sol.errors] == ["not-broadcastable"]
    else:
        assert sol.status == "ok"
        assert out == ss.Tensor(expected, "float32")
        assert sol.z3_calls == 0


@examples(60)
@given(concrete_shapes, concrete_shapes, concrete_shapes)
def test_broadcast_of_three_agrees_with_numpy(
    a: tuple[int, ...], b: tuple[int, ...], c: tuple[int, ...]
) -> None:
    expected = _numpy_broadcast(a, b, c)
    sol, out = _solve_broadcast(a, b, c)
    if expected is None:
        assert sol.status == "error"
    else:
        assert sol.status == "ok"
        assert out == ss.Tensor(expected, "float32")


# a symbolic shape: each entry a constant or one of the symbols (the same symbol may repeat)
SYM_DIMS = [N, M, K]
sym_entry = st.one_of(st.integers(1, 4), st.sampled_from(["n", "m", "k"]))
sym_shapes = st.lists(sym_entry, max_size=3).map(tuple)
sym_values = st.fixed_dictionaries({"n": st.integers(1, 4), "m": st.integers(1, 4), "k": st.integers(1, 4)})


def _as_dims(shape: tuple[Any, ...]) -> tuple[ss.Dim | int, ...]:
    return tuple(SYMS[x] if isinstance(x, str) else x for x in shape)


def _substituted(shape: tuple[Any, ...], env: dict[str, int]) -> tuple[int, ...]:
    return tuple(env[x] if isinstance(x, str) else x for x in shape)


@examples(80)
@given(sym_shapes, sym_shapes, st.lists(sym_values, min_size=1, max_size=8))
def test_broadcast_agrees_with_numpy_on_symbolic_shapes(
    a: tuple[Any, ...], b: tuple[Any, ...], envs: list[dict[str, int]]
) -> None:
    sol, out = _solve_broadcast(_as_dims(a), _as_dims(b))
    for env in envs:
        expected = _numpy_broadcast(_substituted(a, env), _substituted(b, env))
        if expected is not None:
            # numpy accepts: the solver must accept these values and agree on the shape
            assert sol.ok, (a, b, env, [str(e) for e in sol.errors])
            assert all(g.holds(env) for g in sol.guards), (a, b, env, [str(g) for g in sol.guards])
            assert isinstance(out, ss.TensorType)
            assert out.subs(env) == ss.Tensor(expected, "float32"), (a, b, env, str(out))
        else:
            # numpy rejects: either an error, or a guard that fails at these values
            assert sol.status == "error" or any(not g.holds(env) for g in sol.guards), (a, b, env)
