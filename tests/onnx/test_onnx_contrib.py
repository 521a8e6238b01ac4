"""onnxruntime's contrib operators (``com.microsoft``, and its default-domain
``SimplifiedLayerNormalization``/``LayerNormalization`` before opset 17), table-driven.

Each case is one node with symbolic input shapes: symshape infers it once, then for every size the
node is executed with onnxruntime (or, where onnxruntime has no CPU kernel — BiasAdd, BiasSoftmax,
packed MultiHeadAttention — a numpy reference of the documented semantics) and every output's shape
must be symshape's type with the sizes substituted (guards holding).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from onnx import helper
from onnx_helpers import In, _concrete, make_model, run_ort, symbols_of

import symshape as ss
import symshape.onnx as sso

MS = "com.microsoft"
F = "float32"
Arrays = list[np.ndarray[Any, Any]]


def _zeros(shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray[Any, Any]:
    return np.zeros(shape, np.int64)


def _ids32(shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray[Any, Any]:
    return rng.integers(0, 2, shape).astype(np.int32)


def _bias_add(feeds: Mapping[str, Any]) -> Arrays:
    return [feeds["x"] + feeds["b"] + feeds["s"]]


def _bias_softmax(feeds: Mapping[str, Any]) -> Arrays:
    z = feeds["x"] + feeds["b"]
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return [e / e.sum(axis=-1, keepdims=True)]


def _sdpa(q4: Any, k4: Any, v4: Any) -> Any:
    """(B, N, S, D), (B, N, L, D), (B, N, L, Dv) -> (B, S, N*Dv)."""
    z = q4 @ k4.transpose(0, 1, 3, 2)
    p = np.exp(z - z.max(axis=-1, keepdims=True))
    y = (p / p.sum(axis=-1, keepdims=True)) @ v4
    b, n, s, dv = y.shape
    return y.transpose(0, 2, 1, 3).reshape(b, s, n * dv)


def _mha_packed_qkv(feeds: Mapping[str, Any]) -> Arrays:
    qkv = feeds["q"].transpose(3, 0, 2, 1, 4)  # (3, B, N, S, H)
    return [_sdpa(qkv[0], qkv[1], qkv[2])]


def _mha_packed_kv(feeds: Mapping[str, Any]) -> Arrays:
    q = feeds["q"]
    b, s, d = q.shape
    q4 = q.reshape(b, s, 2, d // 2).transpose(0, 2, 1, 3)
    kv = feeds["kv"].transpose(3, 0, 2, 1, 4)  # (2, B, N, L, H)
    return [_sdpa(q4, kv[0], kv[1])]


@dataclass
class Case:
    id: str
    op: str
    inputs: Sequence[In]
    outputs: Sequence[str]
    expected: Sequence[str]
    sizes: Sequence[Mapping[str, int]]
    attrs: Mapping[str, Any] = field(default_factory=dict)
    domain: str = MS
    opset: int = 17
    input_names: Sequence[str] | None = None  # with "" for omitted optional inputs
    runner: Callable[[Mapping[str, Any]], Arrays] | None = None  # None: onnxruntime

    def __str__(self) -> str:
        return self.id


def _model(c: Case) -> Any:
    names = list(c.input_names) if c.input_names is not None else [i.name for i in c.inputs]
    n = helper.make_node(c.op, names, list(c.outputs), name=f"{c.op}_0", domain=c.domain, **c.attrs)
    return make_model([n], c.inputs, [o for o in c.outputs if o], c.opset, extra_opsets={MS: 1})


BSH = [{"B": 1, "S": 1}, {"B": 2, "S": 5}, {"B": 3, "S": 16}]
BSH_H = [{"B": 1, "S": 1, "H": 4}, {"B": 2, "S": 5, "H": 8}, {"B": 3, "S": 7, "H": 16}]
BSL = [{"B": 1, "S": 1, "L": 1}, {"B": 2, "S": 5, "L": 3}, {"B": 3, "S": 4, "L": 9}]
BSLP = [{"B": 1, "S": 1, "L": 1, "P": 1}, {"B": 2, "S": 5, "L": 3, "P": 4}, {"B": 2, "S": 1, "L": 1, "P": 9}]
BSP = [{"B": 1, "S": 1, "P": 1}, {"B": 2, "S": 5, "P": 4}, {"B": 3, "S": 2, "P": 9}]

x3 = In("x", F, ("B", "S", "H"))
h = In("h", F, ("H",))
t_bsh = "Tensor[(B, S, H), float32]"
t_bs8 = "Tensor[(B, S, 8), float32]"
t_stat = "Tensor[(B, S, 1), float32]"

CASES = [
    Case("gelu", "Gelu", [x3], ["y"], [t_bsh], BSH_H),
    Case("quick_gelu", "QuickGelu", [x3], ["y"], [t_bsh], BSH_H, {"alpha": 1.702}),
    Case("fast_gelu", "FastGelu", [x3], ["y"], [t_bsh], BSH_H),
    Case("fast_gelu_bias", "FastGelu", [x3, h], ["y"], [t_bsh], BSH_H),
    Case("bias_gelu", "BiasGelu", [x3, h], ["y"], [t_bsh], BSH_H),
    Case(
        "skip_layer_norm_all_outputs",
        "SkipLayerNormalization",
        [
            x3,
            In("skip", F, ("B", "S", "H")),
            In("g", F, ("H",)),
            In("beta", F, ("H",)),
            In("bias", F, ("H",)),
        ],
        ["y", "mean", "inv", "sum"],
        [t_bsh, t_stat, t_stat, t_bsh],
        BSH_H,
    ),
    Case(
        "skip_layer_norm_broadcast_skip",
        "SkipLayerNormalization",
        [x3, In("skip", F, ("S", "H")), In("g", F, ("H",))],
        ["y", "", "", "sum"],
        [t_bsh, t_bsh],
        BSH_H,
    ),
    Case(
        "skip_simplified_layer_norm",
        "SkipSimplifiedLayerNormalization",
        [x3, In("skip", F, ("B", "S", "H")), In("g", F, ("H",)), In("bias", F, ("H",))],
        ["y", "mean", "inv", "sum"],
        [t_bsh, t_stat, t_stat, t_bsh],
        BSH_H,
    ),
    Case(
        "simplified_layer_norm",
        "SimplifiedLayerNormalization",
        [x3, In("g", F, ("H",))],
        ["y", "inv"],
        [t_bsh, t_stat],
        BSH_H,
        {"axis": -1, "epsilon": 1e-5},
        domain="",
    ),
    Case(
        "layer_norm_opset_16_contrib",
        "LayerNormalization",
        [x3, In("g", F, ("H",)), In("b", F, ("H",))],
        ["y", "mean", "inv"],
        [t_bsh, t_stat, t_stat],
        BSH_H,
        {"axis": -1},
        domain="",
        opset=16,
    ),
    Case(
        "fused_matmul",
        "FusedMatMul",
        [x3, In("w", F, ("H", 3))],
        ["y"],
        ["Tensor[(B, S, 3), float32]"],
        BSH_H,
        {"alpha": 0.5},  # the shape does not depend on alpha
    ),
    Case(
        "fused_matmul_trans",
        "FusedMatMul",
        [In("a", F, ("B", "H", "S")), In("w", F, (3, "H"))],
        ["y"],
        ["Tensor[(B, S, 3), float32]"],
        BSH_H,
        {"transA": 1, "transB": 1},
    ),
    Case(
        "fused_matmul_4d_transB",
        "FusedMatMul",
        [In("q", F, ("B", 2, "S", 4)), In("k", F, ("B", 2, "L", 4))],
        ["y"],
        ["Tensor[(B, 2, S, L), float32]"],
        BSL,
        {"transB": 1},
    ),
    Case(
        "bias_add",
        "BiasAdd",
        [x3, In("b", F, ("H",)), In("s", F, ("B", "S", "H"))],
        ["y"],
        [t_bsh],
        BSH_H,
        runner=_bias_add,
    ),
    Case(
        "bias_softmax",
        "BiasSoftmax",
        [In("x", F, ("B", 4, "S", "S")), In("b", F, ("B", 1, "S", "S"))],
        ["y"],
        ["Tensor[(B, 4, S, S), float32]"],
        BSH,
        {"axis": -1, "is_inner_broadcast": 0},
        runner=_bias_softmax,
    ),
    Case(
        "attention",
        "Attention",
        [In("x", F, ("B", "S", 8)), In("w", F, (8, 24)), In("b", F, (24,))],
        ["y"],
        [t_bs8],
        BSH,
        {"num_heads": 2},
    ),
    Case(
        "attention_past_present",
        "Attention",
        [
            In("x", F, ("B", "S", 8)),
            In("w", F, (8, 24)),
            In("b", F, (24,)),
            In("past", F, (2, "B", 2, "P", 4)),
        ],
        ["y", "present"],
        [t_bs8, "Tensor[(2, B, 2, P + S, 4), float32]"],
        BSP,
        {"num_heads": 2},
        input_names=["x", "w", "b", "", "past"],
    ),
    Case(
        "attention_qkv_hidden_sizes",
        "Attention",
        [In("x", F, ("B", "S", 8)), In("w", F, (8, 32)), In("b", F, (32,))],
        ["y"],
        ["Tensor[(B, S, 16), float32]"],
        BSH,
        {"num_heads": 2, "qkv_hidden_sizes": [8, 8, 16]},
    ),
    Case(
        "mha",
        "MultiHeadAttention",
        [In("q", F, ("B", "S", 8)), In("k", F, ("B", "L", 8)), In("v", F, ("B", "L", 12))],
        ["y", "pk", "pv"],
        ["Tensor[(B, S, 12), float32]", "Tensor[(B, 2, L, 4), float32]", "Tensor[(B, 2, L, 6), float32]"],
        BSL,
        {"num_heads": 2},
    ),
    Case(
        "mha_past",
        "MultiHeadAttention",
        [
            In("q", F, ("B", "S", 8)),
            In("k", F, ("B", "L", 8)),
            In("v", F, ("B", "L", 8)),
            In("past_k", F, ("B", 2, "P", 4)),
            In("past_v", F, ("B", 2, "P", 4)),
        ],
        ["y", "pk", "pv"],
        [t_bs8, "Tensor[(B, 2, L + P, 4), float32]", "Tensor[(B, 2, L + P, 4), float32]"],
        BSLP,
        {"num_heads": 2},
        input_names=["q", "k", "v", "", "", "", "past_k", "past_v"],
    ),
    Case(
        "mha_4d_key_value",
        "MultiHeadAttention",
        [In("q", F, ("B", "S", 8)), In("k", F, ("B", 2, "L", 4)), In("v", F, ("B", 2, "L", 4))],
        ["y"],
        [t_bs8],
        BSL,
        {"num_heads": 2},
    ),
    Case(
        "mha_packed_qkv",
        "MultiHeadAttention",
        [In("q", F, ("B", "S", 2, 3, 4))],
        ["y"],
        [t_bs8],
        BSH,
        {"num_heads": 2},
        runner=_mha_packed_qkv,  # onnxruntime: "Packed QKV ... not implemented for CPU"
    ),
    Case(
        "mha_packed_kv",
        "MultiHeadAttention",
        [In("q", F, ("B", "S", 8)), In("kv", F, ("B", "L", 2, 2, 4))],
        ["y"],
        [t_bs8],
        BSL,
        {"num_heads": 2},
        runner=_mha_packed_kv,  # onnxruntime: "Packed KV not implemented for CPU"
    ),
    Case(
        "rotary_embedding",
        "RotaryEmbedding",
        [
            In("x", F, ("B", "S", 8)),
            In("pos", "int64", ("B", "S"), _zeros),
            In("cos", F, (16, 4)),
            In("sin", F, (16, 4)),
        ],
        ["y"],
        [t_bs8],
        BSH,
    ),
    Case(
        "embed_layer_norm",
        "EmbedLayerNormalization",
        [
            In("ids", "int32", ("B", "S"), _ids32),
            In("seg", "int32", ("B", "S"), _ids32),
            In("we", F, (10, 8)),
            In("pe", F, (16, 8)),
            In("se", F, (2, 8)),
            In("g", F, (8,)),
            In("b", F, (8,)),
        ],
        ["y", "mask_index", "sum"],
        [t_bs8, "Tensor[(B,), int32]", t_bs8],
        BSH,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_contrib_against_onnxruntime(case: Case) -> None:
    model = _model(case)
    syms = symbols_of(case.inputs)
    res = sso.infer(model, dims=syms)
    assert res.ok, res.report()
    outs = [o for o in case.outputs if o]
    types = [res.type_of(o) for o in outs]
    assert [str(t) for t in types] == list(case.expected)
    rng = np.random.default_rng(0)
    for size in case.sizes:
        feeds = {i.name: _concrete(i, size, rng) for i in case.inputs}
        got = run_ort(model, feeds) if case.runner is None else case.runner(feeds)
        env = {syms[k]: v for k, v in size.items() if k in syms}
        assert all(g.holds(env) for g in res.guards), [str(g) for g in res.guards]
        for o, t, arr in zip(outs, types, got):
            assert isinstance(t, ss.TensorType)
            st = t.subs(env)
            assert tuple(int(d) for d in st.dims) == arr.shape, f"{o}: {t} at {size} vs {arr.shape}"
            assert st.dtype == str(arr.dtype), o


def test_every_contrib_converter_has_a_case() -> None:
    tested = {c.op for c in CASES if c.domain == MS}
    assert tested == set(sso.supported_ops(MS))
    assert {"SimplifiedLayerNormalization", "LayerNormalization"} <= {c.op for c in CASES if c.domain == ""}


# -- errors ----------------------------------------------------------------------------------------


def _infer(op: str, inputs: Sequence[In], outputs: Sequence[str], **attrs: Any) -> sso.OnnxInferenceResult:
    return sso.infer(_model(Case("e", op, inputs, outputs, [], [], attrs)), dims=symbols_of(inputs))


def test_mha_head_size_mismatch_is_an_error_at_the_node() -> None:
    res = _infer(
        "MultiHeadAttention",
        [In("q", F, ("B", "S", 8)), In("k", F, ("B", "L", 6)), In("v", F, ("B", "L", 8))],
        ["y"],
        num_heads=2,
    )
    assert res.status == "error"
    report = res.report()
    assert [d.code for d in res.errors] == ["shape-mismatch"]
    assert "node 'MultiHeadAttention_0' (com.microsoft.MultiHeadAttention): error: matmul" in report
    assert "has 4" in report and "has 3" in report
    assert "graph input 'q': note:" in report and "graph input 'k': note:" in report


def test_skip_layer_norm_wrong_skip_is_an_error() -> None:
    res = _infer(
        "SkipLayerNormalization",
        [x3, In("skip", F, ("B", "S", 7)), In("g", F, ("H",))],
        ["y"],
    )
    # valid only when H == 7: guarded by exactly that
    assert res.status == "guarded"
    assert "H == 7" in [str(g) for g in res.guards]


def test_attention_width_not_divisible_by_three_is_an_error() -> None:
    res = _infer("Attention", [In("x", F, ("B", "S", 8)), In("w", F, (8, 25))], ["y"], num_heads=2)
    assert res.status == "error"
    assert [d.code for d in res.errors] == ["reshape-size"]


def test_unknown_contrib_op_is_unsupported() -> None:
    res = _infer("GroupQueryAttentionX", [x3], ["y"])
    assert res.status == "error"
    assert [d.code for d in res.errors] == ["unsupported-op"]
    assert "com.microsoft.GroupQueryAttentionX" in res.errors[0].message


def test_fused_matmul_trans_batch_is_unsupported() -> None:
    res = _infer("FusedMatMul", [x3, In("w", F, ("H", 3))], ["y"], transBatchA=1)
    assert [d.code for d in res.errors] == ["unsupported-op"]
    assert "transBatchA" in res.errors[0].message
