"""``symshape.onnx.infer_shapes`` writes the values of subgraphs (``If`` branches, ``Scan`` bodies),
as onnx's own ``infer_shapes`` does, and every shape it writes there is the shape the value has
when the model runs.

The oracle observes the body values at run time: onnx's ``ReferenceEvaluator`` runs each subgraph
with an evaluator of its own (one run per ``Scan`` iteration, per ``If`` branch taken); its ``run``
is wrapped to keep every intermediate value of every run (:class:`Observed`). Each value written in a
subgraph (``value_info``, outputs, inputs), its ``dim_param`` strings read back with
``ss.parse_dim`` and the sizes substituted, must equal the shape of every observation of it.
Besides: onnx accepts the copy (``check_model(full_check=True)``, its strict inference with data
propagation changes nothing written, in the subgraphs too), and onnxruntime runs the copy and gives
the original's outputs.

Models: hand-written ones over symbolic ``batch`` and ``seq`` (a run-time ``If`` whose branches
compute sizes from ``Shape``; sibling branches that both name a value ``o`` with different shapes;
``Scan`` 9+ with scan axes and a weight; opset 8's ``Scan`` with its batch axis; an ``If`` inside a
``Scan`` body; a ``Loop`` whose state keeps its type and one whose state grows), models
``torch.onnx`` exports from a scripted module with a data-dependent ``if`` (and a ``for`` loop),
and onnx's own node test cases that hold a subgraph symshape converts. The ``Loop`` models need a
``Loop`` converter (on branch h-seqs when this was written): without one they are skipped, as
``infer_shapes`` refuses them (``unsupported-op``).
"""

from __future__ import annotations

import functools
import os
import tempfile
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx_helpers import In, make_model, node, run_ort
from test_onnx_infer_shapes_subgraph_oracle import (
    accepted_by_onnx,
    check_against_runs,
    graph_key,
    subgraph_written,
)
from written_shapes import dims_of

import symshape.onnx as sso
from symshape.onnx.export import graphs_within

Arrays = dict[str, np.ndarray[Any, Any]]
Sizes = Mapping[str, int]
F = TensorProto.FLOAT


# -- hand-written models ---------------------------------------------------------------------------


def _vi(name: str, shape: list[Any] | None = None, et: int = F) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, et, shape)


def _i64(name: str, v: Any) -> onnx.NodeProto:
    return helper.make_node(
        "Constant", [], [name], name=f"c_{name}", value=onnx.numpy_helper.from_array(np.array(v, np.int64))
    )


def if_shape_arithmetic() -> onnx.ModelProto:
    """``y = If(c)``: then flattens ``x`` (batch, seq) to (batch*seq,) through ``Shape`` and
    doubles it with a ``Concat``; else takes ``x``'s first ``seq - 1`` columns flattened and pads
    them to length ``batch*seq + ...``: both branches compute sizes from shapes."""
    then_g = helper.make_graph(
        [
            helper.make_node("Shape", ["x"], ["t_shape"], name="t_sh"),
            helper.make_node("ReduceProd", ["t_shape"], ["t_n"], name="t_prod", keepdims=1),
            helper.make_node("Reshape", ["x", "t_n"], ["t_flat"], name="t_flat"),
            helper.make_node("Concat", ["t_flat", "t_flat"], ["t_out"], name="t_cat", axis=0),
        ],
        "then",
        [],
        [_vi("t_out", [None])],
    )
    else_g = helper.make_graph(
        [
            _i64("e_start", [0]),
            _i64("e_end", [-1]),
            _i64("e_axes", [1]),
            helper.make_node("Slice", ["x", "e_start", "e_end", "e_axes"], ["e_cols"], name="e_slice"),
            helper.make_node("Flatten", ["e_cols"], ["e_flat2"], name="e_flat", axis=0),
            _i64("e_minus1", [-1]),
            helper.make_node("Reshape", ["e_flat2", "e_minus1"], ["e_row"], name="e_row"),
            helper.make_node("Concat", ["e_row", "e_row", "xb"], ["e_out"], name="e_cat", axis=0),
        ],
        "else",
        [],
        [_vi("e_out", [None])],
    )
    n = node("If", ["c"], ["y"], name="if0", then_branch=then_g, else_branch=else_g)
    first = node("ReduceSum", ["x", "one"], ["xb"], name="xb", keepdims=0)
    ins = [In("x", "float32", ("batch", "seq")), In("c", "bool", ())]
    return make_model([first, n], ins, ["y"], opset=13, inits={"one": np.array([1], np.int64)})


