"""The graph walk (symshape.onnx.importer), the result (result.py) and the spans (spans.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_helpers import In, make_model, node

import symshape as ss
import symshape.onnx as sso
from symshape.onnx.spans import OnnxSpan

F = "float32"


def i64(*v: int) -> np.ndarray:
    return np.array(v, dtype=np.int64)


def _shape_chain_model() -> onnx.ModelProto:
    """x: (2, 3, 8) -> Shape -> Gather(0), Gather(1) -> Mul -> Unsqueeze -> Concat [., 8] -> Reshape."""
    nodes = [
        node("Shape", ["x"], ["sh"], name="shape"),
        node("Gather", ["sh", "i0"], ["d0"], name="g0"),
        node("Gather", ["sh", "i1"], ["d1"], name="g1"),
        node("Mul", ["d0", "d1"], ["nd"], name="mul"),
        node("Unsqueeze", ["nd", "ax"], ["nd1"], name="unsq"),
        node("Concat", ["nd1", "last"], ["target"], name="cat", axis=0),
        node("Reshape", ["x", "target"], ["y"], name="reshape"),
    ]
    inits = {"i0": np.array(0, np.int64), "i1": np.array(1, np.int64), "ax": i64(0), "last": i64(8)}
    return make_model(nodes, [In("x", F, (2, 3, 8))], ["y"], inits=inits)


def test_dim_params_are_symbols_shared_by_name() -> None:
    m = make_model([node("Add", ["a", "b"], ["y"])], [In("a", F, ("N", 4)), In("b", F, ("N", 4))], ["y"])
    res = sso.infer(m)
    assert res.status == "ok" and str(res.type_of("y")) == "Tensor[(N, 4), float32]"


def test_dims_maps_names_to_the_callers_symbols_or_ints() -> None:
    m = make_model([node("Relu", ["x"], ["y"])], [In("x", F, ("N", "S"))], ["y"])
    b = ss.dim("batch")
    res = sso.infer(m, dims={"N": b, "S": 7})
    assert str(res.type_of("y")) == "Tensor[(batch, 7), float32]"
    assert res.type_of("y").dims[0] == b
    with pytest.raises(ss.SymshapeError):
        sso.infer(m, dims={"N": "batch"})


def test_unnamed_unknown_dims_and_unknown_rank() -> None:
    vi = helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 3])
    vz = helper.make_tensor_value_info("z", TensorProto.FLOAT, None)
    g = helper.make_graph(
        [node("Relu", ["x"], ["y"]), node("Relu", ["z"], ["w"])],
        "g",
        [vi, vz],
        [helper.make_empty_tensor_value_info("y"), helper.make_empty_tensor_value_info("w")],
    )
    res = sso.infer(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
    assert str(res.type_of("x")) == "Tensor[(?, 3), float32]"
    assert str(res.type_of("w")) == "Tensor[?, float32]"


def test_expression_dim_params_read_back() -> None:
    m = make_model([node("Relu", ["x"], ["y"])], [In("x", F, ("2*N + 1", "N"))], ["y"])
    t = sso.infer(m).type_of("y")
    n = ss.dim("N")
    assert t.dims == (2 * n + 1, n)


def test_ir3_initializers_listed_as_inputs_are_constants() -> None:
    m = make_model(
        [node("Reshape", ["x", "s"], ["y"])],
        [In("x", F, ("n", 4)), In("s", "int64", (2,))],
        ["y"],
        inits={"s": i64(-1, 2)},
        ir_version=3,
    )
    res = sso.infer(m)
    assert res.status == "ok" and str(res.type_of("y")) == "Tensor[(2*n, 2), float32]"
    # from IR 4 on the input overrides the initializer: the target is not a constant (its
    # entries are known only at run time: fresh dimensions)
    m.ir_version = 8
    res = sso.infer(m)
    t = res.type_of("y")
    assert res.status == "ok" and isinstance(t, ss.TensorType) and t.ndim == 2
    assert not any(d.is_constant for d in t.dims)


def test_shape_computation_on_static_shapes_is_folded() -> None:
    res = sso.infer(_shape_chain_model())
    assert res.status == "ok"
    assert str(res.type_of("y")) == "Tensor[(6, 8), float32]"
    assert str(res.type_of("target")) == "Tensor[(2,), int64] = (6, 8)"
    assert res._importer.folded == 6


def test_unsupported_ops_are_grouped_per_operator() -> None:
    nodes = [
        node("Foo", ["x"], ["a"], name="foo1", domain="my.domain"),
        node("Foo", ["a"], ["b"], name="foo2", domain="my.domain"),
        node("Relu", ["b"], ["y"], name="relu"),
    ]
    m = make_model(nodes, [In("x", F, ("n", 4))], ["y"], extra_opsets={"my.domain": 1})
    res = sso.infer(m)
    assert res.status == "error"
    assert len(res.errors) == 1
    d = res.errors[0]
    assert d.code == "unsupported-op"
    assert "my.domain.Foo" in d.message and "'foo1', 'foo2'" in d.message
    assert str(d.span) == "test: node 'foo1' (my.domain.Foo)"
    assert [str(n.span) for n in d.notes] == ["test: node 'foo2' (my.domain.Foo)"]
    with pytest.raises(ss.SymshapeError) as e:
        sso.from_onnx(m)
    assert e.value.code == "unsupported-op" and "foo2" in e.value.message


def test_outputs_of_unsupported_nodes_take_their_declared_types() -> None:
    nodes = [node("Foo", ["x"], ["a"], name="foo", domain="d"), node("Relu", ["a"], ["y"])]
    m = make_model(nodes, [In("x", F, ("n", 4))], ["y"], extra_opsets={"d": 1})
    m.graph.value_info.append(helper.make_tensor_value_info("a", TensorProto.FLOAT, ["n", 5]))
    res = sso.infer(m)
    assert str(res.type_of("y")) == "Tensor[(n, 5), float32]"
    del m.graph.value_info[:]
    assert str(sso.infer(m).type_of("y")) == "Tensor[?, ?]"


def test_nodes_out_of_order_are_sorted() -> None:
    nodes = [node("Relu", ["a"], ["y"], name="second"), node("Neg", ["x"], ["a"], name="first")]
    res = sso.infer(make_model(nodes, [In("x", F, ("n",))], ["y"]))
    assert res.status == "ok" and str(res.type_of("y")) == "Tensor[(n,), float32]"


def test_undefined_input_is_an_error() -> None:
    res = sso.infer(make_model([node("Relu", ["nowhere"], ["y"], name="r")], [], ["y"]))
    assert res.status == "error" and res.errors[0].code == "undefined-var"
    assert "'nowhere'" in res.errors[0].message


def test_unnamed_nodes_are_named_by_position() -> None:
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Reshape", ["a", "s"], ["y"])]
    res = sso.infer(make_model(nodes, [In("x", F, (2, 3))], ["y"], inits={"s": i64(7)}))
    assert str(res.errors[0].span) == "test: node '#1' (Reshape)"


def test_sequence_inputs_are_unsupported_and_the_rest_is_inferred() -> None:
    # (a sequence of tensors is Sequence[E]: test_onnx_seq_unknown_length; one of sequences not)
    inner = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, None))
    seq = helper.make_value_info("s", helper.make_sequence_type_proto(inner))
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])
    g = helper.make_graph(
        [node("Relu", ["x"], ["y"])], "g", [seq, x], [helper.make_empty_tensor_value_info("y")]
    )
    res = sso.infer(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
    assert res.unsupported[0][0].key == "sequence"
    assert str(res.type_of("y")) == "Tensor[(n,), float32]"


def test_from_onnx_builds_a_function_over_the_graph_inputs() -> None:
    m = make_model([node("MatMul", ["x", "w"], ["y"])], [In("x", F, ("N", 8)), In("w", F, (8, 3))], ["y"])
    f = sso.from_onnx(m)
    assert [p.name for p in f.params] == ["x", "w"]
    res = ss.infer(f)
    assert (
        str(res.type_of(f))
        == "fn<N: dim>(Tensor[(N, 8), float32], Tensor[(8, 3), float32]) -> Tensor[(N, 3), float32]"
    )


def test_type_of_names_and_expressions() -> None:
    m = make_model([node("Relu", ["x"], ["y"])], [In("x", F, ("n",))], ["y"], inits={"unused": i64(1, 2)})
    res = sso.infer(m)
    assert str(res.type_of("unused")) == "Tensor[(2,), int64] = (1, 2)"
    assert str(res.type_of(res._importer.named["y"].expr)) == "Tensor[(n,), float32]"
    assert res.value_names() == ["x", "unused", "y"]
    with pytest.raises(ss.SymshapeError) as e:
        res.type_of("nope")
    assert e.value.code == "undefined-var"


def test_load_from_path_and_bad_input(tmp_path: os.PathLike[str]) -> None:
    m = _shape_chain_model()
    p = os.path.join(str(tmp_path), "chain.onnx")
    onnx.save(m, p)
    res = sso.infer(p)
    assert res.status == "ok"
    bad = os.path.join(str(tmp_path), "bad.onnx")
    with open(bad, "wb") as f:
        f.write(b"\xff\x00 not a model")
    for arg in (os.path.join(str(tmp_path), "missing.onnx"), bad, 42):
        with pytest.raises(ss.SymshapeError) as e:
            sso.infer(arg)
        assert e.value.code == "invalid-argument"


def test_report_names_the_model_file(tmp_path: os.PathLike[str]) -> None:
    m = make_model(
        [node("Reshape", ["x", "s"], ["y"], name="r12")], [In("x", F, (2, 3))], ["y"], inits={"s": i64(7)}
    )
    p = os.path.join(str(tmp_path), "broken.onnx")
    onnx.save(m, p)
    report = sso.infer(p).report()
    assert f"{p}: node 'r12' (Reshape): error: " in report
    assert f"{p}: graph input 'x': note: `x` is annotated" in report


def test_reports_are_deterministic() -> None:
    m = make_model(
        [node("Add", ["a", "b"], ["c"]), node("Reshape", ["c", "s"], ["y"])],
        [In("a", F, ("n", 4)), In("b", F, ("m", 4))],
        ["y"],
        inits={"s": i64(-1, 3)},
    )
    reports = {sso.infer(m).report() for _ in range(3)}
    assert len(reports) == 1
    assert "guards:" in next(iter(reports))


def test_strict_mode_turns_guards_into_errors() -> None:
    m = make_model([node("Add", ["a", "b"], ["y"])], [In("a", F, ("n",)), In("b", F, (5,))], ["y"])
    assert sso.infer(m).status == "guarded"
    res = sso.infer(m, strict=True)
    assert res.status == "error" and res.errors[0].code == "unproven-guard"


def test_onnx_span_prints_and_serializes() -> None:
    s = OnnxSpan.at("model.onnx", 3, "node 'Reshape_12' (Reshape)")
    assert str(s) == "model.onnx: node 'Reshape_12' (Reshape)"
    assert s.model == "model.onnx"
    assert json.loads(json.dumps(s.to_json())) == {
        "file": "<model.onnx>",
        "line": 3,
        "column": 1,
        "what": "node 'Reshape_12' (Reshape)",
    }
    assert isinstance(s, ss.Span)


def test_large_initializers_keep_only_their_shape() -> None:
    big = np.zeros((300, 300), np.float32)
    m = make_model([node("MatMul", ["x", "w"], ["y"])], [In("x", F, ("n", 300))], ["y"], inits={"w": big})
    res = sso.infer(m)
    assert str(res.type_of("y")) == "Tensor[(n, 300), float32]"
    assert res._importer.named["w"].const is None


def test_string_initializers_get_an_unknown_dtype() -> None:
    m = make_model([node("Identity", ["t"], ["y"])], [], ["y"])
    m.graph.initializer.append(numpy_helper.from_array(np.array(["a", "b"], dtype=object), "t"))
    res = sso.infer(m)
    assert str(res.type_of("y")) == "Tensor[(2,), ?]"


def test_import_symshape_does_not_import_onnx() -> None:
    code = "import sys, symshape; import symshape.ops; print('onnx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


_REPORT_SCRIPT = """
import sys
sys.path.insert(0, {helpers!r})
import numpy as np
import symshape.onnx as sso
from onnx_helpers import In, make_model, node
nodes = [
    node("Add", ["a", "b"], ["c"], name="add"),
    node("Foo", ["c"], ["d"], name="foo", domain="x"),
    node("Reshape", ["c", "s"], ["y"], name="r"),
    node("Concat", ["a", "e"], ["z"], name="cat", axis=1),
]
ins = [In("a", "float32", ("n", 4)), In("b", "float32", ("m", 4)), In("e", "float32", (3, 2))]
m = make_model(nodes, ins, ["y", "z"], inits={{"s": np.array([-1, 3])}}, extra_opsets={{"x": 1}})
res = sso.infer(m)
print(res.report())
print([d.to_json() for d in res.errors])
"""


def test_reports_are_identical_across_hash_seeds() -> None:
    helpers = os.path.dirname(os.path.abspath(__file__))
    code = _REPORT_SCRIPT.format(helpers=helpers)
    outs = set()
    for seed in ("0", "1", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
        outs.add(p.stdout)
    assert len(outs) == 1
    text = outs.pop()
    assert "unsupported: no converter for the ONNX operator x.Foo" in text
    assert "node 'cat' (Concat)" in text


def test_malformed_nodes_are_errors_not_crashes() -> None:
    cases = [
        node("HannWindow", ["n"], ["y"], name="w"),  # an empty size tensor
        node("Conv", ["x", "w"], ["y"], name="c", pads=[1, 2, 3]),  # odd pads
        node("Transpose", ["x"], ["y"], name="t", perm=[0, 0, 1]),  # repeated axis
        node("Split", ["x", "sp"], ["a", "b"], name="s", axis=0),  # 3 sizes for 2 outputs
    ]
    inits = {"n": np.zeros((0,), np.int64), "w": np.ones((2, 3, 3), np.float32), "sp": i64(1, 1, 1)}
    for n in cases:
        used = {k: v for k, v in inits.items() if k in n.input}
        m = make_model([n], [In("x", F, (1, 3, 5))], [o for o in n.output], opset=18, inits=used)
        res = sso.infer(m)
        assert res.status == "error", n.name
        assert str(res.errors[0].span).startswith("test: node"), res.errors[0]


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        # a hyphenated name is one symbol, not a difference (no guard batch - size >= 0)
        (("batch-size", "batch-size"), "Tensor[(batch_size, 4), float32]"),
        # names that are not identifiers never take another dim_param's symbol
        (("a.b", "a_b"), None),
        (("a_b", "a.b"), None),
        (("N:0", "N_0"), None),
        (("seq-len", "seq_len"), None),
    ],
)
def test_every_dim_param_has_its_own_symbol(names: tuple[str, str], expected: str | None) -> None:
    inputs = [In("a", F, (names[0], 4)), In("b", F, (names[1], 4))]
    m = make_model([node("Add", ["a", "b"], ["y"])], inputs, ["y"])
    res = sso.infer(m)
    assert res.status == ("ok" if names[0] == names[1] else "guarded"), res.report()
    ta, tb = res.type_of("a"), res.type_of("b")
    assert isinstance(ta, ss.TensorType) and isinstance(tb, ss.TensorType)
    if names[0] == names[1]:
        assert ta.dims[0] == tb.dims[0] and not res.guards
        assert str(res.type_of("y")) == expected
    else:
        # two model dimensions: equal only under a broadcast guard, never silently
        assert ta.dims[0] != tb.dims[0]
        assert res.guards, res.report()


def test_hyphenated_dim_params_are_names_and_spaced_ones_expressions() -> None:
    m = make_model([node("Relu", ["x"], ["y"])], [In("x", F, ("N - 1", "N-1", "batch-size"))], ["y"])
    t = sso.infer(m).type_of("y")
    n = ss.dim("N")
    assert isinstance(t, ss.TensorType)
    assert t.dims[:2] == (n - 1, n - 1) and str(t.dims[2]) == "batch_size"


def test_infer_shapes_output_with_renamed_dim_params_reads_back() -> None:
    """A model's ``batch-size`` is the symbol batch_size; infer_shapes writes ``2*batch_size`` for
    a value twice as long, and importing that copy reads it as the same symbol."""
    m = make_model(
        [node("Concat", ["x", "x"], ["y"], axis=0), node("Relu", ["y"], ["z"])],
        [In("x", F, ("batch-size", 3))],
        ["z"],
    )
    m2 = sso.infer_shapes(m)
    dims = {vi.name: vi.type.tensor_type.shape.dim for vi in m2.graph.value_info}
    written = {name: [d.dim_param or d.dim_value for d in ds] for name, ds in dims.items()}
    assert written["y"] == ["2*batch_size", 3]
    res = sso.infer(m2)
    assert res.status == "ok", res.report()
    assert str(res.type_of("z")) == "Tensor[(2*batch_size, 3), float32]"
    # the names inside a written expression are the symbols' (declared types are read by DimNames)
    from symshape.onnx.declared import DimNames

    names = DimNames()
    b = names.symbol("batch-size")
    assert names.symbol("2*batch_size") == 2 * b
    assert names.symbol("batch_size") != b  # (a dim_param of its own, when the model names one)


@pytest.mark.parametrize(
    "names", [("a.b", "a_b"), ("a_b", "a.b"), ("batch-size", "batch_size"), ("N:0", "N_0")]
)
def test_infer_shapes_writes_each_dim_param_as_the_model_spells_it(names: tuple[str, str]) -> None:
    inputs = [In("a", F, (names[0], 4)), In("b", F, (names[1], 4))]
    m = make_model([node("Relu", ["a"], ["ya"]), node("Relu", ["b"], ["yb"])], inputs, ["ya", "yb"])
    m2 = sso.infer_shapes(m)
    written = {vi.name: vi.type.tensor_type.shape.dim[0].dim_param for vi in m2.graph.output}
    assert written == {"ya": names[0], "yb": names[1]}
