"""Opset sweep (issue 14: "Opsets 7 to the newest ``onnx`` knows"): ``python -m tests.onnx.opset_sweep``.

Each subject -- a light model (``onnx/backend/test/data/light``, batch made the symbol ``N``) or an
onnx node case -- is converted with ``onnx.version_converter.convert_version`` to every
default-domain opset from 7 to ``onnx.defs.onnx_opset_version()``, and each conversion that
succeeds and that onnxruntime runs is checked against onnxruntime's run:

* a light model through :func:`size_oracle.disagreements` at ``N`` = 1, 2, 3 (every output's type
  with the size substituted is the run shape, the guards hold);
* a node case through :func:`node_oracle.check_case_symbolic` (every input dimension a symbol) with
  onnxruntime's outputs of the converted model as the expected arrays.

An outcome is ``pass``, a miss symshape says (``unknown-value``, ``inconclusive``, an unsupported
cause at an opset where the case was already unsupported at its own opset), a conversion or run
that does not happen (``no-conversion``, ``ort-opset``, ``ort-refuses``), or a BUG: a crash, a
wrong shape/dtype/guard, an error, or ``unexpected-unsupported`` (an operator symshape converts at
the case's own opset is unsupported at another opset where it exists).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
import warnings
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np
import onnx
from node_oracle import BUG_CATEGORIES, PASS, case_op, check_case_symbolic, collect_cases, prepare
from onnx_helpers import LIGHT_NAMES, In, light_model, run_ort
from size_oracle import disagreements, feeds_of

try:
    import onnxruntime

    onnxruntime.set_default_logger_severity(3)
except ImportError:  # pragma: no cover - the conftest leaves these tests out without onnxruntime
    pass

__all__ = [
    "LIGHT_MODELS",
    "OPSETS",
    "FOCUS_OPS",
    "Outcome",
    "SWEEP_BUGS",
    "convert",
    "sweep_light",
    "sweep_case",
    "focus_cases",
    "ort_max_opset",
]

LIGHT_MODELS = LIGHT_NAMES
OPSETS = tuple(range(7, onnx.defs.onnx_opset_version() + 1))
#: operators whose inputs or attributes changed across opsets (the issue's list)
FOCUS_OPS = (
    "Reshape",
    "Squeeze",
    "Unsqueeze",
    "Split",
    "ReduceSum",
    "ReduceMean",
    "ReduceMax",
    "ReduceMin",
    "ReduceProd",
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ReduceSumSquare",
    "Slice",
    "Pad",
    "Upsample",
    "Resize",
    "TopK",
    "Clip",
    "BatchNormalization",
    "Dropout",
    "ConstantOfShape",
    "Expand",
    "MaxPool",
    "Gemm",
)
SWEEP_BUGS = (*BUG_CATEGORIES, "unexpected-unsupported")


@dataclass(frozen=True)
class Outcome:
    subject: str
    opset: int
    cause: str
    detail: str = ""


@functools.lru_cache(maxsize=1)
def ort_max_opset() -> int:
    """The newest default-domain opset onnxruntime runs (an Identity model)."""
    from onnx import TensorProto, helper

    for v in reversed(OPSETS):
        g = helper.make_graph(
            [helper.make_node("Identity", ["x"], ["y"])],
            "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
        )
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", v)])
        try:
            run_ort(m, {"x": np.zeros(1, np.float32)})
        except Exception:
            continue
        return v
    return OPSETS[0]


def _default_opset(model: onnx.ModelProto) -> int:
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)


def convert(model: onnx.ModelProto, opset: int) -> onnx.ModelProto | str:
    """``model`` converted to ``opset`` by onnx's version converter, or why it could not be."""
    from onnx import version_converter

    if _default_opset(model) == opset:
        return model
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = version_converter.convert_version(model, opset)
        onnx.checker.check_model(out)
    except Exception as e:
        return f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
    return out


def _light_input(model: onnx.ModelProto) -> In:
    inits = {t.name for t in model.graph.initializer}
    (vi,) = [vi for vi in model.graph.input if vi.name not in inits]
    dims = vi.type.tensor_type.shape.dim
    shape = tuple(d.dim_param if d.dim_param else int(d.dim_value) for d in dims)
    return In(vi.name, "float32", shape)


@functools.lru_cache(maxsize=16)
def _light(name: str) -> onnx.ModelProto:
    return light_model(name, batch=True)


