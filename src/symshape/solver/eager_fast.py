"""The eager outputs of the commonest relations over tensors of constant shapes, computed in ints.

A convolutional network is mostly ``conv2d``, ``batch_norm``, broadcasting arithmetic,
``expand_dims``, ``concatenate``, ``bias_add``, pooling and unary operators (``relu``) over tensors
whose shapes are constants: the eager memo's misses
(see :mod:`symshape.solver.eager`) run those relations in a pure context, where every condition they
state is decided on its canonical form. For inputs that are *plain* — tensor types of constant
shape without a value or range — :data:`FAST` gives each of these relations' result directly: the
same type the eager run assigns, or None wherever the relation would do anything else (fail,
defer, compute a value, state a condition that is not already true, read an attribute it rejects)
— the eager run then decides as before. ``tests/test_eager_fast.py`` compares the two on random
inputs and attributes.

The table is keyed by the registered relations themselves (as registered when this module is
imported): a relation registered again under the same name is not in it.

>>> import symshape as ss
>>> from symshape.relations import get_relation
>>> x, w = ss.Tensor((1, 3, 8, 8), "float32"), ss.Tensor((4, 3, 3, 3), "float32")
>>> str(FAST[get_relation("conv2d")]((x, w), ss.Attrs({"padding": (1, 1)})))
'Tensor[(1, 4, 8, 8), float32]'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import symshape.relations  # noqa: F401  (the relations are registered)
from symshape.encoding.dims import Dim, as_dim
from symshape.encoding.leaf_types import DTYPES
from symshape.encoding.type_walks import tuple_of_checked
from symshape.encoding.types import Attrs, TensorType, TupleType, Type
from symshape.relations.base import RELATIONS, RelationDef
from symshape.relations.common import FLOAT_DTYPES
from symshape.relations.nn import SPATIAL, parse_conv_attrs, parse_layouts, parse_pool_attrs
from symshape.relations.values import BINARY_VALUE_OPS

__all__ = ["FAST", "FastFn"]

FastFn = Callable[[tuple[Type, ...], Attrs], Type | None]
"""A relation's output over plain inputs and its attributes, or None (ask the eager run)."""


_new = object.__new__


def _tensor(shape: tuple[Dim, ...], dtype: Any) -> TensorType:
    """``TensorType(shape, dtype)`` for sizes that are nonnegative constants (what the constructor
    checks: they come from plain inputs or are made here) and a dtype: the same object, flagged of
    constant shape, built without the checks."""
    if dtype not in DTYPES:
        return TensorType(shape, dtype)
    t: TensorType = _new(TensorType)
    d = t.__dict__  # (the fields in the order ``__init__`` sets them)
    d["shape"], d["dtype"], d["value"], d["range"], d["_cshape"] = shape, dtype, None, None, True
    return t


def _plain(t: Type) -> bool:
    """A tensor type of constant shape (nonnegative constants, a dtype string) without a value or
    range: nothing but sizes and a dtype to compute with."""
    return type(t) is TensorType and t._cshape and t.value is None and t.range is None


def _int_attr(attrs: Attrs, name: str, default: int) -> int | None:
    """An int attribute as the relations' ``attr_int`` reads it (absent: ``default``), or None for
    anything it might reject or convert."""
    v = attrs.get(name)
    if v is None:
        return default
    return v if type(v) is int else None


def _broadcast(inputs: tuple[Type, ...], attrs: Attrs) -> Type | None:
    """``broadcast`` and the arithmetic relations: the numpy broadcast of two plain tensors of one
    dtype, each pair of sizes equal or one of them 1 (what ``broadcast_shapes`` keeps)."""
    if len(inputs) != 2 or len(attrs):  # (an ``out_dtype``, even None, sets the result's)
        return None
    a, b = inputs
    if not (_plain(a) and _plain(b)) or a.dtype != b.dtype:  # type: ignore[union-attr]
        return None
    sa: tuple[Dim, ...] = a.shape  # type: ignore[union-attr,assignment]
    sb: tuple[Dim, ...] = b.shape  # type: ignore[union-attr,assignment]
    na, nb = len(sa), len(sb)
    out: list[Dim] = list(sa) if na >= nb else list(sb)
    # whether the result is ``a``'s shape, or ``b``'s (then that type is the result: the same
    # fields, no new object)
    same_a, same_b = na >= nb, nb >= na
    for i in range(1, min(na, nb) + 1):
        x, y = sa[-i], sb[-i]
        cx, cy = x._cv, y._cv
        if cx == cy:
            out[-i] = x
        elif cy == 1:
            out[-i] = x
            same_b = False
        elif cx == 1:
            out[-i] = y
            same_a = False
        else:
            return None  # (not broadcastable: the relation fails)
    if same_a:
        return a
    if same_b:
        return b
    return _tensor(tuple(out), a.dtype)  # type: ignore[union-attr]


