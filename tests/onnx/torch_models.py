"""Oracle (c): small models written by hand in PyTorch, exported to ONNX with dynamic axes.

No downloads and no torchvision: a GPT-2-like block (token and learned position embeddings,
causal self-attention with a sliced mask buffer, a GELU MLP, a language-model head), a BERT-like
encoder layer (post-norm self-attention with a padding mask and an FFN), a small ResNet (a stem,
two basic blocks of which one downsamples, global pooling, a classifier) and a UNet-like net (two
levels of convolutions and max-pooling, transposed-convolution upsampling, concatenated skips).

:func:`export` writes one to a directory with ``torch.onnx.export`` (the TorchScript-based exporter,
``dynamo=False``: it runs offline and quickly) with the dynamic axes named as in :data:`MODELS`;
:func:`run_all_values` runs a model with onnxruntime and returns the shape of every value (all
intermediate values are made graph outputs).
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["ModelSpec", "MODELS", "export", "run_all_values", "build"]


def _torch() -> Any:
    import torch

    return torch


def _gpt_block() -> Any:
    torch = _torch()
    nn = torch.nn

    class Attention(nn.Module):  # type: ignore[misc]
        def __init__(self, d: int, heads: int, ctx: int) -> None:
            super().__init__()
            self.heads = heads
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.register_buffer("mask", torch.tril(torch.ones(ctx, ctx)).view(1, 1, ctx, ctx))

        def forward(self, x: Any) -> Any:
            b, t, c = x.shape
            q, k, v = self.qkv(x).split(c, dim=2)
            h = self.heads
            q = q.view(b, t, h, c // h).transpose(1, 2)
            k = k.view(b, t, h, c // h).transpose(1, 2)
            v = v.view(b, t, h, c // h).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(c // h))
            att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
            att = torch.softmax(att, dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
            return self.proj(y)

    class GPT(nn.Module):  # type: ignore[misc]
        def __init__(self, vocab: int = 50, d: int = 32, heads: int = 4, ctx: int = 16) -> None:
            super().__init__()
            self.wte = nn.Embedding(vocab, d)
            self.wpe = nn.Embedding(ctx, d)
            self.ln1 = nn.LayerNorm(d)
            self.attn = Attention(d, heads, ctx)
            self.ln2 = nn.LayerNorm(d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
            self.ln_f = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab, bias=False)

        def forward(self, idx: Any) -> Any:
            t = idx.shape[1]
            pos = torch.arange(0, t, dtype=torch.long)
            x = self.wte(idx) + self.wpe(pos)
            x = x + self.attn(self.ln1(x))
            x = x + self.mlp(self.ln2(x))
            return self.head(self.ln_f(x))

    return GPT()


def _bert_layer() -> Any:
    torch = _torch()
    nn = torch.nn

    class Layer(nn.Module):  # type: ignore[misc]
        def __init__(self, d: int = 32, heads: int = 4) -> None:
            super().__init__()
            self.heads = heads
            self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
            self.out = nn.Linear(d, d)
            self.ln1 = nn.LayerNorm(d)
            self.ffn = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
            self.ln2 = nn.LayerNorm(d)

        def split(self, x: Any) -> Any:
            b, t, c = x.shape
            return x.view(b, t, self.heads, c // self.heads).permute(0, 2, 1, 3)

        def forward(self, x: Any, mask: Any) -> Any:
            b, t, c = x.shape
            q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(c // self.heads)
            scores = scores + (1.0 - mask[:, None, None, :]) * -10000.0
            p = torch.softmax(scores, dim=-1)
            ctx = torch.matmul(p, v).permute(0, 2, 1, 3).reshape(b, t, c)
            x = self.ln1(x + self.out(ctx))
            return self.ln2(x + self.ffn(x))

    return Layer()


def _resnet() -> Any:
    torch = _torch()
    nn = torch.nn

    class Block(nn.Module):  # type: ignore[misc]
        def __init__(self, cin: int, cout: int, stride: int) -> None:
            super().__init__()
            self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.b1 = nn.BatchNorm2d(cout)
            self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.b2 = nn.BatchNorm2d(cout)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x: Any) -> Any:
            y = torch.relu(self.b1(self.c1(x)))
            y = self.b2(self.c2(y))
            return torch.relu(y + (x if self.down is None else self.down(x)))

    class ResNet(nn.Module):  # type: ignore[misc]
        def __init__(self, classes: int = 10) -> None:
            super().__init__()
            self.stem = nn.Sequential(
                nn.Conv2d(3, 8, 7, 2, 3, bias=False), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(3, 2, 1)
            )
            self.layer1 = Block(8, 8, 1)
            self.layer2 = Block(8, 16, 2)
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(16, classes)

        def forward(self, x: Any) -> Any:
            x = self.layer2(self.layer1(self.stem(x)))
            return self.fc(torch.flatten(self.pool(x), 1))

    return ResNet()


def _unet() -> Any:
    torch = _torch()
    nn = torch.nn

    def conv(cin: int, cout: int) -> Any:
        return nn.Sequential(
            nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(), nn.Conv2d(cout, cout, 3, padding=1)
        )

    class UNet(nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.e1, self.e2 = conv(1, 8), conv(8, 16)
            self.mid = conv(16, 32)
            self.up2, self.d2 = nn.ConvTranspose2d(32, 16, 2, 2), conv(32, 16)
            self.up1, self.d1 = nn.ConvTranspose2d(16, 8, 2, 2), conv(16, 8)
            self.out = nn.Conv2d(8, 2, 1)
            self.pool = nn.MaxPool2d(2)

        def forward(self, x: Any) -> Any:
            e1 = self.e1(x)
            e2 = self.e2(self.pool(e1))
            m = self.mid(self.pool(e2))
            d2 = self.d2(torch.cat([self.up2(m), e2], dim=1))
            d1 = self.d1(torch.cat([self.up1(d2), e1], dim=1))
            return self.out(d1)

    return UNet()


@dataclass(frozen=True)
class ModelSpec:
    """A model: how to build it, its example inputs per size, the dynamic axes' names."""

    name: str
    build: Callable[[], Any]
    inputs: Callable[[dict[str, int]], list[np.ndarray[Any, Any]]]
    input_names: tuple[str, ...]
    dynamic: dict[str, dict[int, str]]
    sizes: tuple[dict[str, int], ...]


