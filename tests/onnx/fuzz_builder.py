"""The graph under construction for the ONNX differential fuzzer (:mod:`tests.onnx.fuzz_graphs`):
its values (name, dtype, known dimensions), the builder that adds nodes, inputs and constants
with hypothesis' ``draw``, and the generated graph.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from hypothesis import strategies as st
from onnx import helper, numpy_helper

__all__ = ["AVOID", "BIG", "SIZES", "SYMBOLS", "Builder", "Dim", "Graph", "Step", "V", "onnx_slice_len"]

SYMBOLS = ("a", "b", "c")
#: values the symbols take at the sizes compared (and 0 in a graph whose symbols may be 0)
SIZES = (1, 2, 3, 4, 5, 6, 8)
BIG = 2**62

Dim = int | str | None

#: patterns of known findings that :func:`graphs` can leave out (``avoid``) to find others:
#: "tile-computed" (Tile by computed repeats), "reduce-value" (ReduceProd of a shape),
#: "slice-negative-start" (a negative step from a start below -dim), "split-num-outputs", and
#: those of test_onnx_differential_fuzz.KNOWN (empty: all fixed): "slice-runtime-axes" (Slice by
#: axes computed at run time was unsupported), "conv-transpose-output-shape" (an output_shape over
#: the full size was not checked), "reshape-empty-target" (a computed reshape target of an empty
#: tensor was guarded non-empty), "center-crop-pad-empty" (CenterCropPad of an empty axis was
#: refused), "maxpool-indices-same" (MaxPool SAME with Indices took the single-output kernel's
#: guard), "conv-transpose-empty" (ConvTranspose to an empty output was accepted)
AVOID: frozenset[str] = frozenset(
    {
        "tile-computed",
        "reduce-value",
        "slice-negative-start",
        "split-num-outputs",
        "slice-runtime-axes",
        "conv-transpose-output-shape",
        "reshape-empty-target",
        "center-crop-pad-empty",
        "maxpool-indices-same",
        "conv-transpose-empty",
    }
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
    #: the value range of each integer input fed at run time (expressions of the symbols)
    ranges: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: whether the symbols may be 0 (declared ``min=0``)
    zero: bool = False

    def __repr__(self) -> str:
        lines = [f"ops={self.ops} symbols={self.symbols} zero={self.zero} sizes={self.sizes}"]
        lines += [f"input {n}: {d} {s} {self.ranges.get(n, '')}" for n, d, s in self.inputs]
        lines += [onnx.printer.to_text(self.model.graph)]
        return "\n".join(lines)


@dataclass
class Builder:
    """The graph under construction."""

    draw: Callable[[Any], Any]
    opset: int
    symbols: tuple[str, ...]
    avoid: frozenset[str] = frozenset()
    #: whether the symbols may be 0
    zero: bool = False
    values: list[V] = field(default_factory=list)
    inputs: list[V] = field(default_factory=list)
    nodes: list[onnx.NodeProto] = field(default_factory=list)
    inits: list[onnx.TensorProto] = field(default_factory=list)
    ranges: dict[str, tuple[str, str]] = field(default_factory=dict)
    domains: set[str] = field(default_factory=set)
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

    def node(
        self, op: str, inputs: Sequence[str], n_out: int = 1, domain: str = "", **attrs: Any
    ) -> list[str]:
        outs = [self.fresh(op.lower()[:4]) for _ in range(n_out)]
        node = helper.make_node(op, list(inputs), outs, name=self.fresh("n"), domain=domain or None, **attrs)
        self.nodes.append(node)
        if domain:
            self.domains.add(domain)
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

    def new_input(self, dtype: str, dims: Sequence[int | str], values: tuple[Dim, Dim] | None = None) -> V:
        """A new graph input; an integer one holds values in ``values`` at run time (bounds:
        constants or symbols, a string maybe an expression of the symbols: ``"-a"``)."""
        v = V(self.fresh("in"), dtype, tuple(dims))
        self.inputs.append(v)
        self.values.append(v)
        if values is not None:
            self.ranges[v.name] = (str(values[0]), str(values[1]))
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


#: a step: takes the builder and a value, adds nodes, returns the new value (None if the step
#: does not apply to that value)
Step = Callable[[Builder, V], V | None]
