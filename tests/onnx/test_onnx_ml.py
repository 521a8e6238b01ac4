"""Converters of symshape.onnx.ops.ml (``ai.onnx.ml``), symbolic, against onnx's reference
evaluator at concrete sizes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import helper
from onnx_helpers import In, make_model, reference, symbols_of

import symshape.onnx as sso

F = "float32"
ML = "ai.onnx.ml"


def _run(op: str, ins: list[In], feeds: dict[str, Any], want: str, ml: int, **attrs: Any) -> None:
    m = make_model(
        [helper.make_node(op, [i.name for i in ins], ["y"], domain=ML, **attrs)],
        ins,
        ["y"],
        opset=21,
        extra_opsets={ML: ml},
    )
    syms = symbols_of(ins)
    res = sso.infer(m, dims=syms)
    assert res.status == "ok", res.report()
    t = res.type_of("y")
    assert str(t) == want
    (y,) = reference(m, feeds)
    env = {
        syms[k]: feeds[i.name].shape[a]
        for i in ins
        for a, k in enumerate(i.shape or ())
        if isinstance(k, str)
    }
    assert tuple(int(d.subs(env)) for d in t.dims) == y.shape


def test_binarizer() -> None:
    _run("Binarizer", [In("x", F, ("n", 4))], {"x": np.zeros((3, 4), F)}, "Tensor[(n, 4), float32]", 1)


@pytest.mark.parametrize("rank", [1, 2])
def test_array_feature_extractor(rank: int) -> None:
    shape = ("n", 5) if rank == 2 else (5,)
    x = np.zeros((3, 5) if rank == 2 else (5,), F)
    want = "Tensor[(n, 2), float32]" if rank == 2 else "Tensor[(1, 2), float32]"
    ins = [In("x", F, shape), In("i", "int64", (2,))]
    _run("ArrayFeatureExtractor", ins, {"x": x, "i": np.array([0, 3], np.int64)}, want, 1)


def test_label_encoder_floats_to_int64s() -> None:
    ins = [In("x", F, ("n",))]
    feeds = {"x": np.array([1.0, 2.0, 5.0], F)}
    attrs = {"keys_floats": [1.0, 2.0], "values_int64s": [7, 8], "default_int64": -1}
    _run("LabelEncoder", ins, feeds, "Tensor[(n,), int64]", 2, **attrs)


def test_tree_ensemble_targets() -> None:
    attrs = dict(
        n_targets=3, aggregate_function=1, post_transform=0, tree_roots=[0], nodes_modes=helper.make_tensor(
            "m", 2, [1], [0]), nodes_featureids=[0], nodes_splits=helper.make_tensor("s", 1, [1], [0.5]),
        nodes_truenodeids=[0], nodes_trueleafs=[1], nodes_falsenodeids=[1], nodes_falseleafs=[1],
        leaf_targetids=[0, 2], leaf_weights=helper.make_tensor("w", 1, [2], [1.0, 2.0]),
    )  # fmt: skip
    _run(
        "TreeEnsemble",
        [In("x", F, ("n", 2))],
        {"x": np.zeros((4, 2), F)},
        "Tensor[(n, 3), float32]",
        5,
        **attrs,
    )
