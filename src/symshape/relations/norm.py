"""Normalization-style relations: ``softmax`` (also log_softmax), ``bias_add``, ``layer_norm``,
``batch_norm``.

* ``softmax(x, axis=-1)``: the output is the input's type; ``axis`` must be in range; ``x`` must
  be a float tensor (Relax).
* ``bias_add(x, b, axis=1)``: ``out = x``; ``b`` is assigned ``Tensor((x.shape[axis],), x.dtype)``
  (an unannotated bias is inferred; an annotated one must match, dtype included, as in Relay).
* ``layer_norm(x, gamma, beta, axis=-1)``: ``out = x``; ``gamma``, ``beta`` are ``x.shape[axis]``
  (``axis`` may be a sequence of axes: Relax's ``axes``).
* ``batch_norm(x, gamma, beta, mean, var, axis=1)``: the four parameters are
  ``(x.shape[axis],)``; the output is the tuple ``(x, (c,), (c,))``.

``layer_norm`` and ``batch_norm`` are float-only and take one dtype for the data and every
parameter (Relax: "requires all the input tensors to have the same dtype"): a parameter of another
dtype is a ``dtype-mismatch``, it does not give the statistics its dtype.
"""

from __future__ import annotations

from collections.abc import Sequence

from symshape.encoding.dims import Dim
from symshape.encoding.types import Attrs, TensorType, Type, tuple_of_checked
from symshape.errors import BAD_ATTRIBUTE, DTYPE_MISMATCH, RANK_MISMATCH
from symshape.relations.base import Context, relation
from symshape.relations.common import attr_axes, attr_int, norm_axis, require_float
from symshape.relations.operands import tensor_or_defer

__all__ = ["softmax_rel", "bias_add_rel", "layer_norm_rel", "batch_norm_rel"]


def _data(ctx: Context, args: Sequence[Type], *, float_only: bool = True) -> TensorType | None:
    """The data (argument 0), a float tensor unless not ``float_only``; None to defer, once the
    parameters' kinds are checked (a non-tensor parameter fails while the data is a hole)."""
    x = tensor_or_defer(args[0], ctx, 0)
    if x is None:
        for i in range(1, ctx.num_inputs):
            tensor_or_defer(args[i], ctx, i)
        return None
    if float_only:
        require_float(ctx, x)
    return x


@relation("softmax")
def softmax_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out = x`` with ``axis`` in range; ``x`` is a float tensor (Relax)."""
    out = args[1]
    axis = attr_int(attrs, "axis", -1, ctx.name)
    x = _data(ctx, args)
    if x is None:
        return False
    if x.ndim is not None:
        norm_axis(ctx, axis, x.ndim, ctx.name)
    ctx.assign(out, x)
    return True


def _params(ctx: Context, x: TensorType, args: Sequence[Type], first: int) -> list[TensorType | None]:
    """The parameter arguments from ``first`` on (non-tensors fail); a known dtype other than the
    data's is a ``dtype-mismatch`` (Relay assigns the data's dtype, Relax requires one dtype)."""
    ps = [tensor_or_defer(args[i], ctx, i) for i in range(first, ctx.num_inputs)]
    for p in ps:
        if p is not None and p.dtype is not None and x.dtype is not None and p.dtype != x.dtype:
            ctx.fail(
                DTYPE_MISMATCH,
                f"{ctx.name}: the parameter `{p}` has dtype {p.dtype}, the data `{x}` has {x.dtype}",
            )
    return ps


def _assign_params(
    ctx: Context, x: TensorType, args: Sequence[Type], first: int, shape: tuple[Dim, ...]
) -> None:
    """Assign every parameter ``Tensor(shape, dtype)`` (an unannotated one is inferred)."""
    ps = _params(ctx, x, args, first)
    made: dict[object, TensorType] = {}  # (one tensor type per dtype: parameters share theirs)
    for i, p in zip(range(first, ctx.num_inputs), ps):
        dtype = p.dtype if p is not None and p.dtype is not None else x.dtype
        t = made.get(dtype)
        if t is None:
            t = made[dtype] = TensorType(shape, dtype)
        ctx.assign(args[i], t)


@relation("bias_add")
def bias_add_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out = x``; ``b: (x.shape[axis],)`` with ``x``'s dtype."""
    out = args[2]
    axis = attr_int(attrs, "axis", 1, ctx.name)
    x = _data(ctx, args, float_only=False)
    if x is None:
        return False
    if x.ndim is None:
        _params(ctx, x, args, 1)
        if not ctx.final:
            return False
    else:
        ax = norm_axis(ctx, axis, x.ndim, ctx.name)
        _assign_params(ctx, x, args, 1, (x.dims[ax],))
    ctx.assign(out, x)
    return True


@relation("layer_norm")
def layer_norm_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out = x``; ``gamma, beta: x.shape[axis]`` (``axis``: an int or a sequence of axes, Relax's
    ``axes``); every tensor has one float dtype."""
    out = args[3]
    axes = attr_axes(attrs, "axis", ctx.name, default=-1)
    assert axes is not None
    x = _data(ctx, args)
    if x is None:
        return False
    if x.ndim is None:
        ps = _params(ctx, x, args, 1)
        for p in ps:
            if p is not None and p.ndim is not None and p.ndim != len(axes):
                ctx.fail(
                    RANK_MISMATCH,
                    f"{ctx.name}: the parameter `{p}` must have rank {len(axes)} (one per axis)",
                )
        if not ctx.final:
            return False
    else:
        norm = [norm_axis(ctx, a, x.ndim, ctx.name) for a in axes]
        if len(set(norm)) != len(norm):
            ctx.fail(BAD_ATTRIBUTE, f"{ctx.name}: duplicate axes in {axes} for rank {x.ndim}")
        _assign_params(ctx, x, args, 1, tuple(x.dims[a] for a in norm))
    ctx.assign(out, x)
    return True


@relation("batch_norm")
def batch_norm_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
    """``out = (x, (c,), (c,))``; ``gamma, beta, mean, var: (c,)`` with ``c = x.shape[axis]``;
    every tensor has one float dtype. With data of unknown rank the statistics are still vectors,
    of the parameters' length."""
    out = args[5]
    axis = attr_int(attrs, "axis", 1, ctx.name)
    x = _data(ctx, args)
    if x is None:
        return False
    xs = x.shape
    if type(xs) is tuple:  # (``x.ndim is not None``: the shape read once)
        ax = norm_axis(ctx, axis, len(xs), ctx.name)
        c = xs[ax]
        _assign_params(ctx, x, args, 1, (c,))
    else:
        ps = _params(ctx, x, args, 1)
        ranked = [p for p in ps if p is not None and p.ndim is not None]
        for p in ranked:
            if p.ndim != 1:
                ctx.fail(RANK_MISMATCH, f"{ctx.name}: the parameter `{p}` must have rank 1")
        if ranked:
            assert ranked[0].ndim == 1
            c = ranked[0].dims[0]
        elif ctx.final:
            c = ctx.fresh_dim()
        else:
            return False
        _assign_params(ctx, x, args, 1, (c,))
    vec = TensorType((c,), x.dtype)
    ctx.assign(out, tuple_of_checked((x, vec, vec)))  # (``TupleType``: its fields are types)
    return True
