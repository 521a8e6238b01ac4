"""``Attention`` (opset 23): the sizes onnxruntime accepts, against onnxruntime.

The converter broadcast Q's batch against K's and V's and checked neither the heads nor the mask,
so ``valid_at`` was True where onnxruntime refuses ("inconsistent batch_size (between Q and K)",
"q_num_heads must be a multiple of kv_num_heads", "inconsistent total_sequence_length" of the
mask; onnxruntime also needs the mask's rows to be the queries, unbroadcast): onnx's
``test_attention_*`` made symbolic. Each row: every size symbolic, onnxruntime run at
sizes where it accepts and where it refuses; every output's shape and ``valid_at`` compared.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest
from onnx_helpers import In, make_model, node, ort_runs, run_ort, symbols_of

import symshape as ss
import symshape.onnx as sso

F = "float32"
_Q4 = In("q", F, ("b", "hq", "s", "d"))
_K4, _V4 = In("k", F, ("bk", "hk", "l", "dk")), In("v", F, ("bv", "hv", "lv", 6))

ROWS: list[tuple[str, Any, list[In], list[Mapping[str, int]]]] = [
    (
        "4d",
        node("Attention", ["q", "k", "v"], ["y"]),
        [_Q4, _K4, _V4],
        [
            {"b": 2, "hq": 4, "s": 3, "d": 8, "bk": 2, "hk": 2, "l": 5, "dk": 8, "bv": 2, "hv": 2, "lv": 5},
            {"b": 2, "hq": 4, "s": 3, "d": 8, "bk": 1, "hk": 2, "l": 5, "dk": 8, "bv": 1, "hv": 2, "lv": 5},
            {"b": 1, "hq": 4, "s": 3, "d": 8, "bk": 2, "hk": 2, "l": 5, "dk": 8, "bv": 2, "hv": 2, "lv": 5},
            {"b": 2, "hq": 3, "s": 3, "d": 8, "bk": 2, "hk": 2, "l": 5, "dk": 8, "bv": 2, "hv": 2, "lv": 5},
            {"b": 2, "hq": 4, "s": 1, "d": 8, "bk": 2, "hk": 2, "l": 5, "dk": 8, "bv": 2, "hv": 2, "lv": 4},
            {"b": 2, "hq": 4, "s": 1, "d": 8, "bk": 2, "hk": 2, "l": 5, "dk": 4, "bv": 2, "hv": 2, "lv": 5},
            {"b": 1, "hq": 6, "s": 7, "d": 2, "bk": 1, "hk": 3, "l": 1, "dk": 2, "bv": 1, "hv": 3, "lv": 1},
        ],
    ),
    (
        "4d_mask",
        node("Attention", ["q", "k", "v", "m"], ["y", "", "", "qk"]),
        [In("q", F, ("b", 2, "s", 8)), In("k", F, ("b", 2, "l", 8)), In("v", F, ("b", 2, "l", 8)),
         In("m", F, ("ms", "ml"))],
        [{"b": 2, "s": 3, "l": 5, "ms": 3, "ml": 5}, {"b": 2, "s": 3, "l": 5, "ms": 1, "ml": 5},
         {"b": 2, "s": 3, "l": 5, "ms": 3, "ml": 1}, {"b": 1, "s": 3, "l": 5, "ms": 2, "ml": 5},
         {"b": 1, "s": 4, "l": 2, "ms": 4, "ml": 3}],
    ),
    (
        "3d",
        node("Attention", ["q", "k", "v"], ["y"], q_num_heads=4, kv_num_heads=2),
        [In("q", F, ("b", "s", 16)), In("k", F, ("bk", "l", 8)), In("v", F, ("bk", "l", 6))],
        [{"b": 2, "s": 3, "bk": 2, "l": 5}, {"b": 2, "s": 3, "bk": 1, "l": 5},
         {"b": 1, "s": 1, "bk": 1, "l": 1}],
    ),
]  # fmt: skip


def _feeds(inputs: Sequence[In], size: Mapping[str, int]) -> dict[str, np.ndarray[Any, Any]]:
    rng = np.random.default_rng(0)
    return {
        i.name: rng.standard_normal([size[d] if isinstance(d, str) else d for d in i.shape or ()]).astype(F)
        for i in inputs
    }


@pytest.mark.parametrize(("name", "n", "inputs", "sizes"), ROWS, ids=[r[0] for r in ROWS])
def test_attention_sizes_against_onnxruntime(
    name: str, n: Any, inputs: list[In], sizes: list[Mapping[str, int]]
) -> None:
    outs = [o for o in n.output if o]
    model = make_model([n], inputs, outs, opset=23)
    syms = symbols_of(inputs)
    res = sso.infer(model, dims=syms)
    assert not res.errors and not res.unsupported, res.report()
    ran = 0
    for size in sizes:
        env = {syms[k]: v for k, v in size.items()}
        feeds = _feeds(inputs, size)
        runs = ort_runs(model, feeds)
        assert res.valid_at(env) == runs, (size, [str(g) for g in res.guards])
        if not runs:
            continue
        ran += 1
        for o, arr in zip(outs, run_ort(model, feeds)):
            t = res.type_of(o)
            assert isinstance(t, ss.TensorType) and t.ndim is not None, (o, t)
            assert tuple(int(d.subs(env)) for d in t.dims) == arr.shape, (o, str(t), size)
    assert 0 < ran < len(sizes)
