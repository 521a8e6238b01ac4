"""In IPython (a notebook), spans name the cell (``In[2]:1:5``) and still quote its line, and a
``SymshapeError``'s traceback shows the user's frames, not symshape's (issue 16). Each test runs
an in-process IPython shell in a subprocess, so this test process never gets a shell."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("IPython")

ROOT = Path(__file__).resolve().parents[1]


def run_cells(*cells: str) -> str:
    script = textwrap.dedent(
        """
        from IPython.core.interactiveshell import InteractiveShell
        sh = InteractiveShell.instance(colors="nocolor")
        for cell in CELLS:
            sh.run_cell(cell, store_history=True)
        """
    ).replace("CELLS", repr(list(cells)))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    r = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300, cwd=ROOT
    )
    assert r.returncode == 0, r.stderr
    return re.sub(r"\x1b\[[0-9;]*m", "", r.stdout + r.stderr)


def test_spans_name_the_cell_and_quote_its_line() -> None:
    out = run_cells(
        "import symshape as ss\nn = ss.dim('n')",
        "x = ss.var('x', ss.Tensor((n, 3), 'float32'))\nf = ss.Function([x], x + ss.const([1.0, 2.0]))\n"
        "print(x.span)\nprint(ss.infer(f).report())",
    )
    assert "In[2]:1:5\n" in out
    assert "In[2]:2:22: error: cannot broadcast" in out
    assert "    f = ss.Function([x], x + ss.const([1.0, 2.0]))" in out  # the excerpt
    assert "ipython-input" not in out and "ipykernel" not in out


def test_symshape_errors_hide_internal_frames() -> None:
    out = run_cells(
        "import symshape as ss\nn = ss.dim('n')",
        "def make(k):\n    return ss.Tensor((n, k), 'float32')",
        "make(-1)",
    )
    assert "SymshapeError: dimension -1 is negative  [negative-dim]" in out
    assert "In[3]" in out and "In[2], line 2, in make" in out
    assert "encoding/types.py" not in out and "encoding/dims.py" not in out
    assert "site-packages" not in out and "<string>" not in out


def test_code_that_is_not_a_cell_keeps_its_file() -> None:
    out = run_cells(
        "import symshape as ss",
        "exec(compile(\"x = ss.var('x')\\nprint(x.span)\", '/tmp/not_a_cell.py', 'exec'))",
    )
    assert "/tmp/not_a_cell.py:1:5" in out
