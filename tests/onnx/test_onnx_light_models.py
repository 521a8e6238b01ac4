"""Oracle (b): the 9 ``light_*`` models in onnx's wheel (``onnx/backend/test/data/light``).

Their weights are ``ConstantOfShape`` nodes of constant shapes and their reshape targets are
initializers (IR version 3: initializers are constants), so they convert fully. As shipped (batch 1)
every model infers ``ok`` to its real output shape (the ``*_output_0.pb`` next to it), and every
intermediate value's shape equals what onnxruntime computes. With the batch made symbolic (``N``),
densenet121 and squeezenet stay ``ok`` with ``N`` in the batch position; the other seven hard-code
batch 1 in a ``Reshape`` target, which symshape reports as the single guard ``N == 1`` at that node.
"""

from __future__ import annotations

import glob
import os

import numpy as np
import onnx
import pytest
from onnx import numpy_helper
from torch_models import run_all_values

import symshape as ss
import symshape.onnx as sso

LIGHT = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
MODELS = sorted(
    os.path.basename(p)[len("light_") : -len(".onnx")] for p in glob.glob(os.path.join(LIGHT, "light_*.onnx"))
)
BATCH_GENERIC = {"densenet121", "squeezenet"}


def _path(name: str) -> str:
    return os.path.join(LIGHT, f"light_{name}.onnx")


def _data_input(m: onnx.ModelProto) -> onnx.ValueInfoProto:
    inits = {t.name for t in m.graph.initializer}
    (vi,) = [vi for vi in m.graph.input if vi.name not in inits]
    return vi


def test_all_nine_are_there() -> None:
    assert len(MODELS) == 9


@pytest.mark.parametrize("name", MODELS)
def test_as_shipped(name: str) -> None:
    m = onnx.load(_path(name))
    out = m.graph.output[0].name
    expected = numpy_helper.to_array(onnx.load_tensor(_path(name).replace(".onnx", "_output_0.pb"))).shape
    res = sso.infer(m)
    assert res.status == "ok", res.report()
    assert tuple(int(d) for d in res.type_of(out).dims) == expected
    # via infer_shapes too
    m2 = sso.infer_shapes(m)
    assert tuple(d.dim_value for d in m2.graph.output[0].type.tensor_type.shape.dim) == expected
    # every value, against onnxruntime
    vi = _data_input(m)
    shape = tuple(d.dim_value for d in vi.type.tensor_type.shape.dim)
    actual = run_all_values(_path(name), {vi.name: np.zeros(shape, np.float32)})
    types = res.types()
    checked = 0
    for value, real in actual.items():
        t = types[value]
        assert tuple(int(d) for d in t.dims) == real, value
        checked += 1
    assert checked == len(actual) and checked > 10


@pytest.mark.parametrize("name", MODELS)
def test_symbolic_batch(name: str) -> None:
    m = onnx.load(_path(name))
    vi = _data_input(m)
    d = vi.type.tensor_type.shape.dim[0]
    d.Clear()
    d.dim_param = "N"
    n = ss.dim("N")
    res = sso.infer(m, dims={"N": n})
    out = res.type_of(m.graph.output[0].name)
    expected = numpy_helper.to_array(onnx.load_tensor(_path(name).replace(".onnx", "_output_0.pb"))).shape
    if name in BATCH_GENERIC:
        assert res.status == "ok", res.report()
        assert out.dims[0] == n and tuple(int(x) for x in out.dims[1:]) == expected[1:]
        return
    assert res.status == "guarded", res.report()
    (g,) = res.guards
    assert g.holds({n: 1}) and not g.holds({n: 2}) and not g.holds({n: 3})
    assert g.origin is not None and g.origin.span.what.endswith("(Reshape)")
    assert tuple(int(x.subs({n: 1})) for x in out.dims) == expected


def test_batch_generic_models_run_at_batch_two() -> None:
    for name in sorted(BATCH_GENERIC):
        m = onnx.load(_path(name))
        vi = _data_input(m)
        vi.type.tensor_type.shape.dim[0].Clear()
        vi.type.tensor_type.shape.dim[0].dim_param = "N"
        n = ss.dim("N")
        types = sso.infer(m, dims={"N": n}).types()
        shape = (2, *(d.dim_value for d in vi.type.tensor_type.shape.dim[1:]))
        actual = run_all_values(m, {vi.name: np.zeros(shape, np.float32)})
        for value, real in actual.items():
            assert tuple(int(x.subs({n: 2})) for x in types[value].dims) == real, value
