"""The names of unknown types (``?t1``) and solver unknowns (``?d1``) in what symshape prints are
numbered per output, by first appearance, not by the process-wide counters behind the holes' ids:
the same program inferred again in the same process (a notebook cell run twice, a test after
others) prints byte for byte the same report, renderings, JSON, graph and CLI output; and one
output names one hole alike throughout (a report's diagnostics, its program, the CLI's types).
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import symshape as ss
import symshape.onnx as sso
from symshape.cli import main
from symshape.display import result_html, result_text, solution_text
from symshape.solver.diagnostics import render_all

BUILDER = '''import symshape as ss

x = ss.var("x")
y = ss.var("y")
model = ss.Function([x, y], ss.Tuple([ss.ops.relu(x), ss.ops.relu(y)]))
'''


def _reshape_model(batch: str | int) -> onnx.ModelProto:
    """``x: (batch, 6, 4)`` reshaped to ``[5, -1]``: at batch 3 an error, whose output is unknown."""
    g = helper.make_graph(
        [
            helper.make_node("Reshape", ["x", "target"], ["r"], name="reshape_target"),
            helper.make_node("Relu", ["r"], ["y"], name="relu"),
        ],
        "holes",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 6, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([5, -1], np.int64), "target")],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def _cli(*argv: str) -> tuple[int, str]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(list(argv))
    return code, buf.getvalue()


def _result_outputs(res: ss.InferenceResult, at: dict[str, int]) -> list[Any]:
    g = res.graph()
    return [
        res.report(),
        res.report(program=True),
        repr(res),
        [str(d) for d in res.diagnostics],
        [d.render() for d in res.diagnostics],
        [d.to_json() for d in res.diagnostics],
        [d.to_json_str() for d in res.diagnostics],
        [d._repr_html_() for d in res.diagnostics],
        render_all(res.diagnostics),
        result_text(res),
        result_html(res),
        solution_text(res.solution),
        res.to_dot(),
        [(n, sorted(d.items())) for n, d in g.nodes(data=True)],
        sorted(g.edges),
        res.why_invalid(at),
    ]


def _outputs(tmp_path: Path) -> list[Any]:
    """Everything printed for a builder program with two unknown types and an ONNX model whose
    output type is unknown."""
    out: list[Any] = []
    namespace: dict[str, Any] = {}
    exec(compile(BUILDER, str(tmp_path / "builder.py"), "exec"), namespace)
    out += _result_outputs(ss.infer(namespace["model"]), {})
    builder = str(tmp_path / "builder.py")
    out += [_cli("check", builder), _cli("check", builder, "--json")]
    for name, at in (("batch3.onnx", {}), ("batchN.onnx", {"N": 3})):
        path = str(tmp_path / name)
        out += _result_outputs(sso.infer(path), at)
        out += _result_outputs(sso.infer(path, dims=at), {})
        with pytest.raises(ss.SymshapeError) as e:
            sso.infer_shapes(path, dims=at)
        out.append(str(e.value))
    for args in ([], ["--json"], ["--dim", "N=3"], ["--dim", "N=3", "--json"]):
        out.append(_cli("check", str(tmp_path / "batch3.onnx"), *args))
        out.append(_cli("check", str(tmp_path / "batchN.onnx"), *args))
    return out


def _other_inferences() -> None:
    """Programs that make holes and unknowns of their own (the counters move on)."""
    for k in range(3):
        x = ss.var("x")
        ss.infer(ss.Function([x], ss.ops.relu(ss.ops.relu(x)))).report(program=True)
        sso.infer(_reshape_model(k + 1)).report(program=True)


def test_the_same_programs_print_the_same_in_one_process(tmp_path: Path) -> None:
    (tmp_path / "builder.py").write_text(BUILDER)
    onnx.save(_reshape_model(3), str(tmp_path / "batch3.onnx"))
    onnx.save(_reshape_model("N"), str(tmp_path / "batchN.onnx"))
    _other_inferences()
    first = _outputs(tmp_path)
    _other_inferences()
    second = _outputs(tmp_path)
    assert len(first) == len(second)
    for i, (a, b) in enumerate(zip(first, second, strict=True)):
        assert a == b, f"output {i} differs between two inferences of the same program"
    # (the outputs do show unknown types)
    assert "?t1" in first[1] and "?t2" in first[1]
    assert any('"y": "?t1"' in o[1] for o in first if isinstance(o, tuple))


def test_one_output_names_one_hole_alike_throughout(tmp_path: Path) -> None:
    """Each diagnostic of a report was numbered on its own, so two different holes in two
    diagnostics were both ``?t1``; a report numbers them together."""
    namespace: dict[str, Any] = {}
    exec(compile(BUILDER, str(tmp_path / "builder.py"), "exec"), namespace)
    res = ss.infer(namespace["model"])
    text = res.report(program=True)
    errors = [ln for ln in text.splitlines() if "cannot infer a type" in ln]
    assert ["(`?t1`)" in errors[0], "(`?t2`)" in errors[1]] == [True, True], text
    assert "/* (?t1, ?t2) */" in text
    assert render_all(res.diagnostics).count("?t2") == 1
    # (a standalone rendering numbers its own: the diagnostic of y alone has ?t1)
    assert "(`?t1`)" in str(res.diagnostics[1])


def test_cli_types_and_report_share_the_names(tmp_path: Path) -> None:
    """The ONNX CLI prints the outputs' types and the report: a hole both show has one name."""
    path = str(tmp_path / "m.onnx")
    onnx.save(_reshape_model(3), path)
    ss.infer(ss.Function([ss.var("x")], ss.var("x")))  # (holes before this run)
    code, text = _cli("check", path)
    assert code == 1 and "  y : ?t1\n" in text
    code, text = _cli("check", path, "--json")
    assert json.loads(text)["outputs"] == {"y": "?t1"}
