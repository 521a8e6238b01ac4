"""More transformers architectures (tiny configs, no download) for the exported-model oracle.

The specs of :mod:`hf_models` cover GPT-2, BERT, RoBERTa, OPT, DistilBERT, Llama, Qwen2, Gemma2,
GPT-NeoX, DeBERTa, CLIP text, T5, BART, ViT and Wav2Vec2. These add what users meet beside them:
speech front-ends (Whisper's convolutions against a fixed position table, Speech2Text's strided
subsampler, HuBERT), decoders with other attention layouts (Mistral's sliding window with a
symbolic KV-cache length, Phi's partial rotary, Phi-3's fused projections, Falcon's multi-query
attention, BLOOM's ALiBi, GPT-J, GPT-BigCode), vision models that pad and split (Swin's windows
and patch merging, BEiT's relative position bias, ConvNeXt, SegFormer's overlapping patches), and
text encoders with other position schemes (Funnel's pooling, MPNet's relative buckets, ALBERT,
M2M100's sinusoidal table). Each spec's sizes sit on both sides of every limit the model has.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from hf_models import (
    _DECODER,
    _EAGER,
    _KV,
    _SEQ2SEQ,
    _TOK,
    VOCAB,
    HFSpec,
    _audio,
    _decoding,
    _pixels,
    _seq_sizes,
    _tokens,
)

__all__ = ["MORE_MODELS", "more_spec"]

_Arrays = dict[str, np.ndarray[Any, Any]]
_PIX = {0: "batch", 2: "height", 3: "width"}


def _speech(mel: int) -> Callable[[Mapping[str, int]], _Arrays]:
    """Speech2Text's inputs: features (batch, frames, mel), their mask, decoder ids (batch, dec)."""

    def make(s: Mapping[str, int]) -> _Arrays:
        rng = np.random.default_rng(0)
        b = s["batch"]
        return {
            "input_features": rng.standard_normal((b, s["frames"], mel)).astype(np.float32),
            "attention_mask": np.ones((b, s["frames"]), dtype=np.int64),
            "decoder_input_ids": rng.integers(1, VOCAB, (b, s["dec"])).astype(np.int64),
        }

    return make


def _whisper(mel: int) -> Callable[[Mapping[str, int]], _Arrays]:
    """Whisper's inputs: features (batch, mel, frames), decoder ids and their mask (batch, dec) (a
    mask keeps transformers from its packed-sequence check, ``torch.diff``, which the TorchScript
    exporter cannot write)."""

    def make(s: Mapping[str, int]) -> _Arrays:
        rng = np.random.default_rng(0)
        b = s["batch"]
        return {
            "input_features": rng.standard_normal((b, mel, s["frames"])).astype(np.float32),
            "decoder_input_ids": rng.integers(1, VOCAB, (b, s["dec"])).astype(np.int64),
            "decoder_attention_mask": np.ones((b, s["dec"]), dtype=np.int64),
        }

    return make


_TEXT = {"vocab_size": VOCAB, "hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 4,
         "intermediate_size": 64, "max_position_embeddings": 20, **_EAGER}  # fmt: skip
_SEQ2SEQ_SMALL = {"vocab_size": VOCAB, "d_model": 32, "encoder_layers": 1, "decoder_layers": 1,
                  "encoder_attention_heads": 4, "decoder_attention_heads": 4, "encoder_ffn_dim": 64,
                  "decoder_ffn_dim": 64, "use_cache": False, **_EAGER}  # fmt: skip
_CAUSAL = {"bos_token_id": 0, "eos_token_id": 0, "use_cache": False, **_EAGER}
_IMAGES = (
    {"batch": 1, "height": 32, "width": 32}, {"batch": 2, "height": 20, "width": 36},
    {"batch": 1, "height": 9, "width": 13}, {"batch": 3, "height": 16, "width": 8},
)  # fmt: skip

