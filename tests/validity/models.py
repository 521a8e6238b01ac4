"""Models whose valid sizes are a real question, with grids of sizes to decide them on.

Each :class:`GridCase` names a model (written by hand, or built from the torch zoo in small
sizes), its symbolic input types, how to build inputs at concrete sizes, the grid of sizes, and the
dynamic dims for ``torch.export``. What decides whether a point is valid is eager torch: the model
runs there, or it raises. The models are chosen so that the answer has a shape worth stating:

* ``gpt2`` (nanoGPT: ``wpe(arange(t))``, 24 positions): valid iff ``t <= 24`` — an index bound;
* ``bert_emb`` (HF style: a ``position_ids`` buffer sliced ``[:, :t]``, 20 positions): valid iff
  ``t <= 20`` — a slice that silently shortens, then a broadcast that fails;
* ``transformer_lm`` (``nn.TransformerEncoder``, learned positions ``pos[:, :t]``, 16): ``t <= 16``;
* ``unet`` (two max-pool levels, transposed convolutions, concatenated skips): valid iff
  ``h % 4 == 0 and w % 4 == 0``;
* ``vit`` (8x8 patches, 16 positions + class token): valid iff ``(h//8)*(w//8) == 16``;
* ``resnet18`` (adaptive pooling): valid at every size;
* ``lstm_tagger``: valid at every length;
* ``hf_gpt2``, ``hf_bert``, ``hf_llama`` (transformers' models from tiny configs, no download;
  when transformers is installed): GPT-2 with 24 positions, BERT with 20, Llama (rotary
  positions, no table). They do not trace with torch.fx; symshape imports their
  ``torch.export`` graphs (``trace="export"``).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.nn as nn

import symshape as ss
from torch_zoo.models import GPT2Stack, LSTMTagger, UNet, ViT, resnet18

__all__ = [
    "GridCase", "GRID_CASES", "BertEmbeddingsEncoder", "TransformerLM", "hf_bert", "hf_gpt2", "hf_llama",
]  # fmt: skip


class BertEmbeddingsEncoder(nn.Module):
    """HF BERT's embeddings (word + ``position_ids[:, :t]`` + token type, LayerNorm) and one
    encoder layer."""

    def __init__(self, vocab: int = 100, dim: int = 32, max_pos: int = 20) -> None:
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, dim)
        self.position_embeddings = nn.Embedding(max_pos, dim)
        self.token_type_embeddings = nn.Embedding(2, dim)
        self.LayerNorm = nn.LayerNorm(dim)
        self.register_buffer("position_ids", torch.arange(max_pos).expand((1, -1)), persistent=False)
        self.register_buffer("token_type_ids", torch.zeros((1, max_pos), dtype=torch.long), persistent=False)
        self.layer = nn.TransformerEncoderLayer(dim, 4, 2 * dim, dropout=0.0, batch_first=True)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        t = input_ids.size(1)
        position_ids = self.position_ids[:, :t]
        token_type_ids = self.token_type_ids[:, :t]
        x = self.word_embeddings(input_ids)
        x = x + self.token_type_embeddings(token_type_ids) + self.position_embeddings(position_ids)
        return self.layer(self.LayerNorm(x))


class TransformerLM(nn.Module):
    """Token embedding, learned positions ``pos[:, :t]``, ``nn.TransformerEncoder``, LM head."""

    def __init__(self, vocab: int = 100, dim: int = 32, max_len: int = 16) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.zeros(1, max_len, dim))
        layer = nn.TransformerEncoderLayer(dim, 4, 2 * dim, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        t = tokens.shape[1]
        x = self.embed(tokens) + self.pos[:, :t]
        return self.head(self.encoder(x))


@dataclass(frozen=True)
class GridCase:
    """One model and the grid of sizes it is decided on (see the module docstring)."""

    name: str
    build: Callable[[], nn.Module]
    symbols: str  # the symbols' names, in the order of a grid point's keys
    types: Callable[[dict[str, ss.Dim]], dict[str, ss.Type]]
    example: Callable[[dict[str, int]], dict[str, torch.Tensor]]
    grid: tuple[dict[str, int], ...]
    dynamic: dict[str, dict[int, str]] = field(default_factory=dict)
    culprit: str = ""  # a text the explanation of an invalid point names (the layer at fault)
    # how symshape gets the graph: "fx" (``sst.infer(model, ...)`` traces it with torch.fx) or
    # "export" (``torch.export`` with the dynamic dims ``Dim.DYNAMIC`` at the grid's fairest
    # example point, the ExportedProgram imported: transformers' models do not fx-trace)
    trace: str = "fx"


VOCAB = 100


def _tokens(name: str) -> Callable[[dict[str, ss.Dim]], dict[str, ss.Type]]:
    """Token ids ``(b, t)``, declared in ``[0, VOCAB - 1]`` where the front-end allows it."""

    def types(s: dict[str, ss.Dim]) -> dict[str, ss.Type]:
        return {name: ss.Tensor((s["b"], s["t"]), "int64")}

    return types


def _tokens_at(name: str) -> Callable[[dict[str, int]], dict[str, torch.Tensor]]:
    def ex(p: dict[str, int]) -> dict[str, torch.Tensor]:
        g = torch.Generator().manual_seed(p["b"] * 1000 + p["t"])
        return {name: torch.randint(0, VOCAB, (p["b"], p["t"]), generator=g)}

    return ex


def _image(s: dict[str, ss.Dim]) -> dict[str, ss.Type]:
    return {"x": ss.Tensor((s["b"], 3, s["h"], s["w"]), "float32")}


def _image_at(p: dict[str, int]) -> dict[str, torch.Tensor]:
    return {"x": torch.randn(p["b"], 3, p["h"], p["w"])}


def _seq_grid(limit: int) -> tuple[dict[str, int], ...]:
    ts = sorted({*range(1, limit + 6), 2 * limit, 3 * limit + 1})
    return tuple({"b": b, "t": t} for b in (1, 2) for t in ts)


_SIDES = (1, 2, 3, 4, 7, 8, 12, 15, 16, 24, 31, 32, 33, 40)


def _image_grid(sides: tuple[int, ...] = _SIDES) -> tuple[dict[str, int], ...]:
    return tuple({"b": b, "h": h, "w": w} for b in (1, 2) for h in sides for w in sides if b == 1 or h == w)


def hf_gpt2() -> nn.Module:
    """transformers' ``GPT2LMHeadModel``, one layer, 24 positions (``wpe(position_ids)``)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(
        n_layer=1, n_embd=32, n_head=4, n_positions=24, vocab_size=VOCAB, bos_token_id=0,
        eos_token_id=0, use_cache=False, attn_implementation="eager",
    )  # fmt: skip
    return GPT2LMHeadModel(cfg)


