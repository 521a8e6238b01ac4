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


def test_compute_keeps_a_fast_constant_shape_result() -> None:
    # a FAST result of constant shape is kept without looking for ``?`` (no walk); it is the
    # eager run's result
    from symshape.relations import get_relation

    rdef = get_relation("conv2d")
    x, w = ss.Tensor((1, 3, 8, 8)), ss.Tensor((4, 3, 3, 3))
    attrs = ss.Attrs({"padding": (1, 1)})
    val, kept = eager.EagerMemo()._compute(rdef, (x, w), attrs, 1)
    assert kept and val is not None and str(val[0]) == "Tensor[(1, 4, 8, 8), float32]"
    assert val == eager.eager_outputs(rdef, (x, w), attrs, 1)
    assert not _made_anys(val, (x, w))


def test_compute_keeps_a_result_whose_any_the_inputs_hold() -> None:
    # not of constant shape: looked at (``_made_anys``); the ``?`` is the input's, so it is kept
    from symshape.relations import get_relation

    t = TensorType((fresh_any(0), as_dim(4)), "float32")
    val, kept = eager.EagerMemo()._compute(get_relation("unary"), (t,), ss.Attrs(), 1)
    assert val is not None and val[0] == t and kept
