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

from __future__ import annotations

from symshape.encoding.attrs import Attrs
from symshape.encoding.composite_types import (
    FuncType,
    TupleType,
    Type,
    TypeCall,
    TypeRelation,
    check_type,
    func_of_checked,
    iter_types,
    map_dims,
    map_types,
    tuple_of_checked,
    type_children,
    type_rebuild,
    type_str,
    type_tuple,
)
from symshape.encoding.leaf_types import (
    DTYPES,
    KINDS,
    GlobalTypeVar,
    IncompleteType,
    ObjectType,
    ShapeType,
    Tensor,
    TensorType,
    TypeVar,
    check_identifier,
)
from symshape.encoding.type_parse import parse_type
from symshape.encoding.type_walks import (
    iter_dims,
    iter_holes,
    iter_value_dims,
    subst_typevars,
    type_kind,
)

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