def if_siblings_share_a_name() -> onnx.ModelProto:
    """Both branches name their output ``o``: (batch, 2*seq) in one, (batch, 3*seq) in the other."""
    then_g = helper.make_graph(
        [node("Concat", ["x", "x"], ["o"], name="cc2", axis=1)], "then", [], [_vi("o", [None, None])]
    )
    else_g = helper.make_graph(
        [node("Relu", ["x"], ["r"], name="r"), node("Concat", ["x", "x", "r"], ["o"], name="cc3", axis=1)],
        "else",
        [],
        [_vi("o", [None, None])],
    )
    n = node("If", ["c"], ["y"], name="if0", then_branch=then_g, else_branch=else_g)
    return make_model([n], [In("x", "float32", ("batch", "seq")), In("c", "bool", ())], ["y"])


def _scan_body(with_if: bool) -> onnx.GraphProto:
    """``s`` (batch, 4) a state, ``xi`` (batch, 4) a slice: ``s2 = s + xi``, a scan output
    ``h = s2 @ w`` (batch, 8) and its row sums (batch,); ``with_if``: the row sums go through an
    ``If`` on their total (its branches: ``Abs`` / ``Neg`` of them, kept apart by name)."""
    nodes = [
        node("Add", ["s", "xi"], ["s2"], name="add"),
        node("MatMul", ["s2", "w"], ["h"], name="mm"),
        _i64("ax1", [1]),
        node("ReduceSum", ["h", "ax1"], ["rows"], name="rows", keepdims=0),
    ]
    last = "rows"
    if with_if:
        nodes.append(node("ReduceSum", ["rows"], ["tot"], name="tot", keepdims=0))
        nodes.append(node("Greater", ["tot", "zero"], ["pos"], name="pos"))
        then_g = helper.make_graph(
            [node("Abs", ["rows"], ["ta"], name="ta")], "in_then", [], [_vi("ta", [None])]
        )
        else_g = helper.make_graph(
            [node("Neg", ["rows"], ["en"], name="en")], "in_else", [], [_vi("en", [None])]
        )
        nodes.append(node("If", ["pos"], ["picked"], name="inner_if", then_branch=then_g, else_branch=else_g))
        last = "picked"
    return helper.make_graph(nodes, "body", [_vi("s"), _vi("xi")], [_vi("s2"), _vi("h"), _vi(last)])


def scan9(with_if: bool = False) -> onnx.ModelProto:
    """``Scan`` (opset 16) over ``xs`` (batch, seq, 4) along axis 1, scan outputs stacked at axes 0
    and -1: (seq, batch, 8) and (batch, seq); ``with_if`` (:func:`_scan_body`): over ``xs``
    (seq, batch, 4) along axis 0, both stacked at axis 0 (the reference evaluator's only axes: it
    observes the body's ``If``)."""
    axes: dict[str, Any] = {} if with_if else {"scan_input_axes": [1], "scan_output_axes": [0, -1]}
    n = node(
        "Scan",
        ["s0", "xs"],
        ["sf", "hs", "ls"],
        name="scan",
        body=_scan_body(with_if),
        num_scan_inputs=1,
        **axes,
    )
    xs = ("seq", "batch", 4) if with_if else ("batch", "seq", 4)
    ins = [In("s0", "float32", ("batch", 4)), In("xs", "float32", xs)]
    inits: dict[str, np.ndarray[Any, Any]] = {
        "w": np.arange(32, dtype=np.float32).reshape(4, 8) / 10,
        "zero": np.array(0, np.float32),
    }
    return make_model([n], ins, ["sf", "hs", "ls"], opset=16, inits=inits)


