"""What a ground rule sees of a node, and the registry of rules.

A value's entry is ``(ONNX element type, shape)``; a size is a Python ``int`` (at least 1) or a
symshape ``Dim`` that is not a constant (a ``dim_param``'s symbol, at least 1, or sums, products
and exact quotients of such). Rules compare sizes structurally (``==`` of canonical forms) and
fall back (:class:`Fallback`) wherever an answer would need a condition on a symbol: two sizes that
are not the same expression never broadcast, a window over a symbolic size is not computed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final, Union

from symshape.encoding.dim_expr import Dim

__all__ = [
    "Entry",
    "Size",
    "Fallback",
    "Node",
    "Rule",
    "RULES",
    "rule",
    "FLOATS",
    "KNOWN_TYPES",
    "size",
    "product",
    "FLOAT",
    "PLAIN_UNARY",
    "NEWEST",
]

#: a size: an int, or a symbolic ``Dim`` (see the module docstring)
Size = Union[int, Dim]
#: ``(ONNX element type, shape)`` of a value
Entry = tuple[int, tuple[Size, ...]]

#: the element types rules compute with: float, float16, double
FLOATS: Final = frozenset({1, 10, 11})
#: the unary operators of one float input and no attribute, the same since opset 1 (the walk
#: types them inline)
PLAIN_UNARY: Final = (
    "Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Abs", "Neg", "Reciprocal", "Floor", "Ceil",
    "Softplus", "Softsign",
)  # fmt: skip
#: the newest opset the rules were checked at (a model of a newer one takes the full path: an
#: operator's shape rule may change there)
NEWEST: Final = 28
#: ONNX's element types with a symshape dtype but complex and bfloat16 (others: the full path)
KNOWN_TYPES: Final = frozenset({1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13})


class _Float:
    """What a FLOAT or FLOATS attribute reads as (see :meth:`Node.int_attr`)."""

    def __repr__(self) -> str:
        return "FLOAT"


FLOAT: Final = _Float()


class Fallback(Exception):
    """The ground walk does not answer for this model: the full path does."""


def size(d: Size) -> Size:
    """``d`` with a constant ``Dim`` read as its int."""
    if type(d) is Dim and d.is_constant:
        return int(d)
    return d


def product(ds: Iterable[Size]) -> Size:
    """The product of sizes (an int where every factor is one)."""
    return size(math.prod(ds))


@dataclass(slots=True)
class Node:
    """What a rule reads of one node: its inputs' entries (None for an omitted optional input), the
    entries of int64 vector inputs whose values are known (:attr:`values`, by input position), the
    positions fed by integer initializers (:attr:`consts`: their values the full path tracks, so a
    rule reads them as values only), its attributes (by name: an int, a float, bytes, a tuple of
    ints or floats, or the tensor proto), the number of outputs and the model's opset."""

    op: str
    inputs: list[Entry | None]
    values: dict[int, tuple[int, ...]]
    consts: frozenset[int]
    attrs: dict[str, Any]
    outputs: int
    opset: int

    def value(self, i: int) -> tuple[int, ...]:
        """The entries of input ``i`` (an int64 vector initializer), else :class:`Fallback`."""
        v = self.values.get(i)
        if v is None:
            raise Fallback
        return v

    def only(self, *names: str) -> None:
        """Fall back when the node has an attribute not in ``names``."""
        for a in self.attrs:
            if a not in names:
                raise Fallback

    def int_attr(self, name: str, default: int | None = None) -> int:
        """The INT attribute ``name`` (``default`` where it is absent; required without one)."""
        v = self.attrs.get(name, default)
        if type(v) is not int:
            raise Fallback
        return v

    def ints_attr(self, name: str, default: tuple[int, ...] | None = None) -> tuple[int, ...]:
        """The INTS attribute ``name`` (``default`` where it is absent; required without one)."""
        v = self.attrs.get(name, default)
        if type(v) is not tuple:
            raise Fallback
        return v

    def one(self, *attrs: str) -> Entry:
        """The entry of the one input of a node of one output and no attribute but ``attrs``
        (any element type but an integer initializer's)."""
        self.only(*attrs)
        if len(self.inputs) != 1 or self.outputs != 1:
            raise Fallback
        return self.any_input(0)

    def float_input(self, i: int) -> Entry:
        """Input ``i``'s entry, of a float element type (:data:`FLOATS`)."""
        e = self.inputs[i]
        if e is None or e[0] not in FLOATS:
            raise Fallback
        return e

    def any_input(self, i: int) -> Entry:
        """Input ``i``'s entry, of any element type, but not an integer initializer's."""
        e = self.inputs[i]
        if e is None or i in self.consts:
            raise Fallback
        return e

    def ints(self, shape: tuple[Size, ...]) -> tuple[int, ...]:
        """``shape``, each size an int (else :class:`Fallback`)."""
        for d in shape:
            if type(d) is not int:
                raise Fallback
        return shape  # type: ignore[return-value]


#: a rule: a node's output entries, or :class:`Fallback`
Rule = Callable[[Node], list[Entry]]

#: the rules, by operator type of the default domain, each with the least opset it holds from
RULES: dict[str, tuple[int, Rule]] = {}


def rule(*ops: str, since: int = 7) -> Callable[[Rule], Rule]:
    """Register a rule for ``ops`` from opset ``since`` on."""

    def add(fn: Rule) -> Rule:
        for op in ops:
            RULES[op] = (since, fn)
        return fn

    return add
