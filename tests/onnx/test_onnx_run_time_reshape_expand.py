"""``Reshape`` and ``Expand`` to a shape built at run time from values symshape cannot compute (a
graph input ``k`` of int64: a data-dependent size), then added to a tensor of symbolic size ``t``,
against onnxruntime at several sizes and values of ``k``.

Before, each run-time entry was a solver unknown that the ``Add`` bound to ``t``: the reshape or
expand was claimed ``(t, ...)`` and onnxruntime gave ``k`` (at ``t = 1``, where the ``Add``
broadcasts). Now each is a given ``?`` (matching any size), the ``Add`` states the run-time guard
``? == t or ? == 1 or t == 1``, and the sizes the known entries decide stay exact (checked here
at every size). The values of ``k`` are ones that run: what the run needs of its own values is
not stated (tests/onnx/test_onnx_runtime_guards.py: a guard is false exactly where no value runs).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import onnx
import pytest
from onnx_helpers import In, make_model, node
from size_oracle import Feeds, disagreements

import symshape as ss
import symshape.onnx as sso

MINUS_ONE = {"m1": np.array([-1], dtype=np.int64), "zero": np.array([0], dtype=np.int64),
             "ax0": np.array([0], dtype=np.int64), "one": np.array([1], dtype=np.int64),
             "two": np.array([2], dtype=np.int64)}  # fmt: skip


def _model(nodes: list[onnx.NodeProto], ins: list[In], outs: list[str]) -> onnx.ModelProto:
    return make_model(nodes, ins, outs, opset=17, inits=MINUS_ONE)


def _feeds(ins: list[In]) -> Feeds:
    """Random floats for the float inputs at the size; ``k`` from the size's ``k0``, ``k1``."""

    def feeds(size: Mapping[str, int], rng: np.random.Generator) -> dict[str, np.ndarray[Any, Any]]:
        out: dict[str, np.ndarray[Any, Any]] = {}
        for i in ins:
            if i.dtype == "int64":
                ks = [size[f"k{j}"] for j in range(int(i.shape[0]) if i.shape else 1)]  # (1-d or 0-d)
                out[i.name] = np.array(ks if i.shape else ks[0], dtype=np.int64)
            else:
                shape = [size[d] if isinstance(d, str) else d for d in i.shape or ()]
                out[i.name] = rng.standard_normal(shape).astype(np.float32)
        return out

    return feeds


X = In("x", "float32", ["s"])
K1, K2, KS = In("k", "int64", [1]), In("k", "int64", [2]), In("k", "int64", [])

# id: (nodes, inputs, the run-time shape's consumer output, sizes with the values k0, k1)
ROWS: list[tuple[str, list[onnx.NodeProto], list[In], list[dict[str, int]]]] = [
    ("reshape-entry-beside-minus-one",
     [node("Concat", ["k", "m1"], ["shape"], axis=0), node("Reshape", ["x", "shape"], ["r"])],
     [X, K1, In("y", "float32", ["t", 1])],
     [dict(s=6, t=1, k0=2), dict(s=6, t=2, k0=2), dict(s=6, t=1, k0=3), dict(s=6, t=3, k0=2),
      dict(s=4, t=4, k0=4), dict(s=4, t=1, k0=4)]),
    ("reshape-two-entries",
     [node("Reshape", ["x", "k"], ["r"])],
     [X, K2, In("y", "float32", ["t", 1])],
     [dict(s=6, t=1, k0=2, k1=3), dict(s=6, t=2, k0=2, k1=3), dict(s=6, t=1, k0=3, k1=2),
      dict(s=6, t=1, k0=6, k1=1), dict(s=6, t=6, k0=6, k1=1)]),
    ("reshape-shape-slice-and-scalar",  # (b, s, 8) -> (b, k, -1): Shape(x)[0:1] ++ [k] ++ [-1]
     [node("Shape", ["x"], ["sh"]), node("Slice", ["sh", "ax0", "one"], ["b"]),
      node("Unsqueeze", ["k", "ax0"], ["k1"]), node("Concat", ["b", "k1", "m1"], ["shape"], axis=0),
      node("Reshape", ["x", "shape"], ["r"])],
     [In("x", "float32", ["b", "s", 8]), KS, In("y", "float32", [1, "t", 1])],
     [dict(b=2, s=3, t=1, k0=4), dict(b=1, s=3, t=3, k0=3), dict(b=2, s=3, t=1, k0=6),
      dict(b=1, s=5, t=2, k0=2), dict(b=3, s=2, t=1, k0=16)]),
    ("reshape-copy-between-entries",  # (s, 4) -> (k0, 0, k1): the 0 copies 4
     [node("Slice", ["k", "ax0", "one"], ["ka"]), node("Slice", ["k", "one", "two"], ["kb"]),
      node("Concat", ["ka", "zero", "kb"], ["shape"], axis=0), node("Reshape", ["x", "shape"], ["r"])],
     [In("x", "float32", ["s", 4]), K2, In("y", "float32", ["t", 4, 1])],
     [dict(s=6, t=1, k0=2, k1=3), dict(s=6, t=2, k0=2, k1=3), dict(s=6, t=1, k0=6, k1=1),
      dict(s=3, t=3, k0=3, k1=1)]),
    ("expand",
     [node("Expand", ["x", "k"], ["r"])],
     [X, K1, In("y", "float32", ["t"])],
     [dict(s=1, t=1, k0=3), dict(s=3, t=1, k0=1), dict(s=3, t=3, k0=3),
      dict(s=1, t=3, k0=3), dict(s=2, t=1, k0=1), dict(s=1, t=1, k0=1)]),
    ("expand-new-axes",
     [node("Expand", ["x", "k"], ["r"])],
     [X, K2, In("y", "float32", ["t", 1])],
     [dict(s=1, t=1, k0=2, k1=3), dict(s=3, t=1, k0=2, k1=1), dict(s=3, t=2, k0=2, k1=3),
      dict(s=3, t=1, k0=4, k1=3)]),
    ("expand-constant",  # (8,): a target entry of 1 or 8 gives 8
     [node("Expand", ["x", "k"], ["r"])],
     [In("x", "float32", [8]), K1, In("y", "float32", ["t"])],
     [dict(t=1, k0=1), dict(t=8, k0=8), dict(t=1, k0=8), dict(t=8, k0=1), dict(t=3, k0=1)]),
]  # fmt: skip


