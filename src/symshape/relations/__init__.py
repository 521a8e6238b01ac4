"""The relation library: one module per operator family, and the registry.

Importing this package registers every built-in relation.
"""

from symshape.relations import elementwise, shape  # noqa: F401  (registration)
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