def scan8() -> onnx.ModelProto:
    """Opset 8's ``Scan``: states (batch, 4), scan input (batch, seq, 4); the body sees (4,)."""
    body = helper.make_graph(
        [
            node("Add", ["s", "xi"], ["s2"], name="add"),
            node("Mul", ["s2", "xi"], ["p"], name="mul"),
            node("Unsqueeze", ["p"], ["p2"], name="unsq", axes=[0]),
        ],
        "body8",
        [_vi("s"), _vi("xi")],
        [_vi("s2"), _vi("p2")],
    )
    n = node("Scan", ["", "s0", "xs"], ["sf", "ps"], name="scan8", body=body, num_scan_inputs=1)
    ins = [In("s0", "float32", ("batch", 4)), In("xs", "float32", ("batch", "seq", 4))]
    return make_model([n], ins, ["sf", "ps"], opset=8)


@functools.lru_cache(maxsize=2)
def torch_if(with_loop: bool = False) -> onnx.ModelProto:
    """A scripted module with a data-dependent ``if`` (``h.sum() > 0``: the branches concatenate
    ``h`` and ``x`` in either order, one through a ``Neg``), exported by ``torch.onnx.export``
    (TorchScript, opset 17) with dynamic ``batch`` and ``seq``: an ``If`` node whose branches
    torch names ``sub_graph`` and ``sub_graph1``. ``with_loop``: then a ``for`` over ``seq`` adds
    the running index to the result (a ``Loop`` whose trip count is ``seq``)."""
    import torch

    class Branchy(torch.nn.Module):
        def __init__(self, with_loop: bool) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(8, 8)
            self.with_loop = with_loop

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            h = self.lin(x)
            if bool(h.sum() > 0):
                y = torch.cat([h, x], dim=-1)
            else:
                y = torch.cat([x, -h], dim=-1)
            if self.with_loop:
                for i in range(x.shape[1]):
                    y = y + x[:, i : i + 1, :1] * i
            return (y * x.shape[1]).reshape(x.shape[0], -1)

    torch.manual_seed(0)
    with warnings.catch_warnings(), tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "branchy.onnx")
        warnings.simplefilter("ignore")
        torch.onnx.export(
            torch.jit.script(Branchy(with_loop)),
            (torch.randn(2, 5, 8),),
            path,
            input_names=["x"],
            output_names=["y"],
            dynamic_axes={"x": {0: "batch", 1: "seq"}},
            opset_version=17,
            dynamo=False,
        )
        return onnx.load(path)


def _torch_feeds(s: Sizes, k: int) -> Arrays:
    """``x`` of 100 or -100 everywhere (by ``k``'s parity: ``h.sum()`` then has either sign, each
    branch is taken) plus noise."""
    rng = np.random.default_rng(k)
    x = (1 if k % 2 == 0 else -1) * 100 + rng.standard_normal((s["batch"], s["seq"], 8))
    return {"x": x.astype(np.float32)}


def loop(growing: bool) -> onnx.ModelProto:
    """``Loop`` over a run-time trip count with a true condition: the state ``s`` (batch, seq)
    becomes ``s + x``, the scan output is its row sums (batch,) and ``Range(0, i + 1)`` has the
    iteration number's length (not one size for the run: written unknown). ``growing``: the state
    becomes ``Concat(s, x)`` along axis 1 instead, (batch, seq*(i + 2)) at iteration ``i``: its
    type changes from one iteration to the next, so it and what is computed from it are not
    written."""
    step = (
        node("Concat", ["s", "x"], ["s2"], name="grow", axis=1)
        if growing
        else node("Add", ["s", "x"], ["s2"], name="add")
    )
    body = helper.make_graph(
        [
            node("Identity", ["cond_in"], ["cond_out"], name="keep"),
            step,
            _i64("ax1", [1]),
            node("ReduceSum", ["s2", "ax1"], ["rows"], name="rows", keepdims=0),
            _i64("one", 1),
            _i64("zero", 0),
            node("Add", ["i", "one"], ["i1"], name="i1"),
            node("Range", ["zero", "i1", "one"], ["upto"], name="upto"),
            node("Cast", ["upto"], ["upto_f"], name="upto_f", to=F),
            node("ReduceSum", ["upto_f"], ["tri"], name="tri", keepdims=1),
            node("Mul", ["rows", "tri"], ["scaled"], name="scaled"),
        ],
        "loop_body",
        [_vi("i", [], TensorProto.INT64), _vi("cond_in", [], TensorProto.BOOL), _vi("s", [None, None])],
        [_vi("cond_out", [], TensorProto.BOOL), _vi("s2", [None, None]), _vi("scaled", [None])],
    )
    n = node("Loop", ["trip", "go", "s0"], ["sf", "rs"], name="loop", body=body)
    ins = [
        In("x", "float32", ("batch", "seq")),
        In("s0", "float32", ("batch", "seq")),
        In("trip", "int64", ()),
    ]
    m = make_model([n], ins, ["sf", "rs"], opset=17, inits={"go": np.array(True)})
    # the outputs' ranks declared (onnx's checker wants a shape; symshape knows none for the
    # growing state: what is declared stays)
    m.graph.output[0].CopyFrom(_vi("sf", ["batch", None]))
    m.graph.output[1].CopyFrom(_vi("rs", [None, "batch"]))
    return m


