"""More fast eager results of :mod:`symshape.solver.eager_fast` (``reshape``, ...) against the eager
run of the relation itself (:func:`symshape.solver.eager.eager_outputs`), on random constant
shapes and attributes, valid and not: wherever the fast path answers, the eager run answers the
same type (built alike); on the common valid cases it does answer."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import symshape as ss
from symshape.encoding.types import Attrs, TensorType, Type
from symshape.relations import get_relation
from symshape.relations.values import constant_type
from symshape.solver.eager import eager_outputs
from symshape.solver.eager_fast import FAST

_size = st.integers(0, 5)


def _same(name: str, inputs: tuple[Type, ...], attrs: dict[str, Any]) -> bool:
    """The fast result equals the eager run's where given (as the constructor builds it); whether
    it was given."""
    rdef = get_relation(name)
    a = Attrs(attrs)
    fast = FAST[rdef](inputs, a)
    slow = eager_outputs(rdef, inputs, a, 1)
    if fast is not None:
        assert slow is not None, (name, inputs, attrs, fast)
        assert slow[0] == fast and type(slow[0]) is type(fast), (name, inputs, attrs, fast, slow)
        assert isinstance(fast, TensorType) and fast.__dict__ == TensorType(fast.shape, fast.dtype).__dict__
        assert fast.__dict__ == slow[0].__dict__
    return fast is not None


@settings(max_examples=1000, deadline=None)
@given(data=st.data())
def test_reshape(data: st.DataObject) -> None:
    shape = tuple(data.draw(st.lists(_size, max_size=4)))
    spec: list[Any] = []
    for _ in range(data.draw(st.integers(0, 4))):
        k: str = data.draw(st.sampled_from(["lit", "lit", "zero", "infer", "other"]))
        if k == "lit":
            spec.append(data.draw(st.integers(1, 6)))
        elif k == "zero":
            spec.append(0)
        elif k == "infer":
            spec.append(-1)
        else:
            spec.append(data.draw(st.sampled_from([-2, -3, -5, True, 2.0, ss.dim("k")])))
    if data.draw(st.booleans()):
        # a spec that keeps the count: some leading sizes copied (0) or repeated, the rest as one
        # size or -1, maybe 1s after
        cut = data.draw(st.integers(0, len(shape)))
        spec = [0 if data.draw(st.booleans()) else d for d in shape[:cut]]
        rest = math.prod(shape[cut:])
        spec.append(-1 if data.draw(st.booleans()) else rest)
        spec += [1] * data.draw(st.integers(0, 2))
    attrs: dict[str, Any] = {"newshape": tuple(spec)}
    if data.draw(st.integers(0, 5)) == 0:
        attrs["newshape"] = data.draw(st.sampled_from([3, [1, -1], None]))
    az = data.draw(st.sampled_from(["absent", False, True, 0, 1, None]))
    if az != "absent":
        attrs["allowzero"] = az
    _same("reshape", (ss.Tensor(shape, data.draw(st.sampled_from(["float32", "int64"]))),), attrs)


def test_reshape_with_a_value_or_symbols_is_left_to_the_relation() -> None:
    v = constant_type(ss.Tensor((2,), "int64"), np.array([3, 4]))
    n = ss.dim("n")
    rd = get_relation("reshape")
    assert FAST[rd]((v,), Attrs({"newshape": (2, 1)})) is None
    assert FAST[rd]((ss.Tensor((n, 4), "float32"),), Attrs({"newshape": (-1,)})) is None


def test_the_common_reshapes_take_the_fast_path() -> None:
    x = ss.Tensor((1, 256, 6, 6), "float32")
    cases: list[tuple[tuple[int, ...], dict[str, Any]]] = [
        ((1, 256, 6, 6), {"newshape": (1, 9216), "allowzero": False}),
        ((1, 256, 6, 6), {"newshape": (0, -1)}),
        ((1, 256, 6, 6), {"newshape": (-1, 36)}),
        ((2, 0, 3), {"newshape": (0, 0, 3, 1), "allowzero": True}),
        ((2, 0, 3), {"newshape": (-1, 3)}),
    ]
    for shape, attrs in cases:
        assert _same("reshape", (ss.Tensor(shape, "float32"),), attrs), (shape, attrs)
    # errors: the relation reports them
    assert not _same("reshape", (x,), {"newshape": (7,)})
    assert not _same("reshape", (ss.Tensor((4,), "float32"),), {"newshape": ()})
    assert not _same("reshape", (ss.Tensor((0, 2, 3), "float32"),), {"newshape": (0, -1)})


@settings(max_examples=600, deadline=None)
@given(data=st.data())
def test_reduce(data: st.DataObject) -> None:
    shape = tuple(data.draw(st.lists(_size, max_size=4)))
    r = len(shape)
    attrs: dict[str, Any] = {}
    k = data.draw(st.sampled_from(["none", "int", "tuple", "tuple", "bad"]))
    if k == "int":
        attrs["axis"] = data.draw(st.integers(-r - 1, r))
    elif k == "tuple":
        attrs["axis"] = tuple(data.draw(st.lists(st.integers(-r - 1, r), max_size=r + 1)))
    elif k == "bad":
        attrs["axis"] = data.draw(st.sampled_from([[0], 1.0, True, (0, True), "0"]))
    for name in ("keepdims", "exclude"):
        v = data.draw(st.sampled_from(["absent", "absent", False, True, 0, 1, None]))
        if v != "absent":
            attrs[name] = v
    _same("reduce", (ss.Tensor(shape, data.draw(st.sampled_from(["float32", "int64", "bool"]))),), attrs)


def test_the_common_reductions_take_the_fast_path() -> None:
    x = ss.Tensor((1, 1024, 7, 7), "float32")
    for attrs in (
        {"axis": (0, 1), "exclude": True, "keepdims": True},
        {"axis": (2, 3), "keepdims": True},
        {"axis": -1},
        {},
        {"axis": (), "exclude": True},
    ):
        assert _same("reduce", (x,), attrs), attrs
