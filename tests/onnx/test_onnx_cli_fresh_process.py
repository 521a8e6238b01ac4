"""``symshape check model.onnx`` in a fresh process: what its start and exit skip, and that the
output stays that of :func:`symshape.cli.main` called in-process.

Run as a script (``main()`` reading ``sys.argv``), an ONNX check registers ``gc.freeze`` at exit,
so that the interpreter's final collections do not traverse every object of the process; the output
(stdout, stderr, exit code) must be byte for byte that of ``main(argv)``, which registers nothing,
in a fresh process too (and in a process that inferred before: the names of unknown types are
numbered per output, ``?t1``, not by the process-wide counter behind the holes' ids).
``import symshape.onnx`` pauses the collector during its imports and leaves it as it found it.
"""

from __future__ import annotations

import atexit
import gc
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from symshape.cli import main

LIGHT = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
SRC = str(Path(__file__).resolve().parents[2] / "src")


def _model(tmp_path: Path, name: str, nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto]) -> str:
    g = helper.make_graph(nodes, name, inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    path = tmp_path / f"{name}.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return str(path)


def _mlp(tmp_path: Path) -> str:
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"), helper.make_node("Relu", ["h"], ["y"])]
    inputs = [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 64]),
        helper.make_tensor_value_info("w", TensorProto.FLOAT, [64, 10]),
    ]
    return _model(tmp_path, "mlp", nodes, inputs)


def _broken(tmp_path: Path) -> str:
    nodes = [helper.make_node("Concat", ["a", "b"], ["y"], name="cat_1", axis=1)]
    inputs = [
        helper.make_tensor_value_info("a", TensorProto.FLOAT, ["N", 3, 4]),
        helper.make_tensor_value_info("b", TensorProto.FLOAT, ["N", 5, 6]),
    ]
    return _model(tmp_path, "broken", nodes, inputs)


def _light(name: str) -> Callable[[Path], str]:
    return lambda _: os.path.join(LIGHT, f"light_{name}.onnx")


#: (model, options): well typed, guarded by --dim, a type error (text and JSON), a usage error
#: (stderr, exit code 2). (Not resnet50 at --dim N=4: its explanation search has a wall-clock
#: budget, 5 s, which a loaded machine can exhaust in one process and not in the other.)
CASES: list[tuple[str, Callable[[Path], str], tuple[str, ...]]] = [
    ("densenet121", _light("densenet121"), ()),
    ("resnet50-dim", _light("resnet50"), ("--dim", "N")),
    ("mlp-dim-value", _mlp, ("--dim", "N=8", "--strict")),
    ("broken", _broken, ()),
    ("broken-json", _broken, ("--json",)),
    ("bad-dim", _mlp, ("--dim", "1x")),
]


def _run(*argv: str) -> tuple[int, str, str]:
    r = subprocess.run(
        [sys.executable, *argv],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=SRC),
        stdin=subprocess.DEVNULL,
        timeout=300,
    )
    return r.returncode, r.stdout, r.stderr


@pytest.mark.parametrize(("case", "make", "options"), CASES, ids=[c[0] for c in CASES])
def test_script_output_is_main_output(
    case: str, make: Callable[[Path], str], options: tuple[str, ...], tmp_path: Path
) -> None:
    args = ["check", make(tmp_path), *options]
    script = _run("-m", "symshape", *args)
    called = _run("-c", f"import sys; from symshape.cli import main; sys.exit(main({args!r}))")
    assert script == called
    assert script[1] or script[2]


@pytest.mark.parametrize(
    ("argv", "script", "registered"),
    [
        (["symshape", "check", "MLP"], True, True),  # the console script: main() reads sys.argv
        (["symshape", "check", "MLP"], False, False),  # main(argv): a caller's process
        (["symshape", "check", "PY"], True, False),  # a Python file: the user's code runs
    ],
)
def test_freeze_at_exit_only_for_a_script_checking_onnx(
    argv: list[str],
    script: bool,
    registered: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    py = tmp_path / "model.py"
    py.write_text("import symshape as ss\nmodel = ss.var('x', ss.Tensor((2, 3), 'float32'))\n")
    argv = [{"MLP": _mlp(tmp_path), "PY": str(py)}.get(a, a) for a in argv]
    calls: list[tuple[str, object]] = []
    monkeypatch.setattr(atexit, "register", lambda f: calls.append(("register", f)))
    monkeypatch.setattr(atexit, "unregister", lambda f: calls.append(("unregister", f)))
    monkeypatch.setattr(sys, "argv", argv)
    assert (main() if script else main(argv[1:])) == 0
    capsys.readouterr()
    assert calls == ([("unregister", gc.freeze), ("register", gc.freeze)] if registered else [])


def test_import_leaves_the_collector_and_skips_the_python_file_modules() -> None:
    code = (
        "import gc, sys\n"
        "gc.set_threshold(500, 7, 9)\n"
        "import symshape.cli, symshape.onnx.cli, symshape.onnx\n"
        "print(gc.isenabled(), gc.get_threshold(), gc.get_freeze_count(),\n"
        "      sorted(m for m in ('runpy', 'sysconfig') if m in sys.modules))\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=SRC),
        stdin=subprocess.DEVNULL,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[0] == "True (500, 7, 9) 0 []"
