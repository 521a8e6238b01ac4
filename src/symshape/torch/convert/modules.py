"""Leaf modules, typed from their parameters and attributes.

``symbolic_trace`` keeps ``torch.nn`` modules as single ``call_module`` nodes. Each is written with
the functional converters and the module's own parameters (``self.fc.weight``, annotated with its
shape): ``nn.Linear`` is ``F.linear(x, self.fc.weight, self.fc.bias)``, a pooling module the
pooling with its kernel, stride and padding, and so on (convolution modules are in
:mod:`symshape.torch.convert.conv`). Composite modules are decomposed:

* ``nn.MultiheadAttention``: the three input projections (slices of ``in_proj_weight``), heads as
  ``reshape(q, (0, 0, H, E/H))`` plus a transpose, ``softmax(q k^T + masks) v``, the output
  projection; the averaged weights ``(N, L, S)`` as second result. An unbatched query ``(L, E)``
  (its rank known at import) is torch's batch of one: key and value ``(S, E)``, a key padding
  mask ``(S,)``, a 3-d attention mask ``(num_heads, L, S)``; a query whose rank only inference
  knows is taken as batched (3-d), so an unbatched one there is a rank error, never a wrong type.
* ``nn.LSTM``/``nn.GRU``/``nn.RNN``: per layer and direction the input projection
  ``dense(x, weight_ih)`` (which checks ``input_size``), the output ``(..., D * H)`` and the final
  states ``(D * num_layers, N, H)``; given initial states must have exactly that shape. The
  recurrence does not change shapes. Inputs of unknown rank are taken as batched.
* ``nn.TransformerEncoderLayer``/``nn.TransformerEncoder``: attention, feed-forward, norms.

Modules without a symshape operator (``Fold``, ``Unfold``, ...) are ``unsupported-op``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch.nn as nn

import symshape as ss
from symshape.torch.context import Ctx
from symshape.torch.convert import nn as fn
from symshape.torch.convert.attention import ATTN_MASK, attention
from symshape.torch.convert.conv import batched, nonempty_batch
from symshape.torch.convert.elementwise import UNARY, gelu, glu, leaky_relu, prelu, same
from symshape.torch.convert.empty import nonempty
from symshape.torch.convert.linalg import linear_expr
from symshape.torch.convert.padding import pad as f_pad
from symshape.torch.convert.reduce import log_softmax, softmax
from symshape.torch.convert.shape import flatten, unflatten
from symshape.torch.registry import converts, lookup
from symshape.torch.values import Unsupported, static_shape

__all__ = ["mha", "recurrent", "encoder_layer"]


def _p(ctx: Ctx, prefix: str, name: str) -> ss.Var | None:
    return ctx.param(f"{prefix}.{name}" if prefix else name, absolute=True)


def _need(ctx: Ctx, prefix: str, name: str) -> ss.Var:
    p = _p(ctx, prefix, name)
    if p is None:
        raise Unsupported(f"the module has no parameter `{name}`")
    return p


@converts(nn.Linear)
def linear(ctx: Ctx, input: Any) -> Any:
    return linear_expr(ctx.tensor(input), ctx.need_param("weight"), ctx.param("bias"))


# modules whose result has the input's type (in a shape check): the input itself
converts(
    nn.Identity,
    nn.Dropout,
    nn.Dropout1d,
    nn.Dropout2d,
    nn.Dropout3d,
    nn.AlphaDropout,
    nn.FeatureAlphaDropout,
    nn.LocalResponseNorm,
)(same)


@converts(
    nn.Fold,
    nn.Unfold,
    nn.EmbeddingBag,
    nn.Bilinear,
)
def no_operator(ctx: Ctx, *args: Any, **kwargs: Any) -> Any:
    raise Unsupported(f"{type(ctx.module).__name__} has no symshape operator yet")


@converts(
    nn.BatchNorm1d,
    nn.BatchNorm2d,
    nn.BatchNorm3d,
    nn.SyncBatchNorm,
    nn.InstanceNorm1d,
    nn.InstanceNorm2d,
    nn.InstanceNorm3d,
)
def batch_norm(ctx: Ctx, input: Any) -> Any:
    """Batch and instance norms; a module that computes its statistics from the input (training,
    or no running statistics) needs more than one value per statistic. torch's ranks: an instance
    norm takes an unbatched input too (``InstanceNorm2d`` on ``(C, H, W)``), ``BatchNorm1d`` takes
    ``(N, C)`` or ``(N, C, L)``, ``BatchNorm2d``/``3d`` only ``4D``/``5D``."""
    m = ctx.module
    weight, bias, mean, var = ctx.alike_params("weight", "bias", "running_mean", "running_var")
    x = ctx.tensor(input)
    name = type(m).__name__
    nd = _NORM_ND.get(type(m))
    instance = isinstance(m, nn.modules.instancenorm._InstanceNorm)
    back: Callable[[ss.Expr], ss.Expr] = _same_expr
    if nd is not None and instance:
        x, back = batched(ctx, x, name, nd + 2, nd + 1, nd + 2)
    elif nd == 1:  # (N, C) as (N, C, 1)
        x, back = batched(ctx, x, name, 3, 2, 3, axis=2)
    elif nd is not None:
        x, back = batched(ctx, x, name, nd + 2, nd + 2, nd + 2)
    if instance:
        if weight is not None or bias is not None:
            nonempty_batch(ctx, x)
        if m.training or not m.track_running_stats:
            fn.values_per_statistic(ctx, x, "instance")
    elif m.training or (m.running_mean is None and m.running_var is None):
        fn.values_per_statistic(ctx, x, "batch")
    return back(fn.batch_norm(ctx, x, mean, var, weight, bias))


def _same_expr(y: ss.Expr) -> ss.Expr:
    return y


#: the norm modules whose ranks torch checks -> their number of spatial axes
_NORM_ND: dict[type, int] = {
    nn.BatchNorm1d: 1,
    nn.BatchNorm2d: 2,
    nn.BatchNorm3d: 3,
    nn.InstanceNorm1d: 1,
    nn.InstanceNorm2d: 2,
    nn.InstanceNorm3d: 3,
}


@converts(nn.LayerNorm)
def layer_norm(ctx: Ctx, input: Any) -> Any:
    weight, bias = ctx.alike_params("weight", "bias")
    return fn.layer_norm(ctx, ctx.tensor(input), tuple(ctx.module.normalized_shape), weight, bias)


@converts(nn.RMSNorm)
def rms_norm(ctx: Ctx, input: Any) -> Any:
    return fn.layer_norm(
        ctx, ctx.tensor(input), tuple(ctx.module.normalized_shape), ctx.param("weight"), None
    )


@converts(nn.GroupNorm)
def group_norm(ctx: Ctx, input: Any) -> Any:
    weight, bias = ctx.alike_params("weight", "bias")
    x = ctx.tensor(input)
    fn.values_per_statistic(ctx, x, "group", ctx.module.num_groups)
    return fn.group_norm(ctx, x, ctx.module.num_groups, weight, bias)


@converts(nn.Embedding)
def embedding(ctx: Ctx, input: Any, *args: Any) -> Any:
    return fn.embedding(ctx.tensor(input), ctx.need_param("weight"))


def _pool_module(kind: str, nd: int, adaptive: bool) -> Any:
    def pool(ctx: Ctx, input: Any) -> Any:
        m, x = ctx.module, ctx.tensor(input)
        if adaptive:
            out = fn.adaptive_pool(ctx, kind, nd, x, m.output_size)
        else:
            dil = getattr(m, "dilation", 1)
            out = fn.pool(ctx, kind, nd, x, m.kernel_size, m.stride, m.padding, dil, m.ceil_mode)
        return fn.with_indices(ctx, out) if getattr(m, "return_indices", False) else out

    return pool


for _nd in (1, 2, 3):
    for _kind in ("Max", "Avg"):
        converts(getattr(nn, f"{_kind}Pool{_nd}d"))(_pool_module(_kind.lower(), _nd, False))
        converts(getattr(nn, f"Adaptive{_kind}Pool{_nd}d"))(_pool_module(_kind.lower(), _nd, True))


def _lp_pool_module(nd: int) -> Any:
    """``nn.LPPool{nd}d``: torch's ``F.lp_pool{nd}d`` is an average pooling of ``x ** p`` without
    padding, scaled: the average pooling's shape (and ranks)."""

    def pool(ctx: Ctx, input: Any) -> Any:
        m = ctx.module
        return fn.pool(ctx, "avg", nd, ctx.tensor(input), m.kernel_size, m.stride, 0, 1, m.ceil_mode)

    return pool


