"""The expression language's node classes (Relay-like, with Relax's ``MatchCast`` and
``Dataflow``) and the checks of their constructors.

Expressions compare by identity, like Relay's nodes: a :class:`Var` is a binding, and two calls
built separately are two program points. Structural comparison is
:func:`~symshape.ir.structural_equal.structural_equal`.
Every expression records the source span of the code that built it
(:func:`symshape.source.user_span`: the first frame outside this package, or the span of an
enclosing :func:`~symshape.source.span_scope`). Python's operators and numpy's methods on
expressions come from :class:`~symshape.ir.sugar.ExprSugar`; the walks over expressions are in
:mod:`symshape.ir.visit`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import itemgetter
from typing import Any

from symshape.encoding.dims import DimLike, as_dim, check_nonnegative_constant
from symshape.encoding.dtypes import dtype_name
from symshape.encoding.types import (
    Attrs,
    GlobalTypeVar,
    Tensor,
    TensorType,
    Type,
    TypeVar,
    check_identifier,
    check_type,
    type_tuple,
)
from symshape.errors import BAD_ATTRIBUTE, INVALID_ARGUMENT, SymshapeError, expect_mapping
from symshape.ir.sugar import ExprSugar
from symshape.source import Span, user_span
from symshape.views import View, show

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
    "Callee",
    "Constructor",
]


_EMPTY_ATTRS = Attrs()  # shared: attributes are immutable


def _as_attrs(attrs: Mapping[str, Any] | None) -> Attrs:
    """``attrs`` as :class:`Attrs` (an :class:`Attrs` is shared, not copied)."""
    if type(attrs) is Attrs:
        return attrs
    if attrs is None:
        return _EMPTY_ATTRS
    attrs = expect_mapping(attrs, "attributes must be a mapping", BAD_ATTRIBUTE)
    return Attrs(attrs) if attrs else _EMPTY_ATTRS


def _expr(x: object, what: str) -> Expr:
    if not isinstance(x, Expr):
        raise SymshapeError(INVALID_ARGUMENT, f"{what} must be an expression, got {type(x).__name__} {x!r}")
    return x


def _items(xs: object, what: str) -> tuple[Any, ...]:
    """``xs`` (a list or tuple; other iterables are read once) as a tuple. An expression, a string
    or a non-iterable is an ``invalid-argument`` error (an expression is never iterated)."""
    if type(xs) is tuple:
        return xs
    if type(xs) is list:
        return tuple(xs)
    if isinstance(xs, Expr):
        raise SymshapeError(
            INVALID_ARGUMENT,
            f"{what} must be a list, got the expression `{xs!r}`; wrap it in a list",
        )
    if isinstance(xs, (str, bytes, Mapping)) or not isinstance(xs, Iterable):
        raise SymshapeError(INVALID_ARGUMENT, f"{what} must be a list, got {type(xs).__name__} {xs!r}")
    return tuple(xs)


def _exprs(xs: object, what: str) -> tuple[Expr, ...]:
    out = _items(xs, what)
    for x in out:
        if not isinstance(x, Expr):
            raise SymshapeError(
                INVALID_ARGUMENT, f"{what} must be expressions, got {type(x).__name__} {x!r}"
            )
    return out


class Callee:
    """What a :class:`Call` applies besides a function value: an operator
    (:class:`~symshape.ir.op.Op`) or an ADT :class:`Constructor`."""

    __slots__ = ()


class Expr(ExprSugar):
    """Base class of expressions; ``span`` is where the expression was built."""

    __slots__ = ("__weakref__", "span")
    span: Span | None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise SymshapeError(
            INVALID_ARGUMENT,
            "Expr is the base class of expressions: build a Var, Call, Tuple, Function, ... instead",
        )

    def __call__(self, *args: Expr) -> Call:
        return Call(self, list(args))

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other

    def __repr__(self) -> str:
        try:
            return str(show(View.TEXT, self))  # the printer (symshape.ir.printer)
        except SymshapeError:
            return object.__repr__(self)



class Var(Expr):
    """A local variable, optionally annotated with a type."""

    __slots__ = ("name", "type_annotation")

    def __init__(self, name: str, type_annotation: Type | None = None) -> None:
        if not isinstance(name, str):
            raise SymshapeError(INVALID_ARGUMENT, f"a variable name must be a string, got {name!r}")
        if type_annotation is not None:
            check_type(type_annotation)
        self.name = name
        self.type_annotation = type_annotation
        self.span = user_span()


_new_var = object.__new__


def var(name: str, type_annotation: Type | None = None) -> Var:
    """A variable: ``ss.var("x", ss.Tensor((n, 3), "float32"))``."""
    if not isinstance(name, str):
        raise SymshapeError(INVALID_ARGUMENT, f"a variable name must be a string, got {name!r}")
    if type_annotation is not None:
        check_type(type_annotation)
    v = _new_var(Var)
    v.name = name
    v.type_annotation = type_annotation
    v.span = user_span()
    return v


class GlobalVar(Expr):
    """The name of a global function in a :class:`~symshape.ir.module.Module`."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        if not isinstance(name, str):
            raise SymshapeError(INVALID_ARGUMENT, f"a global name must be a string, got {name!r}")
        self.name = name
        self.span = user_span()

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
        dtype: Any = "float32",
        data: Any = None,
    ) -> None:
        if data is not None:
            if not (hasattr(data, "shape") and hasattr(data, "dtype")):
                raise SymshapeError(
                    INVALID_ARGUMENT,
                    f"Constant data must be an array (with shape and dtype), got {type(data).__name__}; "
                    "use ss.const for Python values",
                )
            try:
                shape = tuple(int(x) for x in data.shape)
            except (TypeError, ValueError):
                raise SymshapeError(
                    INVALID_ARGUMENT, f"Constant data has a bad shape {data.shape!r}"
                ) from None
            dtype = str(data.dtype)
        if shape is None:
            shape = ()
        dtype = dtype_name(dtype)
        shape = _items(shape, "a Constant's shape")
        dims = tuple(as_dim(d) for d in shape)
        for d in dims:
            check_nonnegative_constant(d)
        self.type: TensorType = Tensor(dims, dtype)
        self.data = data
        self.span = user_span()


