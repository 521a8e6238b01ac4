"""``NegativeLogLikelihoodLoss`` and ``SoftmaxCrossEntropyLoss`` against onnxruntime at several
sizes, and against the spec's shape rules.

symshape gave the loss the target's type and checked nothing. The spec: scores ``(N, C, d1, ...)``
of rank >= 2, target ``(N, d1, ...)`` (the scores' shape without ``C``), weight ``(C,)``.
onnxruntime refuses scores of rank 1 and a target of another rank, but its function body
(``GatherElements``) also runs a target smaller than the scores' shape, and a weight of other than
``C`` entries when the target reads none past it: looser than the spec. symshape follows the spec:
those sizes are the only differences allowed, and symshape must exclude each of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest
from onnx_helpers import In, make_model, node
from size_oracle import disagreements, feeds_of

import symshape as ss
import symshape.onnx as sso

X2, T1 = In("x", "float32", ["n", "c"]), In("t", "int64", ["n2"])
X3, T2, WT = In("x", "float32", ["n", "c", "d"]), In("t", "int64", ["n2", "d2"]), In("w", "float32", ["c2"])
S2 = [
    dict(n=3, c=4, n2=3),
    dict(n=3, c=4, n2=2),
    dict(n=1, c=1, n2=1),
    dict(n=2, c=5, n2=1),
    dict(n=2, c=1, n2=3),
]
S3 = [dict(n=3, c=4, d=2, n2=3, d2=2), dict(n=3, c=4, d=2, n2=3, d2=1), dict(n=3, c=4, d=2, n2=1, d2=2),
      dict(n=1, c=1, d=1, n2=1, d2=1), dict(n=2, c=4, d=3, n2=2, d2=4)]  # fmt: skip
SW = [dict(s, c2=s["c"]) for s in S3] + [dict(S3[0], c2=3), dict(S3[0], c2=1), dict(S3[0], c2=5)]
OPS = [("NegativeLogLikelihoodLoss", ["y"]), ("SoftmaxCrossEntropyLoss", ["y", "lp"])]


def _spec_bad(s: Mapping[str, int]) -> bool:
    return s["n2"] != s["n"] or s.get("d2", 0) != s.get("d", 0) or s.get("c2", s["c"]) != s["c"]


def _zero_target(ins: list[In]) -> Any:
    f = feeds_of(ins)

    def feeds(size: Mapping[str, int], rng: np.random.Generator) -> dict[str, np.ndarray[Any, Any]]:
        d = f(size, rng)
        d["t"] = np.zeros_like(d["t"])  # a class index every C has
        return d

    return feeds


ROWS = [(op, outs, red, ins, sizes, attrs)
        for op, outs in OPS for red in ("none", "mean", "sum")
        for ins, sizes, attrs in (([X2, T1], S2, {}), ([X3, T2], S3, {}), ([X3, T2, WT], SW, {}),
                                  ([X3, T2], S3, {"ignore_index": 1}))]  # fmt: skip


IDS = [f"{r[0]}-{r[2]}-{len(r[3][0].shape or ())}d-{len(r[3])}in-{r[5]}" for r in ROWS]


@pytest.mark.parametrize(("op", "outs", "reduction", "ins", "sizes", "attrs"), ROWS, ids=IDS)
def test_loss_against_onnxruntime_and_the_spec(
    op: str,
    outs: list[str],
    reduction: str,
    ins: list[In],
    sizes: list[dict[str, int]],
    attrs: dict[str, Any],
) -> None:
    model = make_model(
        [node(op, [i.name for i in ins], outs, reduction=reduction, **attrs)], ins, outs, opset=13
    )
    names = sorted({d for i in ins for d in i.shape or () if isinstance(d, str)})
    got = disagreements(model, names, sizes, _zero_target(ins))
    bad = [str(s) for s in sizes if _spec_bad(s)]
    assert all(g.split(": onnxruntime runs; symshape excludes it")[0] in bad for g in got), got
    syms = {n: ss.dim(n) for n in names}
    res = sso.infer(model, dims=syms)
    for s in sizes:  # exactly the spec's sizes
        assert res.valid_at({syms[k]: v for k, v in s.items()}) == (not _spec_bad(s)), (s, res.report())


@pytest.mark.parametrize("op", [op for op, _ in OPS])
def test_loss_of_rank_1_scores_or_another_target_rank_is_an_error(op: str) -> None:
    for ins in ([In("x", "float32", ["c"]), In("t", "int64", [])], [X3, T1]):
        model = make_model([node(op, ["x", "t"], ["y"], reduction="none")], ins, ["y"], opset=13)
        res = sso.infer(model)
        assert res.errors and "rank" in res.report(), res.report()