for _nd in (1, 2, 3):
    if hasattr(nn, f"LPPool{_nd}d"):
        converts(getattr(nn, f"LPPool{_nd}d"))(_lp_pool_module(_nd))


@converts(
    nn.ZeroPad1d,
    nn.ZeroPad2d,
    nn.ZeroPad3d,
    nn.ConstantPad1d,
    nn.ConstantPad2d,
    nn.ConstantPad3d,
    nn.ReflectionPad1d,
    nn.ReflectionPad2d,
    nn.ReflectionPad3d,
    nn.ReplicationPad1d,
    nn.ReplicationPad2d,
    nn.ReplicationPad3d,
    nn.CircularPad1d,
    nn.CircularPad2d,
    nn.CircularPad3d,
)
def pad(ctx: Ctx, input: Any) -> Any:
    return f_pad(
        ctx, input, tuple(ctx.module.padding), _PAD_MODES.get(type(ctx.module).__name__[:-5], "constant")
    )


#: padding modules -> F.pad's mode (by the class name without ``Pad{n}d``)
_PAD_MODES = {"Reflection": "reflect", "Replication": "replicate", "Circular": "circular"}


# -- activations --------------------------------------------------------------------------------

_ACTIVATIONS: dict[type, str] = {
    nn.ReLU: "relu",
    nn.ReLU6: "relu6",
    nn.SiLU: "silu",
    nn.Tanh: "tanh",
    nn.Sigmoid: "sigmoid",
    nn.ELU: "elu",
    nn.SELU: "selu",
    nn.CELU: "celu",
    nn.Hardswish: "hardswish",
    nn.Hardsigmoid: "hardsigmoid",
    nn.Mish: "mish",
    nn.Softplus: "softplus",
    nn.Softsign: "softsign",
    nn.Tanhshrink: "tanhshrink",
    nn.LogSigmoid: "logsigmoid",
}


