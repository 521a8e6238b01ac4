"""The side-by-side benchmark runner: ``python -m benchmarks`` or ``python benchmarks/run.py``.

For every workload instance it measures symshape (build the program + infer; medians over
``--reps`` repetitions after one warm-up run), its peak Python memory (one extra run under
``tracemalloc``, not timed), and every installed peer on the same workload built with the peer's
own API in the same process. It prints one table, then one note per row (inferred result, first
error, guards), and with ``--json out.json`` writes every number.

Columns: ``total ms`` is build + solve (what a frontend pays, and what the peers' times cover:
TVM's ``BlockBuilder.emit`` infers while it builds); ``build``/``solve`` split it; ``us/op`` is
total per operator (per relation, per unification); ``peak MiB`` is tracemalloc's peak and ``z3``
the number of ``z3.Solver.check`` calls, both from one extra untimed run (``*``: the result's own
``z3_calls`` differs); ``ss/<peer>`` is symshape's total divided by the peer's (below 1: faster);
``scale`` is the time of this size over the time of the previous size of the same series (10x the
operators should cost at most 11x; the notes repeat it for the CPU minima, which a loaded machine
disturbs less). The notes add the CPU times (minimum over the repetitions, of
this process: a peer's C++ threads included) and their ratios, which a shared, loaded machine
disturbs far less than the wall times. A workload whose operators or API are not there yet is
reported as ``n/a (missing: ...)``.

Every symshape run (the warm-up, each repetition, and the ``z3-free`` yardstick's) starts with
:func:`benchmarks.workloads.fresh_caches`, untimed: no repetition reuses the memo caches an
earlier run of the same program left in the process (dimension products, reshape results, call-site
spans). The peers run as they are.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import platform
import signal
import statistics
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

if __package__ in (None, ""):  # run as a script: python benchmarks/run.py
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks import onnx_transformer, peers_floor, peers_full, peers_onnx, peers_ort, peers_tvm
from benchmarks import workloads as wl
from benchmarks.specs import resnet50_op_count

__all__ = ["Case", "cases", "main", "run_case"]

PEERS = {
    peers_tvm.NAME: peers_tvm,
    peers_onnx.NAME: peers_onnx,
    peers_ort.NAME: peers_ort,
    peers_floor.NAME: peers_floor,
    peers_full.NAME: peers_full,
}

#: Not a peer: symshape's own Z3-free chain (a) of the same size, the yardstick of (e)'s
#: per-operator cost (``ss/z3-free`` is the ratio of the per-operator costs, sizes being equal).
Z3FREE = "z3-free"


def _z3_free_chain(n: int) -> dict[str, Any]:
    r = wl.run_transformer_chain(n)
    return {"status": "ok" if r.status == "ok" else r.status, "type": f"chain {r.status}, {r.z3_calls} z3"}


@dataclass
class Case:
    """One workload instance: how to run symshape on it and each peer."""

    workload: str
    key: str  # REQUIREMENTS key in benchmarks.workloads
    size: int
    ss: Callable[[], wl.RunResult]
    peers: dict[str, Callable[[], dict[str, Any]]] = field(default_factory=dict)
    series: str = ""  # rows of one series get the "scale" column
    unit: str = "op"


def cases(quick: bool) -> list[Case]:
    """The workload instances, in table order."""
    chain = [100] if quick else [1_000, 10_000]
    unif = [100] if quick else [1_000]
    z3p = [20] if quick else [40, 400, 2_000, 5_000]
    rel = [100, 1_000] if quick else [1_000, 10_000]
    out: list[Case] = []
    for n in chain:
        out.append(
            Case(
                "(a) transformer chain",
                "transformer",
                n,
                lambda n=n: wl.run_transformer_chain(n),
                {
                    peers_tvm.NAME: lambda n=n: peers_tvm.transformer_chain(n),
                    peers_onnx.NAME: lambda n=n: peers_onnx.transformer_chain(n),
                },
                series="a",
            )
        )
    for n in chain:
        out.append(
            Case(
                "(g) chain, shape_of targets",
                "shape_values",
                n,
                lambda n=n: wl.run_transformer_chain(n, shape_values=True),
                series="g",
            )
        )
    out.append(
        Case(
            "(b) resnet50 (b, 3, h, w)",
            "resnet50",
            resnet50_op_count(),
            wl.run_resnet50,
            {peers_tvm.NAME: peers_tvm.resnet50_net, peers_onnx.NAME: peers_onnx.resnet50_net},
        )
    )
    for n in chain:
        out.append(
            Case(
                "(c) chain + 1 shape error",
                "transformer",
                n,
                lambda n=n: wl.run_transformer_chain(n, inject_error=True),
                {
                    peers_tvm.NAME: lambda n=n: peers_tvm.transformer_chain(n, inject_error=True),
                    peers_onnx.NAME: lambda n=n: peers_onnx.transformer_chain(n, inject_error=True),
                },
                series="c",
            )
        )
    for n in unif:
        out.append(
            Case(
                "(d) unify nested tuple/fn", "unification", n, lambda n=n: wl.run_unification(n), unit="unify"
            )
        )
    for n in z3p:
        out.append(
            Case(
                "(e) Z3 guards program",
                "z3_program",
                n,
                lambda n=n: wl.run_z3_program(n),
                {Z3FREE: lambda n=n: _z3_free_chain(n)},
                series="e",
            )
        )
    models = peers_ort.light_models() if peers_ort.version() else []
    for path in [m for m in models if "squeezenet" in m] if quick else models:
        name = os.path.basename(path)[len("light_") : -len(".onnx")]
        out.append(_onnx_case(name, lambda path=path: path, peers_ort.node_count(path)))
    if models and not quick:  # a 12-layer encoder with a dynamic batch and sequence
        out.append(_onnx_case(onnx_transformer.NAME, onnx_transformer.path, onnx_transformer.node_count()))
    grid = [1_000] if quick else [10_000]
    for n in grid:
        out.append(
            Case(
                "(h) valid_at grid, GPT-2-sized",
                "validity",
                n,
                lambda n=n, quick=quick: wl.run_validity_grid(n, layers=2 if quick else 12),
                unit="point",
            )
        )
    for n in rel:
        out.append(
            Case(
                "relation chain (solver)",
                "relation_chain",
                n,
                lambda n=n: wl.run_relation_chain(n),
                series="rel",
                unit="rel",
            )
        )
    return out


def _onnx_case(name: str, path: Callable[[], str], nodes: int) -> Case:
    """Workload (f) on one model file (``path()`` makes or finds it when the case runs)."""
    return Case(
        f"(f) onnx {name}",
        "onnx_model",
        nodes,
        lambda: peers_ort.symshape_infer(path()),
        {
            peers_onnx.NAME: lambda: peers_ort.onnx_infer(path()),
            peers_ort.NAME: lambda: peers_ort.ort_infer(path()),
            peers_floor.NAME: lambda: peers_floor.read_floor(path()),
            peers_full.NAME: lambda: peers_full.full_infer(path()),
        },
        unit="node",
    )


# -- measuring --------------------------------------------------------------------------------------


class BenchTimeoutError(BaseException):
    """A measurement ran past ``--timeout`` (a BaseException, so that no ``except Exception`` in the
    code under test swallows it)."""


@contextlib.contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """Raise BenchTimeoutError after ``seconds`` (POSIX main thread only; elsewhere no limit)."""
    usable = (
        seconds > 0 and hasattr(signal, "SIGALRM") and threading.current_thread() is threading.main_thread()
    )
    if not usable:
        yield
        return

    def fire(signum: int, frame: Any) -> None:
        raise BenchTimeoutError(f"exceeded {seconds:g} s")

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _fmt_exc(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0][:160]}" if text else type(e).__name__


def _measure(
    fn: Callable[[], Any],
    reps: int,
    warmup: bool,
    timeout: float,
    cpu: list[float] | None = None,
    fresh: Callable[[], object] | None = None,
) -> tuple[list[float], list[Any]]:
    """Wall times of ``reps`` runs of ``fn`` (after an untimed warm-up) and their results; the
    CPU time of this process for each run is appended to ``cpu`` (on a shared machine the CPU
    times are what compare: waiting for a core counts in the wall time only). ``fresh`` is called,
    untimed, before every run (symshape's: :func:`benchmarks.workloads.fresh_caches`)."""
    times, results = [], []
    with _deadline(timeout):
        if warmup:
            if fresh is not None:
                fresh()
            gc.collect()
            fn()
        for _ in range(reps):
            if fresh is not None:
                fresh()
            gc.collect()
            c0, t0 = time.process_time(), time.perf_counter()
            r = fn()
            times.append(time.perf_counter() - t0)
            if cpu is not None:
                cpu.append(time.process_time() - c0)
            results.append(r)
    return times, results


def _instrumented(fn: Callable[[], Any], timeout: float, memory: bool) -> tuple[int | None, int]:
    """One untimed run of ``fn`` that counts ``z3.Solver.check`` calls (whatever the result object
    reports) and, with ``memory``, measures the peak of traced Python allocations."""
    import z3

    count = [0]
    real = z3.Solver.check

    def counting(self: Any, *args: Any) -> Any:
        count[0] += 1
        return real(self, *args)

    wl.fresh_caches()
    gc.collect()
    z3.Solver.check = counting
    if memory:
        tracemalloc.start()
    try:
        with _deadline(timeout):
            fn()
        peak = tracemalloc.get_traced_memory()[1] if memory else None
    finally:
        if memory:
            tracemalloc.stop()
        z3.Solver.check = real
    return peak, count[0]


def run_case(
    case: Case, reps: int, timeout: float, peers: dict[str, str | None], memory: bool = True
) -> dict[str, Any]:
    """Measure one case; returns a JSON-able row."""
    row: dict[str, Any] = {
        "workload": case.workload,
        "size": case.size,
        "unit": case.unit,
        "series": case.series,
    }
    missing = wl.missing_api(case.key)
    if missing:
        row["status"] = f"n/a (missing: {', '.join(missing)})"
    else:
        try:
            ss_cpu: list[float] = []
            _, results = _measure(case.ss, reps, reps > 1, timeout, ss_cpu, wl.fresh_caches)
            last: wl.RunResult = results[-1]
            total = statistics.median(r.total_s for r in results)
            row.update(
                status=last.status,
                ops=last.ops,
                total_ms=total * 1e3,
                build_ms=statistics.median(r.build_s for r in results) * 1e3,
                solve_ms=statistics.median(r.solve_s for r in results) * 1e3,
                us_per_op=total * 1e6 / max(1, last.ops),
                z3_reported=last.z3_calls,
                detail=last.detail,
                reps=len(results),
                times_ms=[r.total_s * 1e3 for r in results],
                cpu_ms=min(ss_cpu) * 1e3,
            )
            peak, checks = _instrumented(case.ss, timeout, memory)
            row["z3_checks"] = checks
            if peak is not None:
                row["peak_mib"] = peak / 2**20
        except BenchTimeoutError as e:
            row["status"] = f"timeout ({e})"
        except Exception as e:
            row["status"] = "crash"
            row["detail"] = _fmt_exc(e)
    row["peers"] = {}
    for name, fn in case.peers.items():
        if not peers.get(name):
            continue
        p: dict[str, Any] = {}
        try:
            cpu: list[float] = []
            fresh = wl.fresh_caches if name == Z3FREE else None  # symshape's own chain
            times, results = _measure(fn, reps, reps > 1, timeout, cpu, fresh)
            p.update(ms=statistics.median(times) * 1e3, status=results[-1]["status"], cpu_ms=min(cpu) * 1e3)
            p["times_ms"] = [x * 1e3 for x in times]
            p["detail"] = results[-1].get("type") or results[-1].get("message") or ""
            if "total_ms" in row:
                p["ratio"] = row["total_ms"] / p["ms"]
                p["cpu_ratio"] = row["cpu_ms"] / p["cpu_ms"] if p["cpu_ms"] > 0 else None
        except BenchTimeoutError as e:
            p["status"] = f"timeout ({e})"
        except Exception as e:
            p.update(status="crash", detail=_fmt_exc(e))
        row["peers"][name] = p
    return row


def _add_scale(rows: list[dict[str, Any]]) -> None:
    prev: dict[str, dict[str, Any]] = {}
    for r in rows:
        s = r.get("series")
        if not s:
            continue
        p = prev.get(s)
        if p is not None and "total_ms" in p and "total_ms" in r and p["total_ms"] > 0:
            r["scale"] = r["total_ms"] / p["total_ms"]
            r["scale_of"] = r["size"] / p["size"]
            if r.get("cpu_ms") and p.get("cpu_ms"):
                r["cpu_scale"] = r["cpu_ms"] / p["cpu_ms"]
        prev[s] = r


# -- printing ---------------------------------------------------------------------------------------


def _num(v: Any, fmt: str) -> str:
    return format(v, fmt) if isinstance(v, (int, float)) and not isinstance(v, bool) else "-"


def _z3_cell(r: dict[str, Any]) -> str:
    """Z3 checks counted in the instrumented run; ``*`` when the result reports another number."""
    checks = r.get("z3_checks")
    if checks is None:
        return "-"
    rep = r.get("z3_reported")
    return f"{checks}" + ("*" if rep is not None and rep != checks else "")


def format_table(rows: list[dict[str, Any]], peer_names: list[str]) -> str:
    head = ["workload", "size", "status", "total ms", "build ms", "solve ms", "us/op", "peak MiB", "z3"]
    for p in peer_names:
        head += [f"{p} ms", f"ss/{p}"]
    head.append("scale")
    body: list[list[str]] = []
    for r in rows:
        line = [
            r["workload"],
            f"{r['size']:,}",
            r["status"],
            _num(r.get("total_ms"), ".1f"),
            _num(r.get("build_ms"), ".1f"),
            _num(r.get("solve_ms"), ".1f"),
            _num(r.get("us_per_op"), ".1f"),
            _num(r.get("peak_mib"), ".1f"),
            _z3_cell(r),
        ]
        for p in peer_names:
            pr = r["peers"].get(p)
            if pr is None:
                line += ["", ""]
                continue
            ms = _num(pr.get("ms"), ".1f")
            if pr.get("status") not in ("ok", None):
                ms += f" ({pr['status']})" if pr["status"] == "error" else f" [{pr['status']}]"
            line += [ms, _num(pr.get("ratio"), ".2f") + ("x" if "ratio" in pr else "")]
        sc = r.get("scale")
        line.append(f"{sc:.1f}x/{r['scale_of']:g}x" if sc is not None else "")
        body.append(line)
    # the status column can be long (n/a lists): keep it readable by wrapping at the end
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(head)]
    status_i = head.index("status")
    widths[status_i] = min(widths[status_i], 28)
    out = []
    sep = "  "
    num_cols = set(range(3, len(head)))
    hl = sep.join(h.rjust(widths[i]) if i in num_cols else h.ljust(widths[i]) for i, h in enumerate(head))
    out.append(hl.rstrip())
    out.append("-" * len(hl.rstrip()))
    for b in body:
        cells = []
        for i, c in enumerate(b):
            if i == status_i and len(c) > widths[i]:
                c = c[: widths[i] - 3] + "..."
            cells.append(c.rjust(widths[i]) if i in num_cols else c.ljust(widths[i]))
        out.append(sep.join(cells).rstrip())
    return "\n".join(out)


