"""The budget of one error's explanation (see :mod:`symshape.solver.explain`): seconds derived
from the solver's Z3 timeout, counted in Z3's resource units (``rlimit``, deterministic), with the
wall clock as a backstop."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from symshape.solver.solve import TypeSolver

__all__ = ["_TOTAL_BUDGETS", "_Budget", "_budget"]

_MIN_BUDGET_S = 2.0  # seconds an explanation may take at least ...
_BUDGET_TIMEOUTS = 2.5  # ... and in Z3 timeouts (the default 2 s timeout gives 5 s)
_TOTAL_BUDGETS = 4  # all the errors of one program together: four budgets
_UNITS_PER_MS = 4000  # Z3 resource units (rlimit) a budget's millisecond buys (3-9k measured)
_WALL_SLACK = 2.0  # the wall-clock backstop: twice the budget's seconds


class _Budget:
    """The time an explanation may take; ``reason`` says why it gave up (empty: it did not);
    ``phase`` is what the explainer is doing (``grow``, ``search``, ``minimize``, ``describe``)."""

    def __init__(self, seconds: float, units: int = 0) -> None:
        self.seconds = seconds
        self.units = units  # Z3 resource units the checks may spend (0: only the wall clock)
        self.used = 0
        self.deadline = time.perf_counter() + (seconds * _WALL_SLACK if units else seconds)
        self.reason = ""
        self.phase = "grow"

    def out(self) -> bool:
        return bool(self.units and self.used >= self.units) or time.perf_counter() > self.deadline


def _budget(solver: TypeSolver) -> _Budget:
    """The budget of one error's explanation (tests replace this to make the explainer give up)."""
    seconds = max(_MIN_BUDGET_S, _BUDGET_TIMEOUTS * solver.timeout_ms / 1000)
    return _Budget(seconds, int(seconds * 1000 * _UNITS_PER_MS))
