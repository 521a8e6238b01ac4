"""Value ranges of integer tensors and the index bounds they give (issue 19, steps 2 and 3).

Ranges are checked against numpy at concrete sizes: the range ``type_of`` states must contain
every entry numpy computes (sound), and be exactly the entries' min and max where the producer
is exact (``arange`` and what moves its entries). Index guards are checked against
``np.take(..., mode="raise")`` over a grid: ``valid_at`` must agree at every point.
"""

from __future__ import annotations

import itertools
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import symshape as ss
from symshape.encoding.values import hull_ranges, meet_ranges, value_range

b, t, n = ss.dims("b t n")
ENV = {"b": b, "t": t, "n": n}


def i64(v: Any) -> ss.Constant:
    return ss.const(np.array(v, "int64"))


# ----------------------------------------------------------------------------------------------
# the range of a type


@pytest.mark.parametrize(
    "ty",
    [
        ss.Tensor((b, t), "int64", values=(0, 50256)),
        ss.Tensor((3,), "int64", value=(b, t, 4), values=(1, None)),
        ss.Tensor((), "int32", value=b * t, values=(None, t - 1)),
        ss.Tensor((t,), "int64", values=(-t, t - 1)),
    ],
    ids=str,
)
def test_range_prints_parses_pickles(ty: ss.TensorType) -> None:
    text = str(ty)
    assert " in [" in text
    back = ss.parse_type(text, ENV)
    assert back == ty and hash(back) == hash(ty)
    assert pickle.loads(pickle.dumps(ty)) == ty
    assert ss.parse_type(f"(Tensor[(2,), float32], {text})", ENV) == ss.TupleType(
        [ss.Tensor((2,), "float32"), ty]
    )


def test_range_is_a_refinement_in_equality() -> None:
    plain = ss.Tensor((b, t), "int64")
    ranged = ss.Tensor((b, t), "int64", values=(0, 9))
    assert plain != ranged and plain == ss.Tensor((b, t), "int64")
    assert hash(plain) == hash(ss.TensorType((b, t), "int64"))
    assert ranged.range == (0, 9)
    assert ranged.subs({t: 3}) == ss.Tensor((b, 3), "int64", values=(0, 9))
    assert ss.Tensor((t,), "int64", values=(0, t - 1)).subs({t: 5}).range == (0, 4)
    assert ss.Tensor((2,), "int64", values=(None, None)) == ss.Tensor((2,), "int64")


@pytest.mark.parametrize(
    "shape, dtype, values",
    [((b,), "float32", (0, 1)), ((b,), "int64", (5, 1)), ((b,), "int64", (1, 2, 3)),
     ((b,), "int64", ("x", 1)), ((b,), "int64", 7)],
)  # fmt: skip
def test_bad_ranges(shape: Any, dtype: str, values: Any) -> None:
    with pytest.raises(ss.SymshapeError) as e:
        ss.Tensor(shape, dtype, values=values)
    assert e.value.code == "invalid-argument"


def test_range_helpers() -> None:
    assert value_range((b, 3)) == (ss.parse_dim("min(b, 3)", ENV), ss.parse_dim("max(b, 3)", ENV))
    assert value_range((b, None)) is None
    assert hull_ranges([(0, t - 1), (5, 7)]) == (0, ss.parse_dim("max(t - 1, 7)", ENV))  # type: ignore[list-item]
    assert hull_ranges([(0, None), (5, 7)]) == (0, None)  # type: ignore[list-item]
    assert meet_ranges((0, None), (None, t)) == (0, t)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------------------------
# producers, against numpy


@dataclass(frozen=True)
class Prod:
    name: str
    build: Callable[[ss.Expr], ss.Expr]  # from arange(3, 3 + 2*t, 2) (entries 3, 5, ..., 2t + 1)
    numpy: Callable[[np.ndarray], np.ndarray]
    exact: bool


def _base() -> ss.Expr:
    return ss.ops.arange(3, 3 + 2 * t, 2)


