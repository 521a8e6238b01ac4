"""The fast eager results of :mod:`symshape.solver.eager_fast` against the eager run of the
relation itself (:func:`symshape.solver.eager.eager_outputs`), on random constant shapes, dtypes and
attributes (valid, invalid and edge ones: sizes 0 and 1, axes out of range, mismatched sizes,
dtypes, values): wherever the fast path answers, the eager run answers the same type; on the common
valid cases it does answer."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import symshape as ss
from symshape.encoding.types import Attrs, TensorType, TupleType, Type
from symshape.relations import get_relation
from symshape.relations.base import RelationDef, register_relation
from symshape.relations.values import constant_type
from symshape.solver.eager import eager_outputs
from symshape.solver.eager_fast import FAST

_DTYPES = st.sampled_from(["float32", "float32", "float16", "int64", "bool"])
_size = st.integers(0, 4)


def _same(rdef: RelationDef, inputs: tuple[Type, ...], attrs: Attrs) -> bool:
    """The fast result equals the eager run's where given; whether it was given."""
    fast = FAST[rdef](inputs, attrs)
    slow = eager_outputs(rdef, inputs, attrs, 1)
    if fast is not None:
        assert slow is not None, (rdef.name, inputs, attrs, fast)
        assert slow[0] == fast and type(slow[0]) is type(fast), (rdef.name, inputs, attrs, fast, slow)
        for t in fast.fields if isinstance(fast, TupleType) else (fast,):
            # built as the constructor builds it (the constant-shape flag included)
            assert isinstance(t, TensorType) and t.__dict__ == TensorType(t.shape, t.dtype).__dict__
    return fast is not None


def _bend(data: st.DataObject, dims: list[int]) -> tuple[int, ...]:
    """``dims`` with some sizes made 1 or changed (broadcastable or not)."""
    out = []
    for d in dims:
        k = data.draw(st.sampled_from(["same", "same", "one", "other"]))
        out.append(d if k == "same" else 1 if k == "one" else data.draw(_size))
    return tuple(out)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), op=st.sampled_from(["add", "multiply", "subtract", "divide", "broadcast"]))
def test_broadcast(data: st.DataObject, op: str) -> None:
    base = data.draw(st.lists(_size, max_size=4))
    sa = _bend(data, base)
    sb = _bend(data, base[data.draw(st.integers(0, len(base))) :])
    if data.draw(st.booleans()):
        sa, sb = sb, sa
    da = data.draw(_DTYPES)
    db = da if data.draw(st.integers(0, 4)) else data.draw(_DTYPES)
    choices: list[dict[str, Any]] = [{}, {}, {"out_dtype": "float64"}, {"out_dtype": None}]
    attrs = Attrs(data.draw(st.sampled_from(choices)))
    _same(get_relation(op), (ss.Tensor(sa, da), ss.Tensor(sb, db)), attrs)


def test_broadcast_with_a_value_is_left_to_the_relation() -> None:
    v = constant_type(ss.Tensor((2,), "int64"), np.array([3, 4]))
    assert v.value is not None
    rd = get_relation("add")
    assert FAST[rd]((v, v), Attrs()) is None
    assert not _same(rd, (v, ss.Tensor((2,), "int64")), Attrs())


