"""``Resize`` to sizes (constants or computed at run time) of an input whose axes may be empty,
against onnxruntime (with and without graph optimizations) and onnx's reference evaluator at
sizes including 0 and 1 (:func:`size_oracle.disagreements`).

Keeping the aspect ratio (``not_larger``/``not_smaller``), no resized axis may be empty:
onnxruntime refuses a ratio over 0 ("Input dim is zero but required output dim is non-zero"); the
reference evaluator too for ``not_smaller`` (an infinite size), but it runs ``not_larger``, an
empty axis taking no part in the least (symshape follows onnxruntime); a constant 0 is an error.
Stretching, an axis
resized to a size above 0 must not be empty even where another axis is (the result is empty then,
and still both runtimes refuse it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import helper
from onnx_helpers import In, make_model
from size_oracle import disagreements, feeds_of

import symshape as ss
import symshape.onnx as sso

SIZES = [{"a": v, "b": w} for v in (0, 1, 3) for w in (0, 1, 2)]

# (keep_aspect_ratio_policy, axes or None, sizes, sizes computed at run time, the guards)
CASES: list[tuple[str, list[int] | None, list[int], bool, str]] = [
    ("not_larger", None, [4, 6], True, "b >= 1 and a >= 1"),
    ("not_smaller", None, [4, 6], True, "b >= 1 and a >= 1"),
    ("not_larger", [1], [4], True, "b >= 1"),
    ("not_smaller", [1], [5], True, "b >= 1"),
    ("not_larger", None, [4, 6], False, "b >= 1 and a >= 1"),
    ("not_smaller", [1], [5], False, "b >= 1"),
    ("stretch", [1], [4], False, "b >= 1"),
    ("stretch", None, [4, 6], False, "a >= 1 and b >= 1"),
]


@pytest.mark.parametrize(("policy", "axes", "sizes", "by_run", "guard"), CASES)
def test_resize_of_an_empty_axis(
    policy: str, axes: list[int] | None, sizes: list[int], by_run: bool, guard: str
) -> None:
    attrs: dict[str, Any] = {"keep_aspect_ratio_policy": policy}
    if axes is not None:
        attrs["axes"] = axes
    ins = [In("x", "float32", ["a", "b"])]
    sz = np.array(sizes, np.int64)
    fed: dict[str, Any] = {}
    if by_run:
        ins.append(In("sz", "int64", [len(sizes)]))
        fed["sz"] = sz
    node = helper.make_node("Resize", ["x", "", "", "sz"], ["y"], **attrs)
    m = make_model([node], ins, ["y"], 19, {} if by_run else {"sz": sz}, ir_version=9)
    syms = {"a": ss.dim("a", min=0), "b": ss.dim("b", min=0)}
    # (the reference evaluator fails with axes, and runs not_larger over an empty axis)
    runners = ["onnxruntime", "onnxruntime-plain"] + ([] if axes or policy == "not_larger" else ["reference"])
    for runner in runners:
        got = disagreements(m, syms, SIZES, feeds_of(ins, fed), runner)
        assert got == [], runner + ":\n" + "\n".join(got)
    res = sso.infer(m, dims=syms)
    assert res.valid_when() == guard, res.report()


@pytest.mark.parametrize("policy", ["not_larger", "not_smaller"])
def test_keeping_the_ratio_of_an_axis_of_size_0_is_an_error(policy: str) -> None:
    ins = [In("x", "float32", [0, 3])]
    node = helper.make_node("Resize", ["x", "", "", "sz"], ["y"], keep_aspect_ratio_policy=policy)
    m = make_model([node], ins, ["y"], 19, {"sz": np.array([4, 6], np.int64)}, ir_version=9)
    res = sso.infer(m)
    assert res.status == "error" and "over an axis of size 0" in res.report(), res.report()
    for runner in ("onnxruntime", "onnxruntime-plain") + (("reference",) if policy == "not_smaller" else ()):
        assert disagreements(m, {}, [{}], feeds_of(ins), runner) == []