def _loop_feeds(s: Sizes, k: int) -> Arrays:
    rng = np.random.default_rng(k)
    b, t = s["batch"], s["seq"]
    x, s0 = (rng.standard_normal((b, t)).astype(np.float32) for _ in range(2))
    # (1 to 3 iterations: with none, onnxruntime shapes the empty scan output after the declared
    # output, (0, 0) for the annotated copy's (trip, batch) where the original gives (0,))
    return {"x": x, "s0": s0, "trip": np.array(k % 3 + 1, np.int64)}


#: the Loop converter lives on another branch (h-seqs) at the time of writing: with it, the Loop
#: models run; without it, infer_shapes refuses them (unsupported-op), which says nothing here
LOOP = pytest.mark.skipif("Loop" not in sso.supported_ops(), reason="no Loop converter on this branch")


@dataclass(frozen=True)
class Model:
    name: str
    make: Callable[[], onnx.ModelProto]
    feeds: Callable[[Sizes, int], Arrays]  # (sizes, the k-th run: an If's condition alternates)
    complete: bool = True  # (every body value is written)


def _bs_feeds(names: tuple[str, ...]) -> Callable[[Sizes, int], Arrays]:
    def feeds(s: Sizes, k: int) -> Arrays:
        rng = np.random.default_rng(k)
        b, t = s["batch"], s["seq"]
        shapes = {"x": (b, t), "s0": (b, 4), "xs": (b, t, 4), "xs_tb": (t, b, 4)}
        out: Arrays = {
            n.removesuffix("_tb"): rng.standard_normal(shapes[n]).astype(np.float32)
            for n in names
            if n != "c"
        }
        if "c" not in names:
            return out
        out["c"] = np.array(k % 2 == 0)
        return out

    return feeds


MODELS = (
    Model("if_shape_arithmetic", if_shape_arithmetic, _bs_feeds(("x", "c"))),
    Model("if_siblings_share_a_name", if_siblings_share_a_name, _bs_feeds(("x", "c"))),
    Model("scan9", scan9, _bs_feeds(("s0", "xs"))),
    Model("scan9_with_if", lambda: scan9(with_if=True), _bs_feeds(("s0", "xs_tb"))),
    Model("scan8", scan8, _bs_feeds(("s0", "xs"))),
    Model("torch_if", torch_if, _torch_feeds),
    pytest.param(Model("torch_if_loop", lambda: torch_if(with_loop=True), _torch_feeds), marks=LOOP),
    pytest.param(Model("loop", lambda: loop(False), _loop_feeds), marks=LOOP),
    pytest.param(Model("loop_growing", lambda: loop(True), _loop_feeds, complete=False), marks=LOOP),
)
SIZES = (
    {"batch": 1, "seq": 1},
    {"batch": 1, "seq": 3},
    {"batch": 2, "seq": 1},
    {"batch": 3, "seq": 5},
    {"batch": 4, "seq": 2},
    {"batch": 5, "seq": 7},
)
_CHECKED: dict[str, int] = {}


