"""Convolution and pooling: ``Conv``, ``ConvInteger``, ``QLinearConv``, ``MaxPool``,
``AveragePool``, ``LpPool``, the global pools, and ``Dropout``.

Per spatial axis with input size ``d``, kernel ``k``, dilation ``dil``, stride ``s``, pads ``pb``
(begin) and ``pa`` (end), and ``K = dil*(k - 1) + 1``:

* explicit pads: ``(d + pb + pa - K)//s + 1`` -- symshape's convolution and pooling formula;
* ``auto_pad`` ``SAME_UPPER``/``SAME_LOWER``: ``ceil(d/s)``, which is the formula above with total
  padding ``K - 1`` (the split between begin and end does not change the size); ``VALID``: no pads;
* pooling with ``ceil_mode``: ONNX (like PyTorch) drops a last window that would start in the end
  padding. The size is the number of window starts ``0, s, 2s, ...`` up to
  ``min(d + pb + pa - K + s - 1, d + pb - 1)``; which bound is smaller depends only on constants
  (``pa + s <= K``), so each axis is a floor-mode window: the kernel with ``s - 1`` extra end
  padding, or a 1-wide window over ``d + pb``.
* a pool window longer than the padded input (``num = d + pb + pa - K < 0``): onnxruntime runs it
  while ``num > -2s``, with ``trunc(num/s) + 1`` windows (C++ division: 1 window for ``-s < num <
  0``, 0 for ``-2s < num <= -s``; ``ceil(num/s) + 1`` in ``ceil_mode``), and refuses it below.
  onnx's reference evaluator disagrees (``floor(num/s) + 1``: 0 windows down to ``num = -s``,
  refused below; as onnxruntime in ``ceil_mode``). symshape follows onnxruntime over a constant
  size (the pools are ``onnx.max_pool{nd}d``/``onnx.avg_pool{nd}d``: the ``pool{nd}d`` relation
  with ``short_windows``); a symbolic size keeps the condition that the window fits (``d + pb + pa
  >= K``), which refuses the sizes where onnxruntime gives 0 or 1 window there: the exact size,
  ``max(floor(num/s), min(ceil(num/s), 0)) + 1``, would replace every pooled size of a model of
  symbolic image size by such a term, nested layer after layer.
* onnxruntime's pools (global ones too) refuse an empty axis but the batch unless the batch is
  empty too ("Only N can be zero"): ``N == 0 or C*H*W >= 1`` (``only_batch_empty``), a guard where
  a size may be 0.
* ``ConvTranspose`` and ``MaxUnpool``: :mod:`symshape.onnx.ops.conv_transpose`.

The symshape operators cover 1 to 3 spatial axes; 4 or more are unsupported.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

import symshape as ss
from symshape import Expr
from symshape.encoding.types import Attrs, Type
from symshape.errors import BAD_ATTRIBUTE, RANK_MISMATCH, SHAPE_MISMATCH
from symshape.ir.op import Op, PreparedCall
from symshape.onnx.context import CORE_OP, NodeContext
from symshape.onnx.ops.common import PlanTable, checked, prepare, value_slice
from symshape.onnx.registry import Outputs, register
from symshape.relations.base import Context
from symshape.relations.nn import ceil_mode_window, only_batch_empty, parse_pool_attrs
from symshape.relations.operands import tensor_or_defer

__all__ = ["Window", "window_plan", "conv_with_bias"]

_AUTO_PAD = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")


def auto_pad_of(ctx: NodeContext) -> str:
    """The ``auto_pad`` attribute; an empty one is ``NOTSET``, as onnxruntime reads it (every
    windowed operator)."""
    return ctx.attr_str("auto_pad", "NOTSET", (*_AUTO_PAD, "")) or "NOTSET"


@dataclass(frozen=True, slots=True)
class Window:
    """Floor-mode window parameters per spatial axis, ready for a symshape conv or pool."""

    kernel: list[int]
    strides: list[int]
    dilation: list[int]
    pad_before: list[int]
    pad_after: list[int]

    @property
    def padding(self) -> tuple[int, ...]:
        return tuple(self.pad_before + self.pad_after)


def _spatial_attr(ctx: NodeContext, name: str, nd: int, default: int) -> list[int]:
    v = ctx.attr_ints(name)
    if v is None:
        return [default] * nd
    if len(v) != nd:
        ctx.fail(BAD_ATTRIBUTE, f"attribute '{name}' has {len(v)} values for {nd} spatial axes")
    return list(v)


def window_plan(ctx: NodeContext, kernel: Sequence[int], *, pool: bool) -> Window:
    """The floor-mode window that gives ONNX's output size (see the module docstring)."""
    nd = len(kernel)
    strides = _spatial_attr(ctx, "strides", nd, 1)
    dil = _spatial_attr(ctx, "dilations", nd, 1)
    if min(strides, default=1) < 1 or min(dil, default=1) < 1:
        ctx.fail(BAD_ATTRIBUTE, "strides and dilations must be >= 1")
    auto_pad = auto_pad_of(ctx)
    pads = ctx.attr_ints("pads")
    if pads is None or auto_pad != "NOTSET":
        pads = (0,) * (2 * nd)
    if len(pads) != 2 * nd:
        ctx.fail(BAD_ATTRIBUTE, f"attribute 'pads' has {len(pads)} values for {nd} spatial axes")
    if min(pads, default=0) < 0:
        ctx.fail(BAD_ATTRIBUTE, f"pads must be non-negative, got {list(pads)}")
    pb, pa = list(pads[:nd]), list(pads[nd:])
    k = list(kernel)
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        for i in range(nd):
            total = dil[i] * (k[i] - 1)
            pb[i], pa[i] = total // 2, total - total // 2
        return Window(k, strides, dil, pb, pa)
    ceil_mode = pool and bool(ctx.attr("ceil_mode", 0))
    if ceil_mode:
        for i in range(nd):
            k[i], dil[i], pa[i] = ceil_mode_window(k[i], strides[i], dil[i], pa[i])
    return Window(k, strides, dil, pb, pa)


