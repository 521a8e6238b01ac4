"""Eager evaluation of relations (symshape.solver.eager): same answers as the general solver.

Every test compares a run with the memo of eager results against a run where it is switched off
(``EagerMemo.lookup`` patched to answer None, so every relation takes the general path).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import symshape as ss
from symshape.encoding.types import Attrs, IncompleteType
from symshape.relations import get_relation
from symshape.solver.diagnostics import renumber_ids
from symshape.solver.eager import EagerMemo, eager_outputs, is_ground

GALLERY = Path(__file__).resolve().parent / "gallery"
sys.path.insert(0, str(GALLERY))
import _render  # noqa: E402

F32 = "float32"


@contextlib.contextmanager
def general_path_only() -> Iterator[None]:
    """Switch the memo off: every relation runs through the general solver."""
    original = EagerMemo.lookup
    EagerMemo.lookup = lambda self, *args: None  # type: ignore[assignment,method-assign]
    try:
        yield
    finally:
        EagerMemo.lookup = original  # type: ignore[method-assign]


def summary(res: Any, exprs: list[Any]) -> tuple[Any, ...]:
    types = []
    for e in exprs:
        try:
            types.append(renumber_ids(str(res.type_of(e))))
        except ss.SymshapeError as err:
            types.append(f"<{err.code}>")
    return (
        res.status,
        sorted(d.code for d in res.errors),
        sorted(str(g) for g in res.guards),
        types,
    )


def both(build: Callable[[], tuple[Any, list[Any]]]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    prog, exprs = build()
    fast = summary(ss.infer(prog), exprs)
    with general_path_only():
        prog, exprs = build()
        slow = summary(ss.infer(prog), exprs)
    return fast, slow


# -- the primitives -------------------------------------------------------------------------------


def test_is_ground() -> None:
    n = ss.dim("n")
    assert is_ground(ss.Tensor((n, 3), F32))
    assert is_ground(ss.Tensor(None, F32))
    assert is_ground(ss.TupleType([ss.Tensor((n,), F32), ss.Tensor((2,), "int32")]))
    assert not is_ground(ss.Tensor((n, 3), None))
    assert not is_ground(IncompleteType())
    assert not is_ground(ss.TupleType([ss.Tensor((n,), F32), IncompleteType()]))
    solver = ss.TypeSolver()
    assert not is_ground(ss.Tensor((solver.fresh_dim(), 3), F32))
    assert not is_ground(ss.FuncType([ss.Tensor((n,), F32)], ss.Tensor((n,), F32)))


@pytest.mark.parametrize(
    ("relation", "inputs", "attrs", "expected"),
    [
        ("broadcast", [(3, 1), (1, 4)], {}, "Tensor[(3, 4), float32]"),
        ("broadcast", [("n", 1), (1, 4)], {}, "Tensor[(n, 4), float32]"),
        ("flatten", [("n", 3, 4)], {}, "Tensor[(n, 12), float32]"),
        ("reshape", [("n", 6)], {"newshape": (-1, 3)}, "Tensor[(2*n, 3), float32]"),
        # needs a guard (n == 1 or n == 5): only the general solver can state it
        ("broadcast", [("n", 3), (5, 3)], {}, None),
        # an error: the general run reports it
        ("broadcast", [(2, 3), (4, 3)], {}, None),
        # needs a guard (n % 4 == 0)
        ("reshape", [("n", 2)], {"newshape": (-1, 8)}, None),
    ],
)
def test_eager_outputs_table(
    relation: str, inputs: list[tuple[Any, ...]], attrs: dict[str, Any], expected: str | None
) -> None:
    n = ss.dim("n")
    types = [ss.Tensor(tuple(n if d == "n" else d for d in shape), F32) for shape in inputs]
    out = eager_outputs(get_relation(relation), types, Attrs(attrs), 1)
    if expected is None:
        assert out is None
    else:
        assert out is not None and str(out[0]) == expected


def test_relations_that_need_unknowns_are_not_eager() -> None:
    # dense with an unannotated-rank weight makes a fresh unknown in its final run only; a
    # relation asking for a fresh dimension or hole is left to the general solver
    def needs_fresh(ctx: Any, args: Any, attrs: Any) -> bool:
        ctx.assign(args[-1], ss.Tensor((ctx.fresh_dim(),), F32))
        return True

    ss.relations.register_relation("test_eager_needs_fresh", needs_fresh)
    assert eager_outputs(get_relation("test_eager_needs_fresh"), [ss.Tensor((2,), F32)], Attrs(), 1) is None
    solver = ss.TypeSolver()
    out = solver.hole()
    solver.add_relation("test_eager_needs_fresh", [ss.Tensor((2,), F32), out])
    sol = solver.solve()
    assert sol.status == "ok" and sol.resolve(out).ndim == 1


# -- whole programs ---------------------------------------------------------------------------


def test_chain_is_memoized_and_agrees() -> None:
    def build() -> tuple[Any, list[Any]]:
        n, s = ss.dims("n s")
        x = ss.var("x", ss.Tensor((n, s, 64), F32))
        w = ss.var("w", ss.Tensor((64, 64), F32))
        g = ss.var("g", ss.Tensor((64,), F32))
        y: Any = x
        binds, exprs = [], []
        for i in range(60):
            op = i % 6
            if op == 0:
                e = ss.ops.matmul(y, w)
            elif op == 1:
                e = ss.ops.add(y, x)
            elif op == 2:
                e = ss.ops.reshape(y, (n * s, 64))
            elif op == 3:
                e = ss.ops.reshape(y, (n, s, 64))
            elif op == 4:
                e = ss.ops.softmax(y, axis=-1)
            else:
                e = ss.ops.layer_norm(y, g, g, axis=-1)
            v = ss.var(f"v{i}")
            binds.append((v, e))
            exprs += [v, e]
            y = v
        return ss.Function([x, w, g], ss.Dataflow(binds, y)), exprs

    fast, slow = both(build)
    assert fast == slow
    assert fast[0] == "ok"
    prog, _ = build()
    res = ss.infer(prog)
    memo = res.solution.solver.memo
    assert memo.hits >= 50 and memo.misses <= 10
    assert res.z3_calls == 0


@pytest.mark.parametrize("name", _render.cases())
def test_gallery_verdicts_agree(name: str) -> None:
    fast = _render.infer(name)
    with general_path_only():
        slow = _render.infer(name)
    assert fast.status == slow.status
    assert sorted(d.code for d in fast.errors) == sorted(d.code for d in slow.errors)
    assert sorted(str(g) for g in fast.guards) == sorted(str(g) for g in slow.guards)


_SHAPES = st.lists(st.sampled_from([1, 2, 3, 4, "n", "m"]), min_size=1, max_size=3)
_OPS = st.lists(
    st.tuples(
        st.sampled_from(
            [
                "relu",
                "add_x",
                "add_z",
                "multiply_z",
                "flatten",
                "reshape_flat",
                "transpose",
                "softmax",
                "sum0",
                "expand",
                "squeeze",
                "matmul_z",
            ]
        ),
        _SHAPES,
    ),
    min_size=1,
    max_size=8,
)


def apply(op: str, y: Any, x: Any, z: Any) -> Any:
    table: dict[str, Callable[[], Any]] = {
        "relu": lambda: ss.ops.relu(y),
        "add_x": lambda: ss.ops.add(y, x),
        "add_z": lambda: ss.ops.add(y, z),
        "multiply_z": lambda: ss.ops.multiply(z, y),
        "flatten": lambda: ss.ops.flatten(y),
        "reshape_flat": lambda: ss.ops.reshape(y, (-1,)),
        "transpose": lambda: ss.ops.transpose(y),
        "softmax": lambda: ss.ops.softmax(y, axis=-1),
        "sum0": lambda: ss.ops.sum(y, axis=0, keepdims=True),
        "expand": lambda: ss.ops.expand_dims(y, 0),
        "squeeze": lambda: ss.ops.squeeze(y),
        "matmul_z": lambda: ss.ops.matmul(y, z),
    }
    return table[op]()


@given(_SHAPES, _OPS)
def test_random_programs_agree(x_shape: list[Any], ops: list[tuple[str, list[Any]]]) -> None:
    def build() -> tuple[Any, list[Any]]:
        n, m = ss.dims("n m")
        env = {"n": n, "m": m}

        def tensor(shape: list[Any]) -> ss.TensorType:
            return ss.Tensor(tuple(env.get(d, d) if isinstance(d, str) else d for d in shape), F32)

        x = ss.var("x", tensor(x_shape))
        params = [x]
        y: Any = x
        binds, exprs = [], []
        for i, (op, zs) in enumerate(ops):
            z = ss.var(f"z{i}", tensor(zs))
            params.append(z)
            e = apply(op, y, x, z)
            v = ss.var(f"v{i}")
            binds.append((v, e))
            exprs += [v, e]
            y = v
        return ss.Function(params, ss.Dataflow(binds, y)), exprs

    fast, slow = both(build)
    assert fast == slow


def test_cached_tensor_hash_is_not_pickled() -> None:
    # the memo keys on tensor types, whose hash is cached; string hashing differs between
    # processes, so the cached value must never travel
    import pickle

    t = ss.Tensor((ss.dim("n"), 3), F32)
    h = hash(t)
    back = pickle.loads(pickle.dumps(t))
    assert back == t and "_hash" not in back.__dict__ and hash(back) == h


def test_gave_up_is_remembered_up_to_renaming() -> None:
    """A run that gives up over symbolic inputs is remembered by its inputs up to renaming: the
    same call over fresh symbols is skipped (no run), a call of another structure still runs, and
    a run that succeeds leaves no such record."""
    memo = EagerMemo()
    bc = get_relation("broadcast")
    n, m, p, q = ss.dims("n m p q")

    def call(a: Any, b: Any) -> Any:
        return memo.lookup(bc, (ss.Tensor((a,), F32), ss.Tensor((b,), F32)), Attrs(), 1)

    assert call(n, m) is None  # (n against m: needs a condition)
    assert (memo.misses, memo.skipped, len(memo._gave_up)) == (1, 0, 1)
    assert call(p, q) is None  # the same up to renaming: skipped
    assert (memo.misses, memo.skipped) == (1, 1)
    assert call(n, n) is not None  # another structure: runs, succeeds, nothing recorded
    assert (memo.misses, memo.skipped, len(memo._gave_up)) == (2, 1, 1)
    assert call(p, p + 1) is None  # a new give-up while one is recorded: run, then recorded
    assert (memo.misses, memo.skipped, len(memo._gave_up)) == (3, 1, 2)
    assert call(q, q + 1) is None
    assert (memo.misses, memo.skipped) == (3, 2)
