"""``ConvTranspose`` at empty sizes, against onnxruntime (with and without graph optimizations) at
sizes including 0 and 1, and onnx's reference evaluator at the non-empty ones
(:func:`size_oracle.disagreements`).

onnxruntime refuses an output spatial size below 1 ("Computed output dimension is <= 0"), an
``output_padding`` not below the stride ("output_padding may be too large for stride": it computes
the input size back from the output's), hence an empty input spatial axis with an
``output_padding``, an empty input spatial axis with ``output_shape`` ("Input spatial dimension
must be positive") and an ``output_shape`` entry of 0. It runs an empty input spatial axis whose
output is not empty (kernel 3 over 0 gives 2); onnx's reference evaluator refuses every empty
input spatial axis (symshape follows onnxruntime).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from onnx import helper
from onnx_helpers import In, make_model
from size_oracle import disagreements, feeds_of

import symshape as ss
import symshape.onnx as sso

N = helper.make_node
SIZES = [{"b": 0}, {"b": 1}, {"b": 2}, {"b": 3}]

# (attributes, weight shape (C_in, C_out, k...), input shape, guard text or "" (valid everywhere),
# whether valid at b = 0)
CASES: list[tuple[dict[str, Any], tuple[int, ...], list[Any], str, bool]] = [
    ({"kernel_shape": [1], "dilations": [2]}, (2, 2, 1), [4, 2, "b"], "b >= 1", False),
    ({"kernel_shape": [1]}, (2, 1, 1), [1, 2, "b"], "b >= 1", False),
    ({"kernel_shape": [3], "pads": [1, 1]}, (2, 1, 3), [1, 2, "b"], "b >= 1", False),
    ({"kernel_shape": [3], "strides": [3], "dilations": [2]}, (2, 1, 3), [1, 2, "b"], "", True),
    ({"kernel_shape": [3], "strides": [2]}, (2, 1, 3), [1, 2, "b"], "", True),
    ({"kernel_shape": [3], "strides": [3], "dilations": [2], "output_padding": [1]}, (2, 1, 3), [1, 2, "b"],
     "b >= 1", False),
    ({"kernel_shape": [3], "strides": [3], "dilations": [2], "auto_pad": "SAME_UPPER"}, (2, 1, 3),
     [1, 2, "b"], "b >= 1", False),
    ({"kernel_shape": [3], "strides": [2], "auto_pad": "VALID"}, (2, 1, 3), [1, 2, "b"], "", True),
    ({"kernel_shape": [3], "output_shape": [3]}, (2, 1, 3), [1, 2, "b"], "b >= 1", False),
    ({"kernel_shape": [2, 1]}, (2, 1, 2, 1), [1, 2, "b", "b"], "b >= 1", False),
    ({"kernel_shape": [2, 1]}, (2, 1, 2, 1), [1, 2, "b", 3], "", True),
    ({"kernel_shape": [2, 1], "output_padding": [0, 1], "strides": [1, 2]}, (2, 1, 2, 1), [1, 2, 3, "b"],
     "b >= 1", False),
]  # fmt: skip


def _model(attrs: dict[str, Any], w: tuple[int, ...], shape: Sequence[Any]) -> Any:
    node = N("ConvTranspose", ["x", "w"], ["y"], **attrs)
    return make_model([node], [In("x", "float32", list(shape))], ["y"], 18,
                      {"w": np.ones(w, np.float32)}, ir_version=8)  # fmt: skip


@pytest.mark.parametrize(("attrs", "w", "shape", "guard", "empty_ok"), CASES)
def test_conv_transpose_at_empty_sizes(
    attrs: dict[str, Any], w: tuple[int, ...], shape: list[Any], guard: str, empty_ok: bool
) -> None:
    m = _model(attrs, w, shape)
    ins = [In("x", "float32", shape)]
    b = ss.dim("b", min=0)
    for runner in ("onnxruntime", "onnxruntime-plain"):
        got = disagreements(m, {"b": b}, SIZES, feeds_of(ins), runner)
        assert got == [], "\n".join(got)
    if "output_shape" not in attrs:  # (the reference evaluator refuses output_shape [3] over 2)
        got = disagreements(m, {"b": b}, SIZES[1:], feeds_of(ins), "reference")
        assert got == [], "\n".join(got)
    res = sso.infer(m, dims={"b": b})
    assert res.valid_at({b: 0}) is empty_ok and res.valid_at({b: 1}), res.report()
    assert res.valid_when() == (guard or "True"), res.report()


# (attributes, weight shape, what the error says): onnxruntime refuses every size
ERRORS = [
    ({"kernel_shape": [3], "output_shape": [0]}, (2, 1, 3), "output_shape [0] has a size below 1"),
    ({"kernel_shape": [1], "dilations": [2], "output_padding": [1]}, (2, 1, 1), "is not below the strides"),
    ({"kernel_shape": [3], "strides": [2], "output_padding": [2]}, (2, 1, 3), "is not below the strides"),
    ({"kernel_shape": [3], "output_shape": [3], "dilations": [2], "output_padding": [1]}, (2, 1, 3),
     "is not below the strides"),
]  # fmt: skip


@pytest.mark.parametrize(("attrs", "w", "why"), ERRORS)
def test_conv_transpose_always_refused(attrs: dict[str, Any], w: tuple[int, ...], why: str) -> None:
    shape = [1, 2, "b"]
    m = _model(attrs, w, shape)
    b = ss.dim("b", min=0)
    res = sso.infer(m, dims={"b": b})
    assert res.status == "error" and why in res.report(), res.report()
    for runner in ("onnxruntime", "onnxruntime-plain"):
        got = disagreements(m, {"b": b}, SIZES, feeds_of([In("x", "float32", shape)]), runner)
        assert got == [], "\n".join(got)


def test_conv_transpose_by_a_weight_of_symbolic_kernel() -> None:
    # the output shape computed on shape values: s*(b - 1) + k - 2 (pads) must be >= 1
    ins = [In("x", "float32", [1, 2, "b"]), In("w", "float32", [2, 1, "k"])]
    node = N("ConvTranspose", ["x", "w"], ["y"], pads=[1, 1])
    m = make_model([node], ins, ["y"], 18, ir_version=8)
    b, k = ss.dim("b", min=0), ss.dim("k")
    sizes = [{"b": v, "k": j} for v in (0, 1, 2) for j in (1, 2, 3, 4)]
    for runner in ("onnxruntime", "onnxruntime-plain"):
        got = disagreements(m, {"b": b, "k": k}, sizes, feeds_of(ins), runner)
        assert got == [], "\n".join(got)
    res = sso.infer(m, dims={"b": b, "k": k})
    assert not res.valid_at({b: 0, k: 3}) and res.valid_at({b: 0, k: 4}) and res.valid_at({b: 1, k: 3})


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER"])
@pytest.mark.parametrize(("k", "s", "op"), [(1, 2, 0), (2, 3, 0), (1, 3, 1), (3, 2, 1), (2, 2, 0)])
@pytest.mark.parametrize("symbolic_kernel", [False, True])
def test_conv_transpose_same_size_is_onnxruntimes(
    auto_pad: str, k: int, s: int, op: int, symbolic_kernel: bool
) -> None:
    """onnxruntime's SAME size is ``d*s`` or the full size ``s*(d - 1) + op + K`` where that is
    less (the reference evaluator gives ``d*s``): symshape follows onnxruntime."""
    attrs = {"strides": [s], "output_padding": [op], "auto_pad": auto_pad}
    ins = [In("x", "float32", [1, 2, "b"])]
    inits: dict[str, Any] = {}
    if symbolic_kernel:  # (the shape-values path)
        ins.append(In("w", "float32", [2, 1, "k"]))
        syms = {"b": ss.dim("b"), "k": ss.dim("k")}
        sizes = [{"b": v, "k": k} for v in (1, 2, 3)]
    else:
        attrs["kernel_shape"] = [k]
        inits["w"] = np.ones((2, 1, k), np.float32)
        syms = {"b": ss.dim("b")}
        sizes = [{"b": v} for v in (1, 2, 3)]
    m = make_model([N("ConvTranspose", ["x", "w"], ["y"], **attrs)], ins, ["y"], 18, inits, ir_version=8)
    for runner in ("onnxruntime", "onnxruntime-plain"):
        got = disagreements(m, syms, sizes, feeds_of(ins), runner)
        assert got == [], "\n".join(got)
