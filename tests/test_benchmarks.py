"""The benchmark package: the runner's smoke run, the workloads' results, Z3 never needed for (a).

No timings are asserted here (design §6: benchmarks, never timed tests).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import symshape as ss

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # benchmarks/ is a top-level package of the repository, not installed
    sys.path.insert(0, str(ROOT))

from benchmarks import workloads as wl  # noqa: E402
from benchmarks.specs import chain_ops, error_index, resnet50_convs, resnet50_op_count  # noqa: E402

WORKLOADS = (
    "(a) transformer chain",
    "(b) resnet50",
    "(c) chain + 1 shape error",
    "(d) unify nested tuple/fn",
    "(e) Z3 guards program",
    "relation chain (solver)",
)
STATUSES = ("ok", "guarded", "error", "unresolved", "inconclusive", "n/a", "crash", "timeout")


def _run(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )


def _table_rows(stdout: str) -> tuple[str, list[str]]:
    lines = stdout.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("workload"))
    rows = []
    for line in lines[i + 2 :]:
        if not line.strip():
            break
        rows.append(line)
    return lines[i], rows


def test_quick_run_prints_table_and_json(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    p = _run("-m", "benchmarks", "--quick", "--json", str(out))
    assert p.returncode == 0, p.stderr[-3000:]
    header, rows = _table_rows(p.stdout)
    for col in ("workload", "size", "status", "total ms", "us/op", "peak MiB", "z3", "scale"):
        assert col in header
    for name in WORKLOADS:
        assert any(r.startswith(name) for r in rows), (name, p.stdout)
    for r in rows:  # every row has a status, n/a rows included
        assert any(f"  {st}" in r for st in STATUSES), r
    data = json.loads(out.read_text())
    assert {"meta", "rows"} <= set(data)
    assert len(data["rows"]) == len(rows)
    for row in data["rows"]:
        if row["status"].startswith("n/a"):
            assert "missing: ss." in row["status"]
        elif "total_ms" in row:
            assert row["total_ms"] >= 0 and row["us_per_op"] >= 0 and row["peak_mib"] >= 0
        for name, peer in row["peers"].items():
            assert name in data["meta"]["peers"]
            assert peer["status"] in ("ok", "error"), peer


def test_script_entry_point() -> None:
    p = _run("benchmarks/run.py", "--quick", "--only", "relation", "--no-peers")
    assert p.returncode == 0, p.stderr[-3000:]
    _, rows = _table_rows(p.stdout)
    assert rows and all(r.startswith("relation chain") for r in rows)


# -- the workloads ----------------------------------------------------------------------------------


def test_specs() -> None:
    assert len(resnet50_convs()) == 53
    assert resnet50_op_count() > 53 * 2
    assert chain_ops(7) == [
        "matmul",
        "add",
        "reshape_flat",
        "reshape_back",
        "softmax",
        "layer_norm",
        "matmul",
    ]
    assert chain_ops(1000)[error_index(1000)] == "matmul"
    assert error_index(1000) >= 1000 - len(set(chain_ops(6)))


def test_relation_chain_never_calls_z3(z3_checks: list[int]) -> None:
    solver, last = wl.relation_chain(200)
    sol = solver.solve()
    assert sol.status == "ok"
    assert str(sol.resolve(last)) == "Tensor[(n, 64*s), float32]"
    assert sol.z3_calls == 0
    assert z3_checks[0] == 0


def test_unification_workload(z3_checks: list[int]) -> None:
    solver, probes = wl.unification_problem(50)
    sol = solver.solve()
    assert sol.status == "ok", sol.errors
    got = [str(sol.resolve(h)) for h in probes]
    assert got[:3] == ["Tensor[(2*n, 3), float32]", "Tensor[(n, s), float32]", "Tensor[(n,), float32]"]
    assert got[-1] == "Tensor[(n, s, 64), float32]"
    assert z3_checks[0] == 0


def _need(workload: str) -> None:
    missing = wl.missing_api(workload)
    if missing:
        pytest.skip(f"symshape does not provide {', '.join(missing)} yet")


def test_transformer_chain_never_calls_z3(z3_checks: list[int]) -> None:
    _need("transformer")
    f = wl.transformer_chain(200)
    res = ss.infer(f)
    assert res.status == "ok", res.report()
    assert str(res.type_of(f.body.body)) == "Tensor[(n, s, 64), float32]"
    calls = wl.z3_calls(res)
    if calls is not None:
        assert calls == 0
    assert z3_checks[0] == 0


def test_transformer_chain_error_is_reported() -> None:
    _need("transformer")
    res = ss.infer(wl.transformer_chain(60, inject_error=True))
    assert res.status == "error"
    assert len(res.errors) == 1
    assert res.report()


def test_resnet50_types() -> None:
    _need("resnet50")
    f = wl.resnet50()
    res = ss.infer(f)
    assert res.ok, res.report()
    assert str(res.type_of(f.body.body)) == "Tensor[(b, 1000), float32]"


# -- the peers (only where installed) ---------------------------------------------------------------


def test_tvm_peer_builds_the_same_workloads() -> None:
    pytest.importorskip("tvm")
    from benchmarks import peers_tvm

    if peers_tvm.version() is None:
        pytest.skip("apache-tvm does not import")
    assert peers_tvm.transformer_chain(14) == {
        "status": "ok",
        "type": 'R.Tensor((n, s, 64), dtype="float32")',
    }
    assert peers_tvm.transformer_chain(14, inject_error=True)["status"] == "error"
    assert peers_tvm.resnet50_net()["type"] == 'R.Tensor((b, 1000), dtype="float32")'


def test_onnx_peer_builds_the_same_workloads() -> None:
    pytest.importorskip("onnx")
    from benchmarks import peers_onnx

    assert peers_onnx.transformer_chain(14) == {"status": "ok", "type": "(n, s, 64)"}
    assert peers_onnx.transformer_chain(14, inject_error=True)["status"] == "error"
    assert peers_onnx.resnet50_net() == {"status": "ok", "type": "(b, 1000)"}


def test_scale_of_a_series_by_wall_median_and_by_cpu_minimum() -> None:
    from benchmarks.run import _add_scale, format_notes

    def row(size: int, total: float, cpu: float | None) -> dict[str, object]:
        return {
            "workload": "chain",
            "series": "chain",
            "size": size,
            "total_ms": total,
            "cpu_ms": cpu,
            "status": "ok",
            "peers": {},
        }

    rows = [row(1000, 10.0, 8.0), row(10000, 180.0, 84.0), {**row(5, 1.0, None), "series": ""}]
    _add_scale(rows)
    assert rows[1]["scale"] == 18.0 and rows[1]["scale_of"] == 10.0
    assert rows[1]["cpu_scale"] == 84.0 / 8.0
    assert "cpu_scale" not in rows[0] and "scale" not in rows[2]
    notes = format_notes(rows).splitlines()
    assert notes == ["[2] chain 10,000: CPU (min of reps): symshape 84.0 ms, scale 10.5x/10x"]