def _nd(ctx: NodeContext, kernel: Sequence[int] | None, w_index: int | None) -> int:
    if kernel is not None:
        return len(kernel)
    if w_index is not None:
        r = ctx.rank(w_index)
        if r is not None:
            return r - 2
    r = ctx.rank(0)
    if r is None:
        ctx.unsupported(CORE_OP, "the number of spatial axes is not known (no kernel_shape, unknown ranks)")
    return r - 2


def _check_nd(ctx: NodeContext, nd: int) -> None:
    if nd < 1:
        ctx.fail(RANK_MISMATCH, "the input needs at least one spatial axis")
    if nd > 3:
        ctx.unsupported(CORE_OP, f"{nd} spatial axes (symshape's convolutions and pools have 1 to 3)")


def _kernel_from_weight(ctx: NodeContext, w_index: int, nd: int) -> list[int]:
    ks = ctx.attr_ints("kernel_shape")
    if ks is not None:
        return list(ks)
    t = ctx.tensor_type(w_index)
    if t is not None and t.ndim == nd + 2 and all(d.is_constant for d in t.dims[2:]):
        return [int(d) for d in t.dims[2:]]
    ctx.unsupported(CORE_OP, "the kernel size is not a constant (no kernel_shape, weight shape not static)")


def _conv(ctx: NodeContext, x: Expr, w: Expr, w_index: int, out_dtype: str = "") -> Expr:
    # with kernel_shape given, the call's attributes follow from the node's alone
    plan = _planned(ctx, ("conv", out_dtype), "kernel_shape", lambda: _conv_plan(ctx, w_index, out_dtype))
    return plan(x, w)


def _conv_plan(ctx: NodeContext, w_index: int, out_dtype: str) -> _Plan:
    """The symshape convolution and its attributes."""
    nd = _nd(ctx, ctx.attr_ints("kernel_shape"), w_index)
    _check_nd(ctx, nd)
    auto_pad = auto_pad_of(ctx)
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        kernel = _kernel_from_weight(ctx, w_index, nd)
    else:
        kernel = list(ctx.attr_ints("kernel_shape") or [1] * nd)
    win = window_plan(ctx, kernel, pool=False)
    group = ctx.attr_int("group", 1)
    if group < 1:
        ctx.fail(BAD_ATTRIBUTE, f"group must be >= 1, got {group}")
    ks = ctx.attr_ints("kernel_shape")
    fn = {1: ss.ops.conv1d, 2: ss.ops.conv2d, 3: ss.ops.conv3d}[nd]
    kw = {
        "strides": tuple(win.strides),
        "padding": win.padding,
        "dilation": tuple(win.dilation),
        "groups": group,
        "kernel_size": None if ks is None else tuple(ks),
        "out_dtype": out_dtype,
    }
    return PreparedCall.of(fn, 2, **kw).build  # (fn(x, w, **kw), its attributes checked once)


#: what a node's call of a symshape operator is, as a function of its inputs (the operator and
#: the attributes fixed)
_Plan = Callable[..., Expr]
#: plans by what they follow from (a tag and the node's attributes, NodeContext.attr_key): a model
#: has many nodes of the same attributes, and their calls then take the same tuples, which
#: symshape's operator call finds its checked attributes for by identity
_PLANS: PlanTable[tuple[object, ...], _Plan] = PlanTable(__name__)


