"""Every tutorial notebook runs top to bottom and shows what it is about.

Each notebook is executed with nbclient (kernel ``python3`` from ipykernel) in a temporary copy, so
the saved outputs in ``notebooks/`` are not touched; a cell that raises fails the test. The saved
notebooks must have been executed (outputs are part of the tutorial), and the fresh outputs must
contain the key results (type strings, error codes, a drawn graph).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"

# strings that must appear in the outputs of each notebook
EXPECTED: dict[str, list[str]] = {
    "01_tour": [
        "12*n",
        "Tensor[(n, s, 64), float32]",
        "Tensor[(n, 4, s, s), float32]",  # attention scores of the transformer block
        "fn<n: dim, s: dim>(Tensor[(n, s, 64), float32]",
        "s == 1 or s == 128",  # the guard
        "[unproven-guard]",  # strict mode
        "data-status='ok'",  # the HTML table of the result
    ],
    "02_errors": [
        "[not-broadcastable]",
        "64 vs 32",
        "d % 4 == 0",  # what the unsat core's second call site (the reshape) requires
        "data-code='not-broadcastable'",
        "unproven-guard",
        "data-role='error'",
    ],
    "03_custom_operator": [
        "Tensor[(b, 196, 768), float32]",
        "h % 16 == 0",
        "Tensor[(b, (h//16)*(w//16), 768), float32]",
        "patchify: patch size 16 must divide the width 200  [shape-mismatch]",
        "[rank-mismatch]",
        "unresolved",
    ],
}


def _texts(nb: Any) -> tuple[str, set[str]]:
    """All output text of a notebook, and the MIME types present."""
    parts: list[str] = []
    mimes: set[str] = set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):
            if out.output_type == "stream":
                parts.append(out.text)
            elif out.output_type in ("execute_result", "display_data"):
                mimes.update(out.data)
                for mime in ("text/plain", "text/html"):
                    if mime in out.data:
                        parts.append(out.data[mime])
            elif out.output_type == "error":
                parts.append(f"ERROR {out.ename}: {out.evalue}")
    return "\n".join(parts), mimes


def test_every_notebook_is_tested() -> None:
    found = sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb"))
    assert found == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_saved_notebook_is_executed(name: str) -> None:
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.execution_count is not None for c in code), "save the notebook executed"
    assert not any(o.output_type == "error" for c in code for o in c.outputs)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_notebook_runs_and_shows_its_results(name: str, tmp_path: Path) -> None:
    src = tmp_path / f"{name}.ipynb"
    shutil.copy(NOTEBOOKS / f"{name}.ipynb", src)
    nb = nbformat.read(src, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    client = nbclient.NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        allow_errors=False,
        resources={"metadata": {"path": str(tmp_path)}},
    )
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as e:  # pragma: no cover - the failure message
        pytest.fail(f"{name}.ipynb: a cell raised:\n{e}")
    text, mimes = _texts(nb)
    assert "ERROR " not in text
    missing = [s for s in EXPECTED[name] if s not in text]
    assert not missing, f"{name}.ipynb outputs lack {missing}"
    assert "text/html" in mimes
    if name == "02_errors":
        assert "image/png" in mimes, "the drawn dependency graph is missing"
