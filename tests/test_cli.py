"""The command line, run as users run it: ``python -m symshape ...`` in a subprocess."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import symshape as ss

GOOD = """
import symshape as ss

n = ss.dim("n")
x = ss.var("x", ss.Tensor((n, 3, 4), "float32"))
y = ss.var("y", ss.Tensor((1, 4), "float32"))
model = ss.Function([x, y], ss.ops.flatten(ss.ops.add(x, y)))
"""

BROKEN = """
import symshape as ss

n = ss.dim("n")
x = ss.var("x", ss.Tensor((n, 3, 4), "float32"))
y = ss.var("y", ss.Tensor((n, 5), "float32"))
model = ss.Function([x, y], ss.ops.add(ss.ops.flatten(x), y))
"""

GUARDED = """
import symshape as ss

n = ss.dim("n")
x = ss.var("x", ss.Tensor((n,), "float32"))
y = ss.var("y", ss.Tensor((5,), "float32"))
model = ss.Function([x, y], ss.ops.add(x, y))
"""


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "symshape", *args],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
    )


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


@pytest.fixture(scope="module")
def demo() -> subprocess.CompletedProcess[str]:
    return run("demo")


@pytest.fixture(scope="module")
def demo_json() -> dict[str, Any]:
    r = run("demo", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert isinstance(doc, dict)
    return doc


# --- --version and usage ---------------------------------------------------------------------


def test_version() -> None:
    r = run("--version")
    assert r.returncode == 0
    assert r.stdout.strip() == f"symshape {ss.__version__}"


def test_unknown_subcommand_exits_2() -> None:
    r = run("frobnicate")
    assert r.returncode == 2
    assert "invalid choice" in r.stderr
    assert r.stdout == ""


def test_no_subcommand_exits_2() -> None:
    r = run()
    assert r.returncode == 2
    assert "symshape: error:" in r.stderr


def test_help_exits_0() -> None:
    r = run("--help")
    assert r.returncode == 0
    assert "demo" in r.stdout and "check" in r.stdout


# --- demo ------------------------------------------------------------------------------------


def test_demo_exits_0(demo: subprocess.CompletedProcess[str]) -> None:
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "every example ended as intended" in demo.stdout


def test_demo_shows_resolved_types(demo: subprocess.CompletedProcess[str]) -> None:
    out = demo.stdout
    assert "scores : Tensor[(n, s, s), float32]" in out  # attention scores
    assert "flat   : Tensor[(n, 64*s), float32]" in out  # canonical 64*s, not s*64
    assert "Tensor[(5, 12), float32]" in out  # flatten of the guarded broadcast
    assert "Tensor[(n, 12), float32]" in out  # flatten in the broken model
    assert "?t" not in out  # no holes left in any shown type


def test_demo_shows_guard(demo: subprocess.CompletedProcess[str]) -> None:
    assert "n == 1 or n == 5" in demo.stdout


def test_demo_shows_explained_error(demo: subprocess.CompletedProcess[str]) -> None:
    out = demo.stdout
    # the error points at the add call of the example's source, quotes it, and explains it
    assert "<demo:broken_model>:7:7: error: cannot broadcast" in out
    assert "[not-broadcastable]" in out
    assert "      out = ss.ops.add(fx, y)" in out
    assert "<demo:broken_model>:6:6: note: flatten gives `Tensor[(n, 12), float32]`" in out


def test_demo_statuses(demo: subprocess.CompletedProcess[str]) -> None:
    statuses = [ln.split(": ", 1)[1] for ln in demo.stdout.splitlines() if ln.startswith("status: ")]
    assert statuses == ["ok", "guarded", "error"]


# --- demo --json -----------------------------------------------------------------------------


def _check_span(span: Any) -> None:
    assert span is None or (
        set(span) == {"file", "line", "column"}
        and isinstance(span["file"], str)
        and isinstance(span["line"], int)
        and isinstance(span["column"], int)
    )


def test_demo_json_schema(demo_json: dict[str, Any]) -> None:
    assert demo_json["version"] == ss.__version__
    examples = demo_json["examples"]
    assert isinstance(examples, list) and len(examples) == 3
    for ex in examples:
        assert {"name", "status", "types", "guards", "errors"} <= set(ex)
        assert isinstance(ex["name"], str)
        assert ex["status"] in ("ok", "guarded", "error", "unresolved", "inconclusive")
        assert isinstance(ex["types"], dict)
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in ex["types"].items())
        assert isinstance(ex["guards"], list) and all(isinstance(g, str) for g in ex["guards"])
        assert isinstance(ex["errors"], list)
        for d in ex["errors"]:
            assert set(d) == {"code", "severity", "message", "span", "notes"}
            assert d["code"] in ss.ERROR_CODES
            assert d["severity"] in ("error", "warning")
            assert isinstance(d["message"], str) and d["message"]
            _check_span(d["span"])
            assert isinstance(d["notes"], list)
            for note in d["notes"]:
                assert set(note) == {"message", "span"}
                assert isinstance(note["message"], str)
                _check_span(note["span"])


def test_demo_json_content(demo_json: dict[str, Any]) -> None:
    by_name = {ex["name"]: ex for ex in demo_json["examples"]}
    assert list(by_name) == ["attention_block", "broadcast_guard", "broken_model"]
    att, guard, broken = by_name["attention_block"], by_name["broadcast_guard"], by_name["broken_model"]
    assert att["status"] == "ok" and att["guards"] == [] and att["errors"] == []
    assert att["types"]["scores"] == "Tensor[(n, s, s), float32]"
    assert guard["status"] == "guarded" and guard["guards"] == ["n == 1 or n == 5"]
    assert guard["types"]["out"] == "Tensor[(5, 12), float32]"
    assert broken["status"] == "error"
    assert [d["code"] for d in broken["errors"]] == ["not-broadcastable"]
    assert broken["errors"][0]["span"] == {"file": "<demo:broken_model>", "line": 7, "column": 7}
    assert len(broken["errors"][0]["notes"]) == 3
    assert all(ex["as_intended"] for ex in demo_json["examples"])


# --- check -----------------------------------------------------------------------------------


def test_check_good_file(tmp_path: Path) -> None:
    r = run("check", str(write(tmp_path, "good.py", GOOD)))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "status: ok" in r.stdout
    assert "Tensor[(n, 12), float32]" in r.stdout


def test_check_guarded_file_is_ok_unless_strict(tmp_path: Path) -> None:
    p = str(write(tmp_path, "guarded.py", GUARDED))
    r = run("check", p)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "status: guarded" in r.stdout
    assert "needs `n == 1 or n == 5`" in r.stdout
    strict = run("check", "--strict", p)
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert "[unproven-guard]" in strict.stdout


def test_check_broken_file(tmp_path: Path) -> None:
    p = write(tmp_path, "broken.py", BROKEN)
    r = run("check", str(p))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "[not-broadcastable]" in r.stdout
    assert f"{p}:7:" in r.stdout  # the span points into the user's file (the add call)


def test_check_file_importing_a_neighbour(tmp_path: Path) -> None:
    write(tmp_path, "layers.py", GOOD.replace("model =", "block ="))
    main = write(tmp_path, "main.py", "from layers import block as model\nprint('loaded')\n")
    r = run("check", str(main), cwd=Path("/"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("loaded\nmodel: fn<n: dim>(")


def test_check_json(tmp_path: Path) -> None:
    r = run("check", "--json", str(write(tmp_path, "broken.py", BROKEN)))
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert doc["status"] == "error"
    assert [d["code"] for d in doc["errors"]] == ["not-broadcastable"]


def test_check_missing_file(tmp_path: Path) -> None:
    r = run("check", str(tmp_path / "nope.py"))
    assert r.returncode == 2
    assert r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1
    assert "no such file" in r.stderr


def test_check_file_without_model(tmp_path: Path) -> None:
    r = run("check", str(write(tmp_path, "empty.py", "import symshape as ss\nx = 1\n")))
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1
    assert "defines no module-level `model`" in r.stderr


def test_check_model_of_wrong_type(tmp_path: Path) -> None:
    r = run("check", str(write(tmp_path, "wrong.py", "model = 42\n")))
    assert r.returncode == 2
    assert "expected an ss.Function" in r.stderr


def test_check_file_that_raises(tmp_path: Path) -> None:
    r = run("check", str(write(tmp_path, "raises.py", "raise RuntimeError('boom')\n")))
    assert r.returncode == 2
    assert "RuntimeError: boom" in r.stderr


def test_check_without_path_exits_2() -> None:
    assert run("check").returncode == 2


RAISES_AT_LINE_5 = """
import symshape as ss