def _ids(s: dict[str, int]) -> list[np.ndarray[Any, Any]]:
    return [np.random.default_rng(0).integers(0, 50, (s["batch"], s["seq"])).astype(np.int64)]


def _bert_inputs(s: dict[str, int]) -> list[np.ndarray[Any, Any]]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((s["batch"], s["seq"], 32)).astype(np.float32)
    return [x, np.ones((s["batch"], s["seq"]), dtype=np.float32)]


def _image(c: int) -> Callable[[dict[str, int]], list[np.ndarray[Any, Any]]]:
    def make(s: dict[str, int]) -> list[np.ndarray[Any, Any]]:
        rng = np.random.default_rng(0)
        return [rng.standard_normal((s["batch"], c, s["height"], s["width"])).astype(np.float32)]

    return make


_IMG = {0: "batch", 2: "height", 3: "width"}
MODELS: tuple[ModelSpec, ...] = (
    ModelSpec(
        "gpt_block",
        _gpt_block,
        _ids,
        ("idx",),
        {"idx": {0: "batch", 1: "seq"}},
        ({"batch": 1, "seq": 5}, {"batch": 2, "seq": 9}, {"batch": 3, "seq": 16}),
    ),
    ModelSpec(
        "bert_layer",
        _bert_layer,
        _bert_inputs,
        ("x", "mask"),
        {"x": {0: "batch", 1: "seq"}, "mask": {0: "batch", 1: "seq"}},
        ({"batch": 1, "seq": 5}, {"batch": 2, "seq": 12}, {"batch": 4, "seq": 7}),
    ),
    ModelSpec(
        "resnet",
        _resnet,
        _image(3),
        ("x",),
        {"x": _IMG},
        ({"batch": 1, "height": 32, "width": 32}, {"batch": 2, "height": 45, "width": 61}),
    ),
    ModelSpec(
        "unet",
        _unet,
        _image(1),
        ("x",),
        {"x": _IMG},
        ({"batch": 1, "height": 16, "width": 16}, {"batch": 2, "height": 32, "width": 24}),
    ),
)


def build(spec: ModelSpec) -> Any:
    torch = _torch()
    torch.manual_seed(0)
    return spec.build().eval()


def export(spec: ModelSpec, directory: str) -> str:
    """Export ``spec``'s model to ``directory``; the path of the ``.onnx`` file."""
    torch = _torch()
    model = build(spec)
    example = [torch.from_numpy(a) for a in spec.inputs(spec.sizes[0])]
    path = os.path.join(directory, f"{spec.name}.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model,
            tuple(example),
            path,
            dynamo=False,
            input_names=list(spec.input_names),
            output_names=["output"],
            dynamic_axes=spec.dynamic,
            opset_version=17,
        )
    return path


def run_all_values(path: Any, feeds: dict[str, np.ndarray[Any, Any]]) -> dict[str, tuple[int, ...]]:
    """Every value's shape (inputs, initializers and node outputs) when onnxruntime runs the
    model (a path or a ``ModelProto``) on ``feeds``."""
    import onnx
    import onnxruntime as ort

    if isinstance(path, onnx.ModelProto):
        model = onnx.ModelProto()
        model.CopyFrom(path)
    else:
        model = onnx.load(path)
    g = model.graph
    known = {o.name for o in g.output}
    for n in g.node:
        for o in n.output:
            if o and o not in known:
                g.output.append(onnx.ValueInfoProto(name=o))
                known.add(o)
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    values = sess.run(names, feeds)
    shapes = {n: tuple(np.asarray(v).shape) for n, v in zip(names, values)}
    for k, v in feeds.items():
        shapes[k] = tuple(v.shape)
    for t in g.initializer:
        shapes[t.name] = tuple(int(d) for d in t.dims)
    return shapes
