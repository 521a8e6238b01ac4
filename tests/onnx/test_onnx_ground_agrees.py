"""The ground walk (:mod:`symshape.onnx.ground`) agrees with the full path wherever it answers.

Where the walk answers, the full path (the importer and inference, :func:`symshape.onnx._infer_full`)
must say ``ok`` without a guard and give every ONNX value the same type, in the same order; the
result the walk makes must then answer the rest (report, program, ``valid_at``) from the full path.
Checked on the light models, on onnx's own node test cases, and on random models
(:mod:`tests.onnx.ground_gen`) built to hit the walk's edges: out-of-range attributes, wrong
shapes, sizes of 0, declared types that differ; each random model the walk answers is also run by
onnxruntime, every node output a graph output, and each value's shape must be its type's. The
rate at which the walk answers is asserted too
(it must not fall back everywhere).
"""

from __future__ import annotations

import glob
import os
import random
import warnings
from collections.abc import Mapping
from typing import Any

import onnx
import pytest
from tests.onnx import ground_gen

import symshape as ss
import symshape.onnx as sso
from symshape.onnx import _infer_full
from symshape.onnx.export_model import annotated_copy
from symshape.onnx.ground import ground_types

_DATA = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")
LIGHT = sorted(glob.glob(os.path.join(_DATA, "light", "light_*.onnx")))


def _types(res: sso.OnnxInferenceResult) -> list[tuple[str, str]]:
    return [(n, str(res.type_of(n))) for n in res.value_names()]


def _agrees(m: onnx.ModelProto, dims: Mapping[str, Any] | None = None, run: bool = False) -> bool:
    """Whether the walk answered ``m``; when it did, asserts the agreement (and with ``run``, that
    onnxruntime gives every value the walk's shape, at sizes 1 to 3 for the symbols)."""
    if ground_types(m, dims) is None:
        return False
    full = _infer_full(m, "m", None, dims, False, 2000)
    assert full.status == "ok", [d.message for d in full.errors + full.unresolved] or full.guards
    res = sso.infer(m, dims)
    assert res._ground is not None and res.status == "ok" and not res.errors and not res.guards
    assert _types(res) == _types(full)
    # infer_shapes writes the walk's types as it writes the full path's, byte for byte
    assert sso.infer_shapes(m, dims).SerializeToString() == annotated_copy(full).SerializeToString()
    if run:
        _runs_as_typed(m, res, random.Random(len(res.value_names())))
    return True


#: how many models onnxruntime ran in _runs_as_typed, and how many it refused (kernels it lacks)
RAN = {"ran": 0, "refused": 0}