def _activation_module(name: str) -> Any:
    rule = UNARY[name]

    def act(ctx: Ctx, input: Any) -> Any:
        return rule(ctx, ctx.tensor(input))

    return act


for _cls, _name in _ACTIVATIONS.items():
    converts(_cls)(_activation_module(_name))


#: modules that are a functional converter called with some of their attributes
_FROM_ATTRIBUTES: dict[type, tuple[Any, tuple[str, ...]]] = {
    nn.GELU: (gelu, ("approximate",)),
    nn.LeakyReLU: (leaky_relu, ("negative_slope",)),
    nn.GLU: (glu, ("dim",)),
    nn.Softmax: (softmax, ("dim",)),
    nn.Softmin: (softmax, ("dim",)),
    nn.LogSoftmax: (log_softmax, ("dim",)),
    nn.Flatten: (flatten, ("start_dim", "end_dim")),
    nn.Unflatten: (unflatten, ("dim", "unflattened_size")),
}


def _from_attributes(convert: Any, names: tuple[str, ...]) -> Any:
    def module(ctx: Ctx, input: Any) -> Any:
        return convert(ctx, input, *(getattr(ctx.module, n) for n in names))

    return module


for _cls, (_convert, _names) in _FROM_ATTRIBUTES.items():
    converts(_cls)(_from_attributes(_convert, _names))


@converts(nn.Hardtanh)
def hardtanh_module(ctx: Ctx, input: Any) -> Any:
    m = ctx.module
    return ss.ops.clip(ctx.tensor(input), float(m.min_val), float(m.max_val))


@converts(nn.Threshold)
def threshold_module(ctx: Ctx, input: Any) -> Any:
    x = ctx.tensor(input)
    m = ctx.module
    return ss.ops.where(ss.ops.greater(x, ctx.operand(m.threshold, x)), x, ctx.operand(m.value, x))


@converts(nn.PReLU)
def prelu_module(ctx: Ctx, input: Any) -> Any:
    return prelu(ctx, input, ctx.need_param("weight"))


# -- attention ----------------------------------------------------------------------------------