MORE_MODELS: tuple[HFSpec, ...] = (
    HFSpec(
        # conv1 (stride 1) and conv2 (stride 2, padding 1) make (frames - 1)//2 + 1 positions,
        # added to the 12-row table: 12 of them, or 1 (broadcast): frames in {1, 2, 23, 24}
        "whisper", "WhisperModel", "WhisperConfig",
        {**_SEQ2SEQ_SMALL, "num_mel_bins": 8, "max_source_positions": 12, "max_target_positions": 16,
         "pad_token_id": 0, "bos_token_id": 0, "eos_token_id": 0, "decoder_start_token_id": 0},
        "last_hidden_state",
        {"input_features": {0: "batch", 2: "frames"}, "decoder_input_ids": {0: "batch", 1: "dec"},
         "decoder_attention_mask": {0: "batch", 1: "dec"}},
        ({"batch": 1, "frames": 24, "dec": 1}, {"batch": 2, "frames": 24, "dec": 3},
         {"batch": 1, "frames": 23, "dec": 16}, {"batch": 3, "frames": 24, "dec": 17},
         {"batch": 1, "frames": 25, "dec": 2}, {"batch": 1, "frames": 22, "dec": 2},
         {"batch": 2, "frames": 1, "dec": 2}, {"batch": 1, "frames": 2, "dec": 1},
         {"batch": 1, "frames": 3, "dec": 1}),
        _whisper(8),
    ),
    HFSpec(
        # two stride-2 convolutions: (frames - 1)//4 + 1 positions in a 64 + 2 row table
        "speech2text", "Speech2TextModel", "Speech2TextConfig",
        {**_SEQ2SEQ_SMALL, "max_source_positions": 64, "max_target_positions": 20, "num_conv_layers": 2,
         "conv_channels": 16, "input_feat_per_channel": 8, "input_channels": 1, "conv_kernel_sizes": (5, 5),
         "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2, "decoder_start_token_id": 0},
        "last_hidden_state",
        {"input_features": {0: "batch", 1: "frames"}, "attention_mask": {0: "batch", 1: "frames"},
         "decoder_input_ids": {0: "batch", 1: "dec"}},
        ({"batch": 1, "frames": 1, "dec": 1}, {"batch": 2, "frames": 13, "dec": 3},
         {"batch": 1, "frames": 40, "dec": 20}, {"batch": 3, "frames": 7, "dec": 5},
         {"batch": 1, "frames": 256, "dec": 2}, {"batch": 1, "frames": 257, "dec": 2},
         {"batch": 1, "frames": 9, "dec": 21}),
        _speech(8),
    ),
    HFSpec(
        "hubert", "HubertModel", "HubertConfig",
        {"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 4, "intermediate_size": 64,
         "conv_dim": (16, 16), "conv_stride": (5, 2), "conv_kernel": (10, 3), "num_conv_pos_embeddings": 8,
         "num_conv_pos_embedding_groups": 4, "feat_extract_norm": "layer", "do_stable_layer_norm": True,
         **_EAGER},
        "last_hidden_state", {"input_values": {0: "batch", 1: "samples"}},
        ({"batch": 1, "samples": 400}, {"batch": 2, "samples": 101}, {"batch": 1, "samples": 20},
         {"batch": 1, "samples": 19}, {"batch": 3, "samples": 15}),
        _audio,
    ),
    HFSpec(
        "mistral", "MistralForCausalLM", "MistralConfig",
        {**_DECODER, "max_position_embeddings": 16, "sliding_window": 4},
        "logits", _TOK, _seq_sizes(16), _tokens(),
    ),
    HFSpec(
        "mistral_kv", "MistralForCausalLM", "MistralConfig",
        {**_DECODER, "max_position_embeddings": 16, "sliding_window": 4, "use_cache": True},
        "logits", _KV,
        # the mask may be longer than past + seq, not shorter
        ({"batch": 1, "seq": 1, "past": 1, "total": 2}, {"batch": 2, "seq": 3, "past": 4, "total": 7},
         {"batch": 1, "seq": 2, "past": 30, "total": 32}, {"batch": 2, "seq": 3, "past": 4, "total": 9},
         {"batch": 2, "seq": 3, "past": 4, "total": 6}, {"batch": 1, "seq": 5, "past": 3, "total": 8}),
        _decoding(2, 8), cache=True,
    ),
    HFSpec(
        "phi", "PhiForCausalLM", "PhiConfig",
        {**_DECODER, "num_key_value_heads": 4, "max_position_embeddings": 16, "partial_rotary_factor": 0.5},
        "logits", _TOK, _seq_sizes(16), _tokens(),
    ),
    HFSpec(
        "phi3", "Phi3ForCausalLM", "Phi3Config", {**_DECODER, "max_position_embeddings": 16},
        "logits", _TOK, _seq_sizes(16), _tokens(),
    ),
    HFSpec(
        "falcon", "FalconForCausalLM", "FalconConfig",
        {"vocab_size": VOCAB, "hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 4,
         "multi_query": True, "alibi": False, "new_decoder_architecture": False, "parallel_attn": True,
         "bias": False, "max_position_embeddings": 16, **_CAUSAL},
        "logits", _TOK, _seq_sizes(16), _tokens(),
    ),
    HFSpec(
        "bloom", "BloomForCausalLM", "BloomConfig",
        {"vocab_size": VOCAB, "hidden_size": 32, "n_layer": 1, "n_head": 4, **_CAUSAL},
        "logits", _TOK, _seq_sizes(16), _tokens(),
    ),
    HFSpec(
        "gptj", "GPTJForCausalLM", "GPTJConfig",
        {"vocab_size": VOCAB, "n_embd": 32, "n_layer": 1, "n_head": 4, "rotary_dim": 4, "n_positions": 16,
         **_CAUSAL},
        "logits", _TOK, _seq_sizes(16), _tokens(),
    ),
    HFSpec(
        "gpt_bigcode", "GPTBigCodeForCausalLM", "GPTBigCodeConfig",
        {"vocab_size": VOCAB, "n_embd": 32, "n_layer": 1, "n_head": 4, "n_positions": 16, "multi_query": True,
         **_CAUSAL},
        "logits", _TOK, _seq_sizes(16), _tokens(),
    ),
    HFSpec(
        # windows of 4 over the patches (padded to a multiple of 4), then patch merging of 2x2
        # patches: the TorchScript export keeps the branch of its even example (no padding before
        # the merge), so height//2 (and width//2) must be even
        "swin", "SwinModel", "SwinConfig",
        {"image_size": 32, "patch_size": 2, "embed_dim": 8, "depths": [1, 1], "num_heads": [2, 2],
         "window_size": 4, **_EAGER},
        "last_hidden_state", {"pixel_values": _PIX},
        (*_IMAGES, {"batch": 1, "height": 6, "width": 8}, {"batch": 1, "height": 4, "width": 4},
         {"batch": 1, "height": 8, "width": 7}),
        _pixels,
    ),
    HFSpec(
        "beit", "BeitModel", "BeitConfig",
        {"vocab_size": VOCAB, "hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 4,
         "intermediate_size": 64, "image_size": 16, "patch_size": 4, "use_relative_position_bias": True,
         **_EAGER},
        "last_hidden_state", {"pixel_values": _PIX},
        ({"batch": 1, "height": 16, "width": 16}, {"batch": 2, "height": 16, "width": 19},
         {"batch": 1, "height": 8, "width": 8}, {"batch": 1, "height": 4, "width": 64},
         {"batch": 2, "height": 3, "width": 16}),
        _pixels,
    ),
    HFSpec(
        "convnext", "ConvNextModel", "ConvNextConfig",
        {"num_channels": 3, "num_stages": 2, "hidden_sizes": [8, 16], "depths": [1, 1], "patch_size": 4},
        "last_hidden_state", {"pixel_values": _PIX},
        (*_IMAGES, {"batch": 1, "height": 8, "width": 8}, {"batch": 3, "height": 7, "width": 8}),
        _pixels,
    ),
    HFSpec(
        "segformer", "SegformerModel", "SegformerConfig",
        {"num_encoder_blocks": 2, "depths": [1, 1], "sr_ratios": [2, 1], "hidden_sizes": [8, 16],
         "patch_sizes": [7, 3], "strides": [4, 2], "num_attention_heads": [1, 2], "mlp_ratios": [2, 2],
         **_EAGER},
        "last_hidden_state", {"pixel_values": _PIX},
        (*_IMAGES, {"batch": 1, "height": 5, "width": 5}, {"batch": 1, "height": 4, "width": 9}),
        _pixels,
    ),
    HFSpec(
        # the TorchScript export keeps the example's pooling branches: 3 <= seq <= 9
        "funnel", "FunnelBaseModel", "FunnelConfig",
        {"vocab_size": VOCAB, "block_sizes": [1, 1], "d_model": 32, "n_head": 4, "d_head": 8, "d_inner": 64,
         **_EAGER},
        "last_hidden_state", _TOK,
        ({"batch": 1, "seq": 1}, {"batch": 2, "seq": 5}, {"batch": 3, "seq": 8}, {"batch": 1, "seq": 20},
         {"batch": 2, "seq": 2}, {"batch": 1, "seq": 3}, {"batch": 1, "seq": 9}, {"batch": 2, "seq": 10}),
        _tokens(),
    ),
    HFSpec("mpnet", "MPNetModel", "MPNetConfig", _TEXT, "last_hidden_state", _TOK, _seq_sizes(18), _tokens()),
    HFSpec(
        "albert", "AlbertModel", "AlbertConfig", {**_TEXT, "embedding_size": 16},
        "last_hidden_state", _TOK, _seq_sizes(20), _tokens(),
    ),
    HFSpec(
        "m2m100", "M2M100Model", "M2M100Config",
        {**_SEQ2SEQ_SMALL, "max_position_embeddings": 20, "pad_token_id": 1, "bos_token_id": 0,
         "eos_token_id": 2, "decoder_start_token_id": 2},
        "last_hidden_state", _SEQ2SEQ,
        ({"batch": 1, "seq": 1, "dec": 1}, {"batch": 2, "seq": 5, "dec": 3},
         {"batch": 1, "seq": 20, "dec": 20}, {"batch": 3, "seq": 9, "dec": 21},
         {"batch": 1, "seq": 21, "dec": 1}),
        _tokens("decoder_input_ids"),
    ),
    HFSpec(
        # pads the sequence to a multiple of the window (4) and reads chunks through index
        # arithmetic the TorchScript export froze (20 NonZero(ConstantOfShape) aranges among its
        # 2 900 nodes): it runs at batch >= 2 and 8 <= padded seq < 40 only, as the guards say
        # (onnxruntime agrees: index out of bounds at batch 1 and at 4 tokens). With padding 37 ..
        # 39 tokens to 40 rows of positions, symshape's guard refuses (the padded ids count as
        # tokens, not as pads, in its position bound) where onnxruntime runs: left out here
        "longformer", "LongformerModel", "LongformerConfig",
        {**_TEXT, "attention_window": 4, "max_position_embeddings": 40, "pad_token_id": 0},
        "last_hidden_state", _TOK,
        ({"batch": 1, "seq": 1}, {"batch": 2, "seq": 5}, {"batch": 3, "seq": 35}, {"batch": 1, "seq": 36},
         {"batch": 1, "seq": 40}, {"batch": 2, "seq": 4}, {"batch": 3, "seq": 12}, {"batch": 2, "seq": 36}),
        _tokens(),
    ),
    HFSpec(
        # unpadding is off (eager); local attention of window 4 through a sliding-window mask
        "modernbert", "ModernBertModel", "ModernBertConfig",
        {**_TEXT, "global_attn_every_n_layers": 1, "local_attention": 4, "pad_token_id": 0},
        "last_hidden_state", _TOK, _seq_sizes(20), _tokens(),
    ),
    HFSpec(
        # span-based dynamic convolution: an Unfold (Im2Col) of the sequence
        "convbert", "ConvBertModel", "ConvBertConfig",
        {**_TEXT, "conv_kernel_size": 3, "head_ratio": 2, "embedding_size": 32},
        "last_hidden_state", _TOK, _seq_sizes(20), _tokens(),
    ),
    HFSpec(
        # squeezes the frames by 2 (pooling) and upsamples back, padded to the frame count
        "sew", "SEWModel", "SEWConfig",
        {"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 4, "intermediate_size": 64,
         "conv_dim": (16, 16), "conv_stride": (5, 2), "conv_kernel": (10, 3), "num_conv_pos_embeddings": 8,
         "num_conv_pos_embedding_groups": 4, "squeeze_factor": 2, **_EAGER},
        "last_hidden_state", {"input_values": {0: "batch", 1: "samples"}},
        ({"batch": 1, "samples": 400}, {"batch": 2, "samples": 101}, {"batch": 1, "samples": 29},
         {"batch": 1, "samples": 30}, {"batch": 3, "samples": 15}, {"batch": 1, "samples": 37}),
        _audio,
    ),
    HFSpec(
        # gated relative position buckets over the frames
        "wavlm", "WavLMModel", "WavLMConfig",
        {"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 4, "intermediate_size": 64,
         "conv_dim": (16, 16), "conv_stride": (5, 2), "conv_kernel": (10, 3), "num_conv_pos_embeddings": 8,
         "num_conv_pos_embedding_groups": 4, "num_buckets": 8, "max_bucket_distance": 20, **_EAGER},
        "last_hidden_state", {"input_values": {0: "batch", 1: "samples"}},
        ({"batch": 1, "samples": 400}, {"batch": 2, "samples": 101}, {"batch": 1, "samples": 20},
         {"batch": 1, "samples": 19}, {"batch": 3, "samples": 15}),
        _audio,
    ),
    HFSpec(
        # a global and a local (window 4) attention layer
        "gpt_neo", "GPTNeoForCausalLM", "GPTNeoConfig",
        {"vocab_size": VOCAB, "hidden_size": 32, "num_layers": 2, "num_heads": 4,
         "attention_types": [[["global", "local"], 1]], "window_size": 4, "max_position_embeddings": 16,
         **_CAUSAL},
        "logits", _TOK, _seq_sizes(16), _tokens(),
    ),
    HFSpec(
        # unfolds 2x2 patches after padding the map to even sizes: int(ceil(h/2)*2), computed in
        # float; the TorchScript export keeps its example's no-interpolation branch, so each stage's
        # map must be even already
        "mobilevit", "MobileViTModel", "MobileViTConfig",
        {"image_size": 32, "patch_size": 2, "hidden_sizes": [16, 16, 16],
         "neck_hidden_sizes": [8, 8, 8, 16, 16, 16, 32], "num_attention_heads": 2, "mlp_ratio": 2.0},
        "last_hidden_state", {"pixel_values": _PIX},
        ({"batch": 1, "height": 32, "width": 32}, {"batch": 2, "height": 64, "width": 96},
         {"batch": 1, "height": 40, "width": 36}, {"batch": 1, "height": 33, "width": 65},
         {"batch": 3, "height": 16, "width": 16}, {"batch": 1, "height": 32, "width": 64}),
        _pixels,
    ),
)  # fmt: skip


def more_spec(name: str) -> HFSpec:
    return next(s for s in MORE_MODELS if s.name == name)