@settings(max_examples=200, deadline=None)
@given(shape=st.lists(_size, max_size=4), dtype=_DTYPES, data=st.data())
def test_expand_dims(shape: list[int], dtype: str, data: st.DataObject) -> None:
    r = len(shape)
    attrs: dict[str, Any] = {}
    if data.draw(st.integers(0, 5)):
        attrs["axis"] = data.draw(st.integers(-r - 2, r + 1))
    if data.draw(st.booleans()):
        attrs["num_newaxis"] = data.draw(st.sampled_from([-1, 0, 1, 2, 3, True]))
    _same(get_relation("expand_dims"), (ss.Tensor(tuple(shape), dtype),), Attrs(attrs))


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_concatenate(data: st.DataObject) -> None:
    base = data.draw(st.lists(_size, min_size=1, max_size=3)) if data.draw(st.integers(0, 9)) else []
    r = len(base)
    axis = data.draw(st.integers(-r - 1, r))
    dtype = data.draw(_DTYPES)
    fields = []
    for _ in range(data.draw(st.sampled_from([0, 1, 2, 2, 3, 3]))):
        dims = list(base)
        if r and -r <= axis < r:
            dims[axis] = data.draw(_size)
        if r and not data.draw(st.integers(0, 6)):
            dims[data.draw(st.integers(0, r - 1))] = data.draw(_size)
        if not data.draw(st.integers(0, 8)):
            dims = dims[1:]
        dt = dtype if data.draw(st.integers(0, 3)) else data.draw(_DTYPES)
        fields.append(ss.Tensor(tuple(dims), dt))
    attrs = Attrs({"axis": axis} if data.draw(st.integers(0, 4)) else {})
    _same(get_relation("concatenate"), (TupleType(tuple(fields)),), attrs)


@settings(max_examples=200, deadline=None)
@given(data=st.data(), shape=st.lists(st.integers(1, 4), min_size=1, max_size=4), dtype=_DTYPES)
def test_batch_norm(data: st.DataObject, shape: list[int], dtype: str) -> None:
    r = len(shape)
    axis = data.draw(st.integers(-r - 1, r)) if data.draw(st.booleans()) else None
    c = shape[(1 if axis is None else axis) % r] if -r <= (1 if axis is None else axis) < r else 1
    params = []
    for _ in range(4):
        ps: tuple[int, ...] = (c,) if data.draw(st.integers(0, 6)) else (c + 1,)
        if not data.draw(st.integers(0, 10)):
            ps = (c, 1)
        params.append(ss.Tensor(ps, dtype if data.draw(st.integers(0, 6)) else data.draw(_DTYPES)))
    attrs = Attrs({} if axis is None else {"axis": axis})
    _same(get_relation("batch_norm"), (ss.Tensor(tuple(shape), dtype), *params), attrs)


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_conv2d(data: st.DataObject) -> None:
    n, c, h, w = (data.draw(st.integers(0, 6)) for _ in range(4))
    o, kh, kw = (data.draw(st.integers(0, 4)) for _ in range(3))
    i = c if data.draw(st.integers(0, 6)) else data.draw(st.integers(0, 4))
    attrs: dict[str, Any] = {
        "padding": data.draw(st.sampled_from([0, 1, (1, 2), (0, 1, 2, 1)])),
        "strides": data.draw(st.sampled_from([1, 2, (1, 3)])),
        "dilation": data.draw(st.sampled_from([1, 2])),
    }
    if data.draw(st.booleans()):
        attrs["kernel_size"] = (kh, kw) if data.draw(st.integers(0, 4)) else (kh + 1, kw)
    if not data.draw(st.integers(0, 4)):
        attrs["channels"] = o if data.draw(st.booleans()) else o + 1
    if not data.draw(st.integers(0, 5)):
        attrs["groups"] = data.draw(st.sampled_from([1, 2]))
    if not data.draw(st.integers(0, 5)):
        attrs["out_dtype"] = data.draw(st.sampled_from(["", "float16"]))
    if not data.draw(st.integers(0, 5)):
        attrs["data_layout"], attrs["kernel_layout"] = "NHWC", "HWIO"
        x, wt = ss.Tensor((n, h, w, c), "float32"), ss.Tensor((kh, kw, i, o), "float32")
    else:
        x, wt = ss.Tensor((n, c, h, w), "float32"), ss.Tensor((o, i, kh, kw), "float32")
    _same(get_relation("conv2d"), (x, wt), Attrs(attrs))


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_grouped_conv2d(data: st.DataObject) -> None:
    g = data.draw(st.sampled_from([2, 3, 4]))
    per = data.draw(st.integers(1, 3))
    c = g * per if data.draw(st.integers(0, 6)) else data.draw(st.integers(1, 9))
    i = per if data.draw(st.integers(0, 6)) else data.draw(st.integers(1, 6))
    o = g * data.draw(st.integers(1, 3)) if data.draw(st.integers(0, 6)) else data.draw(st.integers(1, 9))
    n, h, w, k = (data.draw(st.integers(1, 6)) for _ in range(4))
    attrs: dict[str, Any] = {"groups": g, "padding": data.draw(st.sampled_from([0, 1]))}
    if data.draw(st.booleans()):
        attrs["channels"] = o if data.draw(st.integers(0, 4)) else o + 1
    if data.draw(st.booleans()):
        attrs["kernel_size"] = (k, k)
    x, wt = ss.Tensor((n, c, h, w), "float32"), ss.Tensor((o, i, k, k), "float32")
    _same(get_relation("conv2d"), (x, wt), Attrs(attrs))