@pytest.mark.parametrize("model", MODELS, ids=lambda m: getattr(m, "name", ""))
def test_every_body_value_is_written_and_is_its_run_shape(model: Model) -> None:
    m = model.make()
    m2 = sso.infer_shapes(m)
    written = subgraph_written(m2)
    for g in graphs_within(m2.graph) if model.complete else ():  # every body value typed
        body_values = {o for n in g.node for o in n.output if o} | {vi.name for vi in (*g.input, *g.output)}
        assert body_values <= set(written[graph_key(g)]), (g.name, body_values - set(written[graph_key(g)]))
    accepted_by_onnx(m2)
    total, seen = 0, set()
    for k, sizes in enumerate(SIZES):
        feeds = model.feeds(sizes, k)
        want = run_ort(m, feeds)
        got = run_ort(m2, feeds)
        for g_, w in zip(got, want):
            np.testing.assert_allclose(g_, w, rtol=1e-5, atol=1e-5)
        checked, bad, now = check_against_runs(m2, written, feeds, sizes)
        assert not bad, "\n".join(bad)
        total += checked
        seen |= now
    # every written body value observed (both branches of an If are taken at some size)
    assert {(key, name) for key, values in written.items() for name in values} == seen
    _CHECKED[model.name] = total
    assert total > 0 or not model.complete


@LOOP
def test_a_loop_body_is_written_where_every_iteration_has_its_types() -> None:
    got = {k[0]: v for k, v in subgraph_written(sso.infer_shapes(loop(False))).items()}["loop_body"]
    assert got["s"] == got["s2"] == ["batch", "seq"] and got["rows"] == got["scaled"] == ["batch"]
    assert got["upto"] == [None] and got["tri"] == [1]  # (the iteration number's length: unknown)
    # the growing state, and what is computed from it, are not written (their types change with
    # the iteration); the rest of the body is, where the body's applications agree: it is applied
    # again to the state generalized (LOOP_TENSOR), where ``upto``'s run-time length is another `?`
    grown = sso.infer_shapes(loop(True))
    body = next(graphs_within(grown.graph))
    got = {vi.name: dims_of(vi) for vi in body.value_info}
    assert got == {"ax1": [1], "one": [], "zero": [], "i1": [], "tri": [1]}
    assert [dims_of(vi) for vi in (*body.input, *body.output)] == [
        [],
        [],
        [None, None],
        [],
        [None, None],
        [None],
    ]


def test_the_written_body_shapes_are_symbolic() -> None:
    # what the oracle checks is symbolic: the body values carry batch, seq and their arithmetic
    got = {k[0]: v for k, v in subgraph_written(sso.infer_shapes(if_shape_arithmetic())).items()}
    assert got["then"]["t_flat"] == ["batch*seq"] and got["then"]["t_out"] == ["2*batch*seq"]
    assert got["else"]["e_cols"] == ["batch", "seq - 1"]
    assert got["else"]["e_out"] == ["2*batch*seq - batch"]
    sib = {k[0]: v for k, v in subgraph_written(sso.infer_shapes(if_siblings_share_a_name())).items()}
    assert sib["then"]["o"] == ["batch", "2*seq"] and sib["else"]["o"] == ["batch", "3*seq"]
    scan = {k[0]: v for k, v in subgraph_written(sso.infer_shapes(scan9(with_if=True))).items()}
    assert scan["body"]["s"] == ["batch", 4] and scan["body"]["h"] == ["batch", 8]
    assert scan["in_then"]["ta"] == ["batch"] and scan["in_else"]["en"] == ["batch"]
    assert {k[0]: v for k, v in subgraph_written(sso.infer_shapes(scan8())).items()}["body8"]["p2"] == [1, 4]
    branches = {k[0]: v for k, v in subgraph_written(sso.infer_shapes(torch_if())).items()}
    assert sorted(branches) == ["sub_graph", "sub_graph1"]
    assert all(dims == ["batch", "seq", 16] for name, dims in branches["sub_graph"].items())
    assert branches["sub_graph1"]["/Neg_output_0"] == ["batch", "seq", 8]