def format_notes(rows: list[dict[str, Any]]) -> str:
    out = []
    for i, r in enumerate(rows, 1):
        bits = []
        if r["status"].startswith("n/a") and len(r["status"]) > 28:
            bits.append(r["status"])
        if r.get("detail"):
            bits.append(f"symshape: {r['detail']}")
        rep = r.get("z3_reported")
        if rep is not None and r.get("z3_checks") is not None and rep != r["z3_checks"]:
            bits.append(f"z3: {r['z3_checks']} checks counted, result reports z3_calls={rep}")
        for p, pr in r["peers"].items():
            if pr.get("detail"):
                bits.append(f"{p}: {pr['detail']}")
        cpu = [f"{p} {pr['cpu_ratio']:.2f}x" for p, pr in r["peers"].items() if pr.get("cpu_ratio")]
        if r.get("cpu_ms") is not None and (cpu or r.get("cpu_scale") is not None):
            text = f"CPU (min of reps): symshape {r['cpu_ms']:.1f} ms"
            if cpu:
                text += ", ss/peer " + ", ".join(cpu)
            if r.get("cpu_scale") is not None:
                text += f", scale {r['cpu_scale']:.1f}x/{r['scale_of']:g}x"
            bits.append(text)
        if bits:
            out.append(f"[{i}] {r['workload']} {r['size']:,}: " + " | ".join(bits))
    return "\n".join(out)


