"""Ground rules of the operators that rearrange a shape: ``Reshape`` (a constant target, no 0
entry after the copy, at most one -1), ``Flatten``, ``Concat``, ``Unsqueeze``, ``Squeeze``,
``Transpose``, ``Split``, ``Expand`` and ``Pad`` (constant sizes, pads, shapes),
of any element type but an integer initializer's (``ConstantOfShape`` of a constant shape, the
weights of models exported without them, is read by the walk itself:
:func:`~symshape.onnx.ground.walk._weight`). Negative axes from opset 11, as ONNX admits them.

A reshape's sizes are exact over symbols too: the input axes a 0 entry copies cancel against
those entries (every size is at least 1), and what remains must be equal (no -1), or divide
exactly (the -1's size: a quotient whose product with the divisor is the dividend, structurally).
"""

from __future__ import annotations

from symshape.onnx.ground.elementwise import broadcast
from symshape.onnx.ground.node import Entry, Fallback, Node, Size, product, rule, size

__all__: list[str] = []


def _axis(n: Node, axis: object, rank: int) -> int:
    """``axis`` of a rank-``rank`` shape, from 0."""
    if type(axis) is not int or not -rank <= axis < rank or (axis < 0 and n.opset < 11):
        raise Fallback
    return axis % rank


def _quotient(a: Size, b: int) -> Size:
    """``a / b`` where ``b`` divides ``a`` (else :class:`Fallback`)."""
    if type(a) is int:
        if a % b:
            raise Fallback
        return a // b
    q = size(a // b)
    if q * b != a:
        raise Fallback
    return q


@rule("Reshape", since=5)
def _reshape(n: Node) -> list[Entry]:
    n.only("allowzero")
    if n.outputs != 1 or len(n.inputs) != 2 or n.int_attr("allowzero", 0) not in (0, 1):
        raise Fallback
    et, x = n.any_input(0)
    target = n.value(1)
    copy = not n.int_attr("allowzero", 0)
    out: list[Size] = []
    known, free = 1, -1
    copied = set()
    for i, d in enumerate(target):
        if d == 0 and copy and i < len(x):
            out.append(x[i])
            copied.add(i)
            continue
        if d == -1 and free < 0:
            free = i
        elif d < 1:
            raise Fallback
        else:
            known *= d
        out.append(d)
    rest = product(d for i, d in enumerate(x) if i not in copied)
    if free >= 0:
        out[free] = _quotient(rest, known)
    elif rest != known:
        raise Fallback
    return [(et, tuple(out))]


@rule("Flatten")
def _flatten(n: Node) -> list[Entry]:
    et, x = n.one("axis")
    r = len(x)
    axis = n.int_attr("axis", 1)
    if not -r <= axis <= r or (axis < 0 and n.opset < 11):
        raise Fallback
    if axis < 0:
        axis += r
    return [(et, (product(x[:axis]), product(x[axis:])))]


@rule("Concat")
def _concat(n: Node) -> list[Entry]:
    n.only("axis")
    if n.outputs != 1 or not n.inputs:
        raise Fallback
    et, first = n.any_input(0)
    r = len(first)
    a = _axis(n, n.int_attr("axis"), r)
    total: Size = 0
    for i in range(len(n.inputs)):
        t, s = n.any_input(i)
        if t != et or len(s) != r or s[:a] != first[:a] or s[a + 1 :] != first[a + 1 :]:
            raise Fallback
        total = total + s[a]
    return [(et, first[:a] + (size(total),) + first[a + 1 :])]


@rule("Unsqueeze")
def _unsqueeze(n: Node) -> list[Entry]:
    if n.opset < 13:
        n.only("axes")
        axes = n.ints_attr("axes")
        if len(n.inputs) != 1:
            raise Fallback
    else:
        n.only()
        if len(n.inputs) != 2:
            raise Fallback
        axes = n.value(1)
    if n.outputs != 1:
        raise Fallback
    et, x = n.any_input(0)
    r = len(x) + len(axes)
    at = {_axis(n, a, r) for a in axes}
    if len(at) != len(axes) or not axes:
        raise Fallback
    rest = iter(x)
    return [(et, tuple(1 if i in at else next(rest) for i in range(r)))]


@rule("Squeeze")
def _squeeze(n: Node) -> list[Entry]:
    """The axes given (attribute to opset 12, input from 13) must be of size 1; without axes, every
    axis of size 1 goes (a symbolic size: the full path, which asks whether it is 1)."""
    axes: tuple[int, ...] | None
    if n.opset < 13:
        n.only("axes")
        axes = n.ints_attr("axes") if "axes" in n.attrs else None
        if len(n.inputs) != 1:
            raise Fallback
    else:
        n.only()
        if not 1 <= len(n.inputs) <= 2:
            raise Fallback
        axes = n.value(1) if len(n.inputs) == 2 and n.inputs[1] is not None else None
    if n.outputs != 1:
        raise Fallback
    et, x = n.any_input(0)
    r = len(x)
    if axes is None:
        n.ints(x)
        return [(et, tuple(d for d in x if d != 1))]
    at = {_axis(n, a, r) for a in axes}
    if not axes or len(at) != len(axes) or any(x[a] != 1 for a in at):
        raise Fallback
    return [(et, tuple(d for i, d in enumerate(x) if i not in at))]


@rule("Transpose")
def _transpose(n: Node) -> list[Entry]:
    et, x = n.one("perm")
    perm = n.ints_attr("perm", tuple(range(len(x) - 1, -1, -1)))
    if sorted(perm) != list(range(len(x))):
        raise Fallback
    return [(et, tuple(x[p] for p in perm))]


@rule("Split", since=2)
def _split(n: Node) -> list[Entry]:
    """Sizes given (attribute to opset 12, a constant input from 13) must add up to the axis; else
    the axis splits evenly into the outputs (``num_outputs`` from 18 must count them)."""
    sizes: tuple[int, ...] | None
    if n.opset < 13:
        n.only("axis", "split")
        sizes = n.ints_attr("split") if "split" in n.attrs else None
        if len(n.inputs) != 1:
            raise Fallback
    else:
        n.only("axis", "num_outputs")
        if not 1 <= len(n.inputs) <= 2 or ("num_outputs" in n.attrs and n.opset < 18):
            raise Fallback
        sizes = n.value(1) if len(n.inputs) == 2 and n.inputs[1] is not None else None
        if "num_outputs" in n.attrs and (sizes is not None or n.int_attr("num_outputs") != n.outputs):
            raise Fallback
    et, x = n.any_input(0)
    a = _axis(n, n.int_attr("axis", 0), len(x))
    k = n.outputs
    if sizes is not None:
        if len(sizes) != k or min(sizes, default=0) < 1 or x[a] != sum(sizes):
            raise Fallback
        parts: tuple[Size, ...] = sizes
    else:
        parts = (_quotient(x[a], k),) * k if k else ()
    return [(et, x[:a] + (p,) + x[a + 1 :]) for p in parts]


@rule("Expand", since=8)
def _expand(n: Node) -> list[Entry]:
    """numpy's broadcast of the input with a constant shape (no entry below 1)."""
    if n.attrs or len(n.inputs) != 2 or n.outputs != 1:
        raise Fallback
    et, x = n.any_input(0)
    shape = n.value(1)
    if min(shape, default=1) < 1:
        raise Fallback
    return [(et, broadcast(x, shape))]


@rule("Pad")
def _pad(n: Node) -> list[Entry]:
    """``constant`` mode with pads of at least 0 (attribute to opset 10, a constant input from 11,
    on every axis: an ``axes`` input is the full path's); the fill a scalar of the input's type."""
    if n.opset < 11:
        n.only("mode", "pads", "value")
        pads = n.ints_attr("pads")
        if len(n.inputs) != 1:
            raise Fallback
    else:
        n.only("mode")
        if not 2 <= len(n.inputs) <= 3:
            raise Fallback
        pads = n.value(1)
    if n.outputs != 1 or n.attrs.get("mode", b"constant") != b"constant":
        raise Fallback
    et, x = n.any_input(0)
    if len(n.inputs) == 3 and n.inputs[2] is not None and n.any_input(2) != (et, ()):
        raise Fallback
    r = len(x)
    if len(pads) != 2 * r or min(pads, default=0) < 0:
        raise Fallback
    return [(et, tuple(size(d + pads[i] + pads[i + r]) for i, d in enumerate(x)))]
