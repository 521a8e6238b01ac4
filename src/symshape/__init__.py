"""symshape: tensor types with symbolic shapes, inferred and checked with Z3.

>>> import symshape as ss
>>> n = ss.dim("n")
>>> str(ss.Tensor((n, 3), "float32"))
'Tensor[(n, 3), float32]'
"""

from symshape import ops
from symshape.display import draw, to_dot  # importing it registers how objects are shown
from symshape.encoding import conds
from symshape.encoding.conds import Cond
from symshape.encoding.dim_parse import parse_dim
from symshape.encoding.dims import Dim, dim, dims
from symshape.encoding.types import (
    Attrs,
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    ObjectType,
    ShapeType,
    Tensor,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeRelation,
    TypeVar,
    parse_type,
)
from symshape.errors import ERROR_CODES, SymshapeError
from symshape.ir.infer import infer
from symshape.ir.module import Module, TypeData
from symshape.ir.nodes import (
    Call,
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
from symshape.ir.normalize import normalize, well_formed
from symshape.ir.op import Op, register_op
from symshape.ir.result import InferenceResult
from symshape.ir.structural_equal import structural_equal
from symshape.relations import register_relation, relation
from symshape.solver import Diagnostic, Guard, Note, Solution, TypeSolver
from symshape.source import Span, span_scope

__version__ = "0.1.0"

__all__ = [
    "Attrs",
    "Call",
    "call_pure",
    "Clause",
    "Cond",
    "conds",
    "const",
    "Constant",
    "Constructor",
    "Dataflow",
    "Diagnostic",
    "Dim",
    "dim",
    "dims",
    "draw",
    "ERROR_CODES",
    "Expr",
    "Function",
    "FuncType",
    "GlobalTypeVar",
    "GlobalVar",
    "Guard",
    "If",
    "IncompleteType",
    "infer",
    "InferenceResult",
    "Let",
    "Match",
    "MatchCast",
    "Module",
    "normalize",
    "Note",
    "ObjectType",
    "Op",
    "ops",
    "parse_dim",
    "parse_type",
    "PatternConstructor",
    "PatternTuple",
    "PatternVar",
    "PatternWildcard",
    "register_op",
    "register_relation",
    "relation",
    "ShapeType",
    "Solution",
    "Span",
    "span_scope",
    "structural_equal",
    "SymshapeError",
    "Tensor",
    "TensorType",
    "to_dot",
    "Tuple",
    "TupleGetItem",
    "TupleType",
    "Type",
    "TypeCall",
    "TypeData",
    "TypeRelation",
    "TypeSolver",
    "TypeVar",
    "Var",
    "var",
    "well_formed",
]
