"""Converters of symshape.onnx.ops.misc (quantization, generators, windows, losses, fused
operators), against onnx's reference evaluator."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from onnx_helpers import Case, In, check_node, make_model, node, reference, symbols_of

import symshape.onnx as sso

F = "float32"


def idx(hi: int):
    return lambda s, r: r.integers(0, hi, s).astype(np.int64)


CASES = [
    Case(
        "quantize_zero_point",
        node("QuantizeLinear", ["x", "s", "z"], ["y"]),
        [In("x", F, ("n", 3))],
        ["Tensor[(n, 3), int8]"],
        [{"n": 2}],
        inits={"s": np.float32(0.5), "z": np.int8(0)},
    ),
    Case(
        "quantize_default_uint8",
        node("QuantizeLinear", ["x", "s"], ["y"]),
        [In("x", F, ("n",))],
        ["Tensor[(n,), uint8]"],
        [{"n": 2}],
        inits={"s": np.float32(0.5)},
    ),
    Case(
        "dequantize",
        node("DequantizeLinear", ["x", "s"], ["y"]),
        [In("x", "uint8", ("n", 2))],
        ["Tensor[(n, 2), float16]"],
        [{"n": 3}],
        inits={"s": np.float16(0.5)},
        opset=19,
    ),
    Case(
        "dynamic_quantize",
        node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"]),
        [In("x", F, ("n", 3))],
        ["Tensor[(n, 3), uint8]", "Tensor[(), float32]", "Tensor[(), uint8]"],
        [{"n": 2}],
    ),
    Case(
        "random_like",
        node("RandomUniformLike", ["x"], ["y"], dtype=11),
        [In("x", F, ("n", 2))],
        ["Tensor[(n, 2), float64]"],
        [{"n": 3}],
    ),
    Case(
        "random_normal", node("RandomNormal", [], ["y"], shape=[2, 3]), [], ["Tensor[(2, 3), float32]"], [{}]
    ),
    Case(
        "bernoulli",
        node("Bernoulli", ["x"], ["y"]),
        [In("x", F, ("n",), data=lambda s, r: r.random(s).astype(np.float32))],
        ["Tensor[(n,), float32]"],
        [{"n": 4}],
        opset=15,
    ),
    Case(
        "multinomial",
        node("Multinomial", ["x"], ["y"], sample_size=5),
        [In("x", F, ("b", 3))],
        ["Tensor[(b, 5), int32]"],
        [{"b": 2}],
        runner="onnxruntime",
    ),
    Case(
        "hann_window",
        node("HannWindow", ["n"], ["y"]),
        [],
        ["Tensor[(10,), float32]"],
        [{}],
        inits={"n": np.array(10, np.int64)},
    ),
    Case(
        "mel_weight_matrix",
        node("MelWeightMatrix", ["m", "d", "r", "lo", "hi"], ["y"]),
        [],
        ["Tensor[(9, 4), float32]"],
        [{}],
        inits={
            "m": np.array(4, np.int64),
            "d": np.array(16, np.int64),
            "r": np.array(8000, np.int64),
            "lo": np.float32(0),
            "hi": np.float32(4000),
        },
    ),
    Case(
        "nll_none",
        node("NegativeLogLikelihoodLoss", ["x", "t"], ["y"], reduction="none"),
        [In("x", F, ("n", 5, "d")), In("t", "int64", ("n", "d"), data=idx(5))],
        ["Tensor[(n, d), float32]"],
        [{"n": 2, "d": 3}],
    ),
    Case(
        "sce_mean_log_prob",
        node("SoftmaxCrossEntropyLoss", ["x", "t"], ["y", "lp"]),
        [In("x", F, ("n", 5)), In("t", "int64", ("n",), data=idx(5))],
        ["Tensor[(), float32]", "Tensor[(n, 5), float32]"],
        [{"n": 3}],
    ),
    Case(
        "rotary",
        node("RotaryEmbedding", ["x", "c", "s", "p"], ["y"]),
        [
            In("x", F, ("b", 2, "s", 4)),
            In("c", F, (8, 2)),
            In("s", F, (8, 2)),
            In("p", "int64", ("b", "s"), data=idx(8)),
        ],
        ["Tensor[(b, 2, s, 4), float32]"],
        [{"b": 1, "s": 3}],
        opset=23,
    ),
    Case(
        "causal_conv_state",
        node("CausalConvWithState", ["x", "w"], ["y", "st"]),
        [In("x", F, ("b", 4, "l"))],
        ["Tensor[(b, 4, l), float32]", "Tensor[(b, 4, 2), float32]"],
        [],
        inits={"w": np.ones((4, 1, 3), np.float32)},
        opset=27,
    ),
    Case(
        "causal_conv_state_symbolic_kernel",
        node("CausalConvWithState", ["x", "w"], ["y", "st"]),
        [In("x", F, ("b", "c", "l")), In("w", F, ("c", 1, "k"))],
        ["Tensor[(b, c, l), float32]", "Tensor[(b, c, k - 1), float32]"],
        [{"b": 2, "c": 3, "l": 5, "k": 4}, {"b": 1, "c": 1, "l": 2, "k": 1}],
        opset=27,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_misc(case: Case) -> None:
    check_node(case)


_OPT_ATTRS: dict[str, dict[str, object]] = {
    "Adagrad": {},
    "Adam": {},
    "Momentum": {"norm_coefficient": 0.001, "alpha": 0.95, "beta": 0.1, "mode": "standard"},
}


@pytest.mark.parametrize("op, groups, outs", [("Adagrad", 3, 2), ("Momentum", 3, 2), ("Adam", 4, 3)])
def test_training_optimizers_keep_the_tensors_types(op: str, groups: int, outs: int) -> None:
    """``ai.onnx.preview.training`` optimizers over two tensors: each output has its tensor's
    shape, symbolic, and the reference evaluator agrees at a size."""
    shapes = [("n", 3), ("m",)]
    names = [f"t{g}_{i}" for g in range(groups) for i in range(2)]
    ins = [In("r", F, ()), In("t", "int64", ())] + [In(nm, F, shapes[int(nm[-1])]) for nm in names]
    out_names = [f"o{k}" for k in range(2 * outs)]
    m = make_model(
        [
            helper.make_node(
                op, ["r", "t", *names], out_names, domain="ai.onnx.preview.training", **_OPT_ATTRS[op]
            )
        ],
        ins,
        out_names,
        extra_opsets={"ai.onnx.preview.training": 1},
    )
    res = sso.infer(m, dims=symbols_of(ins))
    assert res.status == "ok", res.report()
    assert [str(res.type_of(o)) for o in out_names[:2]] == [
        "Tensor[(n, 3), float32]",
        "Tensor[(m,), float32]",
    ]
    rng = np.random.default_rng(0)
    size = {"n": 2, "m": 5}
    feeds = {i.name: np.asarray(rng.standard_normal([size.get(d, d) for d in i.shape]), F) for i in ins}
    feeds["t"] = np.array(1, np.int64)
    got = reference(m, feeds)
    env = {res._importer.dim_names.symbols[k]: v for k, v in size.items()}
    for o, arr in zip(out_names, got):
        assert tuple(int(d.subs(env)) for d in res.type_of(o).dims) == arr.shape
