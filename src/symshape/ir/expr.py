"""The expression language, as one import: the node classes (:mod:`symshape.ir.nodes`), the walks
(:mod:`symshape.ir.visit`) and the front-end's static knowledge (:mod:`symshape.ir.frontend`).
Operator overloading and the numpy-like methods of expressions are in :mod:`symshape.ir.sugar`.
"""

from __future__ import annotations

from symshape.ir.frontend import set_operator_lookup, static_arity, static_dtype, static_kind
from symshape.ir.nodes import (
    _EMPTY_ATTRS,
    Call,
    Callee,
    Clause,
    Constant,
    Constructor,
    Dataflow,
    Expr,
    Function,
    GlobalVar,
    If,
    Let,
    Match,
    MatchCast,
    Pattern,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    Tuple,
    TupleGetItem,
    Var,
    call_pure,
    const,
    var,
)
from symshape.ir.visit import children, operands

__all__ = [
    "_EMPTY_ATTRS",
    "Expr",
    "Var",
    "var",
    "GlobalVar",
    "Constant",
    "const",
    "Call",
    "Tuple",
    "TupleGetItem",
    "Let",
    "Function",
    "If",
    "Match",
    "Clause",
    "Pattern",
    "PatternConstructor",
    "PatternVar",
    "PatternWildcard",
    "PatternTuple",
    "MatchCast",
    "Dataflow",
    "call_pure",
    "children",
    "operands",
    "Callee",
    "Constructor",
    "static_kind",
    "static_arity",
    "static_dtype",
    "set_operator_lookup",
]
