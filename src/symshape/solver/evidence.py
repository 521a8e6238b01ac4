"""The Z3 side of :class:`~symshape.solver.diagnostics.Evidence`: re-checking that an explained
error's core is a minimal unsatisfiable set (the diagnostics layer below holds no Z3)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import z3

from symshape.solver.diagnostics import Evidence

__all__ = ["Z3Evidence"]


@dataclass(frozen=True, eq=False)
class Z3Evidence(Evidence):
    """Evidence whose members and axioms are Z3 formulas in the context ``ctx``."""

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
