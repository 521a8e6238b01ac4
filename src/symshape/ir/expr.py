"""The expression language (Relay-like, with Relax's ``MatchCast`` and ``Dataflow``).

Expressions compare by identity, like Relay's nodes: a :class:`Var` is a binding, and two calls
built separately are two program points. Structural comparison is :func:`structural_equal`.
Every expression records the source span of the Python code that built it (the first frame
outside this package, found by walking ``f_back``: no ``inspect.stack``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from types import FrameType
from typing import TYPE_CHECKING, Any, Union

from symshape.encoding.dims import DimLike, as_dim, check_nonnegative_constant
from symshape.encoding.types import (
    DTYPES,
    Attrs,
    Constructor,
    Tensor,
    TensorType,
    Type,
    TypeVar,
    _check_type,
)
from symshape.errors import BAD_DTYPE, INVALID_ARGUMENT, SymshapeError
from symshape.solver.diagnostics import Span, frame_span

if TYPE_CHECKING:
    from symshape.ir.op import Op

__all__ = [
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
    "structural_equal",
    "children",
    "operands",
    "Callee",
]

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


_EMPTY_ATTRS = Attrs()  # shared: attributes are immutable


def _user_span() -> Span | None:
    """The span of the first caller frame outside the symshape package (starting with the caller
    of the function that calls this one).

    The column is that of the call being executed (Python 3.11+; else 1). Spans are cached per
    call site (code object and instruction): they are frozen, so call sites share them.
    """
    f: FrameType | None = sys._getframe(2)
    while f is not None:
        if not f.f_code.co_filename.startswith(_PKG_DIR):
            return frame_span(f)
        f = f.f_back
    return None


def _as_attrs(attrs: Mapping[str, Any] | None) -> Attrs:
    """``attrs`` as :class:`Attrs` (an :class:`Attrs` is shared, not copied)."""
    if type(attrs) is Attrs:
        return attrs
    return Attrs(attrs) if attrs else _EMPTY_ATTRS


_CALLEE_TYPES: tuple[type, ...] = ()


def _callee_types() -> tuple[type, ...]:
    global _CALLEE_TYPES
    from symshape.ir.op import Op

    _CALLEE_TYPES = (Expr, Op, Constructor)
    return _CALLEE_TYPES


class Expr:
    """Base class of expressions; ``span`` is where the expression was built."""

    __slots__ = ("__weakref__", "span")
    span: Span | None

    def __call__(self, *args: Expr) -> Call:
        return Call(self, list(args))

    def __getitem__(self, index: int) -> TupleGetItem:
        return TupleGetItem(self, index)

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other

    def __repr__(self) -> str:
        from symshape.ir.printer import expr_str

        return expr_str(self)


class Var(Expr):
    """A local variable, optionally annotated with a type."""

    __slots__ = ("name", "type_annotation")

    def __init__(self, name: str, type_annotation: Type | None = None) -> None:
        if not isinstance(name, str):
            raise SymshapeError(INVALID_ARGUMENT, f"a variable name must be a string, got {name!r}")
        if type_annotation is not None:
            _check_type(type_annotation)
        self.name = name
        self.type_annotation = type_annotation
        self.span = _user_span()


_new_var = object.__new__


def var(name: str, type_annotation: Type | None = None) -> Var:
    """A variable: ``ss.var("x", ss.Tensor((n, 3), "float32"))``."""
    if not isinstance(name, str):
        raise SymshapeError(INVALID_ARGUMENT, f"a variable name must be a string, got {name!r}")
    if type_annotation is not None:
        _check_type(type_annotation)
    v = _new_var(Var)
    v.name = name
    v.type_annotation = type_annotation
    v.span = _user_span()
    return v


class GlobalVar(Expr):
    """The name of a global function in a :class:`~symshape.ir.module.Module`."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        if not isinstance(name, str):
            raise SymshapeError(INVALID_ARGUMENT, f"a global name must be a string, got {name!r}")
        self.name = name
        self.span = _user_span()

    def __hash__(self) -> int:
        return hash(("GlobalVar", self.name))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GlobalVar) and other.name == self.name


class Constant(Expr):
    """A tensor constant, from a shape and dtype or from an array (``data``)."""

    __slots__ = ("data", "type")

    def __init__(
        self,
        shape: Sequence[DimLike] | None = None,
        dtype: str = "float32",
        data: Any = None,
    ) -> None:
        if data is not None:
            shape = tuple(int(x) for x in getattr(data, "shape", ()))
            dt = str(getattr(data, "dtype", dtype))
            dtype = dt
        if shape is None:
            shape = ()
        if dtype not in DTYPES:
            raise SymshapeError(BAD_DTYPE, f"unknown dtype {dtype!r}")
        dims = tuple(as_dim(d) for d in shape)
        for d in dims:
            check_nonnegative_constant(d)
        self.type: TensorType = Tensor(dims, dtype)
        self.data = data
        self.span = _user_span()