@pytest.mark.parametrize(("nodes", "ins", "sizes"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_run_time_shapes_against_onnxruntime(
    nodes: list[onnx.NodeProto], ins: list[In], sizes: list[dict[str, int]]
) -> None:
    nodes = [*nodes, node("Add", ["r", "y"], ["o"])]
    for i, n in enumerate(nodes):
        n.name = f"{n.op_type}_{i}"
    model = _model(nodes, ins, ["r", "o"])
    names = sorted({d for i in ins for d in i.shape or () if isinstance(d, str)})
    res = sso.infer(model, dims={n: ss.dim(n) for n in names})
    assert not res.unsupported and not res.errors, res.report()
    r = res.type_of("r")
    assert isinstance(r, ss.TensorType) and r.ndim is not None, r
    assert all(not d.has_unknowns and ss.dim("t") not in d.symbols for d in r.dims), r
    assert disagreements(model, names, sizes, _feeds(ins)) == []


def test_the_guard_over_a_run_time_size_says_so() -> None:
    """``Expand`` of ``(s,)`` to a run-time ``(?,)`` is ``(?,)``; the ``Add`` with ``(t,)`` needs it to
    broadcast with ``t``. ``valid_at`` cannot decide that from ``s`` and ``t`` alone: it says so, as
    for any size computed at run time."""
    nodes = [node("Expand", ["x", "k"], ["r"], name="Expand_0"), node("Add", ["r", "y"], ["o"], name="Add_1")]
    model = _model(nodes, [X, K1, In("y", "float32", ["t"])], ["o"])
    res = sso.infer(model, dims={"s": ss.dim("s"), "t": ss.dim("t")})
    assert res.status == "guarded", res.report()
    assert [str(g) for g in res.guards] == ["? == t or ? == 1 or t == 1"], res.report()
    with pytest.raises(ss.SymshapeError):
        res.valid_at({"s": 3, "t": 3})


def test_a_reshape_of_an_input_of_unknown_rank() -> None:
    """``Reshape`` of ``x`` of unknown rank to ``(-1, 4)`` or ``(0, 4)``, added to ``y`` of ``(t, 4)``:
    the first size is the input's, which symshape does not know (a ``?``). Before, the ``Add``
    bound it to ``t``: claimed ``(t, 4)``, onnxruntime gave ``(a, 4)`` for ``x`` of ``(a, 4)``."""
    ins = [In("x", "float32", None), In("y", "float32", ["t", 4])]
    for target in ([-1, 4], [0, 4]):
        inits = {"target": np.array(target, dtype=np.int64)}
        nodes = [node("Reshape", ["x", "target"], ["r"]), node("Add", ["r", "y"], ["o"])]
        model = make_model(nodes, ins, ["r", "o"], opset=17, inits=inits)

        def feeds(size: Mapping[str, int], rng: np.random.Generator) -> dict[str, np.ndarray[Any, Any]]:
            return {"x": rng.standard_normal((size["a"], 4)).astype(np.float32),
                    "y": rng.standard_normal((size["t"], 4)).astype(np.float32)}  # fmt: skip

        sizes = [dict(t=1, a=3), dict(t=3, a=3), dict(t=2, a=1), dict(t=1, a=1), dict(t=2, a=3)]
        assert disagreements(model, ["t"], sizes, feeds) == [], target


def test_the_report_names_the_node_whose_output_size_the_run_decides() -> None:
    nodes = [
        node("Concat", ["k", "m1"], ["shape"], axis=0, name="Concat_0"),
        node("Reshape", ["x", "shape"], ["r"], name="Reshape_3"),
        node("Add", ["r", "y"], ["o"], name="Add_4"),
    ]
    model = _model(nodes, [X, K1, In("y", "float32", ["t", 1])], ["o"])
    report = sso.infer(model, dims={"s": ss.dim("s"), "t": ss.dim("t")}).report()
    assert "node 'Add_4' (Add) needs `? == t or ? == 1 or t == 1`" in report, report
    assert "where `?` is axis 0 of the result of reshape at " in report, report
    assert "node 'Reshape_3' (Reshape), which the run decides" in report, report
