"""The shortcuts of the import's weights against the slow paths they skip, on random inputs:
:func:`~symshape.onnx.attrs.decoded_dtype` names the dtype of the array ``tensor_value`` decodes
wherever it answers, a ``ConstantOfShape`` fill's dtype (``symshape.onnx.weights``) is the one the
decoding path finds, and an initializer annotated with its constant's own type
(``symshape.onnx.lazy_constant``) infers as with the shared type it was annotated with before."""

from __future__ import annotations

import numpy as np
import onnx
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

import symshape as ss
from symshape.onnx.attrs import decoded_dtype, tensor_value
from symshape.onnx.importer import Importer
from symshape.onnx.lazy_constant import LazyConstant
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


@st.composite
def _initializer_models(draw: st.DrawFn) -> onnx.ModelProto:
    """``x`` plus float initializers (shapes drawn from a few, so some share one) added in turn,
    an int64 vector initializer reshaping the sum, a ConstantOfShape weight added after."""
    shapes = draw(st.lists(st.sampled_from([(3,), (2, 3), (1, 3), (3,)]), min_size=1, max_size=5))
    inits, nodes, last = [], [], "x"
    for i, shape in enumerate(shapes):
        inits.append(helper.make_tensor(f"w{i}", TensorProto.FLOAT, shape, [0.5] * int(np.prod(shape))))
        nodes.append(helper.make_node("Add", [last, f"w{i}"], [f"s{i}"]))
        last = f"s{i}"
    inits.append(helper.make_tensor("shape", TensorProto.INT64, [2], [-1, 3]))
    nodes.append(helper.make_node("Reshape", [last, "shape"], ["r"]))
    inits.append(helper.make_tensor("cshape", TensorProto.INT64, [1], [3]))
    fill = helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0])
    nodes.append(helper.make_node("ConstantOfShape", ["cshape"], ["c"], value=fill))
    nodes.append(helper.make_node("Add", ["r", "c"], ["y"]))
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [draw(st.sampled_from([1, 2])), 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    g = helper.make_graph(nodes, "g", [x], [y], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def _annotations(fn: ss.Function) -> list[tuple[ss.Var, ss.Constant]]:
    assert isinstance(fn.body, ss.Dataflow)
    return [(v, x) for v, x in fn.body.bindings if isinstance(x, ss.Constant)]


@settings(max_examples=60, deadline=None)
@given(model=_initializer_models())
def test_an_initializer_is_annotated_with_its_constants_type(model: onnx.ModelProto) -> None:
    """A float initializer's variable is annotated with its constant's own type object (one per
    initializer: its weight is then typed with the block's leading weights); the program infers as
    with the shared type of its shape as the annotation (how initializers were annotated before),
    report for report."""
    imp = Importer(model, "m")
    fn = imp.run()
    anns = []
    for v, x in _annotations(fn):
        ann = v.type_annotation
        assert ann == x.type and isinstance(ann, ss.TensorType)
        if ann.value is None:
            assert v.type_annotation is x.type
            anns.append(id(v.type_annotation))
    assert len(set(anns)) == len(anns)
    fast = ss.infer(fn)
    report = (fast.report(), fast.report(program=True), [str(g) for g in fast.guards])
    # the former annotation: the importer's shared type of each shape
    for v, x in _annotations(fn):
        value = imp.named[v.name]
        if isinstance(value, LazyConstant) and v.type_annotation is x.type:
            v.type_annotation = value.base
    slow = ss.infer(fn)
    assert (slow.report(), slow.report(program=True), [str(g) for g in slow.guards]) == report
    assert fast.status == "ok"
