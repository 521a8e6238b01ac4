"""The fuzzer's steps over values only the run decides (:mod:`tests.onnx.fuzz_graphs`): gathers,
slices, top-k, pads, tiles, one-hot, cumsum, reductions and reverse-sequence whose indices,
bounds, counts or axes are graph inputs fed at run time (in a range of the symbols: an index
within its axis), and ``NonZero``/``Unique`` whose output sizes feed further shapes.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from tests.onnx.fuzz_builder import BIG, Builder, Dim, V

__all__ = [
    "cumsum_rt",
    "gather_rt",
    "nonzero",
    "one_hot_rt",
    "pad_rt",
    "reduce_rt",
    "reverse_sequence",
    "slice_rt",
    "squeeze_all",
    "tile_rt",
    "topk_rt",
    "unique",
]


def _known_axis(b: Builder, x: V) -> int | None:
    """An axis of ``x`` whose size the run's feeds know (a constant or a symbol)."""
    axes = [i for i, d in enumerate(x.dims) if d is not None]
    return b.pick(axes) if axes else None


def _neg(d: Dim, k: int = 0) -> str:
    return f"-({d})-{k}" if k else f"-({d})"


def gather_rt(b: Builder, x: V) -> V | None:
    a = _known_axis(b, x)
    if a is None:
        return None
    d = x.dims[a]
    axis = a - x.rank if b.flag() else a
    if b.flag():  # Gather: any index shape
        ishape = [b.input_dim() for _ in range(b.integer(0, 2))]
        idx = b.new_input("int64", ishape, (_neg(d), f"({d})-1"))
        dims = [*x.dims[:a], *ishape, *x.dims[a + 1 :]]
        return b.value(b.node("Gather", [x.name, idx.name], axis=axis)[0], x.dtype, dims)
    ishape = [
        b.input_dim() if i == a else b.pick([1, d if d is not None else 1, b.input_dim()])
        for i, d in enumerate(x.dims)
    ]
    idx = b.new_input("int64", ishape, (_neg(d), f"({d})-1"))
    return b.value(b.node("GatherElements", [x.name, idx.name], axis=axis)[0], x.dtype, ishape)


def slice_rt(b: Builder, x: V) -> V | None:
    a = _known_axis(b, x)
    if a is None:
        return None
    d = x.dims[a]
    lo, hi = _neg(d, 2), f"({d})+2"
    starts = b.new_input("int64", [1], (lo, hi)).name
    ends = b.new_input("int64", [1], (lo, hi)).name if b.flag() else b.const([b.pick([BIG, -BIG, 1])])
    ins = [x.name, starts, ends]
    if b.integer(0, 3) or a:
        given = a - x.rank if b.flag() else a
        by_run = b.integer(0, 3) == 0 and "slice-runtime-axes" not in b.avoid
        ins.append(b.new_input("int64", [1], (given, given)).name if by_run else b.const([given]))
        if b.flag():
            ins.append(b.new_input("int64", [1], (1, 3)).name if b.flag() else b.const([b.pick([-1, 2, -3])]))
    dims = [None if i == a else e for i, e in enumerate(x.dims)]
    return b.value(b.node("Slice", ins)[0], x.dtype, dims)


def topk_rt(b: Builder, x: V) -> V | None:
    a = _known_axis(b, x)
    if a is None:
        return None
    k = b.new_input("int64", [1], (0, x.dims[a]))
    vals, idx = b.node(
        "TopK",
        [x.name, k.name],
        n_out=2,
        axis=a - x.rank if b.flag() else a,
        largest=b.integer(0, 1),
        sorted=b.integer(0, 1),
    )
    dims = [None if i == a else d for i, d in enumerate(x.dims)]
    b.value(idx, "int64", dims)
    return b.value(vals, x.dtype, dims)


def pad_rt(b: Builder, x: V) -> V | None:
    if x.rank == 0:
        return None
    modes = ["constant", "constant", "edge", "reflect"] + (["wrap"] if b.opset >= 19 else [])
    mode = b.pick(modes)
    if b.opset >= 18 and b.flag():
        axes = sorted(set(b.draw(st.lists(st.integers(0, x.rank - 1), min_size=1, max_size=2))))
        n = 2 * len(axes)
        tail = ["", b.const([a - x.rank if b.flag() else a for a in axes])]
    else:
        n, tail = 2 * x.rank, []
    # (no crops: a size made negative by pads only the run knows is not something symshape can see)
    pads = b.new_input("int64", [n], (0, b.pick([1, 2]))).name
    if tail or b.flag():
        tail[:1] = [b.new_input(x.dtype, []).name if b.flag() else ""]
    return b.value(b.node("Pad", [x.name, pads, *tail], mode=mode)[0], x.dtype, [None] * x.rank)


