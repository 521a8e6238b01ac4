"""Quantization, random generators, window functions and losses.

* ``QuantizeLinear``: ``x``'s shape, the zero point's type (else ``output_dtype``, else ``uint8``);
  ``DequantizeLinear``: ``x``'s shape, ``output_dtype`` or the scale's type (float32 before opset
  19); ``DynamicQuantizeLinear``: ``uint8`` of ``x``'s shape, a float32 scalar scale, a ``uint8``
  scalar zero point. The scale and zero point are checked against the input (see
  :func:`_quant_params`).
* ``RandomNormal``/``RandomUniform``: the ``shape`` attribute; the ``...Like`` variants and
  ``Bernoulli``: the input's shape; ``dtype`` or the input's; ``Multinomial``: ``(batch,
  sample_size)``, ``int32`` by default.
* ``HannWindow``, ``HammingWindow``, ``BlackmanWindow``: ``(size,)``; ``MelWeightMatrix``:
  ``(dft_length//2 + 1, num_mel_bins)``.
* ``NegativeLogLikelihoodLoss``/``SoftmaxCrossEntropyLoss``: the target's shape for
  ``reduction='none'``, else a scalar, of the input's type; ``log_prob`` has the scores' type. The
  target is the scores' shape without the class axis, the weight ``(C,)``.
* ``RotaryEmbedding``: the input's type, its sine and cosine caches checked against it (see
  :func:`_rotary_embedding`); ``SwiGLU``: the gate's;
  ``BitCast``: the input's shape, type ``to``; ``CausalConvWithState``: the input's type and the
  state ``(B, C, k - 1)``.
"""

from __future__ import annotations

import symshape as ss
from symshape import Expr
from symshape.errors import BAD_ATTRIBUTE, RANK_MISMATCH
from symshape.onnx.context import NodeContext
from symshape.onnx.ops.common import checked, like, like_product, scalar_of, set_dim, stacked, value_slice
from symshape.onnx.registry import Outputs, register

__all__: list[str] = []


def _same_params(ctx: NodeContext, scale: int, zero_point: int) -> list[Expr]:
    """The checks that a zero point has its scale's shape (the spec), or that both have one entry
    when their ranks are 0 and 1 (``()`` and ``(1,)``: onnxruntime and the reference run that)."""
    s, z = ctx.input(scale), ctx.input(zero_point)
    rs, rz = ctx.rank(scale), ctx.rank(zero_point)
    with ctx.checking("the zero point has the scale's shape"):
        if rs is not None and rz is not None and rs != rz and max(rs, rz) <= 1:
            return [ss.ops.reshape(s, ()), ss.ops.reshape(z, ())]
        return [stacked(s, z)]


def _quant_params(ctx: NodeContext, y: Expr) -> Expr:
    """``y``, once the scale (input 1) and the zero point (input 2) fit the input (input 0): the
    zero point has the scale's shape; the scale is one entry (per tensor; the only form before
    opset 13), one per entry of the input's ``axis`` (per axis, 1-d), or with ``block_size`` the
    input's shape with ``ceil(d / block_size)`` at ``axis`` (blocked, opset 21). The spec's rules
    (onnxruntime and the reference also run a per-axis scale at opset 10)."""
    x, scale = ctx.input(0), ctx.input(1)
    checks: list[Expr] = []
    rs, rx = ctx.rank(1), ctx.rank(0)
    if ctx.has_input(2):
        checks.extend(_same_params(ctx, 1, 2))
    block = ctx.attr_int("block_size", 0) if ctx.opset >= 21 else 0
    axis = ctx.attr_int("axis", 1) if ctx.opset >= 13 else 1
    if block > 0 and rx is not None:  # ceil(d / block) = the length of range(0, d, block)
        with ctx.checking(f"the scale is the input's shape with ceil(d / block_size {block}) at axis {axis}"):
            blocks = ss.ops.strided_slice(x, [0], [None], strides=[block], axes=[axis])
            checks.append(stacked(ss.ops.cast_like(blocks, scale), scale))
    elif rs == 1 and ctx.opset >= 13 and rx is not None:  # one entry, or one per entry of the axis
        with ctx.checking(f"a 1-d scale has one entry, or one per entry of the input's axis {axis}"):
            per = ss.ops.cast_like(ss.ops.sum(x, axis=axis, exclude=True), scale)  # (d,)
            checks.append(like(ss.ops.add(per, scale), per))
    elif rs is not None and rs >= 1 and block <= 0:
        if rs > 1:
            ctx.fail(RANK_MISMATCH, f"the scale must be a scalar or 1-d, got rank {rs}")
        checks.append(ss.ops.reshape(scale, ()))  # one entry
    return checked(y, checks)


