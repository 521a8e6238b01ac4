"""The input sizes a ``torch.export`` program was specialised to.

``torch.export`` records each user input as a fake tensor (``node.meta["val"]``); an axis it
kept static (not marked dynamic, or specialised by a Python check such as transformers' ViT
``if height != image_size: raise``) is an ``int`` there, and the program only runs at that size:
its graph computes with the constant (reshape targets, position tables) and the exported program
refuses other inputs ("Guard failed: x.size()[2] == 32"). The type the user gives may name a
symbol at such an axis; the program then needs that symbol to equal the recorded size, a guard
stated by :data:`EXPORT_SIZES` with the placeholder's span.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import symshape as ss
from symshape.encoding.conds import eq
from symshape.relations.base import Context

__all__ = ["EXPORT_SIZES", "specialised_sizes"]

@ss.relation("torch.export_sizes")
def _export_sizes_rel(ctx: Context, args: Sequence[ss.Type], attrs: Any) -> bool:
    x, out = args
    if not isinstance(x, ss.TensorType):
        return False
    sizes = tuple(attrs.get("sizes"))
    if x.ndim is not None:
        if x.ndim != len(sizes):
            ctx.fail(
                ss.errors.RANK_MISMATCH,
                f"the exported program takes a {len(sizes)}-d input here, the type given is `{x}`",
            )
        for i, (d, s) in enumerate(zip(x.dims, sizes)):
            if s >= 0:
                ctx.require(
                    eq(d, s),
                    ss.errors.SHAPE_MISMATCH,
                    f"torch.export specialised axis {i} of this input to {s} (the program computes "
                    f"with that size and refuses others), and the type given is `{x}`",
                )
    ctx.assign(out, x)
    return True


#: ``torch.export_sizes(x, sizes=(...))``: ``x`` unchanged, and each of its axes with a recorded
#: size (an int in ``sizes``; -1 for a dynamic axis) equal to it
EXPORT_SIZES = ss.register_op(
    "torch.export_sizes",
    "torch.export_sizes",
    1,
    doc="the sizes torch.export specialised an input to: each such axis must equal it",
    attr_types={"sizes": "ints"},
)



def specialised_sizes(val: Any, t: ss.Type) -> tuple[int, ...] | None:
    """The sizes (-1: dynamic) an exported input's fake tensor ``val`` records where the type the
    user gave, ``t``, does not already say them; None when there is nothing to check."""
    shape = getattr(val, "shape", None)
    if shape is None or not isinstance(t, ss.TensorType):
        return None
    sizes = tuple(_static_size(s) for s in shape)
    if t.ndim is not None and len(t.dims) == len(sizes):
        if all(s < 0 or d == s for d, s in zip(t.dims, sizes)):
            return None
    elif all(s < 0 for s in sizes):
        return None
    return sizes


def _static_size(s: Any) -> int:
    """A recorded size: an int, or a ``SymInt`` that export's guards pinned to one (a Python check
    under ``Dim.AUTO``); -1 for a size that stays dynamic."""
    if isinstance(s, int):
        return s
    pinned = getattr(getattr(s, "node", None), "maybe_as_int", None)
    v = pinned() if callable(pinned) else None
    return v if isinstance(v, int) else -1
