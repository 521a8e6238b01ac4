"""The type language: frozen, hashable types with one printed form that :func:`parse_type` reads.

======================  =========================================================
form                    printed
======================  =========================================================
``TensorType``          ``Tensor[(n, 3), float32]``, ``Tensor[?, ?]``, ``Tensor[(), int32]``;
                        with a known value ``Tensor[(3,), int64] = (n, s, 64)``; with a range
                        of its entries ``Tensor[(b, t), int64] in [0, 50256]``
``TupleType``           ``(Tensor[...], Tensor[...])``, ``(Tensor[...],)``, ``()``
``FuncType``            ``fn<a, b>(a, b) -> c where broadcast(a, b, c)``; ``fn[impure](...)``
``TypeVar``             ``a`` (declared ``a: shape`` in a ``fn<...>`` header)
``IncompleteType``      ``?t3``
``GlobalTypeVar``       ``List``
``TypeCall``            ``List[Tensor[(2,), int32]]``
``ObjectType``          ``Object``
``ShapeType``           ``Shape[2]``, ``Shape[?]``
======================  =========================================================

Incomplete types (holes) compare by identity, as Relay's do; everything else is structural.

The classes and functions live in :mod:`~symshape.encoding.attrs`,
:mod:`~symshape.encoding.leaf_types`, :mod:`~symshape.encoding.composite_types`,
:mod:`~symshape.encoding.type_walks` and :mod:`~symshape.encoding.type_parse`; this module
gathers them.
"""

# ruff: noqa: F403, F405 (a facade: it re-exports what the modules below define, as __all__ lists)
from __future__ import annotations

from symshape.encoding.attrs import *
from symshape.encoding.composite_types import *
from symshape.encoding.leaf_types import *
from symshape.encoding.type_parse import *
from symshape.encoding.type_walks import *

__all__ = [
    "Type",
    "TensorType",
    "Tensor",
    "TupleType",
    "FuncType",
    "TypeRelation",
    "TypeVar",
    "IncompleteType",
    "GlobalTypeVar",
    "TypeCall",
    "ObjectType",
    "ShapeType",
    "Attrs",
    "DTYPES",
    "KINDS",
    "parse_type",
    "map_dims",
    "map_types",
    "type_children",
    "type_rebuild",
    "iter_types",
    "iter_dims",
    "iter_value_dims",
    "iter_holes",
    "subst_typevars",
    "type_kind",
    "check_type",
    "check_identifier",
    "type_tuple",
    "type_str",
    "tuple_of_checked",
    "func_of_checked",
]