def _quantized(ctx: NodeContext) -> Expr:
    x = ctx.input(0)
    if ctx.has_input(2):
        return ss.ops.cast_like(x, ctx.input(2))
    if ctx.opset >= 21 and ctx.attr("output_dtype", 0):
        return ss.ops.cast(x, ctx.attr_dtype("output_dtype"))
    return ss.ops.cast(x, "uint8")


def _dequantized(ctx: NodeContext) -> Expr:
    x = ctx.input(0)
    if ctx.opset >= 23 and ctx.attr("output_dtype", 0):
        return ss.ops.cast(x, ctx.attr_dtype("output_dtype"))
    if ctx.opset >= 19:
        return ss.ops.cast_like(x, ctx.input(1))
    return ss.ops.cast(x, "float32")


@register("QuantizeLinear", since=10)
def _quantize(ctx: NodeContext) -> Outputs:
    return _quant_params(ctx, _quantized(ctx))


@register("DequantizeLinear", since=10)
def _dequantize(ctx: NodeContext) -> Outputs:
    return _quant_params(ctx, _dequantized(ctx))


@register("DynamicQuantizeLinear", since=11)
def _dynamic_quantize(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    return [ss.ops.cast(x, "uint8"), scalar_of(x, "float32"), scalar_of(x, "uint8")]


def _dtype_or_input(ctx: NodeContext) -> Expr:
    x = ctx.input(0)
    if ctx.has_attr("dtype"):
        return ss.ops.cast(x, ctx.attr_dtype("dtype"))
    return ss.ops.copy(x)


@register(["RandomNormalLike", "RandomUniformLike"], since=1)
def _random_like(ctx: NodeContext) -> Outputs:
    return _dtype_or_input(ctx)


@register("Bernoulli", since=15)
def _bernoulli(ctx: NodeContext) -> Outputs:
    return _dtype_or_input(ctx)


@register(["RandomNormal", "RandomUniform"], since=1)
def _random(ctx: NodeContext) -> Outputs:
    shape = ctx.attr_ints("shape")
    if shape is None:
        ctx.fail(BAD_ATTRIBUTE, "attribute 'shape' is required")
    return ss.ops.zeros(shape, ctx.attr_dtype("dtype", 1))


@register("Multinomial", since=7)
def _multinomial(ctx: NodeContext) -> Outputs:
    y = set_dim(ctx.input(0), 1, ctx.attr_int("sample_size", 1))
    return ss.ops.cast(y, ctx.attr_dtype("dtype", 6))


@register(["HannWindow", "HammingWindow", "BlackmanWindow"], since=17, value_inputs=(0,))
def _window(ctx: NodeContext) -> Outputs:
    size = ctx.ints(0, "the size")[0]
    if size < 0:
        ctx.fail(BAD_ATTRIBUTE, f"the window size must be non-negative, got {size}")
    return ss.Constant(shape=(size,), dtype=ctx.attr_dtype("output_datatype", 1))


@register("MelWeightMatrix", since=17, value_inputs=(0, 1))
def _mel(ctx: NodeContext) -> Outputs:
    bins = ctx.ints(0, "the number of mel bins")[0]
    n = ctx.ints(1, "the DFT length")[0]
    return ss.Constant(shape=(n // 2 + 1, bins), dtype=ctx.attr_dtype("output_datatype", 1))


def _loss(ctx: NodeContext) -> Expr:
    """The loss of scores ``(N, C, d1, ...)`` (rank >= 2) for a target ``(N, d1, ...)``, the scores'
    shape without the class axis, and a weight ``(C,)`` (the spec; onnxruntime's function body
    also runs a target smaller than that, and a weight of other than ``C`` entries when no target
    entry reads past it): the target's shape with ``reduction="none"``, else a scalar."""
    reduction = ctx.attr_str("reduction", "mean", ("none", "sum", "mean"))
    x = ctx.input(0)
    r = ctx.rank(0)
    if r is not None and r < 2:
        ctx.fail(RANK_MISMATCH, f"the scores must have rank >= 2 (N, C, ...), got rank {r}")
    with ctx.checking("the target is the scores' shape without the class axis 1"):
        per = stacked(ss.ops.sum(x, axis=1), ctx.input(1))  # the target: the scores without axis 1
    if ctx.has_input(2):
        with ctx.checking("the weight is (C,), the scores' classes (axis 1)"):
            per = ss.ops.cast_like(per, stacked(ss.ops.sum(x, axis=1, exclude=True), ctx.input(2)))
    loss = ss.ops.take(per, ss.ops.int_tensor(0), axis=0)
    return loss if reduction == "none" else ss.ops.sum(loss)


@register("NegativeLogLikelihoodLoss", since=12)
def _nll(ctx: NodeContext) -> Outputs:
    return _loss(ctx)


@register("SoftmaxCrossEntropyLoss", since=12)
def _sce(ctx: NodeContext) -> Outputs:
    loss = _loss(ctx)
    return [loss, ss.ops.copy(ctx.input(0)) if ctx.has_output(1) else None]


@register("RotaryEmbedding", since=23)
def _rotary_embedding(ctx: NodeContext) -> Outputs:
    """``X``'s type. The caches must be ``(B, S, r/2)`` for ``X``'s batch ``B`` and sequence ``S``
    and the rotated width ``r`` (``rotary_embedding_dim``, else the head size): as given, or
    gathered from ``(max_position, r/2)`` tables by ``position_ids (B, S)`` (an index bound).
    onnxruntime checks this exactly (the numpy reference broadcasts a batch of 1; the exporter of
    torch 2.13 writes ``(1, S, r/2)`` caches for Llama at opset 23, which then run at batch 1 only)."""
    x = ctx.input(0)
    rank = ctx.need_rank(0, "RotaryEmbedding")
    if rank == 4:  # (B, H, S, D)
        bsd = ss.ops.sum(x, axis=1)
    elif rank == 3:  # (B, S, H*D)
        heads = ctx.attr_int("num_heads", 0)
        if heads < 1:
            ctx.fail(BAD_ATTRIBUTE, "a 3-d input needs the attribute num_heads")
        bsd = ss.ops.sum(ss.ops.reshape(x, (0, 0, heads, -1)), axis=2)
    else:
        ctx.fail(RANK_MISMATCH, f"X must be 3-d or 4-d, got rank {rank}")
    rot = ctx.attr_int("rotary_embedding_dim", 0)
    if rot:
        bsd = ss.ops.strided_slice(bsd, [0], [rot], axes=[2])
    half = ss.ops.sum(ss.ops.reshape(bsd, (0, 0, 2, -1)), axis=2)  # (B, S, r/2)
    cos, sin = ctx.input(1), ctx.input(2)
    if ctx.has_input(3):  # tables of one shape (onnxruntime: "must have the same shape")
        with ctx.checking("cos_cache and sin_cache have one shape"):
            tables = ss.ops.stack([cos, ss.ops.cast_like(sin, cos)], axis=0)
            cos, sin = (ss.ops.take(tables, ss.ops.int_tensor(i), axis=0) for i in (0, 1))
        with ctx.checking("position_ids index the caches' rows (max_position)"):
            cos, sin = (ss.ops.take(c, ctx.input(3), axis=0, mode="fast") for c in (cos, sin))
    with ctx.checking("the caches are (batch, sequence, rotary width / 2) of X"):
        both = ss.ops.stack([ss.ops.cast_like(half, cos), cos, sin], axis=0)  # equal shapes
    bs = ss.ops.sum(both, axis=(0, 3))  # (B, S)
    check = ss.ops.expand_dims(ss.ops.expand_dims(bs, 1), 3) if rank == 4 else ss.ops.expand_dims(bs, 2)
    return like(ss.ops.multiply(x, ss.ops.cast_like(check, x)), x)


register("SwiGLU", since=28)(like_product)


@register("BitCast", since=26)
def _bitcast(ctx: NodeContext) -> Outputs:
    return ss.ops.cast(ctx.input(0), ctx.attr_dtype("to"))


@register("CausalConvWithState", since=27)
def _causal_conv(ctx: NodeContext) -> Outputs:
    """The input ``(B, C, L)``'s type and the state ``(B, C, k - 1)``; the weight is ``(C, 1, k)``,
    the bias ``(C,)`` and the past state the state's shape (the spec; onnxruntime's function body
    also runs a weight of other than ``C`` channels, with another output shape)."""
    x = ctx.input(0)
    w = ctx.tensor_type(1)
    if w is not None and w.ndim is not None and w.ndim != 3:
        ctx.fail(BAD_ATTRIBUTE, f"the weight must be 3-d (C, 1, k), got {w}")
    if w is not None and w.ndim == 3 and w.dims[2].is_constant:
        state: Expr = set_dim(x, 2, int(w.dims[2]) - 1)
    else:  # a symbolic kernel size: the state's shape (B, C, k - 1) on shape values
        bc = value_slice(ss.ops.shape_of(x), [0], [2])
        k1 = ss.ops.subtract(value_slice(ss.ops.shape_of(ctx.input(1)), [2], [3]), ctx.constant([1], "int64"))
        state = ss.ops.cast_like(ss.ops.zeros(ss.ops.concatenate([bc, k1], axis=0), "float32"), x)
    channels = ss.ops.sum(x, axis=(0, 2))  # (C,)
    weight = ss.ops.cast_like(ctx.input(1), x)
    checks: list[Expr] = []
    with ctx.checking("the weight's axis 0 is the input's channels C"):
        checks.append(stacked(channels, ss.ops.sum(weight, axis=(1, 2))))
    with ctx.checking("the weight's axis 1 is 1"):
        checks.append(stacked(set_dim(weight, 1, 1), weight))
    if ctx.has_input(2):
        with ctx.checking("the bias is (C,), the input's channels"):
            checks.append(stacked(channels, ctx.input(2)))
    if ctx.has_input(3):
        with ctx.checking("past_state is (B, C, k - 1), of the input and the weight"):
            checks.append(stacked(state, ctx.input(3)))
    y: Expr = ss.ops.copy(x)
    for check in checks:
        y = ss.ops.cast_like(y, check)
    return [y, state]


_TRAINING = "ai.onnx.preview.training"
#: per optimizer: how many input groups follow ``R`` and ``T``, and which of them are output
_OPTIMIZERS = {"Adagrad": (3, (0, 2)), "Momentum": (3, (0, 2)), "Adam": (4, (0, 2, 3))}


@register(["Adagrad", "Adam", "Momentum"], since=1, domain=_TRAINING)
def _optimizer(ctx: NodeContext) -> Outputs:
    """``ai.onnx.preview.training`` optimizers: inputs ``R``, ``T``, then the tensors ``X``, their
    gradients and states (one group per kind); outputs the new ``X`` and states, each of its
    tensor's type (a gradient must have it too)."""
    groups, kept = _OPTIMIZERS[ctx.op_type]
    xs = [ctx.input(i) for i in range(2, ctx.num_inputs)]
    if not xs or len(xs) % groups:
        ctx.fail(BAD_ATTRIBUTE, f"{ctx.op_type} needs {groups} tensors per optimized tensor, got {len(xs)}")
    n = len(xs) // groups
    outs: list[Expr | None] = []
    for g in kept:
        for i in range(n):
            k = g * n + i if g else n + i  # (the gradient for X itself)
            with ctx.checking(f"input {k + 2} '{ctx.input_name(k + 2)}' has the shape of input {i + 2} (X)"):
                outs.append(like(xs[k], xs[i]))
    return outs[: ctx.num_outputs]