def _planned(ctx: NodeContext, tag: object, needs: str | None, make: Callable[[], _Plan]) -> _Plan:
    """``make()``, or the plan it gave before for the same ``tag`` and attributes (when the plan
    follows from them alone: the node has the attribute ``needs``, unless None). A plan whose
    making raised is not kept. The attributes are keyed by their bytes
    (:meth:`NodeContext.attribute_bytes`: none is read), else by their values
    (:meth:`NodeContext.attr_key`)."""
    fields = ctx.attribute_bytes()
    key: tuple[object, ...] | None
    if fields is not None:
        key = (tag, fields)
        plan = _PLANS.get(key)
        if plan is not None:  # (equal bytes, equal attributes: ``needs`` among them)
            return plan
        if needs is not None and not ctx.has_attr(needs):
            return make()
    else:
        if needs is not None and not ctx.has_attr(needs):
            return make()
        key = ctx.attr_key()
        if key is None:
            return make()
        key = (tag, key)
        plan = _PLANS.get(key)
        if plan is not None:
            return plan
    return _PLANS.put(key, make())


def conv_with_bias(ctx: NodeContext, bias: int) -> Expr:
    """Convolution of input 0 by the weight at input 1, plus the optional bias at input ``bias``
    (``Conv``, ``DeformConv``: offsets and mask do not change the type)."""
    y = _conv(ctx, ctx.input(0), ctx.input(1), 1)
    if ctx.has_input(bias):
        y = ss.ops.bias_add(y, ctx.input(bias), axis=1)
    return y


@register("Conv", since=1)
def _conv_op(ctx: NodeContext) -> Outputs:
    return conv_with_bias(ctx, 2)


@register("ConvInteger", since=10)
def _conv_integer(ctx: NodeContext) -> Outputs:
    x = ss.ops.cast(ctx.input(0), "int32")
    w = ss.ops.cast(ctx.input(1), "int32")
    return _conv(ctx, x, w, 1, "int32")


@register("QLinearConv", since=10)
def _qlinear_conv(ctx: NodeContext) -> Outputs:
    x = ss.ops.cast(ctx.input(0), "int32")
    w = ss.ops.cast(ctx.input(3), "int32")
    y = _conv(ctx, x, w, 3, "int32")
    if ctx.has_input(8):
        y = ss.ops.bias_add(y, ctx.input(8), axis=1)
    return ss.ops.cast_like(y, ctx.input(7))


# ----------------------------------------------------------------------------------------------
# pooling


def _pool(ctx: NodeContext, kind: str) -> Expr:
    plan = _planned(ctx, kind, None, lambda: _pool_plan(ctx, kind))
    y = plan(ctx.input(0))
    if ctx.op_type != "LpPool" and auto_pad_of(ctx) in ("SAME_UPPER", "SAME_LOWER"):
        if ctx.op_type != "MaxPool" or _plain_max_pool(ctx):
            y = _same_pads_checked(ctx, y)
    return y


def _plain_max_pool(ctx: NodeContext) -> bool:
    """Whether onnxruntime runs this ``MaxPool`` with its single-output kernel, which refuses a
    negative ``SAME`` pad ("padding values must be non-negative"): one output, every dilation 1 and
    ``storage_order`` 0; otherwise its ``MaxPool``-8 kernel runs it (as onnx's reference evaluator
    does), whatever the pad."""
    dil = ctx.attr_ints("dilations") or ()
    return not ctx.has_output(1) and all(v == 1 for v in dil) and ctx.attr_int("storage_order", 0) == 0


def _same_pads_checked(ctx: NodeContext, y: Expr) -> Expr:
    """``y`` once onnxruntime's total ``SAME`` pad of a MaxPool/AveragePool, ``(ceil(d/s) - 1)*s
    + K - d``, is not negative on any axis: ``(d - 1) % s < K``, false on some sizes when the
    stride is over the window (an error for a static size, else a guard)."""
    ks, i64 = ctx.attr_ints("kernel_shape") or (), "int64"
    strides = ctx.attr_ints("strides") or (1,) * len(ks)
    dil = ctx.attr_ints("dilations") or (1,) * len(ks)
    checks, t = [], ctx.tensor_type(0)
    for i, (k, st, dl) in enumerate(zip(ks, strides, dil)):
        if st <= dl * (k - 1) + 1:
            continue
        if t is not None and t.ndim is not None and t.ndim > 2 + i and t.dims[2 + i].is_constant:
            if (int(t.dims[2 + i]) - 1) % st > dl * (k - 1):
                msg = f"size {t.dims[2 + i]} on spatial axis {i} with stride {st}: a negative SAME pad"
                ctx.fail(SHAPE_MISMATCH, f"{msg} (onnxruntime refuses it)")
            continue
        d = value_slice(ss.ops.shape_of(ctx.input(0)), [2 + i], [3 + i])
        rest = ss.ops.mod(ss.ops.subtract(d, ctx.constant([1], i64)), ctx.constant([st], i64))
        checks.append(ss.ops.full(0.0, ss.ops.subtract(ctx.constant([dl * (k - 1)], i64), rest)))
    if not checks:
        return y
    with ctx.checking("the SAME pads are not negative: (the axis' size - 1) % stride < the window"):
        return checked(y, checks)


