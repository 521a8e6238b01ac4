"""``Attention`` (opset 23): scaled dot-product attention with key/value caches.

With 4-d inputs ``Q (B, Hq, S, D)``, ``K (B, Hk, L, D)``, ``V (B, Hk, L, Dv)`` and optional caches
``past_key (B, Hk, P, D)``/``past_value (B, Hk, P, Dv)``: ``present_key``/``present_value`` are the
caches and the new keys/values concatenated on the sequence axis (``T = P + L``), ``Y`` is
``(B, Hq, S, Dv)`` and ``qk_matmul_output`` ``(B, Hq, S, T)``. 3-d inputs ``(B, S, Hq*D)`` are split
into heads by ``q_num_heads``/``kv_num_heads``, and ``Y`` is ``(B, S, Hq*Dv)``.

The shapes are built with reductions and broadcasting: a size-1 query column ``(B, Hq, S, 1)``
times the keys or values reduced over their batch and heads (``(1, 1, 1, T)``, ``(1, 1, 1, Dv)``),
which also covers grouped-query attention and gives ``Y`` Q's batch; onnxruntime's conditions (one
batch for Q, K and V, ``Hq`` a multiple of ``Hk``, a mask whose last axis is ``T``, ...) are checked
apart (:func:`_checks`). With 3-d inputs the presents have ``kv_num_heads`` heads (a constant).
"""

from __future__ import annotations

import numpy as np

import symshape as ss
from symshape import Expr
from symshape.errors import BAD_ATTRIBUTE, RANK_MISMATCH
from symshape.onnx.context import NodeContext
from symshape.onnx.ops.common import checked, like, set_dim, stacked
from symshape.onnx.registry import Outputs, register

__all__: list[str] = []


def _heads(x: Expr, n: int) -> Expr:
    """``(B, L, n*D)`` -> ``(B, n, L, D)``."""
    return ss.ops.transpose(ss.ops.reshape(x, (0, 0, n, -1)), [0, 2, 1, 3])


def _axis(x: Expr, a: int) -> Expr:
    """The 1-d tensor of ``x``'s axis ``a`` (the other axes summed away)."""
    return ss.ops.sum(x, axis=(a,), exclude=True)


def _checks(ctx: NodeContext, q4: Expr, k4: Expr, v4: Expr, scores: Expr) -> list[Expr]:
    """Expressions that need onnxruntime's conditions: one batch for Q, K and V (no broadcasting),
    K's and V's heads and sequence alike, Q's and K's head size alike, ``Hq`` a multiple of ``Hk``,
    and the mask broadcast to the scores ``(B, Hq, S, T)`` with its last two axes exactly ``(S, T)``."""
    pairs = (
        ("Q's and K's batch sizes (axis 0) alike", k4, 0, q4, 0),
        ("K's and V's batch sizes (axis 0) alike", k4, 0, v4, 0),
        ("K's and V's numbers of heads alike", k4, 1, v4, 1),
        ("K's and V's sequence lengths alike", k4, 2, v4, 2),
        ("Q's and K's head sizes alike", k4, 3, q4, 3),
    )
    out: list[Expr] = []
    for text, a, i, b, j in pairs:
        with ctx.checking(text):
            out.append(stacked(_axis(a, i), _axis(b, j)))
    with ctx.checking("Q's number of heads a multiple of K's"):
        hk = ss.ops.take(ss.ops.shape_of(k4), ss.const(np.array([1], dtype=np.int64)))
        out.append(ss.ops.reshape(_axis(q4, 1), ss.ops.concatenate([hk, ss.const(np.array([-1]))], axis=0)))
    # with ``nonpad_kv_seqlen`` (opset 24) the mask may cover fewer keys than the padded cache;
    # its other axes still broadcast to the scores' (B, Hq, S)
    r = ctx.rank(3) if ctx.has_input(3) else None
    if r is not None and r >= 1 and ctx.has_input(6):
        with ctx.checking("attn_mask broadcasts to the scores' (batch, heads, queries)"):
            rows = ss.ops.sum(scores, axis=-1, keepdims=True)  # (B, Hq, S, 1)
            mask_rows = ss.ops.sum(ss.ops.cast_like(ctx.input(3), scores), axis=-1, keepdims=True)
            out.append(ss.ops.reshape_like(ss.ops.add(rows, mask_rows), rows))
    elif r is not None and r >= 1:
        mask = ss.ops.cast_like(ctx.input(3), scores)
        with ctx.checking("attn_mask's last axis is the key sequence length"):
            out.append(stacked(_axis(k4, 2), _axis(mask, r - 1)))
        if r >= 2:  # onnxruntime: the mask's rows are the queries, not broadcast
            with ctx.checking("attn_mask's second-last axis is the query sequence length"):
                out.append(stacked(_axis(q4, 2), _axis(mask, r - 2)))
        with ctx.checking("attn_mask broadcasts to the scores (batch, heads, queries, keys)"):
            out.append(ss.ops.reshape_like(ss.ops.add(scores, mask), scores))
    return out


