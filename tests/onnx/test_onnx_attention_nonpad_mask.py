"""``Attention`` with ``nonpad_kv_seqlen`` (opset 24): the mask's axes other than the last still
broadcast to the scores' ``(B, Hq, S)``, checked on onnx's node cases with their first dimensions
made symbolic and varied, against onnxruntime.

symshape skipped every mask check when ``nonpad_kv_seqlen`` was given (the mask may then cover
fewer keys than the padded cache), so it accepted a head mask of 4 heads for 3 query heads and a
mask of 2 rows for 4 queries, where onnxruntime refuses ("Add ... not broadcastable").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import onnx
import pytest
from node_oracle import collect_cases, prepare
from size_oracle import disagreements

MASKS = ("rank3_head_mask", "rank2_mask", "float16_mask")
CASES = [f"test_attention_local_window_ext_cache_{k}" for k in MASKS]


@pytest.mark.parametrize("name", CASES)
def test_nonpad_mask_broadcasts_to_the_scores(name: str) -> None:
    (case,) = [c for c in collect_cases() if c.name == name]
    model = onnx.ModelProto()
    model.CopyFrom(prepare(case).model)
    orig = dict(zip([vi.name for vi in case.model.graph.input], case.data_sets[0][0]))
    base: dict[str, int] = {}
    for vi in model.graph.input:  # the first dimension of each input a symbol
        d = vi.type.tensor_type.shape.dim[0]
        base[f"{vi.name}_0"] = int(d.dim_value)
        d.Clear()
        d.dim_param = f"{vi.name}_0"

    def feeds(size: Mapping[str, int], rng: np.random.Generator) -> dict[str, np.ndarray[Any, Any]]:
        out = {}
        for vi in model.graph.input:  # the case's values, rows repeated or cut to the size
            a = np.asarray(orig[vi.name])
            out[vi.name] = np.take(a, np.arange(size[f"{vi.name}_0"]) % a.shape[0], axis=0)
        return out

    mask = "attn_mask_0"
    sizes = [base, {k: 1 for k in base}, {k: v + 1 for k, v in base.items()}, {**base, mask: base[mask] + 1},
             {**base, mask: 1}, {**base, mask: 2 * base[mask]}]  # fmt: skip
    assert disagreements(model, sorted(base), sizes, feeds) == []
