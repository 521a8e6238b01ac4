"""transformers exports (TorchScript, tiny configs of :mod:`hf_more_models`) with their dynamic
axes declared ``min=0`` (empty batches and sequences allowed), against onnxruntime at a grid of
sizes including 0 and 1: ``valid_at`` decides every point (it raised "does not decide" at full
assignments, the case split of a run-time ``Reshape`` entry that may be 0 having left an
anonymous ``?``) exactly as onnxruntime runs, and the output's shape is a constant equal to
onnxruntime's after substitution.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping
from typing import Any

import numpy as np
import onnxruntime as ort
import pytest
from hf_models import HFSpec, export
from hf_more_models import more_spec

import symshape as ss
import symshape.onnx as sso


def _inputs_at(spec: HFSpec, p: Mapping[str, int]) -> dict[str, np.ndarray[Any, Any]]:
    """``spec.make_inputs`` at ``p`` with no pad token (1) in the ids (where a pad token happens to
    fall, the positions are shorter and the model runs past its position table); at batch 0 the
    inputs at batch 1 with no rows."""
    arrays = spec.make_inputs({**p, "batch": max(1, p["batch"])})
    out = {}
    for k, v in arrays.items():
        if k.endswith("input_ids"):
            v = np.maximum(v, 3)
        if p["batch"] == 0:
            axes = [a for a, n in spec.dynamic.get(k, {}).items() if n == "batch"]
            v = v.take(np.arange(0), axis=axes[0]) if axes else v
        out[k] = v
    return out


def _grid(spec: HFSpec, cap: int) -> list[dict[str, int]]:
    """0, 1, and each of the spec's sizes and its neighbours, per axis; the spec's sizes first,
    then a fixed sample of the product (``cap`` points in all)."""
    vals: dict[str, set[int]] = {d: {0, 1} for d in spec.dim_names}
    for s in spec.sizes:
        for d in spec.dim_names:
            vals[d] |= {max(0, s[d] - 1), s[d], s[d] + 1}
    pts = [dict(zip(vals, p)) for p in itertools.product(*(sorted(v) for v in vals.values()))]
    random.Random(0).shuffle(pts)
    out: list[dict[str, int]] = []
    for p in [*(dict(s) for s in spec.sizes), *pts]:
        if p not in out:
            out.append(p)
    return out[:cap]


@pytest.mark.parametrize(("name", "ran_least"), [("speech2text", 10), ("gpt_bigcode", 10), ("m2m100", 10)])
def test_hf_export_with_empty_sizes_is_decided(
    name: str, ran_least: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    spec = more_spec(name)
    path = export(spec, str(tmp_path_factory.mktemp(f"oy_{name}")), dynamo=False)
    so = ort.SessionOptions()
    so.log_severity_level = 4
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    syms = {d: ss.dim(d, min=0) for d in spec.dim_names}
    res = sso.infer(path, dims=syms)
    assert not res.errors and not res.unsupported, res.report()
    misses: list[str] = []
    ran = 0
    for p in _grid(spec, 40):
        try:
            shape: tuple[int, ...] | None = sess.run(None, _inputs_at(spec, p))[0].shape
        except Exception:
            shape = None
        ran += shape is not None
        env = {syms[k]: v for k, v in p.items()}
        try:
            valid = res.valid_at(env)
        except ss.SymshapeError as e:
            misses.append(f"{p}: onnxruntime {shape}; valid_at raises {str(e)[:200]}")
            continue
        if valid != (shape is not None):
            misses.append(f"{p}: onnxruntime {shape}; valid_at {valid}")
        elif shape is not None:
            t = res.type_of("output")
            assert isinstance(t, ss.TensorType) and t.ndim is not None
            got = tuple(d.subs(env) for d in t.dims)
            if not all(d.is_constant for d in got) or tuple(int(d) for d in got) != shape:
                misses.append(f"{p}: output {t} -> {tuple(map(str, got))}, onnxruntime {shape}")
    assert misses == [], "\n".join(misses)
    assert ran >= ran_least  # (the grid has points on both sides)
