"""The sizes a program accepts, as a user reads them (review findings of session 13).

* ``valid_at``/``why_invalid`` take a symbol's value as any integer that says so (numpy's, torch's:
  ``operator.index``) and refuse floats and bools; a symbol that is not the program's is an
  ``invalid-argument`` error, as an unknown name is.
* ``why_invalid`` of a model the importer could not import says so instead of calling the sizes
  invalid (the model may run at every size).
* ``max``/``min`` absorb (``max(n, min(9, n))`` is ``n``) and ``valid_when`` drops an alternative of
  an ``or`` that implies another one (``n <= 9 or n == 1`` is ``n <= 9``): the condition of a
  position table sliced to the sequence reads ``n <= 9``, its output axis ``n``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import symshape as ss
from symshape.encoding.conds import cond_value, eq, le, lt
from symshape.encoding.dims import dmax, dmin
from symshape.ir.cond_reading import cond_text

torch = pytest.importorskip("torch")
sst = pytest.importorskip("symshape.torch")


def _reshape_program() -> tuple[ss.InferenceResult, ss.Dim]:
    n = ss.dim("n")
    x = ss.var("x", ss.Tensor((n, 6), "float32"))
    return ss.infer(ss.Function([x], ss.ops.reshape(x, (-1, 4)))), n


@pytest.mark.parametrize(
    ("value", "expected"),
    [(np.int64(4), True), (np.int32(3), False), (torch.tensor(2), True), (6, True)],
)
def test_integer_values_of_any_kind(value: Any, expected: bool) -> None:
    res, n = _reshape_program()
    assert res.valid_at({n: value}) is expected
    assert res.why_invalid({n: value}).startswith("valid at" if expected else "invalid at")


@pytest.mark.parametrize("value", [2.0, True, np.bool_(True), "2", None, np.float64(4.0)])
def test_values_that_are_not_integers_are_refused(value: Any) -> None:
    res, n = _reshape_program()
    with pytest.raises(ss.SymshapeError, match="must be an int") as e:
        res.valid_at({n: value})
    assert e.value.code == "invalid-argument"


def test_a_symbol_of_another_program_is_refused_like_an_unknown_name() -> None:
    res, n = _reshape_program()
    z = ss.dim("z")
    for key in (z, "z"):
        with pytest.raises(ss.SymshapeError, match="no symbol of the program is named 'z'") as e:
            res.why_invalid({n: 4, key: 5})
        assert e.value.code == "invalid-argument"
    assert res.valid_at({"n": 4}) and res.valid_at({ss.dim("n"): 4})  # the same symbol by name


class _Bag(torch.nn.Module):  # type: ignore[misc]
    def __init__(self) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(10, 4))

    def forward(self, ids: Any, x: Any) -> Any:
        return torch.nn.functional.embedding_bag(ids, self.w, torch.tensor([0])) + x.sum()


def test_why_invalid_of_a_model_not_imported_says_so() -> None:
    b, t = ss.dims("b t")
    res = sst.infer(_Bag(), {"ids": ss.Tensor((t,), "int64"), "x": ss.Tensor((b, t), "float32")})
    assert res.status == "error" and not res.valid_at({b: 2, t: 3})
    assert tuple(_Bag()(torch.tensor([1, 2, 3]), torch.zeros(2, 3)).shape) == (1, 4)  # it runs
    text = res.why_invalid({b: 2, t: 3})
    head = text.splitlines()[0]
    assert "could not import" in head and "may run" in head and "type errors" not in head
    assert "[unsupported-op]" in text
    # a type error still reads as one
    n = ss.dim("n")
    x = ss.var("x", ss.Tensor((n, 3), "float32"))
    bad = ss.infer(ss.Function([x], ss.ops.add(x, ss.Constant(shape=(4,)))))
    assert bad.status == "error"
    assert "the program has type errors" in bad.why_invalid({n: 2}).splitlines()[0]


def test_max_and_min_absorb() -> None:
    n, m = ss.dims("n m")
    assert dmax(n, dmin(9, n)) == n
    assert dmin(n, dmax(9, n)) == n
    assert dmax(dmin(9, n), n, 3) == dmax(n, 3)
    assert dmin(dmax(n, m), n, m) == dmin(n, m)
    assert dmax(n, dmin(9, m)) != n  # not absorbed: another symbol
    for v in range(1, 13):
        for w in range(1, 13):
            env = {n: v, m: w}
            assert dmax(n, dmin(9, m)).subs(env) == max(v, min(9, w))
            assert dmin(dmax(n, m), n, 2).subs(env) == min(max(v, w), v, 2)


class _PosSliced(torch.nn.Module):  # type: ignore[misc]
    def __init__(self) -> None:
        super().__init__()
        self.pos = torch.nn.Parameter(torch.zeros(1, 9, 16))

    def forward(self, x: Any) -> Any:
        return x + self.pos[:, : x.shape[1]]


def test_a_sliced_position_table_reads_as_a_person_writes_it() -> None:
    b, n = ss.dims("b n")
    res = sst.infer(_PosSliced(), {"x": ss.Tensor((b, n, 16), "float32")})
    assert res.valid_when() == "n <= 9"
    out = res.type_of("add")
    assert isinstance(out, ss.TensorType) and out.shape == (b, n, 16)
    for k in range(1, 12):
        try:
            _PosSliced()(torch.zeros(2, k, 16))
            runs = True
        except RuntimeError:
            runs = False
        assert res.valid_at({b: 2, n: k}) is runs


def test_a_data_dependent_size_is_at_most_what_it_counts() -> None:
    n = ss.dim("n")
    x = ss.var("x", ss.Tensor((n, 3), "float32"))
    res = ss.infer(ss.Function([x], ss.ops.reshape(ss.ops.nonzero(x), (-1, 4))))
    assert res.valid_when() == "u0 % 2 == 0"
    # at n = 2 a (2, 3) tensor has at most 6 non-zero elements
    assert [u for u in range(10) if res.valid_at({n: 2, "u0": u})] == [0, 2, 4, 6]
    text = res.why_invalid({n: 2, "u0": 8})
    assert "no run has these sizes: `u0 <= 3*n` holds of every run" in text
    assert "the number of non-zero elements" in text


class _Masked(torch.nn.Module):  # type: ignore[misc]
    def forward(self, x: Any) -> Any:
        return x[x > 0].reshape(-1, 2)


@pytest.mark.parametrize(("b", "t"), [(1, 3), (2, 2), (1, 1)])
def test_a_mask_count_beyond_the_mask_is_no_run(b: int, t: int) -> None:
    bs, ts = ss.dims("b t")
    res = sst.infer(_Masked(), {"x": ss.Tensor((bs, ts), "float32")})
    runs: set[int] = set()  # the counts at which eager torch runs, over every sign pattern
    for bits in range(2 ** (b * t)):
        x = torch.tensor([1.0 if bits >> i & 1 else -1.0 for i in range(b * t)]).reshape(b, t)
        try:
            _Masked()(x)
        except RuntimeError:
            continue
        runs.add(int((x > 0).sum()))
    assert {u for u in range(2 * b * t + 3) if res.valid_at({bs: b, ts: t, "u0": u})} == runs


class _Shifted(torch.nn.Module):  # type: ignore[misc]
    def __init__(self) -> None:
        super().__init__()
        self.pos = torch.nn.Embedding(12, 4)

    def forward(self, x: Any) -> Any:
        return x + self.pos(torch.arange(x.shape[1]) + 2)


def test_the_range_note_says_where_the_indices_moved_from_their_arange() -> None:
    b, t = ss.dims("b t")
    res = sst.infer(_Shifted(), {"x": ss.Tensor((b, t, 4), "float32")})
    assert res.valid_when() == "t <= 10"
    why = res.why_invalid({b: 1, t: 11})
    assert "the indices, with entries in [2, t + 1], are computed from `arange(0, t, 1)`" in why, why
    assert "with entries in [0, t - 1]" in why, why
    with pytest.raises(IndexError):
        _Shifted()(torch.zeros(1, 11, 4))
    assert _Shifted()(torch.zeros(1, 10, 4)).shape == (1, 10, 4)


@pytest.mark.parametrize(
    ("make", "text"),
    [
        (lambda b, t, p, s: lt(b * t + p + s - t - 1, b * t), "p + s <= t"),
        (lambda b, t, p, s: eq(b * t + 1, b * t + p), "p == 1"),
        (lambda b, t, p, s: lt(b * t + 1, b * t + t), "t >= 2"),
        (lambda b, t, p, s: le(2 * b + t, b + 5), "b + t <= 5"),
        (lambda b, t, p, s: eq(b * t, 16 * p), "b*t == 16*p"),  # nothing shared
    ],
)
def test_terms_on_both_sides_of_a_condition_cancel_in_its_text(make: Any, text: str) -> None:
    b, t, p, s = ss.dims("b t p s")
    c = make(b, t, p, s)
    assert cond_text(c) == text
    for env in ({b: 2, t: 3, p: 1, s: 1}, {b: 1, t: 5, p: 4, s: 2}, {b: 3, t: 2, p: 1, s: 4}):
        # the text means what the condition means
        assert cond_value(c, env) == eval(text, {}, {k.atom.name: v for k, v in env.items()})