def test_the_common_cases_take_the_fast_path() -> None:
    f32 = "float32"
    x = ss.Tensor((1, 64, 56, 56), f32)
    vec = ss.Tensor((64,), f32)
    cases: list[tuple[str, tuple[Type, ...], dict[str, Any]]] = [
        ("add", (x, ss.Tensor((64, 1, 1), f32)), {}),
        ("multiply", (ss.Tensor((1, 64, 1, 1), f32), x), {}),
        ("expand_dims", (vec,), {"axis": 1, "num_newaxis": 2}),
        ("concatenate", (TupleType((x, ss.Tensor((1, 32, 56, 56), f32))),), {"axis": 1}),
        ("batch_norm", (x, vec, vec, vec, vec), {"axis": 1, "epsilon": 1e-5}),
        ("conv2d", (x, ss.Tensor((32, 64, 3, 3), f32)), {"padding": (1, 1), "kernel_size": (3, 3)}),
        ("conv2d", (x, ss.Tensor((32, 64, 1, 1), f32)), {"strides": (2, 2), "channels": 32}),
        ("conv2d", (x, ss.Tensor((64, 32, 3, 3), f32)), {"padding": (1, 1), "groups": 2}),
        ("unary", (x,), {}),
        ("softmax", (ss.Tensor((1, 1000), f32),), {"axis": 1}),
        ("transpose", (x,), {"axes": (0, 2, 3, 1)}),
        ("transpose", (ss.Tensor((1000, 4096), f32),), {}),
        ("matmul", (ss.Tensor((1, 4096), f32), ss.Tensor((4096, 1000), f32)), {}),
        ("matmul", (ss.Tensor((2, 7, 64), f32), ss.Tensor((64, 64), f32)), {}),
        ("reshape_like", (x, ss.Tensor((1, 64 * 56 * 56), f32)), {}),
        ("pool2d", (x,), {"pool_size": (3, 3), "strides": (2, 2), "padding": (1, 1, 1, 1)}),
        ("pool2d", (x,), {"pool_size": (2, 2), "strides": (2, 2), "ceil_mode": True}),
        ("global_pool2d", (x,), {"layout": "NCHW"}),
        ("bias_add", (x, vec), {"axis": 1}),
        ("bias_add", (ss.Tensor((1, 64), f32), vec), {"axis": -1}),
    ]
    for name, inputs, attrs in cases:
        assert _same(get_relation(name), inputs, Attrs(attrs)), name


def test_a_relation_registered_again_has_no_fast_path() -> None:
    before = get_relation("expand_dims")
    try:
        again = register_relation("expand_dims", before.fn)
        assert again is not before and again not in FAST and before in FAST
    finally:
        register_relation("expand_dims", before.fn)
        from symshape.relations.base import RELATIONS

        RELATIONS["expand_dims"] = before


