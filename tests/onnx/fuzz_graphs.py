"""A hypothesis strategy of small random ONNX graphs over symbolic input sizes, for the
differential fuzzer (:mod:`tests.onnx.test_onnx_differential_fuzz`).

A graph has one to three graph inputs whose dimensions are constants or ``dim_param`` symbols
(``a``, ``b``, ``c``, shared across inputs), then 2-6 operator steps (a step may add a few helper
nodes: ``Shape``/``Gather``/``Concat`` building a reshape target, say), each applied to an
earlier value (the latest one: a chain, or any: a DAG). Secondary operands are new graph inputs
shaped after the value they combine with (the same dimension, a 1, another symbol, a constant)
or constants. The generator knows each value's rank and, where it can, its dimensions (``None``
where it cannot): enough to draw plausible attributes; whether the graph runs at a size is the
oracle's business (onnxruntime), never the generator's.

Every node output is a graph output, so that every intermediate shape is compared.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from hypothesis import strategies as st
from onnx import helper, numpy_helper

from symshape.onnx.dtypes import to_elem_type

__all__ = ["Graph", "graphs", "OPS", "SYMBOLS", "AVOID"]

SYMBOLS = ("a", "b", "c")
#: values the symbols take at the sizes compared
SIZES = (1, 2, 3, 4, 5, 6, 8)
BIG = 2**62

Dim = int | str | None

#: patterns of known findings that :func:`graphs` can leave out (``avoid``) to find others:
#: "tile-computed" (Tile by computed repeats), "reduce-value" (ReduceProd of a shape),
#: "slice-negative-start" (a negative step from a start below -dim), "split-num-outputs"
AVOID: frozenset[str] = frozenset(
    {"tile-computed", "reduce-value", "slice-negative-start", "split-num-outputs"}
)


@dataclass
class V:
    """A value of the graph under construction: its name, dtype and known dimensions."""

    name: str
    dtype: str
    dims: tuple[Dim, ...]

    @property
    def rank(self) -> int:
        return len(self.dims)


@dataclass
class Graph:
    """A generated graph: the model, its symbols, the sizes to compare at, the steps' op names."""

    model: onnx.ModelProto
    symbols: tuple[str, ...]
    sizes: tuple[dict[str, int], ...]
    ops: tuple[str, ...]
    inputs: tuple[tuple[str, str, tuple[int | str, ...]], ...]

    def __repr__(self) -> str:
        lines = [f"ops={self.ops} symbols={self.symbols} sizes={self.sizes}"]
        lines += [f"input {n}: {d} {s}" for n, d, s in self.inputs]
        lines += [onnx.printer.to_text(self.model.graph)]
        return "\n".join(lines)


@dataclass
class Builder:
    """The graph under construction."""

    draw: Callable[[Any], Any]
    opset: int
    symbols: tuple[str, ...]
    avoid: frozenset[str] = frozenset()
    values: list[V] = field(default_factory=list)
    inputs: list[V] = field(default_factory=list)
    nodes: list[onnx.NodeProto] = field(default_factory=list)
    inits: list[onnx.TensorProto] = field(default_factory=list)
    n: int = 0

    def fresh(self, stem: str) -> str:
        self.n += 1
        return f"{stem}{self.n}"

    def pick(self, options: Sequence[Any]) -> Any:
        return self.draw(st.sampled_from(list(options)))

    def integer(self, lo: int, hi: int) -> int:
        return int(self.draw(st.integers(lo, hi)))

    def flag(self) -> bool:
        return bool(self.draw(st.booleans()))

    def const(self, value: Any, dtype: str = "int64") -> str:
        name = self.fresh("k")
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def node(self, op: str, inputs: Sequence[str], n_out: int = 1, **attrs: Any) -> list[str]:
        outs = [self.fresh(op.lower()[:4]) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op, list(inputs), outs, name=self.fresh("n"), **attrs))
        return outs

    def value(self, name: str, dtype: str, dims: Sequence[Dim]) -> V:
        v = V(name, dtype, tuple(dims))
        self.values.append(v)
        return v

    def symbol_dim(self) -> str:
        return str(self.pick(self.symbols))

    def input_dim(self) -> int | str:
        d: int | str = self.pick([*self.symbols, *self.symbols, 1, 2, 3, 4])
        return d

    def new_input(self, dtype: str, dims: Sequence[int | str]) -> V:
        v = V(self.fresh("in"), dtype, tuple(dims))
        self.inputs.append(v)
        self.values.append(v)
        return v

    def like(self, d: Dim) -> int | str:
        """A dimension for an operand combined with a value's dimension ``d``: mostly ``d``
        itself, else a 1, a symbol or a constant."""
        base: list[int | str] = [d] * 4 if d is not None else [self.symbol_dim()] if self.symbols else [2]
        got: int | str = self.pick([*base, 1, self.input_dim()])
        return got

    def operand(self, x: V, dtype: str | None = None) -> V:
        """A new graph input broadcasting with ``x`` (maybe of a lower rank)."""
        drop = self.integer(0, x.rank) if self.integer(0, 3) == 0 else 0
        return self.new_input(dtype or x.dtype, [self.like(d) for d in x.dims[drop:]])