def hf_bert() -> nn.Module:
    """transformers' ``BertModel``, one layer, 20 positions (``position_ids[:, :t]``)."""
    from transformers import BertConfig, BertModel

    cfg = BertConfig(
        vocab_size=VOCAB, hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
        intermediate_size=64, max_position_embeddings=20, use_cache=False, attn_implementation="eager",
    )  # fmt: skip
    return BertModel(cfg)


def hf_llama() -> nn.Module:
    """transformers' ``LlamaForCausalLM``, one layer, grouped-query attention, rotary positions
    computed from ``position_ids`` (no table: ``max_position_embeddings`` bounds nothing)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(
        vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=16, bos_token_id=0,
        eos_token_id=0, use_cache=False, attn_implementation="eager",
    )  # fmt: skip
    return LlamaForCausalLM(cfg)


def _hf_cases() -> tuple[GridCase, ...]:
    """The transformers models (when transformers is installed), imported from ``torch.export``."""
    if importlib.util.find_spec("transformers") is None:
        return ()
    from transformers.utils import logging

    logging.set_verbosity_error()
    ids = {"input_ids": {0: "b", 1: "t"}}
    types, at = _tokens("input_ids"), _tokens_at("input_ids")
    return (
        GridCase("hf_gpt2", hf_gpt2, "b t", types, at, _seq_grid(24), ids, culprit="wpe", trace="export"),
        GridCase("hf_bert", hf_bert, "b t", types, at, _seq_grid(20), ids, culprit="expand", trace="export"),
        GridCase("hf_llama", hf_llama, "b t", types, at, _seq_grid(16), ids, trace="export"),
    )


GRID_CASES: dict[str, GridCase] = {
    c.name: c
    for c in (
        GridCase(
            "gpt2",
            lambda: GPT2Stack(n_layer=1, n_embd=32, n_head=4, vocab=VOCAB, block_size=24),
            "b t",
            _tokens("idx"),
            _tokens_at("idx"),
            _seq_grid(24),
            {"idx": {0: "b", 1: "t"}},
            culprit="wpe",
        ),
        GridCase(
            "bert_emb",
            BertEmbeddingsEncoder,
            "b t",
            _tokens("input_ids"),
            _tokens_at("input_ids"),
            _seq_grid(20),
            {"input_ids": {0: "b", 1: "t"}},
            culprit="position",
        ),
        GridCase(
            "transformer_lm",
            TransformerLM,
            "b t",
            _tokens("tokens"),
            _tokens_at("tokens"),
            _seq_grid(16),
            {"tokens": {0: "b", 1: "t"}},
            culprit="pos",
        ),
        GridCase(
            "unet",
            lambda: UNet(w=4),
            "b h w",
            _image,
            _image_at,
            _image_grid(),
            {"x": {0: "b", 2: "h", 3: "w"}},
            culprit="cat",
        ),
        GridCase(
            "vit",
            lambda: ViT(dim=16, depth=1),
            "b h w",
            _image,
            _image_at,
            _image_grid((*_SIDES, 64, 128)),
            {"x": {0: "b", 2: "h", 3: "w"}},
            culprit="pos_embed",
        ),
        GridCase(
            "resnet18",
            lambda: resnet18(width=4),
            "b h w",
            _image,
            _image_at,
            _image_grid(),
            {"x": {0: "b", 2: "h", 3: "w"}},
        ),
        GridCase(
            "lstm_tagger",
            LSTMTagger,
            "b t",
            _tokens("tokens"),
            _tokens_at("tokens"),
            _seq_grid(8),
            {"tokens": {0: "b", 1: "t"}},
        ),
        *_hf_cases(),
    )
}
