"""A zoo of PyTorch models written by hand (no downloads, no torchvision), for the importer's
tests and benchmarks, with broken variants.

Each model is written the way such models are usually written (nanoGPT for GPT-2, the torchvision
layout for ResNet, ``nn.MultiheadAttention`` for the BERT layer, ...), in small sizes. The
broken variants change one line, marked ``# BROKEN``, and tests check that symshape reports it
there: a wrong ``in_features``, a reshape that loses elements, a skip connection with mismatched
channels.

``CASES`` describes each model for the tests: how to build it, the symshape types of its inputs,
concrete sizes to run it at, example inputs at those sizes, and ``torch.export`` dynamic dims.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F

import symshape as ss

__all__ = [
    "GPT2Block",
    "GPT2Stack",
    "BertLayer",
    "ResNet",
    "BasicBlock",
    "Bottleneck",
    "UNet",
    "LSTMTagger",
    "ViT",
    "resnet18",
    "resnet50",
    "gpt2_stack",
    "ZooCase",
    "CASES",
    "BROKEN",
    "case",
]


# -- GPT-2 (nanoGPT) ------------------------------------------------------------------------------


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd: int, n_head: int) -> None:
        super().__init__()
        assert n_embd % n_head == 0
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head = n_head
        self.n_embd = n_embd

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, n_embd: int, hidden: int | None = None) -> None:
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(hidden or 4 * n_embd, n_embd)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c_proj(self.gelu(self.c_fc(x)))


class GPT2Block(nn.Module):
    """A nanoGPT block: pre-norm causal self-attention and MLP with residuals."""

    def __init__(self, n_embd: int = 32, n_head: int = 4, mlp_hidden: int | None = None) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = MLP(n_embd, mlp_hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT2Stack(nn.Module):
    """Token and position embeddings, ``n_layer`` blocks, final norm, LM head (nanoGPT's GPT)."""

    def __init__(
        self,
        n_layer: int = 12,
        n_embd: int = 768,
        n_head: int = 12,
        vocab: int = 50304,
        block_size: int = 1024,
    ) -> None:
        super().__init__()
        self.wte = nn.Embedding(vocab, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.h = nn.ModuleList([GPT2Block(n_embd, n_head) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab, bias=False)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        _, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def gpt2_stack(n_layer: int = 12, n_embd: int = 768, n_head: int = 12) -> GPT2Stack:
    """The benchmark's 12-layer GPT-2 (small) stack."""
    return GPT2Stack(n_layer, n_embd, n_head)


# -- BERT encoder layer ---------------------------------------------------------------------------


class BertLayer(nn.Module):
    """A post-norm BERT encoder layer with ``nn.MultiheadAttention`` and a GELU feed-forward."""

    def __init__(self, d: int = 32, heads: int = 4, ff: int = 64, ff_in: int | None = None) -> None:
        super().__init__()
        self.attention = nn.MultiheadAttention(d, heads, batch_first=True)
        self.norm1 = nn.LayerNorm(d)
        self.intermediate = nn.Linear(d, ff)
        self.output = nn.Linear(ff_in or ff, d)
        self.norm2 = nn.LayerNorm(d)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        attn, _ = self.attention(x, x, x, key_padding_mask=mask)
        x = self.norm1(x + self.dropout(attn))
        h = F.gelu(self.intermediate(x))
        return self.norm2(x + self.dropout(self.output(h)))


# -- ResNet -------------------------------------------------------------------------------------


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(
        self, inplanes: int, planes: int, stride: int = 1, downsample: nn.Module | None = None
    ) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(
        self, inplanes: int, planes: int, stride: int = 1, downsample: nn.Module | None = None
    ) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class ResNet(nn.Module):
    """torchvision's ResNet layout, with a width factor."""

    def __init__(
        self,
        block: Any,
        layers: list[int],
        width: int = 64,
        num_classes: int = 10,
        skip_downsample_at: int | None = None,
    ) -> None:
        super().__init__()
        self.inplanes = width
        self.skip_downsample_at = skip_downsample_at
        self.conv1 = nn.Conv2d(3, width, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, width, layers[0], 1, 1)
        self.layer2 = self._make_layer(block, width * 2, layers[1], 2, 2)
        self.layer3 = self._make_layer(block, width * 4, layers[2], 2, 3)
        self.layer4 = self._make_layer(block, width * 8, layers[3], 2, 4)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(width * 8 * block.expansion, num_classes)

    def _make_layer(self, block: Any, planes: int, blocks: int, stride: int, index: int) -> nn.Sequential:
        downsample = None
        if (stride != 1 or self.inplanes != planes * block.expansion) and self.skip_downsample_at != index:
            downsample = nn.Sequential(
                nn.Conv2d(self.inplanes, planes * block.expansion, 1, stride, bias=False),
                nn.BatchNorm2d(planes * block.expansion),
            )
        layers = [block(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes))
        return nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer1(x)
        x = self.layer2(x)
        x = self.layer3(x)
        x = self.layer4(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        return self.fc(x)


def resnet18(width: int = 8, num_classes: int = 10, **kwargs: Any) -> ResNet:
    return ResNet(BasicBlock, [2, 2, 2, 2], width, num_classes, **kwargs)


def resnet50(width: int = 64, num_classes: int = 1000) -> ResNet:
    """The benchmark's ResNet-50 (torchvision's layers and widths)."""
    return ResNet(Bottleneck, [3, 4, 6, 3], width, num_classes)


class ResNetBadFlatten(ResNet):
    """A ResNet whose head reshapes the pooled features to the wrong size."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b = x.shape[0]
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = self.avgpool(x)
        x = x.reshape(b, 60)  # BROKEN: 64 features, 60 kept
        return self.fc(x)


# -- UNet ---------------------------------------------------------------------------------------


class DoubleConv(nn.Module):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(cin, cout, 3, padding=1),
            nn.BatchNorm2d(cout),
            nn.ReLU(inplace=True),
            nn.Conv2d(cout, cout, 3, padding=1),
            nn.BatchNorm2d(cout),
            nn.ReLU(inplace=True),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class UNet(nn.Module):
    """A three-level UNet: max-pool down, transposed-convolution up, concatenated skips."""

    def __init__(self, cin: int = 3, classes: int = 2, w: int = 8, bad_skip: bool = False) -> None:
        super().__init__()
        self.inc = DoubleConv(cin, w)
        self.down1 = DoubleConv(w, 2 * w)
        self.down2 = DoubleConv(2 * w, 4 * w)
        self.up1 = nn.ConvTranspose2d(4 * w, 2 * w, 2, stride=2)
        self.conv1 = DoubleConv(4 * w if not bad_skip else 3 * w, 2 * w)
        self.up2 = nn.ConvTranspose2d(2 * w, w, 2, stride=2)
        self.conv2 = DoubleConv(2 * w, w)
        self.outc = nn.Conv2d(w, classes, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x1 = self.inc(x)
        x2 = self.down1(F.max_pool2d(x1, 2))
        x3 = self.down2(F.max_pool2d(x2, 2))
        y = self.conv1(torch.cat([self.up1(x3), x2], dim=1))
        y = self.conv2(torch.cat([self.up2(y), x1], dim=1))
        return self.outc(y)


# -- LSTM tagger --------------------------------------------------------------------------------


class LSTMTagger(nn.Module):
    """Embedding, a bidirectional LSTM, a linear tag classifier."""

    def __init__(
        self, vocab: int = 100, emb: int = 16, hidden: int = 24, tags: int = 5, head_in: int | None = None
    ) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, batch_first=True, bidirectional=True)
        self.hidden2tag = nn.Linear(head_in or 2 * hidden, tags)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        embeds = self.embedding(tokens)
        out, _ = self.lstm(embeds)
        return F.log_softmax(self.hidden2tag(out), dim=-1)


# -- ViT ----------------------------------------------------------------------------------------


class ViT(nn.Module):
    """Patch embedding (a strided convolution), class token, learned positions, a transformer
    encoder of ``nn.TransformerEncoderLayer``, and a classification head on the class token."""

    def __init__(
        self,
        image: int = 32,
        patch: int = 8,
        dim: int = 32,
        depth: int = 2,
        heads: int = 4,
        classes: int = 10,
        bad_patches: bool = False,
    ) -> None:
        super().__init__()
        self.num_patches = (image // patch) ** 2
        self.dim = dim
        self.bad_patches = bad_patches
        self.patch_embed = nn.Conv2d(3, dim, patch, stride=patch)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, self.num_patches + 1, dim))
        layer = nn.TransformerEncoderLayer(
            dim, heads, 2 * dim, dropout=0.0, batch_first=True, norm_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B = x.shape[0]
        x = self.patch_embed(x)
        if self.bad_patches:
            x = x.reshape(B, self.dim, self.num_patches - 1)  # BROKEN: loses a patch
        else:
            x = x.flatten(2)
        x = x.transpose(1, 2)
        cls = self.cls_token.expand(B, -1, -1)
        x = torch.cat([cls, x], dim=1) + self.pos_embed
        x = self.norm(self.encoder(x))
        return self.head(x[:, 0])


# -- the cases ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ZooCase:
    """One model for the tests (see the module docstring)."""

    name: str
    build: Callable[[], nn.Module]
    types: Callable[[], dict[str, ss.Type]]
    sizes: tuple[dict[str, int], ...]
    example: Callable[[dict[str, int]], dict[str, torch.Tensor]]
    dynamic: dict[str, dict[int, str]] = field(default_factory=dict)
    broken_line: str = ""  # a text the primary error line of a broken variant contains
    broken_note: str = ""  # a text one of its notes' lines contains


def _seq_types(d: int) -> Callable[[], dict[str, ss.Type]]:
    def types() -> dict[str, ss.Type]:
        b, t = ss.dims("b t")
        return {"x": ss.Tensor((b, t, d), "float32")}

    return types


def _bert_types() -> dict[str, ss.Type]:
    b, t = ss.dims("b t")
    return {"x": ss.Tensor((b, t, 32), "float32"), "mask": ss.Tensor((b, t), "bool")}


def _image_types(size: int | None = None) -> Callable[[], dict[str, ss.Type]]:
    def types() -> dict[str, ss.Type]:
        b, h, w = ss.dims("b h w")
        if size is not None:
            return {"x": ss.Tensor((b, 3, size, size), "float32")}
        return {"x": ss.Tensor((b, 3, h, w), "float32")}

    return types


def _tokens_types() -> dict[str, ss.Type]:
    b, t = ss.dims("b t")
    return {"tokens": ss.Tensor((b, t), "int64")}


def _seq_example(d: int) -> Callable[[dict[str, int]], dict[str, torch.Tensor]]:
    def ex(s: dict[str, int]) -> dict[str, torch.Tensor]:
        return {"x": torch.randn(s["b"], s["t"], d)}

    return ex


def _bert_example(s: dict[str, int]) -> dict[str, torch.Tensor]:
    mask = torch.zeros(s["b"], s["t"], dtype=torch.bool)
    return {"x": torch.randn(s["b"], s["t"], 32), "mask": mask}


def _image_example(size: int | None = None) -> Callable[[dict[str, int]], dict[str, torch.Tensor]]:
    def ex(s: dict[str, int]) -> dict[str, torch.Tensor]:
        h = size or s["h"]
        w = size or s["w"]
        return {"x": torch.randn(s["b"], 3, h, w)}

    return ex


def _tokens_example(s: dict[str, int]) -> dict[str, torch.Tensor]:
    return {"tokens": torch.randint(0, 100, (s["b"], s["t"]))}


CASES: dict[str, ZooCase] = {
    c.name: c
    for c in (
        ZooCase(
            "gpt2_block",
            GPT2Block,
            _seq_types(32),
            ({"b": 2, "t": 5}, {"b": 1, "t": 7}),
            _seq_example(32),
            {"x": {0: "b", 1: "t"}},
        ),
        ZooCase(
            "bert_layer",
            BertLayer,
            _bert_types,
            ({"b": 2, "t": 5}, {"b": 3, "t": 9}),
            _bert_example,
            {"x": {0: "b", 1: "t"}, "mask": {0: "b", 1: "t"}},
        ),
        ZooCase(
            "resnet18",
            resnet18,
            _image_types(),
            ({"b": 2, "h": 32, "w": 32}, {"b": 1, "h": 45, "w": 61}),
            _image_example(),
            {"x": {0: "b", 2: "h", 3: "w"}},
        ),
        ZooCase(
            "unet",
            UNet,
            _image_types(),
            ({"b": 2, "h": 16, "w": 24}, {"b": 1, "h": 32, "w": 8}),
            _image_example(),
            {"x": {0: "b", 2: "h", 3: "w"}},
        ),
        ZooCase(
            "lstm_tagger",
            LSTMTagger,
            _tokens_types,
            ({"b": 2, "t": 5}, {"b": 3, "t": 11}),
            _tokens_example,
            {"tokens": {0: "b", 1: "t"}},
        ),
        ZooCase("vit", ViT, _image_types(32), ({"b": 2}, {"b": 3}), _image_example(32), {"x": {0: "b"}}),
    )
}

BROKEN: dict[str, ZooCase] = {
    c.name: c
    for c in (
        ZooCase(
            "gpt2_block",
            lambda: GPT2Block(mlp_hidden=96),
            _seq_types(32),
            (),
            _seq_example(32),
            broken_line="self.c_proj(self.gelu",
            broken_note="self.c_proj = nn.Linear(hidden",
        ),
        ZooCase(
            "bert_layer",
            lambda: BertLayer(ff_in=48),
            _bert_types,
            (),
            _bert_example,
            broken_line="self.output(h)",
            broken_note="self.output = nn.Linear",
        ),
        ZooCase(
            "resnet18",
            lambda: resnet18(skip_downsample_at=2),
            _image_types(),
            (),
            _image_example(),
            broken_line="out += identity",
            broken_note="self.conv1(x)",
        ),
        ZooCase(
            "resnet18_flatten",
            lambda: ResNetBadFlatten(BasicBlock, [2, 2, 2, 2], 8),
            _image_types(),
            (),
            _image_example(),
            broken_line="x.reshape(b, 60)",
            broken_note="self.conv1(x)",
        ),
        ZooCase(
            "unet",
            lambda: UNet(bad_skip=True),
            _image_types(),
            (),
            _image_example(),
            # the conflicting convolution is the first of DoubleConv's (its innermost user line);
            # a note shows the concatenation in UNet.forward that feeds it
            broken_line="return self.net(x)",
            broken_note="self.conv1(torch.cat",
        ),
        ZooCase(
            "lstm_tagger",
            lambda: LSTMTagger(head_in=24),
            _tokens_types,
            (),
            _tokens_example,
            broken_line="self.hidden2tag(out)",
            broken_note="self.hidden2tag = nn.Linear",
        ),
        ZooCase(
            "vit",
            lambda: ViT(bad_patches=True),
            _image_types(32),
            (),
            _image_example(32),
            broken_line="x.reshape(B, self.dim",
            broken_note="self.patch_embed = nn.Conv2d",
        ),
    )
}


def case(name: str) -> ZooCase:
    return CASES[name]


_ = math
