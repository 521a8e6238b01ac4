"""The shortcuts of the import's weights (``symshape.onnx.weights``) against the slow paths they
skip, on random tensors: :func:`~symshape.onnx.attrs.decoded_dtype` names the dtype of the array
``tensor_value`` decodes wherever it answers, and a ``ConstantOfShape`` fill's dtype is the one
the decoding path finds."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

from symshape.onnx.attrs import decoded_dtype, tensor_value
from symshape.onnx.weights import _decoded_float_fill, _float_fill

_TYPES = [TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT64, TensorProto.INT32,
          TensorProto.UINT64, TensorProto.FLOAT16, TensorProto.INT8, TensorProto.BOOL]  # fmt: skip
_FIELDS = {TensorProto.FLOAT: "float_data", TensorProto.DOUBLE: "double_data",
           TensorProto.INT64: "int64_data", TensorProto.INT32: "int32_data",
           TensorProto.UINT64: "uint64_data", TensorProto.FLOAT16: "int32_data",
           TensorProto.INT8: "int32_data", TensorProto.BOOL: "int32_data"}  # fmt: skip
_NP = {TensorProto.FLOAT: "<f4", TensorProto.DOUBLE: "<f8", TensorProto.INT64: "<i8",
       TensorProto.INT32: "<i4", TensorProto.UINT64: "<u8", TensorProto.FLOAT16: "<f2",
       TensorProto.INT8: "i1", TensorProto.BOOL: "?"}  # fmt: skip


@st.composite
def _tensors(draw: st.DrawFn) -> TensorProto:
    t = TensorProto()
    t.name = "v"
    et = draw(st.sampled_from(_TYPES))
    t.data_type = et
    dims = draw(st.lists(st.integers(-1, 3), max_size=3))
    t.dims.extend(dims)
    n = int(np.prod([max(d, 0) for d in dims]))
    count = n if draw(st.integers(0, 4)) else draw(st.integers(0, 4))
    if draw(st.booleans()):
        t.raw_data = np.ones(count, dtype=_NP[et]).tobytes() + b"\0" * draw(st.sampled_from([0, 0, 1]))
    else:
        getattr(t, _FIELDS[et]).extend([1] * count)
    if not draw(st.integers(0, 8)):
        t.data_location = TensorProto.EXTERNAL
        e = t.external_data.add()
        e.key, e.value = "location", "nowhere.bin"
    if not draw(st.integers(0, 8)):
        t.segment.begin, t.segment.end = 0, 1
    return t


def _decoded(t: TensorProto) -> str | None:
    try:
        return str(np.asarray(tensor_value(t)).dtype)
    except Exception:
        return None


@settings(max_examples=400, deadline=None)
@given(t=_tensors())
def test_decoded_dtype_is_the_decoded_arrays(t: TensorProto) -> None:
    got = decoded_dtype(t)
    if got is not None:
        assert got == _decoded(t), (t, got)


@settings(max_examples=400, deadline=None)
@given(t=_tensors())
def test_a_fill_dtype_is_the_decoding_paths(t: TensorProto) -> None:
    a = helper.make_attribute("value", t)
    assert _float_fill(a, None) == _decoded_float_fill(t, None), t


def test_the_common_fills_take_the_shortcut() -> None:
    for et, want in ((TensorProto.FLOAT, "float32"), (TensorProto.DOUBLE, "float64")):
        field = helper.make_tensor("v", et, [1], [0.5])
        assert decoded_dtype(field) == want == _decoded(field)
        raw = helper.make_tensor("v", et, [1], np.array([0.5], _NP[et]).tobytes(), raw=True)
        assert decoded_dtype(raw) == want == _decoded(raw)
    assert decoded_dtype(helper.make_tensor("v", TensorProto.FLOAT16, [1], [1])) is None
