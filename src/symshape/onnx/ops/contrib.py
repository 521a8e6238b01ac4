"""onnxruntime's contrib operators (domain ``com.microsoft``) that exported and optimized
transformer graphs use, as compositions of symshape operators.

The shapes follow onnxruntime's kernels (the oracle tests execute each node with onnxruntime at
several sizes, or with a numpy reference where onnxruntime has no CPU kernel):

* ``Gelu``, ``QuickGelu``: ``X``'s type. ``FastGelu(X, bias?)`` and ``BiasGelu(A, B)``: ``X``'s
  (``A``'s) type; the bias is ``(H,)`` for the last axis ``H`` (onnxruntime's check).
* ``SkipLayerNormalization(input, skip, gamma, beta?, bias?)`` and
  ``SkipSimplifiedLayerNormalization(input, skip, gamma, bias?)``: ``s = input + skip (+ bias)``
  (``skip`` is ``input``'s shape or broadcasts to it, e.g. ``(S, H)``); ``output`` and
  ``input_skip_bias_sum`` have ``input``'s type, ``mean`` and ``inv_std_var`` are ``input``'s shape
  with the last axis 1, float32; ``skip``'s last two axes are ``input``'s exactly,
  ``gamma``/``beta``/``bias`` are ``(H,)`` for its last axis ``H`` (onnxruntime's checks).
* ``FusedMatMul(A, B)``: ``matmul`` of ``A`` and ``B`` with their last two axes swapped when
  ``transA``/``transB`` (``transBatchA``/``transBatchB`` are not supported).
* ``BiasAdd(X, bias, skip)``: ``X``'s type (``bias`` and ``skip`` broadcast to it one way).
  ``BiasSoftmax(data, bias)``: ``data``'s type (``bias`` broadcast to it one way; CUDA kernels only
  in onnxruntime).
* ``Attention(input, weights, bias?, mask_index?, past?, attention_bias?, ...)`` with
  ``num_heads`` ``N``: the projection ``input @ weights (+ bias)`` ``(B, S, Hq+Hk+Hv)`` is split
  into Q, K, V (``qkv_hidden_sizes``, default three equal parts: a guard that the width is a
  multiple of 3); ``output`` ``(B, S, Hv)`` (heads: ``N`` divides ``Hv``); ``present``
  ``(2, B, N, P+S, Hk/N)`` with ``past`` ``(2, B, N, P, Hk/N)`` (only for equal K and V sizes).
  ``mask_index`` and ``attention_bias`` are not checked.
* ``MultiHeadAttention(query, key?, value?, bias?, key_padding_mask?, attention_bias?, past_key?,
  past_value?, ...)``: 3-d ``query (B, S, D)`` with 3-d ``key (B, L, D)``/``value (B, L, Dv)``
  (heads split, ``past_key``/``past_value`` ``(B, N, P, D/N)`` prepended) or 4-d ``key (B, N, L,
  D/N)``/``value`` (used as they are); packed ``query (B, S, N, 3, H)`` (no key/value) or packed
  ``key (B, L, N, 2, H)`` (no value). ``output`` ``(B, S, N*Hv)`` is computed as scaled dot-product
  attention per head (``matmul`` checks the head sizes and key/value lengths; the batch and heads
  of the key and value are the query's exactly, as onnxruntime checks);
  ``present_key``/``present_value`` are the keys and values ``(B, N, P+L, H)``.
* ``RotaryEmbedding(input, position_ids, cos_cache, sin_cache)``: ``input``'s type (the other
  inputs are not checked).
* ``EmbedLayerNormalization(input_ids, segment_ids?, word_embedding, position_embedding,
  segment_embedding?, gamma, beta, mask?, position_ids?)``: ``output`` and ``embedding_sum``
  ``(B, S, H)`` (``H`` the width of every embedding table, checked), ``mask_index`` ``(B,)`` int32.

``SimplifiedLayerNormalization`` (RMS norm) and the ``LayerNormalization`` of opsets before 17 are
onnxruntime contrib operators registered in the *default* domain (onnxruntime has none of that name
in ``com.microsoft``); they are converted there (see :mod:`symshape.onnx.ops.norm`). Operators of
other domains, and the contrib operators not listed, are ``unsupported-op``.
"""

