"""``symshape check model.onnx`` reads the model with symshape's loader (no ``onnx.load``), so a
model whose tensors live in an external file checks as the same model with its tensors inline: the
output (text and JSON, with ``--dim`` values, symbols and a batch name) is byte for byte the same,
and is the output built from ``onnx.load`` + ``symshape.onnx.infer`` of the model as onnx reads it
(the CLI's former path). The weights are not read; a missing external file the importer needs is a
usage error naming it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import symshape.onnx as sso
from symshape.cli import EXIT_OK, EXIT_TYPE_ERROR, EXIT_USAGE, main


def _model(batch: str | int) -> onnx.ModelProto:
    """``x: (batch, 6, 4)`` reshaped to an initializer target ``[5, -1]`` (so the batch must be a
    multiple of 5), sliced by initializer bounds, times a weight too large to keep."""
    rng = np.random.default_rng(0)
    inits = {
        "target": np.array([5, -1], np.int64),
        "starts": np.array([1], np.int64),
        "ends": np.array([5], np.int64),
        "axes": np.array([1], np.int64),
    }
    n = helper.make_node
    g = helper.make_graph(
        [
            n("Reshape", ["x", "target"], ["r"], name="reshape_target"),
            n("Slice", ["r", "starts", "ends", "axes"], ["s"], name="slice"),
            n("MatMul", ["s", "w"], ["y"], name="mm"),
        ],
        "ext_cli",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 6, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, k) for k, v in inits.items()]
        + [numpy_helper.from_array(rng.standard_normal((4, 1200)).astype(np.float32), "w")],  # (never read)
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The exit code, stdout and stderr (an unknown type is named by its first appearance in the
    output, ``?t1``, however many inferences the process ran before)."""
    code = main(["check", *args])
    out, err = capsys.readouterr()
    return code, out, err


_FRESH = re.compile(r"\?t\d+")


ARGS = [
    [],
    ["--json"],
    ["--dim", "N=10"],
    ["--dim", "N=3"],  # (the reshape to [5, -1] needs a multiple of 5)
    ["--dim", "N=3", "--json"],
    ["--dim", "N"],
    ["--strict"],
]


@pytest.mark.parametrize("batch", ["N", 1])
@pytest.mark.parametrize("args", ARGS, ids=lambda a: " ".join(a) or "plain")
def test_external_data_checks_as_inline(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    batch: str | int,
    args: list[str],
) -> None:
    path = str(tmp_path / "m.onnx")
    onnx.save_model(_model(batch), path)
    inline = _check(capsys, path, *args)
    former = _former_output(path, args)
    onnx.save_model(
        _model(batch),
        path,
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location="weights.bin",
        size_threshold=0,
    )
    assert os.path.getsize(tmp_path / "weights.bin") > 1600  # (every tensor is outside)

    def no_onnx_load(*a: object, **k: object) -> None:
        raise AssertionError("the CLI calls onnx.load")

    monkeypatch.setattr(onnx, "load", no_onnx_load)
    monkeypatch.setattr(onnx, "load_model", no_onnx_load)
    external = _check(capsys, path, *args)
    assert external == inline
    if former is not None:  # (its types name holes by their ids, the report by appearance)
        assert _FRESH.sub("?t", inline[1]) == _FRESH.sub("?t", former)
    assert inline[0] in (EXIT_OK, EXIT_TYPE_ERROR) and inline[2] == ""


def _former_output(path: str, args: list[str]) -> str | None:
    """The text the CLI printed when it read the model with ``onnx.load`` (its outputs' types and
    report, for the runs without ``--dim``, ``--json``)."""
    if args not in ([], ["--strict"]):
        return None
    res = sso.infer(onnx.load(path), strict="--strict" in args, label=path)
    lines = ["inputs:", f"  x : {res.type_of('x')}", "outputs:", f"  y : {res.type_of('y')}", res.report()]
    return "\n".join(lines) + "\n"


def test_weights_are_not_read_and_a_missing_file_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(tmp_path / "m.onnx")
    onnx.save_model(
        _model("N"), path, save_as_external_data=True, all_tensors_to_one_file=False, size_threshold=0
    )
    os.remove(tmp_path / "w")  # (the weight's own file: never read)
    code, out, err = _check(capsys, path)
    assert code == EXIT_OK and err == ""
    assert out.splitlines()[3] == "  y : Tensor[(5, 1200), float32]"
    os.remove(tmp_path / "target")  # (the reshape target: read)
    code, out, err = _check(capsys, path)
    assert code == EXIT_USAGE and "'target'" in err and "external data" in err and out == ""
