"""``symshape check model.onnx [--dim NAME[=VALUE]] [--json]``: the real command line.

Most cases call :func:`symshape.cli.main` in-process (the console script is exactly that function);
two run ``python -m symshape`` in a subprocess, as users do. Exit codes: 0 well typed, 1 type
errors, 2 bad usage.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import onnx
import pytest
from onnx import TensorProto, helper

from symshape.cli import EXIT_OK, EXIT_TYPE_ERROR, EXIT_USAGE, main
from symshape.onnx.cli import bind_dims, parse_dim_option

LIGHT = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
SRC = str(Path(__file__).resolve().parents[2] / "src")


def _light(name: str) -> str:
    return os.path.join(LIGHT, f"light_{name}.onnx")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code, out, err = run(capsys, *args, "--json")
    assert err == ""
    return code, json.loads(out)


def _save(tmp_path: Path, model: onnx.ModelProto, name: str = "m.onnx") -> str:
    p = tmp_path / name
    onnx.save(model, str(p))
    return str(p)


def _mlp(batch: str | int = "N") -> onnx.ModelProto:
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"), helper.make_node("Relu", ["h"], ["y"])],
        "mlp",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 64]),
            helper.make_tensor_value_info("w", TensorProto.FLOAT, [64, 10]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def _broken_concat() -> onnx.ModelProto:
    g = helper.make_graph(
        [helper.make_node("Concat", ["a", "b"], ["y"], name="cat_1", axis=1)],
        "broken",
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, ["N", 3, 4]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, ["N", 5, 6]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


# -- light models ---------------------------------------------------------------------------------


def test_light_model_as_shipped(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "check", _light("squeezenet"))
    assert code == EXIT_OK, out + err
    assert "inputs:\n  data_0       : Tensor[(1, 3, 224, 224), float32]" in out
    assert "softmaxout_1 : Tensor[(1, 1000, 1, 1), float32]" in out
    assert "status: ok" in out


def test_light_model_batch_made_symbolic_keeps_n(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", _light("densenet121"), "--dim", "N")
    assert code == EXIT_OK
    assert "--dim N: not a dim_param of the model; dimension 0 of input 'data_0'" in out
    assert "Tensor[(N, 1000, 1, 1), float32]" in out
    assert "status: ok" in out


def test_light_model_hard_coded_batch_gives_the_guard(capsys: pytest.CaptureFixture[str]) -> None:
    path = _light("resnet50")
    code, out, _ = run(capsys, "check", path, "--dim", "N")
    assert code == EXIT_OK  # guarded is well typed
    assert "status: guarded" in out
    assert f"{path}: node 'n173' (Reshape) needs `N == 1`" in out
    assert "gpu_0/data_0    : Tensor[(N, 3, 224, 224), float32]" in out
    # --strict: a guard is not enough
    code, out, _ = run(capsys, "check", path, "--dim", "N", "--strict")
    assert code == EXIT_TYPE_ERROR
    assert "N == 1" in out


def test_light_model_batch_value(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = run_json(capsys, "check", _light("squeezenet"), "--dim", "N=4")
    assert code == EXIT_OK
    assert doc["status"] == "ok"
    assert doc["inputs"] == {"data_0": "Tensor[(4, 3, 224, 224), float32]"}
    assert doc["outputs"] == {"softmaxout_1": "Tensor[(4, 1000, 1, 1), float32]"}
    assert doc["dims"] == [{"name": "N", "value": 4, "batch_of": ["data_0"]}]
    # resnet50 at batch 2 violates its hard-coded Reshape: an error, exit 1
    code, doc = run_json(capsys, "check", _light("resnet50"), "--dim", "N=2")
    assert code == EXIT_TYPE_ERROR
    assert doc["status"] == "error"
    assert [e["code"] for e in doc["errors"]] == ["reshape-size"]
    assert "n173" in json.dumps(doc["errors"])


# -- dim_params -----------------------------------------------------------------------------------


def test_dim_param_value_and_symbol(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _save(tmp_path, _mlp())
    code, doc = run_json(capsys, "check", path)
    assert (code, doc["outputs"]) == (EXIT_OK, {"y": "Tensor[(N, 10), float32]"})
    code, doc = run_json(capsys, "check", path, "--dim", "N=8")
    assert (code, doc["outputs"]) == (EXIT_OK, {"y": "Tensor[(8, 10), float32]"})
    assert doc["inputs"] == {"x": "Tensor[(8, 64), float32]", "w": "Tensor[(64, 10), float32]"}
    assert doc["dims"] == [{"name": "N", "value": 8, "batch_of": []}]
    code, out, _ = run(capsys, "check", path, "--dim", "N")
    assert code == EXIT_OK
    assert "--dim N: the dim_param N" in out
    assert "y : Tensor[(N, 10), float32]" in out


def test_batch_name_skips_inputs_with_a_dim_param(tmp_path: Path) -> None:
    m = _mlp(batch=1)
    dims, bindings = bind_dims(m, ["B=3"])
    assert dims == {"B": 3}
    # x's dimension 0 became B; w (an input without initializer) too: both are graph inputs
    assert bindings[0].batch_of == ("x", "w")
    m2 = _mlp()
    _, bindings = bind_dims(m2, ["B"])  # x has N already; only w is changed
    assert bindings[0].batch_of == ("w",)


def test_parse_dim_option() -> None:
    assert parse_dim_option("N=8") == ("N", 8)
    assert parse_dim_option("batch") == ("batch", None)


# -- broken and unsupported models ----------------------------------------------------------------


def test_broken_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _save(tmp_path, _broken_concat())
    code, out, _ = run(capsys, "check", path)
    assert code == EXIT_TYPE_ERROR
    assert "status: error" in out
    assert f"{path}: node 'cat_1' (Concat)" in out
    assert "4 vs 6  [shape-mismatch]" in out
    assert f"{path}: graph input 'a': note: `a` is annotated `Tensor[(N, 3, 4), float32]`" in out
    assert f"{path}: graph input 'b': note:" in out
    code, doc = run_json(capsys, "check", path)
    assert code == EXIT_TYPE_ERROR
    assert doc["status"] == "error"
    assert len(doc["errors"]) == 1 and doc["errors"][0]["code"] == "shape-mismatch"
    assert "cat_1" in doc["errors"][0]["span"]["what"]


def test_unsupported_op(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    g = helper.make_graph(
        [helper.make_node("Frobnicate", ["x"], ["y"], name="f1", domain="com.example")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    m = helper.make_model(
        g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)]
    )
    code, doc = run_json(capsys, "check", _save(tmp_path, m))
    assert code == EXIT_TYPE_ERROR
    assert [e["code"] for e in doc["errors"]] == ["unsupported-op"]
    assert "com.example.Frobnicate" in doc["errors"][0]["message"]


# -- bad usage ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--dim", "3x"], "NAME must be an identifier"),
        (["--dim", "N=-1"], "VALUE must be a non-negative integer"),
        (["--dim", "N=a"], "VALUE must be a non-negative integer"),
        (["--dim", "A", "--dim", "B"], "only one name may stand for the batch"),
        (["--dim", "N=1", "--dim", "N=2"], "given twice with different values"),
        (["--timeout-ms", "0"], "--timeout-ms must be positive"),
    ],
)
def test_bad_dim_options(capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    code, out, err = run(capsys, "check", _light("squeezenet"), *args)
    assert code == EXIT_USAGE and out == ""
    assert message in err
    code, doc = run_json(capsys, "check", _light("squeezenet"), *args)
    assert code == EXIT_USAGE and doc["error"]["kind"] == "usage" and message in doc["error"]["message"]


def test_batch_name_without_a_fixed_dim0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    path = _save(tmp_path, helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
    code, _, err = run(capsys, "check", path, "--dim", "B")
    assert code == EXIT_USAGE
    assert "no graph input has a fixed dimension 0" in err and "dim_params: N" in err


def test_missing_and_garbage_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "check", str(tmp_path / "nope.onnx"))
    assert code == EXIT_USAGE and "no such file" in err
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07 this is not a protobuf \xff\xff")
    code, _, err = run(capsys, "check", str(bad))
    assert code == EXIT_USAGE and "is not an ONNX model" in err


def test_dim_on_a_python_file_is_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "m.py"
    p.write_text("import symshape as ss\nmodel = ss.Function([], ss.const(1))\n")
    code, _, err = run(capsys, "check", str(p), "--dim", "N=2")
    assert code == EXIT_USAGE and "--dim applies to ONNX models" in err


# -- as users run it -----------------------------------------------------------------------------


def _subprocess(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=SRC)
    return subprocess.run(
        [sys.executable, "-m", "symshape", *args],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )


def test_subprocess_text_and_json(tmp_path: Path) -> None:
    r = _subprocess("check", _light("resnet50"), "--dim", "N")
    assert r.returncode == EXIT_OK, r.stderr
    assert "needs `N == 1`" in r.stdout
    path = _save(tmp_path, _broken_concat())
    r = _subprocess("check", path, "--json")
    assert r.returncode == EXIT_TYPE_ERROR and r.stderr == ""
    doc = json.loads(r.stdout)
    assert doc["status"] == "error" and doc["file"] == path
    keys = {"version", "file", "status", "dims", "inputs", "outputs", "guards", "warnings", "errors"}
    assert set(doc) == keys


def test_subprocess_help_lists_dim() -> None:
    r = _subprocess("check", "--help")
    assert r.returncode == 0 and "--dim NAME[=VALUE]" in r.stdout


def test_readme_onnx_cli_example_is_real(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    start = readme.index("$ symshape check light_resnet50.onnx --dim N\n")
    block = readme[start : readme.index("```", start)]
    command, _, expected = block.partition("\n")
    monkeypatch.chdir(LIGHT)
    code, out, _ = run(capsys, *command.split()[2:])
    assert code == EXIT_OK
    assert out == expected, "update the ONNX example in README.md"


def test_exit_codes_agree_with_the_cli() -> None:
    import symshape.cli as cli
    import symshape.onnx.cli as onnx_cli

    assert (onnx_cli.EXIT_OK, onnx_cli.EXIT_TYPE_ERROR) == (cli.EXIT_OK, cli.EXIT_TYPE_ERROR)
