"""Errors explained in several threads at once: each thread's evidence lives in a Z3 context of
its own (a Z3 context is not thread-safe), and every thread's report is the one a single thread
gives, byte for byte."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import symshape as ss
from symshape.solver.evidence import Z3Evidence, evidence_context


def _report(k: int) -> tuple[str, int]:
    n = ss.dim("n")
    x = ss.var("x", ss.Tensor((n, 3 + k % 3), "float32"))
    y = ss.var("y", ss.Tensor((n, 7), "float32"))
    res = ss.infer(ss.Function([x, y], ss.ops.add(ss.ops.relu(x), y)))
    ev = res.errors[0].evidence
    assert isinstance(ev, Z3Evidence)
    assert ev.ctx is evidence_context()  # (this thread's)
    return res.report(), id(evidence_context())


def test_threads_explain_at_once_with_the_reports_of_one() -> None:
    alone = [_report(k)[0] for k in range(3)]
    barrier = threading.Barrier(4)

    def work(k: int) -> tuple[str, int]:
        barrier.wait()
        return _report(k)

    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(work, range(4)))
    assert [r for r, _ in got] == [alone[k % 3] for k in range(4)]
    assert len({c for _, c in got}) == 4  # one evidence context per thread
    assert "error" in alone[0]
