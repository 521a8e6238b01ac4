"""Unification, scheduling, Z3 sessions and explanations."""

from symshape.solver.diagnostics import Diagnostic, Guard, Note, Origin, Span
from symshape.solver.solve import Solution, TypeSolver

__all__ = ["Diagnostic", "Guard", "Note", "Origin", "Span", "Solution", "TypeSolver"]