def mha(
    ctx: Ctx,
    m: nn.MultiheadAttention,
    prefix: str,
    query: ss.Expr,
    key: ss.Expr,
    value: ss.Expr,
    key_padding_mask: ss.Expr | None,
    attn_mask: ss.Expr | None,
    need_weights: bool,
    average: bool,
) -> tuple[ss.Expr, ss.Expr | None]:
    """``nn.MultiheadAttention`` (see the module docstring)."""
    qr = ctx.rank(query)
    if qr is not None and qr not in (2, 3):
        raise ss.SymshapeError(
            ss.errors.RANK_MISMATCH,
            f"query should be unbatched 2D or batched 3D tensor but received {qr}-D query tensor (torch)",
        )
    if qr == 2:  # unbatched: torch adds the batch axis to query, key, value and key_padding_mask
        ax = 0 if m.batch_first else 1
        query, key, value = (
            batched(ctx, t, "multi_head_attention", 3, 2, 2, ax)[0] for t in (query, key, value)
        )
        if key_padding_mask is not None:
            key_padding_mask = batched(ctx, key_padding_mask, "key_padding_mask", 2, 1, 1)[0]
        out, w = mha(ctx, m, prefix, query, key, value, key_padding_mask, attn_mask, need_weights, average)
        return ss.ops.squeeze(out, axis=[ax]), None if w is None else ss.ops.squeeze(w, axis=[0])
    if qr == 3:  # torch's ranks for a batched query
        for t, r, what in ((key, 3, "key"), (value, 3, "value"), (key_padding_mask, 2, "key_padding_mask")):
            if t is not None and ctx.rank(t) not in (None, r):
                raise ss.SymshapeError(
                    ss.errors.RANK_MISMATCH, f"for batched (3-D) `query`, `{what}` must be {r}-D (torch)"
                )
    e, h = int(m.embed_dim), int(m.num_heads)
    hd = e // h
    if m._qkv_same_embed_dim:
        w = _need(ctx, prefix, "in_proj_weight")
        ws: list[ss.Expr] = [ss.ops.strided_slice(w, [i * e], [(i + 1) * e], axes=[0]) for i in range(3)]
    else:
        ws = [_need(ctx, prefix, f"{c}_proj_weight") for c in "qkv"]
    b = _p(ctx, prefix, "in_proj_bias")
    bs: list[ss.Expr | None] = (
        [ss.ops.strided_slice(b, [i * e], [(i + 1) * e], axes=[0]) for i in range(3)]
        if b is not None
        else [None] * 3
    )
    to_heads = (0, 2, 1, 3) if m.batch_first else (1, 2, 0, 3)
    from_heads = (0, 2, 1, 3) if m.batch_first else (2, 0, 1, 3)
    heads: list[ss.Expr] = []
    for x, wi, bi in zip((query, key, value), ws, bs):
        proj = linear_expr(x, wi, bi)
        heads.append(ss.ops.transpose(ss.ops.reshape(proj, (0, 0, h, hd)), to_heads))
    q, k, v = heads
    _mha_checks(ctx, h, m.batch_first, query, key, value, key_padding_mask)
    mask: ss.Expr | None = None
    if attn_mask is not None:  # (L, S) or (N*heads, L, S), as (N, heads, L, S)
        q, k = ctx.let(q, "q"), ctx.let(k, "k")
        mask = ATTN_MASK(attn_mask, q, k)
    if key_padding_mask is not None:
        kpm = ss.ops.expand_dims(key_padding_mask, axis=1, num_newaxis=2)
        mask = kpm if mask is None else ss.ops.logical_or(ss.ops.cast(mask, "bool"), ss.ops.cast(kpm, "bool"))
    out, weights = attention(ctx, q, k, v, mask)
    merged = ss.ops.reshape(ss.ops.transpose(out, from_heads), (0, 0, e))
    out = linear_expr(merged, _need(ctx, prefix, "out_proj.weight"), _p(ctx, prefix, "out_proj.bias"))
    if not need_weights:
        return out, None
    return out, ss.ops.mean(weights, axis=1) if average else weights


def _mha_checks(
    ctx: Ctx,
    heads: int,
    batch_first: bool,
    query: ss.Expr,
    key: ss.Expr,
    value: ss.Expr,
    key_padding_mask: ss.Expr | None,
) -> None:
    """torch's exact shapes (``F.multi_head_attention_forward``), where the attention itself
    would broadcast: ``key`` and ``value`` have one ``(N, S)``, the query's batch is ``N``,
    ``key_padding_mask`` is ``(N, S)`` (``attn_mask``: :data:`~symshape.torch.convert.attention.ATTN_MASK`).
    Each is a ``stack`` of the two shapes, as tensors of the query's dtype."""

    def seq_batch(x: ss.Expr) -> ss.Expr:  # (N, L) of (N, L, E) or (L, N, E)
        s = ss.ops.sum(x, axis=[-1])
        return ctx.let(s if batch_first else ss.ops.transpose(s, (1, 0)), "seq_batch")

    q_nl, k_ns = seq_batch(query), seq_batch(key)
    ctx.let(ss.ops.stack([k_ns, ss.ops.cast_like(seq_batch(value), k_ns)], axis=0), "check_key_value")
    q_n = ss.ops.sum(q_nl, axis=[1])
    ctx.let(ss.ops.stack([q_n, ss.ops.cast_like(ss.ops.sum(k_ns, axis=[1]), q_n)], axis=0), "check_batch")
    if key_padding_mask is not None:
        kpm = ss.ops.cast_like(key_padding_mask, k_ns)
        ctx.let(ss.ops.stack([kpm, k_ns], axis=0), "check_key_padding_mask")


