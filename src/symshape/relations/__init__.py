"""The relation library: one module per operator family, and the registry.

==================  =======================================================================
module              relations
==================  =======================================================================
``elementwise``     identity, unary, broadcast; add ... minimum and the comparisons, which
                    compute their result's value; where, cast, cast_like, init_like
``values``          how each operator computes a shape value (helpers, no relation)
``reshape``         flatten, reshape (Relay's special values), reshape_like
``newshape``        a reshape's new shape over symbolic dimensions (helpers, no relation)
``reshape_target``  reshape to a new shape read from a tensor's value (for ``reshape``)
``concat``          concatenate, stack, split
``layout``          transpose, squeeze, expand_dims
``sizes``           broadcast_to, pad, zeros/ones/constant_of_shape (``init_tensor``)
``dynamic``         shape_of, int_tensor, arange, expand, tile, full, nonzero, unique, ...
``index``           take, strided_slice
``reduce``          sum/mean/..., max/min, argmax/argmin
``linalg``          dense, matmul, batch_matmul
``nn``              convolution and pooling
``norm``            softmax, bias_add, layer_norm, batch_norm
==================  =======================================================================

:mod:`~symshape.relations.base` holds the protocol (:class:`Context`) and the registry,
:mod:`~symshape.relations.operands` the prologues every relation starts with, and
:mod:`~symshape.relations.common` attribute parsing and deferred checks. Importing this package
registers every built-in relation.
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
