"""``Reshape`` to a target computed at run time whose entry may be -1 (``Shape(x)[0] - 2``),
against onnxruntime without graph optimizations (its optimized graph mis-runs some reshapes to
computed targets) and onnx's reference evaluator at sizes including 0 and 1
(:func:`size_oracle.disagreements`): such an entry is read three ways, a size, 0 (a copy of the
input's size at its place, without ``allowzero``) or -1 (inferred, unless another entry is -1),
and must not be below -1; the guard is the disjunction of the readings that fit (it was guarded
``>= 0``, refusing the sizes where the entry is -1 and both runtimes infer it).
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from onnx_helpers import In, make_model
from size_oracle import disagreements, feeds_of

import symshape as ss
import symshape.onnx as sso

N = helper.make_node
SIZES = [{"a": a, "b": b} for a in (0, 1, 2, 3, 4) for b in (0, 1, 3)]

# (the target's entries: "a-k" is Shape(x)[0] - k, "b" Shape(x)[1], ints constants; allowzero;
# the symbols' least value; valid_when)
CASES: list[tuple[list[object], int, int, str]] = [
    (["a-2", "b"], 0, 1, "a <= 2"),  # (a == 1: -1, inferred; a == 2: 0, a copy)
    (["b", "a-2"], 0, 1, "(a == 2 and a == b) or a == 1"),  # (a == 2: b copied, b*b elements)
    (["a-2", "b"], 1, 1, "a == 1"),  # (allowzero: a == 2 is a size 0)
    (["a-1", "b"], 0, 0, "(a >= 2 and b == 0) or a == 1 or (a == 0 and b != 0)"),
    (["a-2", 1, "b"], 0, 1, "a <= 2"),
    (["a-2", -1], 0, 1, "(a >= 3 and a != 2 and a*b % max(a - 2, 1) == 0) or a == 2"),  # (one -1)
    (["a-3", "b"], 0, 1, "a >= 2 and a <= 3"),  # (a == 1: -2, refused)
]


def _entry(e: object, nodes: list[object], k: int) -> str:
    """The node outputs making entry ``e`` (a 1-element int64 tensor)."""
    name = f"e{k}"
    if isinstance(e, int):
        nodes.append(N("Constant", [], [name], value_ints=[e]))
    elif e == "b":
        nodes.append(N("Shape", ["x"], [name], start=1, end=2))
    else:
        sub = int(str(e).split("-")[1])
        nodes.append(N("Shape", ["x"], [f"s{k}"], start=0, end=1))
        nodes.append(N("Constant", [], [f"c{k}"], value_ints=[sub]))
        nodes.append(N("Sub", [f"s{k}", f"c{k}"], [name]))
    return name


@pytest.mark.parametrize(("target", "allowzero", "least", "guard"), CASES)
def test_reshape_entry_that_may_be_minus_one(
    target: list[object], allowzero: int, least: int, guard: str
) -> None:
    nodes: list[object] = []
    parts = [_entry(e, nodes, k) for k, e in enumerate(target)]
    nodes += [N("Concat", parts, ["t"], axis=0), N("Reshape", ["x", "t"], ["y"], allowzero=allowzero)]
    ins = [In("x", "float32", ["a", "b"])]
    m = make_model(nodes, ins, ["y"], 18, ir_version=8)  # type: ignore[arg-type]
    syms = {"a": ss.dim("a", min=least), "b": ss.dim("b", min=least)}
    sizes = [s for s in SIZES if min(s.values()) >= least]
    # (the reference evaluator runs an entry -2 as onnxruntime does not: symshape follows onnxruntime)
    for runner in ("onnxruntime-plain",) + (() if "a-3" in target else ("reference",)):
        got = disagreements(m, syms, sizes, feeds_of(ins), runner)
        assert got == [], runner + ":\n" + "\n".join(got)
    res = sso.infer(m, dims=syms)
    assert res.valid_when() == guard, res.report()
    assert not res.errors


def test_an_entry_below_minus_one_is_refused() -> None:
    x = np.zeros((1, 3), np.float32)
    nodes: list[object] = []
    parts = [_entry("a-3", nodes, 0), _entry("b", nodes, 1)]
    nodes += [N("Concat", parts, ["t"], axis=0), N("Reshape", ["x", "t"], ["y"])]
    m = make_model(nodes, [In("x", "float32", ["a", "b"])], ["y"], 18, ir_version=8)  # type: ignore[arg-type]
    a, b = ss.dim("a"), ss.dim("b")
    res = sso.infer(m, dims={"a": a, "b": b})
    assert res.valid_at({a: 1, b: 3}) is False  # (entry -2: onnxruntime refuses it, the reference runs it)
    assert (
        disagreements(m, {"a": a, "b": b}, [{"a": 1, "b": 3}], feeds_of([], {"x": x}), "onnxruntime-plain")
        == []
    )
