"""PyTorch peers of ``symshape.torch``: ``torch.export`` with dynamic shapes and
``torch.fx.experimental.migrate_gradual_types`` (Z3 over fx graphs), on the zoo's ResNet-50-shaped
model and a 12-layer GPT-2 (small) block stack, beside ``symshape.torch.infer`` on the same models.

    python -m benchmarks.peers_torch            # one measurement of each, a table
    python -m benchmarks.peers_torch --json out.json

* ``torch.export``: ``export(model, example, dynamic_shapes=Dim.DYNAMIC on batch (and sequence))``,
  wall time of the call.
* ``migrate_gradual_types`` (run as torch's own tests run it, see peer-notes section 7): every fx
  node annotated ``Dyn``, ``transform_all_constraints`` (constraint generation + fixpoint
  rewriting), then a fresh ``z3.Solver`` checks the constraints with the input pinned to
  ``tensor4(b, 3, 224, 224)`` and ``b > 4`` (symbolic batch, as ``test_resnet502``).
* ``symshape.torch.infer``: trace + import + infer, symbolic batch (and sequence), the median of
  ``--reps`` runs (``trace_s``: torch.fx's tracing alone); and import + infer of the
  ``ExportedProgram`` that ``torch.export`` made (export time not counted).

Every row has ``total_s`` (wall time) and ``cpu_s`` (the process's CPU time for the same call:
the machine may be shared, and the ratio of CPU times moves less with its load); the table ends
each model with symshape's speed-up over each peer, by both. symshape's rows also have
``cpu_min_s``, the least CPU time of the runs.

Before each timed call the garbage earlier calls left is collected (``gc.collect()``, not timed),
for every peer: no call pays for collecting another's cyclic garbage (a traced fx graph is
cyclic; a full collection walks all of torch's objects, ~0.1 s).

Models are built once, outside the timings (ResNet-50 has 25 M parameters, the GPT-2 stack 163 M;
only their shapes matter).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))

__all__ = ["measure", "main", "MODELS"]


def _resnet50() -> tuple[Any, dict[str, Any], dict[str, Any], Callable[[], dict[str, Any]]]:
    import torch

    import symshape as ss
    from torch_zoo.models import resnet50

    model = resnet50().eval()
    example = {"x": torch.randn(2, 3, 224, 224)}
    dynamic = {"x": {0: "b"}}

    def types() -> dict[str, Any]:
        return {"x": ss.Tensor((ss.dim("b"), 3, 224, 224), "float32")}

    return model, example, dynamic, types


def _gpt2() -> tuple[Any, dict[str, Any], dict[str, Any], Callable[[], dict[str, Any]]]:
    import torch

    import symshape as ss
    from torch_zoo.models import gpt2_stack

    model = gpt2_stack().eval()
    example = {"idx": torch.randint(0, 50304, (2, 16))}
    dynamic = {"idx": {0: "b", 1: "t"}}

    def types() -> dict[str, Any]:
        return {"idx": ss.Tensor((ss.dim("b"), ss.dim("t")), "int64")}

    return model, example, dynamic, types


MODELS = {"resnet50": _resnet50, "gpt2_12": _gpt2}


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0][:200]}" if text else type(e).__name__


def _start() -> tuple[float, float]:
    """Collect the garbage of earlier calls, then the wall and CPU clocks of a timed call."""
    gc.collect()
    return time.perf_counter(), time.process_time()


def time_export(model: Any, example: dict[str, Any], dynamic: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    from torch.export import Dim, export

    dyn = {k: {ax: Dim.DYNAMIC for ax in v} for k, v in dynamic.items()}
    t0, c0 = _start()
    ep = None
    try:
        ep = export(model, (), example, dynamic_shapes=dyn)
        status = "ok"
    except Exception as e:
        status = _first_line(e)
    return {"total_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0, "status": status}, ep


def time_mgt(model: Any) -> dict[str, Any]:
    import z3
    from torch.fx import symbolic_trace
    from torch.fx.experimental.migrate_gradual_types.transform_to_z3 import transform_all_constraints
    from torch.fx.experimental.migrate_gradual_types.z3_types import D, tensor_type
    from torch.fx.tensor_type import Dyn

    out: dict[str, Any] = {}
    t0, c0 = _start()
    try:
        traced = symbolic_trace(model)
        for n in traced.graph.nodes:
            n.type = Dyn
        out["trace_s"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        constraints = transform_all_constraints(traced, counter=0)
        out["constraints_s"] = time.perf_counter() - t1
        t2 = time.perf_counter()
        solver = z3.Solver()
        solver.add(constraints)
        batch = z3.Int("b")
        solver.add(
            z3.Const(1, tensor_type) == tensor_type.tensor4(D(1, batch), D(1, 3), D(1, 224), D(1, 224))
        )
        solver.add(batch > 4)
        out["check"] = str(solver.check())
        out["check_s"] = time.perf_counter() - t2
        out["status"] = "ok"
    except Exception as e:
        out["status"] = _first_line(e)
    out["total_s"] = time.perf_counter() - t0
    out["cpu_s"] = time.process_time() - c0
    return out


def time_symshape(model: Any, types: Callable[[], dict[str, Any]], reps: int = 1) -> dict[str, Any]:
    """``symshape.torch.infer`` (trace + import + infer), the median of ``reps`` runs; for an
    ``nn.Module`` also the tracing alone (``trace_s``, torch.fx's share)."""
    import statistics

    import torch

    import symshape.torch as sst
    from symshape.torch.api import trace

    totals: list[float] = []
    cpus: list[float] = []
    traces: list[float] = []
    status, detail = "", ""
    for _ in range(max(1, reps)):
        t0, c0 = _start()
        try:
            res = sst.infer(model, types())
            status = res.status
            detail = res.errors[0].message[:160] if res.errors else ""
        except Exception as e:
            status, detail = "exception", _first_line(e)
        totals.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        if isinstance(model, torch.nn.Module) and not isinstance(model, torch.fx.GraphModule):
            t1 = time.perf_counter()
            trace(model)
            traces.append(time.perf_counter() - t1)
    out: dict[str, Any] = {
        "total_s": statistics.median(totals),
        "cpu_s": statistics.median(cpus),
        "cpu_min_s": min(cpus),
        "status": status,
        "detail": detail,
    }
    if traces:
        out["trace_s"] = statistics.median(traces)
    if reps > 1:
        out["reps"] = reps
    return out


def measure(names: list[str], reps: int = 1) -> dict[str, dict[str, Any]]:
    """One measurement of each peer on each model (symshape's: the median of ``reps``)."""
    warnings.filterwarnings("ignore")
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        model, example, dynamic, types = MODELS[name]()
        row: dict[str, Any] = {}
        time_symshape(model, types)  # warm-up: imports, converter registration
        row["symshape"] = time_symshape(model, types, reps)
        row["torch.export"], ep = time_export(model, example, dynamic)
        if ep is not None:  # symshape on torch.export's graph (the export itself not counted)
            time_symshape(ep, types)
            row["symshape (exported graph)"] = time_symshape(ep, types, reps)
        row["migrate_gradual_types"] = time_mgt(model) if name == "resnet50" else time_mgt_any(model)
        out[name] = row
    return out


def time_mgt_any(model: Any) -> dict[str, Any]:
    """Constraint generation only (no input pinned), for models that are not images."""
    from torch.fx import symbolic_trace
    from torch.fx.experimental.migrate_gradual_types.transform_to_z3 import transform_all_constraints
    from torch.fx.tensor_type import Dyn

    t0, _ = _start()
    try:
        traced = symbolic_trace(model)
        for n in traced.graph.nodes:
            n.type = Dyn
        transform_all_constraints(traced, counter=0)
        status = "ok"
    except Exception as e:
        status = _first_line(e)
    return {"total_s": time.perf_counter() - t0, "status": status}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--only", nargs="*", default=list(MODELS), choices=list(MODELS))
    p.add_argument("--json", default=None)
    p.add_argument("--reps", type=int, default=3, help="symshape runs per model (the median)")
    args = p.parse_args(argv)
    results = measure(args.only, args.reps)
    for name, row in results.items():
        print(f"== {name}")
        for peer, r in row.items():
            t = r.get("total_s")
            extra = {k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items() if k != "total_s"}
            print(f"  {peer:24s} {'' if t is None else f'{t * 1000:10.1f} ms'}  {extra}")
        ours = row.get("symshape", {})
        if ours.get("status") not in ("ok", "guarded"):
            continue
        for peer, r in row.items():
            if peer.startswith("symshape") or r.get("status") != "ok":
                continue
            wall, cpu = r["total_s"] / ours["total_s"], r["cpu_s"] / ours["cpu_s"]
            print(f"  symshape is {wall:.0f}x faster than {peer} (wall), {cpu:.0f}x (cpu)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
