"""``ai.onnx.ml`` operators whose output shape follows from the input's.

* ``Binarizer``: the input's type.
* ``LabelEncoder``: the input's shape, the type of the ``values_*`` attribute (``values_strings``:
  a string tensor, whose dtype symshape does not have: unknown).
* ``ArrayFeatureExtractor``: ``X[..., indices]`` (the indices flattened) along the last axis; a
  1-d ``X`` gives ``(1, k)``.
* ``TreeEnsemble`` (ml opset 5): ``(N, n_targets)`` of the input's type.
"""

from __future__ import annotations

import numpy as np

import symshape as ss
from symshape import Expr
from symshape.errors import BAD_ATTRIBUTE
from symshape.onnx.context import NodeContext
from symshape.onnx.ops.common import same_as_input, set_dim
from symshape.onnx.registry import Outputs, register

__all__: list[str] = []

ML = "ai.onnx.ml"
_STRING = 8  # onnx.TensorProto.STRING


register("Binarizer", since=1, domain=ML)(same_as_input)


@register("LabelEncoder", since=1, domain=ML)
def _label_encoder(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    if ctx.has_attr("values_tensor"):
        dtype = str(np.asarray(ctx.attr("values_tensor")).dtype)
    elif ctx.has_attr("values_int64s"):
        dtype = "int64"
    elif ctx.has_attr("values_floats"):
        dtype = "float32"
    elif ctx.has_attr("values_strings") or ctx.opset < 2:
        return ctx.with_unknown_dtype(x, _STRING)
    else:
        ctx.fail(BAD_ATTRIBUTE, "LabelEncoder needs a values_* attribute")
    if dtype.startswith(("<U", "<S", "object")):
        return ctx.with_unknown_dtype(x, _STRING)
    return ss.ops.cast(x, dtype)


@register("ArrayFeatureExtractor", since=1, domain=ML)
def _array_feature_extractor(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    idx = ss.ops.reshape(ctx.input(1), (-1,))
    if ctx.rank(0) == 1:
        return ss.ops.expand_dims(ss.ops.take(x, idx, axis=0), 0)
    y: Expr = ss.ops.take(x, idx, axis=-1)
    return y


@register("TreeEnsemble", since=5, domain=ML)
def _tree_ensemble(ctx: NodeContext) -> Outputs:
    n = ctx.attr_int("n_targets")
    if n < 1:
        ctx.fail(BAD_ATTRIBUTE, f"n_targets must be >= 1, got {n}")
    x = ctx.input(0)
    if ctx.rank(0) == 1:
        x = ss.ops.expand_dims(x, 0)
    return set_dim(x, -1, n)
