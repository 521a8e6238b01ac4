"""Unification, scheduling, Z3 sessions and explanations."""

from symshape.solver.diagnostics import Diagnostic, Guard, Note, Origin
from symshape.solver.outcome import Solution
from symshape.solver.solve import TypeSolver
from symshape.source import Span

__all__ = ["Diagnostic", "Guard", "Note", "Origin", "Span", "Solution", "TypeSolver"]