def _expand_dims(inputs: tuple[Type, ...], attrs: Attrs) -> Type | None:
    """``num_newaxis`` ones inserted at ``axis``."""
    axis, k = attrs.get("axis"), _int_attr(attrs, "num_newaxis", 1)
    if len(inputs) != 1 or type(axis) is not int or k is None or k < 0 or not _plain(x := inputs[0]):
        return None
    sh: list[Dim] = list(x.shape)  # type: ignore[union-attr,arg-type]
    r = len(sh) + 1
    if not -r <= axis < r:
        return None
    ax = axis + r if axis < 0 else axis
    sh[ax:ax] = [as_dim(1)] * k
    return _tensor(tuple(sh), x.dtype)  # type: ignore[union-attr]


def _unary(inputs: tuple[Type, ...], attrs: Attrs) -> Type | None:
    """``unary`` (relu, abs, negative, ...): the input itself."""
    if len(inputs) != 1 or not _plain(x := inputs[0]):
        return None
    return x


def _bias_add(inputs: tuple[Type, ...], attrs: Attrs) -> Type | None:
    """``(x, b)`` with ``b: (x.shape[axis],)`` of ``x``'s dtype: ``x`` itself."""
    axis = _int_attr(attrs, "axis", 1)
    if len(inputs) != 2 or axis is None or not (_plain(x := inputs[0]) and _plain(b := inputs[1])):
        return None
    xs: tuple[Dim, ...] = x.shape  # type: ignore[union-attr,assignment]
    bs: tuple[Dim, ...] = b.shape  # type: ignore[union-attr,assignment]
    r = len(xs)
    if not -r <= axis < r or b.dtype != x.dtype or len(bs) != 1:  # type: ignore[union-attr]
        return None
    if bs[0]._cv != xs[axis + r if axis < 0 else axis]._cv:
        return None
    return x


def _softmax(inputs: tuple[Type, ...], attrs: Attrs) -> Type | None:
    """``softmax``: a float ``x`` itself, ``axis`` in range."""
    axis = _int_attr(attrs, "axis", -1)
    if len(inputs) != 1 or axis is None or not _plain(x := inputs[0]):
        return None
    r = len(x.shape)  # type: ignore[union-attr,arg-type]
    if x.dtype not in FLOAT_DTYPES or not -r <= axis < r:  # type: ignore[union-attr,operator]
        return None
    return x


def _transpose(inputs: tuple[Type, ...], attrs: Attrs) -> Type | None:
    """The dimensions permuted by ``axes`` (ints, one per axis, each once; default reversed)."""
    if len(inputs) != 1 or not _plain(x := inputs[0]):
        return None
    xs: tuple[Dim, ...] = x.shape  # type: ignore[union-attr,assignment]
    r = len(xs)
    axes = attrs.get("axes")
    if axes is None:
        return _tensor(xs[::-1], x.dtype)  # type: ignore[union-attr]
    if type(axes) is not tuple or len(axes) != r:
        return None
    perm = []
    for a in axes:
        if type(a) is not int or not -r <= a < r:
            return None
        perm.append(a + r if a < 0 else a)
    if len(set(axes)) != r or len(set(perm)) != r:
        return None
    return _tensor(tuple([xs[p] for p in perm]), x.dtype)  # type: ignore[union-attr]


def _reshape_like(inputs: tuple[Type, ...], attrs: Attrs) -> Type | None:
    """``like``'s shape with ``x``'s dtype, both of one number of elements."""
    if len(inputs) != 2 or not (_plain(x := inputs[0]) and _plain(like := inputs[1])):
        return None
    n = 1
    for d in x.shape:  # type: ignore[union-attr]
        n *= d._cv  # type: ignore[operator]
    m = 1
    for d in like.shape:  # type: ignore[union-attr]
        m *= d._cv  # type: ignore[operator]
    if n != m:
        return None
    return _tensor(like.shape, x.dtype)  # type: ignore[union-attr,arg-type]