def _runs_as_typed(m: onnx.ModelProto, res: sso.OnnxInferenceResult, rng: random.Random) -> None:
    """Run ``m`` with every node output as a graph output, the symbols at random sizes from 1 to
    3: each value's shape is its type's, substituted."""
    import numpy as np
    import onnxruntime as ort
    from onnx import helper

    import symshape as ss

    types = {n: t for n, t in zip(res.value_names(), (res.type_of(n) for n in res.value_names()))}
    symbols = sorted({x for t in types.values() for d in t.shape for x in d.symbols}, key=str)
    env = {x: rng.randint(1, 3) for x in symbols}
    shown = onnx.ModelProto()
    shown.CopyFrom(m)
    del shown.graph.output[:]
    outs = [o for n in m.graph.node for o in n.output if o]
    if not outs:  # (nothing to run: the graph's output is its input)
        return
    assert res._ground is not None
    elem = {n: e[0] for n, e in res._ground.entries.items()}
    shown.graph.output.extend(helper.make_tensor_value_info(o, elem[o], None) for o in outs)
    feeds = {}
    for vi in m.graph.input:
        t = types[vi.name]
        assert isinstance(t, ss.TensorType)
        shape = tuple(int(d.subs(env)) for d in t.shape)
        feeds[vi.name] = np.zeros(shape, t.dtype)  # (zeros: every index in range)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    opts.log_severity_level = 4
    try:
        sess = ort.InferenceSession(shown.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        got = sess.run(None, feeds)
    except Exception as e:
        # (kernels or opsets onnxruntime lacks)
        assert any(t in str(e) for t in ("NOT_IMPLEMENTED", "Could not find an implementation", "opset")), e
        RAN["refused"] += 1
        return
    RAN["ran"] += 1
    for name, arr in zip(outs, got):
        t = types[name]
        assert isinstance(t, ss.TensorType)
        assert tuple(int(d.subs(env)) for d in t.shape) == np.asarray(arr).shape, (name, t, env)


@pytest.mark.parametrize("path", LIGHT, ids=[os.path.basename(p) for p in LIGHT])
def test_light_models(path: str) -> None:
    m = onnx.load(path)
    assert _agrees(m)
    res = sso.infer(path)
    # what the walk does not answer comes from the full path, run once when first asked
    assert res.report() == _infer_full(m, path, os.path.dirname(path), None, False, 2000).report()
    assert res.valid_at({}) and res.valid_when() == "True"
    assert res.program is res.program


def test_node_test_cases() -> None:
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = collect_testcases()
    answered = sum(_agrees(c.model) for c in cases)
    assert answered >= 150  # (162 with onnx 1.23: the ground operators' cases of static shapes)


@pytest.mark.parametrize("seed", range(8))
def test_random_models(seed: int) -> None:
    rng = random.Random(seed)
    answered, ran = 0, RAN["ran"]
    n = 60
    for _ in range(n):
        m = ground_gen.model(rng)
        answered += _agrees(m, ground_gen.dims(rng), run=True)
    assert answered >= n // 5 and RAN["ran"] - ran >= answered * 3 // 4


def test_windows_sweep() -> None:
    """Convolutions and pools over a sweep of sizes, kernels, strides, pads and dilations: the
    nodes the walk answers alone, together in one model, agree with the full path."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    rng = random.Random(0)
    nodes, inits, outs = [], [], []
    inputs = {}
    for k in range(400):
        op = rng.choice(["Conv", "MaxPool", "AveragePool"])
        nd = rng.choice([1, 1, 2])
        size = [rng.randint(1, 7) for _ in range(nd)]
        kernel = [rng.randint(1, 4) for _ in range(nd)]
        attrs = {
            "strides": [rng.randint(1, 3) for _ in range(nd)],
            "pads": [rng.randint(0, 2) for _ in range(2 * nd)],
            "dilations": [rng.randint(1, 2) for _ in range(nd)],
        }
        x = f"x{'_'.join(map(str, size))}"
        inputs[x] = helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 2] + size)
        ins = [x]
        if op == "Conv":
            w = f"w{k}"
            inits.append(numpy_helper.from_array(np.zeros([3, 2] + kernel, np.float32), w))
            ins.append(w)
        else:
            attrs["kernel_shape"] = kernel
            if op == "AveragePool":
                del attrs["dilations"]
        node = helper.make_node(op, ins, [f"y{k}"], **attrs)
        alone = helper.make_model(
            helper.make_graph(
                [node],
                "g",
                [inputs[x]],
                [helper.make_tensor_value_info(f"y{k}", 1, None)],
                inits[-1:] if op == "Conv" else [],
            ),
            opset_imports=[helper.make_opsetid("", 17)],
        )
        if ground_types(alone) is not None:
            nodes.append(node)
            outs.append(helper.make_tensor_value_info(f"y{k}", TensorProto.FLOAT, None))
    assert len(nodes) >= 150
    m = helper.make_model(
        helper.make_graph(nodes, "g", list(inputs.values()), outs, inits),
        opset_imports=[helper.make_opsetid("", 17)],
    )
    assert _agrees(m)


def test_rules_hold_only_where_the_full_path_converts() -> None:
    """Each rule starts at an opset where the full path has a converter for its operator (a model
    of an older one must get the full path's `unsupported-op`), the operators typed inline are
    converted from opset 1, and no rule answers past the newest opset checked."""
    from symshape.onnx.ground.node import NEWEST, PLAIN_UNARY, RULES
    from symshape.onnx.registry import REGISTRY

    for op, (since, _) in RULES.items():
        assert REGISTRY.lookup("", op, since) is not None, op
    for op in (*PLAIN_UNARY, "ConstantOfShape", "Constant"):
        assert REGISTRY.lookup("", op, 7 if op != "ConstantOfShape" else 9) is not None, op
    assert NEWEST <= onnx.defs.onnx_opset_version()


def _one(node: Any, inputs: list[Any], inits: list[Any] | None = None, opset: int = 17) -> onnx.ModelProto:
    from onnx import helper

    out = helper.make_tensor_value_info(node.output[0], 0, None)
    g = helper.make_graph([node], "g", inputs, [out], inits or [])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _no_outputs(node: Any, inputs: list[Any]) -> onnx.ModelProto:
    from onnx import helper

    g = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("x", 1, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])


def _fallbacks() -> list[tuple[str, onnx.ModelProto]]:
    """Models the walk must leave to the full path (each found answered once, wrongly)."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 5, 5])
    b = helper.make_tensor_value_info("b", TensorProto.BOOL, [2, 3])
    s = numpy_helper.from_array(np.array([2, 3], np.int64), "s")
    neg = onnx.TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[-1, 5])
    seg = numpy_helper.from_array(np.array([1, 50], np.int64), "t")
    seg.segment.begin, seg.segment.end = 0, 2

    def fill(**kw: Any) -> onnx.ModelProto:
        value = onnx.TensorProto(name="value", **kw)
        return _one(helper.make_node("ConstantOfShape", ["s"], ["y"], value=value), [], [s])

    return [
        ("Erf before opset 9", _one(helper.make_node("Erf", ["x"], ["y"]), [x], opset=8)),
        ("Flatten-1 of bools", _one(helper.make_node("Flatten", ["b"], ["y"]), [b], opset=8)),
        (
            "an input named ''",
            _one(helper.make_node("Relu", [""], ["y"]), [helper.make_tensor_value_info("", 1, [2])]),
        ),
        ("a fill without data", fill(data_type=1, dims=[1])),
        ("a fill of two entries", fill(data_type=1, dims=[1], float_data=[1.0, 2.0])),
        ("a fill of 8 raw bytes", fill(data_type=1, dims=[1], raw_data=bytes(8))),
        ("a float16 fill in float_data", fill(data_type=10, dims=[1], float_data=[1.0])),
        (
            "auto_pad ''",
            _one(helper.make_node("MaxPool", ["x"], ["y"], auto_pad="", kernel_shape=[2, 2]), [x]),
        ),
        (
            "strides of floats",
            _one(helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[1.0, 1.0]), [x]),
        ),
        ("Cast to bool", _one(helper.make_node("Cast", ["x"], ["y"], to=TensorProto.BOOL), [x])),
        ("a Split without outputs", _no_outputs(helper.make_node("Split", ["x"], [], axis=1), [x])),
        ("an initializer of a negative size", _one(helper.make_node("Add", ["x", "w"], ["y"]), [x], [neg])),
        ("a segmented reshape target", _one(helper.make_node("Reshape", ["x", "t"], ["y"]), [x], [seg])),
    ]


