"""A sequence grown in a ``Loop`` (``SequenceInsert`` on a loop-carried sequence) has the element
type the body inserts: the body sees the initial sequence, then a sequence of unknown length of
what it added, to a fixpoint (``onnx.loop_seq``, symshape.onnx.ops.control ``_loop``). Before, the
body saw only the empty initial sequence and the elements had an unknown rank, so a
``ConcatFromSequence`` after a torch-exported loop (``out.append(...)``, ``torch.cat(out)``) was a
tensor of unknown rank.

Checked against onnxruntime at several sizes (``size_oracle.disagreements``: the output's rank
and every size symshape names; the concatenated axis is a size computed at run time). The trip
count is at least 1: the concatenation of the empty sequence fails in onnxruntime.
"""

from __future__ import annotations

import functools
import io
import warnings

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx_helpers import In, make_model, node, run_ort
from size_oracle import disagreements, feeds_of

import symshape as ss
import symshape.onnx as sso

SIZES = [{"n": n, "m": m, "k": k} for n, m, k in ((1, 1, 1), (2, 3, 4), (3, 1, 5), (5, 4, 2))]
X = [In("x", "float32", ["n", "m", "k"])]


@functools.lru_cache(maxsize=4)
def _export(kind: str) -> onnx.ModelProto:
    """A scripted loop appending to a list, then ``torch.cat``/``torch.stack``, exported by
    ``torch.onnx.export`` (TorchScript, opset 17) with dynamic ``n``, ``m``, ``k``."""
    torch = pytest.importorskip("torch")

    class CatRows(torch.nn.Module):  # (n, m, k) -> (n*m, k)
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            out: list[torch.Tensor] = []
            for i in range(x.size(0)):
                out.append(x[i] * 2 + 1)
            return torch.cat(out, 0)

    class StackRows(torch.nn.Module):  # (n, m, k) -> (m, n)
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            out: list[torch.Tensor] = []
            for i in range(x.size(0)):
                out.append(x[i].sum(1))
            return torch.stack(out, 1)

    class CatColumns(torch.nn.Module):  # (n, m, k) -> (n, m, k)
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            out: list[torch.Tensor] = []
            for i in range(x.size(1)):
                out.append(x[:, i].unsqueeze(1))
            return torch.cat(out, 1)

    class RunningSum(torch.nn.Module):  # (n, m, k) -> (n, m, k), a tensor state too
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            h = torch.zeros_like(x[0])
            out: list[torch.Tensor] = []
            for i in range(x.size(0)):
                h = h + x[i]
                out.append(h)
            return torch.stack(out, 0)

    mods = {
        "cat rows": CatRows,
        "stack rows": StackRows,
        "cat columns": CatColumns,
        "running sum": RunningSum,
    }
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            torch.jit.script(mods[kind]()),
            (torch.zeros(2, 3, 4),),
            buf,
            input_names=["x"],
            output_names=["y"],
            dynamic_axes={"x": {0: "n", 1: "m", 2: "k"}},
            opset_version=17,
            dynamo=False,
        )
    return onnx.load_from_string(buf.getvalue())


#: the output's type, its concatenated axis written ``c`` (a size computed at run time)
CASES = {
    "cat rows": "Tensor[(c, k), float32]",
    "stack rows": "Tensor[(m, c), float32]",
    "cat columns": "Tensor[(n, c, k), float32]",
    "running sum": "Tensor[(c, m, k), float32]",
}


@pytest.mark.parametrize("name", CASES)
def test_torch_loop_appending_fixed_rank(name: str) -> None:
    want = CASES[name]
    model = _export(name)
    assert "Loop" in [n.op_type for n in model.graph.node]
    syms = {k: ss.dim(k) for k in "nmk"}
    res = sso.infer(model, dims=syms)
    assert res.status == "ok", res.report()
    y = res.type_of("y")
    assert isinstance(y, ss.TensorType) and y.ndim is not None, y
    # the concatenated axis: a size computed at run time (written c here)
    c = [str(d) for d in y.dims if str(d) not in "nmk"]
    assert len(c) == 1 and str(y).replace(c[0], "c") == want, y
    assert disagreements(model, syms, SIZES, feeds_of(X)) == []


def _body(grow: list[onnx.NodeProto]) -> onnx.GraphProto:
    seq = helper.make_tensor_sequence_value_info
    i64 = helper.make_tensor_value_info
    return helper.make_graph(
        [node("Identity", ["c"], ["c_out"], name="keep"), *grow],
        "body",
        [i64("i", TensorProto.INT64, []), i64("c", TensorProto.BOOL, []), seq("s", TensorProto.FLOAT, None)],
        [i64("c_out", TensorProto.BOOL, []), seq("s_out", TensorProto.FLOAT, None)],
    )


