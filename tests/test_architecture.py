"""The layers of ``src/symshape`` are one-way, as the README's architecture diagram says.

The diagram (the block between ``<!-- layers -->`` markers in README.md) lists the layers top to
bottom, each with the files and folders of ``src/symshape`` it holds. Every ``import`` of every
module is read with ``ast`` — at module level, inside functions and under ``if TYPE_CHECKING:`` —
and checked:

* every module is in exactly one layer (the most specific entry wins), and every entry holds a
  module, so the diagram stays true as files move;
* a module imports only from its own layer and the layers below it;
* the modules import each other without a cycle (an import under ``TYPE_CHECKING`` never runs: it
  must respect the layers, but it may point back within a layer, as annotations do);
* the layers below the solver import neither Z3 nor networkx.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "symshape"
README = ROOT / "README.md"

# what the restructuring (issue 12) has not reached yet: each entry must still be true (so a fixed
# one is removed here), and nothing else may break the rules
KNOWN: set[str] = set()

# third-party packages the solver (and what sits above it) may use, and the layers that may not
HEAVY = ("z3", "networkx")
LIGHT_LAYERS = ("base", "terms", "diagnostics", "relations")


@dataclass(frozen=True)
class Import:
    target: str  # a symshape module, or a third-party top-level package
    line: int
    runtime: bool  # False under ``if TYPE_CHECKING:``


def read_layers() -> list[tuple[str, list[str]]]:
    """The diagram: ``(layer, entries)`` from the top layer down."""
    text = README.read_text(encoding="utf-8")
    m = re.search(r"<!-- layers -->\s*```text\n(.*?)```\s*<!-- /layers -->", text, re.S)
    assert m is not None, "README.md has no layer diagram between <!-- layers --> markers"
    out: list[tuple[str, list[str]]] = []
    for line in m.group(1).splitlines():
        parts = line.split()
        if not parts or set(line.strip()) <= set("|v^ "):
            continue  # blank, or an arrow line
        out.append((parts[0], parts[1:]))
    return out


def module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def entry_matches(entry: str, path: Path) -> int:
    """How specific a match ``entry`` (``ir/``, ``ops.py``) is for ``path``: 0 for none."""
    rel = path.relative_to(SRC).as_posix()
    if entry.endswith("/"):
        return len(entry) if rel.startswith(entry) else 0
    return len(entry) + 1000 if rel == entry else 0


def layer_of(path: Path, layers: list[tuple[str, list[str]]]) -> str:
    best: tuple[int, str] = (0, "")
    for name, entries in layers:
        for e in entries:
            k = entry_matches(e, path)
            if k > best[0]:
                best = (k, name)
    assert best[0], f"{path.relative_to(SRC)} is in no layer of the README's diagram"
    return best[1]


def _type_checking_blocks(tree: ast.Module) -> set[int]:
    """Line numbers of the statements under ``if TYPE_CHECKING:``."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and (
            (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
            or (isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING")
        ):
            for stmt in node.body:
                for sub in ast.walk(stmt):
                    if hasattr(sub, "lineno"):
                        lines.add(sub.lineno)
    return lines


def imports_of(name: str, path: Path, known: set[str]) -> Iterator[Import]:
    """Every import in ``path`` (module ``name``), wherever it stands."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    static = _type_checking_blocks(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]

    def resolve(mod: str) -> str:
        if mod.split(".")[0] != "symshape":
            return mod.split(".")[0]
        while mod not in known and "." in mod:
            mod = mod.rpartition(".")[0]
        return mod

    for node in ast.walk(tree):
        runtime = getattr(node, "lineno", 0) not in static
        if isinstance(node, ast.Import):
            for a in node.names:
                yield Import(resolve(a.name), node.lineno, runtime)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            for a in node.names:
                sub = f"{mod}.{a.name}"
                # ``from symshape import ops`` imports the module symshape.ops
                yield Import(resolve(sub) if sub in known else resolve(mod), node.lineno, runtime)


def graph() -> tuple[dict[str, str], dict[str, list[Import]]]:
    layers = read_layers()
    mods = modules()
    known = set(mods)
    layer = {name: layer_of(p, layers) for name, p in mods.items()}
    return layer, {name: list(imports_of(name, p, known)) for name, p in mods.items()}


def test_the_diagram_covers_every_module_and_every_entry_holds_one() -> None:
    layers = read_layers()
    names = [n for n, _ in layers]
    assert len(set(names)) == len(names), f"a layer is listed twice: {names}"
    mods = modules()
    for name, entries in layers:
        for e in entries:
            assert any(entry_matches(e, p) for p in mods.values()), f"{name}: {e} holds no module"
    for p in mods.values():
        layer_of(p, layers)  # asserts


def test_imports_go_down_the_layers() -> None:
    layers = read_layers()
    rank = {name: len(layers) - i for i, (name, _) in enumerate(layers)}
    layer, imports = graph()
    bad = []
    for mod, imps in imports.items():
        for imp in imps:
            if imp.target in layer and rank[layer[imp.target]] > rank[layer[mod]]:
                bad.append(
                    f"{mod}:{imp.line} ({layer[mod]}) imports {imp.target} ({layer[imp.target]})"
                )
    assert not bad, "upward imports:\n" + "\n".join(bad)


def test_no_import_cycle() -> None:
    layer, imports = graph()
    g = nx.DiGraph()
    g.add_nodes_from(layer)
    for mod, imps in imports.items():
        for imp in imps:
            if imp.runtime and imp.target in layer and imp.target != mod:
                g.add_edge(mod, imp.target)
    cycles = {"cycle: " + " ".join(sorted(c)) for c in nx.strongly_connected_components(g) if len(c) > 1}
    known = {k for k in KNOWN if k.startswith("cycle: ")}
    assert cycles == known, f"import cycles: {sorted(cycles - known)}; gone: {sorted(known - cycles)}"


def test_the_lower_layers_need_neither_z3_nor_networkx() -> None:
    layer, imports = graph()
    bad = {
        f"{mod} imports {imp.target}"
        for mod, imps in imports.items()
        for imp in imps
        if layer[mod] in LIGHT_LAYERS and imp.target in HEAVY
    }
    known = {k for k in KNOWN if not k.startswith("cycle: ")}
    assert bad == known, f"new: {sorted(bad - known)}; gone: {sorted(known - bad)}"


@pytest.mark.parametrize("snippet", ["from . import x", "from .a import b", "import symshape.ir.expr"])
def test_imports_are_resolved_relative_to_the_package(snippet: str, tmp_path: Path) -> None:
    # the reader itself: relative imports resolve inside the package, dotted ones to the module
    pkg = SRC / "ir" / "__init__.py"
    path = tmp_path / "__init__.py"
    path.write_text(snippet + "\n")
    got = [
        i.target
        for i in imports_of("symshape.ir", path, {"symshape", "symshape.ir", "symshape.ir.expr"})
    ]
    assert pkg.exists()
    assert got == {
        "from . import x": ["symshape.ir"],
        "from .a import b": ["symshape.ir"],
        "import symshape.ir.expr": ["symshape.ir.expr"],
    }[snippet]
