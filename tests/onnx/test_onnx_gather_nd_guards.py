"""GatherND's and GatherElements' index bounds from value ranges, in small ONNX graphs, against
onnxruntime.

Each graph reads a data tensor with GatherND at indices of known range (built from ``Range``,
``Shape``, ``Where``, ``Concat`` of index columns, as the dynamo exporter writes ``x[rows, cols]``).
onnxruntime refuses an index tuple whose column ``j`` lies outside ``[-d, d)`` for the data axis
``b + j`` it reads. At every size of a grid ``valid_at`` must be True exactly where onnxruntime
runs (with the run-time data chosen so that the indices reach their range's ends).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_helpers import ort_runs, run_ort

import symshape as ss
import symshape.onnx as sso

pytest.importorskip("onnxruntime")

_node = helper.make_node
_F = TensorProto.FLOAT
_I = TensorProto.INT64


def _c(name: str, v: Any) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(v, dtype=np.int64), name)


# the scalar sizes of the symbolic inputs: `t`, `m` (data) and `n`, `b` (as the inputs say)
_SIZES = [
    _node("Shape", ["q"], ["n1"], start=0, end=1),
    _node("Squeeze", ["n1"], ["n"]),
    _node("Range", ["zero", "n", "one"], ["r"]),  # 0 .. n - 1
]
_INITS = [_c("zero", 0), _c("one", 1), _c("two", 2), _c("ax0", [0]), _c("ax1", [1]), _c("axm1", [-1])]


@dataclass(frozen=True)
class Case:
    """GatherND(data, idx, batch_dims) with ``idx`` made by ``nodes`` from ``q: (n,)`` (and
    ``cond``); ``data``'s shape names the symbols; ``truth`` says where onnxruntime runs."""

    name: str
    data: tuple[str | int, ...]
    nodes: tuple[onnx.NodeProto, ...]
    truth: Callable[[Mapping[str, int]], bool]
    batch_dims: int = 0
    cond: bool | None = None  # a bool input `cond` of shape (n,), fed all this value


