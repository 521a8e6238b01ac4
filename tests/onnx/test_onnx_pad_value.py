"""TorchScript's ``F.pad`` idiom: pads moved through a (rank, 2) tensor keep their value.

torch.onnx (TorchScript) writes ``F.pad(x, pads)`` with pads computed at run time as
``Concat(pads, zeros)`` → ``Reshape [-1, 2]`` → ``Slice`` reversing axis 0 → ``Transpose`` →
``Reshape [-1]`` → ``Cast`` → ``Pad`` (see symshape.onnx.ops.index_maps). Each row builds that
chain (the pads computed from the input's shape as Swin computes them: ``(w - d % w) % w``) and
compares symshape's output type, substituted at several sizes, with onnxruntime's output shape:
no fresh dimension, no guard failing where onnxruntime runs. A ``Reshape`` target moved the same way
keeps its value too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_helpers import run_ort

import symshape as ss
import symshape.onnx as sso

pytest.importorskip("onnxruntime")

HUGE = -(2**63) + 1


@dataclass(frozen=True)
class Row:
    """``x`` of ``shape`` (strings are symbols); ``pads``: torch's order (last dim first, (left,
    right) pairs), each an int or ``(axis, window)`` for ``(window - d % window) % window``."""

    id: str
    shape: tuple[int | str, ...]
    pads: tuple[int | tuple[int, int], ...]
    opset: int
    sizes: tuple[dict[str, int], ...]


def _i64(name: str, v: Any) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(v, dtype=np.int64), name)


def _pad_model(row: Row) -> onnx.ModelProto:
    r = len(row.shape)
    nodes: list[onnx.NodeProto] = []
    inits = [_i64("m12", [-1, 2]), _i64("m1", [-1]), _i64("st", [-1]), _i64("en", [HUGE]),
             _i64("ax", [0]), _i64("sp", [-1])]  # fmt: skip
    parts = []
    for k, p in enumerate(row.pads):
        if isinstance(p, int):
            inits.append(_i64(f"c{k}", [p]))
            parts.append(f"c{k}")
            continue
        axis, window = p
        inits.append(_i64(f"w{k}", [window]))
        nodes += [
            helper.make_node("Shape", ["x"], [f"s{k}"]),
            helper.make_node("Gather", [f"s{k}", f"a{k}"], [f"d{k}"], axis=0),
            helper.make_node("Mod", [f"d{k}", f"w{k}"], [f"r{k}"]),
            helper.make_node("Sub", [f"w{k}", f"r{k}"], [f"q{k}"]),
            helper.make_node("Mod", [f"q{k}", f"w{k}"], [f"p{k}"]),
        ]
        inits.append(_i64(f"a{k}", [axis]))
        parts.append(f"p{k}")
    inits.append(_i64("zeros", [0] * (2 * r - len(row.pads))))
    nodes += [
        helper.make_node("Concat", [*parts, "zeros"], ["p8"], axis=0),
        helper.make_node("Reshape", ["p8", "m12"], ["pairs"]),
        helper.make_node("Slice", ["pairs", "st", "en", "ax", "sp"], ["rev"]),
        helper.make_node("Transpose", ["rev"], ["tr"], perm=[1, 0]),
        helper.make_node("Reshape", ["tr", "m1"], ["flat"]),
        helper.make_node("Cast", ["flat"], ["pads"], to=TensorProto.INT64),
        helper.make_node("Pad", ["x", "pads"], ["y"], name="pad"),
    ]
    g = helper.make_graph(
        nodes, "pad_idiom", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(row.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits,
    )  # fmt: skip
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", row.opset)])
    m.ir_version = 8
    return m


ROWS = [
    Row("rank2-right", ("n", "m"), ((1, 2),), 17, ({"n": 2, "m": 3}, {"n": 1, "m": 4})),
    Row("rank2-both-sides", ("n", "m"), (1, (1, 3)), 13, ({"n": 2, "m": 3}, {"n": 2, "m": 7})),
    Row("swin-nhwc-window7", ("b", "h", "w", 4), (0, 0, 0, (2, 7), 0, (1, 7)), 11,
        ({"b": 1, "h": 7, "w": 9}, {"b": 2, "h": 10, "w": 14}, {"b": 1, "h": 1, "w": 1})),
    Row("nchw-left-and-right", ("b", 3, "h", "w"), ((3, 4), 2, 1, (2, 5)), 17,
        ({"b": 1, "h": 5, "w": 6}, {"b": 2, "h": 8, "w": 8})),
]  # fmt: skip


def _check_at_sizes(
    model: onnx.ModelProto, shape: tuple[int | str, ...], sizes: tuple[dict[str, int], ...]
) -> None:
    syms = {d: ss.dim(d) for d in shape if isinstance(d, str)}
    res = sso.infer(model, dims=syms)
    assert res.status in ("ok", "guarded"), res.report()
    t = res.type_of("y")
    assert isinstance(t, ss.TensorType) and t.ndim == len(shape), t
    assert "?" not in str(t), f"fresh dimensions: {t}"
    rng = np.random.default_rng(0)
    for size in sizes:
        x = rng.standard_normal(tuple(size[d] if isinstance(d, str) else d for d in shape)).astype(np.float32)
        (want,) = run_ort(model, {"x": x})
        env = {syms[k]: v for k, v in size.items()}
        assert res.valid_at(env), res.why_invalid(env)
        got = tuple(int(d) for d in t.subs(env).dims)
        assert got == want.shape, (t, size, got, want.shape)


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_pad_idiom_keeps_the_pads(row: Row) -> None:
    _check_at_sizes(_pad_model(row), row.shape, row.sizes)


def test_reshape_target_moved_through_rank_2() -> None:
    # x (a, b) reshaped to its shape reversed: the target goes through (2, 1), reversed, flattened
    nodes = [
        helper.make_node("Shape", ["x"], ["sh"]),
        helper.make_node("Reshape", ["sh", "m21"], ["col"]),
        helper.make_node("Slice", ["col", "st", "en", "ax", "sp"], ["rev"]),
        helper.make_node("Unsqueeze", ["rev", "ax2"], ["rev3"]),
        helper.make_node("Squeeze", ["rev3", "ax2"], ["rev2"]),
        helper.make_node("Reshape", ["rev2", "m1"], ["target"]),
        helper.make_node("Reshape", ["x", "target"], ["y"], name="rs"),
    ]
    inits = [_i64("m21", [2, 1]), _i64("m1", [-1]), _i64("st", [-1]), _i64("en", [HUGE]),
             _i64("ax", [0]), _i64("sp", [-1]), _i64("ax2", [2])]  # fmt: skip
    g = helper.make_graph(
        nodes, "reshape_idiom", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["a", "b"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits,
    )  # fmt: skip
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    res = sso.infer(m, dims={"a": ss.dim("a"), "b": ss.dim("b")})
    assert str(res.type_of("y")) == "Tensor[(b, a), float32]", res.report()
    _check_at_sizes(m, ("a", "b"), ({"a": 2, "b": 3}, {"a": 5, "b": 1}))


def test_chain_through_an_op_that_changes_values_is_not_rebuilt() -> None:
    # a Neg between Transpose and the last Reshape (negative pads crop): the chain is not only
    # moves, nothing is rebuilt; the output type is never wrong where it is known
    m = _pad_model(ROWS[0])
    g = m.graph
    for n in g.node:
        if n.op_type == "Reshape" and n.input[0] == "tr":
            n.input[0] = "neg"
    k = next(i for i, n in enumerate(g.node) if n.op_type == "Transpose")
    g.node.insert(k + 1, helper.make_node("Neg", ["tr"], ["neg"]))
    syms = {"n": ss.dim("n"), "m": ss.dim("m")}
    res = sso.infer(m, dims=syms)
    assert res.status != "error", res.report()
    t = res.type_of("y")
    assert isinstance(t, ss.TensorType) and t.ndim == 2
    for n_, m_ in ((2, 3), (2, 4)):
        (want,) = run_ort(m, {"x": np.zeros((n_, m_), np.float32)})
        got = t.subs({syms["n"]: n_, syms["m"]: m_}).dims
        assert all(not d.is_constant or int(d) == w for d, w in zip(got, want.shape)), (t, want.shape)
