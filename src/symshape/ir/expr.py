"""The expression language as one import (the names of :mod:`symshape.ir.nodes`,
:mod:`symshape.ir.visit` and the front-end's queries of :mod:`symshape.ir.frontend`), for code
written before the split. New code imports from those modules; operator overloading and the
numpy-like methods of expressions are in :mod:`symshape.ir.sugar`.
"""

from __future__ import annotations

from symshape.ir import nodes, visit
from symshape.ir.frontend import set_operator_lookup, static_arity, static_dtype, static_kind
from symshape.ir.nodes import *  # noqa: F403
from symshape.ir.nodes import _EMPTY_ATTRS
from symshape.ir.visit import *  # noqa: F403

__all__ = ["_EMPTY_ATTRS", "set_operator_lookup", "static_arity", "static_dtype", "static_kind"]
__all__ += nodes.__all__
__all__ += visit.__all__
