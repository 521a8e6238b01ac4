"""Ground rules of the operators that keep or broadcast their inputs' shapes.

Every rule here computes in ``float``, ``float16`` or ``double`` only (:data:`FLOATS`), of one
element type across its inputs; ``Identity`` and ``Cast`` (to a float type) take any element type
but an integer initializer's. Broadcasting is numpy's (multidirectional, opset 7 on; ``Sum``,
``Max``, ``Min``, ``Mean`` from opset 8), over sizes compared structurally: two sizes broadcast when
they are the same expression or one is 1. ``Dropout`` with ratio inputs or a training mode, and
``Softmax`` of a 0-d tensor, take the full path.
"""

from __future__ import annotations

from symshape.onnx.ground.node import FLOATS, PLAIN_UNARY, Entry, Fallback, Node, Size, rule

__all__ = ["broadcast"]

_UNARY = (*PLAIN_UNARY, "Elu", "Selu", "LeakyRelu", "HardSigmoid")
#: unary operators from a later opset: the first opset of each
_LATER = {"Erf": 9, "HardSwish": 14}
#: the attributes each unary operator has
_UNARY_ATTRS = {
    "Elu": ("alpha",),
    "LeakyRelu": ("alpha",),
    "Selu": ("alpha", "gamma"),
    "HardSigmoid": ("alpha", "beta"),
}


def broadcast(a: tuple[Size, ...], b: tuple[Size, ...]) -> tuple[Size, ...]:
    """numpy's broadcast of two shapes (see the module docstring)."""
    if len(a) < len(b):
        a, b = b, a
    off = len(a) - len(b)
    out = list(a)
    for i, d in enumerate(b):
        x = a[off + i]
        if x != d and d != 1:
            if x != 1:
                raise Fallback
            out[off + i] = d
    return tuple(out)


@rule(*_UNARY)
def _unary(n: Node) -> list[Entry]:
    n.one(*_UNARY_ATTRS.get(n.op, ()))
    return [n.float_input(0)]


for _op, _since in _LATER.items():
    rule(_op, since=_since)(_unary)


@rule("Clip")
def _clip(n: Node) -> list[Entry]:
    """Bounds as attributes (to opset 10) or optional inputs (from 11): scalars of X's type."""
    n.only("min", "max")
    if not 1 <= len(n.inputs) <= 3 or n.outputs != 1 or (n.opset >= 11 and n.attrs):
        raise Fallback
    e = n.float_input(0)
    for i in range(1, len(n.inputs)):
        if n.inputs[i] is not None and n.float_input(i) != (e[0], ()):
            raise Fallback
    return [e]


@rule("PRelu")
def _prelu(n: Node) -> list[Entry]:
    """The slope broadcasts to X's shape, one way."""
    if n.attrs or len(n.inputs) != 2 or n.outputs != 1:
        raise Fallback
    (et, x), (st, slope) = n.float_input(0), n.float_input(1)
    if st != et or broadcast(x, slope) != x:
        raise Fallback
    return [(et, x)]


@rule("Identity")
def _identity(n: Node) -> list[Entry]:
    return [n.one()]


@rule("Cast", since=6)
def _cast(n: Node) -> list[Entry]:
    n.only("to", "saturate")
    to = n.int_attr("to")
    if len(n.inputs) != 1 or n.outputs != 1 or to not in FLOATS:
        raise Fallback
    return [(to, n.any_input(0)[1])]


@rule("LRN")
def _lrn(n: Node) -> list[Entry]:
    n.one("size", "alpha", "beta", "bias")
    if n.int_attr("size") < 1:
        raise Fallback
    e = n.float_input(0)
    if len(e[1]) != 4:
        raise Fallback
    return [e]


@rule("Dropout")
def _dropout(n: Node) -> list[Entry]:
    n.only("ratio", "seed")
    if len(n.inputs) != 1 or not 1 <= n.outputs <= 2:
        raise Fallback
    e = n.float_input(0)
    if n.outputs == 1:
        return [e]
    return [e, (e[0] if n.opset < 10 else 9, e[1])]  # the mask: of the input's type, bool from 10


@rule("Softmax", "LogSoftmax")
def _softmax(n: Node) -> list[Entry]:
    n.one("axis")
    e = n.float_input(0)
    r = len(e[1])
    axis = n.int_attr("axis", -1 if n.opset >= 13 else 1)
    if r == 0 or not -r <= axis < r or (axis < 0 and n.opset < 11):
        raise Fallback
    return [e]


@rule("Add", "Sub", "Mul", "Div")
def _binary(n: Node) -> list[Entry]:
    if n.attrs or len(n.inputs) != 2 or n.outputs != 1:
        raise Fallback
    a, b = n.float_input(0), n.float_input(1)
    if a[0] != b[0]:
        raise Fallback
    return [(a[0], broadcast(a[1], b[1]))]


@rule("Sum", "Max", "Min", "Mean", since=8)
def _variadic(n: Node) -> list[Entry]:
    if n.attrs or not n.inputs or n.outputs != 1:
        raise Fallback
    et, shape = n.float_input(0)
    for i in range(1, len(n.inputs)):
        t, other = n.float_input(i)
        if t != et:
            raise Fallback
        shape = broadcast(shape, other)
    return [(et, shape)]
