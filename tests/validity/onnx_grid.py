"""The validity grid for ONNX exports: the same models exported with dynamic axes, onnxruntime
deciding each point, symshape's ``symshape.onnx.infer`` + ``valid_at`` judged against it.

An export is its own program: the TorchScript exporter may fold what eager torch computes, so the
truth for the ONNX file is what onnxruntime does with it, not what eager torch does with the
module (the two usually agree; :func:`decide_onnx` reports both).

``python -m tests.validity.onnx_grid [NAME ...]`` prints, per model, the grid size, the points
onnxruntime runs, symshape's false rejects / false accepts and ``valid_when()``.
"""

from __future__ import annotations

import os
import sys
import tempfile
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

import symshape as ss

from .models import GRID_CASES, GridCase

__all__ = ["OnnxOutcome", "decide_onnx", "export_case", "ort_valid", "main"]


def export_case(case: GridCase, model: torch.nn.Module, directory: str) -> str:
    """Export ``model`` with the case's dynamic axes named by its symbols; the file's path.

    The exporter traces at :func:`~tests.validity.grid.example_point` (a size where no folding can
    confuse two sizes or a size with 1)."""
    from .grid import example_point

    base = example_point(case, model)
    example = case.example(base)
    names = list(example)
    dynamic = {k: {ax: sym for ax, sym in v.items()} for k, v in case.dynamic.items()}
    path = os.path.join(directory, f"{case.name}.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model,
            tuple(example[n] for n in names),
            path,
            dynamo=False,
            input_names=names,
            output_names=["output"],
            dynamic_axes=dynamic,
            opset_version=17,
        )
    return path


def _session(path: str) -> Any:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 4
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def ort_valid(sess: Any, example: dict[str, torch.Tensor]) -> bool:
    """onnxruntime runs the model on ``example``."""
    feeds = {k: v.numpy() for k, v in example.items()}
    try:
        out = sess.run(None, feeds)
    except Exception:
        return False
    return all(np.asarray(o).size >= 0 for o in out)


@dataclass
class OnnxOutcome:
    """One exported model's grid: onnxruntime's truth, eager torch's, and symshape's verdicts."""

    name: str
    points: list[dict[str, int]]
    ort: list[bool]
    eager: list[bool]
    symshape: list[bool]
    valid_when: str = ""
    status: str = ""
    misses: list[str] = field(default_factory=list)

    def false_rejects(self) -> int:
        return sum(1 for t, v in zip(self.ort, self.symshape) if t and not v)

    def false_accepts(self) -> int:
        return sum(1 for t, v in zip(self.ort, self.symshape) if v and not t)


def decide_onnx(case: GridCase, directory: str | None = None) -> tuple[OnnxOutcome, Any]:
    """Export the case's model, run onnxruntime and eager torch at every grid point, and compare
    symshape's ``valid_at`` on the ONNX file with onnxruntime."""
    import symshape.onnx as sso

    from .grid import eager_valid

    torch.manual_seed(0)
    model = case.build().eval()
    with tempfile.TemporaryDirectory() as tmp:
        path = export_case(case, model, directory or tmp)
        sess = _session(path)
        syms = dict(zip(case.symbols.split(), ss.dims(case.symbols)))
        res = sso.infer(path, dims=syms)
        truth = [ort_valid(sess, case.example(p)) for p in case.grid]
    eager = [eager_valid(model, case.example(p)) for p in case.grid]
    verdicts: list[bool] = []
    misses: list[str] = []
    for p, t in zip(case.grid, truth):
        v = bool(res.valid_at({syms[k]: n for k, n in p.items()}))
        verdicts.append(v)
        if v != t:
            said = "valid" if v else "invalid"
            misses.append(f"{p}: onnxruntime {'runs' if t else 'fails'}, symshape says {said}")
    out = OnnxOutcome(
        case.name,
        list(case.grid),
        truth,
        eager,
        verdicts,
        valid_when=str(res.valid_when()),
        status=str(res.status),
        misses=misses,
    )
    return out, res


def main(argv: list[str] | None = None) -> int:
    names = (argv if argv is not None else sys.argv[1:]) or list(GRID_CASES)
    print(f"{'model':<16}{'points':>7}{'ort ok':>7}{'eager≠ort':>10}  {'symshape FR/FA':>15}  valid_when")
    bad = 0
    for name in names:
        try:
            o, _ = decide_onnx(GRID_CASES[name])
        except Exception as e:  # the exporter cannot export it (transformers' models)
            first = str(e).strip().split("\n")[0][:80]
            print(f"{name:<16}  no ONNX export: {type(e).__name__}: {first}")
            continue
        differ = sum(1 for a, b in zip(o.ort, o.eager) if a != b)
        ours = f"{o.false_rejects()}/{o.false_accepts()}"
        print(f"{name:<16}{len(o.points):>7}{sum(o.ort):>7}{differ:>10}  {ours:>15}  {o.valid_when}")
        for m in o.misses[:5]:
            print("    " + m)
        bad += len(o.misses)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
