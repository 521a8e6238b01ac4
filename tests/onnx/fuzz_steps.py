"""The fuzzer's shape steps (:mod:`tests.onnx.fuzz_graphs`): elementwise, reshape/expand to
constant and computed targets, squeeze/unsqueeze, transpose, concat, split, slice, gathers, tile,
pad.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from tests.onnx.fuzz_builder import BIG, Builder, Dim, V, onnx_slice_len

from symshape.onnx.dtypes import to_elem_type

__all__ = [
    "binary",
    "cast",
    "concat",
    "expand",
    "gather",
    "gather_elements",
    "pad",
    "reshape",
    "shape_part",
    "slice_",
    "split",
    "squeeze",
    "tile",
    "transpose",
    "unary",
    "unsqueeze",
]


def unary(b: Builder, x: V) -> V | None:
    op = b.pick(["Relu", "Neg", "Abs"] if x.dtype == "float32" else ["Neg", "Abs"])
    return b.value(b.node(op, [x.name])[0], x.dtype, x.dims)


def cast(b: Builder, x: V) -> V | None:
    to = b.pick(["float32", "int64", "float16"] if x.dtype != "float32" else ["int64", "float16", "float64"])
    y = b.node("Cast", [x.name], to=to_elem_type(to))[0]
    if to in ("float16", "float64"):  # back, so the value stays usable
        y = b.node("Cast", [y], to=to_elem_type("float32"))[0]
        to = "float32"
    return b.value(y, to, x.dims)


def binary(b: Builder, x: V) -> V | None:
    op = b.pick(["Add", "Mul", "Sub", "Max"])
    kind = b.integer(0, 5)
    if kind == 0:  # an earlier value of the same dtype: any broadcast, right or wrong
        others = [v for v in b.values if v.dtype == x.dtype]
        y = b.pick(others)
    elif kind == 1:
        r = b.integer(0, x.rank)
        y = V(b.const(np.ones([1] * r, dtype=x.dtype), x.dtype), x.dtype, (1,) * r)
    else:
        y = b.operand(x)
    args = [x.name, y.name] if b.flag() else [y.name, x.name]
    return b.value(b.node(op, args)[0], x.dtype, [None] * max(x.rank, y.rank))


def shape_part(b: Builder, src: V) -> tuple[str, int]:
    """A 1-d int64 piece of a target computed from ``src``'s shape, and its length."""
    start = b.integer(-src.rank, src.rank) if b.opset >= 15 and b.integer(0, 4) == 0 else None
    sh = b.node("Shape", [src.name], **({} if start is None else {"start": start}))[0]
    r = src.rank if start is None else len(range(src.rank)[start:])
    kind = b.integer(0, 5)
    if kind == 0 or r == 0:
        return sh, r
    if kind == 1:
        i = b.integer(-r, r - 1) if b.integer(0, 9) else b.pick([-r - 1, r])
        return b.node("Gather", [sh, b.const([i])], axis=0)[0], 1
    if kind == 2:
        s, e = b.integer(-r - 1, r + 1), b.pick([b.integer(-r - 1, r + 1), BIG, -BIG])
        step = b.pick([1, 1, -1, 2, -2])
        if "slice-negative-start" in b.avoid and step < 0:
            s = max(s, -1)
        n = onnx_slice_len(r, s, e, step)
        return b.node("Slice", [sh, b.const([s]), b.const([e]), b.const([0]), b.const([step])])[0], n
    i, j = b.integer(0, r - 1), b.integer(0, r - 1)
    gi = b.node("Gather", [sh, b.const([i])], axis=0)[0]
    if kind == 3:  # a product of two entries
        gj = b.node("Gather", [sh, b.const([j])], axis=0)[0]
        return b.node(b.pick(["Mul", "Add", "Max", "Min"]), [gi, gj])[0], 1
    if kind == 4:  # an entry and a constant
        op = b.pick(["Add", "Sub", "Mul", "Div", "Max", "Min", "Mod"])
        return b.node(op, [gi, b.const([b.integer(1, 3)])])[0], 1
    j = i + b.integer(1, 2)
    sl = b.node("Slice", [sh, b.const([i]), b.const([j])])[0]
    if "reduce-value" in b.avoid:
        return sl, len(range(r)[i:j])
    if b.opset >= 18:
        return b.node("ReduceProd", [sl, b.const([0])], keepdims=1)[0], 1
    return b.node("ReduceProd", [sl], axes=[0], keepdims=1)[0], 1


