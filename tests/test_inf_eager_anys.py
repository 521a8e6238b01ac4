"""The eager memo's test for ``?`` sizes a run made (``symshape.solver.eager._made_anys``): a
tuple whose fields are tensors of constant shape without a value (a ``batch_norm``'s result) is
skipped without a walk; any other tuple is walked as before."""

from __future__ import annotations

import symshape as ss
from symshape.encoding.dim_atoms import AnyDim
from symshape.encoding.dims import as_dim, fresh_any
from symshape.encoding.type_walks import iter_dims, iter_value_dims
from symshape.encoding.types import TensorType, TupleType, Type
from symshape.solver import eager
from symshape.solver.eager import _anys, _made_anys, _settled_fields


def _walked(ts: list[Type]) -> set[AnyDim]:
    """The ``?`` atoms of ``ts``, by the full walk (what ``_anys`` gives without shortcuts)."""
    out: set[AnyDim] = set()
    for t in ts:
        for d in (*iter_dims(t), *iter_value_dims(t)):
            out.update(a for a in d.atoms() if type(a) is AnyDim)
    return out


def test_tuple_of_constant_tensors_has_no_any() -> None:
    x, v = ss.Tensor((1, 8, 4, 4)), ss.Tensor((8,))
    t = TupleType((x, v, v))
    assert _settled_fields(t)
    assert _anys([t]) == set() == _walked([t])
    assert not _made_anys([t], [x])


def test_tuple_with_a_made_any_is_walked() -> None:
    q = fresh_any(0)
    made = TensorType((q, as_dim(3)), "float32")
    t = TupleType((ss.Tensor((2,)), made))
    assert not _settled_fields(t)
    assert _anys([t]) == _walked([t]) and len(_anys([t])) == 1
    assert _made_anys([t], [ss.Tensor((2,))])  # (a ``?`` the inputs do not hold)
    assert not _made_anys([t], [made])  # (one they do)


def test_tuple_with_a_value_is_walked() -> None:
    # a field of constant shape whose value holds a ``?``: not settled, its value is walked
    q = fresh_any(0)
    shape = TensorType((as_dim(2),), "int64", value=(q, as_dim(5)))
    assert shape._cshape
    t = TupleType((shape, ss.Tensor((3,))))
    assert not _settled_fields(t)
    assert _anys([t]) == _walked([t]) != set()
    assert _made_anys([t], [ss.Tensor((3,))])


def test_nested_tuple_is_walked() -> None:
    q = fresh_any(0)
    inner = TupleType((TensorType((q,), "float32"),))
    t = TupleType((ss.Tensor((1,)), inner))
    assert not _settled_fields(t)
    assert _anys([t]) == _walked([t]) != set()
    assert eager._anys([TupleType((ss.Tensor((1,)), TupleType((ss.Tensor((2,)),))))]) == set()
