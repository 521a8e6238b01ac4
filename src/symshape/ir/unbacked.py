"""Data-dependent sizes (PyTorch's *unbacked* symbols): the record of one, and how it is named.

``nonzero``, ``unique`` and boolean masks give results whose size only the data decides; the
generator gives each such size a symbol ``u<k>`` (or the one the caller passed as ``size``) and
records where it was born, so reports can say so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from symshape.encoding.dims import Dim, dim
from symshape.solver.instance import op_display_name

__all__ = ["SIZE_WHAT", "UnbackedSize", "unbacked_sym"]


@dataclass(frozen=True)
class UnbackedSize:
    """A size that only the data decides (PyTorch's *unbacked* symbol): the given symbol that
    stands for it, what it counts, the operator and where it was born.

    >>> import symshape as ss
    >>> x = ss.var("x", ss.Tensor((4, 4), "float32"))
    >>> res = ss.infer(ss.Function([x], ss.ops.nonzero(x)))
    >>> str(res.unbacked[0]).split(" at ")[0]
    'u0: the number of non-zero elements (nonzero'
    """

    symbol: Dim
    what: str
    op: str
    span: Any

    def __str__(self) -> str:
        where = f" at {self.span}" if self.span is not None else ""
        return f"{self.symbol}: {self.what} ({op_display_name(self.op)}{where})"


SIZE_WHAT = {
    "nonzero": "the number of non-zero elements",
    "unique": "the number of distinct elements",
    "boolean_mask": "the number of true elements of the mask",
}


def unbacked_sym(name: str) -> Dim:
    """The symbol of a data-dependent size: a size may be 0."""
    return dim(name, min=0)
