"""Oracle (c): models written by hand in PyTorch and exported with dynamic axes (torch_models).

Each is exported into ``tmp_path`` at test time, inferred with its dynamic axes as symbols, and run
with onnxruntime at two or three sizes: every value whose type symshape knows (rank and every
dimension) must have that shape once the sizes are substituted, and every guard must hold. All
four convert fully: the GPT-2 and BERT blocks compute their reshape targets, slice bounds and
``Range`` limits from ``Shape`` at run time, which symshape follows as shape values. The GPT-2
block is ``guarded``: its causal mask buffer and position table have 16 rows, so the sequence
length must fit them (the guard at the mask's ``Where``). Every value is typed, and compared at every size.
"""

from __future__ import annotations

import os

import onnx
import pytest

import symshape as ss
import symshape.onnx as sso

torch = pytest.importorskip("torch", reason="the exported-model oracle needs torch (CPU)")

from torch_models import MODELS, ModelSpec, export, run_all_values  # noqa: E402

# values at every size (every one is typed and compared)
CHECKED = {"gpt_block": 129, "bert_layer": 143, "resnet": 32, "unet": 49}
STATUS = {"gpt_block": "guarded", "bert_layer": "ok", "resnet": "ok", "unet": "guarded"}


@pytest.mark.parametrize("spec", MODELS, ids=lambda s: s.name)
def test_exported_model(spec: ModelSpec, tmp_path: os.PathLike[str]) -> None:
    path = export(spec, str(tmp_path))
    m = onnx.load(path)
    del m.graph.value_info[:]  # the exporter's own shape inference is not the oracle
    syms = {name: ss.dim(name) for axes in spec.dynamic.values() for name in axes.values()}
    res = sso.infer(m, dims=syms)
    assert res.status == STATUS[spec.name], res.report()
    assert not res.unsupported and not res.errors
    types = res.types()
    for size in spec.sizes:
        env = {syms[k]: v for k, v in size.items()}
        assert all(g.holds(env) for g in res.guards), [str(g) for g in res.guards]
        actual = run_all_values(path, dict(zip(spec.input_names, spec.inputs(size))))
        checked = 0
        for name, real in actual.items():
            t = types.get(name)
            if not isinstance(t, ss.TensorType) or t.ndim is None:
                continue
            dims = [d.subs(env) for d in t.dims]
            if not all(d.is_constant for d in dims):
                continue
            assert tuple(int(d) for d in dims) == real, f"{name}: {t} at {size}"
            checked += 1
        assert checked == len(actual) >= CHECKED[spec.name], (checked, len(actual))