def sweep_light(name: str, opset: int, sizes: tuple[int, ...] = (1, 2, 3)) -> Outcome:
    """The light model ``name`` at ``opset``, compared with onnxruntime at ``N`` in ``sizes``."""
    subject = f"light_{name}"
    if opset > ort_max_opset():
        return Outcome(subject, opset, "ort-opset")
    m = convert(_light(name), opset)
    if isinstance(m, str):
        return Outcome(subject, opset, "no-conversion", m)
    feeds = feeds_of([_light_input(m)])
    try:
        run_ort(m, feeds({"N": 1}, np.random.default_rng(0)))
    except Exception as e:
        return Outcome(subject, opset, "ort-refuses", str(e).splitlines()[0][:160])
    try:
        lines = disagreements(m, ["N"], [{"N": n} for n in sizes], feeds)
    except Exception as e:
        return Outcome(subject, opset, "crash", f"{type(e).__name__}: {e}")
    if not lines:
        return Outcome(subject, opset, PASS)
    if lines[0].startswith("unsupported:"):
        return Outcome(subject, opset, "unexpected-unsupported", lines[0][:300])
    return Outcome(subject, opset, "wrong-shape", "; ".join(lines)[:300])


def sweep_case(case: Any, opset: int, base: str | None = None) -> Outcome:
    """The node case ``case`` at ``opset``: symbolic inputs, onnxruntime's outputs of the
    converted model as the expected arrays. ``base``: the case's verdict at its own opset (an
    unsupported cause there is no surprise at another opset)."""
    if opset > ort_max_opset():
        return Outcome(case.name, opset, "ort-opset")
    # the value inputs folded first (as symshape gets them), so the converter sees constants
    # where an attribute became an input (Squeeze's axes at 13: it converts them back)
    prep = prepare(case)
    inputs = [a for vi, a in zip(case.model.graph.input, case.data_sets[0][0]) if vi.name not in prep.folded]
    m = convert(prep.model, opset)
    if isinstance(m, str):
        return Outcome(case.name, opset, "no-conversion", m)
    feeds = {vi.name: np.asarray(a) for vi, a in zip(m.graph.input, inputs)}
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            outs = run_ort(m, feeds)
    except Exception as e:
        return Outcome(case.name, opset, "ort-refuses", str(e).splitlines()[0][:160])
    fake = SimpleNamespace(name=case.name, model=m, data_sets=[(inputs, outs)])
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        v = check_case_symbolic(fake)
    cause = v.category
    if cause not in SWEEP_BUGS and cause not in (PASS, "unknown-value", "inconclusive"):
        if base is None:
            base = check_case_symbolic(case).category
        if base in (PASS, "unknown-value", "inconclusive"):
            cause = "unexpected-unsupported"
    return Outcome(case.name, opset, cause, v.detail[:300])


def focus_cases(extra_every: int = 12) -> list[Any]:
    """The node cases of :data:`FOCUS_OPS` (expanded cases left out) and every ``extra_every``-th
    other case, in onnx's order (deterministic)."""
    out = []
    others = 0
    for c in collect_cases():
        if "_expanded" in c.name:
            continue
        if case_op(c) in FOCUS_OPS:
            out.append(c)
        else:
            others += 1
            if others % extra_every == 0:
                out.append(c)
    return out


def run(cases: list[Any], light: bool = True) -> Iterator[Outcome]:
    if light:
        for name in LIGHT_MODELS:
            for v in OPSETS:
                yield sweep_light(name, v)
    for c in cases:
        base = check_case_symbolic(c).category
        for v in OPSETS:
            yield sweep_case(c, v, base)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--every", type=int, default=12, help="every N-th other node case")
    ap.add_argument("--no-light", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--json", help="write the outcomes to this file")
    args = ap.parse_args(argv)
    cases = focus_cases(args.every)
    t0 = time.perf_counter()
    outs = list(run(cases, not args.no_light))
    dt = time.perf_counter() - t0
    print(f"opsets {OPSETS[0]}..{OPSETS[-1]} (onnxruntime runs up to {ort_max_opset()})")
    print(f"subjects: {len(LIGHT_MODELS) if not args.no_light else 0} light models, {len(cases)} node cases")
    print(f"time: {dt:.1f} s, {len(outs)} (subject, opset) pairs")
    by = Counter(o.cause for o in outs)
    for cause, n in by.most_common():
        bug = "  <-- BUG" if cause in SWEEP_BUGS else ""
        print(f"  {cause}: {n}{bug}")
    for o in outs:
        if o.cause in SWEEP_BUGS or (args.verbose and o.cause != PASS):
            print(f"    {o.subject} @{o.opset}: {o.cause}: {o.detail[:240]}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump([o.__dict__ for o in outs], f, indent=1)
    return 1 if any(o.cause in SWEEP_BUGS for o in outs) else 0


if __name__ == "__main__":
    sys.exit(main())