def _target(b: Builder, x: V) -> tuple[str, int]:
    """A reshape/expand target: a constant, or computed from shapes."""
    if b.flag() or (b.zero and "reshape-empty-target" in b.avoid):
        entries: list[int] = []
        i = 0
        while i < x.rank:
            k = b.integer(1, min(3, x.rank - i))
            d = x.dims[i]
            one = [0, -1, d if isinstance(d, int) else 2, 1]
            entries.append(b.pick(one) if k == 1 else b.pick([-1, 4, 6]))
            i += k
        if b.integer(0, 3) == 0:
            entries.insert(b.integer(0, len(entries)), b.pick([1, -1, 2]))
        return b.const(entries), len(entries)
    parts: list[tuple[str, int]] = []
    for _ in range(b.integer(1, 3)):
        if b.integer(0, 2) == 0:
            vals = [b.pick([-1, 0, 1, 2, 3])]
            parts.append((b.const(vals), 1))
        else:
            parts.append(shape_part(b, b.pick(b.values[-4:]) if b.flag() else x))
    if len(parts) == 1:
        return parts[0]
    return b.node("Concat", [p for p, _ in parts], axis=0)[0], sum(n for _, n in parts)


def reshape(b: Builder, x: V) -> V | None:
    t, n = _target(b, x)
    attrs = {"allowzero": 1} if b.integer(0, 7) == 0 else {}
    return b.value(b.node("Reshape", [x.name, t], **attrs)[0], x.dtype, [None] * n)


def expand(b: Builder, x: V) -> V | None:
    if b.flag():
        extra = b.integer(0, 2)
        entries = [b.pick([1, 2, 3]) for _ in range(extra)]
        entries += [b.pick([1, d if isinstance(d, int) else 1, 3]) for d in x.dims]
        t, n = b.const(entries), len(entries)
    else:
        t, n = shape_part(b, b.operand(x) if b.flag() else b.pick(b.values))
    return b.value(b.node("Expand", [x.name, t])[0], x.dtype, [None] * max(n, x.rank))


def squeeze(b: Builder, x: V) -> V | None:
    if x.rank == 0:
        return None
    cands = [i for i, d in enumerate(x.dims) if d == 1 or isinstance(d, str) or d is None] or [0]
    axes = sorted(set(b.draw(st.lists(st.sampled_from(cands), min_size=1, max_size=2))))
    neg = [a - x.rank if b.flag() else a for a in axes]
    dims = [d for i, d in enumerate(x.dims) if i not in axes]
    return b.value(b.node("Squeeze", [x.name, b.const(neg)])[0], x.dtype, dims)


def unsqueeze(b: Builder, x: V) -> V | None:
    k = b.integer(1, 2)
    r = x.rank + k
    axes = sorted(set(b.draw(st.lists(st.integers(0, r - 1), min_size=k, max_size=k, unique=True))))
    dims: list[Dim] = list(x.dims)
    for a in axes:
        dims.insert(a, 1)
    given = [a - r if b.flag() else a for a in axes]
    return b.value(b.node("Unsqueeze", [x.name, b.const(given)])[0], x.dtype, dims)


def transpose(b: Builder, x: V) -> V | None:
    if x.rank == 0 or b.integer(0, 4) == 0:
        return b.value(b.node("Transpose", [x.name])[0], x.dtype, x.dims[::-1])
    perm = list(b.draw(st.permutations(list(range(x.rank)))))
    return b.value(b.node("Transpose", [x.name], perm=perm)[0], x.dtype, [x.dims[p] for p in perm])


def concat(b: Builder, x: V) -> V | None:
    if x.rank == 0:
        return None
    axis = b.integer(-x.rank, x.rank - 1)
    a = axis % x.rank
    ys = []
    for _ in range(b.integer(1, 2)):
        if b.integer(0, 3) == 0:
            ys.append(b.pick([v for v in b.values if v.dtype == x.dtype]))
        else:
            dims_y = [b.input_dim() if i == a else b.like(d) for i, d in enumerate(x.dims)]
            ys.append(b.new_input(x.dtype, dims_y))
    dims = [None if i == a else d for i, d in enumerate(x.dims)]
    return b.value(b.node("Concat", [x.name] + [y.name for y in ys], axis=axis)[0], x.dtype, dims)


def split(b: Builder, x: V) -> V | None:
    if x.rank == 0:
        return None
    axis = b.integer(-x.rank, x.rank - 1)
    kind = b.integer(0, 2)
    if kind == 0:
        sizes = [b.integer(0, 3) for _ in range(b.integer(1, 3))]
        outs = b.node("Split", [x.name, b.const(sizes)], n_out=len(sizes), axis=axis)
    elif kind == 1 and b.opset >= 18 and "split-num-outputs" not in b.avoid:
        k = b.integer(1, 3)
        outs = b.node("Split", [x.name], n_out=k, axis=axis, num_outputs=k)
    else:
        outs = b.node("Split", [x.name], n_out=b.integer(1, 3), axis=axis)
    a = axis % x.rank
    dims = [None if i == a else d for i, d in enumerate(x.dims)]
    for o in outs[:-1]:
        b.value(o, x.dtype, dims)
    return b.value(outs[-1], x.dtype, dims)


