"""torch's rules for empty axes: an operator of the importer's own, ``torch.nonempty``, that
passes its input through and states which of its axes torch requires to be non-empty, and when.

symshape's own operators (``conv2d``, ``max_pool2d``, ``dense``, ...) take empty tensors the way
Relay does: a size of 0 is just a size. torch's kernels refuse some of them, each with a rule of
its own, found by running torch 2.13 (CPU) at sizes 0, 1, 2, 3 and stated where the converter
calls the operator (:func:`nonempty`):

* a convolution (``conv{1,2,3}d``, any padding, stride, dilation, groups; ``padding_mode`` too,
  on the padded input): an empty spatial axis is refused unless the batch or the channels are
  empty (``Only zero batch or zero channel inputs are supported``): axes ``2..`` of the batched
  input, unless axis 0 or 1 is 0;
* a transposed convolution: the same on its input; its result's spatial sizes must not be empty
  unless the batch is (``Output size is too small``; torch's mkldnn path, taken for some
  float32 batches of 2 or more, does run a result of size 0: symshape takes the rule of the
  other paths);
* max/avg/LP pooling (1-d, 2-d, 3-d): every axis but the batch is non-empty (an unbatched
  input: every axis; ``Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size``);
* adaptive pooling: average in 1-d/2-d: the spatial axes (``adaptive_avg_pool2d`` checks the
  last two axes, 1-d runs as 2-d over a height of 1); max (1-d, 2-d) and average in 3-d: every
  axis from axis 1 of the input as given (an unbatched input's channels are its axis 0, not
  checked); an average to size 1 is a ``mean`` in torch and has no rule;
* ``nn.RNN``/``nn.LSTM``/``nn.GRU``: the time axis is non-empty (``Expected sequence length to
  be larger than 0 in RNN``); an empty batch runs.

``torch.nonempty(x, axes=[...], first=f, unless=[...], what=...)``: ``x``; the axes ``axes``
(negative: from the end) and every axis from ``first`` on (``first < 0``: none) must be
non-empty unless one of the axes ``unless`` is empty. The condition is decided on the spot where
the bounds decide it (sizes declared ``>= 1``), so it costs nothing on such models.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import symshape as ss
from symshape.encoding.conds import Cond, all_of, any_of, eq, ge
from symshape.encoding.dims import Dim, bounds
from symshape.errors import SHAPE_MISMATCH
from symshape.relations.base import Context
from symshape.relations.common import Checks

__all__ = ["NONEMPTY", "nonempty", "nonempty_cond"]


def nonempty_cond(need: Sequence[Dim], unless: Sequence[Dim]) -> Cond | None:
    """``any(u == 0 for u in unless) or all(d >= 1 for d in need)`` (None where the bounds
    decide it true)."""
    open_ = list(dict.fromkeys(d for d in need if bounds(d)[0] < 1))
    if not open_ or any(bounds(u)[1] == 0 for u in unless):
        return None
    return any_of(*(eq(u, 0) for u in unless), all_of(*(ge(d, 1) for d in open_)))


def _axis_list(attrs: Any, name: str) -> list[int]:
    v = attrs.get(name)
    return [int(a) for a in v] if isinstance(v, (list, tuple)) else []


def _nonempty_rel(ctx: Context, args: Sequence[ss.Type], attrs: Any) -> bool:
    x, out = args[0], args[1]
    if not isinstance(x, ss.TensorType):
        return False
    if x.ndim is None:
        if not ctx.final:
            return False
        ctx.assign(out, x)
        return True
    dims = x.dims
    r = len(dims)
    first = int(attrs.get("first", -1))
    picked = {a % r for a in _axis_list(attrs, "axes") if -r <= a < r}
    if first >= 0:
        picked |= set(range(first, r))
    unless = sorted({a % r for a in _axis_list(attrs, "unless") if -r <= a < r})
    need = [dims[a] for a in sorted(picked)]
    cond = nonempty_cond(need, [dims[a] for a in unless]) if need else None
    if cond is not None:
        chk = Checks()
        if unless:
            tail = f" unless axis {' or '.join(map(str, unless))} is empty"
        else:
            tail = ""
        chk.require(
            cond,
            SHAPE_MISMATCH,
            f"{attrs.get('what')}: torch refuses an empty axis {sorted(picked)} of `{x}`{tail}",
        )
        if not chk.commit(ctx):
            return False
    ctx.assign(out, x)
    return True


ss.relation("torch.nonempty")(_nonempty_rel)
#: ``torch.nonempty(x, axes=, first=, unless=, what=)`` (see the module docstring)
NONEMPTY = ss.register_op(
    "torch.nonempty",
    "torch.nonempty",
    1,
    doc="x, once torch's rule for its empty axes holds (axes, and every axis from first, non-empty "
    "unless an axis of unless is empty)",
    attr_types={"axes": "ints", "first": "int", "unless": "ints", "what": "str"},
)


#: the attributes of each configuration, the same objects at every call (the operator reuses
#: the checked attributes of the values it saw before, by identity)
_ATTRS: dict[tuple[str, tuple[int, ...], int, tuple[int, ...]], dict[str, Any]] = {}


def nonempty(
    x: ss.Expr, what: str, axes: Sequence[int] = (), first: int = -1, unless: Sequence[int] = ()
) -> ss.Expr:
    """``x`` through ``torch.nonempty`` (see the module docstring)."""
    key = (what, tuple(axes), first, tuple(unless))
    attrs = _ATTRS.get(key)
    if attrs is None:
        attrs = _ATTRS[key] = {"axes": key[1], "first": first, "unless": key[3], "what": what}
    return NONEMPTY(x, **attrs)
