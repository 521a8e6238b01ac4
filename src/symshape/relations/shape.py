"""Where the shape-manipulation relations live (this module only re-exports them):

* :mod:`~symshape.relations.reshape`: ``flatten``, ``reshape`` (Relay's special values),
  ``reshape_like``;
* :mod:`~symshape.relations.concat`: ``concatenate``, ``stack``, ``split``;
* :mod:`~symshape.relations.layout`: ``transpose``, ``squeeze``, ``expand_dims``;
* :mod:`~symshape.relations.sizes`: ``broadcast_to``, ``pad``, ``zeros``/``ones``
  (``init_tensor``).
"""

from __future__ import annotations

from symshape.relations.common import product
from symshape.relations.concat import concatenate_rel, parse_split, split_rel, stack_rel
from symshape.relations.layout import expand_dims_rel, squeeze_rel, transpose_rel
from symshape.relations.reshape import (
    flatten_rel,
    parse_newshape,
    reshape_dims,
    reshape_like_rel,
    reshape_rel,
)
from symshape.relations.sizes import (
    broadcast_to_rel,
    dynamic_sizes,
    init_tensor_rel,
    pad_rel,
    parse_pad_width,
)

__all__ = [
    "broadcast_to_rel",
    "concatenate_rel",
    "dynamic_sizes",
    "expand_dims_rel",
    "flatten_rel",
    "init_tensor_rel",
    "pad_rel",
    "parse_newshape",
    "parse_pad_width",
    "parse_split",
    "product",
    "reshape_dims",
    "reshape_like_rel",
    "reshape_rel",
    "split_rel",
    "squeeze_rel",
    "stack_rel",
    "transpose_rel",
]
