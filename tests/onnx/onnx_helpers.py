"""Helpers for the ONNX tests: build small models, run them with onnx's reference evaluator, and
compare symshape's symbolic types with the shapes the model really has.

A test describes a node and its inputs with symbolic shapes (``("x", "float32", ("n", 3))``, a
string dimension is a symbol, an int a constant) and constant inputs as numpy arrays (they become
initializers). :func:`check_node` infers the node once with symbols, then for each size assignment
builds concrete inputs, runs ``onnx.reference.ReferenceEvaluator`` and asserts that every output's
shape is symshape's type with the sizes substituted and that every guard holds.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

import symshape as ss
import symshape.onnx as sso
from symshape.onnx.dtypes import to_elem_type

__all__ = [
    "LIGHT",
    "LIGHT_NAMES",
    "light_model",
    "In",
    "make_model",
    "node",
    "infer_node",
    "check_node",
    "reference",
    "run_ort",
    "ort_runs",
    "symbols_of",
    "Case",
]

Shape = Sequence[int | str] | None


@dataclass(frozen=True)
class In:
    """A graph input: name, dtype and shape (strings are symbols); ``data`` makes values for a
    concrete shape (default: random normal, or random ints in ``[0, 3)`` for integer dtypes)."""

    name: str
    dtype: str
    shape: Shape
    data: Callable[[tuple[int, ...], np.random.Generator], np.ndarray[Any, Any]] | None = None


def node(
    op: str, inputs: Sequence[str], outputs: Sequence[str], name: str = "", **attrs: Any
) -> onnx.NodeProto:
    return helper.make_node(op, list(inputs), list(outputs), name=name or f"{op}_0", **attrs)


def make_model(
    nodes: Sequence[onnx.NodeProto],
    inputs: Sequence[In],
    outputs: Sequence[str],
    opset: int = 17,
    inits: Mapping[str, np.ndarray[Any, Any]] | None = None,
    ir_version: int | None = None,
    extra_opsets: Mapping[str, int] | None = None,
) -> onnx.ModelProto:
    vis = []
    for i in inputs:
        shape = None if i.shape is None else [d if isinstance(d, str) else int(d) for d in i.shape]
        vis.append(helper.make_tensor_value_info(i.name, to_elem_type(i.dtype), shape))
    outs = [helper.make_empty_tensor_value_info(o) for o in outputs]
    ts = [numpy_helper.from_array(np.asarray(v), k) for k, v in (inits or {}).items()]
    g = helper.make_graph(list(nodes), "test", vis, outs, ts)
    ops = [helper.make_opsetid("", opset)] + [
        helper.make_opsetid(d, v) for d, v in (extra_opsets or {}).items()
    ]
    m = helper.make_model(g, opset_imports=ops)
    if ir_version is not None:
        m.ir_version = ir_version
    return m


def symbols_of(inputs: Sequence[In]) -> dict[str, ss.Dim]:
    out: dict[str, ss.Dim] = {}
    for i in inputs:
        for d in i.shape or ():
            if isinstance(d, str) and d not in out:
                out[d] = ss.dim(d)
    return out


def infer_node(
    n: onnx.NodeProto,
    inputs: Sequence[In],
    inits: Mapping[str, Any] | None = None,
    opset: int = 17,
    outputs: Sequence[str] | None = None,
    **kw: Any,
) -> sso.OnnxInferenceResult:
    m = make_model([n], inputs, outputs or [o for o in n.output if o], opset, inits)
    return sso.infer(m, dims=symbols_of(inputs), **kw)


def reference(
    model: onnx.ModelProto, feeds: Mapping[str, np.ndarray[Any, Any]]
) -> list[np.ndarray[Any, Any]]:
    from onnx.reference import ReferenceEvaluator

    with np.errstate(all="ignore"):
        return [np.asarray(v) for v in ReferenceEvaluator(model).run(None, dict(feeds))]


def run_ort(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray[Any, Any]]) -> list[np.ndarray[Any, Any]]:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    return [np.asarray(v) for v in sess.run(None, dict(feeds))]


def run_ort_plain(
    model: onnx.ModelProto, feeds: Mapping[str, np.ndarray[Any, Any]]
) -> list[np.ndarray[Any, Any]] | None:
    """The outputs of ``model`` run by onnxruntime without graph optimizations (its optimized graph
    mis-runs some reshapes to computed targets), None when it refuses."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    opts.log_severity_level = 4
    try:
        sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        return [np.asarray(v) for v in sess.run(None, dict(feeds))]
    except Exception:
        return None