def _flag(ctx: Ctx, v: Any, what: str) -> bool:
    return bool(ctx.static(v, what))


@converts(nn.MultiheadAttention)
def multihead_attention(
    ctx: Ctx,
    query: Any,
    key: Any,
    value: Any,
    key_padding_mask: Any = None,
    need_weights: Any = True,
    attn_mask: Any = None,
    average_attn_weights: Any = True,
    is_causal: Any = False,
) -> Any:
    opt = [
        ctx.tensor(v, what) if v is not None else None
        for v, what in ((key_padding_mask, "key_padding_mask"), (attn_mask, "attn_mask"))
    ]
    out, weights = mha(
        ctx,
        ctx.module,
        ctx.module_path,
        ctx.tensor(query, "query"),
        ctx.tensor(key, "key"),
        ctx.tensor(value, "value"),
        opt[0],
        opt[1],
        _flag(ctx, need_weights, "need_weights"),
        _flag(ctx, average_attn_weights, "average_attn_weights"),
    )
    return (out, weights)


def _activation(ctx: Ctx, act: Any, x: ss.Expr) -> ss.Expr:
    if isinstance(act, nn.Module):
        conv = lookup("call_module", type(act))
        if conv is None:
            raise Unsupported(f"activation {type(act).__name__} is not supported")
        return conv(ctx.for_module(act, ""), x)  # type: ignore[no-any-return]
    conv = lookup("call_function", act)
    if conv is None:
        raise Unsupported(f"activation {act!r} is not supported")
    return conv(ctx, x)  # type: ignore[no-any-return]


def _norm(ctx: Ctx, m: nn.Module, prefix: str, x: ss.Expr) -> ss.Expr:
    if isinstance(m, nn.LayerNorm):
        return fn.layer_norm(
            ctx, x, tuple(m.normalized_shape), _p(ctx, prefix, "weight"), _p(ctx, prefix, "bias")
        )
    raise Unsupported(f"norm {type(m).__name__} in a transformer layer is not supported")


def encoder_layer(
    ctx: Ctx,
    m: nn.TransformerEncoderLayer,
    prefix: str,
    src: ss.Expr,
    mask: ss.Expr | None,
    kpm: ss.Expr | None,
) -> ss.Expr:
    """``nn.TransformerEncoderLayer`` (post- or pre-norm)."""

    def sa(x: ss.Expr) -> ss.Expr:
        out, _ = mha(ctx, m.self_attn, f"{prefix}.self_attn", x, x, x, kpm, mask, False, True)
        return out

    def ff(x: ss.Expr) -> ss.Expr:
        hidden = linear_expr(x, _need(ctx, prefix, "linear1.weight"), _p(ctx, prefix, "linear1.bias"))
        hidden = _activation(ctx, m.activation, hidden)
        return linear_expr(hidden, _need(ctx, prefix, "linear2.weight"), _p(ctx, prefix, "linear2.bias"))

    x = src
    if m.norm_first:
        x = ctx.let(ss.ops.add(x, sa(_norm(ctx, m.norm1, f"{prefix}.norm1", x))), "sa")
        return ss.ops.add(x, ff(_norm(ctx, m.norm2, f"{prefix}.norm2", x)))
    x = ctx.let(_norm(ctx, m.norm1, f"{prefix}.norm1", ss.ops.add(x, sa(x))), "sa")
    return _norm(ctx, m.norm2, f"{prefix}.norm2", ss.ops.add(x, ff(x)))