def slice_(b: Builder, x: V) -> V | None:
    if x.rank == 0:
        return None
    axes = sorted(set(b.draw(st.lists(st.integers(0, x.rank - 1), min_size=1, max_size=min(2, x.rank)))))
    bound = st.sampled_from([-BIG, -5, -3, -2, -1, 0, 1, 2, 3, 5, BIG])
    starts = [b.draw(bound) for _ in axes]
    ends = [b.draw(bound) for _ in axes]
    steps = [b.pick([1, 1, 1, -1, 2, -2, 3]) for _ in axes]
    if "slice-negative-start" in b.avoid:
        starts = [max(v, -1) if k < 0 else v for v, k in zip(starts, steps)]
    ins = [x.name, b.const(starts), b.const(ends)]
    if b.integer(0, 3) != 0 or any(s != 1 for s in steps):
        ins.append(b.const([a - x.rank if b.flag() else a for a in axes]))
        if b.flag() or any(s != 1 for s in steps):
            ins.append(b.const(steps))
    else:
        axes = list(range(len(axes)))  # without axes: the first ones
    dims = [None if i in axes else d for i, d in enumerate(x.dims)]
    return b.value(b.node("Slice", ins)[0], x.dtype, dims)


def gather(b: Builder, x: V) -> V | None:
    if x.rank == 0:
        return None
    axis = b.integer(-x.rank, x.rank - 1)
    ishape = b.pick([(), (1,), (2,), (2, 2)])
    n = int(np.prod(ishape))
    idx = np.array(b.draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n)), np.int64).reshape(ishape)
    a = axis % x.rank
    dims = list(x.dims[:a]) + list(ishape) + list(x.dims[a + 1 :])
    return b.value(b.node("Gather", [x.name, b.const(idx)], axis=axis)[0], x.dtype, dims)


def gather_elements(b: Builder, x: V) -> V | None:
    if x.rank == 0:
        return None
    axis = b.integer(-x.rank, x.rank - 1)
    ishape = tuple(b.pick([1, 2, d if isinstance(d, int) else 1]) for d in x.dims)
    n = int(np.prod(ishape))
    idx = np.array(b.draw(st.lists(st.integers(-2, 2), min_size=n, max_size=n)), np.int64).reshape(ishape)
    return b.value(b.node("GatherElements", [x.name, b.const(idx)], axis=axis)[0], x.dtype, ishape)


def tile(b: Builder, x: V) -> V | None:
    if x.rank and b.integer(0, 2) == 0 and "tile-computed" not in b.avoid:  # repeats from a shape
        reps, _ = shape_part(b, b.pick(b.values))
    else:
        reps = b.const([b.pick([1, 1, 2, 3]) for _ in x.dims])
    return b.value(b.node("Tile", [x.name, reps])[0], x.dtype, [None] * x.rank)


def pad(b: Builder, x: V) -> V | None:
    if x.rank == 0:
        return None
    mode = b.pick(["constant", "constant", "reflect", "edge"])
    if b.opset >= 18 and b.flag():
        axes = sorted(set(b.draw(st.lists(st.integers(0, x.rank - 1), min_size=1, max_size=2))))
        pads = [b.integer(-1, 2) for _ in range(2 * len(axes))]
        ins = [x.name, b.const(pads), "", b.const([a - x.rank if b.flag() else a for a in axes])]
    elif b.integer(0, 3) == 0:  # pads computed from the shape: entries d_i - k or constants
        sh = b.node("Shape", [x.name])[0]
        parts = []
        for _ in range(2 * x.rank):
            if b.flag():
                parts.append(b.const([b.integer(-1, 2)]))
            else:
                g = b.node("Gather", [sh, b.const([b.integer(0, x.rank - 1)])], axis=0)[0]
                parts.append(b.node("Sub", [g, b.const([b.integer(0, 3)])])[0])
        ins = [x.name, b.node("Concat", parts, axis=0)[0] if len(parts) > 1 else parts[0]]
    else:
        ins = [x.name, b.const([b.integer(-1, 2) for _ in range(2 * x.rank)])]
    return b.value(b.node("Pad", ins, mode=mode)[0], x.dtype, [None] * x.rank)
