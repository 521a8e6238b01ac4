"""The relation library: one module per operator family, and the registry.

Importing this package registers every built-in relation.
"""

from symshape.relations import (  # noqa: F401  (registration)
    concat,
    dynamic,
    elementwise,
    index,
    layout,
    linalg,
    nn,
    norm,
    reduce,
    reshape,
    sizes,
)
from symshape.relations.base import (
    RELATIONS,
    Context,
    RelationDef,
    RelationFailure,
    get_relation,
    register_relation,
    relation,
)

__all__ = [
    "RELATIONS",
    "Context",
    "RelationDef",
    "RelationFailure",
    "get_relation",
    "register_relation",
    "relation",
]