CASES = [
    Case(  # one column: rows 0 .. n - 1 of (t, 3)
        "rows",
        ("t", 3),
        (_node("Unsqueeze", ["r", "axm1"], ["idx"]),),
        lambda s: s["n"] <= s["t"],
    ),
    Case(  # negative indices -n .. -1 read from the end
        "negative rows",
        ("t", 3),
        (_node("Sub", ["r", "n"], ["neg"]), _node("Unsqueeze", ["neg", "axm1"], ["idx"])),
        lambda s: s["n"] <= s["t"],
    ),
    Case(  # one index tuple (n,): the last entry of Shape(q), one past the end at n == t
        "shape value",
        ("t",),
        (_node("Reshape", ["n1", "one1"], ["idx"]),),
        lambda s: s["n"] < s["t"],
    ),
    Case(  # x[arange(n)[:, None], arange(n) + 1] of (t, m): two columns, each its own bound
        "two columns",
        ("t", "m"),
        (
            _node("Add", ["r", "one"], ["r1"]),
            _node("Unsqueeze", ["r", "axm1"], ["c0"]),
            _node("Unsqueeze", ["r1", "axm1"], ["c1"]),
            _node("Concat", ["c0", "c1"], ["idx"], axis=-1),
        ),
        lambda s: s["n"] <= s["t"] and s["n"] < s["m"],
    ),
    Case(  # the dynamo export of mask[rows, cols]: (b, n, 2) from expanded aranges (GPT-2 KV)
        "row and column grids",
        ("b", "t"),
        (
            _node("Shape", ["data"], ["b1"], start=0, end=1),
            _node("Squeeze", ["b1"], ["bs"]),
            _node("Range", ["zero", "bs", "one"], ["rb"]),
            _node("Unsqueeze", ["rb", "ax1"], ["rows"]),  # (b, 1)
            _node("Unsqueeze", ["r", "ax0"], ["cols"]),  # (1, n)
            _node("Concat", ["b1", "n1"], ["grid"], axis=0),
            _node("Expand", ["rows", "grid"], ["rows2"]),
            _node("Expand", ["cols", "grid"], ["cols2"]),
            _node("Unsqueeze", ["rows2", "axm1"], ["c0"]),
            _node("Unsqueeze", ["cols2", "axm1"], ["c1"]),
            _node("Concat", ["c0", "c1"], ["idx"], axis=-1),
        ),
        lambda s: s["n"] <= s["t"],
    ),
    Case(  # a constant column: data axis 1 must have 3 entries
        "constant column",
        ("t", "m"),
        (
            _node("Mul", ["r", "zero"], ["z"]),
            _node("Add", ["z", "two"], ["k"]),
            _node("Unsqueeze", ["r", "axm1"], ["c0"]),
            _node("Unsqueeze", ["k", "axm1"], ["c1"]),
            _node("Concat", ["c0", "c1"], ["idx"], axis=-1),
        ),
        lambda s: s["n"] <= s["t"] and s["m"] >= 3,
    ),
    Case(  # Where(cond, r, r + 1): the hull [0, n]; fed all False, the entries are 1 .. n
        "where",
        ("t", 3),
        (
            _node("Add", ["r", "one"], ["r1"]),
            _node("Where", ["cond", "r", "r1"], ["w"]),
            _node("Unsqueeze", ["w", "axm1"], ["idx"]),
        ),
        lambda s: s["n"] < s["t"],
        cond=False,
    ),
    Case(  # batch_dims=1: data (b, t, 3), indices (b, n, 1)
        "batch dims",
        ("b", "t", 3),
        (
            _node("Shape", ["data"], ["b1"], start=0, end=1),
            _node("Concat", ["b1", "n1", "one1"], ["grid"], axis=0),
            _node("Unsqueeze", ["r", "axm1"], ["c"]),  # (n, 1)
            _node("Expand", ["c", "grid"], ["idx"]),
        ),
        lambda s: s["n"] <= s["t"],
        batch_dims=1,
    ),
    Case(  # a bool cast: entries 0 or 1 (fed all True)
        "bool cast",
        ("t", 3),
        (_node("Cast", ["cond"], ["cb"], to=_I), _node("Unsqueeze", ["cb", "axm1"], ["idx"])),
        lambda s: s["t"] >= 2,
        cond=True,
    ),
]


def _model(c: Case) -> onnx.ModelProto:
    nodes = [*_SIZES, *c.nodes, _node("GatherND", ["data", "idx"], ["y"], batch_dims=c.batch_dims)]
    inputs = [
        helper.make_tensor_value_info("data", _F, list(c.data)),
        helper.make_tensor_value_info("q", _F, ["n"]),
    ]
    if c.cond is not None:
        inputs.append(helper.make_tensor_value_info("cond", TensorProto.BOOL, ["n"]))
    g = helper.make_graph(
        nodes, c.name.replace(" ", "_"), inputs, [helper.make_tensor_value_info("y", _F, None)],
        [*_INITS, _c("one1", [1])],
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.name)
def test_gather_nd_index_bounds(c: Case) -> None:
    model = _model(c)
    names = sorted({d for d in c.data if isinstance(d, str)} | {"n"})
    syms = {k: ss.dim(k) for k in names}
    res = sso.infer(model, dims=syms)
    assert not res.errors and not res.unsupported, res.report()
    ranges = {"b": (1, 2), "t": range(1, 6), "m": range(1, 5), "n": range(1, 7)}
    checked = {True: 0, False: 0}
    for vals in itertools.product(*(ranges[k] for k in names)):
        s = dict(zip(names, vals))
        feeds = {
            "data": np.zeros([s[d] if isinstance(d, str) else d for d in c.data], np.float32),
            "q": np.zeros(s["n"], np.float32),
        }
        if c.cond is not None:
            feeds["cond"] = np.full(s["n"], c.cond)
        ran = ort_runs(model, feeds)
        assert ran == c.truth(s), (c.name, s)  # the oracle agrees with the case's own statement
        assert res.valid_at({syms[k]: v for k, v in s.items()}) == ran, (c.name, s, res.valid_when())
        checked[ran] += 1
    assert checked[True] > 0 and checked[False] > 0


