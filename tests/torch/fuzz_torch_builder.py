"""The program under construction for the PyTorch differential fuzzer
(:mod:`tests.torch.fuzz_torch_programs`): its values (name, dtype, known dimensions), the
builder that writes a module's source line by line with hypothesis' ``draw``, and the generated
program (Python source of an ``nn.Module``, compiled on demand so that a finding prints as a
runnable repro).
"""

from __future__ import annotations

import linecache
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

__all__ = ["SIZES", "SYMBOLS", "Builder", "Dim", "Program", "Step", "V"]

SYMBOLS = ("a", "b", "c")
#: values the symbols take at the sizes compared (and 0 in a program whose symbols may be 0)
SIZES = (1, 2, 3, 4, 5, 6, 8)

#: a dimension as the generator knows it: a constant, a symbol's name, or unknown
Dim = int | str | None

FLOATS = ("float32",)
INTS = ("int64", "int32")


@dataclass
class V:
    """A value of the program under construction: its name, dtype and known dimensions."""

    name: str
    dtype: str
    dims: tuple[Dim, ...]

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def is_float(self) -> bool:
        return self.dtype.startswith("float")

    def size(self, i: int) -> str:
        """The source text of this value's size at axis ``i`` (a shape value when traced)."""
        return f"{self.name}.shape[{i}]"


@dataclass(frozen=True)
class Input:
    """An input of the module: its name, dtype, dimensions (constants or symbol names) and, for
    an integer input, the range of its entries (expressions of the symbols, inclusive)."""

    name: str
    dtype: str
    dims: tuple[int | str, ...]
    values: tuple[str, str] | None = None


_COUNTER = [0]


@dataclass
class Program:
    """A generated module: its source, inputs, symbols, the sizes to compare at, the steps' names."""

    source: str
    inputs: tuple[Input, ...]
    symbols: tuple[str, ...]
    sizes: tuple[dict[str, int], ...]
    ops: tuple[str, ...]
    #: whether the symbols may be 0 (declared ``min=0``)
    zero: bool = False

    def module(self) -> Any:
        """A fresh instance of the module (parameters from seed 0), compiled from :attr:`source`
        under a file name that ``linecache`` knows (so that the importer's spans read it)."""
        import torch

        _COUNTER[0] += 1
        fname = f"<torch_fuzz_{_COUNTER[0]}>"
        linecache.cache[fname] = (len(self.source), None, self.source.splitlines(True), fname)
        ns: dict[str, Any] = {}
        exec(compile(self.source, fname, "exec"), ns)
        torch.manual_seed(0)
        return ns["M"]().eval()

    def __repr__(self) -> str:
        head = f"ops={self.ops} symbols={self.symbols} zero={self.zero} sizes={self.sizes}"
        ins = [f"input {i.name}: {i.dtype} {i.dims} {i.values or ''}" for i in self.inputs]
        return "\n".join([head, *ins, self.source])


@dataclass
class Builder:
    """The program under construction: module attributes (``init``) and forward lines."""

    draw: Callable[[Any], Any]
    symbols: tuple[str, ...]
    avoid: frozenset[str] = frozenset()
    zero: bool = False
    values: list[V] = field(default_factory=list)
    inputs: list[Input] = field(default_factory=list)
    init: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
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

    def emit(self, expr: str, dtype: str, dims: Sequence[Dim]) -> V:
        """A forward line ``vN = expr`` and its value."""
        name = self.fresh("v")
        self.lines.append(f"{name} = {expr}")
        v = V(name, dtype, tuple(dims))
        self.values.append(v)
        return v

    def emit_many(self, expr: str, outs: Sequence[tuple[str, Sequence[Dim]]]) -> list[V]:
        """A forward line unpacking several results ``vN, vM = expr``."""
        names = [self.fresh("v") for _ in outs]
        self.lines.append(f"{', '.join(names)}{',' if len(names) == 1 else ''} = {expr}")
        got = [V(n, dt, tuple(d)) for n, (dt, d) in zip(names, outs)]
        self.values.extend(got)
        return got

    def layer(self, ctor: str) -> str:
        """A submodule ``self.mN = ctor`` (parameters drawn by torch from seed 0)."""
        name = self.fresh("m")
        self.init.append(f"self.{name} = {ctor}")
        return f"self.{name}"

    def symbol_dim(self) -> str:
        return str(self.pick(self.symbols))

    def input_dim(self) -> int | str:
        d: int | str = self.pick([*self.symbols, *self.symbols, 1, 2, 3, 4])
        return d

    def new_input(self, dtype: str, dims: Sequence[int | str], values: tuple[Any, Any] | None = None) -> V:
        """A new module input; an integer one holds entries in ``values`` (inclusive bounds,
        constants or expressions of the symbols: ``"a - 1"``)."""
        name = f"x{len(self.inputs)}"
        rng = None if values is None else (str(values[0]), str(values[1]))
        if rng is not None and self.zero and "empty-index-range" in self.avoid:  # never empty
            dims = [d if isinstance(d, int) and d > 0 else 2 for d in dims]
        self.inputs.append(Input(name, dtype, tuple(dims), rng))
        v = V(name, dtype, tuple(dims))
        self.values.append(v)
        return v

    def like(self, d: Dim) -> int | str:
        """A dimension for an operand combined with a value's dimension ``d``: mostly ``d``
        itself, else a 1, a symbol or a constant."""
        base: list[int | str] = [d] * 4 if d is not None else [self.symbol_dim()]
        got: int | str = self.pick([*base, 1, self.input_dim()])
        return got

    def operand(self, x: V, dtype: str | None = None) -> V:
        """A new input broadcasting with ``x`` (maybe of a lower rank)."""
        drop = self.integer(0, x.rank) if self.integer(0, 3) == 0 else 0
        return self.new_input(dtype or x.dtype, [self.like(d) for d in x.dims[drop:]])

    def axis(self, x: V, extra: int = 0) -> int:
        """An axis of ``x`` (negative sometimes; rarely one out of range)."""
        r = x.rank + extra
        if r == 0:
            return self.pick([0, -1])
        if self.integer(0, 15) == 0:
            return self.pick([r, -r - 1])
        return self.integer(-r, r - 1)

    def known(self, d: Dim) -> int | None:
        return d if isinstance(d, int) else None

    def source(self) -> str:
        args = ", ".join(i.name for i in self.inputs)
        outs = ", ".join(v.name for v in self.values if v.name.startswith("v"))
        body = [
            "import torch",
            "import torch.nn as nn",
            "import torch.nn.functional as F",
            "",
            "",
            "class M(nn.Module):",
            "    def __init__(self):",
            "        super().__init__()",
            *[f"        {ln}" for ln in self.init],
            "",
            f"    def forward(self, {args}):",
            *[f"        {ln}" for ln in self.lines],
            f"        return ({outs}{',' if outs and ',' not in outs else ''})",
            "",
        ]
        return "\n".join(body)


#: a step: takes the builder and a value, writes lines, returns the new value (None if the step
#: does not apply to that value)
Step = Callable[[Builder, V], V | None]
