"""Review guards (s13, rv): the hand-written models of test_rv_validity_hand_models, plus a
ViT-style patchify (``x.reshape(b, c, h // 4, 4, w // 4, 4)``, a learned position table sliced to
the patches), exported by torch.onnx (TorchScript, dynamic axes) and judged against onnxruntime:
``symshape.onnx`` ``valid_at`` is True exactly where onnxruntime runs (sizes from 1: onnxruntime
is lenient with empty tensors), and the output's type with the sizes substituted is
onnxruntime's shape.
"""

from __future__ import annotations

import itertools
import os
import warnings
from typing import Any

import numpy as np
import pytest

import symshape as ss

torch = pytest.importorskip("torch", reason="the exports need torch (CPU)")
ort = pytest.importorskip("onnxruntime", reason="the oracle is onnxruntime")
pytest.importorskip("onnx")

import symshape.onnx as sso  # noqa: E402
from test_rv_validity_hand_models import HeadsSplit, StridedConvNet, UNetLike, WhisperFront  # noqa: E402

nn = torch.nn


class Patchify(nn.Module):  # type: ignore[misc]
    def __init__(self) -> None:
        super().__init__()
        self.pos = nn.Parameter(torch.zeros(1, 9, 48))

    def forward(self, x: Any) -> Any:
        b, c, h, w = x.shape
        p = (
            x.reshape(b, c, h // 4, 4, w // 4, 4)
            .permute(0, 2, 4, 1, 3, 5)
            .reshape(b, (h // 4) * (w // 4), c * 16)
        )
        return p + self.pos[:, : p.shape[1]]


def _grid(**axes: Any) -> list[dict[str, int]]:
    return [dict(zip(axes, v)) for v in itertools.product(*axes.values())]


_IMG = {0: "b", 2: "h", 3: "w"}
#: name -> (model, input shape with symbol names, example sizes, grid)
CASES: dict[str, tuple[Any, tuple[Any, ...], dict[str, int], list[dict[str, int]]]] = {
    "strided": (StridedConvNet, ("b", 3, "h", "w"), {"b": 2, "h": 24, "w": 25},
                _grid(b=(1, 2), h=(14, 17, 18, 24, 29, 30, 36, 41), w=(17, 18, 24, 30, 36, 42))),
    "whisper_sliced": (lambda: WhisperFront(True), ("b", 4, "t"), {"b": 2, "t": 30},
                       _grid(b=(1, 2), t=(1, 2, 3, 31, 32, 33, 40))),
    "unet": (UNetLike, ("b", 3, "h", "w"), {"b": 2, "h": 16, "w": 8},
             _grid(b=(1,), h=(1, 2, 3, 4, 6, 8, 12, 13), w=(4, 5, 8))),
    "heads": (HeadsSplit, ("b", "t", "d"), {"b": 2, "t": 3, "d": 8},
              _grid(b=(1, 2), t=(1, 3), d=(1, 3, 4, 6, 8, 12))),
    "patchify": (Patchify, ("b", 3, "h", "w"), {"b": 2, "h": 12, "w": 8},
                 _grid(b=(1, 2), h=(3, 4, 5, 8, 12, 13, 16), w=(4, 7, 8, 12))),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CASES))
def test_onnx_valid_exactly_where_onnxruntime_runs(name: str, tmp_path: Any) -> None:
    build, shape, example, grid = CASES[name]
    torch.manual_seed(0)
    model = build().eval()
    names = sorted({d for d in shape if isinstance(d, str)})
    path = os.path.join(tmp_path, f"{name}.onnx")
    x = torch.zeros(tuple(example[d] if isinstance(d, str) else d for d in shape))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model, (x,), path, dynamo=False, input_names=["x"], output_names=["y"],
            dynamic_axes={"x": {i: d for i, d in enumerate(shape) if isinstance(d, str)}}, opset_version=17,
        )  # fmt: skip
    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    syms = {n: ss.dim(n) for n in names}
    res = sso.infer(path, dims=syms)
    assert res.status in ("ok", "guarded"), res.report()
    assert "?" not in res.valid_when()
    wrong = []
    runs = 0
    for p in grid:
        feed = np.zeros(tuple(p[d] if isinstance(d, str) else d for d in shape), np.float32)
        try:
            real: tuple[int, ...] | None = tuple(sess.run(None, {"x": feed})[0].shape)
        except Exception:  # onnxruntime refuses this size: the oracle's "invalid"
            real = None
        env = {syms[k]: v for k, v in p.items()}
        runs += real is not None
        if res.valid_at(env) != (real is not None):
            wrong.append(f"{p}: onnxruntime {'runs' if real else 'fails'}")
        elif real is not None:
            got = tuple(int(d.subs(env)) for d in res.type_of("y").shape)
            if got != real:
                wrong.append(f"{p}: {res.type_of('y')} gives {got}, onnxruntime {real}")
    assert wrong == []
    assert runs > 0