def test_gather_nd_shapes_unchanged() -> None:
    """The composed takes give GatherND's shape: indices.shape[:-1] + data.shape[b+k:]."""
    b, t, m, n = ss.dims("b t m n")
    for c, want in ((CASES[3], (n,)), (CASES[4], (b, n)), (CASES[7], (b, n, 3))):
        res = sso.infer(_model(c), dims={"b": b, "t": t, "m": m, "n": n})
        assert res.type_of("y") == ss.Tensor(want, "float32"), (c.name, res.report())


# ----------------------------------------------------------------------------------------------
# GatherElements: the indices' shape (at most the data's off the axis), each index in its axis


@dataclass(frozen=True)
class Elements:
    """GatherElements(data, idx, axis) with ``idx`` made by ``nodes`` from ``r = 0 .. n - 1``."""

    name: str
    data: tuple[str | int, ...]
    axis: int
    nodes: tuple[onnx.NodeProto, ...]
    truth: Callable[[Mapping[str, int]], bool]


_N3 = _node("Concat", ["n1", "three1"], ["n3"], axis=0)  # (n, 3)
ELEMENTS = [
    Elements(  # rows 0 .. n - 1 down each of 3 columns
        "rows", ("t", 3), 0,
        (_N3, _node("Unsqueeze", ["r", "axm1"], ["c"]), _node("Expand", ["c", "n3"], ["idx"])),
        lambda s: s["n"] <= s["t"],
    ),
    Elements(  # -n .. -1: from the end
        "negative rows", ("t", 3), -2,
        (_N3, _node("Sub", ["r", "n"], ["neg"]), _node("Unsqueeze", ["neg", "axm1"], ["c"]),
         _node("Expand", ["c", "n3"], ["idx"])),
        lambda s: s["n"] <= s["t"],
    ),
    Elements(  # along axis 1 of (3, t): indices (3, n)
        "columns", (3, "t"), 1,
        (_node("Concat", ["three1", "n1"], ["sh"], axis=0), _node("Expand", ["r", "sh"], ["idx"])),
        lambda s: s["n"] <= s["t"],
    ),
    Elements(  # zeros (n, 3) read along axis 0 of (t, m): 3 columns need m >= 3
        "shape off the axis", ("t", "m"), 0,
        (_N3, _node("Expand", ["zero", "n3"], ["idx"])),
        lambda s: s["m"] >= 3,
    ),
]  # fmt: skip


@pytest.mark.parametrize("c", ELEMENTS, ids=lambda c: c.name)
def test_gather_elements_bounds(c: Elements) -> None:
    nodes = [*_SIZES, *c.nodes, _node("GatherElements", ["data", "idx"], ["y"], axis=c.axis)]
    g = helper.make_graph(
        nodes, "ge",
        [helper.make_tensor_value_info("data", _F, list(c.data)),
         helper.make_tensor_value_info("q", _F, ["n"])],
        [helper.make_tensor_value_info("y", _F, None)], [*_INITS, _c("one1", [1]), _c("three1", [3])],
    )  # fmt: skip
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    names = sorted({d for d in c.data if isinstance(d, str)} | {"n"})
    syms = {k: ss.dim(k) for k in names}
    res = sso.infer(model, dims=syms)
    assert not res.unsupported and not res.errors, res.report()
    seen = set()
    for vals in itertools.product(*(range(1, 6) for _ in names)):
        s = dict(zip(names, vals))
        feeds = {
            "data": np.zeros([s[d] if isinstance(d, str) else d for d in c.data], np.float32),
            "q": np.zeros(s["n"], np.float32),
        }
        ran = ort_runs(model, feeds)
        assert ran == c.truth(s), (c.name, s)
        assert res.valid_at({syms[k]: v for k, v in s.items()}) == ran, (c.name, s, res.valid_when())
        if ran:
            got = res.type_of("y")
            assert isinstance(got, ss.TensorType)
            env = {syms[k]: v for k, v in s.items()}
            assert tuple(int(d.subs(env)) for d in got.dims) == run_ort(model, feeds)[0].shape, (c.name, s)
        seen.add(ran)
    assert seen == {True, False}
