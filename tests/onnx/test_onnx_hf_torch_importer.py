"""The torch importer on the transformers models of hf_models (``torch.export`` programs), against
eager torch: ``valid_at`` is True exactly where the model runs, and the output's type with the
sizes substituted is the shape torch computes. Found with them: wav2vec2's positional convolution
(``aten._weight_norm``) and DeBERTa-v2's ``.repeat(batch, 1, 1)`` (a run-time size) were
``unsupported-op``; both are checked here, also as small modules. Found later (each with its own
test in tests/torch): T5's relative position buckets ``where(r < k, r, ...)`` were rejected past
``seq = 4`` (test_torch_where_range), RoBERTa's ``type_as`` dropped the position ids' range and
``valid_at`` said True at ``seq = 21`` (test_torch_type_as_range), GPT-2 and Llama with a KV
cache concatenated to ``torch.tensor([])`` were ``rank-mismatch`` errors (test_torch_cat_empty).
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import symshape as ss

torch = pytest.importorskip("torch", reason="the torch importer needs torch (CPU)")
pytest.importorskip("transformers", reason="the transformers-model oracle needs transformers")

from hf_models import HFSpec, build, spec_named  # noqa: E402

import symshape.torch as sst  # noqa: E402

#: (model, status)
CASES = {
    "wav2vec2": "guarded", "deberta": "guarded", "vit_interp": "guarded", "t5": "ok", "roberta": "guarded",
    "gpt2_kv": "guarded", "llama_kv": "guarded",
}  # fmt: skip


def _named(spec: HFSpec) -> Any:
    """The model taking its inputs as parameters named after them (``torch.export`` names the
    placeholders so; a ``**kwargs`` forward does not export)."""
    inner = build(spec).model
    params = ", ".join(spec.input_names)
    ns: dict[str, Any] = {}
    pairs = ", ".join(f"{p}={p}" for p in spec.input_names)
    exec(f"def forward(self, {params}):\n    return self.call(dict({pairs}))", ns)

    class Named(torch.nn.Module):  # type: ignore[misc]
        forward = ns["forward"]

        def __init__(self) -> None:
            super().__init__()
            self.model = inner

        def call(self, inputs: dict[str, Any]) -> Any:
            return self.model(**inputs, **spec.call, return_dict=True)[spec.output]

    return Named().eval()


def _feeds(spec: HFSpec, size: Any) -> dict[str, Any]:
    return {k: torch.from_numpy(v) for k, v in spec.make_inputs(size).items()}


@pytest.mark.parametrize("name", list(CASES))
def test_torch_importer_on_hf_model(name: str) -> None:
    from torch.export import Dim, export

    spec = spec_named(name)
    model = _named(spec)
    dynamic = {k: {a: Dim.DYNAMIC for a in axes} for k, axes in spec.dynamic.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ep = export(model, (), _feeds(spec, spec.sizes[1]), dynamic_shapes=dynamic)
    syms = {k: ss.dim(k) for k in spec.dim_names}
    example = spec.make_inputs(spec.sizes[1])
    types = {}
    for k, axes in spec.dynamic.items():
        shape = tuple(syms[axes[i]] if i in axes else example[k].shape[i] for i in range(example[k].ndim))
        types[k] = ss.Tensor(shape, str(example[k].dtype))
    res = sst.infer(ep, types)
    assert res.status == CASES[name], res.report()
    out_node = ep.graph_module.graph.output_node().args[0][0]
    ran_any = False
    for size in spec.sizes:
        env = {syms[k]: v for k, v in size.items()}
        try:
            with torch.no_grad():
                out = model(**_feeds(spec, size))
        except Exception:  # eager torch refuses this size: the oracle's "invalid"
            out = None
        assert res.valid_at(env) == (out is not None), (dict(size), [str(g) for g in res.guards])
        if out is not None:
            ran_any = True
            assert res.type_of(out_node.name).subs(env).shape == tuple(out.shape), dict(size)
    assert ran_any


@pytest.mark.parametrize("reps", [(2, 1, 1), (1, 3, 1)])
def test_repeat_by_a_run_time_size(reps: tuple[int, int, int]) -> None:
    """``x.repeat(b, 1, 1)`` with ``b`` another input's batch: ``(b*n, m, k)``."""

    class M(torch.nn.Module):  # type: ignore[misc]
        def forward(self, x: Any, ids: Any) -> Any:
            b = ids.shape[0]
            return x.repeat(*(b if r != 1 else 1 for r in reps))

    n, m, b = ss.dims("n m b")
    res = sst.infer(M(), {"x": ss.Tensor((n, m, 4), "float32"), "ids": ss.Tensor((b, 3), "int64")})
    assert res.ok, res.report()
    for nv, mv, bv in ((1, 2, 3), (2, 5, 1)):
        out = M()(torch.zeros(nv, mv, 4), torch.zeros(bv, 3, dtype=torch.long))
        got = [d.subs({n: nv, m: mv, b: bv}) for d in res.type_of(res.program.body).shape]
        assert tuple(int(d) for d in got) == tuple(out.shape)


def test_weight_norm() -> None:
    conv = torch.nn.utils.parametrizations.weight_norm(torch.nn.Conv1d(4, 4, 3, padding=1, groups=2), dim=2)

    class M(torch.nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.conv = conv

        def forward(self, x: Any) -> Any:
            return self.conv(x)

    from torch.export import Dim, export

    ep = export(M(), (torch.zeros(2, 4, 9),), dynamic_shapes=({0: Dim.DYNAMIC, 2: Dim.DYNAMIC},))
    b, t = ss.dims("b t")
    res = sst.infer(ep, {"x": ss.Tensor((b, 4, t), "float32")})
    assert res.ok, res.report()
    out_node = ep.graph_module.graph.output_node().args[0][0]
    assert res.type_of(out_node.name).subs({b: 3, t: 7}).shape == tuple(M()(torch.zeros(3, 4, 7)).shape)


@pytest.mark.parametrize("kind", ["avg", "max"])
@pytest.mark.parametrize("out", [1, 3])
@pytest.mark.parametrize("batched", [True, False])
def test_adaptive_pool_1d(kind: str, out: int, batched: bool) -> None:
    """``AdaptiveAvgPool1d(1)`` (Swin's pooler over the tokens) was unsupported-op."""
    pool = getattr(torch.nn.functional, f"adaptive_{kind}_pool1d")

    class M(torch.nn.Module):  # type: ignore[misc]
        def forward(self, x: Any) -> Any:
            return pool(x, out)

    n, length = ss.dims("n l")
    shape = (n, 4, length) if batched else (4, length)
    res = sst.infer(M(), {"x": ss.Tensor(shape, "float32")})
    assert res.ok, res.report()
    for nv, lv in ((1, 1), (2, 9)):
        real = M()(torch.zeros((nv, 4, lv) if batched else (4, lv))).shape
        assert res.type_of(res.program.body).subs({n: nv, length: lv}).shape == tuple(real)
