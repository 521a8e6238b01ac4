"""Index bounds of indexing calls from the value ranges of their indices (issue 19).

``take(x, indices, axis, mode=...)`` in mode ``raise``, ``fast`` (numpy's
and torch's indexing: an index out of range is an error) with indices of known range reads
``x``'s axis of size ``d`` only at ``-d <= i < d``: the guard ``hi < d`` and ``lo >= -d`` (each
where that side is known), unless the indices are empty; in mode ``nonnegative`` (torch's
``embedding``) at ``0 <= i < d``, the guard ``lo >= 0``. ``clip`` and ``wrap`` never fail.
Each such guard is classified by the solver's session like any condition (proved, a guard,
refuted, or unknown) and carries notes: the table and where the indices' range was born.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter
from typing import TYPE_CHECKING, Final

from symshape.encoding.conds import BoolConst, Cond, all_of, any_of, eq, expand_joins, ge, lt
from symshape.encoding.dims import Dim, bounds
from symshape.encoding.types import TensorType
from symshape.encoding.values import range_str
from symshape.ir.cond_reading import cond_text
from symshape.ir.nodes import Call
from symshape.ir.op import Op
from symshape.relations.common import product
from symshape.solver.diagnostics import Note, Origin

if TYPE_CHECKING:
    from symshape.ir.ranges import Ranges
    from symshape.ir.result import InferenceResult

__all__ = ["IndexCheck", "index_checks", "INDEX_MODES", "WHEN_RUN"]

#: the attribute of a call that runs only where this size (a ``Dim``) is not 0: the call of a loop
#: body whose trip count it is (an ONNX ``Loop``'s, :mod:`symshape.onnx.ops.loop_premise`); its
#: index bounds are required only there
WHEN_RUN: Final = "when_run"

INDEX_MODES: frozenset[str] = frozenset({"raise", "fast", "nonnegative"})
"""The ``take`` modes in which an index out of range is an error."""


@dataclass(frozen=True)
class IndexCheck:
    """The condition an indexing call needs of its indices' range, and its explanation."""

    cond: Cond
    call: Call
    origin: Origin
    message: str
    notes: tuple[Note, ...]
    text: str = ""  # the condition as a person writes it (also where it simplified to a constant)


def index_checks(res: InferenceResult) -> list[IndexCheck]:
    """The index-bound conditions of the program's ``take`` calls in an erroring mode whose
    indices have a known range, in program order (nothing to do: no range is computed)."""
    calls = res.calls
    # (the distinct callees first, found in C: most programs call no ``take``; an operator hashes
    # by identity)
    try:
        callees = dict.fromkeys(map(attrgetter("callee"), calls))
        found = any(isinstance(f, Op) and f.name == "take" for f in callees)
    except TypeError:  # (an unhashable callee: every call is looked at)
        found = True
    if not found:
        return []
    takes = [
        c
        for c in calls
        if isinstance(c.callee, Op) and c.callee.name == "take" and c.attrs.get("mode") in INDEX_MODES
    ]
    if not takes:
        return []
    rs = res._ranges()
    out: list[IndexCheck] = []
    for c in takes:
        chk = _take_check(res, rs, c)
        if chk is not None:
            out.append(chk)
    return out


def _take_check(res: InferenceResult, rs: Ranges, c: Call) -> IndexCheck | None:
    if len(c.args) != 2:
        return None
    f = rs.of(c.args[1])
    x, ind = rs._type(c.args[0]), rs._type(c.args[1])
    rel = res.relation_of(c)
    if f is None or rel is None or not isinstance(x, TensorType) or not isinstance(ind, TensorType):
        return None
    if not isinstance(x.shape, tuple) or not isinstance(ind.shape, tuple):
        return None
    axis = c.attrs.get("axis")
    if axis is None:
        size, where = product(x.shape), f"the {len(x.shape)}-d `{x}` flattened"
    else:
        if not isinstance(axis, int) or not -len(x.shape) <= axis < len(x.shape):
            return None
        ax = axis % len(x.shape)
        size, where = x.shape[ax], f"axis {ax} of `{x}`"
    lo, hi = f.range
    parts: list[Cond] = []
    texts: list[str] = []
    if hi is not None:
        parts.append(lt(hi, size))
        texts.append(_text(parts[-1], f"{hi} <= {size - 1}"))
    least = 0 if c.attrs.get("mode") == "nonnegative" else -size
    if lo is not None:
        parts.append(ge(lo, least))
        texts.append(_text(parts[-1], f"{lo} >= {least}"))
    if not parts:
        return None
    cond = expand_joins(all_of(*parts))  # (a join's condition: required of each alternative)
    text = " and ".join(x for x in texts if x != "True") or "True"
    count = product(ind.shape)
    if bounds(count)[0] < 1:
        cond = any_of(eq(count, 0), cond)
    runs = c.attrs.get(WHEN_RUN)
    if isinstance(runs, Dim):  # (a call of a body that runs only where this size is not 0)
        cond = any_of(eq(runs, 0), cond)
    msg = f"take of indices in {range_str(f.range)} from {where} (size {size})"
    own = rs.of(f.source) if f.source is not c.args[1] else f  # (the range where it was born)
    if own is not None and own.range != f.range:  # moved on the way: an offset, a product, ...
        how = f"the indices, with entries in {range_str(f.range)}, are computed from {f.how}, "
        notes = (Note(f"{how}with entries in {range_str(own.range)}", f.span),)
    else:
        notes = (Note(f"the indices come from {f.how}, with entries in {range_str(f.range)}", f.span),)
    return IndexCheck(cond, c, rel.origin, msg, notes, text)


def _text(c: Cond, raw: str) -> str:
    if isinstance(c, BoolConst):
        return "True" if c.value else raw
    return cond_text(c)
