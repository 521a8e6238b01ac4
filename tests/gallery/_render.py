"""Rendering of the error gallery: load each broken program, infer it, render its report.

``python tests/gallery/_render.py`` prints every report (used by the determinism test);
``python tests/gallery/_render.py --update`` rewrites the golden files.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import symshape as ss
from symshape.solver.diagnostics import renumber_ids

GALLERY = Path(__file__).resolve().parent
ROOT = GALLERY.parents[1]


def cases() -> list[str]:
    """The gallery's programs: every ``*.py`` here not starting with ``_`` or ``conftest``."""
    return sorted(p.stem for p in GALLERY.glob("*.py") if not p.name.startswith(("_", "conftest")))


def load(name: str) -> ModuleType:
    path = GALLERY / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"symshape_gallery_{name}", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def infer(name: str) -> Any:
    mod = load(name)
    return ss.infer(mod.model, strict=bool(getattr(mod, "STRICT", False)))


def normalize(text: str) -> str:
    """Paths relative to the repository, hole and unknown ids numbered per report."""
    return renumber_ids(text.replace(str(ROOT) + "/", "")).rstrip("\n") + "\n"


def render(name: str) -> str:
    return normalize(infer(name).report())


def golden_path(name: str) -> Path:
    return GALLERY / f"{name}.txt"


def main(argv: list[str]) -> int:
    update = "--update" in argv
    for name in cases():
        text = render(name)
        if update:
            golden_path(name).write_text(text)
        else:
            sys.stdout.write(f"== {name}\n{text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