def _meta(args: argparse.Namespace, peers: dict[str, str | None]) -> dict[str, Any]:
    import z3

    import symshape

    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "symshape": getattr(symshape, "__version__", "?"),
        "z3": z3.get_version_string(),
        "peers": peers,
        "cpus": os.cpu_count(),
        "loadavg": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None,
        "reps": args.reps,
        "quick": args.quick,
        "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, 1 repetition (CI smoke)")
    ap.add_argument(
        "--reps", type=int, default=None, help="repetitions per measurement (default 5; 1 with --quick)"
    )
    ap.add_argument("--json", metavar="OUT", help="also write every number to this JSON file")
    ap.add_argument(
        "--only", metavar="SUBSTR", action="append", help="run the workloads whose name contains SUBSTR"
    )
    ap.add_argument("--no-peers", action="store_true", help="measure symshape only")
    ap.add_argument("--no-memory", action="store_true", help="skip the tracemalloc run")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per measurement (default 300)")
    args = ap.parse_args(argv)
    if args.reps is None:
        args.reps = 1 if args.quick else 5
    if args.reps < 1:
        ap.error("--reps must be >= 1")

    peers = {name: (None if args.no_peers else mod.version()) for name, mod in PEERS.items()}
    peers[Z3FREE] = "symshape"  # always: the reference of (e), not a peer
    todo = cases(args.quick)
    if args.only:
        todo = [c for c in todo if any(s.lower() in c.workload.lower() for s in args.only)]
    peer_names = [p for p, v in peers.items() if v and (p != Z3FREE or any(p in c.peers for c in todo))]
    rows = []
    for c in todo:
        print(f"... {c.workload} {c.size:,}", file=sys.stderr, flush=True)
        rows.append(run_case(c, args.reps, args.timeout, peers, memory=not args.no_memory))
    _add_scale(rows)

    meta = _meta(args, peers)
    vers = ", ".join(f"{p} {v}" for p, v in peers.items() if v and p != Z3FREE)
    vers = vers or ("disabled" if args.no_peers else "none installed")
    print(
        f"symshape {meta['symshape']} | python {meta['python']} | z3 {meta['z3']} | peers: {vers} | "
        f"median of {args.reps} rep(s) | {meta['cpus']} cpu(s), load {meta['loadavg']}"
    )
    print(format_table(rows, peer_names))
    notes = format_notes(rows)
    if notes:
        print()
        print(notes)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"meta": meta, "rows": rows}, fh, indent=2, default=str)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
