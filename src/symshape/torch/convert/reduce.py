"""Reductions over dimensions (``sum``, ``mean``, ``max``, ``argmax``, ``std``, ...) and the
softmax family.

``x.max(dim)`` is a pair ``(values, indices)``; ``torch.max(x, y)`` of two tensors is an
elementwise maximum. Index results are int64, as in torch (symshape's ``argmax`` is int32, so it
is cast). Reductions whose result is shaped like a mean (``std``, ``var``, ``norm``,
``logsumexp``) are typed as ``mean``.

Result dtypes are torch's: ``sum``/``prod``/``nansum`` of an integer or bool tensor are ``int64``
(``dtype=`` overrides); ``all``/``any`` are ``bool`` (a ``uint8`` tensor's stay ``uint8``);
``mean``, ``std``, ``var`` and ``norm`` of an integer or bool tensor are an error (torch refuses
them); ``logsumexp`` of one is ``float32``; ``amax``, ``max`` keep the dtype; ``argmax``/``argmin`` of a
bool tensor are an error (torch refuses them), ``max(x, dim)``'s indices are not.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

import symshape as ss
from symshape.torch.context import Ctx
from symshape.torch.convert.elementwise import binary, cast, keys
from symshape.torch.convert.entry_ops import REDUCED_DTYPE
from symshape.torch.convert.promotion import accumulated, as_floating
from symshape.torch.registry import converts

__all__ = ["reduce", "softmax", "log_softmax"]

aten = torch.ops.aten


def _axes(ctx: Ctx, dim: Any) -> int | tuple[int, ...] | None:
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        return ctx.ints(dim, "dim") if dim else None
    return ctx.axis(dim)


def _floating(x: ss.Expr, what: str) -> ss.Expr:
    """``x``, refused where integer or bool (torch's ``mean`` and the like need floats)."""
    return REDUCED_DTYPE(x, rule="floating", what=what)


_BEFORE: dict[str, Any] = {
    "sum": accumulated,
    "prod": accumulated,
    "nansum": accumulated,
    "mean": lambda x: _floating(x, "mean"),
    "nanmean": lambda x: _floating(x, "nanmean"),
}
"""What a reduction by torch name does to its input first, where it is not just ``x``: the dtype
torch reduces in (``dtype=`` given: that instead)."""


def _reduce(op: Any, name: str, *, index: bool = False) -> Any:
    def conv(
        ctx: Ctx,
        input: Any,
        dim: Any = None,
        keepdim: Any = False,
        *args: Any,
        dtype: Any = None,
        **kwargs: Any,
    ) -> Any:
        x = ctx.tensor(input)
        if isinstance(dim, torch.dtype):  # x.sum(torch.float32)
            dim, dtype = None, dim
        if dtype is not None:
            x = cast(ctx, x, dtype)
        elif name in _BEFORE:
            x = _BEFORE[name](x)
        elif index:  # (torch's argmax/argmin refuse bools; max(x, dim)'s indices do not)
            x = REDUCED_DTYPE(x, rule="ordered", what=name)
        out = op(x, axis=_axes(ctx, dim), keepdims=bool(ctx.static(keepdim, "keepdim")))
        if index:
            out = ss.ops.cast(out, "int64")
        elif name in ("all", "any"):
            out = REDUCED_DTYPE(out, rule="truth", what=name)
        return out

    return conv


for _name, _op in (
    ("sum", ss.ops.sum),
    ("mean", ss.ops.mean),
    ("prod", ss.ops.prod),
    ("all", ss.ops.all),
    ("any", ss.ops.any),
    ("amax", ss.ops.max),
    ("amin", ss.ops.min),
    ("nansum", ss.ops.sum),
    ("nanmean", ss.ops.mean),
):
    converts(*keys(_name, inplace=False))(_reduce(_op, _name))
for _name in ("argmax", "argmin"):
    converts(*keys(_name, inplace=False))(_reduce(getattr(ss.ops, _name), _name, index=True))


@converts(*keys("std", torch.var, "var", aten.var, inplace=False))
def spread(
    ctx: Ctx, input: Any, dim: Any = None, unbiased: Any = None, keepdim: Any = False, **kwargs: Any
) -> Any:
    """``std``/``var``: shaped like ``mean`` over ``dim``."""
    if isinstance(dim, bool):  # std(x, unbiased)
        dim = None
    x = _floating(ctx.tensor(input), "std/var")
    return ss.ops.mean(x, axis=_axes(ctx, dim), keepdims=bool(ctx.static(keepdim, "keepdim")))


@converts(*keys("logsumexp", inplace=False))
def logsumexp(ctx: Ctx, input: Any, dim: Any, keepdim: Any = False, **kwargs: Any) -> Any:
    x = as_floating(ctx.tensor(input))
    return ss.ops.mean(x, axis=_axes(ctx, dim), keepdims=bool(ctx.static(keepdim, "keepdim")))


@converts(*keys("norm", torch.linalg.vector_norm, aten.linalg_vector_norm, inplace=False))
def norm(ctx: Ctx, input: Any, p: Any = None, dim: Any = None, keepdim: Any = False, **kwargs: Any) -> Any:
    """``norm``/``vector_norm`` over ``dim``: shaped like ``mean``."""
    x = _floating(ctx.tensor(input), "norm")
    return ss.ops.mean(x, axis=_axes(ctx, dim), keepdims=bool(ctx.static(keepdim, "keepdim")))


def _minmax(op: Any, elementwise: Any) -> Any:
    def conv(ctx: Ctx, input: Any, dim: Any = None, keepdim: Any = False, *, out: Any = None) -> Any:
        x = ctx.tensor(input)
        if isinstance(dim, ss.Expr):  # torch.max(x, y)
            return binary(ctx, x, dim, elementwise, None)
        if dim is None:
            return op(x)
        axis = ctx.axis(dim)
        keep = bool(ctx.static(keepdim, "keepdim"))
        values = op(x, axis=axis, keepdims=keep)
        arg = ss.ops.argmax if op is ss.ops.max else ss.ops.argmin
        return (values, ss.ops.cast(arg(x, axis=axis, keepdims=keep), "int64"))

    return conv


converts(*keys("max", inplace=False))(_minmax(ss.ops.max, ss.ops.maximum))
converts(*keys("min", inplace=False))(_minmax(ss.ops.min, ss.ops.minimum))
# median along a dim: (values, indices) of max's shapes; of the whole tensor, one value
_MEDIANS = (*keys("median", inplace=False), *keys("nanmedian", inplace=False))
converts(*_MEDIANS)(_minmax(ss.ops.max, ss.ops.maximum))


def _softmax(op: Any) -> Any:
    def conv(ctx: Ctx, input: Any, dim: Any = None, *args: Any, dtype: Any = None, **kwargs: Any) -> Any:
        x = ctx.tensor(input)
        if dim is None:
            ctx.unsupported("softmax without dim (the implicit-dim form is deprecated in torch)")
        out = op(x, axis=ctx.axis(dim))
        if args and isinstance(args[0], torch.dtype):
            dtype = args[0]
        return cast(ctx, out, dtype) if dtype is not None else out

    return conv


softmax = _softmax(ss.ops.softmax)
log_softmax = _softmax(ss.ops.log_softmax)
converts(*keys("softmax", aten._softmax, inplace=False))(softmax)
converts(*keys("log_softmax", aten._log_softmax, inplace=False))(log_softmax)
converts(F.softmin, "softmin")(softmax)


def reduce(ctx: Ctx, name: str, x: ss.Expr, dim: Any = None, keepdim: bool = False) -> ss.Expr:
    """A reduction by torch name (for other converters)."""
    op = {"sum": ss.ops.sum, "mean": ss.ops.mean}[name]
    return op(x, axis=_axes(ctx, dim), keepdims=keepdim)