def _loop_model(grow: list[onnx.NodeProto], first: bool) -> onnx.ModelProto:
    """A loop of ``n`` iterations growing a sequence (empty, or ``[x]`` when ``first``), then its
    concatenation along axis 0; the body may read the constants ``minus`` (-1), ``z1`` ([0]) and
    ``o1`` ([1])."""
    ns = [
        node("Shape", ["x"], ["sh"], name="sh"),
        node("Gather", ["sh", "zero"], ["m"], name="m", axis=0),
        node("SequenceConstruct", ["x"], ["s0"], name="s0")
        if first
        else node("SequenceEmpty", [], ["s0"], name="s0", dtype=TensorProto.FLOAT),
        node("Loop", ["m", "cond", "s0"], ["seq"], name="loop", body=_body(grow)),
        node("ConcatFromSequence", ["seq"], ["y"], name="flat", axis=0),
    ]
    inits = {
        "cond": np.array(True),
        "zero": np.array(0, np.int64),
        "one": np.array(1, np.int64),
        "minus": np.array(-1, np.int64),
        "z1": np.array([0], np.int64),
        "o1": np.array([1], np.int64),
    }
    return make_model(ns, [In("x", "float32", ["n", "k"])], ["y"], opset=16, inits=inits)


def test_the_element_read_back_and_grown() -> None:
    """The body reads the last element and inserts it with one more row: the elements' rank is
    2 and their last axis ``k`` (a fixpoint on the second round: the first sees ``[x]``)."""
    grow = [
        node("SequenceAt", ["s", "minus"], ["last"], name="last"),
        node("Slice", ["last", "z1", "o1"], ["row"], name="row"),
        node("Concat", ["last", "row"], ["t"], name="t", axis=0),
        node("SequenceInsert", ["s", "t"], ["s_out"], name="grow"),
    ]
    model = _loop_model(grow, first=True)
    syms = {"n": ss.dim("n"), "k": ss.dim("k")}
    res = sso.infer(model, dims=syms)
    assert res.status == "ok", res.report()
    y = res.type_of("y")
    assert isinstance(y, ss.TensorType) and y.ndim == 2 and str(y.dims[1]) == "k", y
    sizes = [{"n": n, "k": k} for n, k in ((1, 1), (2, 3), (4, 2))]
    assert disagreements(model, syms, sizes, feeds_of([In("x", "float32", ["n", "k"])])) == []
    got = run_ort(model, {"x": np.zeros((2, 3), np.float32)})[0]
    assert got.shape == (2 + 3 + 4, 3)  # [x] then x + 1 row, + 2 rows (n = 2 iterations)


def test_a_rank_that_keeps_growing_is_unknown() -> None:
    """The body inserts the last element with a new axis (rank 1, 2, 3, ...): no fixpoint, the
    elements' rank stays unknown (as before)."""
    grow = [
        node("SequenceAt", ["s", "minus"], ["last"], name="last"),
        node("Unsqueeze", ["last", "z1"], ["t"], name="t"),
        node("SequenceInsert", ["s", "t"], ["s_out"], name="grow"),
    ]
    model = _loop_model(grow, first=True)
    res = sso.infer(model, dims={"n": ss.dim("n"), "k": ss.dim("k")})
    seq = res.type_of("seq")
    assert str(seq) == "Sequence[Tensor[?, float32]]", seq


def test_an_element_read_back_must_broadcast_with_the_input() -> None:
    """The body adds the input ``x`` (n, k) to the last element, which grows by a row each
    iteration: from the second iteration on that needs ``n == 1`` (onnxruntime refuses other
    sizes). The body saw only ``[x]`` before, and symshape accepted every size."""
    grow = [
        node("SequenceAt", ["s", "minus"], ["last"], name="last"),
        node("Add", ["last", "x"], ["sum"], name="add"),
        node("Slice", ["sum", "z1", "o1"], ["row"], name="row"),
        node("Concat", ["sum", "row"], ["t"], name="t", axis=0),
        node("SequenceInsert", ["s", "t"], ["s_out"], name="grow"),
    ]
    model = _loop_model(grow, first=True)
    syms = {"n": ss.dim("n"), "k": ss.dim("k")}
    res = sso.infer(model, dims=syms)
    assert [g.describe() for g in res.guards] == ["add at test: node 'add' (Add) needs `n == 1`"]
    sizes = [{"n": n, "k": k} for n, k in ((1, 1), (1, 3), (2, 3), (3, 2))]
    assert disagreements(model, syms, sizes, feeds_of([In("x", "float32", ["n", "k"])])) == []