@settings(max_examples=200, deadline=None)
@given(shape=st.lists(_size, max_size=4), dtype=_DTYPES, data=st.data())
def test_unary(shape: list[int], dtype: str, data: st.DataObject) -> None:
    x: Type = ss.Tensor(tuple(shape), dtype)
    if dtype == "int64" and len(shape) == 1 and shape[0] <= 3 and data.draw(st.booleans()):
        x = constant_type(ss.Tensor((shape[0],), "int64"), np.arange(shape[0]))  # (a value)
    inputs: tuple[Type, ...] = (x,) if data.draw(st.integers(0, 6)) else (x, x)
    attrs = Attrs({"alpha": 0.5} if not data.draw(st.integers(0, 4)) else {})
    rd = get_relation("unary")
    if _same(rd, inputs, attrs):
        assert FAST[rd](inputs, attrs) is x  # (the input itself, as the relation assigns it)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), shape=st.lists(st.integers(0, 4), min_size=0, max_size=4), dtype=_DTYPES)
def test_bias_add(data: st.DataObject, shape: list[int], dtype: str) -> None:
    r = len(shape)
    axis = data.draw(st.integers(-r - 1, r)) if data.draw(st.booleans()) else None
    ax = 1 if axis is None else axis
    c = shape[ax % r] if r and -r <= ax < r else 2
    odd = st.sampled_from([(c + 1,), (c, 1), ()])
    bs: tuple[int, ...] = (c,) if data.draw(st.integers(0, 5)) else data.draw(odd)
    b = ss.Tensor(bs, dtype if data.draw(st.integers(0, 5)) else data.draw(_DTYPES))
    attrs: dict[str, Any] = {} if axis is None else {"axis": axis}
    if not data.draw(st.integers(0, 12)):
        attrs["axis"] = data.draw(st.sampled_from([True, 1.0, "1"]))
    _same(get_relation("bias_add"), (ss.Tensor(tuple(shape), dtype), b), Attrs(attrs))


@settings(max_examples=300, deadline=None)
@given(data=st.data(), dtype=_DTYPES)
def test_pool2d(data: st.DataObject, dtype: str) -> None:
    shape = tuple(data.draw(st.integers(0, 7)) for _ in range(data.draw(st.sampled_from([4, 4, 4, 3]))))
    sizes = st.sampled_from([(1, 1), (2, 2), (3, 3), (3,), (0, 2), 2])
    attrs: dict[str, Any] = {"pool_size": data.draw(sizes)}
    if data.draw(st.booleans()):
        attrs["strides"] = data.draw(st.sampled_from([(1, 1), (2, 2), (2, 1), (0, 1)]))
    if data.draw(st.booleans()):
        attrs["padding"] = data.draw(st.sampled_from([(0, 0), (1, 1), (1, 1, 1, 1), (0, 1, 1, 0), (-1, 0)]))
    if data.draw(st.booleans()):
        attrs["dilation"] = data.draw(st.sampled_from([(1, 1), (2, 2), (2, 1)]))
    if data.draw(st.booleans()):
        attrs["ceil_mode"] = data.draw(st.sampled_from([True, False, 1]))
    if not data.draw(st.integers(0, 4)):
        attrs["layout"] = data.draw(st.sampled_from(["NHWC", "NCHW", "HWNC", "bad"]))
    if not data.draw(st.integers(0, 6)):
        attrs["out_layout"] = data.draw(st.sampled_from(["NHWC", "", None]))
    _same(get_relation("pool2d"), (ss.Tensor(shape, dtype),), Attrs(attrs))