x = ss.var("x", ss.Tensor((2, 3), "float32"))
y = ss.ops.reshape(x, (3, 2), bogus=1)
model = ss.Function([x], y)
"""


def test_check_file_that_raises_names_its_line(tmp_path: Path) -> None:
    p = write(tmp_path, "raises.py", RAISES_AT_LINE_5)
    r = run("check", str(p))
    assert r.returncode == 2
    [line] = r.stderr.strip().splitlines()
    assert line.startswith(f"symshape: error: {p}:5: "), line  # the user's line, not the CLI's
    assert "cli.py" not in r.stderr and "runpy" not in r.stderr


def test_check_file_whose_neighbour_raises_names_the_neighbour(tmp_path: Path) -> None:
    write(tmp_path, "layers.py", "def block():\n    raise ValueError('bad layer')\n")
    main = write(tmp_path, "main.py", "from layers import block\nmodel = block()\n")
    r = run("check", str(main))
    assert r.returncode == 2
    assert f"{tmp_path / 'layers.py'}:2: ValueError: bad layer" in r.stderr


def test_check_file_with_a_syntax_error_names_its_line(tmp_path: Path) -> None:
    p = write(tmp_path, "syntax.py", "import symshape as ss\nmodel = (\n")
    r = run("check", str(p))
    assert r.returncode == 2
    assert f"{p}:2: SyntaxError" in r.stderr or f"{p}:3: SyntaxError" in r.stderr


MODULE = """
import symshape as ss

