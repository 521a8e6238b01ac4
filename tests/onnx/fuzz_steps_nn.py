"""The fuzzer's other steps (:mod:`tests.onnx.fuzz_graphs`): matmul, gemm, conv, pools,
reductions, where, range, constant-of-shape, top-k, flatten, resize, the ND gathers and
scatters, one-hot, compress, comparisons, normalizations, cumsum, trilu, einsum.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from hypothesis import strategies as st
from onnx import helper
from tests.onnx.fuzz_builder import Builder, V
from tests.onnx.fuzz_steps import shape_part

from symshape.onnx.dtypes import to_elem_type

__all__ = [
    "compare",
    "compress",
    "constant_of_shape",
    "conv",
    "cumsum",
    "einsum",
    "flatten",
    "gather_nd",
    "gemm",
    "matmul",
    "normalize",
    "one_hot",
    "pool",
    "range_",
    "reduce",
    "resize",
    "scatter_elements",
    "scatter_nd",
    "topk",
    "trilu",
    "where",
]


def matmul(b: Builder, x: V) -> V | None:
    if x.dtype != "float32" or x.rank == 0:
        return None
    k = x.dims[-1]
    r = b.integer(1, 3)
    dims = [b.like(None) for _ in range(r - 2)] + [b.like(k)] + ([b.input_dim()] if r >= 2 else [])
    y = b.new_input("float32", dims)
    first, second = (x, y) if b.flag() or x.rank < 2 else (y, x)
    ranks = first.rank, second.rank  # (a 1-d operand's axis is contracted away)
    rank = max(ranks) if min(ranks) >= 2 else 0 if ranks == (1, 1) else max(ranks) - 1
    return b.value(b.node("MatMul", [first.name, second.name])[0], "float32", [None] * rank)


def gemm(b: Builder, x: V) -> V | None:
    if x.dtype != "float32" or x.rank != 2:
        return None
    ta, tb = b.integer(0, 1), b.integer(0, 1)
    k = x.dims[0] if ta else x.dims[1]
    n = b.input_dim()
    y = b.new_input("float32", [n, b.like(k)] if tb else [b.like(k), n])
    ins = [x.name, y.name]
    if b.flag():
        ins.append(b.new_input("float32", b.pick([[n], [1], [b.like(None), n]])).name)
    return b.value(b.node("Gemm", ins, transA=ta, transB=tb)[0], "float32", [None, None])


def _window(b: Builder, x: V, pool: bool) -> dict[str, Any]:
    s = x.rank - 2
    kernel = [b.integer(1, 3) for _ in range(s)]
    attrs: dict[str, Any] = {"kernel_shape": kernel} if pool or b.flag() else {}
    if b.flag():
        attrs["strides"] = [b.integer(1, 2) for _ in range(s)]
    if b.flag():
        attrs["dilations"] = [b.integer(1, 2) for _ in range(s)]
    if b.integer(0, 3) == 0:
        attrs["auto_pad"] = b.pick(["SAME_UPPER", "SAME_LOWER", "VALID"])
        if attrs["auto_pad"] != "VALID":  # (onnxruntime: Conv refuses, pools ignore the dilation)
            attrs.pop("dilations", None)
    elif b.flag():
        attrs["pads"] = [b.integer(0, min(2, kernel[i % s] - (1 if pool else 0))) for i in range(2 * s)]
    return attrs


def conv(b: Builder, x: V) -> V | None:
    if x.dtype != "float32" or x.rank not in (3, 4):
        return None
    c = x.dims[1] if isinstance(x.dims[1], int) else b.pick([1, 2, 3])
    group = 2 if c % 2 == 0 and b.integer(0, 3) == 0 else 1
    m = b.pick([1, 2, 4]) * group
    attrs = _window(b, x, pool=False)
    kernel = attrs.get("kernel_shape") or [b.integer(1, 3) for _ in range(x.rank - 2)]
    w = b.const(np.ones([m, c // group, *kernel]), "float32")
    ins = [x.name, w] + ([b.const(np.ones([m]), "float32")] if b.flag() else [])
    dims = [x.dims[0], m] + [None] * (x.rank - 2)
    return b.value(b.node("Conv", ins, group=group, **attrs)[0], "float32", dims)


def pool(b: Builder, x: V) -> V | None:
    if x.dtype != "float32" or x.rank not in (3, 4):
        return None
    op = b.pick(["MaxPool", "AveragePool", "GlobalAveragePool"])
    if op == "GlobalAveragePool":
        return b.value(b.node(op, [x.name])[0], "float32", list(x.dims[:2]) + [1] * (x.rank - 2))
    attrs = _window(b, x, pool=True)
    if op == "AveragePool" and b.opset < 19:
        attrs.pop("dilations", None)
    if b.integer(0, 3) == 0:
        attrs["ceil_mode"] = 1
    if op == "AveragePool" and b.flag():
        attrs["count_include_pad"] = 1
    return b.value(b.node(op, [x.name], **attrs)[0], "float32", list(x.dims[:2]) + [None] * (x.rank - 2))


def reduce(b: Builder, x: V) -> V | None:
    op = b.pick(["ReduceSum", "ReduceMean", "ReduceMax", "ArgMax"])
    keep = b.integer(0, 1)
    if op == "ArgMax":
        if x.rank == 0:
            return None
        axis = b.integer(-x.rank, x.rank - 1)
        a = axis % x.rank
        dims = [1 if i == a else d for i, d in enumerate(x.dims) if keep or i != a]
        return b.value(b.node(op, [x.name], axis=axis, keepdims=keep)[0], "int64", dims)
    if x.rank == 0 or b.integer(0, 4) == 0:
        noop = b.integer(0, 1)
        ins = [x.name]
        if b.flag() and (op == "ReduceSum" or b.opset >= 18):
            ins.append(b.const(np.zeros([0], np.int64)))
        attrs = {"noop_with_empty_axes": noop} if op == "ReduceSum" or b.opset >= 18 else {}
        noop = attrs.get("noop_with_empty_axes", 0)
        out = b.node(op, ins, keepdims=keep, **attrs)[0]
        dims = list(x.dims) if noop else [1] * x.rank if keep else []
        return b.value(out, x.dtype, dims)
    axes = sorted(set(b.draw(st.lists(st.integers(0, x.rank - 1), min_size=1, max_size=2))))
    given = [a - x.rank if b.flag() else a for a in axes]
    dims = [1 if i in axes else d for i, d in enumerate(x.dims) if keep or i not in axes]
    if op != "ReduceSum" and b.opset < 18:  # axes an attribute before opset 18
        return b.value(b.node(op, [x.name], axes=given, keepdims=keep)[0], x.dtype, dims)
    return b.value(b.node(op, [x.name, b.const(given)], keepdims=keep)[0], x.dtype, dims)


def where(b: Builder, x: V) -> V | None:
    c = b.operand(x, "bool")
    y = b.operand(x) if b.flag() else V(b.const(np.zeros((), x.dtype), x.dtype), x.dtype, ())
    args = [c.name, x.name, y.name] if b.flag() else [c.name, y.name, x.name]
    return b.value(b.node("Where", args)[0], x.dtype, [None] * max(x.rank, c.rank, y.rank))


def range_(b: Builder, x: V) -> V | None:
    if x.rank == 0:
        return None
    sh = b.node("Shape", [x.name])[0]
    i = b.integer(-x.rank, x.rank - 1)
    lim = b.node("Gather", [sh, b.const(i)], axis=0)[0]
    if b.flag():
        lim = b.node(b.pick(["Add", "Mul", "Sub"]), [lim, b.const(b.integer(1, 2))])[0]
    start = b.const(b.pick([0, 0, 1, -1]))
    delta = b.const(b.pick([1, 1, 2, -1]))
    args = [start, lim, delta] if b.integer(0, 4) else [lim, start, delta]
    return b.value(b.node("Range", args)[0], "int64", [None])


def constant_of_shape(b: Builder, x: V) -> V | None:
    t, n = shape_part(b, x)
    value = helper.make_tensor("value", to_elem_type("float32"), [1], [1.0])
    return b.value(b.node("ConstantOfShape", [t], value=value)[0], "float32", [None] * n)


def topk(b: Builder, x: V) -> V | None:
    if x.rank == 0:
        return None
    axis = b.integer(-x.rank, x.rank - 1)
    if b.flag():
        k = b.const([b.integer(0, 3)])
    else:
        sh = b.node("Shape", [x.name])[0]
        k = b.node("Gather", [sh, b.const([b.integer(-x.rank, x.rank - 1)])], axis=0)[0]
    vals, idx = b.node("TopK", [x.name, k], n_out=2, axis=axis, largest=b.integer(0, 1))
    a = axis % x.rank
    dims = [None if i == a else d for i, d in enumerate(x.dims)]
    b.value(idx, "int64", dims)
    return b.value(vals, x.dtype, dims)


def flatten(b: Builder, x: V) -> V | None:
    axis = b.integer(-x.rank, x.rank) if x.rank else 0
    return b.value(b.node("Flatten", [x.name], axis=axis)[0], x.dtype, [None, None])


def resize(b: Builder, x: V) -> V | None:
    if x.dtype != "float32" or x.rank < 1:
        return None
    lead = min(2, x.rank - 1)
    by_scales = b.flag()
    if by_scales:
        scales = [1.0] * lead + [b.pick([0.5, 1.0, 1.5, 2.0, 3.0]) for _ in range(x.rank - lead)]
        ins = [x.name, "", b.const(scales, "float32")]
    else:
        sizes = [d if isinstance(d, int) else 1 for d in x.dims[:lead]]
        sizes += [b.integer(1, 5) for _ in range(x.rank - lead)]
        ins = [x.name, "", "", b.const(sizes)]
    # (onnxruntime's linear mode takes some ranks and scales only (sizes are scales): not ONNX's rule)
    mode = b.pick(["nearest", "nearest", "linear"]) if x.rank in (2, 4) and by_scales else "nearest"
    return b.value(b.node("Resize", ins, mode=mode)[0], "float32", [None] * x.rank)


def _indices(b: Builder, shape: Sequence[int], lo: int = -2, hi: int = 2) -> np.ndarray[Any, Any]:
    n = int(np.prod(shape)) if len(shape) else 1
    vals = b.draw(st.lists(st.integers(lo, hi), min_size=n, max_size=n))
    return np.array(vals, np.int64).reshape(tuple(shape))


def gather_nd(b: Builder, x: V) -> V | None:
    if x.rank == 0:
        return None
    bd = b.integer(0, min(1, x.rank - 1))
    k = b.integer(1, x.rank - bd)
    lead = [x.dims[0] if isinstance(x.dims[0], int) else b.pick([1, 2])] if bd else []
    ishape = lead + [b.pick([1, 2])] * b.integer(0, 1) + [k]
    idx = b.const(_indices(b, ishape))
    dims = [None] * (len(ishape) - 1) + list(x.dims[bd + k :])
    return b.value(b.node("GatherND", [x.name, idx], batch_dims=bd)[0], x.dtype, dims)


def scatter_elements(b: Builder, x: V) -> V | None:
    if x.rank == 0:
        return None
    axis = b.integer(-x.rank, x.rank - 1)
    ishape = [b.pick([1, 2, d if isinstance(d, int) else 1]) for d in x.dims]
    upd = b.const(np.ones(ishape, x.dtype), x.dtype)
    out = b.node("ScatterElements", [x.name, b.const(_indices(b, ishape)), upd], axis=axis)[0]
    return b.value(out, x.dtype, x.dims)


def scatter_nd(b: Builder, x: V) -> V | None:
    if x.rank == 0:
        return None
    k = b.integer(1, x.rank)
    n = b.pick([1, 2])
    idx = _indices(b, [n, k], -1, 1)
    if n == 2 and (idx[0] == idx[1]).all():  # (duplicate indices: an undefined result)
        n, idx = 1, idx[:1]
    upd = b.new_input(x.dtype, [n] + [b.like(d) for d in x.dims[k:]])
    return b.value(b.node("ScatterND", [x.name, b.const(idx), upd.name])[0], x.dtype, x.dims)


def one_hot(b: Builder, x: V) -> V | None:
    if x.rank == 0:
        return None
    sh = b.node("Shape", [x.name])[0]
    depth = b.node("Gather", [sh, b.const(b.integer(-x.rank, x.rank - 1))], axis=0)[0]
    if b.flag():
        depth = b.const(b.integer(1, 4))
    ishape = b.pick([(), (2,), (1, 3)])
    axis = b.integer(-len(ishape) - 1, len(ishape))
    vals = b.const(np.array([0.0, 1.0], np.float32), "float32")
    out = b.node("OneHot", [b.const(_indices(b, ishape, -3, 3)), depth, vals], axis=axis)[0]
    return b.value(out, "float32", [None] * (len(ishape) + 1))


def compress(b: Builder, x: V) -> V | None:
    if x.rank == 0:
        return None
    n = b.integer(1, 4)
    cond = b.const(np.array(b.draw(st.lists(st.booleans(), min_size=n, max_size=n))), "bool")
    if b.flag():
        axis = b.integer(-x.rank, x.rank - 1)
        a = axis % x.rank
        dims = [None if i == a else d for i, d in enumerate(x.dims)]
        return b.value(b.node("Compress", [x.name, cond], axis=axis)[0], x.dtype, dims)
    return b.value(b.node("Compress", [x.name, cond])[0], x.dtype, [None])


def compare(b: Builder, x: V) -> V | None:
    op = b.pick(["Less", "Equal", "Greater"])
    y = b.operand(x)
    c = b.node(op, [x.name, y.name])[0]
    dims = [None] * max(x.rank, y.rank)
    if b.flag():
        b.value(c, "bool", dims)
        return b.value(b.node("Cast", [c], to=to_elem_type(x.dtype))[0], x.dtype, dims)
    return b.value(b.node("Where", [c, x.name, y.name])[0], x.dtype, dims)


def normalize(b: Builder, x: V) -> V | None:
    if x.dtype != "float32" or x.rank == 0:
        return None
    axis = b.integer(-x.rank, x.rank - 1)
    if b.flag() or b.opset < 17:
        return b.value(b.node(b.pick(["Softmax", "LogSoftmax"]), [x.name], axis=axis)[0], x.dtype, x.dims)
    sdims = [b.like(d) for d in x.dims[axis % x.rank :]]
    scale = b.new_input("float32", sdims)
    ins = [x.name, scale.name] + ([b.new_input("float32", sdims).name] if b.flag() else [])
    return b.value(b.node("LayerNormalization", ins, axis=axis)[0], x.dtype, x.dims)


def cumsum(b: Builder, x: V) -> V | None:
    if x.rank == 0:
        return None
    axis = b.const(b.integer(-x.rank, x.rank - 1))
    return b.value(b.node("CumSum", [x.name, axis], reverse=b.integer(0, 1))[0], x.dtype, x.dims)


def trilu(b: Builder, x: V) -> V | None:
    if x.rank < 2:
        return None
    ins = [x.name] + ([b.const(b.integer(-2, 2))] if b.flag() else [])
    return b.value(b.node("Trilu", ins, upper=b.integer(0, 1))[0], x.dtype, x.dims)


def einsum(b: Builder, x: V) -> V | None:
    if x.dtype != "float32" or x.rank not in (2, 3):
        return None
    if x.rank == 2:
        eq, dims = b.pick([("ij,jk->ik", None), ("ij,kj->ik", None), ("ij->ji", ()), ("ij->i", ())])
    else:
        eq, dims = b.pick([("bij,bjk->bik", None), ("bij->bji", ()), ("bij,bkj->bik", None)])
    if dims == ():
        out = b.node("Einsum", [x.name], equation=eq)[0]
    else:
        lhs = eq.split("->")[0].split(",")
        letter = {c: d for c, d in zip(lhs[0], x.dims)}
        k = b.input_dim()
        y = b.new_input("float32", [b.like(letter[c]) if c in letter else k for c in lhs[1]])
        out = b.node("Einsum", [x.name, y.name], equation=eq)[0]
    return b.value(out, "float32", [None] * len(eq.split("->")[1]))
