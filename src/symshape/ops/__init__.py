"""Operator constructors: ``ss.ops.add(x, y)``, ``ss.ops.conv2d(x, w, ...)``, ...

Each operator is registered once (:func:`symshape.ir.op.register_op`) under Relay's name (with
the ``nn.`` prefix where Relay has one: ``nn.conv2d``, ``nn.relu``, ...) with the relation that
types it, an attribute checker (a bad *literal* attribute raises
:class:`~symshape.errors.SymshapeError` ``bad-attribute`` when the call is built) and, where one
applies, a ``normalize`` hook (seed 003): reshape special values become explicit dimensions when
every output dimension is known, negative axes become non-negative, ``transpose(x)`` and ``squeeze(x)``
get explicit axes. The functions here drop the ``nn.`` prefix.

Every operator declares the attributes it takes (``attr_types``, see :mod:`symshape.ir.op`): a
call with an unknown or misspelt attribute (``Op.get("sum")(x, axes=1)``: "did you mean
`axis`?") or a value of the wrong kind (``layer_norm(..., epsilon="a")``) raises ``bad-attribute``
when it is built.

The operators live by family, each module holding a table of its operators (``SPECS``: one
:class:`~symshape.ops.spec.OpSpec` row each, with relation, attributes, attribute checker,
normalize hook and purity) and their typed wrappers: :mod:`~symshape.ops.elementwise`,
:mod:`~symshape.ops.shape`, :mod:`~symshape.ops.values`, :mod:`~symshape.ops.reduce`,
:mod:`~symshape.ops.index`, :mod:`~symshape.ops.linalg`, :mod:`~symshape.ops.nn`; what they share is
in :mod:`~symshape.ops.spec`. Adding an operator is one row and one wrapper.
"""

from __future__ import annotations

from symshape.ops.elementwise import (
    abs,
    add,
    cast,
    cast_like,
    ceil,
    clip,
    copy,
    cos,
    cumsum,
    divide,
    equal,
    erf,
    exp,
    floor,
    floor_divide,
    greater,
    greater_equal,
    isfinite,
    isinf,
    isnan,
    leaky_relu,
    less,
    less_equal,
    log,
    log2,
    log10,
    logical_and,
    logical_not,
    logical_or,
    maximum,
    minimum,
    mod,
    multiply,
    negative,
    not_equal,
    ones_like,
    power,
    relu,
    round,
    rsqrt,
    sigmoid,
    sign,
    sin,
    sqrt,
    subtract,
    tanh,
    trunc,
    trunc_divide,
    where,
    zeros_like,
)
from symshape.ops.index import (
    strided_slice,
    take,
)
from symshape.ops.linalg import (
    batch_matmul,
    dense,
    matmul,
)
from symshape.ops.nn import (
    adaptive_avg_pool2d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    batch_norm,
    bias_add,
    conv1d,
    conv2d,
    conv3d,
    global_avg_pool2d,
    global_max_pool2d,
    layer_norm,
    log_softmax,
    max_pool1d,
    max_pool2d,
    max_pool3d,
    softmax,
)
from symshape.ops.reduce import (
    all,
    any,
    argmax,
    argmin,
    max,
    mean,
    min,
    prod,
    sum,
)
from symshape.ops.shape import (
    batch_flatten,
    broadcast_to,
    concatenate,
    expand,
    expand_dims,
    flatten,
    full,
    ones,
    pad,
    reshape,
    reshape_like,
    split,
    squeeze,
    stack,
    tile,
    transpose,
    zeros,
)
from symshape.ops.values import (
    arange,
    boolean_mask,
    constant_of_shape,
    int_tensor,
    nonzero,
    shape_of,
    unique,
)

__all__ = [
    # elementwise
    "add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "floor_divide",
    "trunc_divide", "mod", "logical_and", "logical_or",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "relu", "sigmoid", "tanh", "exp", "log", "sqrt", "negative", "abs", "floor", "ceil", "round",
    "sign", "erf", "rsqrt", "copy", "cumsum", "trunc", "sin", "cos", "log2", "log10", "logical_not",
    "zeros_like", "ones_like", "leaky_relu", "clip", "isnan", "isinf", "isfinite",
    "where", "cast", "cast_like",
    # shape
    "flatten", "batch_flatten", "reshape", "reshape_like", "concatenate", "stack", "split",
    "transpose", "squeeze", "expand_dims", "broadcast_to", "pad", "zeros", "ones", "full",
    "tile", "expand",
    # shape values and data-dependent sizes
    "shape_of", "int_tensor", "arange", "constant_of_shape", "nonzero", "unique", "boolean_mask",
    # reductions
    "sum", "mean", "prod", "max", "min", "all", "any", "argmax", "argmin",
    # indexing
    "take", "strided_slice",
    # linear algebra
    "dense", "matmul", "batch_matmul",
    # nn
    "conv1d", "conv2d", "conv3d",
    "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "global_avg_pool2d", "global_max_pool2d", "adaptive_avg_pool2d", "adaptive_max_pool2d",
    "softmax", "log_softmax", "bias_add", "layer_norm", "batch_norm",
]  # fmt: skip
