"""``symshape check model.onnx --dim S=VALUE`` where the model does not run at that size (issue
19): the explanation (``why_invalid`` of the model inferred with ``S`` symbolic) and exit code 1;
where it runs, the output is what it was."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from symshape.cli import main

onnx = pytest.importorskip("onnx")


def _model(path: Path) -> str:
    from onnx import TensorProto, helper

    nodes = [
        helper.make_node("Add", ["X", "B"], ["Y"], name="add_bias"),
        helper.make_node("Reshape", ["Y", "shape"], ["Z"], name="reshape"),
    ]
    inits = [
        helper.make_tensor("B", TensorProto.FLOAT, [5], [0.0] * 5),
        helper.make_tensor("shape", TensorProto.INT64, [2], [-1, 10]),
    ]
    g = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["S", 5])],
        [helper.make_tensor_value_info("Z", TensorProto.FLOAT, None)], initializer=inits,
    )  # fmt: skip
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    p = path / "s.onnx"
    onnx.save(m, str(p))
    return str(p)


def _runs(s: int) -> bool:
    try:
        (np.zeros((s, 5)) + np.zeros(5)).reshape(-1, 10)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("s", [1, 2, 3, 300, 301])
def test_check_at_a_size(tmp_path: Path, capsys: pytest.CaptureFixture[str], s: int) -> None:
    path = _model(tmp_path)
    code = main(["check", path, "--dim", f"S={s}"])
    out = capsys.readouterr().out
    assert code == (0 if _runs(s) else 1), out
    if _runs(s):
        assert "invalid at" not in out
    else:
        assert f"invalid at S = {s}:" in out, out
        assert f"reshape needs `S % 2 == 0`, which is false at S = {s}" in out, out
        assert "node 'reshape' (Reshape)" in out and "node 'add_bias' (Add): note:" in out, out


def test_check_json_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _model(tmp_path)
    code = main(["check", path, "--dim", "S=7", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1 and "S % 2 == 0" in doc["why_invalid"]
    code = main(["check", path, "--dim", "S=8", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and "why_invalid" not in doc


def test_symbolic_dim_unchanged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _model(tmp_path)
    code = main(["check", path, "--dim", "S"])
    out = capsys.readouterr().out
    assert code == 0 and "invalid at" not in out and "S % 2 == 0" in out, out
