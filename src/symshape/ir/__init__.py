"""Expressions, modules, the operator registry and constraint generation (``infer``).

Importing the package installs the expression front-end (:mod:`symshape.ir.frontend`), which the
operators and methods of expressions delegate to."""

from symshape.ir import frontend as frontend

__all__ = ["frontend"]
