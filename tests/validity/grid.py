"""The validity grid: at every size of a model's grid, does symshape's verdict equal what eager
torch does — and what does ``torch.export`` with dynamic dims say there?

``python -m tests.validity.grid [NAME ...]`` prints, per model, the grid size, symshape's false
rejects and false accepts, ``torch.export``'s, and ``valid_when()``; the test module asserts
symshape's are zero.

* **eager** decides: a point is valid when the model runs there (``torch.no_grad()``, eval mode),
  invalid when it raises.
* **symshape**: ``sst.infer(graph_of(case, model), types)`` once (the module, traced by torch.fx,
  or its ``torch.export`` program for ``trace="export"`` cases), then ``res.valid_at(point)``
  per point.
* **torch.export**: exported once with every dynamic dim ``Dim.DYNAMIC`` at
  :func:`example_point` (valid, sizes distinct and not 1, as large as the grid has); a point is
  *rejected* when the exported program refuses its inputs (a violated range constraint or guard:
  torch's input checks raise before computing) and *accepted* otherwise (it runs, or it fails
  while computing). An export that fails rejects every point.
"""

from __future__ import annotations

import re
import sys
import warnings
from dataclasses import dataclass, field
from typing import Any

import torch

import symshape as ss

from .models import GRID_CASES, GridCase

__all__ = [
    "Outcome", "decide", "eager_valid", "example_point", "export_verdicts", "exported", "graph_of", "main",
]  # fmt: skip


def eager_valid(model: torch.nn.Module, example: dict[str, torch.Tensor]) -> bool:
    """The model runs on ``example`` (by forward-argument name)."""
    try:
        with torch.no_grad():
            model(**example)
    except Exception:
        return False
    return True


def example_point(case: GridCase, model: torch.nn.Module) -> dict[str, int]:
    """The size a tracer or exporter is shown: one where eager runs, with sizes that differ from
    each other and from 1 (a traced 1, or two equal sizes, may be specialised or folded into the
    graph), as large as the grid has them — the fairest single example for torch.export and the
    ONNX exporter."""

    def key(p: dict[str, int]) -> tuple[bool, int]:
        v = list(p.values())
        return (len(set(v)) == len(v) and 1 not in v, sum(v))

    runs = [p for p in case.grid if eager_valid(model, case.example(p))]
    return max(runs, key=key) if runs else case.grid[0]


_REFUSED = re.compile(r"Expected input|[Gg]uard|constraint|to be (?:>=|<=|==|equal)|not in range")


def exported(case: GridCase, model: torch.nn.Module) -> Any:
    """``torch.export`` of the model at :func:`example_point`, every dynamic dim ``Dim.DYNAMIC``."""
    from torch.export import Dim, export

    dynamic = {k: {ax: Dim.DYNAMIC for ax in v} for k, v in case.dynamic.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return export(model, (), case.example(example_point(case, model)), dynamic_shapes=dynamic)


def graph_of(case: GridCase, model: torch.nn.Module) -> Any:
    """What symshape imports for the case: the module (traced by ``torch.fx``) or, for
    ``trace="export"``, its :func:`exported` program."""
    match case.trace:
        case "fx":
            return model
        case "export":
            return exported(case, model)
        case other:
            raise ValueError(f"{case.name}: unknown trace {other!r}")


def export_verdicts(case: GridCase, model: torch.nn.Module, valid: list[bool]) -> list[bool] | None:
    """``torch.export``'s acceptance of each point (None when the model does not export)."""
    if not any(valid):
        return None
    try:
        ep = exported(case, model)
    except Exception:
        return [False] * len(case.grid)
    mod = ep.module()
    out: list[bool] = []
    for p in case.grid:
        try:
            with torch.no_grad():
                mod(**case.example(p))
            out.append(True)
        except Exception as e:
            out.append(not _REFUSED.search(str(e)))
    return out


@dataclass
class Outcome:
    """One model's grid: the eager truth and each tool's verdicts."""

    name: str
    points: list[dict[str, int]]
    eager: list[bool]
    symshape: list[bool]
    export: list[bool] | None = None
    valid_when: str = ""
    status: str = ""
    misses: list[str] = field(default_factory=list)

    def false_rejects(self, verdicts: list[bool] | None) -> int:
        if verdicts is None:
            return sum(self.eager)
        return sum(1 for e, v in zip(self.eager, verdicts) if e and not v)

    def false_accepts(self, verdicts: list[bool] | None) -> int:
        if verdicts is None:
            return 0
        return sum(1 for e, v in zip(self.eager, verdicts) if v and not e)


def decide(case: GridCase, *, with_export: bool = False) -> tuple[Outcome, Any, dict[str, ss.Dim]]:
    """Run the grid: eager at every point, symshape's ``valid_at`` at every point (and
    ``torch.export``'s verdicts when asked). Returns the outcome, the inference result and the
    symbols by name."""
    import symshape.torch as sst

    torch.manual_seed(0)
    model = case.build().eval()
    syms = dict(zip(case.symbols.split(), ss.dims(case.symbols)))
    res = sst.infer(graph_of(case, model), case.types(syms))
    eager = [eager_valid(model, case.example(p)) for p in case.grid]
    verdicts: list[bool] = []
    misses: list[str] = []
    for p, truth in zip(case.grid, eager):
        v = bool(res.valid_at({syms[k]: n for k, n in p.items()}))
        verdicts.append(v)
        if v != truth:
            misses.append(
                f"{p}: eager {'runs' if truth else 'fails'}, symshape says {'valid' if v else 'invalid'}"
            )
    out = Outcome(
        case.name,
        list(case.grid),
        eager,
        verdicts,
        valid_when=str(res.valid_when()),
        status=res.status,
        misses=misses,
    )
    if with_export:
        out.export = export_verdicts(case, model, eager)
    return out, res, syms


def main(argv: list[str] | None = None) -> int:
    names = (argv if argv is not None else sys.argv[1:]) or list(GRID_CASES)
    print(f"{'model':<16}{'points':>7}{'valid':>7}  {'symshape FR/FA':>15}  {'export FR/FA':>13}  valid_when")
    bad = 0
    for name in names:
        o, _, _ = decide(GRID_CASES[name], with_export=True)
        ours = f"{o.false_rejects(o.symshape)}/{o.false_accepts(o.symshape)}"
        theirs = (
            "no export" if o.export is None else f"{o.false_rejects(o.export)}/{o.false_accepts(o.export)}"
        )
        print(f"{name:<16}{len(o.points):>7}{sum(o.eager):>7}  {ours:>15}  {theirs:>13}  {o.valid_when}")
        for m in o.misses[:5]:
            print("    " + m)
        bad += len(o.misses)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