def _pool_plan(ctx: NodeContext, kind: str) -> _Plan:
    """The symshape pool and its attributes."""
    ks = ctx.attr_ints("kernel_shape")
    if ks is None:
        ctx.fail(BAD_ATTRIBUTE, "attribute 'kernel_shape' is required")
    nd = len(ks)
    _check_nd(ctx, nd)
    win = window_plan(ctx, ks, pool=True)
    kw: dict[str, object] = {
        "pool_size": tuple(win.kernel),
        "strides": tuple(win.strides),
        "padding": win.padding,
        "dilation": tuple(win.dilation),
    }
    # onnxruntime's counts over a constant axis shorter than the window, and its empty axes
    kw["short_windows"] = "floor" if ctx.attr("ceil_mode", 0) else "trunc"
    kw["only_batch_empty"] = True
    op = _POOL_OPS[kind, nd]
    p = prepare(op, 1, **kw)  # (the call it makes, its attributes checked once)
    return functools.partial(op, **kw) if p is None else p.build


def _pool_op(kind: str, nd: int) -> Op:
    """``onnx.max_pool{nd}d``/``onnx.avg_pool{nd}d``: symshape's pooling (relation ``pool{nd}d``)
    with onnxruntime's rules (``short_windows``, ``only_batch_empty``; see the module
    docstring)."""
    name = f"onnx.{kind}_pool{nd}d"

    def check(attrs: Attrs, nargs: int) -> None:
        parse_pool_attrs(attrs, nd, name)

    kinds = {"pool_size": "ints", "strides": "ints", "padding": "ints", "dilation": "ints",
             "short_windows": "str", "only_batch_empty": "bool"}  # fmt: skip
    doc = f"ONNX {kind} pooling over {nd} spatial axes (onnxruntime's rules)"
    return ss.register_op(name, f"pool{nd}d", 1, check_attrs=check, doc=doc, attr_types=kinds)


_POOL_OPS: Final = {(kind, nd): _pool_op(kind, nd) for kind in ("max", "avg") for nd in (1, 2, 3)}


@register("MaxPool", since=1)
def _max_pool(ctx: NodeContext) -> Outputs:
    y = _pool(ctx, "max")
    return [y, ss.ops.cast(y, "int64") if ctx.has_output(1) else None]


@register(["AveragePool", "LpPool"], since=1)
def _avg_pool(ctx: NodeContext) -> Outputs:
    return _pool(ctx, "avg")


@register(["GlobalAveragePool", "GlobalLpPool"], since=1)
def _global_avg(ctx: NodeContext) -> Outputs:
    y = ss.ops.mean(ctx.input(0), axis=(0, 1), keepdims=True, exclude=True)
    return _ONLY_BATCH_EMPTY(y, ctx.input(0))


@register("GlobalMaxPool", since=1)
def _global_max(ctx: NodeContext) -> Outputs:
    y = ss.ops.max(ctx.input(0), axis=(0, 1), keepdims=True, exclude=True)
    return _ONLY_BATCH_EMPTY(y, ctx.input(0))


def _only_batch_empty_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``y``'s type (the first argument) once ``x`` (the second, a global pooling's input) has
    rank 3 or more (onnxruntime: "Input dimension cannot be less than 3"; onnx's reference
    evaluator reduces a rank-2 input to a scalar, or keeps it, or refuses it) and no empty axis
    but the batch unless the batch is empty too (onnxruntime: "Only N can be zero")."""
    y, x, out = args
    xt = tensor_or_defer(x, ctx, 1)
    if xt is None:
        return False
    if xt.ndim is not None and xt.ndim < 3:
        ctx.fail(RANK_MISMATCH, f"{ctx.name}: a global pool of `{xt}`: its rank must be 3 or more")
    if xt.ndim:
        cond = only_batch_empty(xt.dims[0], xt.dims[1:])
        if cond is not None:
            ctx.require(cond, SHAPE_MISMATCH, f"{ctx.name}: an empty axis but the batch needs an empty batch")
    ctx.unify(out, y)
    return True


_ONLY_BATCH_EMPTY: Final = ss.register_op(
    "onnx.only_batch_empty", _only_batch_empty_rel, 2, doc="a global pooling's result, checked", attr_types={}
)


@register("Dropout", since=1)
def _dropout(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    if not ctx.has_output(1):
        return [ss.ops.copy(x)]
    return [ss.ops.copy(x), ss.ops.cast(x, "bool") if ctx.opset >= 10 else ss.ops.copy(x)]