def ort_runs(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray[Any, Any]]) -> bool:
    """Whether onnxruntime runs ``model`` on ``feeds`` (the oracle of ``valid_at``: it refuses the
    sizes it cannot run at)."""
    try:
        run_ort(model, feeds)
    except Exception:
        return False
    return True


def _concrete(i: In, size: Mapping[str, int], rng: np.random.Generator) -> np.ndarray[Any, Any]:
    shape = tuple(size[d] if isinstance(d, str) else int(d) for d in (i.shape or ()))
    if i.data is not None:
        return np.asarray(i.data(shape, rng))
    if i.dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if np.dtype(i.dtype).kind in "iu":
        return rng.integers(0, 3, shape).astype(i.dtype)
    return rng.standard_normal(shape).astype(i.dtype)


@dataclass
class Case:
    """A table row: a node, its inputs, constant inputs, the expected types of its outputs as
    printed (None: not checked), and sizes to check against the reference evaluator."""

    id: str
    node: onnx.NodeProto
    inputs: Sequence[In]
    expected: Sequence[str | None]
    sizes: Sequence[Mapping[str, int]] = ()
    inits: Mapping[str, Any] = field(default_factory=dict)
    opset: int = 17
    status: str | None = None  # "ok" or "guarded" when it matters
    runner: str = "reference"  # or "onnxruntime" (where the reference evaluator lacks the case)

    def __str__(self) -> str:
        return self.id


def check_node(case: Case) -> sso.OnnxInferenceResult:
    """Infer ``case`` symbolically, check the printed types and status, then every size against
    the reference evaluator (shapes after substitution, guards holding)."""
    outs = [o for o in case.node.output if o]
    res = infer_node(case.node, case.inputs, case.inits, case.opset, outs)
    assert res.ok, res.report()
    if case.status is not None:
        assert res.status == case.status, res.report()
    types = [res.type_of(o) for o in outs]
    for t, e in zip(types, case.expected):
        if e is not None:
            assert str(t) == e, f"got {t}, expected {e}"
    syms = symbols_of(case.inputs)
    model = make_model([case.node], case.inputs, outs, case.opset, case.inits)
    rng = np.random.default_rng(0)
    for size in case.sizes:
        feeds = {i.name: _concrete(i, size, rng) for i in case.inputs}
        got = reference(model, feeds) if case.runner == "reference" else run_ort(model, feeds)
        env = {syms[k]: v for k, v in size.items() if k in syms}
        for g in res.guards:
            assert g.holds(env), f"{g} fails at {size}"
        for o, t, arr in zip(outs, types, got):
            assert isinstance(t, ss.TensorType) and t.ndim is not None, (o, t)
            st = t.subs(env)
            assert all(d.is_constant for d in st.dims), (o, t, size)
            assert tuple(int(d) for d in st.dims) == arr.shape, f"{o}: {t} at {size} vs {arr.shape}"
            if isinstance(st.dtype, str):
                assert st.dtype == str(arr.dtype), f"{o}: {st.dtype} vs {arr.dtype}"
    return res


#: the folder of the ``light_*`` models in onnx's wheel
LIGHT = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
#: the names of the 9 light models (``light_<name>.onnx``)
LIGHT_NAMES = (
    "bvlc_alexnet",
    "densenet121",
    "inception_v1",
    "inception_v2",
    "resnet50",
    "shufflenet",
    "squeezenet",
    "vgg19",
    "zfnet512",
)


def light_model(name: str, batch: bool = False) -> onnx.ModelProto:
    """The light model ``light_<name>.onnx``; with ``batch``, its data input's first dimension is
    the ``dim_param`` ``N``."""
    m = onnx.load(os.path.join(LIGHT, f"light_{name}.onnx"))
    if batch:
        inits = {t.name for t in m.graph.initializer}
        (vi,) = [vi for vi in m.graph.input if vi.name not in inits]
        d = vi.type.tensor_type.shape.dim[0]
        d.Clear()
        d.dim_param = "N"
    return m