from __future__ import annotations

import numpy as np

import symshape as ss
from symshape import Expr
from symshape.errors import BAD_ATTRIBUTE, RANK_MISMATCH
from symshape.onnx.context import UNSUPPORTED_OP, NodeContext
from symshape.onnx.ops.common import checked, like, same_as_input, stacked
from symshape.onnx.registry import Outputs, register

__all__ = ["MS"]

#: onnxruntime's contrib domain
MS = "com.microsoft"


def _opt_outputs(ctx: NodeContext, outs: list[Expr]) -> list[Expr | None]:
    return [e if i == 0 or ctx.has_output(i) else None for i, e in enumerate(outs)]


# -- activations -----------------------------------------------------------------------------------


register(["Gelu", "QuickGelu", "RotaryEmbedding"], since=1, domain=MS)(same_as_input)


def _bias_of_last_axis(ctx: NodeContext, x: Expr, i: int) -> Expr:
    """``x``'s type, once input ``i`` is ``(H,)`` for ``x``'s last axis ``H`` exactly
    (onnxruntime's check: no broadcasting)."""
    with ctx.checking(f"input {i} is 1-d, of the length of input 0's last axis"):
        return checked(ss.ops.copy(x), [stacked(ss.ops.sum(x, axis=(-1,), exclude=True), ctx.input(i))])