def tile_rt(b: Builder, x: V) -> V | None:
    if x.rank == 0:
        return None
    reps = b.new_input("int64", [x.rank], (b.pick([0, 1]), b.pick([1, 2, 3])))
    return b.value(b.node("Tile", [x.name, reps.name])[0], x.dtype, [None] * x.rank)


def one_hot_rt(b: Builder, x: V) -> V | None:
    ishape = [b.input_dim() for _ in range(b.integer(0, 2))]
    depth = b.new_input("int64", b.pick([[], [1]]), (1, 4)).name
    if b.flag():  # (any numeric type)
        depth = b.node("Cast", [depth], to=1)[0]
    idx = b.new_input("int64", ishape, (-4, 3))
    axis = b.integer(-len(ishape) - 1, len(ishape))
    vals = b.const(np.array([0.0, 1.0], np.float32), "float32")
    out = b.node("OneHot", [idx.name, depth, vals], axis=axis)[0]
    return b.value(out, "float32", [None] * (len(ishape) + 1))


def cumsum_rt(b: Builder, x: V) -> V | None:
    if x.rank == 0 or x.dtype != "float32":
        return None
    axis = b.new_input("int64", b.pick([[], [1]]), (-x.rank, x.rank - 1))
    return b.value(b.node("CumSum", [x.name, axis.name], exclusive=b.integer(0, 1))[0], x.dtype, x.dims)


def reduce_rt(b: Builder, x: V) -> V | None:
    if b.opset < 18:
        return None
    op = b.pick(["ReduceSum", "ReduceMin", "ReduceProd", "ReduceL2", "ReduceLogSumExp", "ReduceSumSquare"])
    keep = b.integer(0, 1)
    noop = b.integer(0, 1)
    n = b.pick([0, 1, 1]) if x.rank else 0
    axes = b.new_input("int64", [n], (-x.rank, x.rank - 1)) if x.rank else b.new_input("int64", [0], (0, 0))
    out = b.node(op, [x.name, axes.name], keepdims=keep, noop_with_empty_axes=noop)[0]
    if n == 0:
        dims = list(x.dims) if noop else [1] * x.rank if keep else []
    else:
        dims = [None] * (x.rank if keep else x.rank - 1)
    return b.value(out, x.dtype, dims)


def reverse_sequence(b: Builder, x: V) -> V | None:
    if x.rank < 2:
        return None
    batch = b.integer(0, 1)
    t = x.dims[1 - batch]
    if t is None or x.dims[batch] is None:
        return None
    bd = b.pick([x.dims[batch], x.dims[batch], 1, b.input_dim()])
    lens = b.new_input("int64", [bd], (b.pick([0, 1]), t))
    out = b.node("ReverseSequence", [x.name, lens.name], batch_axis=batch, time_axis=1 - batch)[0]
    return b.value(out, x.dtype, x.dims)


def nonzero(b: Builder, x: V) -> V | None:
    """``NonZero`` (of the value compared with 0) and a reshape of ``x`` by its count."""
    c = b.node("Greater", [x.name, b.const(np.zeros((), x.dtype), x.dtype)])[0]
    b.value(c, "bool", x.dims)
    nz = b.value(b.node("NonZero", [c])[0], "int64", [x.rank, None])
    if b.flag() or "reshape-empty-target" in b.avoid:  # (the count may be 0 at any size)
        return nz
    sh = b.node("Shape", [nz.name])[0]
    n = b.node("Gather", [sh, b.const([1])], axis=0)[0]
    t = b.node("Concat", [n, b.const([-1])] if b.flag() else [b.const([-1]), n], axis=0)[0]
    return b.value(b.node("Reshape", [x.name, t])[0], x.dtype, [None, None])


def unique(b: Builder, x: V) -> V | None:
    if x.rank and b.flag():
        axis = b.integer(-x.rank, x.rank - 1)
        outs = b.node("Unique", [x.name], n_out=4, axis=axis, sorted=b.integer(0, 1))
        dims: list[Dim] = [None if i == axis % x.rank else d for i, d in enumerate(x.dims)]
        b.value(outs[2], "int64", [x.dims[axis % x.rank]])
    else:
        outs = b.node("Unique", [x.name], n_out=4, sorted=b.integer(0, 1))
        dims = [None]
        b.value(outs[2], "int64", [None])
    b.value(outs[1], "int64", [None])
    b.value(outs[3], "int64", [None])
    return b.value(outs[0], x.dtype, dims)


def squeeze_all(b: Builder, x: V) -> V | None:
    """``Squeeze`` without axes: every axis of size 1 (of a value whose sizes are symbols or
    constants: symshape keeps a symbol under the guard ``n != 1``, a size only the run knows under
    a guard no size decides)."""
    if None in x.dims:
        return None
    return b.value(b.node("Squeeze", [x.name])[0], x.dtype, [None] * x.rank)