def _reshape(inputs: tuple[Type, ...], attrs: Attrs) -> Type | None:
    """``reshape`` to a ``newshape`` of ints among which 0 copies the input's size at its place
    (unless ``allowzero``: a literal 0) and one -1 takes the rest: the element count kept (-1: the
    other sizes are not 0 and their product divides the input's)."""
    az = attrs.get("allowzero")
    spec = attrs.get("newshape")
    if len(inputs) != 1 or (az is not None and type(az) is not bool) or type(spec) is not tuple:
        return None
    if not _plain(x := inputs[0]):
        return None
    src: tuple[Dim, ...] = x.shape  # type: ignore[union-attr,assignment]
    n = len(src)
    out: list[Dim] = []
    used = [False] * n
    literal = 1  # the product of the sizes given literally
    copied_zero = False  # a size copied from the input (0) is 0
    infer_at = -1
    si = 0
    for s in spec:
        if type(s) is not int or s < -1:
            return None  # (Relay's -2, -3, -4, a dimension, a bad entry: the relation decides)
        if s > 0 or (s == 0 and az):
            out.append(as_dim(s))
            literal *= s
        elif s == 0:
            if si >= n:
                return None
            d = src[si]
            out.append(d)
            used[si] = True
            copied_zero = copied_zero or d._cv == 0
        elif infer_at >= 0:
            return None  # (two -1: an error)
        else:
            infer_at = len(out)
            out.append(as_dim(1))  # (its place, filled below)
        si += 1
    if infer_at >= 0:
        free_in = 1  # the product of the input's sizes not copied
        for k in range(n):
            if not used[k]:
                free_in *= src[k]._cv  # type: ignore[operator]
        if literal == 0 or copied_zero or free_in % literal:
            return None
        out[infer_at] = as_dim(free_in // literal)
    else:
        total_in = total_out = 1
        for d in src:
            total_in *= d._cv  # type: ignore[operator]
        for d in out:
            total_out *= d._cv  # type: ignore[operator]
        if total_in != total_out:
            return None
    return _tensor(tuple(out), x.dtype)  # type: ignore[union-attr]


def _reduce(inputs: tuple[Type, ...], attrs: Attrs) -> Type | None:
    """``reduce`` (sum, mean, ...) over ``axis`` (None: all; an int or a tuple of distinct ints in
    range), or every other axis with ``exclude``; the reduced axes removed, or 1 with
    ``keepdims``."""
    axis, keep, exclude = attrs.get("axis"), attrs.get("keepdims"), attrs.get("exclude")
    if len(inputs) != 1 or not _plain(x := inputs[0]):
        return None
    if (keep is not None and type(keep) is not bool) or (exclude is not None and type(exclude) is not bool):
        return None
    xs: tuple[Dim, ...] = x.shape  # type: ignore[union-attr,assignment]
    r = len(xs)
    if axis is None:
        chosen: set[int] = set() if exclude else set(range(r))
    else:
        axes = (axis,) if type(axis) is int else axis
        if type(axes) is not tuple:
            return None
        norm: set[int] = set()
        for a in axes:
            if type(a) is not int or not -r <= a < r:
                return None
            norm.add(a + r if a < 0 else a)
        if len(norm) != len(axes):
            return None  # (duplicates: an error)
        chosen = set(range(r)) - norm if exclude else norm
    one = as_dim(1)
    dims = [one if i in chosen else d for i, d in enumerate(xs) if keep or i not in chosen]
    return _tensor(tuple(dims), x.dtype)  # type: ignore[union-attr]


def _matmul(inputs: tuple[Type, ...], attrs: Attrs) -> Type | None:
    """``matmul`` of ``(..., m, k)`` by a matrix ``(k, n)`` of one dtype, no attributes."""
    if len(inputs) != 2 or len(attrs) or not (_plain(a := inputs[0]) and _plain(b := inputs[1])):
        return None
    sa: tuple[Dim, ...] = a.shape  # type: ignore[union-attr,assignment]
    sb: tuple[Dim, ...] = b.shape  # type: ignore[union-attr,assignment]
    if a.dtype != b.dtype or len(sa) < 2 or len(sb) != 2 or sa[-1]._cv != sb[0]._cv:  # type: ignore[union-attr]
        return None
    return _tensor((*sa[:-1], sb[1]), a.dtype)  # type: ignore[union-attr]


def _concatenate(inputs: tuple[Type, ...], attrs: Attrs) -> Type | None:
    """Fields of one dtype and rank, equal but on ``axis``, where the sizes add up."""
    axis = _int_attr(attrs, "axis", 0)
    if len(inputs) != 1 or axis is None or type(tup := inputs[0]) is not TupleType:
        return None
    fs = tup.fields
    if not fs or not all(_plain(f) for f in fs):
        return None
    first: tuple[Dim, ...] = fs[0].shape  # type: ignore[union-attr,assignment]
    rank, dtype = len(first), fs[0].dtype  # type: ignore[union-attr]
    if rank == 0 or not -rank <= axis < rank:
        return None
    ax = axis + rank if axis < 0 else axis
    total = 0
    for f in fs:
        dims: tuple[Dim, ...] = f.shape  # type: ignore[union-attr,assignment]
        if f.dtype != dtype or len(dims) != rank:  # type: ignore[union-attr]
            return None
        for i in range(rank):
            if i != ax and dims[i]._cv != first[i]._cv:
                return None
        total += dims[ax]._cv  # type: ignore[operator]
    shape = list(first)
    shape[ax] = as_dim(total)
    return _tensor(tuple(shape), dtype)


def _batch_norm(inputs: tuple[Type, ...], attrs: Attrs) -> Type | None:
    """``(x, (c,), (c,))`` with ``c = x.shape[axis]``; the four parameters ``(c,)`` of ``x``'s
    float dtype."""
    axis = _int_attr(attrs, "axis", 1)
    if len(inputs) != 5 or axis is None or not all(_plain(t) for t in inputs):
        return None
    x = inputs[0]
    xs: tuple[Dim, ...] = x.shape  # type: ignore[union-attr,assignment]
    dtype = x.dtype  # type: ignore[union-attr]
    r = len(xs)
    if dtype not in FLOAT_DTYPES or not -r <= axis < r:
        return None
    c = xs[axis + r if axis < 0 else axis]
    for p in inputs[1:]:
        ps: tuple[Dim, ...] = p.shape  # type: ignore[union-attr,assignment]
        if p.dtype != dtype or len(ps) != 1 or ps[0]._cv != c._cv:  # type: ignore[union-attr]
            return None
    vec = _tensor((c,), dtype)
    return tuple_of_checked((x, vec, vec))


def _conv(nd: int) -> FastFn:
    sp, name = SPATIAL[nd], f"conv{nd}d"

    def conv(inputs: tuple[Type, ...], attrs: Attrs) -> Type | None:
        """A weight that agrees with ``channels``, ``kernel_size`` and the data's channels (its
        input channels times ``groups``; output channels a multiple of ``groups``); every dilated
        window fits in the padded input."""
        if len(inputs) != 2 or not (_plain(x := inputs[0]) and _plain(w := inputs[1])):
            return None
        try:
            a = parse_conv_attrs(attrs, nd, name)
        except Exception:  # (a bad attribute: the relation reports it)
            return None
        xs: tuple[Dim, ...] = x.shape  # type: ignore[union-attr,assignment]
        ws: tuple[Dim, ...] = w.shape  # type: ignore[union-attr,assignment]
        g = a.groups
        if len(xs) != nd + 2 or len(ws) != nd + 2:
            return None
        if a.channels is not None and a.kernel_size is not None:
            return None  # (the weight's shape then comes from the attributes)
        wd = dict(zip(a.kernel_layout, ws))
        xd = dict(zip(a.data_layout, xs))
        channels = wd["O"]
        if a.kernel_size is not None:
            for c, k in zip(sp, a.kernel_size):
                if wd[c]._cv != k:
                    return None
        if (a.channels is not None and channels._cv != a.channels) or wd["I"]._cv * g != xd["C"]._cv:  # type: ignore[operator]
            return None
        if g != 1 and channels._cv % g:  # type: ignore[operator]
            return None
        od: dict[str, Dim] = {"N": xd["N"], "C": channels}
        for i, c in enumerate(sp):
            pad, dil = a.pad_before[i] + a.pad_after[i], a.dilation[i]
            dv, kv = xd[c]._cv, wd[c]._cv
            assert dv is not None and kv is not None
            if kv < 1 or dv + pad < dil * (kv - 1) + 1:
                return None
            od[c] = as_dim((dv + pad - dil * (kv - 1) - 1) // a.strides[i] + 1)
        return _tensor(tuple(map(od.__getitem__, a.out_layout)), a.out_dtype or x.dtype)  # type: ignore[union-attr]

    return conv


def _pooled_data(inputs: tuple[Type, ...], nd: int) -> TensorType | None:
    """The one plain input of a pooling over ``nd`` spatial axes, of rank ``nd + 2``, or None."""
    if len(inputs) != 1 or not _plain(x := inputs[0]) or len(x.shape) != nd + 2:  # type: ignore[union-attr,arg-type]
        return None
    return x  # type: ignore[return-value]


def _empty_but_batch(od: dict[str, Dim]) -> bool:
    """Whether an axis other than the batch ``N`` is empty while ``N`` is not (constant sizes)."""
    return od["N"]._cv != 0 and any(d._cv == 0 for c, d in od.items() if c != "N")


def _pool(nd: int) -> FastFn:
    sp, name = SPATIAL[nd], f"pool{nd}d"

    def pool(inputs: tuple[Type, ...], attrs: Attrs) -> Type | None:
        """Max/avg pooling whose every dilated window fits in the padded input."""
        x = _pooled_data(inputs, nd)
        if x is None:
            return None
        try:
            a = parse_pool_attrs(attrs, nd, name)
        except Exception:  # (a bad attribute: the relation reports it)
            return None
        od = dict(zip(a.layout, x.dims))
        if attrs.get("only_batch_empty") and _empty_but_batch(od):
            return None  # (onnxruntime's "Only N can be zero": the relation reports it)
        for i, c in enumerate(sp):
            pad, dil, kv, dv = a.pad_before[i] + a.pad_after[i], a.dilation[i], a.pool_size[i], od[c]._cv
            assert dv is not None
            if dv + pad < dil * (kv - 1) + 1:
                return None
            span = dv + pad - dil * (kv - 1) - 1 + (a.strides[i] - 1 if a.ceil_mode else 0)
            od[c] = as_dim(span // a.strides[i] + 1)
        return _tensor(tuple(map(od.__getitem__, a.out_layout)), x.dtype)

    return pool


def _global_pool(nd: int) -> FastFn:
    sp, name, one = SPATIAL[nd], f"global_pool{nd}d", as_dim(1)

    def global_pool(inputs: tuple[Type, ...], attrs: Attrs) -> Type | None:
        """Every spatial axis becomes 1."""
        x = _pooled_data(inputs, nd)
        if x is None:
            return None
        try:
            layout, out_layout = parse_layouts(attrs, nd, name)
        except Exception:  # (a bad attribute: the relation reports it)
            return None
        od = dict(zip(layout, x.dims))
        if attrs.get("only_batch_empty") and _empty_but_batch(od):
            return None
        for c in sp:
            od[c] = one
        return _tensor(tuple(map(od.__getitem__, out_layout)), x.dtype)

    return global_pool


def _table() -> dict[RelationDef, FastFn]:
    fns: dict[str, FastFn] = {
        "broadcast": _broadcast,
        "expand_dims": _expand_dims,
        "concatenate": _concatenate,
        "batch_norm": _batch_norm,
        "unary": _unary,
        "softmax": _softmax,
        "transpose": _transpose,
        "reshape_like": _reshape_like,
        "reshape": _reshape,
        "reduce": _reduce,
        "matmul": _matmul,
        "bias_add": _bias_add,
        **{f"conv{nd}d": _conv(nd) for nd in (1, 2, 3)},
        **{f"pool{nd}d": _pool(nd) for nd in (1, 2, 3)},
        **{f"global_pool{nd}d": _global_pool(nd) for nd in (1, 2, 3)},
        **{op: _broadcast for op in BINARY_VALUE_OPS if op != "floor_mod"},
    }
    return {RELATIONS[name]: fn for name, fn in fns.items() if name in RELATIONS}


FAST: dict[RelationDef, FastFn] = _table()
"""The fast path of each registered relation that has one."""