def const(value: Any, dtype: str | None = None) -> Constant:
    """A constant from a numpy array (or anything ``numpy.asarray`` accepts)."""
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        raise SymshapeError(INVALID_ARGUMENT, "ss.const needs numpy") from None
    arr = np.asarray(value, dtype=dtype)
    if arr.dtype == np.float64 and dtype is None and not isinstance(value, np.ndarray):
        arr = arr.astype(np.float32)
    if arr.dtype == np.int64 and dtype is None and not isinstance(value, np.ndarray):
        arr = arr.astype(np.int32)
    c = Constant(data=arr)
    c.span = _user_span()
    return c


Callee = Union["Op", "Function", Var, GlobalVar, Constructor, "Call", "Expr"]


class Call(Expr):
    """A call of an operator, a function (value), a global function or a constructor."""

    __slots__ = ("args", "attrs", "callee", "pure_override")

    def __init__(
        self,
        callee: Any,
        args: Sequence[Expr],
        attrs: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(callee, _CALLEE_TYPES or _callee_types()):
            raise SymshapeError(INVALID_ARGUMENT, f"cannot call {type(callee).__name__} {callee!r}")
        args = tuple(args)
        for a in args:
            if not isinstance(a, Expr):
                raise SymshapeError(
                    INVALID_ARGUMENT, f"call arguments must be expressions, got {type(a).__name__}"
                )
        self.callee = callee
        self.args: tuple[Expr, ...] = args
        self.attrs = _as_attrs(attrs)
        self.pure_override = False
        self.span = _user_span()


class Tuple(Expr):
    """A tuple of expressions."""

    __slots__ = ("fields",)

    def __init__(self, fields: Sequence[Expr]) -> None:
        for f in fields:
            if not isinstance(f, Expr):
                raise SymshapeError(INVALID_ARGUMENT, f"tuple fields must be expressions, got {f!r}")
        self.fields: tuple[Expr, ...] = tuple(fields)
        self.span = _user_span()


class TupleGetItem(Expr):
    """``tup[index]``."""

    __slots__ = ("index", "tuple_value")

    def __init__(self, tuple_value: Expr, index: int) -> None:
        if not isinstance(index, int) or isinstance(index, bool):
            raise SymshapeError(INVALID_ARGUMENT, f"a tuple index must be an int, got {index!r}")
        if not isinstance(tuple_value, Expr):
            raise SymshapeError(INVALID_ARGUMENT, "TupleGetItem needs an expression")
        self.tuple_value = tuple_value
        self.index = index
        self.span = _user_span()


class Let(Expr):
    """``let var = value; body``."""

    __slots__ = ("body", "value", "var")

    def __init__(self, var: Var, value: Expr, body: Expr) -> None:
        if not isinstance(var, Var):
            raise SymshapeError(INVALID_ARGUMENT, "Let binds a Var")
        self.var = var
        self.value = value
        self.body = body
        self.span = _user_span()


class Function(Expr):
    """``fn(params) -> ret_type { body }``.

    ``pure``: True (declared pure: an impure call inside is an error), False (impure), or None
    (inferred from the body). ``attrs`` may hold ``force_pure=True``.
    """

    __slots__ = ("attrs", "body", "params", "pure", "ret_type", "type_params")

    def __init__(
        self,
        params: Sequence[Var],
        body: Expr,
        ret_type: Type | None = None,
        type_params: Sequence[TypeVar] = (),
        pure: bool | None = None,
        attrs: Mapping[str, Any] | None = None,
    ) -> None:
        for p in params:
            if not isinstance(p, Var):
                raise SymshapeError(INVALID_ARGUMENT, f"function parameters must be Vars, got {p!r}")
        if not isinstance(body, Expr):
            raise SymshapeError(INVALID_ARGUMENT, "a function body must be an expression")
        if ret_type is not None:
            _check_type(ret_type)
        self.params: tuple[Var, ...] = tuple(params)
        self.body = body
        self.ret_type = ret_type
        self.type_params: tuple[TypeVar, ...] = tuple(type_params)
        self.pure = pure
        self.attrs = _as_attrs(attrs)
        self.span = _user_span()


class If(Expr):
    """``if (cond) { then } else { else }``; the result is the join of the branches."""

    __slots__ = ("cond", "else_branch", "then_branch")

    def __init__(self, cond: Expr, then_branch: Expr, else_branch: Expr) -> None:
        self.cond = cond
        self.then_branch = then_branch
        self.else_branch = else_branch
        self.span = _user_span()


class Pattern:
    """Base of match patterns."""

    __slots__ = ()


class PatternWildcard(Pattern):
    __slots__ = ()

    def __repr__(self) -> str:
        return "_"


class PatternVar(Pattern):
    __slots__ = ("var",)

    def __init__(self, var: Var) -> None:
        if not isinstance(var, Var):
            raise SymshapeError(INVALID_ARGUMENT, "PatternVar binds a Var")
        self.var = var

    def __repr__(self) -> str:
        return self.var.name


class PatternConstructor(Pattern):
    __slots__ = ("constructor", "patterns")

    def __init__(self, constructor: Constructor, patterns: Sequence[Pattern] = ()) -> None:
        if not isinstance(constructor, Constructor):
            raise SymshapeError(INVALID_ARGUMENT, "PatternConstructor needs a Constructor")
        self.constructor = constructor
        self.patterns: tuple[Pattern, ...] = tuple(patterns)

    def __repr__(self) -> str:
        return f"{self.constructor.name}({', '.join(map(repr, self.patterns))})"


class PatternTuple(Pattern):
    __slots__ = ("patterns",)

    def __init__(self, patterns: Sequence[Pattern]) -> None:
        self.patterns: tuple[Pattern, ...] = tuple(patterns)

    def __repr__(self) -> str:
        return f"({', '.join(map(repr, self.patterns))})"


class Clause:
    __slots__ = ("body", "pattern")

    def __init__(self, pattern: Pattern, body: Expr) -> None:
        self.pattern = pattern
        self.body = body


class Match(Expr):
    """``match (value) { clauses }``; the result is the join of the clause bodies."""

    __slots__ = ("clauses", "complete", "value")

    def __init__(self, value: Expr, clauses: Sequence[Clause], complete: bool = True) -> None:
        self.value = value
        self.clauses: tuple[Clause, ...] = tuple(clauses)
        self.complete = complete
        self.span = _user_span()


class MatchCast(Expr):
    """Relax ``match_cast``: bind ``var`` to ``value`` cast to ``type``; new symbols in ``type``
    are bound from the value's shape, known ones are checked."""

    __slots__ = ("body", "type", "value", "var")

    def __init__(self, var: Var, value: Expr, type: Type, body: Expr) -> None:
        _check_type(type)
        self.var = var
        self.value = value
        self.type = type
        self.body = body
        self.span = _user_span()


class Dataflow(Expr):
    """A pure region: ``bindings`` evaluated in order, then ``body``; impure calls are errors."""

    __slots__ = ("bindings", "body")

    def __init__(self, bindings: Sequence[tuple[Var, Expr]], body: Expr) -> None:
        bs = []
        for b in bindings:
            if not (isinstance(b, tuple) and len(b) == 2 and isinstance(b[0], Var)):
                raise SymshapeError(INVALID_ARGUMENT, "Dataflow bindings are (Var, Expr) pairs")
            bs.append(b)
        self.bindings: tuple[tuple[Var, Expr], ...] = tuple(bs)
        self.body = body
        self.span = _user_span()


def call_pure(callee: Any, *args: Expr) -> Call:
    """A call that is declared pure even if the callee is impure (Relax ``call_pure_packed``)."""
    c = Call(callee, list(args))
    c.pure_override = True
    c.span = _user_span()
    return c


def operands(e: Expr) -> list[Expr]:
    """The sub-expressions that are evaluated, in order (binding variables excluded)."""
    match e:
        case Call():
            return ([e.callee] if isinstance(e.callee, Expr) else []) + list(e.args)
        case Tuple():
            return list(e.fields)
        case TupleGetItem():
            return [e.tuple_value]
        case Let():
            return [e.value, e.body]
        case Function():
            return [e.body]
        case If():
            return [e.cond, e.then_branch, e.else_branch]
        case Match():
            return [e.value] + [c.body for c in e.clauses]
        case MatchCast():
            return [e.value, e.body]
        case Dataflow():
            return [x for _, x in e.bindings] + [e.body]
        case _:
            return []


def children(e: Expr) -> Iterator[Expr]:
    """The direct sub-expressions, in evaluation order."""
    match e:
        case Call():
            if isinstance(e.callee, Expr):
                yield e.callee
            yield from e.args
        case Tuple():
            yield from e.fields
        case TupleGetItem():
            yield e.tuple_value
        case Let():
            yield e.var
            yield e.value
            yield e.body
        case Function():
            yield from e.params
            yield e.body
        case If():
            yield e.cond
            yield e.then_branch
            yield e.else_branch
        case Match():
            yield e.value
            for c in e.clauses:
                yield c.body
        case MatchCast():
            yield e.var
            yield e.value
            yield e.body
        case Dataflow():
            for v, x in e.bindings:
                yield v
                yield x
            yield e.body
        case _:
            return


def structural_equal(a: Any, b: Any) -> bool:
    """Structural equality of expressions (variables compared by binding position)."""
    from symshape.ir.printer import expr_str

    return expr_str(a) == expr_str(b)
