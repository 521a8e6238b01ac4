"""Shared fixtures for the tests; hypothesis runs modestly and without deadlines."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import z3
from hypothesis import HealthCheck, settings

import symshape as ss

settings.register_profile(
    "symshape",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
settings.register_profile(
    "random", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
# the default profile is derandomized (reproducible runs); SYMSHAPE_HYPOTHESIS=random explores
settings.load_profile(os.environ.get("SYMSHAPE_HYPOTHESIS", "symshape"))


@pytest.fixture
def z3_checks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Counts every ``z3.Solver.check`` call (``z3_checks[0]``), whatever a result reports."""
    count = [0]
    real = z3.Solver.check

    def counting(self: z3.Solver, *args: object) -> z3.CheckSatResult:
        count[0] += 1
        return real(self, *args)

    monkeypatch.setattr(z3.Solver, "check", counting)
    yield count


@pytest.fixture
def solver() -> ss.TypeSolver:
    return ss.TypeSolver()


@pytest.fixture
def n() -> ss.Dim:
    return ss.dim("n")


@pytest.fixture
def m() -> ss.Dim:
    return ss.dim("m")
