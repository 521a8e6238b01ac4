"""The (h) benchmark workload (issue 19): a GPT-2-sized program's valid sizes, decided per point
without Z3. No timings are asserted (design §6)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # benchmarks/ is a top-level package of the repository
    sys.path.insert(0, str(ROOT))

from benchmarks import workloads as wl  # noqa: E402


def test_gpt2_valid_sizes_without_z3(z3_checks: list[int]) -> None:
    f, (b, t) = wl.gpt2_program(layers=2, n_ctx=64, vocab=500, d=32, heads=4)
    res = wl._infer(f)
    assert res.status == "guarded", res.report()
    assert res.valid_when() == "t <= 64"  # the mask's broadcast guard, in interval form
    before = z3_checks[0]
    for bb, tt in wl.validity_points(400, t_max=128):
        assert res.valid_at({b: bb, t: tt}) == (tt <= 64), (bb, tt)
    assert z3_checks[0] == before, "valid_at called Z3 on linear guards"
    why = res.why_invalid({b: 1, t: 65})
    assert why.startswith("invalid at b = 1, t = 65:") and "test_validity_bench.py" not in why
    assert "benchmarks/workloads.py" in why and "error: add needs" in why, why


def test_index_bound_alone() -> None:
    # without the mask, the position table alone bounds t
    import symshape as ss

    b, t = ss.dims("b t")
    ids = ss.var("ids", ss.Tensor((b, t), "int64", values=(0, 499)))
    wte, wpe = ss.var("wte", ss.Tensor((500, 8))), ss.var("wpe", ss.Tensor((64, 8)))
    tok = ss.ops.take(wte, ids, axis=0, mode="fast")
    x = ss.ops.add(tok, ss.ops.take(wpe, ss.ops.arange(t), axis=0, mode="fast"))
    res = ss.infer(ss.Function([ids, wte, wpe], x))
    assert res.valid_when() == "t <= 64"
    assert "take of indices in [0, t - 1]" in res.why_invalid({b: 2, t: 65})


def test_run_validity_grid() -> None:
    r = wl.run_validity_grid(100, layers=1)
    assert r.status == "guarded" and r.ops == 100 and "us/point" in r.detail and r.build_s == 0.0