def const(value: Any, dtype: Any = None) -> Constant:
    """A constant from a numpy array (or anything ``numpy.asarray`` accepts); ``dtype`` in
    symshape's, numpy's or torch's spelling."""
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        raise SymshapeError(INVALID_ARGUMENT, "ss.const needs numpy") from None
    if dtype is not None:
        dtype = dtype_name(dtype)
    if isinstance(value, Expr):
        raise SymshapeError(INVALID_ARGUMENT, "ss.const takes an array or numbers, not an expression")
    try:
        arr = np.asarray(value, dtype=dtype)
    except (ValueError, TypeError, OverflowError) as e:
        raise SymshapeError(
            INVALID_ARGUMENT, f"ss.const cannot make an array of {type(value).__name__}: {e}"
        ) from None
    if arr.dtype == np.float64 and dtype is None and not isinstance(value, np.ndarray):
        arr = arr.astype(np.float32)
    if arr.dtype == np.int64 and dtype is None and not isinstance(value, np.ndarray):
        arr = arr.astype(np.int32)
    c = Constant(data=arr)
    c.span = user_span()
    return c


@dataclass(frozen=True)
class Constructor(Callee):
    """An ADT constructor: ``Constructor("Cons", [a, TypeCall(L, [a])], L)``.

    Calling it (in a program) builds a value of ``TypeCall(belong_to, type_params)``.
    """

    name: str
    inputs: tuple[Type, ...]
    belong_to: GlobalTypeVar

    def __post_init__(self) -> None:
        check_identifier(self.name, "a constructor's name")
        object.__setattr__(self, "inputs", type_tuple(self.inputs, f"the inputs of constructor {self.name}"))
        if not isinstance(self.belong_to, GlobalTypeVar):
            raise SymshapeError(
                INVALID_ARGUMENT,
                f"constructor {self.name} must belong to a GlobalTypeVar, got {self.belong_to!r}",
            )

    def __str__(self) -> str:
        return self.name

    def __call__(self, *args: Expr) -> Call:
        return Call(self, list(args))


