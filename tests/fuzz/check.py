"""The differential check: a generated program in symshape against numpy, at several values of its
symbols.

symshape infers the program once. Then, at the hidden values and at a few random ones (0 included
for ``min=0`` symbols), numpy runs the program on real arrays, and:

* if numpy runs, symshape's verdict is ``ok`` or ``guarded`` with every guard true at those
  values, and every node's inferred type, with the values substituted, has numpy's shape (and
  dtype, for float and bool values) exactly;
* if numpy raises, symshape says ``error``, or one of its guards is false at those values;
* ``unresolved`` is a finding too (every input is annotated); ``inconclusive`` (Z3 could not
  decide a condition in time) is an honest verdict: counted and listed, not checked further.

A finding records the program (its listing), the values, what numpy did and what symshape said.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import symshape as ss
from symshape.encoding.dims import Dim

from .gen import Program, generate

__all__ = ["Finding", "Stats", "check_program", "run_fuzz", "valuations"]


@dataclass
class Finding:
    """One disagreement between symshape and numpy."""

    kind: str  # wrong-shape | wrong-verdict | unexpected-status | crash
    seed: int
    env: dict[str, int]
    expected: str
    got: str
    listing: str

    def __str__(self) -> str:
        return (
            f"[{self.kind}] seed {self.seed} at {self.env}\n"
            f"  expected: {self.expected}\n  got:      {self.got}\n{self.listing}"
        )


@dataclass
class Stats:
    """What a fuzzing run did and found."""

    programs: int = 0
    valuations: int = 0
    numpy_ran: int = 0
    numpy_raised: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    ops: Counter[str] = field(default_factory=Counter)
    rejected_calls: int = 0
    symbolic_programs: int = 0
    zero_valuations: int = 0
    findings: list[Finding] = field(default_factory=list)
    inconclusive: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> str:
        kinds = Counter(f.kind for f in self.findings)
        lines = [
            f"programs: {self.programs} ({self.symbolic_programs} symbolic), "
            f"valuations checked: {self.valuations} ({self.zero_valuations} with a zero size), "
            f"{self.seconds:.1f} s",
            f"numpy ran at {self.numpy_ran} valuations and raised at {self.numpy_raised}",
            "symshape statuses: " + ", ".join(f"{k} {v}" for k, v in sorted(self.statuses.items())),
            "operator calls: " + ", ".join(f"{k} {v}" for k, v in sorted(self.ops.items())),
            f"calls rejected when built (bad attributes): {self.rejected_calls}",
            f"inconclusive (Z3 could not decide in time): {len(self.inconclusive)}",
            f"findings: {len(self.findings)}"
            + ("" if not kinds else " (" + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) + ")"),
        ]
        return "\n".join(lines)


def valuations(prog: Program, rng: random.Random, extra: int) -> list[dict[Dim, int]]:
    """The hidden values, then ``extra`` random ones (distinct), 0 likely for ``min=0`` symbols."""
    out = [dict(prog.hidden)]
    if not prog.symbols:
        return out
    seen = {tuple(sorted((str(k), v) for k, v in out[0].items()))}
    for _ in range(extra * 4):
        if len(out) > extra:
            break
        env = {}
        for s, lo, _hv in prog.symbols:
            env[s] = 0 if lo == 0 and rng.random() < 0.3 else rng.randint(max(lo, 1), 4)
        key = tuple(sorted((str(k), v) for k, v in env.items()))
        if key not in seen:
            seen.add(key)
            out.append(env)
    return out


def _np_shapes(v: Any) -> list[tuple[tuple[int, ...], str]]:
    if isinstance(v, (list, tuple)):
        return [s for x in v for s in _np_shapes(x)]
    a = np.asarray(v)
    return [(tuple(int(d) for d in a.shape), str(a.dtype))]


def _ss_shapes(t: ss.Type, env: Mapping[Dim, int]) -> list[tuple[tuple[int, ...] | None, str | None]]:
    if isinstance(t, ss.TupleType):
        return [s for f in t.fields for s in _ss_shapes(f, env)]
    if not isinstance(t, ss.TensorType) or not isinstance(t.shape, tuple):
        return [(None, None)]
    dims: list[int] = []
    for d in t.shape:
        c = d.subs(env).constant_value  # type: ignore[arg-type]
        if c is None:
            return [(None, t.dtype if isinstance(t.dtype, str) else None)]
        dims.append(c)
    return [(tuple(dims), t.dtype if isinstance(t.dtype, str) else None)]


def _agree(
    np_s: list[tuple[tuple[int, ...], str]], ss_s: list[tuple[tuple[int, ...] | None, str | None]]
) -> bool:
    if len(np_s) != len(ss_s):
        return False
    for (ns, nd), (ts, td) in zip(np_s, ss_s):
        if ts != ns:
            return False
        if nd in ("float32", "bool") and td != nd:
            return False
    return True


def _env_str(env: Mapping[Dim, int]) -> dict[str, int]:
    return {str(k): v for k, v in sorted(env.items(), key=lambda kv: str(kv[0]))}


def check_program(prog: Program, rng: random.Random, extra: int, stats: Stats) -> None:
    """Check ``prog`` at its hidden values and ``extra`` random ones (see the module docstring)."""
    stats.programs += 1
    stats.symbolic_programs += bool(prog.symbols)
    stats.rejected_calls += prog.rejected
    for n in prog.nodes:
        if n.kind != "input" and not n.text.startswith("%"):
            stats.ops[n.kind] += 1
    listing = prog.listing()
    try:
        res = ss.infer(prog.function)
    except Exception as e:
        stats.findings.append(
            Finding("crash", prog.seed, {}, "a verdict", f"{type(e).__name__}: {e}", listing)
        )
        return
    status = str(res.status)
    stats.statuses[status] += 1
    if status == "inconclusive":
        # Z3 answered unknown (a time limit on nonlinear conditions): an honest verdict, counted
        # in the statuses, not checked further
        stats.inconclusive.append(f"seed {prog.seed}: " + "; ".join(d.message for d in res.inconclusive))
        return
    if status not in ("ok", "guarded", "error"):
        got = "; ".join(d.message for d in res.diagnostics)
        stats.findings.append(
            Finding("unexpected-status", prog.seed, {}, "ok, guarded or error", f"{status}: {got}", listing)
        )
        return
    guards = list(res.guards)
    for env in valuations(prog, rng, extra):
        stats.valuations += 1
        stats.zero_valuations += any(v == 0 for v in env.values())
        values, failed, why = prog.evaluate(env)
        where = _env_str(env)
        try:
            false = [str(g) for g in guards if not g.holds(env)]
        except Exception as e:
            stats.findings.append(
                Finding("crash", prog.seed, where, "guards decided", f"{type(e).__name__}: {e}", listing)
            )
            continue
        if failed is not None:
            stats.numpy_raised += 1
            if status == "error" or false:
                continue
            stats.findings.append(
                Finding(
                    "wrong-verdict",
                    prog.seed,
                    where,
                    f"an error or a false guard (numpy raises at %{failed}: {why})",
                    f"{status}, guards {[str(g) for g in guards]} all hold",
                    listing,
                )
            )
            continue
        stats.numpy_ran += 1
        if status == "error" or false:
            got = f"error: {res.errors[0].message}" if status == "error" else f"false guards {false}"
            stats.findings.append(Finding("wrong-verdict", prog.seed, where, "numpy runs", got, listing))
            continue
        for i, n in enumerate(prog.nodes):
            want = _np_shapes(values[i])
            t = res.type_of(n.expr)
            try:
                got_s = _ss_shapes(t, env)
            except Exception as e:
                got_s = [(None, f"{type(e).__name__}: {e}")]
            if not _agree(want, got_s):
                stats.findings.append(
                    Finding(
                        "wrong-shape",
                        prog.seed,
                        where,
                        f"%{i} = {n.text}: numpy {want}",
                        f"symshape `{t}` -> {got_s}",
                        listing,
                    )
                )
                break


def run_fuzz(
    count: int,
    seed: int = 0,
    *,
    max_ops: int = 6,
    extra: int = 3,
    progress: Callable[[int, Stats], None] | None = None,
) -> Stats:
    """Generate and check ``count`` programs from ``seed`` (deterministic)."""
    stats = Stats()
    start = time.perf_counter()
    for i in range(count):
        pseed = seed * 1_000_003 + i
        prog = generate(pseed, max_ops)
        check_program(prog, random.Random(pseed ^ 0x5EED), extra, stats)
        if progress is not None:
            progress(i, stats)
    stats.seconds = time.perf_counter() - start
    return stats
