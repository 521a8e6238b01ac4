"""The error code and diagnostic pieces the ONNX importer reports with.

``unsupported-op`` is in symshape's catalogue (:mod:`symshape.errors`); ``Note`` is the secondary
location of a diagnostic (not yet exported at the top level of ``symshape``).
"""

from __future__ import annotations

from symshape.errors import UNSUPPORTED_OP
from symshape.solver.diagnostics import Note

__all__ = ["UNSUPPORTED_OP_CODE", "Note"]

UNSUPPORTED_OP_CODE: str = UNSUPPORTED_OP.code