@converts(nn.TransformerEncoderLayer)
def transformer_encoder_layer(
    ctx: Ctx, src: Any, src_mask: Any = None, src_key_padding_mask: Any = None, is_causal: Any = False
) -> Any:
    mask = ctx.tensor(src_mask, "src_mask") if src_mask is not None else None
    kpm = (
        ctx.tensor(src_key_padding_mask, "src_key_padding_mask") if src_key_padding_mask is not None else None
    )
    return encoder_layer(ctx, ctx.module, ctx.module_path, ctx.tensor(src), mask, kpm)


@converts(nn.TransformerEncoder)
def transformer_encoder(
    ctx: Ctx, src: Any, mask: Any = None, src_key_padding_mask: Any = None, is_causal: Any = None
) -> Any:
    m = ctx.module
    am = ctx.tensor(mask, "mask") if mask is not None else None
    kpm = (
        ctx.tensor(src_key_padding_mask, "src_key_padding_mask") if src_key_padding_mask is not None else None
    )
    x = ctx.tensor(src)
    for i, layer in enumerate(m.layers):
        x = ctx.let(encoder_layer(ctx, layer, f"{ctx.module_path}.layers.{i}", x, am, kpm), f"layer{i}")
    if m.norm is not None:
        x = _norm(ctx, m.norm, f"{ctx.module_path}.norm", x)
    return x


# -- recurrent layers ---------------------------------------------------------------------------

_GATES = {nn.LSTM: 4, nn.GRU: 3, nn.RNN: 1}


def recurrent(ctx: Ctx, m: nn.RNNBase, prefix: str, x: ss.Expr, hx: Any) -> Any:
    """``nn.LSTM``/``nn.GRU``/``nn.RNN`` (see the module docstring)."""
    gates = next(g for cls, g in _GATES.items() if isinstance(m, cls))
    hidden = int(m.hidden_size)
    out_size = int(getattr(m, "proj_size", 0) or hidden)
    dirs = 2 if m.bidirectional else 1
    shape = static_shape(x)
    batched = shape is None or len(shape) == 3
    time_axis = 1 if (m.batch_first and batched) else 0
    # torch: "Expected sequence length to be larger than 0" (an empty batch runs)
    layer_in = nonempty(x, type(m).__name__, axes=(time_axis,))
    first_gates: ss.Expr | None = None
    for layer in range(int(m.num_layers)):
        outs = []
        for d in range(dirs):
            sfx = f"_l{layer}" + ("_reverse" if d else "")
            g: ss.Expr = ss.ops.dense(layer_in, _need(ctx, prefix, f"weight_ih{sfx}"))
            for bname in (f"bias_ih{sfx}", f"bias_hh{sfx}"):
                bias = _p(ctx, prefix, bname)
                if bias is not None:
                    g = ss.ops.bias_add(g, bias, axis=-1)
            g = ctx.let(g, f"gates{sfx}")
            if first_gates is None:
                first_gates = g
            outs.append(ss.ops.strided_slice(g, [0], [out_size], axes=[-1]))
        layer_in = ctx.let(outs[0] if dirs == 1 else ss.ops.concatenate(outs, axis=-1), f"out_l{layer}")
    out = layer_in
    assert first_gates is not None
    n_states = dirs * int(m.num_layers)

    def final(source: ss.Expr, size: int) -> ss.Expr:
        last = ss.ops.take(source, ss.Constant(shape=(), dtype="int64"), axis=time_axis)
        piece = ss.ops.expand_dims(ss.ops.strided_slice(last, [0], [size], axes=[-1]), axis=0)
        return ss.ops.concatenate([piece] * n_states, axis=0) if n_states > 1 else piece

    h_n = ctx.let(final(out, out_size), "h_n")
    c_n = ctx.let(final(first_gates, hidden), "c_n") if gates == 4 else None
    given = list(hx) if isinstance(hx, (tuple, list)) else ([hx] if hx is not None else [])
    for i, (state, expected) in enumerate(zip(given, (h_n, c_n))):
        if state is not None and expected is not None:
            ctx.let(ss.ops.stack([ctx.tensor(state, "an initial state"), expected], axis=0), f"check_hx{i}")
    if c_n is not None:
        return (out, (h_n, c_n))
    return (out, h_n)


@converts(nn.LSTM, nn.GRU, nn.RNN)
def recurrent_module(ctx: Ctx, input: Any, hx: Any = None) -> Any:
    m = ctx.module
    if getattr(m, "proj_size", 0) and m.bidirectional:
        raise Unsupported("bidirectional LSTM with proj_size is not supported")
    return recurrent(ctx, m, ctx.module_path, ctx.tensor(input), hx)
