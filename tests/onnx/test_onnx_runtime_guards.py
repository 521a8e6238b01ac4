"""Guards that must be false exactly where the model fails to run: ``Split``'s sizes must add up to
the axis' length, and a ``Reshape`` to a target with run-time entries must keep the element count.

Each row is a small model with symbolic input dimensions. symshape infers it once; then at every
size the verdict (status not ``error`` and every guard true with the sizes substituted) must equal
what onnxruntime does with the sizes: runs (for ``Reshape``: for some value of the run-time
entries of the target, all tried) or raises; where it runs, every output's shape is symshape's
type with the sizes substituted (dimensions known before run time). onnx's reference evaluator
is not the oracle for ``Split``: it slices without checking the sizes (``[1, 2]`` over an axis of
4 gives two parts, of 1 and 2); onnxruntime raises, as the operator's definition says.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
import pytest
from tests.onnx.onnx_helpers import In, make_model, node, symbols_of

import symshape as ss
import symshape.onnx as sso

F = "float32"
I64 = "int64"


def i64(*v: int) -> np.ndarray[Any, Any]:
    return np.array(v, np.int64)


@dataclass(frozen=True)
class Row:
    """A model (``nodes`` over ``inputs`` and initializers), its symbolic sizes to try, and the
    graph inputs that are run-time entries of a target (name -> length): their values are every
    tuple over ``TARGET_VALUES`` with at most one -1."""

    id: str
    nodes: Sequence[onnx.NodeProto]
    inputs: Sequence[In]
    outputs: Sequence[str]
    sizes: Sequence[Mapping[str, int]]
    inits: Mapping[str, Any] = field(default_factory=dict)
    opset: int = 17
    targets: Mapping[str, int] = field(default_factory=dict)
    status: str | None = None  # the status at the symbolic sizes, where it matters
    node_name: str | None = None  # an error's report names this node

    def __str__(self) -> str:
        return self.id


TARGET_VALUES = (-1, 0, 1, 2, 3, 4, 5, 6)


def _session(model: onnx.ModelProto) -> Any:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 4  # the failures are expected; keep them off the output
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def _target_feeds(targets: Mapping[str, int]) -> list[dict[str, np.ndarray[Any, Any]]]:
    per_input: list[list[tuple[str, np.ndarray[Any, Any]]]] = []
    for name, k in sorted(targets.items()):
        vals = [v for v in itertools.product(TARGET_VALUES, repeat=k) if v.count(-1) <= 1]
        per_input.append([(name, i64(*v)) for v in vals])
    return [dict(combo) for combo in itertools.product(*per_input)]


def check_row(row: Row) -> sso.OnnxInferenceResult:
    tensors = [i for i in row.inputs if i.name not in row.targets]
    model = make_model(row.nodes, row.inputs, row.outputs, row.opset, row.inits)
    syms = symbols_of(tensors)
    res = sso.infer(model, dims=syms)
    if row.status is not None:
        assert res.status == row.status, res.report()
    if res.status == "error" and row.node_name is not None:
        assert f"node '{row.node_name}'" in str(res.errors[0].span), res.report()
    try:
        sess = _session(model)
    except Exception:  # onnxruntime's own shape inference refuses the model: it never runs
        sess = None
    rng = np.random.default_rng(0)
    for size in row.sizes:
        env: dict[Any, int] = {syms[k]: v for k, v in size.items()}
        ours = res.status != "error" and all(g.holds(env) for g in res.guards)
        shapes = {i.name: [size[d] if isinstance(d, str) else d for d in i.shape or ()] for i in tensors}
        feeds = {i.name: rng.standard_normal(shapes[i.name]).astype(i.dtype) for i in tensors}
        ran = 0
        for extra in _target_feeds(row.targets) if sess is not None else []:
            try:
                got = sess.run(None, {**feeds, **extra})
            except Exception:  # onnxruntime's failure: the oracle says "does not run"
                continue
            ran += 1
            if res.status == "error":
                continue
            for o, arr in zip(row.outputs, got):
                t = res.type_of(o)
                assert isinstance(t, ss.TensorType) and t.ndim == np.ndim(arr), (o, t, arr.shape)
                for d, n in zip(t.subs(env).dims, np.shape(arr)):
                    if d.is_constant:
                        assert int(d) == n, f"{row}: {o}: {t} at {size} vs {np.shape(arr)}"
        verdict = f"{row} at {size}: symshape says {ours}, onnxruntime ran {ran}"
        assert ours == (ran > 0), f"{verdict}\n{res.report()}"
    return res


def split_row(
    id: str,
    shape: Sequence[int | str],
    sizes: Sequence[int],
    axis: int,
    form: str,
    opset: int,
    try_sizes: Sequence[Mapping[str, int]] = ({},),
    status: str | None = None,
) -> Row:
    """``Split`` of ``x`` by ``sizes`` given as the ``split`` attribute or as an initializer."""
    outs = [f"y{i}" for i in range(len(sizes))]
    if form == "attr":
        nodes, inits = [node("Split", ["x"], outs, name="sp", axis=axis, split=list(sizes))], {}
    else:
        nodes, inits = [node("Split", ["x", "s"], outs, name="sp", axis=axis)], {"s": i64(*sizes)}
    x = In("x", F, tuple(shape))
    return Row(id, nodes, [x], outs, try_sizes, inits, opset, status=status, node_name="sp")


NS = [{"n": k} for k in (1, 2, 3, 4, 5, 6)]

SPLIT_ROWS = [
    split_row("attr-exact", (3, 4), (1, 2), 0, "attr", 11, status="ok"),
    split_row("attr-short", (4, 4), (1, 2), 0, "attr", 11, status="error"),
    split_row("attr-long", (2, 4), (1, 2), 0, "attr", 11, status="error"),
    split_row("attr-symbolic", ("n", 4), (1, 2), 0, "attr", 11, NS, "guarded"),
    split_row("input-exact", (2, 5), (2, 3), 1, "input", 13, status="ok"),
    split_row("input-short", (2, 6), (2, 3), 1, "input", 13, status="error"),
    split_row("input-symbolic", (2, "n"), (2, 2), -1, "input", 13, NS, "guarded"),
    split_row("input-three", ("n", 3), (1, 0, 2), 0, "input", 18, NS, "guarded"),
    split_row("one-part", ("n",), (3,), 0, "input", 18, NS, "guarded"),
    split_row("one-part-exact", (3, "n"), (3,), 0, "input", 18, NS, "ok"),
    split_row("other-axis-symbolic", ("n", 6), (4, 2), 1, "attr", 11, NS, "ok"),
    split_row("opset2-attr", ("n", 2), (2, 2), 0, "attr", 2, NS, "guarded"),
]


_SIZES_OF_Y = [node("Shape", ["y"], ["shy"]), node("Concat", ["shy", "shy"], ["s"], axis=0)]
_SPLIT_BY_Y = node("Split", ["x", "s"], ["a", "b"], name="sp", axis=1)
NM = [{"n": n, "m": m} for n in (2, 3, 4, 6) for m in (1, 2, 3)]

SPLIT_ROWS += [
    # sizes (m, m) computed from another input's shape: the guard n == 2*m
    Row(
        "shape-values",
        [*_SIZES_OF_Y, _SPLIT_BY_Y],
        [In("x", F, (2, "n")), In("y", F, ("m",))],
        ["a", "b"],
        NM,
        opset=18,
        status="guarded",
        node_name="sp",
    ),
    Row(
        "shape-values-never",
        [*_SIZES_OF_Y, _SPLIT_BY_Y],
        [In("x", F, (2, 3)), In("y", F, ("m",))],
        ["a", "b"],
        [{"m": m} for m in (1, 2)],
        opset=18,
        status="error",
        node_name="sp",
    ),
    # sizes that are a graph input: nothing known to check
    Row(
        "run-time-sizes",
        [_SPLIT_BY_Y],
        [In("x", F, (2, "n")), In("s", I64, (2,))],
        ["a", "b"],
        [{"n": n} for n in (1, 4)],
        opset=18,
        targets={"s": 2},
        status="ok",
    ),
]


@pytest.mark.parametrize("row", SPLIT_ROWS, ids=str)
def test_split_sizes_must_fill_the_axis(row: Row) -> None:
    check_row(row)


def test_split_error_explains_the_sizes() -> None:
    res = check_row(SPLIT_ROWS[1])
    d = res.errors[0]
    assert d.code == "shape-mismatch" and str(d.span) == "test: node 'sp' (Split)"
    assert "the sizes [1, 2] add up to 3, but axis 0 of `Tensor[(4, 4), float32]` is 4 long" in d.message


def test_split_guard_is_the_sum() -> None:
    res = check_row(SPLIT_ROWS[3])
    assert [str(g.cond) for g in res.guards] == ["n == 3"]


def _reshape(
    target: Sequence[str],
    x: In,
    runtime: Mapping[str, int],
    inits: Mapping[str, Any],
    id: str,
    sizes: Sequence[Mapping[str, int]],
    status: str | None = None,
    pre: Sequence[onnx.NodeProto] = (),
) -> Row:
    """``Reshape`` of ``x`` to the concatenation of ``target`` (initializers, shape values made by
    ``pre``, and graph inputs of run-time values of the lengths in ``runtime``)."""
    nodes = [*pre, node("Concat", list(target), ["t"], axis=0), node("Reshape", ["x", "t"], ["y"], name="rs")]
    ins = [x, *(In(k, I64, (v,)) for k, v in runtime.items())]
    return Row(id, nodes, ins, ["y"], sizes, dict(inits), 17, dict(runtime), status, "rs")


_SHAPE0 = [
    node("Shape", ["x"], ["sh"]),
    node("Slice", ["sh", "z", "o"], ["d0"]),
]
_SH = {"z": i64(0), "o": i64(1)}

RESHAPE_ROWS = [
    _reshape(["s", "c5"], In("x", F, ("n", 4)), {"s": 2}, {"c5": i64(5)}, "known-5", NS, "guarded"),
    _reshape(["s", "c4"], In("x", F, (2, 3)), {"s": 2}, {"c4": i64(4)}, "never", [{}], "error"),
    _reshape(["s", "c4"], In("x", F, (2, 6)), {"s": 2}, {"c4": i64(4)}, "static-ok", [{}], "ok"),
    _reshape(["c3", "s"], In("x", F, ("n", 2)), {"s": 2}, {"c3": i64(3)}, "known-3-first", NS, "guarded"),
    _reshape(["s", "m1"], In("x", F, ("n", 3)), {"s": 2}, {"m1": i64(-1)}, "with-minus-one", NS, "ok"),
    _reshape(
        ["c0", "s", "c4"],
        In("x", F, ("n", 6, "m")),
        {"s": 2},
        {"c0": i64(0), "c4": i64(4)},
        "copy-cancels",
        [{"n": n, "m": m} for n in (1, 2) for m in (1, 2, 3, 4)],
        "guarded",
    ),
    _reshape(
        ["d0", "s", "c4"],
        In("x", F, ("n", 6)),
        {"s": 2},
        {"c4": i64(4), **_SH},
        "shape-value-never",
        [{"n": k} for k in (1, 2, 3)],
        "error",
        _SHAPE0,
    ),
    _reshape(
        ["d0", "s", "c3"],
        In("x", F, ("n", 6)),
        {"s": 2},
        {"c3": i64(3), **_SH},
        "shape-value-ok",
        [{"n": k} for k in (1, 2, 3)],
        "ok",
        _SHAPE0,
    ),
    _reshape(
        ["d0", "c3"],
        In("x", F, ("n", 4)),
        {},
        {"c3": i64(3), **_SH},
        "shape-value-count",
        [{"n": k} for k in (1, 2)],
        "error",
        _SHAPE0,
    ),
    _reshape(
        ["d0", "s", "c2"],
        In("x", F, ("n", "m")),
        {"s": 1},
        {"c2": i64(2), **_SH},
        "one-unknown-inferred",
        [{"n": n, "m": m} for n in (1, 3) for m in (1, 2, 3, 4)],
        "guarded",
        _SHAPE0,
    ),
]


@pytest.mark.parametrize("row", RESHAPE_ROWS, ids=str)
def test_reshape_runtime_target_keeps_the_count(row: Row) -> None:
    check_row(row)


def test_reshape_runtime_target_error_names_the_node() -> None:
    res = check_row(RESHAPE_ROWS[1])
    d = res.errors[0]
    assert d.code == "reshape-size" and str(d.span) == "test: node 'rs' (Reshape)"
    assert "newshape (?, ?, 4): the known entries multiply to 4, which must divide 6" in d.message
