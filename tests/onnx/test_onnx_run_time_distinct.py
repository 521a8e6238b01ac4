"""Two sizes the run decides are two sizes, even where the nodes that make them read inputs of one
type: ``Range(0, k1) + Range(0, k2)`` was ``ok`` (found by review) because the eager memo, keyed
by the relation and its input types, handed the second ``Range`` the first one's result, ``?``
and all; onnxruntime fails at ``k1 = 2, k2 = 3``. Now the ``Add`` states that the two broadcast.
Per producer (Range, Reshape, Expand, ConstantOfShape, Slice with run-time values): onnxruntime
fails at distinct values and runs at equal ones, and symshape's result is guarded by the two
sizes' broadcast."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx_helpers import In, make_model, node, run_ort

import symshape.onnx as sso

I64 = "int64"
_CASES: dict[str, tuple[Any, ...]] = {
    # name: (producer nodes' op, their inputs but the run-time one, inputs, initializers, feeds
    # of (k1, k2) and of x)
    "range": ("Range", ["z", "{k}", "one"], [], {"z": np.array(0), "one": np.array(1)}, "scalar"),
    "reshape": ("Reshape", ["x", "{k}"], [In("x", "float32", ["s"])], {}, "pair"),
    "expand": ("Expand", ["x", "{k}"], [In("x", "float32", [1])], {}, "one"),
    "constant_of_shape": ("ConstantOfShape", ["{k}"], [], {}, "one"),
    "slice": ("Slice", ["x", "{k}", "big"], [In("x", "float32", ["s"])], {"big": np.array([100])}, "one"),
}


def _model(name: str) -> onnx.ModelProto:
    op, args, ins, inits, kind = _CASES[name]
    k_shape: list[int] = {"scalar": [], "one": [1], "pair": [2]}[kind]
    nodes = [
        node(op, [a.format(k=k) for a in args], [f"r{i}"], name=f"p{i}") for i, k in ((1, "k1"), (2, "k2"))
    ]
    nodes.append(node("Add", ["r1", "r2"], ["o"], name="add"))
    return make_model(nodes, [*ins, In("k1", I64, k_shape), In("k2", I64, k_shape)], ["o"], 17, inits)


def _feeds(name: str, k1: int, k2: int) -> dict[str, np.ndarray[Any, Any]]:
    kind = _CASES[name][4]
    out: dict[str, np.ndarray[Any, Any]] = {}
    for key, k in (("k1", k1), ("k2", k2)):
        entries = [k] if kind == "one" else [k, 6 // k]
        out[key] = np.array(k) if kind == "scalar" else np.array(entries)
    if name in ("reshape", "slice"):
        out["x"] = np.zeros(6, np.float32)
    elif name == "expand":
        out["x"] = np.zeros(1, np.float32)
    return out


def _runs(m: onnx.ModelProto, feeds: dict[str, np.ndarray[Any, Any]]) -> bool:
    try:
        run_ort(m, feeds)
    except Exception:
        return False
    return True


@pytest.mark.parametrize("name", sorted(_CASES))
def test_two_run_time_sizes_are_not_one(name: str) -> None:
    m = _model(name)
    assert _runs(m, _feeds(name, 2, 2)) and not _runs(m, _feeds(name, 2, 3))
    res = sso.infer(m)
    assert res.status == "guarded", res.report()
    assert any(str(g.cond) == "? == ? or ? == 1 or ? == 1" for g in res.guards), res.report()
    assert "node 'add' (Add)" in res.report()