PRODUCERS = [
    Prod("arange", lambda a: a, lambda a: a, True),
    Prod("add const", lambda a: ss.ops.add(a, i64(5)), lambda a: a + 5, True),
    Prod("subtract const", lambda a: ss.ops.subtract(a, i64(1)), lambda a: a - 1, True),
    Prod("negative", lambda a: ss.ops.negative(a), lambda a: -a, True),
    Prod("multiply -3", lambda a: ss.ops.multiply(a, i64(-3)), lambda a: a * -3, True),
    Prod("floor_divide 4", lambda a: ss.ops.floor_divide(a, i64(4)), lambda a: a // 4, True),
    Prod("mod 4", lambda a: ss.ops.mod(a, i64(4)), lambda a: a % 4, False),
    Prod("clip", lambda a: ss.ops.clip(a, 4, 9), lambda a: np.clip(a, 4, 9), False),
    Prod("minimum", lambda a: ss.ops.minimum(a, i64(7)), lambda a: np.minimum(a, 7), True),
    Prod("maximum", lambda a: ss.ops.maximum(a, i64(7)), lambda a: np.maximum(a, 7), True),
    Prod("cast", lambda a: ss.ops.cast(a, "int32"), lambda a: a.astype("int32"), True),
    Prod("expand_dims", lambda a: ss.ops.expand_dims(a, 0), lambda a: a[None], True),
    Prod("broadcast_to", lambda a: ss.ops.broadcast_to(ss.ops.expand_dims(a, 0), (4, t)),
         lambda a: np.broadcast_to(a[None], (4, len(a))), True),
    Prod("reshape", lambda a: ss.ops.reshape(ss.ops.expand_dims(a, 1), (1, -1)),
         lambda a: a.reshape(1, -1), True),
    Prod("slice", lambda a: ss.ops.strided_slice(a, [1], [-1]), lambda a: a[1:-1], False),
    Prod("concatenate", lambda a: ss.ops.concatenate([a, i64([100])], axis=0),
         lambda a: np.concatenate([a, [100]]), True),
    Prod("take of ranged", lambda a: ss.ops.take(a, i64([0, 0])), lambda a: a[[0, 0]], False),
]  # fmt: skip


@pytest.mark.parametrize("p", PRODUCERS, ids=lambda p: p.name)
def test_range_producers_against_numpy(p: Prod) -> None:
    a = _base()
    out = p.build(a)
    res = ss.infer(ss.Function([], out))
    assert res.status in ("ok", "guarded"), res.report()
    ty = res.range_of(out)
    assert ty is not None, f"{p.name}: no range"
    lo, hi = ty
    for k in range(3, 12):
        got = p.numpy(np.arange(3, 3 + 2 * k, 2))
        if got.size == 0:
            continue
        env = {t: k}
        if lo is not None:
            low = int(lo.subs(env))
            assert low <= int(got.min()), (p.name, k, ty)
            assert not p.exact or low == int(got.min()), (p.name, k, ty)
        if hi is not None:
            high = int(hi.subs(env))
            assert high >= int(got.max()), (p.name, k, ty)
            assert not p.exact or high == int(got.max()), (p.name, k, ty)


def test_float_tensors_carry_no_range() -> None:
    x = ss.var("x", ss.Tensor((t,), "float32"))
    y = ss.ops.add(x, ss.ops.cast(ss.ops.arange(t), "float32"))
    res = ss.infer(ss.Function([x], y))
    assert res.range_of(y) is None


def test_declared_range_flows() -> None:
    ids = ss.var("ids", ss.Tensor((b, t), "int64", values=(0, 99)))
    y = ss.ops.add(ids, i64(1))
    res = ss.infer(ss.Function([ids], y))
    assert res.range_of(y) == (1, 100)
    assert res.type_of(y) == ss.Tensor((b, t), "int64"), "inferred types carry no range"


# ----------------------------------------------------------------------------------------------
# index bounds


def _positions(table_const: bool, offset: int = 0, mode: str = "fast") -> tuple[ss.InferenceResult, ss.Call]:
    x = ss.var("x", ss.Tensor((b, t, 64), "float32"))
    params = [x]
    if table_const:
        table: ss.Expr = ss.Constant(shape=(256, 64))
    else:
        table = ss.var("wpe", ss.Tensor((256, 64), "float32"))
        params.append(table)
    pos: ss.Expr = ss.ops.arange(t)
    if offset:
        pos = ss.ops.add(pos, i64(offset))
    take = ss.ops.take(table, ss.ops.expand_dims(pos, 0), axis=0, mode=mode)
    return ss.infer(ss.Function(params, ss.ops.add(x, take))), take


def _np_positions(bb: int, tt: int, offset: int = 0) -> bool:
    try:
        e = np.take(np.zeros((256, 64)), (np.arange(tt) + offset)[None], axis=0, mode="raise")
        np.add(np.zeros((bb, tt, 64)), e)
    except (IndexError, ValueError):
        return False
    return True


@pytest.mark.parametrize("table_const", [True, False], ids=["const table", "var table"])
@pytest.mark.parametrize("offset", [0, 5])
def test_position_table_bound(table_const: bool, offset: int) -> None:
    res, _ = _positions(table_const, offset)
    assert res.status == "guarded", res.report()
    assert res.valid_when() == f"t <= {256 - offset}"
    for bb, tt in itertools.product((1, 2), range(240, 262)):
        assert res.valid_at({b: bb, t: tt}) == _np_positions(bb, tt, offset), (bb, tt)
    assert res.valid_at({b: 1, t: 256 - offset}) and not res.valid_at({b: 1, t: 257 - offset})
    why = res.why_invalid({b: 1, t: 257 - offset})
    assert "error: take of indices in [" in why and f"needs `t <= {256 - offset}`" in why, why
    if offset:  # the note says where the indices moved from the arange's own range
        moved = f"the indices, with entries in [{offset}, t + {offset - 1}], are computed from "
        assert moved + "`arange(0, t, 1)`, with entries in [0, t - 1]" in why, why
    else:
        assert "the indices come from `arange(0, t, 1)`, with entries in [0, t - 1]" in why, why
    assert "test_validity_ranges.py" in why
    if not table_const:
        assert "`wpe` is `Tensor[(256, 64), float32]`" in why, why


def test_clip_and_wrap_never_fail() -> None:
    for mode in ("clip", "wrap"):
        res, _ = _positions(False, 0, mode)
        assert res.status == "ok" and res.valid_at({b: 1, t: 1000}), mode


def test_declared_ids_in_range_are_proved() -> None:
    ids = ss.var("ids", ss.Tensor((b, t), "int64", values=(0, 50256)))
    wte = ss.var("wte", ss.Tensor((50257, 8), "float32"))
    res = ss.infer(ss.Function([ids, wte], ss.ops.take(wte, ids, axis=0, mode="fast")))
    assert res.status == "ok", res.report()


def test_declared_ids_out_of_range_are_an_error() -> None:
    ids = ss.var("ids", ss.Tensor((b, t), "int64", values=(0, 50256)))
    wte = ss.var("wte", ss.Tensor((50000, 8), "float32"))
    res = ss.infer(ss.Function([ids, wte], ss.ops.take(wte, ids, axis=0, mode="raise")))
    assert res.status == "error", res.report()
    d = res.errors[0]
    assert d.code == "constraint-violated" and "50256" in d.message
    assert any("`ids` is declared" in note.message for note in d.notes), d.render()
    assert not res.valid_at({b: 1, t: 1})


def test_negative_indices_bound_below() -> None:
    # indices in [-t, -1] read from the end: fine while t <= 16
    q = ss.var("q", ss.Tensor((t,), "float32"))
    neg = ss.ops.negative(ss.ops.add(ss.ops.arange(t), i64(1)))  # -1, -2, ..., -t
    take = ss.ops.take(ss.var("w", ss.Tensor((16,), "float32")), neg, axis=0, mode="raise")
    w = take.args[0]
    res = ss.infer(ss.Function([q, w], ss.ops.add(q, take)))  # type: ignore[list-item]
    assert res.valid_when() == "t <= 16", res.valid_when()
    for tt in range(1, 20):
        ok = True
        try:
            np.take(np.zeros(16), -(np.arange(tt) + 1), mode="raise")
        except IndexError:
            ok = False
        assert res.valid_at({t: tt}) == ok, tt


def test_nonnegative_mode_refuses_negative_indices() -> None:
    # torch's embedding/index_select/gather: 0 <= i < d. Indices 5 - k for k < t are in [6 - t, 5]
    # (fine while t <= 6); in mode raise the same take counts them from the end (t <= 22)
    q = ss.var("q", ss.Tensor((t,), "float32"))
    w = ss.var("w", ss.Tensor((16,), "float32"))
    idx = ss.ops.subtract(i64(5), ss.ops.arange(t))
    for mode, when in (("nonnegative", "t <= 6"), ("raise", "t <= 22")):
        res = ss.infer(ss.Function([q, w], ss.ops.add(q, ss.ops.take(w, idx, axis=0, mode=mode))))
        assert res.valid_when() == when, (mode, res.valid_when())
        for tt in range(1, 24):
            ok = 0 <= 6 - tt if mode == "nonnegative" else -16 <= 6 - tt
            assert res.valid_at({t: tt}) == ok, (mode, tt)
    # a constant negative index: an error in mode nonnegative, the last entry in mode raise
    x = ss.var("x", ss.Tensor((n, t, 64), "float32"))
    sh = ss.ops.shape_of(x)
    bad = ss.infer(ss.Function([x], ss.ops.take(sh, i64(-1), mode="nonnegative")))
    assert bad.status == "error" and bad.errors[0].code == "constraint-violated", bad.report()
    last = ss.infer(ss.Function([x], ss.ops.take(sh, i64(-1), mode="raise")))
    assert last.ok and "64" in str(last.type_of(last.program.body)), last.report()


def test_strict_mode_makes_index_guards_errors() -> None:
    x = ss.var("x", ss.Tensor((t,), "float32"))
    w = ss.var("w", ss.Tensor((16,), "float32"))
    y = ss.ops.add(x, ss.ops.take(w, ss.ops.arange(t), mode="fast"))
    res = ss.infer(ss.Function([x, w], y), strict=True)
    assert res.status == "error" and res.errors[0].code == "unproven-guard", res.report()


def test_constant_index_out_of_range_is_an_error() -> None:
    # numpy: np.take([n, s, 64], 9, mode="raise") raises IndexError (tests/test_shape_values.py
    # had this as a valid program whose value is unknown)
    x = ss.var("x", ss.Tensor((n, t, 64), "float32"))
    sh = ss.ops.shape_of(x)
    for mode, ok in (("raise", False), ("fast", False), ("clip", True), ("wrap", True)):
        res = ss.infer(ss.Function([x], ss.ops.take(sh, i64(9), mode=mode)))
        assert res.ok == ok, (mode, res.report())
        if not ok:
            assert res.errors[0].code == "constraint-violated"
            assert "size 3" in res.errors[0].message


def test_module_with_let_bound_indices() -> None:
    x = ss.var("x", ss.Tensor((t, 4), "float32"))
    w = ss.var("w", ss.Tensor((16, 4), "float32"))
    p = ss.var("p")
    body = ss.Let(p, ss.ops.arange(t), ss.ops.add(x, ss.ops.take(w, p, axis=0, mode="raise")))
    mod = ss.Module()
    mod["main"] = ss.Function([x, w], body)
    res = ss.infer(mod)
    assert res.valid_when() == "t <= 16"
    assert res.valid_at({t: 16}) and not res.valid_at({t: 17})
    assert "`arange(0, t, 1)`" in res.why_invalid({"t": 17})


# ----------------------------------------------------------------------------------------------
# random chains of integer operators ending in an index, against numpy

_STEPS: list[tuple[str, bool, Callable[[Any, int], Any], Callable[[np.ndarray, int], np.ndarray]]] = [
    # (name, exact, symshape, numpy); the int is a random constant
    ("add", True, lambda e, c: ss.ops.add(e, i64(c)), lambda a, c: a + c),
    ("subtract", True, lambda e, c: ss.ops.subtract(e, i64(c)), lambda a, c: a - c),
    ("multiply", True, lambda e, c: ss.ops.multiply(e, i64(c)), lambda a, c: a * c),
    ("negative", True, lambda e, c: ss.ops.negative(e), lambda a, c: -a),
    ("floor_divide", True, lambda e, c: ss.ops.floor_divide(e, i64(abs(c) + 1)),
     lambda a, c: a // (abs(c) + 1)),
    ("mod", False, lambda e, c: ss.ops.mod(e, i64(abs(c) + 1)), lambda a, c: a % (abs(c) + 1)),
    ("clip", False, lambda e, c: ss.ops.clip(e, c - 3, c + 3), lambda a, c: np.clip(a, c - 3, c + 3)),
    ("minimum", True, lambda e, c: ss.ops.minimum(e, i64(c)), lambda a, c: np.minimum(a, c)),
    ("maximum", True, lambda e, c: ss.ops.maximum(e, i64(c)), lambda a, c: np.maximum(a, c)),
    ("expand_dims", True, lambda e, c: ss.ops.expand_dims(e, 0), lambda a, c: a[None]),
    ("reshape", True, lambda e, c: ss.ops.reshape(e, (-1,)), lambda a, c: a.reshape(-1)),
    ("cast", True, lambda e, c: ss.ops.cast(ss.ops.cast(e, "int32"), "int64"), lambda a, c: a),
]  # fmt: skip


@pytest.mark.parametrize("seed", range(60))
def test_random_index_chains_against_numpy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    start, step = int(rng.integers(-5, 6)), int(rng.choice([1, 2, 3, -1, -2]))
    e: Any = ss.ops.arange(start, start + step * t, step)
    steps = [_STEPS[int(i)] for i in rng.integers(0, len(_STEPS), int(rng.integers(1, 4)))]
    consts = [int(c) for c in rng.integers(-6, 7, len(steps))]
    for (_, _, build, _), c in zip(steps, consts):
        e = build(e, c)
    size = int(rng.integers(4, 40))
    mode = str(rng.choice(["raise", "fast"]))
    table = ss.var("table", ss.Tensor((size,), "float32"))
    res = ss.infer(ss.Function([table], ss.ops.take(table, e, mode=mode)))
    exact = all(s[1] for s in steps)
    for tt in range(1, 30):
        a = np.arange(start, start + step * tt, step)
        for (_, _, _, f), c in zip(steps, consts):
            a = f(a, c)
        try:
            np.take(np.zeros(size), a, mode="raise")
            runs = True
        except IndexError:
            runs = False
        try:
            got = res.valid_at({t: tt})
        except ss.SymshapeError:
            continue  # undecided: never a wrong answer
        what = f"{[s[0] for s in steps]} {consts} start={start} step={step} size={size} t={tt}"
        assert not (got and not runs), f"false accept: {what}; {res.valid_when()}"
        if exact:
            assert got == runs, f"false reject: {what}; {res.valid_when()}"
