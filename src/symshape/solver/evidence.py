"""The Z3 side of :class:`~symshape.solver.diagnostics.Evidence`: re-checking that an explained
error's core is a minimal unsatisfiable set (the diagnostics layer below holds no Z3).

An explanation works in a Z3 context of its own (its terms' order then never depends on what the
process did before), which costs about 16 MB of native memory. The evidence an error keeps is
copied into one context per thread (:func:`Z3Evidence.of`), so that the explanation's context
dies with the explanation: kept by a diagnostic, or left in a reference cycle that only the
cyclic collector frees (which does not see native memory), 16 MB per explained error made a long
run of many erroneous models grow by gigabytes. One per thread: a Z3 context is not thread-safe,
so threads that explain errors at once must not share one."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import z3

from symshape.solver.diagnostics import Evidence

__all__ = ["Z3Evidence", "evidence_context"]


@dataclass(frozen=True, eq=False)
class Z3Evidence(Evidence):
    """Evidence whose members and axioms are Z3 formulas in the context ``ctx``."""

    @classmethod
    def of(cls, members: Sequence[Any], axioms: Sequence[Any], minimized: bool) -> Z3Evidence:
        """The evidence of ``members`` and ``axioms`` (formulas of any context), copied into this
        thread's evidence context (:func:`evidence_context`)."""
        ctx = evidence_context()
        return cls(
            tuple(f.translate(ctx) for f in members), tuple(f.translate(ctx) for f in axioms), ctx, minimized
        )

    def check_minimal(self, members: tuple[Any, ...] | None = None) -> list[str]:
        """Problems with ``members`` (default: this core) as a minimal unsat core; [] if none."""
        ms = self.members if members is None else members
        problems: list[str] = []

        def sat(fs: tuple[Any, ...]) -> Any:
            s = z3.Solver(ctx=self.ctx)
            s.add(*self.axioms, *fs)
            return s.check()

        if sat(ms) != z3.unsat:
            problems.append("the members together are satisfiable")
        for i in range(len(ms)):
            if sat(ms[:i] + ms[i + 1 :]) != z3.sat:
                problems.append(f"member {i} is not needed")
        return problems


_LOCAL = threading.local()


def evidence_context() -> z3.Context:
    """The Z3 context that the evidence of every error explained in this thread lives in (made
    when first needed; its terms are reference-counted, so evidence that dies leaves nothing
    behind in it)."""
    ctx: z3.Context | None = getattr(_LOCAL, "ctx", None)
    if ctx is None:
        ctx = _LOCAL.ctx = z3.Context()
    return ctx