class Call(Expr):
    """A call of an operator, a function (value), a global function or a constructor."""

    __slots__ = ("args", "attrs", "callee", "pure_override")

    def __init__(
        self,
        callee: Any,
        args: Sequence[Expr],
        attrs: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(callee, (Expr, Callee)):
            raise SymshapeError(INVALID_ARGUMENT, f"cannot call {type(callee).__name__} {callee!r}")
        args = _exprs(args, "call arguments")
        self.callee = callee
        self.args: tuple[Expr, ...] = args
        self.attrs = _as_attrs(attrs)
        self.pure_override = False
        self.span = user_span()


class Tuple(Expr):
    """A tuple of expressions."""

    __slots__ = ("fields",)

    def __init__(self, fields: Sequence[Expr]) -> None:
        self.fields: tuple[Expr, ...] = _exprs(fields, "tuple fields")
        self.span = user_span()


class TupleGetItem(Expr):
    """``tup[index]``."""

    __slots__ = ("index", "tuple_value")

    def __init__(self, tuple_value: Expr, index: int) -> None:
        if not isinstance(index, int) or isinstance(index, bool):
            raise SymshapeError(
                INVALID_ARGUMENT,
                f"a tuple index must be an int, got {index!r}"
                + (" (iterating an expression is not supported)" if isinstance(index, slice) else ""),
            )
        if not isinstance(tuple_value, Expr):
            raise SymshapeError(INVALID_ARGUMENT, "TupleGetItem needs an expression")
        self.tuple_value = tuple_value
        self.index = index
        self.span = user_span()


class Let(Expr):
    """``let var = value; body``."""

    __slots__ = ("body", "value", "var")

    def __init__(self, var: Var, value: Expr, body: Expr) -> None:
        if not isinstance(var, Var):
            raise SymshapeError(INVALID_ARGUMENT, f"Let binds a Var, got {type(var).__name__} {var!r}")
        self.var = var
        self.value = _expr(value, "a let's value")
        self.body = _expr(body, "a let's body")
        self.span = user_span()


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
        ps = _items(params, "function parameters")
        for p in ps:
            if not isinstance(p, Var):
                raise SymshapeError(INVALID_ARGUMENT, f"function parameters must be Vars, got {p!r}")
        if not isinstance(body, Expr):
            raise SymshapeError(INVALID_ARGUMENT, "a function body must be an expression")
        if ret_type is not None:
            check_type(ret_type)
        tps = _items(type_params, "type parameters")
        for tp in tps:
            if not isinstance(tp, TypeVar):
                raise SymshapeError(INVALID_ARGUMENT, f"type parameters must be TypeVars, got {tp!r}")
        if pure is not None and not isinstance(pure, bool):
            raise SymshapeError(INVALID_ARGUMENT, f"pure must be True, False or None, got {pure!r}")
        self.params: tuple[Var, ...] = ps
        self.body = body
        self.ret_type = ret_type
        self.type_params: tuple[TypeVar, ...] = tps
        self.pure = pure
        self.attrs = _as_attrs(attrs)
        self.span = user_span()


class If(Expr):
    """``if (cond) { then } else { else }``; the result is the join of the branches."""

    __slots__ = ("cond", "else_branch", "then_branch")

    def __init__(self, cond: Expr, then_branch: Expr, else_branch: Expr) -> None:
        self.cond = _expr(cond, "an if's condition")
        self.then_branch = _expr(then_branch, "an if's then branch")
        self.else_branch = _expr(else_branch, "an if's else branch")
        self.span = user_span()


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
        self.patterns: tuple[Pattern, ...] = _patterns(patterns)

    def __repr__(self) -> str:
        return f"{self.constructor.name}({', '.join(map(repr, self.patterns))})"


class PatternTuple(Pattern):
    __slots__ = ("patterns",)

    def __init__(self, patterns: Sequence[Pattern]) -> None:
        self.patterns: tuple[Pattern, ...] = _patterns(patterns)

    def __repr__(self) -> str:
        return f"({', '.join(map(repr, self.patterns))})"


def _patterns(ps: object) -> tuple[Pattern, ...]:
    out = _items(ps, "sub-patterns")
    for p in out:
        if not isinstance(p, Pattern):
            raise SymshapeError(INVALID_ARGUMENT, f"sub-patterns must be Patterns, got {p!r}")
    return out


class Clause:
    """``| pattern => body`` of a :class:`Match`."""

    __slots__ = ("body", "pattern")

    def __init__(self, pattern: Pattern, body: Expr) -> None:
        if not isinstance(pattern, Pattern):
            raise SymshapeError(
                INVALID_ARGUMENT, f"a clause needs a Pattern, got {type(pattern).__name__} {pattern!r}"
            )
        self.pattern = pattern
        self.body = _expr(body, "a clause's body")


class Match(Expr):
    """``match (value) { clauses }``; the result is the join of the clause bodies."""

    __slots__ = ("clauses", "complete", "value")

    def __init__(self, value: Expr, clauses: Sequence[Clause], complete: bool = True) -> None:
        self.value = _expr(value, "a match's value")
        cs = _items(clauses, "match clauses")
        for c in cs:
            if not isinstance(c, Clause):
                raise SymshapeError(INVALID_ARGUMENT, f"match clauses must be Clauses, got {c!r}")
        self.clauses: tuple[Clause, ...] = cs
        self.complete = bool(complete)
        self.span = user_span()


class MatchCast(Expr):
    """Relax ``match_cast``: bind ``var`` to ``value`` cast to ``type``; new symbols in ``type``
    are bound from the value's shape, known ones are checked."""

    __slots__ = ("body", "type", "value", "var")

    def __init__(self, var: Var, value: Expr, type: Type, body: Expr) -> None:
        if not isinstance(var, Var):
            raise SymshapeError(
                INVALID_ARGUMENT, f"MatchCast binds a Var, got {var.__class__.__name__} {var!r}"
            )
        check_type(type)
        self.var = var
        self.value = _expr(value, "a match_cast's value")
        self.type = type
        self.body = _expr(body, "a match_cast's body")
        self.span = user_span()


class Dataflow(Expr):
    """A pure region: ``bindings`` evaluated in order, then ``body``; impure calls are errors."""

    __slots__ = ("bindings", "body")

    def __init__(self, bindings: Sequence[tuple[Var, Expr]], body: Expr) -> None:
        bs = _items(bindings, "Dataflow bindings")
        # (blocks are long: the common case is checked by loops in C, a failure item by item)
        if not (
            set(map(type, bs)) <= _TUPLE
            and set(map(len, bs)) <= _TWO
            and set(map(type, map(_first, bs))) <= _VAR
            and all(map(isinstance, map(_second, bs), repeat(Expr)))
        ):
            for b in bs:
                if not (
                    isinstance(b, tuple) and len(b) == 2 and isinstance(b[0], Var) and isinstance(b[1], Expr)
                ):
                    raise SymshapeError(
                        INVALID_ARGUMENT, f"Dataflow bindings are (Var, Expr) pairs, got {b!r}"
                    )
        self.bindings: tuple[tuple[Var, Expr], ...] = bs
        self.body = _expr(body, "a dataflow block's body")
        self.span = user_span()


_TUPLE, _TWO, _VAR = frozenset({tuple}), frozenset({2}), frozenset({Var})
_first, _second = itemgetter(0), itemgetter(1)


def call_pure(callee: Any, *args: Expr) -> Call:
    """A call that is declared pure even if the callee is impure (Relax ``call_pure_packed``)."""
    c = Call(callee, list(args))
    c.pure_override = True
    c.span = user_span()
    return c
