"""Functional layers (``torch.nn.functional``): pooling, normalization, embedding, attention.

Each is the symshape operator with Relay's semantics, plus the checks torch makes:

* ``max_pool``/``avg_pool``/``adaptive_*_pool`` (indices, when asked for, shaped like the values);
* ``batch_norm``/``instance_norm``/``group_norm``: the channel axis must match the parameters;
  ``group_norm`` without parameters splits the channels into groups (a reshape whose ``-4``
  requires ``C % groups == 0``);
* ``layer_norm`` over the last ``len(normalized_shape)`` axes, each checked;
* ``embedding(ids, weight)`` is ``take(weight, ids, axis=0)``;
* ``one_hot(x, n)`` is ``x`` with a new last axis of ``n``.

Convolutions (plain and transposed, and ``aten.convolution``) are in
:mod:`symshape.torch.convert.conv`, attention in :mod:`symshape.torch.convert.attention`, resizing
in :mod:`symshape.torch.convert.resize`, padding in :mod:`symshape.torch.convert.padding`. Calls
with no symshape counterpart (``unfold``, ``grid_sample``, ...) are ``unsupported-op`` with the
reason, listed in the gap list.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

import symshape as ss
from symshape.encoding.conds import eq, ne
from symshape.relations.base import Context
from symshape.relations.common import product
from symshape.relations.nn import ceil_mode_window
from symshape.torch.context import Ctx, by_name
from symshape.torch.convert.conv import batched, nonempty_batch, per_axis
from symshape.torch.convert.empty import nonempty
from symshape.torch.convert.shape import sized
from symshape.torch.registry import converts
from symshape.torch.values import Unsupported

__all__ = [
    "per_axis",
    "with_indices",
    "pool",
    "ceil_window",
    "adaptive_pool",
    "batch_norm",
    "values_per_statistic",
    "layer_norm",
    "group_norm",
    "embedding",
]

aten = torch.ops.aten

_MAX = {1: ss.ops.max_pool1d, 2: ss.ops.max_pool2d, 3: ss.ops.max_pool3d}
_AVG = {1: ss.ops.avg_pool1d, 2: ss.ops.avg_pool2d, 3: ss.ops.avg_pool3d}


# -- pooling ------------------------------------------------------------------------------------


def pool(
    ctx: Ctx,
    kind: str,
    nd: int,
    x: ss.Expr,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: Any = False,
) -> ss.Expr:
    """Max or average pooling; ``stride`` defaults to the kernel size. torch requires each padding
    to be at most half the kernel; ``ceil_mode`` is a floor-mode window (see
    :func:`ceil_window`)."""
    k = per_axis(ctx, kernel_size, nd, "kernel_size")
    s = per_axis(ctx, stride, nd, "stride") if stride not in (None, []) else k
    p = per_axis(ctx, padding, nd, "padding")
    d = per_axis(ctx, dilation, nd, "dilation")
    if min(s) < 1 or min(d) < 1 or min(k) < 1 or min(p) < 0:
        raise ss.SymshapeError(
            ss.errors.BAD_ATTRIBUTE,
            f"{kind} pooling: kernel {k}, stride {s}, dilation {d}, padding {p} out of range",
        )
    for ki, pi in zip(k, p):
        if pi > ki // 2:  # (also at most half the dilated window, which is wider)
            raise ss.SymshapeError(
                ss.errors.BAD_ATTRIBUTE,
                f"{kind} pooling: pad should be at most half of kernel size, but got pad={pi} and "
                f"kernel_size={ki} (torch refuses it at every size)",
            )
    op = _MAX[nd] if kind == "max" else _AVG[nd]
    what = f"{kind}_pool{nd}d"
    xb, back = batched(ctx, x, what, nd + 2, nd + 1, nd + 2)
    xb = nonempty(xb, what, first=1)  # (torch: no axis but the batch is empty)
    if kind == "avg" and nd == 3:  # torch's avg_pool3d: no spatial axis shorter than the kernel
        for j, kj in enumerate(k):
            if kj > 1:
                at = ss.ops.int_tensor(kj - 1)
                ctx.let(ss.ops.take(xb, at, axis=j - 3, mode="raise"), f"check_kernel{j}")
    if not bool(ctx.static(ceil_mode, "ceil_mode")):
        return back(op(xb, pool_size=k, strides=s, padding=p, dilation=d))
    kk, dd, pb, pa = ceil_window(k, s, p, d)
    return back(op(xb, pool_size=kk, strides=s, padding=tuple(pb + pa), dilation=dd))


def ceil_window(
    k: tuple[int, ...], s: tuple[int, ...], p: tuple[int, ...], d: tuple[int, ...]
) -> tuple[list[int], list[int], list[int], list[int]]:
    """The floor-mode window (kernel, dilation, pads before, pads after) with ``ceil_mode``'s
    output size: :func:`symshape.relations.nn.ceil_mode_window` on each axis (the rule the ONNX
    importer's ``window_plan`` uses too).

    >>> ceil_window((2,), (2,), (0,), (1,))
    ([2], [1], [0], [1])
    >>> ceil_window((1,), (2,), (0,), (1,))
    ([1], [1], [0], [0])
    """
    axes = [ceil_mode_window(k[i], s[i], d[i], p[i]) for i in range(len(k))]
    return [a[0] for a in axes], [a[1] for a in axes], list(p), [a[2] for a in axes]


def with_indices(ctx: Ctx, out: ss.Expr) -> tuple[ss.Expr, ss.Expr]:
    """A pooling's ``(values, indices)``: the indices are int64, shaped like the values."""
    v = ctx.let(out, "values")
    return (v, ss.ops.cast(v, "int64"))


#: the arguments of ``F.max_pool*d``/``F.avg_pool*d`` after ``(input, kernel_size)``, in order
_POOL_ARGS = {
    "max": ("stride", "padding", "dilation", "ceil_mode", "return_indices"),
    "avg": ("stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"),
}


def _pool_fn(kind: str, nd: int, indices: bool = False) -> Any:
    """``F.max_pool{nd}d``/``F.avg_pool{nd}d`` (``indices``: the ``_with_indices`` forms)."""

    def fn(ctx: Ctx, input: Any, kernel_size: Any, *args: Any, **kwargs: Any) -> Any:
        a = by_name(_POOL_ARGS[kind], args, kwargs)
        out = pool(
            ctx,
            kind,
            nd,
            ctx.tensor(input),
            kernel_size,
            a.get("stride"),
            a.get("padding", 0),
            a.get("dilation", 1),
            a.get("ceil_mode", False),
        )
        both = indices or a.get("return_indices") or ctx.node_target in _WITH_INDICES
        return with_indices(ctx, out) if both else out

    return fn


#: the Python max poolings that return ``(values, indices)`` whatever ``return_indices`` says
_WITH_INDICES = tuple(getattr(F, f"max_pool{n}d_with_indices") for n in (1, 2, 3))
for _nd_ in (1, 2, 3):
    converts(
        getattr(F, f"max_pool{_nd_}d"),
        getattr(aten, f"max_pool{_nd_}d"),
        getattr(F, f"max_pool{_nd_}d_with_indices"),
    )(_pool_fn("max", _nd_))
    converts(getattr(F, f"avg_pool{_nd_}d"), getattr(aten, f"avg_pool{_nd_}d"))(_pool_fn("avg", _nd_))
converts(aten.max_pool2d_with_indices)(_pool_fn("max", 2, indices=True))
converts(aten.max_pool3d_with_indices)(_pool_fn("max", 3, indices=True))


def adaptive_pool(ctx: Ctx, kind: str, nd: int, x: ss.Expr, output_size: Any) -> ss.Expr:
    """Adaptive pooling to ``output_size`` (``None`` entries keep the input's size) of a batched or
    unbatched input: 2-d, 1-d as 2-d over a size-1 height (Swin's pooler: ``AdaptiveAvgPool1d(1)``
    over the tokens), and an average to size 1 in 3-d. torch averages to size 1 with a ``mean``
    over the last axes, so that takes any rank from ``nd``."""
    sizes = output_size if isinstance(output_size, (list, tuple)) else (output_size,) * nd
    if len(sizes) != nd:
        raise Unsupported(f"adaptive {kind} pooling in {nd}-d: output_size {output_size!r}")
    size = tuple(None if s is None else ctx.integer(s, "output_size") for s in sizes)
    what = f"adaptive_{kind}_pool{nd}d"
    ones = kind == "avg" and nd > 1 and size == (1,) * nd
    if ones and nd == 3:
        xb, back = batched(ctx, x, what, nd + 2, nd, -1)
        return back(ss.ops.mean(xb, axis=[-3, -2, -1], keepdims=True))
    if nd not in (1, 2):
        raise Unsupported(f"adaptive {kind} pooling in {nd}-d has no symshape operator yet")
    if kind == "max" or size != (1,) * nd:  # torch's checks of the input as given (an average
        # to size 1 is a mean: none)
        x = nonempty(x, what, first=1) if kind == "max" else nonempty(x, what, axes=range(-nd, 0))
    xb, back = batched(ctx, x, what, nd + 2, nd if ones else nd + 1, -1 if ones else nd + 2)
    op = ss.ops.adaptive_avg_pool2d if kind == "avg" else ss.ops.adaptive_max_pool2d
    if nd == 2:
        return back(op(xb, output_size=size))
    y = op(ss.ops.expand_dims(xb, 2), output_size=(1, size[0]))  # (N, C, 1, L)
    return back(ss.ops.squeeze(y, axis=[2]))


def _both(ctx: Ctx, kind: str) -> bool:
    """Whether a max pooling call returns ``(values, indices)`` whatever its arguments: the aten
    max forms and the Python ``*_with_indices`` ones."""
    aten_forms = (torch._ops.OpOverload, torch._ops.OpOverloadPacket)
    t = ctx.node_target
    return kind == "max" and (
        isinstance(t, aten_forms) or getattr(t, "__name__", "").endswith("_with_indices")
    )


def _adaptive_fn(kind: str, nd: int) -> Any:
    def fn(ctx: Ctx, input: Any, output_size: Any, return_indices: Any = False) -> Any:
        out = adaptive_pool(ctx, kind, nd, ctx.tensor(input), output_size)
        # (the aten max forms and F.adaptive_max_pool*d_with_indices always return both)
        return with_indices(ctx, out) if return_indices or _both(ctx, kind) else out

    return fn


for _nd_ in (1, 2, 3):
    for _kind in ("avg", "max"):
        _keys: list[Any] = [getattr(F, f"adaptive_{_kind}_pool{_nd_}d")]
        if _kind == "max":
            _keys.append(getattr(F, f"adaptive_max_pool{_nd_}d_with_indices"))
        for _n in (f"adaptive_{_kind}_pool{_nd_}d", f"_adaptive_{_kind}_pool{_nd_}d"):
            if hasattr(aten, _n):
                _keys.append(getattr(aten, _n))
        converts(*_keys)(_adaptive_fn(_kind, _nd_))


# -- normalization ------------------------------------------------------------------------------


def _per_channel(
    weight: ss.Expr | None, bias: ss.Expr | None, mean: ss.Expr | None, var: ss.Expr | None
) -> tuple[ss.Expr, ss.Expr, ss.Expr, ss.Expr] | None:
    """A batch norm's four per-channel vectors, each one not given replaced by one that is (None
    when none is)."""
    given = [v for v in (weight, bias, mean, var) if v is not None]
    if not given:
        return None
    g, b, m, v = (p if p is not None else given[0] for p in (weight, bias, mean, var))
    return g, b, m, v


def batch_norm(
    ctx: Ctx,
    x: ss.Expr,
    mean: ss.Expr | None,
    var: ss.Expr | None,
    weight: ss.Expr | None,
    bias: ss.Expr | None,
) -> ss.Expr:
    """Batch normalization over the channel axis (1): every given vector has ``C`` entries."""
    vecs = _per_channel(weight, bias, mean, var)
    return x if vecs is None else ss.ops.batch_norm(x, *vecs, axis=1)[0]


def values_per_statistic(ctx: Ctx, x: ss.Expr, kind: str, groups: int = 1) -> None:
    """torch's check that a normalization computing statistics from its input has more than one
    value per statistic ("Expected more than 1 value per channel when training"): a training batch
    norm's ``N * prod(spatial)`` per channel (``kind="batch"``), an instance norm's
    ``prod(spatial)`` per sample and channel (``"instance"``), and torch's count for a group norm,
    ``N * C // groups * prod(spatial)`` (``"group"``). torch refuses exactly a count of 1 (an
    empty input runs; an instance norm of a 1-d or 2-d input has 1): :data:`STATS_COUNT`. A 1-d
    input: a group norm refuses it, a batch norm runs it only empty."""
    x = x if isinstance(x, ss.Var) else ctx.let(x, "input")
    ctx.let(STATS_COUNT(x, kind=kind, groups=groups), "check_stats")


@ss.relation("torch.stats_count")
def _stats_count_rel(ctx: Context, args: Sequence[ss.Type], attrs: Any) -> bool:
    x, out = args
    if not isinstance(x, ss.TensorType):
        return False
    kind = attrs.get("kind")
    if x.ndim is None:
        if not ctx.final:
            return False
    elif x.ndim < 2 and kind == "group":
        ctx.fail(ss.errors.RANK_MISMATCH, f"group_norm: expected at least 2 dimensions, got `{x}` (torch)")
    else:
        dims = tuple(ctx.resolve_dim(d) for d in x.dims)
        if any(d.has_unknowns for d in dims) and not ctx.final:
            return False
        if x.ndim < 2 and kind == "batch":
            ctx.require(
                eq(dims[0], 0), ss.errors.RANK_MISMATCH, f"batch_norm of `{x}` runs only empty (torch)"
            )
        count = product(dims[2:])
        if kind == "batch":
            count = dims[0] * count
        elif kind == "group":
            count = (dims[0] * dims[1]) // int(attrs.get("groups")) * count
        ctx.require(
            ne(count, 1),
            ss.errors.SHAPE_MISMATCH,
            f"{kind} norm computing statistics needs more than 1 value per statistic, and `{x}` has"
            f" {count} (torch refuses exactly 1)",
        )
    ctx.assign(out, ss.Tensor(None, x.dtype))
    return True


#: ``torch.stats_count(x, kind=..., groups=...)``: torch's check that a normalization computing
#: statistics from ``x`` does not have exactly one value per statistic (its result: nothing to use)
STATS_COUNT = ss.register_op(
    "torch.stats_count",
    "torch.stats_count",
    1,
    doc="torch's check that a norm computing statistics has not exactly 1 value per statistic",
    attr_types={"kind": "str", "groups": "int"},
)


def _opt(ctx: Ctx, v: Any, what: str) -> ss.Expr | None:
    return ctx.tensor(v, what) if v is not None else None


def _vectors(
    ctx: Ctx, running_mean: Any, running_var: Any, weight: Any, bias: Any
) -> tuple[ss.Expr | None, ss.Expr | None, ss.Expr | None, ss.Expr | None]:
    """A batch norm's optional per-channel tensors: ``(mean, var, weight, bias)``."""
    return (
        _opt(ctx, running_mean, "running_mean"),
        _opt(ctx, running_var, "running_var"),
        _opt(ctx, weight, "weight"),
        _opt(ctx, bias, "bias"),
    )


#: the per-channel arguments after ``input``, in the order each spelling takes them
_NORM_ARGS = {
    "F": ("running_mean", "running_var", "weight", "bias"),
    "aten": ("weight", "bias", "running_mean", "running_var"),
}


def _batch_norm_fn(spelling: str) -> Any:
    """``F.batch_norm``/``F.instance_norm``, or their aten forms (weight and bias first)."""

    def fn(ctx: Ctx, input: Any, *args: Any, **kwargs: Any) -> Any:
        x = ctx.tensor(input)
        a = by_name(_NORM_ARGS[spelling] + _STATS_ARG[spelling], args, kwargs)
        vecs = (a.get(n) for n in ("running_mean", "running_var", "weight", "bias"))
        training = ctx.static(a.get("training", False), "training")
        if spelling == "F" and ctx.node_target is F.batch_norm and training:
            values_per_statistic(ctx, x, "batch")
        elif spelling == "F" and ctx.node_target is F.instance_norm:
            if a.get("weight") is not None or a.get("bias") is not None:
                nonempty_batch(ctx, x)
            if ctx.static(a.get("use_input_stats", True), "use_input_stats"):
                values_per_statistic(ctx, x, "instance")
        return batch_norm(ctx, x, *_vectors(ctx, *vecs))

    return fn


#: (the Python spellings check the statistics' counts; the aten ones, run by exported programs, do not)
_STATS_ARG = {"F": ("training",), "aten": ()}
converts(F.batch_norm, F.instance_norm)(_batch_norm_fn("F"))
converts(aten.batch_norm, aten.instance_norm)(_batch_norm_fn("aten"))


@converts(
    aten._native_batch_norm_legit_no_training,
    aten._native_batch_norm_legit,
    aten.native_batch_norm,
    aten._native_batch_norm_legit_functional,
)
def aten_native_batch_norm(
    ctx: Ctx, input: Any, weight: Any, bias: Any, running_mean: Any, running_var: Any, *args: Any
) -> Any:
    """``(out, save_mean, save_invstd)`` (the saved statistics have ``C`` entries); the functional
    form (core ATen of a training model) also returns the new running mean and variance."""
    x = ctx.tensor(input)
    if getattr(ctx.node_target, "_overloadname", "") == "no_stats":  # (input, weight, bias, training, ...)
        running_mean = running_var = None
    mean, var, w, b = _vectors(ctx, running_mean, running_var, weight, bias)
    vecs = _per_channel(w, b, mean, var)
    if vecs is None:  # (no affine parameters, no running statistics: per-channel means of x)
        stat = ctx.let(ss.ops.mean(ss.ops.reshape(x, (0, 0, -1)), axis=[0, 2]), "stat")
        return (x, stat, stat)
    call = ctx.let(ss.ops.batch_norm(x, *vecs, axis=1), "bn")
    packet = getattr(ctx.node_target, "overloadpacket", ctx.node_target)
    if packet is aten._native_batch_norm_legit_functional:
        return (call[0], call[1], call[2], call[1], call[2])
    return (call[0], call[1], call[2])


def layer_norm(
    ctx: Ctx, x: ss.Expr, normalized_shape: Any, weight: ss.Expr | None, bias: ss.Expr | None
) -> ss.Expr:
    """Layer normalization over the last ``len(normalized_shape)`` axes, which must equal it."""
    shape = ctx.sizes(normalized_shape, "normalized_shape")
    if len(shape) == 1:
        vec = ss.ops.cast_like(ss.Constant(shape=shape, dtype="float32"), x)
        g = weight if weight is not None else vec
        return ss.ops.layer_norm(x, g, bias if bias is not None else g, axis=-1)
    out = x
    for i, s in enumerate(reversed(shape)):
        out = sized(out, -(i + 1), s)
    if weight is not None:
        out = ss.ops.multiply(out, weight)
    if bias is not None:
        out = ss.ops.add(out, bias)
    return out


@converts(F.layer_norm, aten.layer_norm)
def f_layer_norm(
    ctx: Ctx,
    input: Any,
    normalized_shape: Any,
    weight: Any = None,
    bias: Any = None,
    *args: Any,
    **kwargs: Any,
) -> Any:
    return layer_norm(
        ctx, ctx.tensor(input), normalized_shape, _opt(ctx, weight, "weight"), _opt(ctx, bias, "bias")
    )


@converts(aten.native_layer_norm)
def native_layer_norm(ctx: Ctx, input: Any, normalized_shape: Any, weight: Any, bias: Any, eps: Any) -> Any:
    """``(out, mean, rstd)``: the statistics keep the leading axes and have 1s for the others."""
    x = ctx.tensor(input)
    k = len(ctx.sizes(normalized_shape, "normalized_shape"))
    out = layer_norm(ctx, x, normalized_shape, _opt(ctx, weight, "weight"), _opt(ctx, bias, "bias"))
    stat = ctx.let(ss.ops.mean(x, axis=tuple(range(-k, 0)), keepdims=True), "stat")
    return (out, stat, stat)


@converts(F.rms_norm, aten.rms_norm)
def rms_norm(ctx: Ctx, input: Any, normalized_shape: Any, weight: Any = None, eps: Any = None) -> Any:
    return layer_norm(ctx, ctx.tensor(input), normalized_shape, _opt(ctx, weight, "weight"), None)


def group_norm(ctx: Ctx, x: ss.Expr, groups: int, weight: ss.Expr | None, bias: ss.Expr | None) -> ss.Expr:
    """Group normalization: the channels (axis 1) split into ``groups`` and match the parameters."""
    split = ss.ops.reshape(x, (0, -4, groups, -1, -2))
    out = ss.ops.reshape_like(split, x)
    for v in (weight, bias):
        if v is not None:
            out = ss.ops.bias_add(out, v, axis=1)
    return out


@converts(F.group_norm, aten.group_norm)
def f_group_norm(
    ctx: Ctx, input: Any, num_groups: Any, weight: Any = None, bias: Any = None, *args: Any, **kwargs: Any
) -> Any:
    x, groups = ctx.tensor(input), ctx.integer(num_groups, "num_groups")
    if ctx.node_target is F.group_norm:
        values_per_statistic(ctx, x, "group", groups)
    return group_norm(
        ctx,
        x,
        groups,
        _opt(ctx, weight, "weight"),
        _opt(ctx, bias, "bias"),
    )


@converts(aten.native_group_norm)
def native_group_norm(
    ctx: Ctx, input: Any, weight: Any, bias: Any, n: Any, c: Any, hxw: Any, group: Any, eps: Any
) -> Any:
    """``(out, mean, rstd)`` (core ATen's group norm; ``n``, ``c``, ``hxw`` are ``x``'s sizes): the
    statistics are ``(N, group)``."""
    x = ctx.tensor(input)
    groups = ctx.integer(group, "group")
    out = group_norm(ctx, x, groups, _opt(ctx, weight, "weight"), _opt(ctx, bias, "bias"))
    stat = ctx.let(ss.ops.mean(ss.ops.reshape(x, (0, groups, -1)), axis=2), "stat")
    return (out, stat, stat)


# -- embedding, one_hot -------------------------------------------------------------------------


def embedding(x: ss.Expr, weight: ss.Expr) -> ss.Expr:
    """``weight[ids]``: ``take(weight, ids, axis=0, mode="nonnegative")`` (torch raises on an index
    out of range, negative ones included; it neither clamps nor counts from the end)."""
    return ss.ops.take(weight, x, axis=0, mode="nonnegative")


@converts(F.embedding)
def f_embedding(ctx: Ctx, input: Any, weight: Any, *args: Any, **kwargs: Any) -> Any:
    return embedding(ctx.tensor(input), ctx.tensor(weight, "weight"))


@converts(aten.embedding)
def aten_embedding(ctx: Ctx, weight: Any, indices: Any, *args: Any) -> Any:
    return embedding(ctx.tensor(indices), ctx.tensor(weight, "weight"))


@converts(F.one_hot)
def one_hot(ctx: Ctx, input: Any, num_classes: Any = -1) -> Any:
    """``one_hot(x, n)``: ``x``'s shape with a new last axis of ``n`` (int64)."""
    n = ctx.integer(num_classes, "num_classes")
    if n < 0:
        raise Unsupported("one_hot without num_classes has a data-dependent size")
    x = ss.ops.cast(ctx.tensor(input), "int64")
    return ss.ops.add(ss.ops.expand_dims(x, axis=-1), ss.Constant(shape=(n,), dtype="int64"))


# -- the rest ------------------------------------------------------------------------------------


_NO_OPERATOR = {
    F.unfold: "unfold (im2col)",
    F.fold: "fold (col2im)",
    F.grid_sample: "grid_sample",
    F.embedding_bag: "embedding_bag",
    F.cross_entropy: "cross_entropy",
    F.nll_loss: "nll_loss",
}


def _no_operator(what: str) -> Any:
    def fn(ctx: Ctx, *args: Any, **kwargs: Any) -> Any:
        raise Unsupported(f"{what} has no symshape operator yet")

    return fn


for _fn, _what in _NO_OPERATOR.items():
    converts(_fn)(_no_operator(_what))
