"""``infer_shapes(model, dims={"N": b})``: the caller says the model's ``N`` is their ``b``, so the
copy says ``b`` everywhere, graph inputs included (before, the values said ``B`` and the input
still ``N``: two names for one size). A dimension given as a number is written as that number (the
copy then runs at that size only, as the caller stated), an expression as its canonical text
(``2*M``, which :func:`symshape.onnx.from_onnx` reads back). The copy passes onnx's checker and
strict inference unchanged, onnxruntime runs it and gives the original's outputs, and each written
shape is the run shape.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, shape_inference
from onnx_helpers import In, make_model, node, run_ort
from torch_models import run_all_values
from written_shapes import at, dims_of, written

import symshape as ss
import symshape.onnx as sso
from symshape.onnx.export import graphs_within

F = TensorProto.FLOAT


def _model() -> onnx.ModelProto:
    """``x`` (N, 3), ``c`` a condition: ``y = Concat(x, x)`` (2*N, 3), an ``If`` on ``c`` whose
    branches take ``Relu`` or ``Neg`` of ``x`` (the then branch declares its output (N, ?)), and an
    ``If`` on a constant whose branch not taken (never converted, so not written) declares its
    output (N, 3): that ``N`` is renamed too."""
    then_g = helper.make_graph(
        [node("Relu", ["x"], ["t"], name="t")],
        "then",
        [],
        [helper.make_tensor_value_info("t", F, ["N", None])],
    )
    else_g = helper.make_graph(
        [node("Neg", ["x"], ["e"], name="e")], "else", [], [helper.make_tensor_value_info("e", F, None)]
    )
    taken = helper.make_graph(
        [node("Relu", ["x"], ["w1"], name="w1")], "taken", [], [helper.make_tensor_value_info("w1", F, None)]
    )
    not_taken = helper.make_graph(
        [node("Neg", ["x"], ["w2"], name="w2")],
        "not_taken",
        [],
        [helper.make_tensor_value_info("w2", F, ["N", 3])],
    )
    nodes = [
        node("Concat", ["x", "x"], ["y"], name="cat", axis=0),
        node("If", ["c"], ["z"], name="if0", then_branch=then_g, else_branch=else_g),
        node("Relu", ["y"], ["r"], name="r"),
        node("If", ["k"], ["w"], name="if1", then_branch=taken, else_branch=not_taken),
    ]
    ins = [In("x", "float32", ("N", 3)), In("c", "bool", ())]
    return make_model(nodes, ins, ["y", "z", "r", "w"], inits={"k": np.array(True)})


def _every_dim_param(m: onnx.ModelProto) -> set[str]:
    out: set[str] = set()
    for g in (m.graph, *graphs_within(m.graph)):
        for vi in (*g.input, *g.output, *g.value_info):
            out.update(d for d in dims_of(vi) or () if isinstance(d, str))
    return out


@pytest.mark.parametrize(
    ("given", "symbols", "sizes"),
    [
        (lambda: ss.dim("B"), {"B", "2*B"}, ({"B": 1}, {"B": 2}, {"B": 5})),
        (lambda: 2 * ss.dim("M"), {"2*M", "4*M"}, ({"M": 1}, {"M": 2}, {"M": 3})),
        (lambda: 4, set(), ({},)),  # (the copy runs at N = 4 only: as the caller said)
    ],
    ids=["renamed", "expression", "number"],
)
def test_the_callers_dimension_is_written_everywhere(given: Any, symbols: set[str], sizes: Any) -> None:
    m = _model()
    m2 = sso.infer_shapes(m, dims={"N": given()})
    assert _every_dim_param(m2) == symbols  # no N left anywhere, the inputs included
    onnx.checker.check_model(m2, full_check=True)
    again = written(shape_inference.infer_shapes(m2, strict_mode=True, data_prop=True))
    ours = written(m2)
    assert {k: again[k] for k in ours} == ours
    # read back: the input's dimension is the caller's
    (x,) = [p for p in sso.from_onnx(m2).params if p.name == "x"]
    assert str(x.type_annotation) == f"Tensor[({given()}, 3), float32]"
    for s in sizes:
        n = int(
            ss.parse_dim(str(given()), {k: ss.dim(k) for k in s}).subs({ss.dim(k): v for k, v in s.items()})
        )
        for cond in (True, False):
            feeds = {
                "x": np.random.default_rng(n).standard_normal((n, 3)).astype(np.float32),
                "c": np.array(cond),
            }
            for a, b in zip(run_ort(m2, feeds), run_ort(m, feeds)):
                np.testing.assert_array_equal(a, b)
            actual = run_all_values(m2, feeds)
            for name, dims in ours.items():
                assert dims is not None
                assert tuple(at(d, s) for d in dims) == actual[name], (name, dims, s)
            assert tuple(at(d, s) for d in dims_of(m2.graph.input[0]) or ()) == (n, 3)


def test_a_number_fixes_the_input_and_onnxruntime_refuses_other_sizes() -> None:
    m2 = sso.infer_shapes(_model(), dims={"N": 4})
    assert dims_of(m2.graph.input[0]) == [4, 3] and written(m2)["y"] == [8, 3]
    with pytest.raises(Exception, match=r"(?i)dimension|shape"):
        run_ort(m2, {"x": np.zeros((5, 3), np.float32), "c": np.array(True)})


def test_without_dims_the_model_keeps_its_names() -> None:
    m2 = sso.infer_shapes(_model())
    assert dims_of(m2.graph.input[0]) == ["N", 3]
    assert written(m2)["y"] == ["2*N", 3]
    assert _every_dim_param(m2) == {"N", "2*N"}
