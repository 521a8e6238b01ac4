"""String operators. symshape has no string dtype: a string tensor has an unknown dtype (its ONNX
element type is kept for :func:`~symshape.onnx.infer_shapes`), and its shape is exact.

* ``StringConcat``: the broadcast of its inputs; ``RegexFullMatch``: the input's shape, ``bool``.
* ``StringNormalizer``: the input's shape without ``stopwords``; with them, the last axis has as
  many entries as survive (a fresh size).
* ``StringSplit``: ``Y`` is the input's shape plus the most substrings of an entry (a fresh size),
  ``Z`` (the count per entry) the input's shape in ``int64``.
* ``TfIdfVectorizer``: ``(C,)`` for a 1-d input, ``(N, C)`` for ``(N, ...)``, ``C`` the largest
  of ``ngram_indexes`` plus one, ``float32``.
"""

from __future__ import annotations

import symshape as ss
from symshape import Expr
from symshape.errors import BAD_ATTRIBUTE, RANK_MISMATCH
from symshape.onnx.context import NodeContext
from symshape.onnx.ops.common import set_dim
from symshape.onnx.registry import Outputs, register

__all__: list[str] = []

_STRING = 8  # onnx.TensorProto.STRING


def _strings(ctx: NodeContext, x: Expr, output: int = 0) -> Expr:
    """``x`` as a string tensor (unknown dtype, ONNX ``string``)."""
    return ctx.with_unknown_dtype(x, _STRING, output)


@register("StringConcat", since=20)
def _string_concat(ctx: NodeContext) -> Outputs:
    return _strings(ctx, ss.ops.add(ctx.input(0), ss.ops.cast_like(ctx.input(1), ctx.input(0))))


@register("RegexFullMatch", since=20)
def _regex_full_match(ctx: NodeContext) -> Outputs:
    return ss.ops.cast(ctx.input(0), "bool")


@register("StringNormalizer", since=10)
def _string_normalizer(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    if not ctx.attr("stopwords"):
        return _strings(ctx, ss.ops.copy(x))
    r = ctx.need_rank(0, "StringNormalizer with stopwords")
    if r not in (1, 2):
        ctx.fail(RANK_MISMATCH, f"StringNormalizer needs a 1-d or 2-d input, got rank {r}")
    kept = ctx.fresh_dim("kept")
    return _strings(ctx, ss.ops.take(x, ss.ops.zeros((kept,), "int64"), axis=-1))


@register("StringSplit", since=20)
def _string_split(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    most = ctx.fresh_dim("substrings")
    y = ss.ops.take(ss.ops.expand_dims(x, -1), ss.ops.zeros((most,), "int64"), axis=-1)
    return [_strings(ctx, y), ss.ops.cast(x, "int64")]


@register("TfIdfVectorizer", since=9)
def _tfidf(ctx: NodeContext) -> Outputs:
    idx = ctx.attr_ints("ngram_indexes")
    if not idx:
        ctx.fail(BAD_ATTRIBUTE, "attribute 'ngram_indexes' is required")
    c = max(idx) + 1
    r = ctx.need_rank(0, "TfIdfVectorizer")
    if r not in (1, 2):
        ctx.fail(RANK_MISMATCH, f"TfIdfVectorizer needs a 1-d or 2-d input, got rank {r}")
    return ss.ops.cast(set_dim(ctx.input(0), -1, c), "float32")