def onnx_slice_len(d: int, start: int, end: int, step: int) -> int:
    """The length of ONNX's ``Slice`` of ``d`` elements (its clamping: a start below ``-d``
    with a negative step is the first element, where numpy's is empty)."""
    start, end = start + d if start < 0 else start, end + d if end < 0 else end
    if step > 0:
        start, end = min(max(start, 0), d), min(max(end, 0), d)
        return max(0, -(-(end - start) // step))
    start, end = min(max(start, 0), d - 1), min(max(end, -1), d - 1)
    return max(0, -(-(start - end) // -step))


# --- the steps: each takes the builder and a value, adds nodes, returns the new value (None if
# --- the step does not apply to that value)

Step = Callable[[Builder, V], V | None]


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


def _shape_part(b: Builder, src: V) -> tuple[str, int]:
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
    if b.flag():
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
            parts.append(_shape_part(b, b.pick(b.values[-4:]) if b.flag() else x))
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
        t, n = _shape_part(b, b.operand(x) if b.flag() else b.pick(b.values))
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
        reps, _ = _shape_part(b, b.pick(b.values))
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


def matmul(b: Builder, x: V) -> V | None:
    if x.dtype != "float32" or x.rank == 0:
        return None
    k = x.dims[-1]
    r = b.integer(1, 3)
    dims = [b.like(None) for _ in range(r - 2)] + [b.like(k)] + ([b.input_dim()] if r >= 2 else [])
    y = b.new_input("float32", dims)
    args = [x.name, y.name] if b.flag() or x.rank < 2 else [y.name, x.name]
    return b.value(b.node("MatMul", args)[0], "float32", [None] * max(x.rank, r, 1))


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
    t, n = _shape_part(b, x)
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


OPS: dict[str, Step] = {
    "unary": unary,
    "cast": cast,
    "binary": binary,
    "reshape": reshape,
    "expand": expand,
    "squeeze": squeeze,
    "unsqueeze": unsqueeze,
    "transpose": transpose,
    "concat": concat,
    "split": split,
    "slice": slice_,
    "gather": gather,
    "gather_elements": gather_elements,
    "tile": tile,
    "pad": pad,
    "matmul": matmul,
    "gemm": gemm,
    "conv": conv,
    "pool": pool,
    "reduce": reduce,
    "where": where,
    "range": range_,
    "constant_of_shape": constant_of_shape,
    "topk": topk,
    "flatten": flatten,
    "resize": resize,
    "gather_nd": gather_nd,
    "scatter_elements": scatter_elements,
    "scatter_nd": scatter_nd,
    "one_hot": one_hot,
    "compress": compress,
    "compare": compare,
    "normalize": normalize,
    "cumsum": cumsum,
    "trilu": trilu,
    "einsum": einsum,
}


@st.composite
def graphs(
    draw: Callable[[Any], Any],
    ops: Sequence[str] = tuple(OPS),
    max_steps: int = 6,
    avoid: frozenset[str] = frozenset(),
) -> Graph:
    """A random graph (see the module docstring) and sizes to compare it at, without the
    patterns ``avoid`` (names in :data:`AVOID`)."""
    symbols = tuple(draw(st.lists(st.sampled_from(SYMBOLS), min_size=1, max_size=3, unique=True)))
    opset = draw(st.sampled_from([13, 17, 18, 18]))
    b = Builder(draw, opset, symbols, avoid)
    for _ in range(draw(st.integers(1, 2))):
        b.new_input("float32", [b.input_dim() for _ in range(draw(st.integers(1, 4)))])
    names: list[str] = []
    for _ in range(draw(st.integers(2, max_steps))):
        x = b.values[-1] if draw(st.booleans()) else draw(st.sampled_from(b.values))
        op = draw(st.sampled_from(list(ops)))
        if OPS[op](b, x) is not None:
            names.append(op)
    ins = [helper.make_tensor_value_info(v.name, to_elem_type(v.dtype), list(v.dims)) for v in b.inputs]
    outs = [helper.make_empty_tensor_value_info(o) for n in b.nodes for o in n.output]
    g = helper.make_graph(b.nodes, "fuzz", ins, outs, b.inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    # the symbols often coincide (broadcasts need it): each size takes its values from two
    pool = st.lists(st.sampled_from(SIZES), min_size=2, max_size=2).flatmap(
        lambda vs: st.fixed_dictionaries({s: st.sampled_from(vs) for s in symbols})
    )
    sizes = draw(st.lists(pool, min_size=3, max_size=5))
    inputs = tuple((v.name, v.dtype, tuple(d for d in v.dims if d is not None)) for v in b.inputs)
    return Graph(model, symbols, tuple(sizes), tuple(names), inputs)