@settings(max_examples=100, deadline=None)
@given(data=st.data(), dtype=_DTYPES)
def test_global_pool2d(data: st.DataObject, dtype: str) -> None:
    shape = tuple(data.draw(st.integers(0, 5)) for _ in range(data.draw(st.sampled_from([4, 4, 3]))))
    attrs: dict[str, Any] = {}
    if data.draw(st.booleans()):
        attrs["layout"] = data.draw(st.sampled_from(["NHWC", "NCHW", "bad"]))
    if not data.draw(st.integers(0, 3)):
        attrs["out_layout"] = data.draw(st.sampled_from(["NHWC", "", None]))
    _same(get_relation("global_pool2d"), (ss.Tensor(shape, dtype),), Attrs(attrs))


@settings(max_examples=200, deadline=None)
@given(shape=st.lists(_size, max_size=4), dtype=_DTYPES, data=st.data())
def test_softmax(shape: list[int], dtype: str, data: st.DataObject) -> None:
    r = len(shape)
    attrs: dict[str, Any] = {}
    if data.draw(st.booleans()):
        attrs["axis"] = data.draw(st.one_of(st.integers(-r - 1, r), st.sampled_from([True, 1.0])))
    _same(get_relation("softmax"), (ss.Tensor(tuple(shape), dtype),), Attrs(attrs))


@settings(max_examples=300, deadline=None)
@given(shape=st.lists(_size, max_size=4), dtype=_DTYPES, data=st.data())
def test_transpose(shape: list[int], dtype: str, data: st.DataObject) -> None:
    r = len(shape)
    attrs: dict[str, Any] = {}
    k = data.draw(st.integers(0, 6))
    if k >= 2:
        perm = data.draw(st.permutations(list(range(r))))
        axes = [p - r if data.draw(st.booleans()) else p for p in perm]
        if k == 2 and r >= 2:  # one axis twice (as given, or only once made nonnegative)
            i, j = data.draw(st.permutations(list(range(r))))[:2]
            axes[i] = axes[j] if data.draw(st.booleans()) else axes[j] % r - r * data.draw(st.integers(0, 1))
        attrs["axes"] = tuple(axes)
    elif k == 1:
        n = data.draw(st.integers(0, r + 1))
        attrs["axes"] = tuple(data.draw(st.lists(st.integers(-r - 1, r), min_size=n, max_size=n)))
    elif data.draw(st.booleans()):
        attrs["axes"] = data.draw(st.sampled_from([None, 0, (True,), (0.0,)]))
    _same(get_relation("transpose"), (ss.Tensor(tuple(shape), dtype),), Attrs(attrs))


@settings(max_examples=200, deadline=None)
@given(a=st.lists(_size, max_size=4), b=st.lists(_size, max_size=4), dtype=_DTYPES, data=st.data())
def test_reshape_like(a: list[int], b: list[int], dtype: str, data: st.DataObject) -> None:
    if data.draw(st.booleans()):  # (one number of elements)
        b = [int(np.prod(a))] + ([1] if data.draw(st.booleans()) else [])
    like = ss.Tensor(tuple(b), dtype if data.draw(st.booleans()) else data.draw(_DTYPES))
    _same(get_relation("reshape_like"), (ss.Tensor(tuple(a), dtype), like), Attrs())


@settings(max_examples=300, deadline=None)
@given(data=st.data(), dtype=_DTYPES)
def test_matmul(data: st.DataObject, dtype: str) -> None:
    k = data.draw(_size)
    a = data.draw(st.lists(_size, min_size=0, max_size=3)) + [k]
    b = [k if data.draw(st.integers(0, 5)) else data.draw(_size)] + data.draw(st.lists(_size, max_size=2))
    if not data.draw(st.integers(0, 6)):
        a = a[-1:]
    bt = dtype if data.draw(st.integers(0, 5)) else data.draw(_DTYPES)
    attrs = {} if data.draw(st.integers(0, 6)) else {"out_dtype": data.draw(st.sampled_from(["", "float16"]))}
    _same(get_relation("matmul"), (ss.Tensor(tuple(a), dtype), ss.Tensor(tuple(b), bt)), Attrs(attrs))