def _cached(past: Expr, new: Expr, heads: int | None) -> Expr:
    """A cache ``past (B, Hk, P, D)`` and the new keys or values concatenated on the sequence axis;
    with ``heads`` (3-d inputs: ``kv_num_heads``) the result has that many heads, a constant (as
    onnx infers it; the concatenation needs the cache's heads equal to it)."""
    y = ss.ops.concatenate([past, new], axis=2)
    return y if heads is None else set_dim(y, 1, heads)


@register("Attention", since=23)
def _attention(ctx: NodeContext) -> Outputs:
    q, k, v = ctx.input(0), ctx.input(1), ctx.input(2)
    r = ctx.rank(0)
    three_d = r == 3
    if r is not None and r not in (3, 4):
        ctx.fail(RANK_MISMATCH, f"Q must be 3-d or 4-d, got rank {r}")
    hk: int | None = None
    if three_d:
        hq = ctx.attr_int("q_num_heads")
        hk = ctx.attr_int("kv_num_heads")
        with ctx.checking("Q's hidden size is a multiple of q_num_heads"):
            q4 = _heads(q, hq)
        with ctx.checking("K's and V's hidden sizes are multiples of kv_num_heads"):
            k4, v4 = _heads(k, hk), _heads(v, hk)
    else:
        q4, k4, v4 = q, k, v
    if ctx.has_input(4):
        with ctx.checking("past_key is K's shape but for the sequence axis 2"):
            k4 = _cached(ctx.input(4), k4, hk)
    if ctx.has_input(5):
        with ctx.checking("past_value is V's shape but for the sequence axis 2"):
            v4 = _cached(ctx.input(5), v4, hk)
    col = ss.ops.sum(q4, axis=-1, keepdims=True)  # (B, Hq, S, 1)
    # the keys and values without their batch (checked equal to Q's apart): Y and the scores have
    # Q's batch, as onnx infers it, not a broadcast max of the batches
    keys = ss.ops.transpose(ss.ops.sum(k4, axis=(0, 1, 3), keepdims=True), [0, 1, 3, 2])  # (1, 1, 1, T)
    vals = ss.ops.sum(v4, axis=(0, 1, 2), keepdims=True)  # (1, 1, 1, Dv)
    scores = ss.ops.multiply(col, ss.ops.cast_like(keys, col))  # (B, Hq, S, T)
    y: Expr = ss.ops.multiply(col, ss.ops.cast_like(vals, col))  # (B, Hq, S, Dv)
    for check in _checks(ctx, q4, k4, v4, scores):
        y = ss.ops.cast_like(y, check)
    if three_d:
        y = ss.ops.reshape(ss.ops.transpose(y, [0, 2, 1, 3]), (0, 0, -3))
    return [
        y,
        k4 if ctx.has_output(1) else None,
        v4 if ctx.has_output(2) else None,
        scores if ctx.has_output(3) else None,
    ]


@register("FlexAttention", since=1, domain="ai.onnx.preview")
def _flex_attention(ctx: NodeContext) -> Outputs:
    """``ai.onnx.preview.FlexAttention``: 4-d ``Q (B, Hq, S, D)``, ``K (B, Hk, L, D)``,
    ``V (B, Hk, L, Dv)`` give ``Y (B, Hq, S, Dv)`` (its ``score_mod``/``prob_mod`` subgraphs map
    scores elementwise and do not change shapes)."""
    q, k, v = ctx.input(0), ctx.input(1), ctx.input(2)
    scores = ss.ops.matmul(q, ss.ops.transpose(ss.ops.sum(k, axis=1, keepdims=True), [0, 1, 3, 2]))
    vals = ss.ops.sum(v, axis=1, keepdims=True)  # (B, 1, L, Dv)
    return ss.ops.matmul(scores, ss.ops.cast_like(vals, scores))  # (B, Hq, S, Dv)


