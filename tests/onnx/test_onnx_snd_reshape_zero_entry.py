"""Oracle: ONNX ``Reshape`` (no ``allowzero``) to a target computed at run time whose entry may be 0
(``N - 1``, a ``NonZero`` count), against onnxruntime with its graph optimizations off (they
mis-run computed reshapes).

A 0 in such a target copies the input's size at its place. symshape reads an entry that may be 0
as a size where that is decided (bounds, the entry being the input's size there, the solver), as a
copy where it is 0, and otherwise one case per reading: at each size below onnxruntime runs the
model exactly where symshape's guards hold (where they are over the sizes given; a guard over a
size the run decides is not compared), and every output's shape is symshape's type with the sizes
substituted (a ``?`` matches any size).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import onnx
import pytest
import size_oracle
from onnx import TensorProto, helper, numpy_helper
from onnx_helpers import run_ort_plain

import symshape as ss
import symshape.onnx as sso

ort = pytest.importorskip("onnxruntime")

Arrays = dict[str, np.ndarray[Any, Any]]
F = TensorProto.FLOAT


def disagreements(
    model: onnx.ModelProto,
    names: Sequence[str],
    sizes: Sequence[dict[str, int]],
    feeds: Callable[[dict[str, int]], Arrays],
) -> list[str]:
    """:func:`size_oracle.disagreements` with onnxruntime run without graph optimizations (its
    optimized graph mis-runs reshapes to computed targets), fed by ``feeds``."""
    return size_oracle.disagreements(
        model, names, sizes, lambda size, _: feeds(dict(size)), "onnxruntime-plain"
    )


def model(
    nodes: Sequence[onnx.NodeProto],
    inputs: Sequence[onnx.ValueInfoProto],
    inits: Mapping[str, Any],
    opset: int = 17,
) -> onnx.ModelProto:
    ts = [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()]
    g = helper.make_graph(list(nodes), "g", list(inputs), [helper.make_empty_tensor_value_info("y")], ts)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def i64(*v: int) -> np.ndarray[Any, Any]:
    return np.array(v, np.int64)


def size_minus_one(axis: int, out: str) -> list[onnx.NodeProto]:
    """``out = Shape(x)[axis:axis+1] - 1``."""
    return [
        helper.make_node("Shape", ["x"], [f"s{out}"], start=axis, end=axis + 1),
        helper.make_node("Sub", [f"s{out}", "one"], [out]),
    ]


def xs(*shape: int | str) -> list[onnx.ValueInfoProto]:
    return [helper.make_tensor_value_info("x", F, list(shape))]


def x_zeros(*names: str | int) -> Callable[[dict[str, int]], Arrays]:
    return lambda size: {"x": np.zeros([size[n] if isinstance(n, str) else n for n in names], np.float32)}


def test_n_minus_one_rows_runs_only_where_it_copies() -> None:
    """``x`` is ``(N, 3)``, the target ``[N - 1, 3]``: as a size the counts never agree (``3*N``
    vs ``3*N - 3``), so the entry must be 0, a copy: the result is ``(N, 3)`` under ``N == 1``,
    exactly where onnxruntime runs (it refuses every ``N >= 2``)."""
    m = model(
        [*size_minus_one(0, "e"), helper.make_node("Concat", ["e", "three"], ["t"], axis=0),
         helper.make_node("Reshape", ["x", "t"], ["y"])],
        xs("N", 3), {"one": i64(1), "three": i64(3)},
    )  # fmt: skip
    res = sso.infer(m, dims={"N": ss.dim("N")})
    assert str(res.type_of("y")) == "Tensor[(N, 3), float32]"
    assert [str(g.cond) for g in res.guards] == ["N == 1"], res.report()
    got = run_ort_plain(m, {"x": np.zeros((1, 3), np.float32)})
    assert got is not None and got[0].shape == (1, 3)
    assert run_ort_plain(m, {"x": np.zeros((2, 3), np.float32)}) is None
    assert disagreements(m, ["N"], [{"N": n} for n in range(1, 6)], x_zeros("N", 3)) == []


def test_entry_beside_minus_one_read_both_ways() -> None:
    """``x`` is ``(N, M)``, the target ``[M - 1, -1]``: at ``M == 1`` the 0 copies ``N`` (the
    result ``(N, 1)``), else ``(M - 1, N*M/(M - 1))`` where that divides. Both cases can hold: the
    guard is their disjunction, the sizes that differ a ``?``."""
    m = model(
        [*size_minus_one(1, "e"), helper.make_node("Concat", ["e", "minus1"], ["t"], axis=0),
         helper.make_node("Reshape", ["x", "t"], ["y"])],
        xs("N", "M"), {"one": i64(1), "minus1": i64(-1)},
    )  # fmt: skip
    res = sso.infer(m, dims={"N": ss.dim("N"), "M": ss.dim("M")})
    assert res.status == "guarded" and len(res.guards) == 1, res.report()
    t = res.type_of("y")
    assert isinstance(t, ss.TensorType) and t.ndim == 2
    sizes = [{"N": n, "M": k} for n in range(1, 5) for k in range(1, 5)]
    assert disagreements(m, ["N", "M"], sizes, x_zeros("N", "M")) == []
    # (the sizes cover both readings and a refusal)
    assert run_ort_plain(m, {"x": np.zeros((3, 1), np.float32)}) is not None
    assert run_ort_plain(m, {"x": np.zeros((3, 3), np.float32)}) is None


def test_entry_that_is_the_input_size_needs_no_case() -> None:
    """The target is ``[rows, 3]`` with ``rows`` the size of ``x[1:]``'s axis 0 (``N - 1``), which
    is what a 0 there copies: both readings agree, so the result is ``(N - 1, 3)`` and nothing is
    required (onnxruntime runs at ``N == 1``, an empty tensor)."""
    m = model(
        [helper.make_node("Slice", ["x", "one", "big", "zero"], ["x1"]),
         helper.make_node("Shape", ["x1"], ["r"], start=0, end=1),
         helper.make_node("Concat", ["r", "three"], ["t"], axis=0),
         helper.make_node("Reshape", ["x1", "t"], ["y"])],
        xs("N", 3), {"one": i64(1), "zero": i64(0), "big": i64(1 << 40), "three": i64(3)},
    )  # fmt: skip
    res = sso.infer(m, dims={"N": ss.dim("N")})
    assert res.status == "ok", res.report()
    assert str(res.type_of("y")) == "Tensor[(N - 1, 3), float32]"
    assert disagreements(m, ["N"], [{"N": n} for n in range(1, 5)], x_zeros("N", 3)) == []


def test_entry_past_the_input_rank_must_be_a_size() -> None:
    """``x`` is ``(N,)``, the target ``[2, N - 1]``: a 0 at position 1 has no input size to copy
    (onnxruntime refuses), so the entry is a size: ``(2, N - 1)`` under ``N == 2``."""
    m = model(
        [*size_minus_one(0, "e"), helper.make_node("Concat", ["two", "e"], ["t"], axis=0),
         helper.make_node("Reshape", ["x", "t"], ["y"])],
        xs("N"), {"one": i64(1), "two": i64(2)},
    )  # fmt: skip
    res = sso.infer(m, dims={"N": ss.dim("N")})
    assert str(res.type_of("y")) == "Tensor[(2, N - 1), float32]"
    assert res.valid_at({ss.dim("N"): 2}) and not res.valid_at({ss.dim("N"): 1})
    assert disagreements(m, ["N"], [{"N": n} for n in range(1, 6)], x_zeros("N")) == []


def test_two_entries_that_may_be_0() -> None:
    """``x`` is ``(N, M)``, the target ``[M - 1, N - 1]``: four readings, of which the solver
    drops the one of two sizes (``(M - 1)*(N - 1) == N*M`` has no solution); onnxruntime runs at
    ``(1, 1)``, ``(1, 2)`` and ``(2, 1)`` only, which is what the guard says."""
    m = model(
        [*size_minus_one(1, "a"), *size_minus_one(0, "b"),
         helper.make_node("Concat", ["a", "b"], ["t"], axis=0),
         helper.make_node("Reshape", ["x", "t"], ["y"])],
        xs("N", "M"), {"one": i64(1)},
    )  # fmt: skip
    sizes = [{"N": n, "M": k} for n in range(1, 5) for k in range(1, 5)]
    assert disagreements(m, ["N", "M"], sizes, x_zeros("N", "M")) == []
    res = sso.infer(m, dims={"N": ss.dim("N"), "M": ss.dim("M")})
    ok = [(s["N"], s["M"]) for s in sizes if res.valid_at({ss.dim(k): v for k, v in s.items()})]
    assert ok == [(1, 1), (1, 2), (2, 1)]


def test_a_nonzero_count_entry() -> None:
    """The target is ``[k, 4]`` with ``k`` the number of non-zero entries of ``c`` (a size the run
    decides, maybe 0): at ``k == 0`` onnxruntime copies ``N`` (and runs), else ``k`` must be
    ``N``. The result is ``(?, 4)`` under the guard that says so (over the run's ``k``, ``u0``)."""
    m = model(
        [helper.make_node("NonZero", ["c"], ["nz"]),
         helper.make_node("Shape", ["nz"], ["k"], start=1, end=2),
         helper.make_node("Concat", ["k", "four"], ["t"], axis=0),
         helper.make_node("Reshape", ["x", "t"], ["y"])],
        [*xs("N", 4), helper.make_tensor_value_info("c", TensorProto.INT64, ["K"])], {"four": i64(4)},
    )  # fmt: skip
    res = sso.infer(m, dims={"N": ss.dim("N"), "K": ss.dim("K")})
    t = res.type_of("y")
    assert isinstance(t, ss.TensorType) and t.ndim == 2 and t.dims[1] == 4, t
    assert res.status == "guarded" and len(res.guards) == 1, res.report()
    assert "`(u0 >= 1 and N == u0) or u0 == 0`" in res.report() and "non-zero elements" in res.report()

    def feeds(size: dict[str, int]) -> Arrays:
        c = np.zeros(size["K"], np.int64)
        c[: size["nz"]] = 1
        return {"x": np.zeros((size["N"], 4), np.float32), "c": c}

    sizes = [{"N": 2, "K": 3, "nz": z} for z in range(4)] + [{"N": 3, "K": 3, "nz": 3}]
    assert disagreements(m, ["N", "K"], sizes, feeds) == []
    for z, shape in ((0, (2, 4)), (2, (2, 4))):  # (a 0 copies N; 2 is N)
        got = run_ort_plain(m, feeds({"N": 2, "K": 3, "nz": z}))
        assert got is not None and got[0].shape == shape
    assert run_ort_plain(m, feeds({"N": 2, "K": 3, "nz": 1})) is None


def test_allowzero_reads_a_zero_entry_as_a_size() -> None:
    """With ``allowzero=1`` a 0 is a size: ``[N - 1, 3]`` never fits ``(N, 3)`` (0 elements vs 3
    at ``N == 1``), an error; onnxruntime refuses every size."""
    m = model(
        [*size_minus_one(0, "e"), helper.make_node("Concat", ["e", "three"], ["t"], axis=0),
         helper.make_node("Reshape", ["x", "t"], ["y"], allowzero=1)],
        xs("N", 3), {"one": i64(1), "three": i64(3)},
    )  # fmt: skip
    res = sso.infer(m, dims={"N": ss.dim("N")})
    assert res.status == "error" and {e.code for e in res.errors} == {"reshape-size"}, res.report()
    assert all(run_ort_plain(m, {"x": np.zeros((n, 3), np.float32)}) is None for n in range(1, 4))