@pytest.mark.parametrize("case", _fallbacks(), ids=lambda c: c[0])
def test_falls_back(case: tuple[str, onnx.ModelProto]) -> None:
    assert ground_types(case[1]) is None


def test_bad_timeout_raises_before_the_walk() -> None:
    m = dict(_fallbacks())["Cast to bool"]
    m.graph.node[0].attribute[0].i = onnx.TensorProto.FLOAT  # (a cast the walk answers)
    assert ground_types(m) is not None
    for bad in (0, -5, "x", 1.5):
        with pytest.raises(ss.SymshapeError, match="timeout_ms"):
            sso.infer(m, timeout_ms=bad)  # type: ignore[arg-type]


def test_threads_wait_for_the_full_path() -> None:
    """Two threads asking a ground result for more than types: one runs the full path, the other
    waits for it (it once saw the result half made)."""
    import threading

    path = next(p for p in LIGHT if "densenet" in p)
    res = sso.infer(path)
    assert res._ground is not None
    got: list[str] = []
    threads = [threading.Thread(target=lambda: got.append(res.valid_when())) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == ["True", "True"]


def test_infer_shapes_drops_value_info_of_inputs() -> None:
    """A value_info entry naming a graph input or an initializer is dropped, as the full path's
    copy drops it."""
    from onnx import helper

    m = _one(helper.make_node("Relu", ["x"], ["y"]), [helper.make_tensor_value_info("x", 1, [2, 3])])
    m.graph.value_info.append(helper.make_tensor_value_info("x", 1, None))
    assert _agrees(m)


def test_the_last_of_two_initializers_of_one_name_is_the_value() -> None:
    """onnxruntime and the reference evaluator read the last; the walk leaves such a model to the
    full path, which reads the last too (it read the first)."""
    import numpy as np
    from onnx import helper, numpy_helper

    x = helper.make_tensor_value_info("x", 1, [2, 3])
    first, last = (numpy_helper.from_array(np.array(v, np.int64), "s") for v in ([3, 2], [6, 1]))
    m = _one(helper.make_node("Reshape", ["x", "s"], ["y"]), [x], [first, last])
    assert ground_types(m) is None
    assert str(sso.infer(m).type_of("y")) == "Tensor[(6, 1), float32]"