@register("LinearAttention", since=27)
def _linear_attention(ctx: NodeContext) -> Outputs:
    """``LinearAttention`` (opset 27): 3-d packed ``query (B, T, Hq*dk)``, ``key (B, T, Hkv*dk)``,
    ``value (B, T, Hkv*dv)``; ``output`` is ``(B, T, Hq*dv)`` and ``present_state``
    ``(B, Hkv, dk, dv)`` (also the shape of ``past_state``). Built as the state ``k^T v`` per kv head
    and the queries of each group of ``Hq/Hkv`` heads times it, so batch, sequence and head sizes
    must agree as they do at run time."""
    hq = ctx.attr_int("q_num_heads")
    hk = ctx.attr_int("kv_num_heads")
    if hq < 1 or hk < 1 or hq % hk:
        ctx.fail(BAD_ATTRIBUTE, f"q_num_heads ({hq}) must be a positive multiple of kv_num_heads ({hk})")
    with ctx.checking("query's, key's and value's hidden sizes are multiples of their numbers of heads"):
        q4, k4, v4 = (_heads(ctx.input(i), h) for i, h in ((0, hq), (1, hk), (2, hk)))  # (B, H, T, d)
    # the value without its batch, the state without it for the output (the batches are checked
    # equal apart, in _gates): the state has the key's batch, the output the query's, as onnx
    # infers them, not a broadcast max of the batches
    v1 = ss.ops.sum(v4, axis=0, keepdims=True)
    with ctx.checking("key's and value's sequence lengths alike"):
        state: Expr = ss.ops.matmul(ss.ops.transpose(k4, [0, 1, 3, 2]), v1)  # (B, Hkv, dk, dv)
    if ctx.has_input(3):
        with ctx.checking("past_state is (batch, kv_num_heads, d_k, d_v) of the key and value"):
            state = _with_past(ctx, state, hk)
    with ctx.checking("query's head size is the key's"):
        grouped = ss.ops.reshape(q4, (0, hk, -1, 0))  # (B, Hkv, (Hq/Hkv)*T, dk)
        per_head = ss.ops.sum(state, axis=0, keepdims=True)  # (1, Hkv, dk, dv)
        y = ss.ops.reshape(ss.ops.matmul(grouped, per_head), (0, hq, -1, 0))  # (B, Hq, T, dv)
    y = ss.ops.reshape(ss.ops.transpose(y, [0, 2, 1, 3]), (0, 0, -3))  # (B, T, Hq*dv)
    return [checked(y, _gates(ctx, hk)), state if ctx.has_output(1) else None]


def _with_past(ctx: NodeContext, state: Expr, hk: int) -> Expr:
    """The present state once a past state (input 3) is given: the past must have the state's
    shape ``(B, Hkv, dk, dv)`` exactly (the reference refuses any other, broadcastable or not);
    the result has the past's shape with the sizes the attribute and the key and value fix as
    constants (``Hkv``; ``dk``, ``dv`` where the key's and value's last sizes are constants), as
    onnx's inference gives the heads."""
    past = ctx.input(3)
    present = past
    for axis, i in ((2, 1), (3, 2)):  # dk from the key, dv from the value
        t = ctx.tensor_type(i)
        d = t.dims[-1] if t is not None and t.ndim == 3 else None
        if d is not None and d.is_constant and int(d) % hk == 0:
            present = set_dim(present, axis, int(d) // hk)
    return checked(set_dim(present, 1, hk), [stacked(state, past)])


def _gates(ctx: NodeContext, hk: int) -> list[Expr]:
    """The checks of ``LinearAttention``'s inputs (the spec): the query and value have the key's
    ``(B, T)`` (the state is per batch entry, not broadcast); ``decay`` (input 4) is ``(B, T,
    Hkv*dk)`` or ``(B, T, Hkv)``, ``beta`` (input 5) ``(B, T, Hkv)`` or ``(B, T, 1)``, for the
    key's ``(B, T, Hkv*dk)``."""
    key = ctx.input(1)
    bt = ss.ops.sum(key, axis=2)  # (B, T)
    with ctx.checking("key's hidden size is a multiple of kv_num_heads"):
        k4 = ss.ops.reshape(key, (0, 0, hk, -1))  # (B, T, Hkv, dk)
    checks: list[Expr] = []
    for i in (0, 2):
        with ctx.checking(f"{'query' if i == 0 else 'value'}'s (batch, sequence) are the key's"):
            checks.append(stacked(bt, ss.ops.cast_like(ss.ops.sum(ctx.input(i), axis=2), key)))
    for i, per in ((4, k4), (5, ss.ops.sum(k4, axis=3))):  # decay: (.., 1 or dk); beta: (.., 1 or Hkv)
        if not ctx.has_input(i):
            continue
        name = "decay" if i == 4 else "beta"
        with ctx.checking(f"{name}'s (batch, sequence) are the key's"):
            g = ss.ops.cast_like(ctx.input(i), key)
            checks.append(stacked(bt, ss.ops.sum(g, axis=2)))  # the same (B, T)
        with ctx.checking(
            f"{name}'s last axis is "
            + ("kv_num_heads*d_k or kv_num_heads" if i == 4 else "kv_num_heads or 1")
        ):
            if i == 4:
                g = ss.ops.reshape(g, (0, 0, hk, -1))  # (B, T, Hkv, 1 or dk)
            checks.append(like(ss.ops.add(per, g), per))  # broadcasts to the key's, not beyond
    return checks