@register("FastGelu", since=1, domain=MS)
def _fast_gelu(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    return _bias_of_last_axis(ctx, x, 1) if ctx.has_input(1) else ss.ops.copy(x)


@register("BiasGelu", since=1, domain=MS)
def _bias_gelu(ctx: NodeContext) -> Outputs:
    return _bias_of_last_axis(ctx, ctx.input(0), 1)


# -- normalization ---------------------------------------------------------------------------------


def _skip_norm(ctx: NodeContext, beta: int | None, bias: int) -> Outputs:
    x = ctx.input(0)
    s: Expr = like(ss.ops.add(x, ctx.input(1)), x)
    with ctx.checking("skip's last two axes are input's"):  # (onnxruntime: only a batch of 1 broadcasts)
        last2 = (-2, -1)
        tail = [ss.ops.sum(e, axis=last2, exclude=True) for e in (x, ctx.input(1))]
        s = checked(s, [stacked(tail[0], tail[1])])
    if ctx.has_input(bias):
        s = like(ss.ops.add(s, ctx.input(bias)), s)
        s = _bias_of_last_axis(ctx, s, bias)
    y: Expr = _bias_of_last_axis(ctx, like(ss.ops.multiply(s, ctx.input(2)), s), 2)
    if beta is not None and ctx.has_input(beta):
        y = _bias_of_last_axis(ctx, like(ss.ops.add(y, ctx.input(beta)), y), beta)
    stat = ss.ops.cast(ss.ops.mean(s, axis=-1, keepdims=True), "float32")
    return _opt_outputs(ctx, [y, stat, stat, s])


@register("SkipLayerNormalization", since=1, domain=MS)
def _skip_layer_norm(ctx: NodeContext) -> Outputs:
    return _skip_norm(ctx, beta=3, bias=4)


@register("SkipSimplifiedLayerNormalization", since=1, domain=MS)
def _skip_simplified_layer_norm(ctx: NodeContext) -> Outputs:
    return _skip_norm(ctx, beta=None, bias=3)


# -- linear algebra --------------------------------------------------------------------------------


def _swap_last(ctx: NodeContext, i: int) -> Expr:
    r = ctx.need_rank(i, "a transposed FusedMatMul operand")
    if r < 2:
        ctx.fail(RANK_MISMATCH, f"a transposed operand must have rank >= 2, input {i} has rank {r}")
    return ss.ops.transpose(ctx.input(i), [*range(r - 2), r - 1, r - 2])


@register("FusedMatMul", since=1, domain=MS)
def _fused_matmul(ctx: NodeContext) -> Outputs:
    if ctx.attr_int("transBatchA", 0) or ctx.attr_int("transBatchB", 0):
        ctx.unsupported(UNSUPPORTED_OP, "FusedMatMul with transBatchA or transBatchB")
    a = _swap_last(ctx, 0) if ctx.attr_int("transA", 0) else ctx.input(0)
    b = _swap_last(ctx, 1) if ctx.attr_int("transB", 0) else ctx.input(1)
    return ss.ops.matmul(a, b)


@register("BiasAdd", since=1, domain=MS)
def _bias_add(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    return like(ss.ops.add(like(ss.ops.add(x, ctx.input(1)), x), ctx.input(2)), x)


@register("BiasSoftmax", since=1, domain=MS)
def _bias_softmax(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    return ss.ops.softmax(like(ss.ops.add(x, ctx.input(1)), x), axis=ctx.attr_int("axis", 1))


# -- attention -------------------------------------------------------------------------------------


def _heads(x: Expr, n: int) -> Expr:
    """``(B, L, n*D)`` -> ``(B, n, L, D)`` (a guard that ``n`` divides the width)."""
    return ss.ops.transpose(ss.ops.reshape(x, (0, 0, n, -1)), [0, 2, 1, 3])


def _merge(x: Expr) -> Expr:
    """``(B, n, S, D)`` -> ``(B, S, n*D)``."""
    return ss.ops.reshape(ss.ops.transpose(x, [0, 2, 1, 3]), (0, 0, -3))


def _num_heads(ctx: NodeContext) -> int:
    n = ctx.attr_int("num_heads")
    if n < 1:
        ctx.fail(BAD_ATTRIBUTE, f"num_heads must be >= 1, got {n}")
    return n


def _need_rank(ctx: NodeContext, i: int, ranks: tuple[int, ...], what: str) -> int:
    r = ctx.need_rank(i, what)
    if r not in ranks:
        want = " or ".join(str(k) for k in ranks)
        ctx.fail(RANK_MISMATCH, f"{what} must have rank {want}, got rank {r}")
    return r


def _sdpa(q4: Expr, k4: Expr, v4: Expr) -> Expr:
    """Scaled dot-product attention per head: ``(B, N, S, D)``, ``(B, N, T, D)``, ``(B, N, T, Dv)``
    -> ``(B, N, S, Dv)`` (``matmul`` checks the head sizes and lengths)."""
    scores = ss.ops.softmax(ss.ops.matmul(q4, ss.ops.transpose(k4, [0, 1, 3, 2])), axis=-1)
    return ss.ops.matmul(scores, v4)


@register("Attention", since=1, domain=MS)
def _ms_attention(ctx: NodeContext) -> Outputs:
    n = _num_heads(ctx)
    _need_rank(ctx, 0, (3,), "Attention's input")
    proj: Expr = ss.ops.matmul(ctx.input(0), ctx.input(1))  # (B, S, Hq+Hk+Hv)
    if ctx.has_input(2):
        proj = like(ss.ops.add(proj, ctx.input(2)), proj)
    sizes = ctx.attr_ints("qkv_hidden_sizes")
    q: Expr
    k: Expr
    v: Expr
    if sizes is not None:
        if len(sizes) != 3 or any(s < 1 for s in sizes):
            ctx.fail(BAD_ATTRIBUTE, f"qkv_hidden_sizes must be 3 positive sizes, got {list(sizes)}")
        parts = ss.ops.split(proj, [sizes[0], sizes[0] + sizes[1]], axis=-1)
        q, k, v = parts[0], parts[1], parts[2]
    else:
        qkv = ss.ops.reshape(proj, (0, 0, 3, -1))  # (B, S, 3, H): the width is 3*H
        q = k = v = ss.ops.sum(qkv, axis=2)
    q4, k4, v4 = _heads(q, n), _heads(k, n), _heads(v, n)
    if ctx.has_input(4) or ctx.has_output(1):
        kv = ss.ops.concatenate([ss.ops.expand_dims(k4, 0), ss.ops.expand_dims(v4, 0)], axis=0)
        present = ss.ops.concatenate([ctx.input(4), kv], axis=3) if ctx.has_input(4) else kv
        k4 = ss.ops.take(present, ss.const(np.array(0, "int64")), axis=0)
        v4 = ss.ops.take(present, ss.const(np.array(1, "int64")), axis=0)
    else:
        present = None
    y = _merge(_sdpa(q4, k4, v4))
    return [y, present if ctx.has_output(1) else None]


@register("MultiHeadAttention", since=1, domain=MS)
def _ms_multi_head_attention(ctx: NodeContext) -> Outputs:
    n = _num_heads(ctx)
    rq = _need_rank(ctx, 0, (3, 5), "MultiHeadAttention's query")
    zero, one, two = (ss.const(np.array(i, "int64")) for i in range(3))
    q4: Expr
    k4: Expr
    v4: Expr
    if rq == 5:  # packed (B, S, N, 3, H)
        if ctx.has_input(1) or ctx.has_input(2):
            ctx.fail(BAD_ATTRIBUTE, "a packed query (B, S, N, 3, H) takes no key or value")
        qkv = ss.ops.transpose(ctx.input(0), [3, 0, 2, 1, 4])  # (3, B, N, S, H)
        if ctx.num_inputs > 6 and (ctx.has_input(6) or ctx.has_input(7)):
            ctx.unsupported(UNSUPPORTED_OP, "past_key/past_value with a packed query")
        q4, k4, v4 = (ss.ops.take(qkv, i, axis=0) for i in (zero, one, two))
    else:
        q4 = _heads(ctx.input(0), n)
        rk = _need_rank(ctx, 1, (3, 4, 5), "MultiHeadAttention's key")
        if rk == 5:  # packed (B, L, N, 2, H)
            if ctx.has_input(2):
                ctx.fail(BAD_ATTRIBUTE, "a packed key (B, L, N, 2, H) takes no value")
            kv = ss.ops.transpose(ctx.input(1), [3, 0, 2, 1, 4])  # (2, B, N, L, H)
            k4, v4 = ss.ops.take(kv, zero, axis=0), ss.ops.take(kv, one, axis=0)
        elif rk == 4:  # (B, N, L, H): used as they are
            _need_rank(ctx, 2, (4,), "MultiHeadAttention's value with a 4-d key")
            k4, v4 = ctx.input(1), ctx.input(2)
        else:
            _need_rank(ctx, 2, (3,), "MultiHeadAttention's value with a 3-d key")
            k4, v4 = _heads(ctx.input(1), n), _heads(ctx.input(2), n)
            if ctx.num_inputs > 6 and ctx.has_input(6):
                k4 = ss.ops.concatenate([ctx.input(6), k4], axis=2)
            if ctx.num_inputs > 7 and ctx.has_input(7):
                v4 = ss.ops.concatenate([ctx.input(7), v4], axis=2)
    # the batch and heads of the key and value are the query's, exactly (onnxruntime's check;
    # the attention's matmuls alone would broadcast a batch of 1)
    lead = ss.ops.sum(q4, axis=(2, 3))  # (B, N)
    with ctx.checking("the query's, key's and value's batch (axis 0) alike"):
        k4 = checked(k4, [stacked(lead, ss.ops.sum(k4, axis=(2, 3)))])
        v4 = checked(v4, [stacked(lead, ss.ops.sum(v4, axis=(2, 3)))])
    y = _merge(_sdpa(q4, k4, v4))
    return [y, k4 if ctx.has_output(1) else None, v4 if ctx.has_output(2) else None]


@register("EmbedLayerNormalization", since=1, domain=MS)
def _embed_layer_norm(ctx: NodeContext) -> Outputs:
    ids = ctx.input(0)
    emb: Expr = ss.ops.take(ctx.input(2), ids, axis=0)  # (B, S, H)
    # every table has the width H: (B, S, 1) rows of each broadcast against the word embedding
    for i in (3, 4):
        if ctx.has_input(i):
            row = ss.ops.take(ctx.input(i), ss.ops.expand_dims(ids, -1), axis=0)  # (B, S, 1, H)
            emb = like(ss.ops.add(emb, ss.ops.squeeze(row, axis=[2])), emb)
    y: Expr = like(ss.ops.add(like(ss.ops.multiply(emb, ctx.input(5)), emb), ctx.input(6)), emb)
    mask_index = ss.ops.cast(ss.ops.sum(ids, axis=1), "int32")
    return _opt_outputs(ctx, [y, mask_index, emb])
