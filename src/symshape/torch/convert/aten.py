"""The aten overloads of exported programs.

Most aten operators share a converter with their torch function (registered there under the aten
overload packet, ``aten.add``, ``aten.view``, ``aten.conv2d``, ...; an overload such as
``aten.add.Tensor`` falls back to its packet). This module holds what only exported graphs
contain: run-time assertions on sizes (``_assert_scalar``, ``sym_constrain_range_for_size``,
``_assert_tensor_metadata``), which state facts about torch's own symbols and are not part of the
model's typing, and symbolic-int helpers (``torch.sym_max``, ``torch.sym_float``, ...).
"""

from __future__ import annotations

import operator
from dataclasses import replace
from typing import Any

import torch

import symshape as ss
from symshape.encoding.dims import dmax, dmin
from symshape.torch.context import Ctx
from symshape.torch.registry import converts
from symshape.torch.shape_values import has_value, is_int, scalar_value
from symshape.torch.values import Opaque, Unsupported

__all__ = ["assertion", "sym_op"]

aten = torch.ops.aten


def _ops(*names: str) -> list[Any]:
    out = []
    for n in names:
        try:
            out.append(getattr(aten, n))
        except (AttributeError, RuntimeError):
            pass
    return out


@converts(
    *_ops(
        "_assert_scalar",
        "_assert_async",
        "_assert_tensor_metadata",
        "sym_constrain_range",
        "sym_constrain_range_for_size",
        "_functional_sym_constrain_range",
        "_functional_sym_constrain_range_for_size",
    ),
    torch._check,
    torch._check_is_size,
)
def assertion(ctx: Ctx, *args: Any, **kwargs: Any) -> Any:
    """A run-time assertion of the exported program: no value."""
    return None


def _sym(py: Any, value_op: str | None = None) -> Any:
    def conv(ctx: Ctx, *args: Any) -> Any:
        for a in args:
            if isinstance(a, Opaque):
                out = a.derived("int")
                if value_op is not None and len(args) == 2 and all(has_value(x) or is_int(x) for x in args):
                    va, vb = (scalar_value(x) for x in args)
                    if va is not None and vb is not None:
                        out = replace(out, value=ctx.let(ss.Op.get(value_op)(va, vb), "value"))
                return out
        try:
            return py(*args)
        except TypeError:
            return Opaque(ctx.node_name, f"{getattr(py, '__name__', py)}(...)", ctx.span, "int")

    return conv


def _max(a: Any, b: Any) -> Any:
    if isinstance(a, ss.Dim) or isinstance(b, ss.Dim):
        return dmax(a, b)
    return max(a, b)


def _min(a: Any, b: Any) -> Any:
    if isinstance(a, ss.Dim) or isinstance(b, ss.Dim):
        return dmin(a, b)
    return min(a, b)


converts(torch.sym_max)(_sym(_max, "maximum"))
converts(torch.sym_min)(_sym(_min, "minimum"))
converts(torch.sym_int)(_sym(lambda a: a if isinstance(a, (int, ss.Dim)) else int(a)))
converts(torch.sym_float)(_sym(lambda a: float(a) if not isinstance(a, ss.Dim) else operator.truediv(a, 1)))
converts(torch.sym_not)(_sym(operator.not_))


@converts(*_ops("lstm", "gru", "rnn_tanh", "rnn_relu"))
def recurrent(ctx: Ctx, *args: Any, **kwargs: Any) -> Any:
    raise Unsupported(
        "recurrent layers in exported programs are not supported yet (trace the module instead)"
    )


def sym_op(name: str) -> Any:
    """The converter of a symbolic-int helper by name (for tests)."""
    return {"max": torch.sym_max, "min": torch.sym_min}[name]