n = ss.dim("n")
mod = ss.Module()
x = ss.var("x", ss.Tensor((n, 3), "float32"))
mod["f"] = ss.Function([x], ss.ops.flatten(ss.ops.expand_dims(x, 1)))
y = ss.var("y", ss.Tensor((n, 3), "float32"))
mod["main"] = ss.Function([y], ss.Call(ss.GlobalVar("f"), [y]))
model = mod
"""


def test_check_module_shows_every_global(tmp_path: Path) -> None:
    p = str(write(tmp_path, "mod.py", MODULE))
    r = run("check", p)
    assert r.returncode == 0, r.stdout + r.stderr
    fn = "fn<n: dim>(Tensor[(n, 3), float32]) -> Tensor[(n, 3), float32]"
    assert r.stdout.splitlines()[:3] == [f"@f: {fn}", f"@main: {fn}", "status: ok"]
    doc = json.loads(run("check", "--json", p).stdout)
    assert doc["type"] is None
    assert doc["globals"] == {"f": fn, "main": fn}


@pytest.mark.parametrize(
    "args, where",
    [
        (["check", "--json", "--bogus", "x.py"], None),
        (["frobnicate", "--json"], None),
        (["check", "--json"], None),
        (["check", "--json", "/nonexistent/model.py"], None),
        (["check", "--json", "RAISES"], 5),
    ],
)
def test_json_usage_errors_are_json(tmp_path: Path, args: list[str], where: int | None) -> None:
    p = write(tmp_path, "raises.py", RAISES_AT_LINE_5)
    r = run(*[str(p) if a == "RAISES" else a for a in args])
    assert r.returncode == 2
    assert r.stderr == ""
    doc = json.loads(r.stdout)
    assert doc["version"] == ss.__version__
    err = doc["error"]
    assert set(err) == {"kind", "message", "file", "line"}
    assert err["kind"] == "usage" and isinstance(err["message"], str) and err["message"]
    assert err["line"] == where
    if where is not None:
        assert err["file"] == str(p)


# --- codes and the README ----------------------------------------------------------------------


def test_codes_lists_catalogue() -> None:
    r = run("codes")
    assert r.returncode == 0
    assert [ln.split()[0] for ln in r.stdout.splitlines()] == list(ss.ERROR_CODES)


def test_readme_error_table_is_current() -> None:
    """README.md's error-code table is `symshape codes --markdown`; regenerate it when codes change."""
    from symshape.cli import codes_markdown

    readme = Path(__file__).resolve().parents[1] / "README.md"
    assert codes_markdown() in readme.read_text(encoding="utf-8")


def _readme_blocks(lang: str) -> list[str]:
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    return re.findall(rf"```{lang}\n(.*?)```", text, flags=re.S)


def test_readme_example_output_is_real(tmp_path: Path) -> None:
    """The README's Python example prints exactly the output the README shows."""
    code = _readme_blocks("python")[0]
    shown = next(b for b in _readme_blocks("text") if b.startswith("ok "))
    script = tmp_path / "example.py"
    script.write_text(code)
    r = subprocess.run(
        [sys.executable, "example.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.replace(str(script), "example.py") == shown, "update the example in README.md"


def test_readme_commands() -> None:
    """The README's first two shell blocks are the documented commands for the demo and the tests."""
    demo, tests = _readme_blocks("sh")[:2]
    assert demo.strip().endswith("pip install -e . && symshape demo")
    # torch first, pinned: the CPU build this machine type has on disk (a bare requirement pulls CUDA)
    assert tests.strip().endswith(
        'pip install torch==2.13.0 && pip install -e ".[dev,onnx,torch,models]" && python -m pytest -q'
    )


def test_examples_reusable_in_process() -> None:
    """symshape.examples builds fresh programs that end as each example says."""
    from symshape.examples import all_examples

    for ex in all_examples():
        res = ss.infer(ex.program)
        assert res.status == ex.expect_status, ex.name
        assert tuple(d.code for d in res.diagnostics) == ex.expect_codes, ex.name
        for name, e in ex.bindings:
            assert "?" not in str(res.type_of(e)), (ex.name, name)


PINNED = """\
import symshape as ss
n = ss.dim("n")
x = ss.var("x", ss.Tensor((n, 4), "float32"))
model = ss.Function([x], ss.ops.reshape(x, (4, 4)))
"""


def test_check_json_lists_pinned_symbol_warnings(tmp_path: Path) -> None:
    r = run("check", "--json", str(write(tmp_path, "pinned.py", PINNED)))
    doc = json.loads(r.stdout)
    assert doc["status"] == "guarded" and doc["errors"] == []
    assert [w["code"] for w in doc["warnings"]] == ["pinned-symbol"]
    assert all(w["severity"] == "warning" and "n" in w["message"] for w in doc["warnings"])
